"""``mcp``: serve the store to coding agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer

from reliora_git.interfaces.commands.common import RepoOption, reporting
from reliora_git.records.errors import RelioraError

INSTALL_HINT = "pip install 'reliora-git[mcp]'"
#: Top-level modules of the SDK and its own dependencies.
SDK_MODULES = ("mcp", "mcp_types", "pydantic", "anyio")


def mcp(repo: RepoOption = None) -> None:
    """Run an MCP server on stdin/stdout for coding agents.

    Its tools: brief, search, show, about, record, update, feedback, check (the same
    JSON documents as --json; arguments by their JSON names). Start it from an
    MCP client (Claude Code, Cursor, VS Code…), not by hand: it speaks JSON-RPC
    on stdout. The store is looked up on every call (--repo, RELIORA_REPO, or
    the nearest .reliora/ above the working folder), so a store created after
    the server started is found. Needs the optional `mcp` extra. See
    docs/agents.md.

    \b
    Example:
      claude mcp add reliora -- reliora mcp
    """
    with reporting():
        serve = _load_server()
        serve(repo)


def _load_server() -> Callable[[Path | None], None]:
    """The server's entry point, imported only now: the `mcp` SDK is an optional extra."""
    try:
        from reliora_git.interfaces.mcp_server import serve
    except ModuleNotFoundError as error:
        # Only a missing SDK (or the 1.x SDK, which lacks mcp.server.mcpserver) is the
        # user's to fix by installing; any other missing module is a bug worth a traceback.
        if (error.name or "").split(".")[0] not in SDK_MODULES:
            raise
        raise RelioraError(
            f"`reliora mcp` needs the MCP Python SDK 2.x, which is not installed; "
            f"run: {INSTALL_HINT}",
            code="missing_dependency",
        ) from None
    return serve


def register(app: typer.Typer) -> None:
    app.command()(mcp)
