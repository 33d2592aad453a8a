"""shellpaths: the files a shell command reads and a patch edits, from untrusted model text."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliora_git.operations.agents.shellpaths import (
    MAX_COMMAND,
    MAX_NESTING,
    MAX_PATHS,
    is_patch,
    patch_paths,
    read_paths,
)

READS = [
    # the reading commands Codex runs
    ("cat src/billing.py", ["src/billing.py"]),
    ("cat a.py b.py", ["a.py", "b.py"]),
    ("cat -n src/a.py", ["src/a.py"]),
    ("sed -n '1,200p' src/billing.py", ["src/billing.py"]),
    ("sed -n 1,40p src/a.py src/b.py", ["src/a.py", "src/b.py"]),
    ("sed -n -e '1p' -e '5p' src/a.py", ["src/a.py"]),
    ("sed --expression=1p src/a.py", ["src/a.py"]),
    ("head -n 50 a.py", ["a.py"]),
    ("head -n50 a.py", ["a.py"]),
    ("head -50 a.py", ["a.py"]),
    ("head --lines 5 a.py", ["a.py"]),
    ("head --lines=5 a.py", ["a.py"]),
    ("tail -n +5 a.py", ["a.py"]),
    ("tail +5 a.py", ["a.py"]),
    ("tail -f -s 2 app.log", ["app.log"]),
    ("nl -ba src/billing.py", ["src/billing.py"]),
    ("nl -b a src/billing.py", ["src/billing.py"]),
    ("less +F app.log", ["app.log"]),
    ("less -p pattern notes.md", ["notes.md"]),
    ("more README.md", ["README.md"]),
    ("rg -n 'def total' src/billing.py", ["src/billing.py"]),
    ("rg -n -C 3 total src/billing.py src/tax.py", ["src/billing.py", "src/tax.py"]),
    ("rg -e total -e tax src/", ["src/"]),
    ("rg --glob '*.py' total src", ["src"]),
    ("rg -g'*.py' total src", ["src"]),
    ("rg total", []),
    ("rg --files src", []),
    ("rg --type-list", []),
    ("grep -rn total src/ lib/", ["src/", "lib/"]),
    ("grep -A 3 total a.py", ["a.py"]),
    ("grep -A3 total a.py", ["a.py"]),
    ("grep --include=*.py -r total .", []),
    ("cat -- -odd-name.py", ["-odd-name.py"]),
    # chains, pipes, subshells, redirections
    ("nl -ba src/billing.py | sed -n '1,80p'", ["src/billing.py"]),
    ("cat a.py | head -5", ["a.py"]),
    ("cat a.py && cat b.py; head c.py || tail d.py", ["a.py", "b.py", "c.py", "d.py"]),
    ("cat a.py & cat b.py", ["a.py", "b.py"]),
    ("cat a.py\nhead b.py", ["a.py", "b.py"]),
    ("(cat a.py; cat b.py)", ["a.py", "b.py"]),
    ("cat a.py 2>/dev/null || true", ["a.py"]),
    ("cat a.py 2>&1 | head", ["a.py"]),
    ("cat a.py &>/dev/null", ["a.py"]),
    ("cat a.py > copy.py", ["a.py"]),
    ("cat < in.txt", ["in.txt"]),
    ("wc -l < counted.py", ["counted.py"]),
    ("diff <(cat a.py) b.py", ["a.py"]),
    ("cat a \\\nb.py", ["a", "b.py"]),
    ("cat a.py # cat b.py\nhead c.py", ["a.py", "c.py"]),
    ("# just a comment", []),
    ("cat <<'EOF' > out.txt\ncat secret.py\nEOF\ncat after.py", ["after.py"]),
    ("cat <<EOF\nhead inside.py\nEOF", []),
    # wrappers Codex and people use
    ("bash -lc 'cat src/billing.py'", ["src/billing.py"]),
    ("/bin/bash -lc \"sed -n '1,20p' src/a.py\"", ["src/a.py"]),
    ("sh -c 'head -3 a.py | cat'", ["a.py"]),
    ("zsh -lc 'cd src && cat billing.py'", ["src/billing.py"]),
    ("bash -o pipefail -c 'head -3 piped.py'", ["piped.py"]),
    ("bash script.sh", []),
    ("bash -lc \"bash -lc 'cat deep.py'\"", ["deep.py"]),
    ("FOO=1 cat a.py", ["a.py"]),
    ("FOO=1 env -i BAR=2 timeout 5 cat a.py", ["a.py"]),
    ("env -u HOME cat a.py", ["a.py"]),
    ("timeout -s KILL 10 cat a.py", ["a.py"]),
    ("command cat a.py", ["a.py"]),
    ("time nl a.py", ["a.py"]),
    # cd: followed when it names a plain folder, else relative paths are dropped
    ("cd src && cat billing.py", ["src/billing.py"]),
    ("cd src/ && cat ./a.py", ["src/./a.py"]),
    ("cd src && cat a.py && cd .. && cat README.md", ["src/a.py", "README.md"]),
    ("cd /abs && cat x.py", ["/abs/x.py"]),
    ("cd ../other && cat y.py", ["../other/y.py"]),
    ('cd "$DIR" && cat lost.py /abs/kept.py', ["/abs/kept.py"]),
    ("cd && cat lost.py", []),
    ("cd - && cat lost.py", []),
    ("bash -lc 'cd sub && cat a.py' && cat b.py", ["sub/a.py", "b.py"]),
    # quoting
    ("cat 'my file.py'", ["my file.py"]),
    ('cat "my file.py"', ["my file.py"]),
    ("cat my\\ file.py", ["my file.py"]),
    ("cat 'a'\"b\"c.py", ["abc.py"]),
    ("cat ''", []),
    # what the shell would expand, and what is no file
    ("cat $HOME/x.py", []),
    ("cat ${X}.py", []),
    ("cat `which x`", []),
    ("cat *.py", []),
    ("cat src/?.py", []),
    ("cat src/[ab].py", []),
    ("cat src/{a,b}.py", []),
    ("cat ~/notes.md", []),
    ("cat /dev/null", []),
    ("cat /proc/self/environ", []),
    ("cat -", []),
    ("cat . ..", []),
    ("cat $(cat inner.py)", ["inner.py"]),
    # commands that do not read files, or whose files we do not claim
    ("ls -la src", []),
    ("python -c 'print(1)' x.py", []),
    ("pytest tests/test_billing.py", []),
    ("git diff src/billing.py", []),
    ("echo cat a.py", []),
    ("vim a.py", []),
    ("", []),
    ("   ", []),
    # duplicates once, order kept
    ("cat b.py a.py b.py", ["b.py", "a.py"]),
]


@pytest.mark.parametrize(("command", "expected"), READS)
def test_read_paths(command: str, expected: list[str]) -> None:
    assert list(read_paths(command)) == expected


HOSTILE = [
    ("cat 'unbalanced", []),
    ('cat "unbalanced', []),
    ("cat a.py 'unbalanced", []),  # the quote runs to the end: nothing after it is trusted
    ("cat a\x00b c.py", ["c.py"]),
    ("cat \x00", []),
    ("cat a\x1b[31m.py b.py", ["b.py"]),
    ("cat a.py\rb.py", ["a.py", "b.py"]),
    ("cat 'x\ny.py' z.py", ["z.py"]),
    ("cat " + "a" * 5000, []),  # one word longer than a path can be, cut at MAX_COMMAND
    ("cat ok.py " + "x" * (MAX_COMMAND + 10), ["ok.py"]),
    ("cat " + "(" * 3000 + "a.py", []),
    (";;;&&&|||" * 500, []),
    ("bash -c " * 800 + "'cat a.py'", []),
    ("\\" * 5000, []),
    ("'" * 4097, []),
    ("cd " + "a/" * 3000 + " && cat x.py", []),
]


@pytest.mark.parametrize(("command", "expected"), HOSTILE)
def test_read_paths_hostile(command: str, expected: list[str]) -> None:
    assert list(read_paths(command)) == expected


def test_a_huge_command_is_read_only_to_its_limit() -> None:
    far = "cat early.py; " + "true; " * 100_000 + "cat late.py"
    assert read_paths(far) == ("early.py",)


def test_many_files_are_capped() -> None:
    command = "cat " + " ".join(f"f{i}.py" for i in range(200))
    assert read_paths(command) == tuple(f"f{i}.py" for i in range(MAX_PATHS))


def wrapped(script: str, times: int) -> str:
    for _ in range(times):
        script = "bash -lc " + shlex.quote(script)
    return script


def test_nesting_is_bounded() -> None:
    # two shells deep are opened, the third is not (each level re-reads its script)
    assert read_paths(wrapped("cat deep.py", 1)) == ("deep.py",)
    assert read_paths(wrapped("cat deep.py", MAX_NESTING)) == ("deep.py",)
    assert read_paths(wrapped("cat deep.py", MAX_NESTING + 1)) == ()


PATCH = """*** Begin Patch
*** Update File: src/billing.py
@@ def total():
-    return 1
+    return 2
*** Add File: src/new_module.py
+x = 1
*** Delete File: src/old.py
*** Update File: src/billing.py
*** Move to: src/moved.py
@@
-a
+b
*** End Patch
"""


def test_patch_paths() -> None:
    assert patch_paths(PATCH) == ("src/billing.py", "src/new_module.py")


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ("", ()),
        ("*** Update File: a.py", ("a.py",)),
        ("*** Update File: a.py\r\n*** Add File: b.py\r\n", ("a.py", "b.py")),
        ("*** Update File:    spaced.py   \n", ("spaced.py",)),
        ("*** Update File: \n*** Add File:\n", ()),
        ("  *** Update File: indented.py\n", ()),  # only at a line's start, as the grammar says
        ("+*** Update File: added-line.py\n", ()),
        ("*** Update File: a\x00b.py\n*** Add File: ok.py\n", ("ok.py",)),
        ("*** Update File: my file.py\n", ("my file.py",)),
        ("*** Update File: $HOME/literal.py\n", ("$HOME/literal.py",)),  # no shell in a patch
        ("*** Update File: " + "a" * 5000 + "\n", ()),
    ],
)
def test_patch_paths_edges(patch: str, expected: tuple[str, ...]) -> None:
    assert patch_paths(patch) == expected


def test_patch_paths_of_a_huge_patch_are_capped() -> None:
    patch = "".join(f"*** Add File: f{i}.py\n+x\n" for i in range(5000))
    assert patch_paths(patch) == tuple(f"f{i}.py" for i in range(MAX_PATHS))
    assert patch_paths("+x\n" * 400_000 + "*** Add File: past-the-limit.py\n") == ()


def test_is_patch() -> None:
    assert is_patch("apply_patch <<'EOF'\n" + PATCH + "EOF\n")
    assert not is_patch("cat src/billing.py")


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("cat sedhnl-'\"\\|&;()<>\n$*~ab./\x00\t")), max_size=300)
)
def test_any_command_gives_plain_paths(command: str) -> None:
    paths = read_paths(command)
    assert len(paths) <= MAX_PATHS
    assert len(set(paths)) == len(paths)
    for path in paths:
        assert path and path.isprintable()
        assert not any(char in path for char in "$*?[{`")
        assert not path.startswith("~") and path != "-"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_as_a_patch(text: str) -> None:
    paths = patch_paths(text)
    assert len(paths) <= MAX_PATHS
    for path in paths:
        assert path.isprintable() and path == path.strip()
        assert f"*** Update File: {path}" in text or f"*** Add File: {path}" in text
