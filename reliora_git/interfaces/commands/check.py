"""``check``: validate records and report duplicates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from reliora_git.interfaces.commands.check_staged import run_check_staged
from reliora_git.interfaces.commands.common import AllFlag, JsonFlag, RepoOption, reporting
from reliora_git.storage.store import find_store

if TYPE_CHECKING:
    from reliora_git.interfaces.output import Printer
    from reliora_git.operations.review.suggest import Unasked
    from reliora_git.storage.index import StoreIndex
    from reliora_git.storage.store import Store


def check(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="PATHS",
            help="Record files to check closely (default: the whole store).",
            show_default=False,
        ),
    ] = None,
    staged: Annotated[
        bool,
        typer.Option(
            "--staged",
            help="Check the records staged for the next commit, as the git index holds them "
            "(what the pre-commit hook runs).",
        ),
    ] = False,
    suggest: Annotated[
        bool,
        typer.Option(
            "--suggest",
            help="Also name the lessons without asked-as lines (how people would ask for "
            "them), most pushed to agents first.",
        ),
    ] = False,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
    show_all: AllFlag = False,
) -> None:
    """Validate records; exit 1 when any is invalid.

    Similar records are warnings only. Every record is validated and checked
    for clashing ids and exact duplicates; the files named in PATHS are also
    searched for similar experiences.

    With --staged, the records added, copied, modified or renamed in the git
    index are checked instead (their staged text, not the working tree's), and
    searched for similar experiences among every staged record. Exit 1 for an
    unresolved conflict, or an invalid record when block_on_invalid is true.

    Likely duplicates are shown in full, with the words they share; records that
    are only related are named on one line (--all shows them in full). A record
    that the last commit already holds is warned about likely duplicates only.

    \b
    Examples:
      reliora check .reliora/experiences/flaky-pytest-timeouts-3f9a1c.md
      reliora check --staged
      reliora check --all .reliora/experiences/new-record-1a2b3c.md
      reliora check --suggest
    """
    from reliora_git.interfaces.output import Printer, emit

    if staged:
        code = run_check_staged(paths, repo, json_output, show_all)
        if code:
            raise typer.Exit(code)
        return
    from reliora_git.operations.review.check import check as check_store  # not for the others
    from reliora_git.storage.index import open_index

    with reporting(json_output):
        store = find_store(repo)
        with open_index(store) as index:  # one reading of the store for both
            report = check_store(store, paths or None, index)
            unasked = _unasked(store, index) if suggest else None
        if json_output:
            extra = None
            if unasked is not None:
                extra = {"withoutAskedAs": [lesson.to_json() for lesson in unasked]}
            emit(report.json_text(extra))
        else:
            printer = Printer()
            printer.check(report, show_all)
            if unasked is not None:
                _print_unasked(printer, unasked)
    if not report.ok:
        raise typer.Exit(1)


#: Lessons ``check --suggest`` names by id in text (the JSON lists them all).
SUGGESTED_SHOWN = 20


def _unasked(store: Store, index: StoreIndex) -> list[Unasked]:
    """The lessons without asked-as lines, most pushed first (this clone's session memory)."""
    from reliora_git.operations.agents import hook as agent_hook
    from reliora_git.operations.agents.ledger import push_counts
    from reliora_git.operations.review.suggest import without_asked_as

    state = agent_hook.git_places(store.root).state
    return without_asked_as(index, push_counts(state))


def _print_unasked(printer: Printer, unasked: list[Unasked]) -> None:
    if not unasked:
        printer.line("every active lesson has asked-as lines")
        return
    printer.line(
        f"{len(unasked)} lesson(s) without asked-as lines: a lesson is found only through "
        "words it shares with the task; add 2-5 ways someone would ask for a task where it "
        'helps, in their words (`reliora update ID --add-asked "…"`), most pushed first:'
    )
    for lesson in unasked[:SUGGESTED_SHOWN]:
        pushed = f"pushed {lesson.pushes}×" if lesson.pushes else "never pushed"
        printer.line(f"  {lesson.id}  ({pushed})  {lesson.title}")
    if len(unasked) > SUGGESTED_SHOWN:
        printer.line(f"  … and {len(unasked) - SUGGESTED_SHOWN} more (--json lists them all)")


def register(app: typer.Typer) -> None:
    app.command()(check)
