"""gemini: a placeholder until the client's module lands (instruction files only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reliora_git.operations import agentfiles  # noqa: F401
from reliora_git.operations.clients.base import ClientFile, HookEvent, HookInputError
from reliora_git.operations.clients.instructions import BLOCK, BLOCK_EDITOR  # noqa: F401

NAME = "gemini"
FILES: tuple[ClientFile, ...] = (
)
SIGNS = (".gemini", "GEMINI.md")


def parse_event(data: dict[str, Any], cwd: Path) -> HookEvent:
    raise HookInputError(f"no hooks are defined for client {NAME!r} yet")


def render_output(event: HookEvent, text: str) -> str:
    return text


def todo(root: Path) -> list[str]:
    return []
