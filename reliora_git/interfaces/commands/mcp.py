"""``mcp``: serve the store to coding agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from reliora_git.interfaces.commands.common import RepoOption, reporting
from reliora_git.interfaces.commands.serving import load_server


def mcp(
    repo: RepoOption = None,
    all_tools: Annotated[
        bool,
        typer.Option(
            "--all-tools",
            help="Also offer update, history, search, about, retire and check (every tool "
            "offered is paid for on every request of a session).",
        ),
    ] = False,
) -> None:
    """Run an MCP server on stdin/stdout for coding agents.

    Its tools: brief, show, record, feedback (the same JSON documents as --json;
    arguments by their JSON names); --all-tools adds update, history, search, about,
    retire, check. With an off switch in force (RELIORA_AGENT=off, git config reliora.agent
    off, agent = "off" in config.toml) it offers none. Start it from an MCP client
    (Claude Code, Cursor, VS Code…), not by hand: it speaks JSON-RPC on stdout. The
    store is looked up on every call (--repo, RELIORA_REPO, or the nearest .reliora/
    above the working folder), so a store created after the server started is found.
    It exits with code 0 when the client closes stdin or sends SIGINT or SIGTERM, once
    the calls in flight have stopped. Needs the optional `mcp` extra. See
    docs/agents.md.

    \b
    Examples:
      claude mcp add reliora -- reliora mcp
      claude mcp add reliora-all -- reliora mcp --all-tools
    """
    with reporting():
        # Reached only when __main__'s fast path is off (RELIORA_FAST_CLI=0) or did not
        # recognise the arguments: nothing was read from the client, the SDK answers all.
        serve = load_server()
        serve(repo, None, all_tools)


def register(app: typer.Typer) -> None:
    app.command()(mcp)
