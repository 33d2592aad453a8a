"""``history``: where this repository already wrote its lessons down (a cold start)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from reliora_git.interfaces.commands.common import (
    JsonFlag,
    RepoOption,
    optional_value,
    reporting,
    store_or_repository,
)
from reliora_git.interfaces.output import Printer, print_json
from reliora_git.records.errors import RelioraError

DEFAULT_LIMIT = 20
FILES_SHOWN = 6
#: What ``--ask`` holds when given without a number (the default count, coldstart/ask.py).
ASK_DEFAULT = "(default)"


class HistoryCommand(TyperCommand):
    """``history``: ``--ask`` takes an optional number (``--ask``, ``--ask 5``).

    Typer gives an option an optional value in no other way: an ``--ask`` followed by no
    number is given :data:`ASK_DEFAULT` before click parses it.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return list(
            super().parse_args(ctx, optional_value(args, "--ask", ASK_DEFAULT, str.isdigit))
        )


def history(
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DATE",
            help="Only history after DATE (as git reads it: 2024-01-31, '6 months ago'); "
            "the default is the last two years.",
        ),
    ] = None,
    everything: Annotated[
        bool,
        typer.Option("--all", help="The whole history, and entries whose files are all gone."),
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="Show the best N entries (default 20).")
    ] = DEFAULT_LIMIT,
    no_sessions: Annotated[
        bool,
        typer.Option("--no-sessions", help="Leave out past agent sessions on this machine."),
    ] = False,
    ask: Annotated[
        str | None,
        typer.Option(
            "--ask",
            metavar="[N]",
            help="Print a task for your agent instead: the best N entries not yet recorded "
            "(default 10), each with its evidence, to write as lessons in its own words.",
        ),
    ] = None,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """List where this repository wrote lessons down, best first.

    Deterministic and offline: merged pull requests that fix something, changelog lines
    under fix, bug or security headings, fixes with evidence (a stated cause, a test
    changed, an issue named, a revert's reason, a fix of lines an earlier commit wrote),
    and this repository's past agent sessions on this machine (Claude Code, Codex,
    Gemini CLI; read-only, masked). Each entry's score is the sum of its parts, shown
    under "why". `--json` gives each entry's draft in the shape `record --json -` takes.

    With --ask, print a task for a coding agent instead: the best N entries no
    record names yet, each with its evidence (the messages without a squash
    merge's narration, the changelog sentence, the tests and what they assert,
    the fix as a diff, what later commits did to its lines) and a draft, and
    what to do: write each lesson in its own words with `reliora record --json
    -`, asked-as lines included, or skip it. Paste it to the agent, or let the
    agent run it (`--json` gives the same as a document, the task under "task").

    \b
    Examples:
      reliora history
      reliora history --since "1 year ago" --limit 10
      reliora history --json | jq -c '.entries[].draft'
      reliora history --ask 5      # a task for your agent: write these five lessons
    """
    with reporting(json_output):
        if since is not None and (not since.strip() or since.startswith("-")):
            raise RelioraError(f"--since takes a date, not {since[:40]!r}", code="invalid_option")
        from reliora_git.interfaces.history_document import history_ask, history_document

        store = store_or_repository(repo)
        if ask is not None:
            count = _ask_count(ask)
            text, asked = history_ask(store, since, everything, count, not no_sessions)
            if json_output:
                print_json(asked)
            else:
                Printer().line(text.rstrip("\n"))
            return
        document = history_document(store, since, everything, limit, not no_sessions)
        if json_output:
            print_json(document)
            return
        _print(document)


def _print(document: dict[str, Any]) -> None:
    printer = Printer()
    entries = document["entries"]
    window = f"since {document['since']}" if document["since"] else "the whole history"
    if not entries:
        printer.line(
            f"Nothing looks like a lesson ({document['scanned']} commits scanned, {window})."
        )
        return
    printer.line(
        f"{len(entries)} of {document['total']} places that look like lessons "
        f"({document['scanned']} commits scanned, {window}), best first:"
    )
    for entry in entries:
        printer.line("")
        where = entry["sha"][:12] if entry["sha"] else "session"
        number = f" #{entry['pullRequest']}" if entry["pullRequest"] else ""
        printer.line(
            f"{where}  {entry['date']}  {entry['source']}{number}  score {entry['score']:.2f}  "
            f"{shown_text(entry['title'])}"
        )
        why = "; ".join(
            f"{part['part']} {part['score']:+.2f}" + (f" ({part['text']})" if part["text"] else "")
            for part in entry["why"]
            if part["score"]
        )
        printer.line(f"  why: {shown_text(why)}")
        if entry["files"]:
            more = len(entry["files"]) - FILES_SHOWN
            files = ", ".join(map(shown_text, entry["files"][:FILES_SHOWN]))
            printer.line(f"  files: {files}" + (f" (+{more})" if more > 0 else ""))
        if entry["recordedIn"]:
            printer.line(f"  recorded in: {', '.join(map(shown_text, entry['recordedIn']))}")
        elif entry["sha"]:
            printer.line(f"  draft: reliora record --from-commit {entry['sha'][:12]}")
    hints = []
    if document["total"] > len(entries):
        hints.append(f"{document['total'] - len(entries)} more: --limit {document['total']}")
    if document["since"]:  # a window is in force: say how to see past it
        hints.append(f"history before {document['since']}: --since DATE, or --all")
    if hints:
        printer.line("")
        printer.line("; ".join(hints))


def _ask_count(given: str) -> int:
    from reliora_git.operations.coldstart.ask import DEFAULT_ASK

    if given == ASK_DEFAULT:
        return DEFAULT_ASK
    if not given.isdigit() or int(given) < 1:
        raise RelioraError(f"--ask takes a number of entries, not {given[:20]!r}",
                           code="invalid_option")  # fmt: skip
    return int(given)


def shown_text(text: str) -> str:
    """Text from commits on one line, its control and invisible characters written out
    (a subject can hold a terminal escape sequence)."""
    from reliora_git.records.text import escape_invisible

    return escape_invisible(" ".join(text.split()))


def register(app: typer.Typer) -> None:
    app.command(cls=HistoryCommand)(history)
