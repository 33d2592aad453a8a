"""The ``history --json`` document (and the MCP tool's), SPEC.md §16: the repository's
entries (lessons/history.py) and this machine's past agent sessions (agents/past_sessions.py),
ranked together, each with its draft in the shape ``record --json -`` takes."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reliora_git.operations.lessons.history import Entry
    from reliora_git.storage.store import Store


def history_document(
    store: Store, since: str | None, everything: bool, limit: int, sessions: bool
) -> dict[str, Any]:
    """The ``history --json`` document (and the MCP tool's)."""
    import time

    from reliora_git.operations.lessons.commits import lesson_entries
    from reliora_git.operations.lessons.history import rank, session_entry

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
    return {
        "since": report.since,
        "scanned": report.scanned,
        "total": len(entries),
        "entries": [entry_json(entry) for entry in entries[:limit]],
    }


def entry_json(entry: Entry) -> dict[str, Any]:
    from reliora_git.operations.lessons.drafts import draft
    from reliora_git.search.jsonio import record_to_json

    data = record_to_json(draft(entry))
    shape = ("title", "task", "problems", "solution", "paths", "verification", "source")
    return {
        "source": entry.source,
        "sha": entry.sha or None,
        "commits": entry.commits,
        "pullRequest": entry.pull_request,
        "title": entry.title,
        "why": [part.to_json() for part in entry.parts],
        "score": round(entry.score, 3),
        "files": entry.files,
        "gone": entry.gone,
        "date": _date(entry.time),
        "recordedIn": entry.records,
        "draft": {name: data[name] for name in shape if data.get(name)},
    }


def _date(time: int) -> str:
    return dt.datetime.fromtimestamp(time, dt.timezone.utc).strftime("%Y-%m-%d")
