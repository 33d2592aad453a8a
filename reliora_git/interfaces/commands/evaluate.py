"""``reliora eval``: test what agents are told (the cases of .reliora/eval.toml, every
lesson's reach from its own task)."""

from __future__ import annotations

from typing import Annotated

import typer

from reliora_git.interfaces.commands.common import JsonFlag, RepoOption, reporting


def evaluate(
    fail_under: Annotated[
        float | None,
        typer.Option(
            "--fail-under",
            metavar="R",
            help="Fail (exit 1) when R@5, the share of lessons found in the top 5 from their "
            "own task, is under R (0 to 1).",
            show_default=False,
        ),
    ] = None,
    cases_only: Annotated[
        bool,
        typer.Option(
            "--cases",
            help="Run only the cases of .reliora/eval.toml, not every lesson's reach (seconds, "
            'for CI on every commit; JSON "reach" is null). Example: reliora eval --cases',
        ),
    ] = False,
    json_output: JsonFlag = False,
    repo: RepoOption = None,
) -> None:
    """Test what agents are told: eval cases, each lesson's reach.

    Each [[case]] of .reliora/eval.toml (prompt, files the agent reads, expect,
    full, never) is pushed exactly as the agent hooks push it in a fresh session;
    it fails when an expected lesson is not pushed (or only as a line with
    full = true) or a never lesson is. Then every active lesson is ranked from
    its own task (else its first problem): R@1, R@5, MRR, the lessons its own
    task does not bring into the push (no prompt is likely to), and those that
    come first for many other lessons' tasks. A failed case says why each
    expected lesson was not pushed (or only as a line): the push's own rule.
    --cases runs the cases alone, without the reach.

    Exit status 1 when a case fails or R@5 is under --fail-under; 2 for a bad
    eval.toml (file and line named) or an id that names no record.

    \b
    Examples:
      reliora eval
      reliora eval --fail-under 0.8 --json
      reliora eval --cases
    """
    from reliora_git.interfaces.eval_output import to_text
    from reliora_git.interfaces.output import emit, print_json
    from reliora_git.operations.evaluation.run import run_eval
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        report = run_eval(find_store(repo), fail_under, cases_only=cases_only)
        if json_output:
            print_json(report.to_json())
        else:
            emit(to_text(report))
    if not report.passed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("eval")(evaluate)
