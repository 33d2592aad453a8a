"""The agent clients Reliora wires (SPEC.md §14.1): one module per client.

Each module (``claude_code``, ``codex``, ``gemini``, ``copilot``, ``cursor``)
has the same small surface, described by :class:`base.ClientModule`: the files
``agent install`` writes (``FILES``, with their pure editors), the paths that
say a repository uses the client (``SIGNS``), how its hook events read
(``parse_event``) and what its hooks must print (``render_output``), and what a
person must still do that no committed file can (``todo``). Modules are
imported when asked for: a hook imports only its own client's.
"""

from __future__ import annotations

import importlib
from typing import cast

from reliora_git.operations.agents.clients.base import ClientModule

#: Every client, in the order `agent status` lists them.
CLIENTS = ("claude-code", "codex", "gemini", "copilot", "cursor")
#: What `agent install` wires when the repository shows no client yet.
DEFAULT_CLIENTS = ("claude-code", "codex")


def load(name: str) -> ClientModule:
    """The module of client ``name`` (KeyError for a name not in CLIENTS)."""
    if name not in CLIENTS:
        raise KeyError(name)
    module = importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
    return cast(ClientModule, module)
