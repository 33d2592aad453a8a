"""The MCP server behind ``reliora mcp``: the Python API as tools over stdio.

Imported only by ``reliora mcp`` (the ``mcp`` SDK is an optional extra). The tools and
their arguments are in mcp_tools.py, their work in mcp_work.py: every tool answers with
the same JSON documents as the CLI's ``--json`` output (SPEC.md §7), both as structured
content and as JSON text for clients that only show text. A RelioraError or an OS error
becomes a tool error result (``isError``) carrying the CLI's ``{"error": …}`` document,
so the model can read it and correct itself; nothing a tool raises stops the server.

Off means off: with an off switch in force (RELIORA_AGENT=off, ``git config reliora.agent
off``, ``agent = "off"`` in config.toml) the server lists no tools, so a session pays
nothing for it (SPEC.md §14.3).

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
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult
from mcp.types import Tool as MCPTool
from pydantic import ValidationError

from reliora_git import __version__
from reliora_git.interfaces import mcp_help
from reliora_git.interfaces.mcp_wire import SERVER_NAME, Start, exit_now
from reliora_git.interfaces.mcp_work import error_result
from reliora_git.records.errors import RelioraError
from reliora_git.records.stopping import WorkStopped, stopped_by

if TYPE_CHECKING:
    from reliora_git.storage.index import LiveIndex

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


def serve(repo: Path | None = None, start: Start | None = None, all_tools: bool = False) -> None:
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
    server = build_server(repo, calls, all_tools)
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

    def __init__(self, *args: Any, repo: Path | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: ``--repo``: where the off switches of the clone and the store are looked up.
        self.repo = repo
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
        from reliora_git.interfaces.mcp_tools import UNLISTED, lean_schema

        if switched_off(self.repo):
            return []
        tools = await super().list_tools()
        for tool in tools:
            tool.input_schema = lean_schema(tool.input_schema, UNLISTED.get(tool.name, frozenset()))
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


def switched_off(repo: Path | None) -> bool:
    """Whether an off switch of every hook (and so of the tools) is in force for the session,
    the clone or the store; ``push = false`` or ``capture = false`` alone leave the tools."""
    from reliora_git.operations.agents.switches import in_force

    where = repo or Path(os.environ.get("RELIORA_REPO") or Path.cwd())
    return any(switch.what == "agent" for switch in in_force(where, repo))


def build_server(
    repo: Path | None = None, calls: Calls | None = None, all_tools: bool = False
) -> _Server:
    """The server with its tools; ``repo`` is ``--repo`` (else RELIORA_REPO, else cwd).

    ``all_tools``: every tool (``reliora mcp --all-tools``), not only an agent's loop.
    """
    from reliora_git.interfaces.mcp_tools import register

    # log_level: the SDK logs every anticipated tool error at INFO on stderr, which
    # clients show as noise; the agent already gets the error in the result.
    server = _Server(
        name=SERVER_NAME,
        instructions=mcp_help.INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        repo=repo,
    )
    register(server, repo, calls or Calls(), all_tools)
    return server
