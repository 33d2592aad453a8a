"""`show`, `list` and `feedback` start without Typer for plain argv, and answer exactly as Typer."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import typer

from reliora_git.interfaces.commands import plain
from tests.conftest import Cli, RecordMaker


@pytest.mark.parametrize("name", sorted(plain.PLAIN_COMMANDS))
def test_the_fast_path_knows_every_spelling_typer_declares(name: str) -> None:
    from reliora_git.interfaces.cli import app

    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    declared: dict[str, tuple[str, bool]] = {}
    positional = []
    for param in command.params:
        if not param.opts[0].startswith("-"):
            positional.append(param.name)
            continue
        for spelling in param.opts:
            declared[spelling] = (param.name, not param.is_flag)
    declared.pop("--help", None)
    assert declared == plain.PLAIN_COMMANDS[name].options
    assert tuple(positional) == plain.PLAIN_COMMANDS[name].positional


@pytest.mark.parametrize(
    ("args", "positional"),
    [
        (["--help"], 1),
        (["x", "--json", "--json"], 1),
        (["x", "--json=1"], 1),
        (["x", "--repo"], 1),
        (["x", "--repo", ""], 1),
        (["x", "--repo", "--json"], 1),
        ([], 1),
        (["x", "y"], 1),
        (["x", "--", "y"], 1),
        (["x", "--unknown"], 1),
    ],
)
def test_unusual_argv_goes_to_typer(args: list[str], positional: int) -> None:
    assert plain.parse_plain_argv(args, plain.PLAIN_COMMANDS["show"].options, positional) is None


def test_plain_argv_is_read() -> None:
    options = plain.PLAIN_COMMANDS["feedback"].options
    parsed = plain.parse_plain_argv(["r", "success", "-m", "it worked", "--repo=x"], options, 2)
    assert parsed == (["r", "success"], {"note": "it worked", "repo": Path("x")})


def test_both_paths_print_the_same(repo: Path, cli: Cli, write_record: RecordMaker) -> None:
    write_record("deploy-rollback", "Deploy rollback plan", tags=["deploy"])
    write_record("pytest-timeouts", "Flaky pytest timeouts", tags=["pytest"])
    slow = {"RELIORA_FAST_CLI": "0"}
    for args in (
        ["show", "deploy"],
        ["show", "deploy-rollback", "--json"],
        ["show", "nothing-like-it", "--json"],
        ["show", "nothing-like-it"],
        ["list"],
        ["list", "--tag", "pytest", "--json"],
        ["list", "-t", "deploy"],
    ):
        fast, typed = cli(*args), cli(*args, env=slow)
        assert (fast.returncode, fast.stdout, fast.stderr) == (
            typed.returncode,
            typed.stdout,
            typed.stderr,
        ), args
    # feedback writes an event each time: compare what the two paths report and write.
    fast = cli("feedback", "deploy-rollback", "success", "-m", "fine", "--json")
    typed = cli("feedback", "deploy-rollback", "success", "-m", "fine", "--json", env=slow)
    assert fast.returncode == typed.returncode == 0, fast.stderr + typed.stderr
    first, second = json.loads(fast.stdout), json.loads(typed.stdout)
    assert first.keys() == second.keys()
    assert (first["record"], first["outcome"]) == (second["record"], second["outcome"])
    bad = cli("feedback", "deploy-rollback", "great")
    assert (bad.returncode, bad.stderr) == (
        cli("feedback", "deploy-rollback", "great", env=slow).returncode,
        cli("feedback", "deploy-rollback", "great", env=slow).stderr,
    )
    shown = cli.json("show", "deploy-rollback")
    assert shown["feedback"]["success"] == 2


def test_record_json_knows_only_spellings_typer_declares() -> None:
    from reliora_git.interfaces.cli import app
    from reliora_git.interfaces.commands import recording

    command = typer.main.get_command(app).commands["record"]  # type: ignore[attr-defined]
    declared = {
        spelling: (param.name, not param.is_flag)
        for param in command.params
        for spelling in param.opts
    }
    for spelling, (name, takes_value) in recording._OPTIONS.items():
        assert declared[spelling] == (name, takes_value), spelling


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "--json"],
        ["record", "--help", "--json", "-"],
        ["record", "--json", "-", "--json", "-"],
        ["record", "--json", "-", "--title", "x"],
        ["record", "--json", "-", "--repo"],
        ["record", "--from-file", "x.md"],
        ["record", "--json", "x"],
    ],
)
def test_record_argv_the_fast_path_leaves_to_typer(argv: list[str]) -> None:
    from reliora_git.interfaces.commands import recording

    assert recording.fast_main(argv) is None


SUFFIX = re.compile(r"-[0-9a-f]{6}\b")


def test_record_json_prints_the_same_on_both_paths(
    repo: Path, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("deploy-rollback", "Deploy rollback plan", tags=["deploy"])
    slow = {"RELIORA_FAST_CLI": "0"}
    lesson = {
        "title": "Deploy rollback plan for the nightly job",
        "tags": ["deploy"],
        "problems": ["the nightly deploy failed half way"],
        "solution": "roll back with the saved plan",
    }
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    for args, given in (
        (["record", "--json", "-"], json.dumps(lesson)),  # a duplicate warning: the one above
        (["record", "--json=-", "--all"], json.dumps({**lesson, "title": "Other title"})),
        (["record", "--json", "-"], "{not json"),
        (["record", "--json", "-"], json.dumps({"title": "no solution"})),
        (["record", "--json", "-"], json.dumps({**lesson, "solution": f"use {token}"})),
        (["record", "--repo", str(repo), "--json", "-", "--stage"], json.dumps(lesson)),
    ):
        fast = cli(*args, input=given)
        if fast.returncode == 0:  # taken back, so that the other path sees the same store
            written = repo / json.loads(fast.stdout)["locator"]
            if "--stage" in args:
                assert written.relative_to(repo).as_posix() in staged_files(repo)
                subprocess.run(["git", "rm", "-q", "--cached", str(written)], cwd=repo, check=True)
            written.unlink()
        typed = cli(*args, input=given, env=slow)
        assert fast.returncode == typed.returncode, (args, fast.stderr, typed.stderr)
        assert SUFFIX.sub("-ID", fast.stdout) == SUFFIX.sub("-ID", typed.stdout), args
        assert SUFFIX.sub("-ID", fast.stderr) == SUFFIX.sub("-ID", typed.stderr), args
    assert len(staged_files(repo)) == 1  # the last one, by Typer's path


def staged_files(repo: Path) -> list[str]:
    done = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=repo, capture_output=True, text=True
    )
    return done.stdout.split()
