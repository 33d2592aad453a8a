"""A change of only blank lines, whitespace or comment lines leaves a lesson fresh (SPEC.md §12).

The CLI tests drive real git and the installed ``reliora``; the judging function
(:func:`reliora_git.records.code_change.meaningful`) is tested on its own for each family
of languages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliora_git.records.code_change import MAX_JUDGED_BYTES, docstring_lines, meaningful
from reliora_git.records.code_lines import syntax_of
from reliora_git.storage.store import Store
from tests.conftest import Cli, git

PY = '''"""Billing retries."""

import time


def backoff(attempt):
    """How long to wait before ``attempt``."""
    # Exponential, capped.
    return min(2 ** attempt, 60)
'''

JS = """// Billing client
const LIMIT = 5; // retries

/* The wait grows
   with each attempt. */
function wait(attempt) {
  return Math.min(2 ** attempt, 60);
}
"""


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def _write(repo: Path, name: str, text: str) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _lesson(cli: Cli, path: str, title: str) -> str:
    done = cli("record", "--title", title, "--task", "t", "--solution", "s", "--path", path)
    assert done.returncode == 0, done.stderr
    return str(done.stdout.split()[1])


def _freshness(cli: Cli, record_id: str) -> dict[str, object]:
    return cli.json("show", record_id)["freshness"]  # type: ignore[no-any-return]


def _state(cli: Cli, record_id: str) -> object:
    return _freshness(cli, record_id)["state"]


@pytest.fixture
def lessons(repo: Path, store: Store, cli: Cli) -> dict[str, str]:
    """A Python file and a JavaScript file, each with a committed lesson about it."""
    _write(repo, "src/billing.py", PY)
    _write(repo, "web/client.js", JS)
    _commit(repo, "code")
    found = {
        "py": _lesson(cli, "src/billing.py", "Retry backoff in billing"),
        "js": _lesson(cli, "web/client.js", "Retry backoff in the web client"),
    }
    _commit(repo, "lessons")
    return found


def test_comment_only_changes_leave_python_and_javascript_lessons_fresh(
    repo: Path, cli: Cli, lessons: dict[str, str]
) -> None:
    reworded = "# Doubles; 60 s at most.\n    # (see the runbook)"
    _write(repo, "src/billing.py", PY.replace("# Exponential, capped.", reworded))
    _write(
        repo,
        "web/client.js",
        JS.replace("// Billing client", "// The billing client\n// talks to /api").replace(
            "with each attempt. */", "with each attempt,\n   up to a minute. */"
        ),
    )
    _commit(repo, "reword comments")
    for record_id in lessons.values():
        assert _freshness(cli, record_id) == {
            "state": "fresh",
            "changedPaths": [],
            "missingPaths": [],
            "commitsSince": 0,
        }
    results = cli.json("search", "retry backoff")["results"]
    assert {r["freshness"]["state"] for r in results} == {"fresh"}
    assert "[stale]" not in cli("about", "src/billing.py", "web/client.js").stdout
    brief = cli.json("brief", "--file", "src/billing.py")  # the lessons put before an agent
    assert [lesson["freshness"]["state"] for lesson in brief["lessons"]] == ["fresh"]
    # A real change next to a comment change: stale, and only that commit counts.
    _write(
        repo,
        "web/client.js",
        (repo / "web/client.js")
        .read_text()
        .replace("const LIMIT = 5; // retries", "// retries, at most\nconst LIMIT = 3;"),
    )
    _commit(repo, "fewer retries")
    fresh = _freshness(cli, lessons["js"])
    assert fresh["state"] == "stale" and fresh["commitsSince"] == 1
    assert fresh["changedPaths"] == ["web/client.js"]
    assert _state(cli, lessons["py"]) == "fresh"
    assert "[stale]" in cli("about", "web/client.js").stdout


def test_blank_line_and_whitespace_changes_leave_lessons_fresh(
    repo: Path, cli: Cli, lessons: dict[str, str]
) -> None:
    spaced = PY.replace("min(2 ** attempt, 60)", "min( 2**attempt,  60 )").replace(
        "import time\n", "import time\n\n\n"
    )
    _write(repo, "src/billing.py", spaced)
    _write(repo, "web/client.js", JS.replace("  return", "\treturn").replace("}\n", "}\n\n\n"))
    _commit(repo, "reformat")
    assert _state(cli, lessons["py"]) == "fresh"
    assert _state(cli, lessons["js"]) == "fresh"
    assert cli.json("stale")["stale"] == []
    # Indentation is Python code: moving the return out of the function is a change.
    _write(repo, "src/billing.py", spaced.replace("    return", "return"))
    _commit(repo, "dedent")
    assert _state(cli, lessons["py"]) == "stale"


def test_a_docstring_only_change_leaves_a_lesson_fresh(
    repo: Path, cli: Cli, lessons: dict[str, str]
) -> None:
    changed = PY.replace('"""Billing retries."""', '"""Billing retries.\n\nAll of them.\n"""')
    changed = changed.replace(
        '"""How long to wait before ``attempt``."""',
        '"""How long to wait, in seconds,\n    before ``attempt``."""',
    )
    _write(repo, "src/billing.py", changed)
    _commit(repo, "docstrings")
    assert _state(cli, lessons["py"]) == "fresh"
    # A string that is not a docstring is code.
    _write(repo, "src/billing.py", changed + '\nHELP = """How long.\n"""\n')
    _commit(repo, "help")
    assert _state(cli, lessons["py"]) == "stale"


def test_a_hash_inside_a_string_is_code(repo: Path, store: Store, cli: Cli) -> None:
    _write(repo, "src/query.py", 'COLOUR = "#fff"\nSQL = """\n# select\n"""\n')
    _write(repo, "bin/run.sh", 'echo "start\n# not a comment"\n')
    _commit(repo, "code")
    colour = _lesson(cli, "src/query.py", "Colour lesson")
    script = _lesson(cli, "bin/run.sh", "Script lesson")
    _commit(repo, "lessons")
    _write(repo, "bin/run.sh", 'echo "start\n# still not a comment"\n')
    _commit(repo, "a line of a string that starts with #")
    assert _state(cli, script) == "stale"
    _write(repo, "src/query.py", 'COLOUR = "#000"\nSQL = """\n# select\n"""\n')
    _commit(repo, "black")
    assert _freshness(cli, colour)["commitsSince"] == 1
    _write(repo, "src/query.py", 'COLOUR = "#000"\nSQL = """\n# select *\n"""\n')
    _commit(repo, "a line of a triple-quoted string")
    assert _freshness(cli, colour)["commitsSince"] == 2


def test_a_deleted_path_is_stale_and_outdated_feedback_still_counts(
    repo: Path, cli: Cli, lessons: dict[str, str]
) -> None:
    _write(repo, "src/billing.py", PY + "# the end\n")
    _commit(repo, "comment")
    assert _state(cli, lessons["py"]) == "fresh"
    assert cli("feedback", lessons["js"], "outdated", "-m", "the client moved").returncode == 0
    _commit(repo, "feedback")
    assert _state(cli, lessons["js"]) == "stale"
    (repo / "src/billing.py").unlink()
    _commit(repo, "remove billing")
    fresh = _freshness(cli, lessons["py"])
    assert fresh["state"] == "stale"
    assert fresh["missingPaths"] == ["src/billing.py"]
    assert fresh["commitsSince"] == 1  # the deletion; not the comment before it


def test_stale_does_not_list_comment_only_commits(
    repo: Path, cli: Cli, lessons: dict[str, str]
) -> None:
    _write(repo, "src/billing.py", PY.replace("# Exponential, capped.", "# Exponential."))
    _commit(repo, "comment only")
    _write(repo, "src/billing.py", PY.replace("# Exponential, capped.", "# Exponential.") + "\n\n")
    _commit(repo, "blank lines")
    _write(repo, "src/billing.py", PY.replace("60)", "30)"))
    _commit(repo, "shorter cap")
    _write(repo, "src/billing.py", PY.replace("60)", "30)").replace("import time\n", ""))
    _commit(repo, "drop an import")
    done = cli("stale", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    stale = {item["id"]: item for item in report["stale"]}
    assert list(stale) == [lessons["py"]]
    commits = [c["subject"] for c in stale[lessons["py"]]["commits"]]
    assert commits == ["drop an import", "shorter cap"]
    assert stale[lessons["py"]]["freshness"]["commitsSince"] == 2
    text = cli("stale").stdout
    assert "shorter cap" in text and "comment only" not in text and "blank lines" not in text


# --- the judging function, one family of languages at a time ---------------------------------


@pytest.mark.parametrize(
    ("path", "old", "new", "changed"),
    [
        # `#`: Python, shell, YAML, TOML, Ruby, Makefile, Dockerfile
        ("a.py", "x = 1\n", "# why\nx = 1  \n\n", False),
        ("a.py", "x = 1  # a\n", "x = 1  # b\n", True),  # a comment after code: the line counts
        ("a.py", "x = '#a'\n", "x = '#b'\n", True),
        ("a.py", 'x = """\n# a\n"""\n', 'x = """\n# b\n"""\n', True),
        ("a.py", "if a:\n    b()\nc()\n", "if a:\n    b()\n    c()\n", True),
        ("a.py", "return x\n", "returnx\n", True),
        ("a.py", 'x = " "\n', 'x = ""\n', True),
        ("a.py", "x=f(a,b)\n", "x = f(a, b)\n", False),
        ("run.sh", "set -e\n# a\n", "set -e\n# b\n", False),
        ("run.sh", "cat <<EOF\n# a\nEOF\n", "cat <<EOF\n# b\nEOF\n", True),
        ("run.sh", 'n=${#a} "x\n# a"\n', 'n=${#a} "x\n# b"\n', True),
        ("ci.yml", "a: 1\n# a\n", "a: 1\n# b\n", False),
        ("ci.yml", "run: |\n  # a\n  make\n", "run: |\n  # b\n  make\n", True),
        ("ci.yml", "a: don't\n# a\n", "a: don't\n# b\n", False),
        ("pyproject.toml", "[x]\n# a\ny = 1\n", "[x]\ny = 1 # c\n", True),
        ("pyproject.toml", "[x]\n# a\ny = 1\n", "[x]\n\ny = 1\n", False),
        ("lib/a.rb", "x = 1\n# a\n", "x = 1\n# b\n", False),
        ("Makefile", "all:\n\tmake x\n# a\n", "all:\n\tmake x\n# b\n", False),
        ("Dockerfile", "FROM x\n# a\n", "FROM x\n# b\nRUN y\n", True),
        # `//` and `/* … */`: C, JavaScript, TypeScript, Go, Rust, Java…
        ("a.js", "f();\n// a\n", "f();\n// b\n/* c\n d */\n", False),
        ("a.ts", "f();\n", "f(); // b\n", True),
        ("a.js", "s = `\n// a\n`;\n", "s = `\n// b\n`;\n", True),
        ("a.js", 's = "http://a";\n', 's = "http://b";\n', True),
        ("a.c", "int x;\n", "int x;\n/* never closed\n", True),
        ("a.c", "int x; /* a */\n", "int x; /* b */\n", True),
        ("a.c", "/* a\n   b */\nint x;\n", "/* a\n   c */\nint x;\n", False),
        ("a.go", "x := 1\n// a\n", "x :=  1\n// b\n", False),
        ("a.rs", "fn f<'a>(s: &'a str) {}\n// a\n", "fn f<'a>(s: &'a str) {}\n// b\n", False),
        ("A.java", 'String s = """\n// a\n""";\n', 'String s = """\n// b\n""";\n', True),
        ("a.php", "<?php\n# a\n$x = 1;\n", "<?php\n// b\n$x = 1;\n", False),
        # `--`: SQL, Lua, Haskell
        ("q.sql", "select 1;\n-- a\n", "select 1;\n-- b\n/* c */\n", False),
        ("q.sql", "select '-- a';\n", "select '-- b';\n", True),
        ("a.lua", "x = 1\n-- a\n", "x = 1\n-- b\n--[[ c\n d ]]\n", False),
        ("a.lua", "s = [[\n-- a\n]]\n", "s = [[\n-- b\n]]\n", True),
        ("A.hs", "main = f\n-- a\n", "main = f\n{- b -}\n", False),
        # `;`: Lisp, Clojure, Emacs Lisp, INI, assembly
        ("a.lisp", "(f x)\n; a\n", "(f x)\n;; b\n", False),
        ("a.clj", '(def s "\n; a")\n', '(def s "\n; b")\n', True),
        ("init.el", "(setq x 1)\n; a\n", "(setq x 2)\n; a\n", True),
        ("setup.ini", "[x]\n; a\ny=1\n", "[x]\n# b\ny = 1\n", False),
        ("boot.asm", "mov ax, 1\n; a\n", "mov ax, 1\n; b\n", False),
        # An unknown kind of file: only blank lines and whitespace.
        ("notes.txt", "a  b\n", "a b\n\n", False),
        ("notes.txt", "a\n# b\n", "a\n# c\n", True),
        ("data.json", '{"a": " "}\n', '{"a": ""}\n', True),
    ],
)
def test_meaningful(path: str, old: str, new: str, changed: bool) -> None:
    assert meaningful(path, old, new) is changed
    assert meaningful(path, old, old) is False


def test_languages_by_name() -> None:
    assert syntax_of("src/Makefile").name == "make"
    assert syntax_of("Dockerfile.dev").name == "shell"
    assert syntax_of("x/LICENSE").name == "plain"
    assert syntax_of("lib/A.HS").name == "haskell"
    assert syntax_of(".hidden").name == "plain"


def test_python_docstrings() -> None:
    text = (
        '"""Module."""\n\n\nclass A:\n    """Two\n    lines."""  # why\n\n'
        '    def f(self):\n        """One."""; x = 1\n'
    )
    assert docstring_lines(text) == {1, 5, 6}  # `; x = 1` shares its line: not left out
    assert docstring_lines("def f(:\n") == frozenset()  # does not parse: none
    documented = 'def f():\n    """a"""\n    return 1\n'
    assert not meaningful("a.py", documented, "def f():\n    return 1\n")  # docstring removed
    assert not meaningful("a.py", documented, documented.replace('"a"', '"b\n\n    c"'))
    assert meaningful("a.py", documented, documented.replace("return 1", '"""a"""'))


def test_what_cannot_be_judged_counts() -> None:
    large = "# a\n" * (MAX_JUDGED_BYTES // 4 + 1)
    assert meaningful("a.py", large, large + "# b\n")
    assert meaningful("a.py", "# a\0\n", "# b\0\n")  # binary
    # Quotes by the hundred thousand: read in one pass, and judged.
    hostile = "'" * 100_001 + "\n" + '"' * 99_996 + "\n"
    assert meaningful("a.js", hostile, hostile + "// c\n") is False
    assert meaningful("a.js", hostile, hostile + "c\n") is True
    line = "'a'" * 300_000 + "\n"  # each quote closes on a line read once, not once a quote
    assert meaningful("a.c", line, line + "/* b */\n") is False
    # A triple quote left open: what follows is a string, and a "comment" there counts.
    assert meaningful("a.js", hostile + '"""\n', hostile + '"""\n// c\n') is True
