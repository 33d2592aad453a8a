"""``history``: the commits of this repository that look like lessons (a cold start)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliora_git.interfaces.commands.common import JsonFlag, RepoOption, reporting
from reliora_git.interfaces.output import Printer, print_json
from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import Store, find_store

DEFAULT_LIMIT = 20
FILES_SHOWN = 6


def history(
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DATE",
            help="Only commits after DATE (as git reads it: 2024-01-31, '6 months ago').",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="Show at most N commits (newest first).")
    ] = DEFAULT_LIMIT,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """List past commits that look like lessons worth recording.

    Deterministic and offline, read from git history: reverts (with the commit they
    revert), fixes of a file another commit changed within days, and messages that
    explain a cause ("because", "regression", "workaround", "root cause"…). Merges,
    bots, version bumps, typo and lint fixes and docs-only changes are left out. Each
    commit says why it is listed, its files, and the records that already name it;
    `reliora record --from-commit SHA` drafts a record from it.

    \b
    Examples:
      reliora history --since "1 year ago" --limit 10
      reliora history --json | jq -r '.commits[].commit'
    """
    from reliora_git.operations.lessons.commits import date_of, lesson_commits

    with reporting(json_output):
        if since is not None and (not since.strip() or since.startswith("-")):
            raise RelioraError(f"--since takes a date, not {since[:40]!r}", code="invalid_option")
        report = lesson_commits(_store_or_repository(repo), since=since)
        shown = report.entries[:limit]
        if json_output:
            print_json(
                {
                    "since": since,
                    "scanned": report.scanned,
                    "total": len(report.entries),
                    "commits": [entry.to_json() for entry in shown],
                }
            )
            return
        printer = Printer()
        if not report.entries:
            printer.line(f"No commit looks like a lesson ({report.scanned} scanned).")
            return
        printer.line(
            f"{len(shown)} of {len(report.entries)} commits that look like lessons "
            f"({report.scanned} scanned), newest first:"
        )
        for entry in shown:
            commit = entry.commit
            printer.line("")
            printer.line(f"{commit.short}  {date_of(commit.time)}  {shown_text(commit.subject)}")
            for reason in entry.reasons:
                printer.line(f"  why: {shown_text(reason.text)}")
            if commit.files:
                more = len(commit.files) - FILES_SHOWN
                files = ", ".join(map(shown_text, commit.files[:FILES_SHOWN]))
                printer.line(f"  files: {files}" + (f" (+{more})" if more > 0 else ""))
            if entry.records:
                printer.line(f"  recorded in: {', '.join(map(shown_text, entry.records))}")
            else:
                printer.line(f"  draft: reliora record --from-commit {commit.short}")
        if len(report.entries) > len(shown):
            printer.line("")
            printer.line(f"{len(report.entries) - len(shown)} more: --limit {len(report.entries)}")


def shown_text(text: str) -> str:
    """Text from commits on one line, its control and invisible characters written out
    (a subject can hold a terminal escape sequence)."""
    from reliora_git.records.text import escape_invisible

    return escape_invisible(" ".join(text.split()))


def _store_or_repository(repo: Path | None) -> Store:
    """The store; without one (before `reliora init`), the repository around the folder."""
    try:
        return find_store(repo)
    except RelioraError as error:
        if error.code != "no_store" or repo is not None:
            raise
        from reliora_git.gitrepo.git import toplevel

        top = toplevel(Path.cwd())
        if top is None:
            raise
        return Store(top)


def register(app: typer.Typer) -> None:
    app.command()(history)
