"""How ``reliora mcp`` starts: without Typer, and answering ``initialize`` before the SDK loads.

``__main__`` hands ``reliora mcp`` and ``reliora mcp --repo PATH`` to :func:`fast_main`;
``--help`` and anything unusual go to Typer (commands/mcp.py), whose command serves
the same way once it runs, only later. The order is what makes the first answer
quick: the client's ``initialize`` is answered from interfaces/mcp_wire.py, which
needs nothing but the standard library, and only then is the SDK imported
(interfaces/mcp_server.py). When the SDK is not installed, nothing is read or
answered: Typer's path says what to install, on one line, exit code 2.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.records.errors import RelioraError

if TYPE_CHECKING:
    from reliora_git.interfaces.mcp_wire import Start


#: reliora-git is installed from a clone or a wheel (README), not by a package index name.
def install_hint() -> str:
    """How to install the mcp extra, keeping every extra installed already."""
    from reliora_git.extras import install_command

    return (
        "install reliora again from your clone of reliora-git with the mcp extra "
        f"({install_command('mcp')})"
    )


#: Top-level modules of the SDK and its own dependencies.
SDK_MODULES = ("mcp", "mcp_types", "pydantic", "anyio")

Serve = Callable[[Path | None, "Start | None", bool], None]
#: The option that offers every tool, not only an agent's loop.
ALL_TOOLS = "--all-tools"


def fast_main(argv: list[str]) -> int | None:
    """``reliora mcp [--repo PATH] [--all-tools]``: serve, then its exit code; None for
    anything else."""
    args = argv[1:]
    all_tools = ALL_TOOLS in args
    if all_tools:
        args = [arg for arg in args if arg != ALL_TOOLS]
    if not args:
        repo = None
    elif len(args) == 2 and args[0] == "--repo" and args[1] and not args[1].startswith("-"):
        repo = Path(args[1])
    elif len(args) == 1 and args[0].startswith("--repo=") and len(args[0]) > len("--repo="):
        repo = Path(args[0].split("=", 1)[1])
    else:
        return None
    if not sdk_installed():
        return None  # Typer's path reports it (load_server)
    from reliora_git.interfaces.mcp_wire import Start

    start = Start.take()
    if not start.answer_first():
        return 0  # the client closed stdin before saying anything
    from reliora_git.interfaces.commands.reporting import reporting

    with reporting():
        serve = load_server()
        serve(repo, start, all_tools)
    return 0


def sdk_installed() -> bool:
    """Whether the 2.x SDK can be imported, found without importing it (that is the slow part)."""
    try:
        spec = importlib.util.find_spec("mcp")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    # The 1.x SDK lacks mcp.server.mcpserver (it had FastMCP).
    return any(
        os.path.isdir(os.path.join(folder, "server", "mcpserver"))
        for folder in spec.submodule_search_locations
    )


def load_server() -> Serve:
    """The server's entry point, imported only now: the `mcp` SDK is an optional extra."""
    try:
        from reliora_git.interfaces.mcp_server import serve
    except ModuleNotFoundError as error:
        # Only a missing SDK (or the 1.x SDK, which lacks mcp.server.mcpserver) is the
        # user's to fix by installing; any other missing module is a bug worth a traceback.
        if (error.name or "").split(".")[0] not in SDK_MODULES:
            raise
        raise RelioraError(
            f"`reliora mcp` needs the MCP Python SDK 2.x, which is not installed: {install_hint()}",
            code="missing_dependency",
        ) from None
    return serve
