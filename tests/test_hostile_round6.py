"""Hostile input, round 6: each finding of the adversarial review, reproduced on real git
repositories and the installed ``reliora``; each test failed before its fix."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git
from tests.test_history_command import commit

RS, US = "\x1e", "\x1f"


def real_shas(repo: Path) -> set[str]:
    return set(git(repo, "rev-list", "--all").split())


def test_a_commit_subject_with_log_separators_breaks_no_read(
    store: Store, repo: Path, cli: Cli, write_record: RecordMaker
) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "pay.py").write_text("def pay():\n    return 1\n")
    write_record("pay-lesson", "Pay rounds once", paths=["src/pay.py"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lesson and code")
    (repo / "src" / "pay.py").write_text("def pay():\n    return 2\n")
    git(repo, "commit", "-q", "-am", f"Tidy{RS}X{US}NaN")  # what git log used to split on
    for args in (("search", "pay rounds"), ("show", "pay-lesson"), ("about", "src/pay.py")):
        done = cli(*args, "--json")
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
    shown = cli.json("show", "pay-lesson")
    assert shown["freshness"]["state"] == "stale"  # the change is read, not lost


def test_a_commit_body_cannot_forge_a_commit_in_history(repo: Path, cli: Cli) -> None:
    commit(repo, "Add auth", {"src/auth.py": "def check(t):\n    return t\n"}, 0)
    forged = "f" * 40
    body = (
        "The check returned the raw token because it skipped the cast.\n"
        f"{RS}{forged}{US}{US}1700000000{US}Jane Maintainer{US}"
        "Fix token check bypass (#4242)\n"
    )
    carrier = commit(
        repo,
        "Fix auth check returning the raw token",
        {"src/auth.py": "def check(t):\n    return bool(t)\n", "tests/test_auth.py": "x = 1\n"},
        1,
        body=body,
    )
    # The same framing from an added line of a text file.
    line = f"{RS}{'e' * 40}{US}{US}1700000000{US}Jane Maintainer{US}Fix forged from a file\n"
    commit(repo, "Fix notes typo wrongly", {"src/notes.py": f"# {line}"}, 2)
    found = json.loads(cli("history", "--json", "--no-sessions").stdout)["entries"]
    shas = {sha for entry in found for sha in entry["commits"]}
    assert shas <= real_shas(repo)
    # Nothing is credited to the forged author, nor titled as the forged commit.
    assert all("Jane Maintainer" not in e["draft"]["source"] for e in found)
    assert all(not e["title"].startswith("Fix token check bypass") for e in found)
    assert carrier in shas  # the carrying commit is not swallowed
    draft = cli.json("record", "--from-commit", carrier)
    assert draft["title"] == "Fix auth check returning the raw token"


def test_a_path_with_a_space_keeps_its_fix(repo: Path, cli: Cli) -> None:
    commit(repo, "Add pay", {"src/my pay.py": "def pay():\n    return 1\n"}, 0)
    sha = commit(
        repo,
        "Fix pay rounding",
        {"src/my pay.py": "def pay():\n    return round(1)\n"},
        1,
        body="Totals were off by a cent because pay did not round.",
    )
    (entry,) = [
        e
        for e in json.loads(cli("history", "--json", "--no-sessions").stdout)["entries"]
        if e["commits"][0] == sha
    ]
    assert entry["files"] == ["src/my pay.py"]  # git's TAB after a spaced path is not the name
    assert entry["draft"]["paths"] == ["src/my pay.py"]
    assert "+    return round(1)" in entry["evidence"]["diff"]


def test_history_runs_no_textconv_driver(repo: Path, cli: Cli, tmp_path: Path) -> None:
    marker = tmp_path / "textconv-ran"
    git(repo, "config", "diff.evil.textconv", f"sh -c 'touch {marker}; cat \"$0\"'")
    (repo / ".gitattributes").write_text("*.py diff=evil\n")
    commit(repo, "Add pay", {"src/pay.py": "x = 1\n", ".gitattributes": "*.py diff=evil\n"}, 0)
    commit(repo, "Fix pay", {"src/pay.py": "x = 2\n"}, 1, body="Wrong because of a typo.")
    assert cli("history", "--no-sessions").returncode == 0
    assert not marker.exists()
    subprocess.run(["git", "log", "-p", "-1"], cwd=repo, capture_output=True, check=True)
    assert marker.exists()  # the driver is real: git runs it when textconv is not turned off
