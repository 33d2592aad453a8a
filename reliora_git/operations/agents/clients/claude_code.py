"""Claude Code: hooks in ``.claude/settings.json``, the server in ``.mcp.json``, the block in
``CLAUDE.md`` (it does not read AGENTS.md). docs/agents.md cites the pages relied on.

Hook input (Claude Code docs, Hooks reference): one JSON object with
``hook_event_name``, ``session_id``, ``cwd``, plus ``prompt`` (UserPromptSubmit)
or ``tool_name`` and ``tool_input`` (PreToolUse), or ``transcript_path`` and
``stop_hook_active`` (Stop, at the end of each turn). Output: on exit 0,
``hookSpecificOutput.additionalContext`` is added to the model's context; from Stop,
``{"decision": "block", "reason": …}`` makes Claude go on with the reason as its next
instruction (the end-of-turn ask, SPEC.md §16).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reliora_git.operations.agents import files
from reliora_git.operations.agents.clients.base import (
    ClientFile,
    HookEvent,
    HookInputError,
    cwd_of,
    hook_command,
    text_field,
)
from reliora_git.operations.agents.clients.instructions import BLOCK_EDITOR

NAME = "claude-code"
#: Seconds Claude Code waits for the hook (its own limit; ours is far shorter).
HOOK_TIMEOUT = 10
#: Claude Code's tools that read or write one file, and the tool_input field naming it.
FILE_TOOLS = {
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
READ_TOOLS = frozenset({"Read"})
HOOK_EVENTS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PreToolUse", "|".join(FILE_TOOLS)),
    ("Stop", None),
)
KIND_OF = {
    "SessionStart": "session",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "file",
    "Stop": "stop",
}
HOOK_ENTRY: dict[str, Any] = {
    "type": "command",
    "command": hook_command(NAME),
    "timeout": HOOK_TIMEOUT,
}

SETTINGS = files.grouped_hooks(HOOK_EVENTS, HOOK_ENTRY)
SERVERS = files.mcp_servers()
FILES = (
    ClientFile(NAME, ".claude/settings.json", *SETTINGS),
    ClientFile(NAME, ".mcp.json", *SERVERS),
    ClientFile(NAME, "CLAUDE.md", *BLOCK_EDITOR),
)
SIGNS = (".claude", ".mcp.json", "CLAUDE.md")


def run_by_another_client(data: dict[str, Any]) -> bool:
    """Copilot CLI and Cursor run the hooks of .claude/settings.json too, next to their own.

    Each client gets its push from its own hooks, so these runs push nothing: else each lesson
    would reach the model twice. Copilot CLI's copy of the event (1.0.102) has a ``timestamp``
    and no ``transcript_path``, which Claude Code always sends; Cursor's has ``cursor_version``.
    """
    return "cursor_version" in data or ("timestamp" in data and "transcript_path" not in data)


def parse_event(data: dict[str, Any], cwd: Path) -> HookEvent:
    name = data.get("hook_event_name")
    if not isinstance(name, str) or name not in KIND_OF:
        raise HookInputError(f"unknown event {str(name)[:80]}")
    session, where = text_field(data, "session_id"), cwd_of(data, cwd)
    if run_by_another_client(data):
        return HookEvent("file", name, session, where)  # a file event naming no file: silent
    files: tuple[str, ...] = ()
    tool = text_field(data, "tool_name")
    tool_input = data.get("tool_input")
    if tool in FILE_TOOLS and isinstance(tool_input, dict):
        path = text_field(tool_input, FILE_TOOLS[tool])
        files = (path,) if path else ()
    return HookEvent(
        KIND_OF[name],
        name,
        session,
        where,
        prompt=text_field(data, "prompt"),
        files=files,
        reads=tool in READ_TOOLS,
        transcript_path=text_field(data, "transcript_path"),
        transcript_format=NAME,
        stop_hook_active=data.get("stop_hook_active") is True,
    )


def render_output(event: HookEvent, text: str) -> str:
    if event.kind == "stop":
        return json.dumps({"decision": "block", "reason": text})
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": text}}
    )


def todo(root: Path) -> list[str]:
    return [
        "Claude Code asks once, per person, to approve the project's `reliora` MCP server "
        "(.mcp.json): answer yes, or run /mcp in a session"
    ]
