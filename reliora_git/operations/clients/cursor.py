"""cursor: a placeholder until the client's module lands (instruction files only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reliora_git.operations import agentfiles
from reliora_git.operations.clients.base import ClientFile, HookEvent, HookInputError
from reliora_git.operations.clients.instructions import BLOCK, BLOCK_EDITOR  # noqa: F401

NAME = "cursor"
FILES: tuple[ClientFile, ...] = (
    ClientFile(
        NAME,
        ".cursor/rules/reliora.mdc",
        *agentfiles.marked_block(
            BLOCK,
            empty="---\ndescription: Lessons from past work kept in .reliora/ and how to get them "
            "before a task or an edit\nalwaysApply: true\n---\n",
        ),
    ),
    ClientFile(NAME, ".cursor/mcp.json", *agentfiles.mcp_servers()),
)
SIGNS = (".cursor", ".cursorrules")


def parse_event(data: dict[str, Any], cwd: Path) -> HookEvent:
    raise HookInputError(f"no hooks are defined for client {NAME!r} yet")


def render_output(event: HookEvent, text: str) -> str:
    return text


def todo(root: Path) -> list[str]:
    return []
