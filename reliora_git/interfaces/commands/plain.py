"""``show``, ``list`` and ``feedback`` without Typer: their bodies, and a fast start path.

The same contract as ``search`` in commands/searching.py: an agent runs these in
its loop, and starting Typer (Click, its own parsing) costs more than the
command on a cached store. ``__main__`` hands the plain spellings here first;
anything else (``--help``, an unknown or repeated option, a missing argument)
returns None and goes to Typer, which parses and reports it exactly as before.
Both paths run the same ``run_*`` function. ``PLAIN_COMMANDS`` mirrors the
Typer declarations in commands/basic.py; a test compares them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reliora_git.interfaces.commands.reporting import reporting, wrote

#: Each spelling of an option → (parameter of the run function, takes a value).
Options = dict[str, tuple[str, bool]]
_COMMON: Options = {"--repo": ("repo", True), "--json": ("json_output", False)}


def run_show(record_id: str, *, repo: Path | None = None, json_output: bool = False) -> None:
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.lessons import reads
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        shown = reads.show(find_store(repo), record_id)
        printer = Printer()
        printer.skipped(shown.warnings)
        if json_output:
            print_json(shown.document())
        else:
            printer.record(
                shown.record,
                shown.feedback,
                shown.superseded_by,
                shown.freshness,
                shown.history,
                shown.events,
            )


def run_list(
    *, tag: str | None = None, repo: Path | None = None, json_output: bool = False
) -> None:
    from reliora_git.interfaces.output import Printer, print_json_lines
    from reliora_git.operations.lessons import reads
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        if json_output:  # each record's line as the index keeps it: nothing decoded
            lines = reads.list_lines(find_store(repo), tag)
            Printer().skipped(lines.skipped)
            print_json_lines(lines.lines)
            return
        listing = reads.list_records(find_store(repo), tag)
        printer = Printer()
        printer.skipped(listing.skipped)
        printer.listing(listing.records)


def run_feedback(
    record_id: str,
    outcome: str,
    *,
    note: str = "",
    repo: Path | None = None,
    json_output: bool = False,
) -> None:
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.lessons import writes
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        event = writes.feedback(find_store(repo), record_id, outcome, note)
        wrote(f"feedback {event.outcome} on {event.record} saved as {event.locator}")
        if json_output:
            print_json(
                {
                    "record": event.record,
                    "outcome": event.outcome,
                    "at": event.at,
                    "locator": event.locator,
                }
            )
        else:
            Printer().line(f"feedback {event.outcome} on {event.record} saved as {event.locator}")


@dataclass(frozen=True)
class PlainCommand:
    #: Names of the positional parameters, in order (all required).
    positional: tuple[str, ...]
    options: Options
    run: Callable[..., None]


PLAIN_COMMANDS: dict[str, PlainCommand] = {
    "show": PlainCommand(("record_id",), _COMMON, run_show),
    "list": PlainCommand((), {"--tag": ("tag", True), "-t": ("tag", True), **_COMMON}, run_list),
    "feedback": PlainCommand(
        ("record_id", "outcome"),
        {"--note": ("note", True), "-m": ("note", True), **_COMMON},
        run_feedback,
    ),
}


def parse_plain_argv(
    args: list[str], options: Options, positional: int
) -> tuple[list[str], dict[str, Any]] | None:
    """The positional arguments and option values of a plain argv, or None for Typer.

    Plain means: ``--opt value``, ``--opt=value`` and ``-o value`` for options that
    take a value (the value not empty and not starting with ``-``), bare flags, each
    option at most once, and exactly ``positional`` other arguments.
    """
    values: dict[str, Any] = {}
    found: list[str] = []
    pending = iter(args)
    for arg in pending:
        if not arg.startswith("-") or arg == "-":
            found.append(arg)
            continue
        name, equals, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        spec = options.get(name)
        if spec is None:
            return None  # --help, --, -n5, an unknown option…
        param, takes_value = spec
        if param in values:
            return None  # repeated: Typer decides which one wins
        if not takes_value:
            if equals:
                return None
            values[param] = True
            continue
        value = inline if equals else next(pending, None)
        if value is None or (not equals and value.startswith("-")) or value == "":
            return None
        values[param] = value
    if len(found) != positional:
        return None
    if "repo" in values:
        values["repo"] = Path(values["repo"])
    return found, values


def plain_limit(values: dict[str, Any]) -> bool:
    """Turn a plain ``--limit`` into an int in place; False when Typer must parse it.

    Typer accepts more spellings of an int ("+5", " 5", "5_0") and reports the rest.
    """
    if "limit" not in values:
        return True
    limit = values["limit"]
    if not (limit.isascii() and limit.isdigit()) or int(limit) < 1:
        return False
    values["limit"] = int(limit)
    return True


def exit_code(run: Callable[..., None], *args: Any, **kwargs: Any) -> int:
    """Run a command body and return its exit code (it ends through SystemExit on errors)."""
    try:
        run(*args, **kwargs)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1
    return 0


def fast_main(argv: list[str]) -> int | None:
    """Run a plain ``show``, ``list`` or ``feedback`` and return its exit code, or None."""
    command = PLAIN_COMMANDS.get(argv[0]) if argv else None
    if command is None:
        return None
    parsed = parse_plain_argv(argv[1:], command.options, len(command.positional))
    if parsed is None:
        return None
    positional, values = parsed
    return exit_code(command.run, *positional, **values)
