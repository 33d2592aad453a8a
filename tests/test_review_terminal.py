"""`review` read by a person: text on a terminal, the offending line quoted, help that says it.

Run under a real pseudo-terminal (the `pty` module) the review is text, with no Markdown
escapes (`datetime\\.utcnow\\(\\)`); piped, or with `--format`, it is what it was. Each
finding quotes its line as `guard test` does (masked, cut); sections are indented two
spaces; `review --help` names guard findings and exit status 1; hooks/github-review.sh
says every reason it fails the job. Real branches, the installed CLI.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

from reliora_git.interfaces.review import COMMENT_MARKER
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git, reliora_executable
from tests.test_action import ROOT, _run_step
from tests.test_guards import lesson, write

#: A GitHub token assembled from pieces (never a real one).
TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5b"
LONG = "    stamp = datetime.utcnow()  # " + "padding " * 20 + "\n"


def in_terminal(cwd: Path, *args: str) -> tuple[int, str]:
    """Run the installed `reliora` with stdout and stderr on a pseudo-terminal."""
    main, secondary = pty.openpty()
    process = subprocess.Popen(
        [reliora_executable(), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env=os.environ.copy(),
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    status = process.wait(timeout=120)
    return status, b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.fixture
def branch(store: Store, write_record: RecordMaker) -> str:
    """main: a lesson against `datetime.utcnow()` about src/; feature repeats it twice,
    once on a long line that holds a token."""
    root = store.root
    write(root, "src/when.py", "import datetime\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code")
    record_id = "aware-datetimes"
    guard = {"pattern": r"datetime\.utcnow\(\)", "message": "datetime.utcnow() is naive"}
    write_record(record_id, "Aware datetimes", paths=["src/"], guards=[guard])
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "lesson")
    git(root, "checkout", "-q", "-b", "feature")
    write(
        root,
        "src/when.py",
        f"import datetime\nnow = datetime.utcnow()  # key {TOKEN}\n{LONG}",
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "naive", "--no-verify")
    return record_id


def test_text_on_a_terminal_markdown_when_piped_or_asked(
    store: Store, cli: Cli, branch: str
) -> None:
    status, shown = in_terminal(store.root, "review", "main", "feature")
    assert status == 0, shown  # warn findings only
    assert shown.startswith("main (")
    assert COMMENT_MARKER not in shown
    assert "code that repeats a lesson (guards):" in shown
    assert f"src/when.py:2: repeats lesson {branch}: datetime.utcnow() is naive" in shown
    assert "\\" not in shown  # no Markdown escape reaches the terminal

    piped = cli("review", "main", "feature")
    assert piped.stdout.startswith(COMMENT_MARKER)
    assert "datetime\\.utcnow\\(\\) is naive" in piped.stdout  # escaped for a web page

    status, asked = in_terminal(store.root, "review", "main", "feature", "--format", "markdown")
    assert asked.startswith(COMMENT_MARKER)
    status, as_json = in_terminal(store.root, "review", "main", "feature", "-f", "json")
    assert json.loads(as_json)["guardFindings"][0]["record"] == branch


def test_findings_quote_their_line_as_guard_test_does(store: Store, cli: Cli, branch: str) -> None:
    guard_test = cli("guard", "test", "--rev", "feature").stdout
    # guard test: each finding's line is indented four spaces under it, masked and cut.
    expected = [line.strip() for line in guard_test.splitlines() if line.startswith("    ")]
    assert len(expected) == 2
    assert TOKEN not in guard_test and TOKEN[8:20] not in guard_test
    assert expected[1].endswith("…") and len(expected[1]) == 120

    text = cli("review", "main", "feature", "--format", "text").stdout
    lines = text.splitlines()
    start = lines.index("code that repeats a lesson (guards):")
    findings = lines[start + 1 : start + 5]
    assert [line.startswith("  src/when.py:") for line in findings] == [True, False] * 2
    assert [line[6:] for line in findings[1::2]] == expected
    assert all(line.startswith("      ") and line[6] != " " for line in findings[1::2])

    markdown = cli("review", "main", "feature").stdout
    for quoted in expected:
        code = " ".join(quoted.split())  # a code span holds one line, spaces collapsed
        assert f"\n  `{code}`\n" in markdown
    assert TOKEN[8:20] not in text + markdown


def test_text_sections_are_indented_two_spaces(store: Store, cli: Cli, branch: str) -> None:
    git(store.root, "checkout", "-q", "feature")
    assert cli("feedback", branch, "success", "--note", "held on the new code").returncode == 0
    git(store.root, "add", "-A")
    git(store.root, "commit", "-q", "-m", "feedback", "--no-verify")

    text = cli("review", "main", "feature", "--format", "text").stdout
    assert f"\nfeedback on {branch}:\n  success by Test Author: held on the new code\n" in text
    assert (
        f"\nexperiences about code this change touches:\n  {branch}  Aware datetimes: src/when.py\n"
    ) in text
    # No record changed: no kind column, so nothing is indented nine spaces.
    assert not [line for line in text.splitlines() if line.startswith("         ")]


def test_review_help_names_guard_findings_the_terminal_default_and_exit_status_1(
    cli: Cli,
) -> None:
    done = cli("review", "--help")
    assert done.returncode == 0
    shown = " ".join(done.stdout.split())
    assert "Review a branch: its record changes and guard findings." in shown
    assert "Guard findings: each line head adds that a lesson's guard matches" in shown
    assert "Text on a terminal; Markdown when piped" in shown
    assert "Default: text on a terminal, else markdown." in shown
    assert "Exit status 1 when a `block` guard fires on the lines head adds" in shown
    assert "already matches head's code" in shown
    assert "the guards run out of their time" in shown


def test_the_review_script_says_and_does_every_reason_it_fails_the_job(
    store: Store, cli: Cli, branch: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (ROOT / "hooks" / "github-review.sh").read_text(encoding="utf-8")
    header = " ".join(
        line.lstrip("#").strip() for line in script.split("\nset -uo pipefail")[0].splitlines()
    )
    for reason in (
        "a `block` guard fires on a line the pull request adds",
        "a guard the pull request brings already matches head's code",
        "the guard budget ran out (10 s of CPU, RELIORA_GUARD_BUDGET)",
        "a record or note holds a secret",
        "a store folder is a symbolic link",
    ):
        assert reason in header

    root = store.root
    git(root, "checkout", "-q", "feature")
    with monkeypatch.context() as patched:
        patched.setenv("RELIORA_GUARD_BUDGET", "0")  # the first search spends it all
        spent = _run_step(root, tmp_path, "main")
    assert spent.returncode == 1  # warn findings only: the budget is what fails it
    assert "::error title=guards stopped::" in spent.stdout
    assert (tmp_path / "reliora-review.md").read_text().startswith(COMMENT_MARKER)

    # A lesson the branch brings whose guard matches the code already there, and nobody
    # accepted that (--allow-existing writes `existing: allowed`: a warning, never a fail).
    lesson(cli, "--guard", "import datetime", "--allow-existing", title="No datetime")
    for path in store.experiences.glob("no-datetime-*.md"):
        text = path.read_text(encoding="utf-8")
        assert "  existing: allowed\n" in text
        path.write_text(text.replace("  existing: allowed\n", ""), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "lesson", "--no-verify")
    brought = _run_step(root, tmp_path, "main")
    assert brought.returncode == 1
    assert re.search(r"::error file=\.reliora/experiences/no-datetime-\w+\.md,", brought.stdout)
