"""Which optional extras this installation has, and the one command that keeps them all.

A hint that says "install again with the web extra" must not drop the extras the person
already has: `pipx install --force '.[web]'` on an installation with `mcp` removes the
MCP SDK, and `reliora mcp` breaks. So every such hint names the extra it needs and every
extra installed (found without importing anything: importing the SDKs is slow).
"""

from __future__ import annotations

import importlib.util

#: Each extra, by a module only it brings.
EXTRA_MODULES = {"mcp": "mcp", "org": "psycopg", "web": "starlette"}


def installed_extras() -> list[str]:
    """The extras whose modules can be found, in alphabetical order."""
    found = []
    for extra, module in sorted(EXTRA_MODULES.items()):
        try:
            if importlib.util.find_spec(module) is not None:
                found.append(extra)
        except (ImportError, ValueError):
            continue
    return found


def install_command(needed: str, force: bool = True) -> str:
    """``pipx install --force '.[mcp,web]'``: ``needed`` and every extra installed already."""
    extras = sorted({needed, *installed_extras()} - {""})
    spec = f"'.[{','.join(extras)}]'" if extras else "."
    return f"pipx install {'--force ' if force else ''}{spec}"
