"""With --json, every error is one `{"error": …}` document on stdout and exit code 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker


def json_error(done: subprocess.CompletedProcess[str], code: str) -> dict[str, Any]:
    """The error object of ``done``, after checking the shape SPEC §7 promises."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    document = json.loads(done.stdout)  # one document, nothing else on stdout
    assert set(document) == {"error"}
    error: dict[str, Any] = document["error"]
    assert set(error) == {"code", "message", "path", "line"}
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    assert "Traceback" not in done.stderr
    return error


@pytest.mark.parametrize(
    "args",
    [
        ["search", "pytest", "--json"],
        ["show", "some-id", "--json"],
        ["list", "--json"],
        ["feedback", "some-id", "success", "--json"],
        ["check", "--json"],
        ["record", "--json", "-"],
    ],
)
def test_no_store_found(repo: Path, cli: Cli, args: list[str]) -> None:
    error = json_error(cli(*args, input="{}"), "no_store")
    assert "reliora init" in error["message"]


def test_no_store_at_the_named_repo(repo: Path, cli: Cli) -> None:
    error = json_error(cli("search", "pytest", "--repo", str(repo), "--json"), "no_store")
    assert error["path"] == str(repo.resolve())


@pytest.mark.parametrize("command", ["show", "feedback"])
def test_unknown_id(store: Store, cli: Cli, write_record: RecordMaker, command: str) -> None:
    write_record("flaky-pytest", "Flaky pytest")
    args = (
        ["show", "nothing-like-it"]
        if command == "show"
        else ["feedback", "nothing-like-it", "success"]
    )
    error = json_error(cli(*args, "--json"), "unknown_id")
    assert "nothing-like-it" in error["message"]


def test_ambiguous_prefix(store: Store, cli: Cli, write_record: RecordMaker) -> None:
    write_record("flaky-pytest-one", "Flaky pytest one")
    write_record("flaky-pytest-two", "Flaky pytest two")
    error = json_error(cli("show", "flaky", "--json"), "ambiguous_id")
    assert "flaky-pytest-one" in error["message"]
    assert "flaky-pytest-two" in error["message"]


def test_invalid_outcome(store: Store, cli: Cli, write_record: RecordMaker) -> None:
    write_record("flaky-pytest", "Flaky pytest")
    error = json_error(cli("feedback", "flaky-pytest", "great", "--json"), "invalid_outcome")
    assert "success" in error["message"]
    assert not any(store.feedback.rglob("*.md"))


def test_query_with_only_stop_words(store: Store, cli: Cli) -> None:
    error = json_error(cli("search", "the and of", "--json"), "empty_query")
    assert "no searchable words" in error["message"]


def test_invalid_json_on_stdin_names_the_line(store: Store, cli: Cli) -> None:
    error = json_error(cli("record", "--json", "-", input='{\n"title": '), "invalid_input")
    assert error["path"] == "<stdin>"
    assert error["line"] == 2


def test_file_system_errors_are_reported_not_raised(repo: Path, cli: Cli) -> None:
    blocker = repo / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    error = json_error(cli("init", "--repo", str(blocker / "sub"), "--json"), "os_error")
    assert error["path"] is not None and "a-file" in error["path"]


@pytest.mark.parametrize(
    "args",
    [
        ["feedback", "some-id", "--json"],  # missing argument
        ["search", "pytest", "--limit", "0", "--json"],  # bad option value
        ["list", "--no-such-option", "--json"],
        ["record", "--json"],  # --json - without its '-'
    ],
)
def test_usage_errors_are_json_too(store: Store, cli: Cli, args: list[str]) -> None:
    error = json_error(cli(*args), "usage_error")
    assert "Usage: reliora" in error["message"]


def test_usage_errors_without_json_stay_click_style(store: Store, cli: Cli) -> None:
    done = cli("feedback", "some-id")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Missing argument" in done.stderr


def test_errors_without_json_are_one_line_on_stderr(repo: Path, cli: Cli) -> None:
    done = cli("search", "pytest")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("reliora: error: no .reliora/ store found")
    assert len(done.stderr.strip().splitlines()) == 1
