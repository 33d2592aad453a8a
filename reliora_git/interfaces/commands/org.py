"""``reliora org sync | search | status``: one search across many repositories (SPEC.md §13)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from reliora_git.interfaces.commands.common import JsonFlag, reporting
from reliora_git.interfaces.output import Printer, one_line, print_json

org_app = typer.Typer(
    name="org",
    no_args_is_help=True,
    help=(
        "Search many repositories at once (PostgreSQL)."
        "\n\nThe records of many repositories, kept in PostgreSQL (docs/org.md)."
        "\n\n\b\nExample:\n  reliora org sync --db postgresql:///reliora ~/src/app ~/src/web"
        '\n  reliora org search "flaky pytest timeouts" --db postgresql:///reliora'
    ),
    rich_markup_mode=None,
)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="URL",
        help="PostgreSQL URL, e.g. postgresql://user@host/reliora (default: env RELIORA_DB_URL).",
        show_default=False,
    ),
]

if TYPE_CHECKING:
    from reliora_git.org.sync import Synced


@org_app.command()
def sync(
    repos: Annotated[
        list[str],
        typer.Argument(
            metavar="REPO…",
            help="A clone or bare mirror: PATH, or NAME=PATH (default name: the folder's).",
        ),
    ],
    ref: Annotated[
        str | None,
        typer.Option(help="What to read (default: the default branch).", show_default=False),
    ] = None,
    wait: Annotated[
        int,
        typer.Option(
            "--wait",
            metavar="SECONDS",
            min=0,
            help="How long to wait for another sync of the same repository (or a lock it "
            "holds) before reporting it busy and going on.",
        ),
    ] = 600,
    db: DbOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Bring the database up to each repository's store.

    Each store as it is at a ref, read from git objects (no checkout).

    New, changed and removed records and feedback are applied in one transaction
    per repository (an interrupted sync leaves the state before it); files whose
    blob is already in the database are not read again. Invalid records are
    reported and left out; the valid ones sync. A repository that cannot be read
    is reported and the others still sync (exit 2 at the end); so is one that
    another sync keeps busy for longer than --wait.

    \b
    Examples:
      reliora org sync --db postgresql:///reliora ~/src/payments ~/src/web
      RELIORA_DB_URL=postgresql:///reliora reliora org sync billing=/srv/mirrors/b.git
    """
    from reliora_git.org.db import database_url
    from reliora_git.org.sync import Waiting, sync_all

    with reporting(json_output):
        url = database_url(db)
        printer = Printer()

        def said(report: Synced) -> None:
            for path, line, message in report.skipped:
                where = f"{path}:{line}" if line is not None else path
                print(
                    f"reliora: warning: {report.name}: {one_line(where)}: {one_line(message)}",
                    file=sys.stderr,
                )
            for warning in report.warnings:  # a newer local branch, a second name
                print(
                    f"reliora: warning: {one_line(report.name)}: {one_line(warning)}",
                    file=sys.stderr,
                )
            if not json_output:
                printer.line(_synced_line(report))

        def busy(name: str, seconds: int) -> None:
            print(
                f"reliora: {one_line(name)} is busy: another sync is writing it; "
                f"waiting up to {seconds} s",
                file=sys.stderr,
                flush=True,
            )

        run = sync_all(url, repos, ref, said, Waiting(wait, busy))
        for given, error in run.failed:
            print(f"reliora: error: {one_line(given)}: {one_line(error.message)}", file=sys.stderr)
        if json_output:
            print_json(run.to_json())
    if run.failed:
        raise SystemExit(2)


def _synced_line(report: Synced) -> str:
    where = f"{one_line(report.name)} at {report.commit[:12]} ({one_line(report.ref)})"
    counts = f"{report.records} records, {report.events} feedback events"
    if report.up_to_date:
        return f"{where}: up to date, {counts}"
    changes = f"{report.added} added, {report.changed} changed, {report.removed} removed"
    skipped = f", {len(report.skipped)} skipped" if report.skipped else ""
    return f"{where}: {counts} ({changes}{skipped})"


@org_app.command()
def search(
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="What you are about to do, in your own words.")
    ],
    repo: Annotated[
        list[str] | None,
        typer.Option("--repo", metavar="NAME", help="Only this repository (repeat for more)."),
    ] = None,
    project_context: Annotated[
        str | None,
        typer.Option(
            "--project-context",
            "-p",
            help="Keep records whose project context, tags or applicability match.",
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Results to show.")] = 10,
    min_level: Annotated[
        str | None, typer.Option(help="Lowest match level: strong, moderate or weak.")
    ] = None,
    include_retired: Annotated[
        bool, typer.Option(help="Also show retired and superseded records.")
    ] = False,
    db: DbOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Search every synced repository, ranked as `search` is.

    Scored exactly as `reliora search`.

    The same document as `search --json`, each result with its `repo` and the
    `commit` it was synced at; the same store gives the same ids, scores and
    breakdowns locally and here.

    \b
    Examples:
      reliora org search "flaky pytest timeouts" --db postgresql:///reliora
      reliora org search "docker layer cache" --repo payments --json
    """
    from reliora_git.interfaces.commands.org_search import run_org_search

    run_org_search(
        query,
        repos=repo or [],
        project_context=project_context,
        limit=limit,
        min_level=min_level,
        include_retired=include_retired,
        db=db,
        json_output=json_output,
    )


@org_app.command()
def status(db: DbOption = None, json_output: JsonFlag = False) -> None:
    """The synced repositories, their commits and counts.

    The commit each was synced at, and its numbers of records and feedback.

    \b
    Example:
      reliora org status --db postgresql:///reliora
    """
    from reliora_git.org.db import opened, repositories

    with reporting(json_output):
        with opened(db) as conn:
            repos = repositories(conn)
        if json_output:
            print_json({"repos": repos})
            return
        printer = Printer()
        if not repos:
            printer.line("No repositories synced yet: run `reliora org sync REPO`.")
        for found in repos:
            skipped = f", {found['skipped']} skipped" if found["skipped"] else ""
            printer.line(
                f"{one_line(found['repo'])}  {found['commit'][:12]}  {one_line(found['ref'])}  "
                f"{found['records']} records, {found['feedbackEvents']} feedback events"
                f"{skipped}  (synced {found['syncedAt']})"
            )


def register(app: typer.Typer) -> None:
    app.add_typer(org_app, name="org")
