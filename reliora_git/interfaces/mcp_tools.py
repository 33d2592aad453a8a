"""The MCP server's tools: their arguments, as the client's model reads them, and their work.

Each tool's parameters are its arguments, named as the JSON documents name fields (SPEC.md
§7, as ``reliora record --json -`` reads them): camelCase; the server accepts the snake_case
spelling too and refuses anything else (mcp_server._Server).

What the model reads of a tool (its description and input schema) is sent with every
request of a session, so it is kept lean: a description of a sentence or two
(mcp_help.py), arguments with a few words where their name does not say it all, and the
arguments an agent seldom needs (guards, supersedes…) accepted but not listed
(:data:`UNLISTED`). By default the server offers the tools of an agent's loop
(mcp_help.LEAN_TOOLS); ``reliora mcp --all-tools`` adds update, history, search, about,
retire and check.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from reliora_git.interfaces import mcp_help
from reliora_git.interfaces.mcp_work import (
    Reply,
    about_tool,
    answer,
    brief_tool,
    check_tool,
    feedback_tool,
    history_tool,
    record_tool,
    retire_tool,
    search_tool,
    show_tool,
    update_tool,
)

if TYPE_CHECKING:
    from reliora_git.storage.index import LiveIndex, StoreIndex
    from reliora_git.storage.store import Store


class Host(Protocol):
    """What the tools need of the server (mcp_server._Server): a way to add a tool, and the
    store index it keeps between calls. A protocol, so this module does not import it."""

    def tool(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]: ...

    def live_index(self) -> LiveIndex: ...


class Runner(Protocol):
    """Runs a tool's work on a worker thread, stoppable (mcp_server.Calls)."""

    async def run(self, work: Callable[[], CallToolResult]) -> CallToolResult: ...


# Literal types so the input schemas list the allowed values (tests keep them equal to model's).
Level = Literal["strong", "moderate", "weak"]
Outcome = Literal["success", "partial", "failure", "not-applicable", "outdated"]
Confidence = Literal["low", "medium", "high"]

# Hints for clients that ask before running tools: reading is safe, writing only adds files.
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
#: Rewrites one file in place (nothing else is lost: the old text is in git).
CHANGES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)

#: Arguments a tool takes but does not list in its schema: an agent seldom needs them, and
#: every listed argument is paid for on every request (docs/agents.md names them).
UNLISTED: dict[str, frozenset[str]] = {
    "record": frozenset(
        {
            "applicability",
            "verification",
            "tags",
            "projectContext",
            "supersedes",
            "guards",
            "allowExisting",
        }
    ),
    "update": frozenset(
        {
            "title",
            "task",
            "whyItWorked",
            "applicability",
            "confidence",
            "tags",
            "paths",
            "projectContext",
            "verification",
            "addTags",
            "addPaths",
            "addSupersedes",
            "addGuards",
            "guards",
            "allowExisting",
        }
    ),
    "history": frozenset({"since", "sessions"}),
    "brief": frozenset({"why"}),
}

Ids = list[str] | None
Texts = list[str] | None


def register(server: Host, repo: Path | None, running: Runner, all_tools: bool) -> None:
    """Add the tools to ``server``: the lean set, or every tool with ``all_tools``."""

    def indexed(work: Callable[[Store, StoreIndex], Reply]) -> Callable[[], Reply]:
        """``work`` on the store and its index, kept in memory between calls."""
        live = server.live_index()

        def run() -> Reply:
            from reliora_git.storage.store import find_store

            found = find_store(repo)
            with live.open(found) as index:
                return work(found, index)

        return run

    @server.tool(name="brief", description=mcp_help.BRIEF, annotations=READS)
    async def brief(
        task: Annotated[str, Field(description="The task as given.")] = "",
        query: Annotated[str, Field(description="Your keywords for it.")] = "",
        files: Annotated[Texts, Field(description="Repository-relative paths.")] = None,
        why: Ids = None,
    ) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: brief_tool(s, task, query, files, index, why)))
        )

    @server.tool(name="show", description=mcp_help.SHOW, annotations=READS)
    async def show(id: str) -> CallToolResult:
        return await running.run(lambda: answer(indexed(lambda s, index: show_tool(s, id, index))))

    @server.tool(name="record", description=mcp_help.RECORD, annotations=ADDS)
    async def record(
        title: str,
        solution: str,
        task: str = "",
        problems: Texts = None,
        whyItWorked: str = "",
        failedAttempts: Texts = None,
        warnings: Texts = None,
        applicability: str = "",
        verification: str = "",
        askedAs: Texts = None,
        paths: Annotated[Texts, Field(description="Code paths it is about.")] = None,
        confidence: Confidence | None = None,
        tags: Texts = None,
        projectContext: str = "",
        supersedes: Ids = None,
        guards: list[dict[str, Any]] | None = None,
        allowExisting: bool = False,
    ) -> CallToolResult:
        fields = {
            "title": title,
            "task": task,
            "problems": problems,
            "solution": solution,
            "whyItWorked": whyItWorked,
            "failedAttempts": failedAttempts,
            "warnings": warnings,
            "applicability": applicability,
            "verification": verification,
            "askedAs": askedAs,
            "projectContext": projectContext,
            "tags": tags,
            "confidence": confidence,
            "supersedes": supersedes,
            "paths": paths,
            "guards": guards,
        }
        return await running.run(
            lambda: answer(indexed(lambda s, index: record_tool(s, fields, index, allowExisting)))
        )

    @server.tool(name="feedback", description=mcp_help.FEEDBACK, annotations=ADDS)
    async def feedback(id: str, outcome: Outcome, note: str = "") -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: feedback_tool(s, id, outcome, note, index)))
        )

    if not all_tools:
        return

    @server.tool(name="update", description=mcp_help.UPDATE, annotations=CHANGES)
    async def update(
        id: str,
        title: str | None = None,
        task: str | None = None,
        solution: str | None = None,
        whyItWorked: str | None = None,
        applicability: str | None = None,
        confidence: Confidence | None = None,
        tags: Texts = None,
        paths: Texts = None,
        addProblems: Texts = None,
        addFailedAttempts: Texts = None,
        addWarnings: Texts = None,
        addAskedAs: Texts = None,
        verification: str | None = None,
        projectContext: str | None = None,
        addTags: Texts = None,
        addPaths: Texts = None,
        addSupersedes: Ids = None,
        addGuards: list[dict[str, Any]] | None = None,
        guards: list[dict[str, Any]] | None = None,
        allowExisting: bool = False,
    ) -> CallToolResult:
        fields = {
            "title": title,
            "task": task,
            "solution": solution,
            "whyItWorked": whyItWorked,
            "applicability": applicability,
            "verification": verification,
            "projectContext": projectContext,
            "confidence": confidence,
            "tags": tags,
            "paths": paths,
            "addProblems": addProblems,
            "addFailedAttempts": addFailedAttempts,
            "addWarnings": addWarnings,
            "addAskedAs": addAskedAs,
            "addTags": addTags,
            "addPaths": addPaths,
            "addSupersedes": addSupersedes,
            "addGuards": addGuards,
            "guards": guards,
        }
        return await running.run(
            lambda: answer(
                indexed(lambda s, index: update_tool(s, id, fields, index, allowExisting))
            )
        )

    @server.tool(name="history", description=mcp_help.HISTORY, annotations=READS)
    async def history(
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        since: Annotated[
            str | None, Field(description="A date as git reads it, e.g. '1 year ago'.")
        ] = None,
        sessions: bool = True,
    ) -> CallToolResult:
        return await running.run(lambda: answer(lambda: history_tool(repo, since, limit, sessions)))

    @server.tool(name="search", description=mcp_help.SEARCH, annotations=READS)
    async def search(
        query: str,
        projectContext: Annotated[
            str | None, Field(description="Project words, e.g. 'python cli'.")
        ] = None,
        limit: Annotated[int | None, Field(ge=1)] = None,
        minLevel: Level | None = None,
        includeRetired: bool = False,
    ) -> CallToolResult:
        return await running.run(
            lambda: answer(
                indexed(
                    lambda s, index: search_tool(
                        s, query, projectContext, limit, minLevel, includeRetired, index
                    )
                )
            )
        )

    @server.tool(name="about", description=mcp_help.ABOUT, annotations=READS)
    async def about(paths: list[str], includeRetired: bool = False) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: about_tool(s, paths, index, includeRetired)))
        )

    @server.tool(name="retire", description=mcp_help.RETIRE, annotations=CHANGES)
    async def retire(id: str, reason: str) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: retire_tool(s, id, reason, index)))
        )

    @server.tool(name="check", description=mcp_help.CHECK, annotations=READS)
    async def check(paths: Texts = None) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: check_tool(s, paths, index)))
        )


def lean_schema(schema: dict[str, Any], unlisted: frozenset[str]) -> dict[str, Any]:
    """``schema`` as the model needs it: no generated titles, defaults or examples, an
    optional argument as its type alone, and the ``unlisted`` arguments left out."""
    properties = {
        name: _lean_property(value)
        for name, value in schema.get("properties", {}).items()
        if name not in unlisted
    }
    lean: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in schema.get("required", []) if name not in unlisted]
    if required:
        lean["required"] = required
    # Unknown arguments are refused by name (mcp_server._Server); a tool with unlisted ones
    # accepts those too, so its schema does not claim that nothing else is allowed.
    if not unlisted:
        lean["additionalProperties"] = False
    return lean


def _lean_property(value: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in value.items() if k not in ("title", "default", "examples")}
    options = kept.pop("anyOf", None)
    if options is not None:
        typed = [option for option in options if option != {"type": "null"}]
        if len(typed) == 1:
            kept = {**typed[0], **kept}
        else:
            kept["anyOf"] = typed
    if isinstance(kept.get("items"), dict):
        kept["items"] = _lean_property(kept["items"])
    return kept
