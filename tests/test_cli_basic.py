"""Each command through the installed `reliora` executable, against a real temporary store."""

from __future__ import annotations

from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli


def test_record_search_show_feedback_round_trip(store: Store, cli: Cli) -> None:
    saved = cli.json(
        "record",
        "--json",
        "-",
        input='{"title": "Flaky pytest timeouts on CI", "tags": ["pytest"],'
        ' "problems": ["pytest-timeout killed slow tests"], "solution": "raise the timeout"}',
    )
    assert saved["locator"] == f".reliora/experiences/{saved['id']}.md"
    assert saved["warnings"] == []

    found = cli.json("search", "pytest timeouts")
    assert [r["id"] for r in found["results"]] == [saved["id"]]

    done = cli("feedback", saved["id"][:8], "success", "--note", "it worked")
    assert done.returncode == 0, done.stderr
    shown = cli.json("show", saved["id"])
    assert shown["feedback"]["success"] == 1
    assert shown["feedbackEvents"][0]["note"] == "it worked"
    assert cli.json("search", "pytest")["results"][0]["feedback"]["adjustment"] == 1.0


def test_init_creates_the_store_from_the_template(repo: Path, cli: Cli) -> None:
    done = cli("init")
    assert done.returncode == 0, done.stderr
    assert (repo / ".reliora" / "README.md").is_file()
    assert (repo / ".reliora" / "config.toml").is_file()
    assert ".drafts/" in (repo / ".reliora" / ".gitignore").read_text()
    assert (repo / ".reliora" / "experiences").is_dir()
    again = cli("init")
    assert "already set up" in again.stdout


def test_version_is_fast_path_and_full_cli_agree(cli: Cli) -> None:
    assert cli("--version").stdout.strip().startswith("reliora ")
