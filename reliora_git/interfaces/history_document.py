"""The ``history --json`` document (and the MCP tool's), SPEC.md §16: the repository's
entries (operations/coldstart/) and this machine's past agent sessions (agents/past_sessions.py),
ranked together, each with its evidence and its draft in the shape ``record --json -`` takes;
and ``history --ask``, the same entries handed to the agent as a task."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reliora_git.operations.coldstart.nouns import Entry
    from reliora_git.storage.store import Store


def history_entries(store: Store, since: str | None, everything: bool, sessions: bool) -> Found:
    """The repository's entries and this machine's past sessions in it, ranked together."""
    import time

    from reliora_git.operations.coldstart.ranking import rank, session_entry
    from reliora_git.operations.coldstart.reading import lesson_entries

    report = lesson_entries(store, since=since, everything=everything)
    entries = report.entries
    if sessions and report.scanned:
        from reliora_git.gitrepo.git import toplevel
        from reliora_git.operations.agents.past_sessions import past_troubles

        top = toplevel(store.root)
        now = int(time.time())
        for trouble in past_troubles(top) if top is not None else []:
            entries.append(
                session_entry(
                    trouble.client,
                    trouble.session,
                    trouble.time,
                    now,
                    command=trouble.command,
                    error=trouble.error,
                    files=trouble.files,
                    fixed=trouble.fixed,
                    correction=trouble.correction,
                )
            )
        entries = rank(entries)
    return Found(report.since, report.scanned, entries)


@dataclass
class Found:
    since: str | None
    scanned: int
    entries: list[Entry]


def history_document(
    store: Store, since: str | None, everything: bool, limit: int, sessions: bool
) -> dict[str, Any]:
    """The ``history --json`` document (and the MCP tool's)."""
    found = history_entries(store, since, everything, sessions)
    return {
        "since": found.since,
        "scanned": found.scanned,
        "total": len(found.entries),
        "entries": [entry_json(entry) for entry in found.entries[:limit]],
    }


def history_ask(
    store: Store, since: str | None, everything: bool, count: int, sessions: bool
) -> tuple[str, dict[str, Any]]:
    """``history --ask``: the task for the agent (text), and its document: the best ``count``
    entries no record names yet, with their evidence and drafts."""
    from reliora_git.operations.coldstart.ask import ask_text

    found = history_entries(store, since, everything, sessions)
    open_entries = [entry for entry in found.entries if not entry.records]
    chosen = open_entries[:count]
    drafts = [entry_draft(entry) for entry in chosen]
    text = ask_text(chosen, drafts, len(open_entries))
    document = {
        "since": found.since,
        "scanned": found.scanned,
        "total": len(open_entries),
        "recorded": len(found.entries) - len(open_entries),
        "task": text,
        "entries": [entry_json(e, draft) for e, draft in zip(chosen, drafts, strict=True)],
    }
    return text, document


#: What a draft gives, in the order of a record (the names of ``record --json -``).
DRAFT_SHAPE = (
    "title",
    "task",
    "problems",
    "solution",
    "whyItWorked",
    "askedAs",
    "paths",
    "verification",
    "source",
)


def entry_draft(entry: Entry) -> dict[str, Any]:
    """The draft of an entry in the shape ``record --json -`` takes: one builder for
    ``history`` and ``record --from-commit`` (coldstart/drafts.py)."""
    from reliora_git.operations.coldstart.drafts import draft
    from reliora_git.search.jsonio import record_to_json

    data = record_to_json(draft(entry))
    return {name: cleaned(data[name]) for name in DRAFT_SHAPE if data.get(name)}


def entry_json(entry: Entry, draft: dict[str, Any] | None = None) -> dict[str, Any]:
    """An entry as ``history --json`` gives it: its draft and evidence cleaned as every text
    of the cold start is before it is shown (coldstart/ask.py ``shown``: secrets masked,
    invisible characters removed, wrapper tags and turn markers neutralised)."""
    evidence = entry.evidence.to_json() if entry.evidence is not None else None
    return {
        "source": entry.source,
        "sha": entry.sha or None,
        "commits": entry.commits,
        "pullRequest": entry.pull_request,
        "title": cleaned(entry.title),
        "why": cleaned([part.to_json() for part in entry.parts]),
        "score": round(entry.score, 3),
        "files": entry.files,
        "gone": entry.gone,
        "date": _date(entry.time),
        "recordedIn": entry.records,
        "evidence": cleaned(evidence),
        "draft": entry_draft(entry) if draft is None else draft,
    }


def cleaned(value: Any) -> Any:
    """``value`` (JSON) with each string cleaned as the cold start shows text."""
    from reliora_git.operations.coldstart.ask import shown

    if isinstance(value, str):
        return shown(value)
    if isinstance(value, list):
        return [cleaned(item) for item in value]
    if isinstance(value, dict):
        return {key: cleaned(item) for key, item in value.items()}
    return value


def _date(time: int) -> str:
    return dt.datetime.fromtimestamp(time, dt.timezone.utc).strftime("%Y-%m-%d")
