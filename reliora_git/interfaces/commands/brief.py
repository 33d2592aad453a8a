"""``reliora brief``: the lessons to read before working on a task (SPEC.md §14).

The Typer declaration; the body, shared with the Typer-free start path, is in
commands/briefing.py.
"""

from __future__ import annotations

from typing import Annotated

import typer

from reliora_git.interfaces.commands.briefing import run_brief
from reliora_git.interfaces.commands.common import JsonFlag, RepoOption


def brief(
    task: Annotated[
        str | None,
        typer.Argument(
            metavar="[TASK | -]",
            help="The task as written (a prompt, an issue body); '-' reads it from stdin.",
            show_default=False,
        ),
    ] = None,
    query: Annotated[
        str,
        typer.Option(
            "--query", "-q", help="Your own keywords for the task, ranked with it (weighted)."
        ),
    ] = "",
    files: Annotated[
        list[str] | None,
        typer.Option("--file", "-f", metavar="PATH", help="A file about to be edited (repeat)."),
    ] = None,
    changes: Annotated[
        bool,
        typer.Option(
            "--changes",
            help="Add the files changed on this branch (since --base) and staged/unstaged.",
        ),
    ] = False,
    base: Annotated[
        str | None,
        typer.Option(
            "--base", help="Branch the changes are measured from (default: the default branch)."
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            min=100,
            help="Most tokens of text (4 characters each; default 1000, brief_budget).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Most lessons (default 5).")
    ] = None,
    push: Annotated[
        bool,
        typer.Option(
            "--push",
            help="The quiet form agent hooks print: confident lessons in full, the rest a line.",
        ),
    ] = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="With --push: say why each of the best candidates not pushed in full was left "
            "out or made a line (rank, score against the floor and thresholds, shared words "
            'and their fields, the rule). Example: reliora brief --push --explain "the diff '
            'is truncated"',
        ),
    ] = False,
    why: Annotated[
        list[str] | None,
        typer.Option(
            "--why",
            metavar="ID",
            help="With --push: explain this lesson (repeat; implies --explain). Example: "
            'reliora brief --push "the diff is truncated" --why use-verbose-flag',
        ),
    ] = None,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """The lessons to read before a task or before changing files.

    The lessons for TASK, or for the files about to change: first the records
    about the named (--file) or changed (--changes) files, stale ones marked,
    then those relevant to the task text, each saying why
    it is there. A task the store knows nothing about gets nothing (exit 0).
    Whole lessons are left out, and named, to stay within --budget. --push
    gives the form agent hooks print: at most two lessons in full (those the
    ranking is confident about, or about the files), the others one line
    each, at most five; --json marks each lesson's "form". --explain (and
    --why ID) adds why lessons were left out or made a line ("explain" in
    --json).

    \b
    Examples:
      reliora brief "CI times out on the payments tests since the upgrade"
      reliora brief - --query "pytest timeout ci" < issue.md
      reliora brief --file src/payments/api.py --changes --json
      reliora brief --push "the nightly export job runs out of memory"
      reliora brief --push --explain "pytest diff output is truncated"
      reliora brief --push "pytest diff output is truncated" --why use-verbose-flag
    """
    run_brief(
        task,
        query=query,
        files=files,
        changes=changes,
        base=base,
        budget=budget,
        limit=limit,
        push=push,
        explain=explain,
        why=why,
        repo=repo,
        json_output=json_output,
    )


def register(app: typer.Typer) -> None:
    app.command()(brief)
