"""Every file of the bad-record corpus: skipped with one warning, reported by check, never fatal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reliora_git.operations.lessons import reads
from reliora_git.records.text import escape_invisible
from reliora_git.storage.catalog import load_catalog
from reliora_git.storage.store import Store
from tests.bad_corpus import (
    BAD_RECORDS,
    FILES,
    OUTSIDE_TITLE,
    Expected,
    install_bad_corpus,
    invalid_locators,
    valid_locators,
)
from tests.conftest import Cli, RecordMaker, git

WARNING_RE = re.compile(r"^reliora: warning: (.*) \(skipped\)$")


@pytest.fixture
def corpus(store: Store, write_record: RecordMaker) -> dict[str, Expected]:
    """The whole corpus plus one ordinary record that every search must still find."""
    write_record(
        "flaky-pytest-timeouts",
        "Flaky pytest timeouts on CI runners",
        "## Problems\n- pytest-timeout killed slow git fixtures\n\n## Solution\nraise it\n",
        tags=["pytest", "ci"],
    )
    return install_bad_corpus(store.path)


def _display(locator: str) -> str:
    """A locator as a terminal line shows it (escapes dropped, whitespace collapsed)."""
    from reliora_git.interfaces.output import one_line

    return one_line(locator)


def _warnings(stderr: str) -> dict[str, str]:
    """Warning lines by the locator they start with; fails on any other stderr line."""
    found: dict[str, str] = {}
    for line in stderr.splitlines():
        match = WARNING_RE.match(line)
        assert match, f"unexpected stderr line: {line!r}"
        found[line] = match.group(1)
    return found


def _assert_one_warning_each(stderr: str, expected: dict[str, Expected]) -> None:
    lines = list(_warnings(stderr).values())
    assert len(lines) == len(invalid_locators(expected)), "\n".join(lines)
    for locator in invalid_locators(expected):
        case = expected[locator]
        where = _display(locator) + (f":{case.line}" if case.line else "")
        mine = [line for line in lines if line.startswith(where + ": ")]
        assert len(mine) == 1, (locator, lines)
        assert case.message in mine[0]
    for line in lines:
        assert "\x1b" not in line and "\n" not in line


def test_checked_in_files_keep_their_exact_bytes() -> None:
    # .gitattributes marks the corpus -text; if a checkout normalised it, these cases
    # would silently stop testing what they claim to.
    assert (BAD_RECORDS / "bom.md").read_bytes().startswith(b"\xef\xbb\xbf---\n")
    assert (BAD_RECORDS / "crlf.md").read_bytes().count(b"\r\n") >= 8
    both = (BAD_RECORDS / "bom-crlf.md").read_bytes()
    assert both.startswith(b"\xef\xbb\xbf---\r\n") and b"\n" not in both.replace(b"\r\n", b"")
    assert b"\x1b[2J" in (BAD_RECORDS / "ansi-title.md").read_bytes()
    assert (BAD_RECORDS / "empty.md").read_bytes() == b""
    assert sorted(p.name for p in BAD_RECORDS.iterdir()) == sorted(FILES)


def test_catalog_keeps_each_bad_file_as_an_entry_with_its_error(
    store: Store, corpus: dict[str, Expected]
) -> None:
    catalog = load_catalog(store)
    entries = {entry.locator: entry for entry in catalog.entries}
    skipped = {error.path: error for error in catalog.skipped()}
    for locator, case in corpus.items():
        assert locator in entries, locator
        if case.valid:
            assert locator not in skipped, skipped.get(locator)
        else:
            error = skipped[locator]
            assert case.message in error.message, (locator, error)
            assert error.line == case.line, (locator, error)
    usable = {record.locator: record for record in catalog.records}
    for locator in valid_locators(corpus):
        assert usable[locator].title == corpus[locator].title
    # No record from behind a symlink, and the valid ones plus the ordinary record.
    assert all(record.title != OUTSIDE_TITLE for record in catalog.records)
    assert len(catalog.records) == len(valid_locators(corpus)) + 1


def test_search_skips_each_bad_file_with_one_warning_line(
    corpus: dict[str, Expected], cli: Cli
) -> None:
    done = cli("search", "flaky pytest timeouts")
    assert done.returncode == 0, done.stderr
    _assert_one_warning_each(done.stderr, corpus)
    assert "Flaky pytest timeouts on CI runners" in done.stdout
    assert OUTSIDE_TITLE not in done.stdout + done.stderr


def test_search_json_is_one_document_despite_the_bad_files(
    corpus: dict[str, Expected], cli: Cli
) -> None:
    done = cli("search", "something broke", "--json", "--limit", "100")
    assert done.returncode == 0, done.stderr
    _assert_one_warning_each(done.stderr, corpus)
    document = json.loads(done.stdout)
    titles = {result["title"] for result in document["results"]}
    # The valid corpus records with the standard problem "something broke".
    assert {
        corpus[locator].title
        for locator in valid_locators(corpus)
        if not locator.endswith(("ansi-title.md", "long-lines.md"))
    } <= titles
    assert OUTSIDE_TITLE not in titles
    locators = {result["locator"] for result in document["results"]}
    # A file name that is not UTF-8 comes out as a JSON escape of its byte, not a crash.
    assert ".reliora/experiences/caf\udce9-latin1-name.md" in locators


def test_list_skips_the_bad_files_and_shows_the_rest(corpus: dict[str, Expected], cli: Cli) -> None:
    done = cli("list", "--json")
    assert done.returncode == 0, done.stderr
    _assert_one_warning_each(done.stderr, corpus)
    items = json.loads(done.stdout)
    # Exactly the valid corpus records and the ordinary one; titles verbatim in JSON,
    # escape characters and direction overrides included.
    assert sorted(item["title"] for item in items) == sorted(
        [corpus[locator].title for locator in valid_locators(corpus)]
        + ["Flaky pytest timeouts on CI runners"]
    )
    human = cli("list")
    assert human.returncode == 0
    assert "flaky-pytest-timeouts" in human.stdout


def test_check_reports_each_bad_file_as_an_error_and_exits_1(
    corpus: dict[str, Expected], cli: Cli
) -> None:
    done = cli("check", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    errors = {
        f["locator"]: [p for p in f["problems"] if p["severity"] == "error"]
        for f in report["files"]
    }
    for locator, case in corpus.items():
        if case.valid:
            assert not errors.get(locator), (locator, errors.get(locator))
        elif locator.endswith("0-duplicate-id-copy.md"):
            assert "also used by .reliora/experiences/duplicate-id.md" in str(errors[locator])
        else:
            assert any(case.message in p["message"] for p in errors[locator]), locator


def test_check_text_output_names_each_file_on_one_clean_line(
    corpus: dict[str, Expected], cli: Cli
) -> None:
    done = cli("check")
    assert done.returncode == 1
    for locator in invalid_locators(corpus):
        assert f"{_display(locator)}" in done.stdout, locator
    assert "\x1b" not in done.stdout
    assert done.stdout.rstrip().endswith("invalid")


def test_check_on_a_symlinked_record_reports_the_link_not_its_target(
    corpus: dict[str, Expected], cli: Cli
) -> None:
    done = cli("check", ".reliora/experiences/link-outside.md", "--json")
    assert done.returncode == 1, done.stdout
    files = json.loads(done.stdout)["files"]
    linked = next(f for f in files if f["locator"] == ".reliora/experiences/link-outside.md")
    assert "symbolic link" in linked["problems"][0]["message"]
    assert OUTSIDE_TITLE not in done.stdout


def test_show_and_feedback_still_work_beside_the_bad_files(
    corpus: dict[str, Expected], cli: Cli, store: Store
) -> None:
    assert cli.json("show", "flaky-pytest")["id"] == "flaky-pytest-timeouts"
    done = cli("feedback", "flaky-pytest", "success")
    assert done.returncode == 0, done.stderr
    assert reads.show(store, "flaky-pytest-timeouts").feedback.success == 1


def test_the_python_object_tag_constructs_nothing(
    corpus: dict[str, Expected], cli: Cli, repo: Path
) -> None:
    # python-object.md asks YAML to call open("reliora-pwned.txt", "w").
    for command in (["search", "pwned"], ["list"], ["check"]):
        cli(*command)
    assert not (repo / "reliora-pwned.txt").exists()
    assert not any(repo.rglob("reliora-pwned.txt"))


def test_a_bad_feedback_file_counts_for_nothing_and_stops_nothing(
    store: Store, write_record: RecordMaker, cli: Cli
) -> None:
    write_record("kept-record", "A record with broken feedback")
    folder = store.feedback / "kept-record"
    folder.mkdir(parents=True)
    (folder / "broken.md").write_text("---\nrecord: [kept\n---\n", encoding="utf-8")
    (folder / "bomb.md").write_bytes((BAD_RECORDS / "alias-bomb.md").read_bytes())
    (folder / "good.md").write_text(
        "---\nrecord: kept-record\noutcome: success\nat: 2026-12-02T15:00:00Z\n---\n",
        encoding="utf-8",
    )
    found = cli.json("search", "broken feedback")
    assert found["results"][0]["feedback"]["success"] == 1


def test_the_corpus_survives_a_commit_and_clone_like_a_fork_pull_request(
    corpus: dict[str, Expected], repo: Path, tmp_path: Path
) -> None:
    # What CI sees: the hostile files committed by a contributor, then cloned.
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hostile records")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    # git keeps files and symlinks; it drops the FIFO and the empty folder.
    survived = {
        locator: case for locator, case in corpus.items() if case.kind in ("file", "symlink")
    }
    cli = Cli(clone)
    done = cli("search", "flaky pytest timeouts")
    assert done.returncode == 0, done.stderr
    _assert_one_warning_each(done.stderr, survived)
    assert "Flaky pytest timeouts on CI runners" in done.stdout
    checked = cli("check", "--json")
    assert checked.returncode == 1
    assert OUTSIDE_TITLE not in done.stdout + done.stderr + checked.stdout


def _in_git(corpus: dict[str, Expected]) -> dict[str, Expected]:
    """The cases git stores as records: files, and symlinks named *.md (mode 120000)."""
    return {
        locator: case
        for locator, case in corpus.items()
        if case.kind == "file" or (case.kind == "symlink" and locator.endswith(".md"))
    }


def test_check_staged_reports_each_staged_bad_file(
    corpus: dict[str, Expected], repo: Path, cli: Cli
) -> None:
    # The pre-commit hook's view: the same files, read from the index, not the disk.
    git(repo, "add", "-A")
    done = cli("check", "--staged", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    errors = {
        f["locator"]: " ".join(p["message"] for p in f["problems"] if p["severity"] == "error")
        for f in report["files"]
    }
    for locator, case in _in_git(corpus).items():
        if case.valid:
            assert not errors.get(locator), (locator, errors.get(locator))
        elif locator.endswith("0-duplicate-id-copy.md"):
            assert "also used by" in errors[locator]
        else:
            assert case.message in errors[locator], (locator, errors.get(locator))
    assert OUTSIDE_TITLE not in done.stdout


def test_review_of_a_pull_request_full_of_bad_files(
    repo: Path, cli: Cli, store: Store, write_record: RecordMaker
) -> None:
    # Base: an ordinary store on main. Head: a branch that adds the whole corpus.
    write_record("flaky-pytest-timeouts", "Flaky pytest timeouts on CI runners")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base store")
    git(repo, "checkout", "-q", "-b", "hostile")
    corpus = install_bad_corpus(store.path)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hostile records")

    as_json = cli("review", "--base", "main", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    review = json.loads(as_json.stdout)
    assert review["ok"] is False
    by_locator = {change["locator"]: change for change in review["records"]}
    for locator, case in _in_git(corpus).items():
        # Review's JSON, like its Markdown, shows control characters as <U+001B> (security.md).
        change = by_locator[escape_invisible(locator)]
        invalid = any(p["severity"] == "error" for p in change["problems"])
        assert invalid is (not case.valid), (locator, change["problems"])
    for output_format in ("markdown", "text"):
        done = cli("review", "--base", "main", "--format", output_format)
        assert done.returncode == 0, done.stderr
        for bad in ("\x1b", "\x07", "\u202e", "\u2066"):
            assert bad not in done.stdout, (output_format, bad)
        assert OUTSIDE_TITLE not in done.stdout
