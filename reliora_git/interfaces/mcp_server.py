"""The MCP server behind ``reliora mcp``: the Python API as seven tools over stdio.

Imported only by ``reliora mcp`` (the ``mcp`` SDK is an optional extra). Every tool
answers with the same JSON documents as the CLI's ``--json`` output (SPEC.md §7),
both as structured content and as JSON text for clients that only show text.
A RelioraError or an OS error becomes a tool error result (``isError``) carrying
the CLI's ``{"error": …}`` document, so the model can read it and correct itself;
nothing a tool raises stops the server.

The store is found again on every call: an agent may run ``reliora init`` (or
switch branches) while the server is running. Its index stays in memory between
calls and is revalidated against the files on each one (index.LiveIndex).

Clients call tools in parallel: each call runs on a worker thread, holding a
reference to the kept index (LiveIndex.open). A call whose client cancels it, or
closes the connection, is stopped at its next step (records/stopping.py) instead
of computing on for nobody; once stdin is closed the process exits, and SIGINT or
SIGTERM end it the same way, with exit code 0 (interfaces/mcp_wire.py).

Start-up: the client's ``initialize`` may have been answered before this module was
imported (mcp_wire.py, commands/serving.py); nothing here that only tool calls need
(the operations, the store index) is imported before the first call.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from pydantic import Field, ValidationError

from reliora_git import __version__
from reliora_git.interfaces import mcp_help
from reliora_git.interfaces.mcp_wire import SERVER_NAME, Start, exit_now
from reliora_git.records.errors import RelioraError, from_os_error
from reliora_git.records.stopping import WorkStopped, stopped_by

if TYPE_CHECKING:
    from reliora_git.storage.index import LiveIndex, StoreIndex
    from reliora_git.storage.store import Store

Document = dict[str, Any]
# Literal types so the input schemas list the allowed values (tests keep them equal to model's).
Level = Literal["strong", "moderate", "weak"]
Outcome = Literal["success", "partial", "failure", "not-applicable", "outdated"]
Confidence = Literal["low", "medium", "high"]


@dataclass
class Reply:
    """A tool's JSON document, and notes for the model that are not part of it."""

    document: Document
    #: e.g. record files search had to skip (the CLI names them on stderr).
    notes: list[str] = field(default_factory=list)


# Hints for clients that ask before running tools: reading is safe, writing only adds files.
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
#: Rewrites one file in place (nothing else is lost: the old text is in git).
CHANGES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


#: What the tools' work imports (see _Server.live_index).
TOOL_MODULES = (
    "reliora_git.operations.lessons.about",
    "reliora_git.operations.lessons.reads",
    "reliora_git.operations.lessons.writes",
    "reliora_git.operations.brief.full",
    "reliora_git.operations.review.check",
    "reliora_git.operations.lessons.lifecycle",
    "reliora_git.search.jsonio",
    "reliora_git.storage.config",
    "reliora_git.storage.store",
)

#: How long calls that were told to stop may take to reach their next step and unwind
#: (releasing lock files) once the client has gone; then the process exits regardless.
STOP_GRACE_SECONDS = 10.0


def serve(repo: Path | None = None, start: Start | None = None) -> None:
    """Run the server on the client's pipes until it closes stdin, then exit.

    ``start`` is what the fast start did (commands/serving.py): the wire taken, the
    signals handled, perhaps ``initialize`` answered; None when started through Typer.

    When stdin closes, the SDK cancels the calls in flight; each is told to stop
    (Calls.run) and gets a moment to unwind. A call stuck where it cannot look
    (a git command, say) does not keep the process alive: it exits without it.
    SIGINT and SIGTERM do the same from wherever the server is (mcp_wire.Stopper).
    """
    start = start or Start.take()
    calls = Calls()
    start.stopper.before_exit = functools.partial(calls.stop, STOP_GRACE_SECONDS)
    server = build_server(repo, calls)
    anyio.run(server.serve_wire, start)
    # The client has gone. Once the calls have ended (or after the grace, if one is
    # stuck where it cannot look) there is nothing left to do: exit without waiting
    # for the worker threads or the interpreter's teardown.
    calls.stop(STOP_GRACE_SECONDS)
    exit_now()


class Calls:
    """The tool calls running now, each on a worker thread with the event that stops it."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._stops: set[threading.Event] = set()
        #: Set once the server is stopping: a call that has not begun does not begin.
        self._closed = False

    async def run(self, work: Callable[[], CallToolResult]) -> CallToolResult:
        """``work`` on a worker thread; when this call is cancelled, ``work`` is told to stop.

        The SDK cancels a call when its client sends ``notifications/cancelled`` or
        closes the connection. The thread cannot be killed: the call stops waiting
        for it at once (``abandon_on_cancel``) and the work ends at its next
        checkpoint with WorkStopped, which nobody reads.
        """
        stop = threading.Event()
        try:
            return await anyio.to_thread.run_sync(
                functools.partial(self._stoppable, stop, work), abandon_on_cancel=True
            )
        except anyio.get_cancelled_exc_class():
            stop.set()
            raise

    def _stoppable(self, stop: threading.Event, work: Callable[[], CallToolResult]) -> Any:
        with self._changed:
            if self._closed:
                return None  # the process is about to exit: nobody will read the answer
            self._stops.add(stop)
        try:
            with stopped_by(stop):
                return work()
        except WorkStopped:
            return None  # its caller has gone: there is nobody to answer
        finally:
            with self._changed:
                self._stops.discard(stop)
                self._changed.notify_all()

    def stop(self, timeout: float) -> bool:
        """Stop every call, start no more; whether all have ended within ``timeout`` seconds."""
        with self._changed:
            self._closed = True
            for stop in self._stops:
                stop.set()
            return self._changed.wait_for(lambda: not self._stops, timeout)


class _ClientLines:
    """What the SDK reads: the client's line read before it was loaded, then the pipe.

    Read on a worker thread, as the SDK's own transport does, decoded as it decodes.
    """

    def __init__(self, start: Start) -> None:
        self._first = start.first
        self._reader = start.wire.reader

    def __aiter__(self) -> _ClientLines:
        return self

    async def __anext__(self) -> str:
        line, self._first = self._first, b""
        if not line:
            line = await anyio.to_thread.run_sync(self._reader.readline)
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _ServerLines:
    """What the SDK writes, to the client; not its answer to an ``initialize`` answered early."""

    def __init__(self, start: Start) -> None:
        self._start = start
        self._writer = start.wire.writer

    async def write(self, text: str) -> None:
        if self._start.is_early_answer(text):
            return
        await anyio.to_thread.run_sync(self._writer.write, text.encode("utf-8"))

    async def flush(self) -> None:
        await anyio.to_thread.run_sync(self._writer.flush)


class _Server(MCPServer):
    """MCPServer with one argument naming style, and the project's error shape.

    A tool's parameters are its arguments, named as the JSON documents name fields
    (SPEC.md §7: ``projectContext``, ``whyItWorked``); the snake_case spelling of each
    (``project_context``) is accepted as an alias. Anything else is refused by name
    (the SDK would drop it silently), and the published input schemas say so
    (``additionalProperties: false``). A new tool needs nothing more than its
    ``@server.tool`` function with camelCase parameters.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Tool name → its arguments' names, in the order of its parameters.
        self.argument_names: dict[str, tuple[str, ...]] = {}
        #: The store index kept between calls, made by the first call (:meth:`live_index`).
        self._live: LiveIndex | None = None

    async def serve_wire(self, start: Start) -> None:
        """Serve the client on ``start``'s wire, after what the fast start read and answered.

        What ``run("stdio")`` does, on streams given to the SDK's transport instead of
        the ones it would take from fds 0 and 1 (Start took those already).
        """
        # The SDK's transport only iterates its stdin and awaits write/flush on its stdout.
        client: Any = _ClientLines(start)
        replies: Any = _ServerLines(start)
        lowlevel = self._lowlevel_server
        async with stdio_server(stdin=client, stdout=replies) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    def live_index(self) -> LiveIndex:
        """The kept index, and every module a tool needs, loaded on the event loop's thread.

        Not at start-up: they are not needed to answer ``initialize`` or list the tools.
        Not on the calls' worker threads: parallel first calls would import the same
        modules at once, and a module one thread is still running can look half empty
        to another.
        """
        if self._live is None:
            for module in TOOL_MODULES:
                importlib.import_module(module)
            from reliora_git.storage.index import LiveIndex

            self._live = LiveIndex()
        return self._live

    def add_tool(
        self, fn: Callable[..., Any], name: str | None = None, *args: Any, **kwargs: Any
    ) -> None:
        super().add_tool(fn, name, *args, **kwargs)
        self.argument_names[name or fn.__name__] = tuple(inspect.signature(fn).parameters)

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        for tool in tools:
            tool.input_schema["additionalProperties"] = False
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        self.live_index()
        known = self.argument_names.get(name)
        if known is not None:
            try:
                arguments = spelled_as_published(name, known, arguments)
            except RelioraError as error:
                return error_result(error)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            message = bad_arguments_message(name, cause)
            return error_result(RelioraError(message, code="bad_arguments"))


def snake_case(name: str) -> str:
    """``whyItWorked`` → ``why_it_worked``: the alias accepted for an argument."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def spelled_as_published(
    tool: str, known: tuple[str, ...], arguments: dict[str, Any]
) -> dict[str, Any]:
    """``arguments`` under their published names; an unknown or doubled one is refused.

    Raises a ``bad_arguments`` RelioraError naming the unknown argument, the one
    it is probably a misspelling of, and every argument the tool has.
    """
    aliases = {snake_case(name): name for name in known}
    spelled: dict[str, Any] = {}
    for given, value in arguments.items():
        name = given if given in known else aliases.get(given)
        if name is None:
            close = difflib.get_close_matches(given, [*known, *aliases], n=1)
            hint = f" (did you mean {aliases.get(close[0], close[0])!r}?)" if close else ""
            raise RelioraError(
                f"{tool}: unknown argument {given!r}{hint}; the arguments are {', '.join(known)}",
                code="bad_arguments",
            )
        if name in spelled:
            raise RelioraError(
                f"{tool}: the argument {name!r} is given twice "
                f"(as {name!r} and as {snake_case(name)!r})",
                code="bad_arguments",
            )
        spelled[name] = value
    return spelled


def bad_arguments_message(tool: str, error: ValidationError) -> str:
    """One sentence naming the first wrong argument (the SDK's text ends in a URL)."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "arguments"
    if first.get("type") == "missing":
        return f"{tool}: the argument {where!r} is required"
    return f"{tool}: the argument {where!r} is wrong: {first.get('msg', 'invalid value')}"


def build_server(repo: Path | None = None, calls: Calls | None = None) -> _Server:
    """The server with its tools; ``repo`` is ``--repo`` (else RELIORA_REPO, else cwd)."""
    # log_level: the SDK logs every anticipated tool error at INFO on stderr, which
    # clients show as noise; the agent already gets the error in the result.
    server = _Server(
        name=SERVER_NAME,
        instructions=mcp_help.INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )

    running = calls or Calls()

    def indexed(work: Callable[[Store, StoreIndex], Reply]) -> Callable[[], Reply]:
        """``work`` on the store and its index, kept in memory between calls."""
        live = server.live_index()

        def run() -> Reply:
            from reliora_git.storage.store import find_store

            found = find_store(repo)
            with live.open(found) as index:
                return work(found, index)

        return run

    # Every tool's parameters are its arguments, named as the JSON documents name fields
    # (SPEC §7, as `reliora record --json -` reads them): camelCase; _Server accepts the
    # snake_case spelling too and refuses anything else.
    @server.tool(name="search", description=mcp_help.SEARCH, annotations=READS)
    async def search(
        query: Annotated[
            str,
            Field(
                description="The task's words, e.g. 'flaky pytest timeouts'.",
                examples=["flaky pytest timeouts", "postgres index performance"],
            ),
        ],
        projectContext: Annotated[
            str | None,
            Field(
                description="Project words, e.g. 'python cli': keeps only records whose "
                "project context, tags or applicability match one of them."
            ),
        ] = None,
        limit: Annotated[
            int | None, Field(ge=1, description="Results to return (default 10; total counts all).")
        ] = None,
        minLevel: Annotated[Level | None, Field(description="Lowest level returned.")] = None,
        includeRetired: Annotated[
            bool, Field(description="Also return retired and superseded records.")
        ] = False,
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

    @server.tool(name="show", description=mcp_help.SHOW, annotations=READS)
    async def show(
        id: Annotated[
            str,
            Field(
                description="An experience id, or a unique prefix of one.",
                examples=["flaky-pytest-timeouts-3f9a1c", "flaky-pytest"],
            ),
        ],
    ) -> CallToolResult:
        return await running.run(lambda: answer(indexed(lambda s, index: show_tool(s, id, index))))

    @server.tool(name="record", description=mcp_help.RECORD, annotations=ADDS)
    async def record(
        title: Annotated[str, Field(description="One line naming the lesson.")],
        solution: Annotated[str, Field(description="What worked, concretely.")],
        task: Annotated[str, Field(description="What you were trying to do.")] = "",
        problems: Annotated[
            list[str] | None, Field(description="The problems you hit, one per item.")
        ] = None,
        whyItWorked: Annotated[str, Field(description="Why the solution works.")] = "",
        failedAttempts: Annotated[
            list[str] | None, Field(description="What you tried that did not work, and why.")
        ] = None,
        warnings: Annotated[
            list[str] | None, Field(description="Traps and caveats for the next reader.")
        ] = None,
        applicability: Annotated[
            str, Field(description="Where this holds, and where it does not.")
        ] = "",
        verification: Annotated[str, Field(description="How you checked that it works.")] = "",
        askedAs: Annotated[list[str] | None, Field(description=mcp_help.ASKED_AS_HELP)] = None,
        projectContext: Annotated[
            str, Field(description="Project words, e.g. 'python cli typer'.")
        ] = "",
        tags: Annotated[list[str] | None, Field(description="Short tags, e.g. 'pytest'.")] = None,
        confidence: Annotated[Confidence | None, Field(description="How sure you are.")] = None,
        supersedes: Annotated[
            list[str] | None, Field(description="Ids of records this one replaces.")
        ] = None,
        paths: Annotated[
            list[str] | None, Field(description="Repository paths the lesson is about.")
        ] = None,
        guards: Annotated[
            list[dict[str, Any]] | None, Field(description=GUARDS_HELP, examples=[GUARD_EXAMPLE])
        ] = None,
        allowExisting: Annotated[
            bool,
            Field(
                description="Save a guard although it already matches the code (the record "
                "keeps existing: allowed; check and review then warn, never fail)."
            ),
        ] = False,
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

    @server.tool(name="about", description=mcp_help.ABOUT, annotations=READS)
    async def about(
        paths: Annotated[
            list[str],
            Field(
                description="Files or folders, relative to the repository root.",
                examples=[["src/billing/retry.py"], ["src/billing/"]],
            ),
        ],
        includeRetired: Annotated[
            bool, Field(description="List retired and superseded records too (marked).")
        ] = False,
    ) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: about_tool(s, paths, index, includeRetired)))
        )

    @server.tool(name="update", description=mcp_help.UPDATE, annotations=CHANGES)
    async def update(
        id: Annotated[str, Field(description="The experience to refine (id or unique prefix).")],
        title: Annotated[str | None, Field(description="New title.")] = None,
        task: Annotated[str | None, Field(description="New task.")] = None,
        solution: Annotated[str | None, Field(description="New solution.")] = None,
        whyItWorked: Annotated[str | None, Field(description="New 'why it worked'.")] = None,
        applicability: Annotated[str | None, Field(description="New applicability.")] = None,
        verification: Annotated[str | None, Field(description="New verification.")] = None,
        projectContext: Annotated[str | None, Field(description="New project words.")] = None,
        confidence: Annotated[Confidence | None, Field(description="How sure you are.")] = None,
        tags: Annotated[list[str] | None, Field(description="The tags (replace all).")] = None,
        paths: Annotated[list[str] | None, Field(description="Code paths (replace all).")] = None,
        addProblems: Annotated[list[str] | None, Field(description="Problems to add.")] = None,
        addFailedAttempts: Annotated[
            list[str] | None, Field(description="Failed attempts to add.")
        ] = None,
        addWarnings: Annotated[list[str] | None, Field(description="Warnings to add.")] = None,
        addAskedAs: Annotated[
            list[str] | None, Field(description="Asked-as lines to add. " + mcp_help.ASKED_AS_HELP)
        ] = None,
        addTags: Annotated[list[str] | None, Field(description="Tags to add.")] = None,
        addPaths: Annotated[list[str] | None, Field(description="Code paths to add.")] = None,
        addSupersedes: Annotated[
            list[str] | None,
            Field(description="Ids (or unique prefixes) of experiences this one replaces."),
        ] = None,
        addGuards: Annotated[
            list[dict[str, Any]] | None, Field(description="Guards to add. " + GUARDS_HELP)
        ] = None,
        guards: Annotated[
            list[dict[str, Any]] | None, Field(description="The guards (replace all; [] drops)")
        ] = None,
        allowExisting: Annotated[
            bool,
            Field(
                description="Save a new guard although it already matches the code (the "
                "record keeps existing: allowed)."
            ),
        ] = False,
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

    @server.tool(name="retire", description=mcp_help.RETIRE, annotations=CHANGES)
    async def retire(
        id: Annotated[str, Field(description="The experience to retire (id or unique prefix).")],
        reason: Annotated[str, Field(description="Why it no longer holds, in a sentence.")],
    ) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: retire_tool(s, id, reason, index)))
        )

    @server.tool(name="feedback", description=mcp_help.FEEDBACK, annotations=ADDS)
    async def feedback(
        id: Annotated[
            str,
            Field(
                description="The experience you used (id or unique prefix).",
                examples=["flaky-pytest-timeouts-3f9a1c"],
            ),
        ],
        outcome: Annotated[
            Outcome, Field(description="How it worked out.", examples=["success", "outdated"])
        ],
        note: Annotated[str, Field(description="What happened, in a sentence.")] = "",
    ) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: feedback_tool(s, id, outcome, note, index)))
        )

    @server.tool(name="check", description=mcp_help.CHECK, annotations=READS)
    async def check(
        paths: Annotated[
            list[str] | None,
            Field(
                description="Record files to search for similar experiences, relative to "
                "the repository root (default: validate the whole store only)."
            ),
        ] = None,
    ) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: check_tool(s, paths, index)))
        )

    @server.tool(name="brief", description=mcp_help.BRIEF, annotations=READS)
    async def brief(
        task: Annotated[
            str,
            Field(description="The task as you were given it (the prompt, the issue body)."),
        ] = "",
        query: Annotated[
            str,
            Field(
                description="Your own keywords for the task, as you would search: tools, "
                "libraries, error names, symptoms.",
                examples=["pytest timeout shared ci runners"],
            ),
        ] = "",
        files: Annotated[
            list[str] | None,
            Field(
                description="Files you are about to edit, relative to the repository root.",
                examples=[["src/billing/retry.py"]],
            ),
        ] = None,
    ) -> CallToolResult:
        return await running.run(
            lambda: answer(indexed(lambda s, index: brief_tool(s, task, query, files, index)))
        )

    @server.tool(name="history", description=mcp_help.HISTORY, annotations=READS)
    async def history(
        since: Annotated[
            str | None,
            Field(
                description="Only history after this date, as git reads it (default: the last "
                "two years).",
                examples=["1 year ago", "2024-01-31"],
            ),
        ] = None,
        limit: Annotated[
            int, Field(description="The best N entries not yet recorded.", ge=1, le=50)
        ] = 10,
        sessions: Annotated[
            bool, Field(description="Include this machine's past agent sessions.")
        ] = True,
    ) -> CallToolResult:
        return await running.run(lambda: answer(lambda: history_tool(repo, since, limit, sessions)))

    return server


# --- the tools' work, without the SDK: Store and arguments in, §7 document out ---------------


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


#: The guards argument of ``record`` and ``update`` (SPEC.md §15).
GUARDS_HELP = (
    "Guards: objects {pattern, paths, exclude, message, severity}. pattern is an RE2 regular "
    "expression the pre-commit hook and review look for in added lines of code; paths are "
    "globs (default: the record's paths); exclude globs take files out (the one module "
    "that legitimately wraps the call); message is what the developer reads (default: the "
    "title); severity 'warn' (default) or 'block'."
)
GUARD_EXAMPLE = {"pattern": "from ['\"]moment['\"]", "paths": ["src/**/*.ts"], "severity": "warn"}


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
) -> Reply:
    from reliora_git.operations.brief.full import brief

    # The JSON is what the client receives: it is counted against the budget, not the text.
    result = brief(store, task, query=query, files=files or [], index=index)
    return Reply(result.json_within_budget())


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
