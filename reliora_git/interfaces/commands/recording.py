"""``record --json -`` without Typer: reading the record, reporting the save, a fast start path.

An agent saves what it learned with ``record --json -`` (its JSON on stdin), once or
more per task; starting Typer costs more than a duplicate check on a cached store.
``__main__`` hands the plain spellings here first (``--json -`` with ``--repo``,
``--stage``, ``--allow-existing``, ``--all`` at most once each); anything else
returns None and goes to Typer (commands/record.py), which uses the same functions
below for the same work.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.interfaces.commands.plain import Options, exit_code, parse_plain_argv
from reliora_git.interfaces.commands.reporting import reporting, wrote
from reliora_git.records.errors import RelioraError

if TYPE_CHECKING:
    from reliora_git.operations.lessons.writes import Saved
    from reliora_git.records.model import Record

#: The options of ``record`` a plain ``--json -`` may come with (commands/record.py).
_OPTIONS: Options = {
    "--repo": ("repo", True),
    "--stage": ("stage", False),
    "--allow-existing": ("allow_existing", False),
    "--all": ("show_all", False),
}


def record_from_stdin(source: str) -> Record:
    """The record of ``--json -``: one JSON object read from stdin."""
    if source != "-":
        raise RelioraError(
            "--json takes '-' (read the JSON object from stdin)", code="invalid_option"
        )
    try:
        data = json.loads(sys.stdin.read())
    except json.JSONDecodeError as exc:
        raise RelioraError(
            f"stdin is not valid JSON: {exc.msg}",
            path="<stdin>",
            line=exc.lineno,
            code="invalid_input",
        ) from None
    from reliora_git.search.jsonio import record_from_json

    return record_from_json(data)


def report_saved(saved: Saved, as_json: bool, show_all: bool) -> None:
    """What ``record`` prints once a record is saved (and :func:`wrote` told): its warnings,
    then its id."""
    from reliora_git.interfaces.output import Printer, print_json

    for path_warning in saved.path_warnings:  # stderr: the --json document stays one
        Printer().warn(path_warning.message)
    for guard_warning in saved.guard_warnings:
        Printer().warn(guard_warning.message)
    if as_json:
        print_json(
            {
                "id": saved.record.id,
                "locator": saved.record.locator,
                "warnings": saved.warnings_json(),
            }
        )
        return
    printer = Printer()
    printer.line(f"saved {saved.record.id} as {saved.record.locator}")
    printer.similar(saved.warnings, saved.record.id, show_all)


def run_record_json(
    *,
    repo: Path | None = None,
    stage: bool = False,
    allow_existing: bool = False,
    show_all: bool = False,
) -> None:
    """``record --json -`` with no other source and no record flags."""
    from reliora_git.operations.lessons import writes
    from reliora_git.storage.store import find_store

    with reporting(True):
        store = find_store(repo)
        saved = writes.record(
            store, record_from_stdin("-"), stage=stage, allow_existing=allow_existing
        )
        wrote(f"saved {saved.record.id} as {saved.record.locator}")
        report_saved(saved, True, show_all)


def fast_main(argv: list[str]) -> int | None:
    """Run a plain ``record --json -`` and return its exit code, or None (Typer's turn)."""
    if argv[:1] != ["record"]:
        return None
    rest = list(argv[1:])
    for spelling in (["--json", "-"], ["--json=-"]):
        for at in range(len(rest) - len(spelling) + 1):
            if rest[at : at + len(spelling)] == spelling:
                del rest[at : at + len(spelling)]
                break
        else:
            continue
        break
    else:
        return None
    parsed = parse_plain_argv(rest, _OPTIONS, 0)
    if parsed is None:
        return None
    return exit_code(run_record_json, **parsed[1])
