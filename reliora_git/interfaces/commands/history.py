"""``history``: where this repository already wrote its lessons down (a cold start)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from reliora_git.interfaces.commands.common import (
    JsonFlag,
    RepoOption,
    reporting,
    store_or_repository,
)
from reliora_git.interfaces.output import Printer, print_json
from reliora_git.records.errors import RelioraError

DEFAULT_LIMIT = 20
FILES_SHOWN = 6


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

    \b
    Examples:
      reliora history
      reliora history --since "1 year ago" --limit 10
      reliora history --json | jq -c '.entries[].draft'
    """
    with reporting(json_output):
        if since is not None and (not since.strip() or since.startswith("-")):
            raise RelioraError(f"--since takes a date, not {since[:40]!r}", code="invalid_option")
        from reliora_git.interfaces.history_document import history_document

        store = store_or_repository(repo)
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
    if document["total"] > len(entries):
        printer.line("")
        printer.line(f"{document['total'] - len(entries)} more: --limit {document['total']}")


def shown_text(text: str) -> str:
    """Text from commits on one line, its control and invisible characters written out
    (a subject can hold a terminal escape sequence)."""
    from reliora_git.records.text import escape_invisible

    return escape_invisible(" ".join(text.split()))


def register(app: typer.Typer) -> None:
    app.command()(history)
