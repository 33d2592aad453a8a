"""``check`` without Typer: its body, and a fast start path for the whole store.

The same contract as ``show`` and ``list`` in commands/plain.py: ``__main__`` hands
a plain ``check`` of the whole store (``--json``, ``--all``, ``--repo`` at most)
here first, since starting Typer costs more than a whole-store check answered from
what the index keeps; anything else (files named, ``--staged``, ``--suggest``,
``--help``, an unknown or repeated option) returns None and goes to Typer, whose
``check`` runs the same :func:`run_check`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.interfaces.commands.plain import Options, parse_plain_argv
from reliora_git.interfaces.commands.reporting import reporting

if TYPE_CHECKING:
    from reliora_git.interfaces.output import Printer
    from reliora_git.operations.review.suggest import Unasked
    from reliora_git.storage.index import StoreIndex
    from reliora_git.storage.store import Store

#: The spellings the fast path takes (commands/check.py declares them for Typer too).
FAST_OPTIONS: Options = {
    "--repo": ("repo", True),
    "--json": ("json_output", False),
    "--all": ("show_all", False),
}


def fast_main(argv: list[str]) -> int | None:
    """Run a plain whole-store ``check`` and return its exit code, or None for Typer."""
    parsed = parse_plain_argv(argv[1:], FAST_OPTIONS, 0) if argv[:1] == ["check"] else None
    if parsed is None:
        return None
    try:
        return run_check(None, **parsed[1])
    except SystemExit as done:  # reporting() ends a failed command so
        return done.code if isinstance(done.code, int) else 1


def run_check(
    paths: list[str] | None,
    *,
    repo: Path | None = None,
    json_output: bool = False,
    show_all: bool = False,
    suggest: bool = False,
) -> int:
    """``check`` of the store (of ``paths`` closely); the exit code: 1 when a record is invalid."""
    from reliora_git.interfaces.output import Printer, emit
    from reliora_git.operations.review.check import check as check_store
    from reliora_git.storage.index import open_index
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        store = find_store(repo)
        with open_index(store) as index:  # one reading of the store for both
            report = check_store(store, paths, index)
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
    return 0 if report.ok else 1


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
