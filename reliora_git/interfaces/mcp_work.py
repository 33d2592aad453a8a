"""The MCP tools' work, without the SDK's server: a store and arguments in, a JSON document out.

Each ``*_tool`` function answers with the same document as the CLI's ``--json`` (SPEC.md §7);
:func:`answer` turns it, or the project's error, into the tool's result. Split from
``mcp_server`` so the server module holds the protocol and this one the work.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.types import CallToolResult, TextContent

from reliora_git.records.errors import RelioraError, from_os_error

if TYPE_CHECKING:
    from reliora_git.storage.index import StoreIndex
    from reliora_git.storage.store import Store

Document = dict[str, Any]


@dataclass
class Reply:
    """A tool's JSON document, and notes for the model that are not part of it."""

    document: Document
    #: e.g. record files search had to skip (the CLI names them on stderr).
    notes: list[str] = field(default_factory=list)


def search_tool(
    store: Store,
    query: str,
    project_context: str | None,
    limit: int | None,
    min_level: str | None,
    include_retired: bool,
    index: StoreIndex | None = None,
) -> Reply:
    from reliora_git.operations.lessons import reads
    from reliora_git.storage.config import load_config

    result = reads.search(
        store,
        query,
        project_context=project_context or None,
        min_level=min_level,
        include_retired=include_retired,
        index=index,
    )
    shown = limit or load_config(store).search_limit
    notes = [f"not searched (unreadable record file): {error}" for error in result.skipped]
    truncated = result.query.truncation_note()
    if truncated:
        notes.append(truncated)
    document = result.document(shown, result.shown_freshness(store, shown))
    return Reply(document, notes)


def show_tool(store: Store, id_or_prefix: str, index: StoreIndex | None = None) -> Reply:
    from reliora_git.operations.lessons import reads

    return Reply(reads.show(store, id_or_prefix, index).document())


def record_tool(
    store: Store,
    fields: dict[str, Any],
    index: StoreIndex | None = None,
    allow_existing: bool = False,
) -> Reply:
    from reliora_git.operations.lessons import writes
    from reliora_git.search.jsonio import record_from_json

    given = {name: value for name, value in fields.items() if value is not None}
    saved = writes.record(
        store, record_from_json(given), index=index, allow_existing=allow_existing
    )
    return Reply(
        {
            "id": saved.record.id,
            "locator": saved.record.locator,
            "warnings": saved.warnings_json(),
        }
    )


def history_tool(repo: Path | None, since: str | None, limit: int, sessions: bool) -> Reply:
    """``history --ask``: the task (``task``), and the entries with their evidence and drafts."""
    from reliora_git.interfaces.history_document import history_ask
    from reliora_git.storage.store import find_store

    if since is not None and (not since.strip() or since.startswith("-")):
        raise RelioraError(f"since takes a date, not {since[:40]!r}", code="invalid_option")
    _, document = history_ask(find_store(repo), since, False, limit, sessions)
    return Reply(document)


def about_tool(
    store: Store, paths: list[str], index: StoreIndex | None = None, include_retired: bool = False
) -> Reply:
    from reliora_git.operations.lessons.about import about

    return Reply(about(store, paths, index, include_retired=include_retired).to_json())


def update_tool(
    store: Store,
    id_or_prefix: str,
    fields: dict[str, Any],
    index: StoreIndex | None = None,
    allow_existing: bool = False,
) -> Reply:
    from reliora_git.operations.lessons.lifecycle import changes_from_json, updated

    changes = changes_from_json(fields)
    result = updated(store, id_or_prefix, changes, index=index, allow_existing=allow_existing)
    saved = result.record
    reply: dict[str, Any] = {"id": saved.id, "locator": saved.locator, "updated": saved.updated}
    # Paths the work tree lacks, saved as given; guards saved although they match the code.
    warnings = [w.to_json() for w in result.path_warnings]
    warnings += [w.to_json() for w in result.guard_warnings]
    if warnings:
        reply["warnings"] = warnings
    return Reply(reply)


def retire_tool(
    store: Store, id_or_prefix: str, reason: str, index: StoreIndex | None = None
) -> Reply:
    """``reliora retire ID --reason TEXT``, answered as ``retire --json`` prints it."""
    from reliora_git.operations.lessons.lifecycle import retire

    saved = retire(store, id_or_prefix, reason, index=index)
    return Reply({"id": saved.id, "locator": saved.locator, "updated": saved.updated})


def feedback_tool(
    store: Store, id_or_prefix: str, outcome: str, note: str, index: StoreIndex | None = None
) -> Reply:
    from reliora_git.operations.lessons import writes

    event = writes.feedback(store, id_or_prefix, outcome, note, index)
    return Reply(
        {"record": event.record, "outcome": event.outcome, "at": event.at, "locator": event.locator}
    )


def check_tool(store: Store, paths: list[str] | None, index: StoreIndex | None = None) -> Reply:
    # The server's working folder is whatever the client chose: paths are taken
    # relative to the repository root, where the agent sees them in locators.
    absolute = [str(store.root / p) for p in paths] if paths else None
    from reliora_git.operations.review.check import check

    return Reply(check(store, absolute, index).to_json())


def brief_tool(
    store: Store,
    task: str,
    query: str,
    files: list[str] | None,
    index: StoreIndex | None = None,
    why: list[str] | None = None,
) -> Reply:
    from reliora_git.operations.brief.full import brief

    # The JSON is what the client receives: it is counted against the budget, not the text.
    result = brief(store, task, query=query, files=files or [], index=index)
    document = result.json_within_budget()
    if why is not None:  # why the push, for the same words, leaves these out or makes lines
        from reliora_git.operations.brief.explain import explain_document, explain_push
        from reliora_git.operations.brief.selection import Situation

        situation = Situation(task, query, tuple(files or ()))
        _, explained = explain_push(store, situation, why, index=index)
        document = {**document, "explain": explain_document(explained)}
    return Reply(document)


# --- results ---------------------------------------------------------------------------------


def answer(work: Callable[[], Reply]) -> CallToolResult:
    """Run one tool's work; the project's errors become an error result, never a crash."""
    try:
        reply = work()
    except RelioraError as error:
        return error_result(error)
    except OSError as error:
        return error_result(from_os_error(error))
    # The document comes first and alone in its block, so clients can parse it as is.
    notes = [TextContent(text=note) for note in reply.notes]
    return CallToolResult(
        content=[as_text(reply.document), *notes], structured_content=reply.document
    )


def error_result(error: RelioraError) -> CallToolResult:
    # The text leads with the sentence a model should read; the JSON follows for tools.
    text = f"{error} (error code: {error.code})\n{compact(error.to_json())}"
    return CallToolResult(
        content=[TextContent(text=text)], structured_content=error.to_json(), is_error=True
    )


def as_text(document: Document) -> TextContent:
    return TextContent(text=compact(document))


def compact(document: Document) -> str:
    """JSON without indentation or spaces: the model reads every character as tokens."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))
