"""Cursor: hooks in ``.cursor/hooks.json``, the rule ``.cursor/rules/reliora.mdc``, the MCP server
in ``.cursor/mcp.json``. Written from Cursor's documentation (it cannot run here without a
login); docs/agents.md cites the pages.

Hooks (https://cursor.com/docs/hooks): ``{"version": 1, "hooks": {event: [{"command": ...,
"timeout": seconds, "matcher": regex}]}}``; project hooks run in a trusted workspace. Every
input has ``hook_event_name``, ``conversation_id``, ``generation_id``, ``workspace_roots``,
``cursor_version`` (and ``session_id``, ``transcript_path`` in later versions). Cursor adds
context for the model at two moments: ``sessionStart`` (output ``additional_context``, also
``env``) and ``postToolUse`` (input ``tool_name``, ``tool_input``, ``tool_output``; output
``additional_context``, added after the tool's result). Its prompt hook, ``beforeSubmitPrompt``,
documents only ``continue`` and ``user_message``: no context, so the prompt push has no hook
here and the rule tells the agent to ask for a brief itself. A ``matcher`` on postToolUse is
tested against ``tool_name``; the file tools are ``Read``, ``Write`` and ``Edit`` (with
``StrReplace``/``MultiEdit`` in some versions), naming the file ``file_path`` or ``path``.

Cursor also runs the hooks of ``.claude/settings.json`` (its third-party hooks);
``claude_code.parse_event`` leaves those runs silent, so each lesson arrives once.
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
from reliora_git.operations.agents.clients.instructions import BLOCK

NAME = "cursor"
#: Its prompt hook cannot add context (see above): no prompt push.
PROMPT_EVENT: str | None = None
#: Seconds Cursor waits for the hook (its own default is longer; ours gives up far sooner).
HOOK_TIMEOUT = 10
#: Cursor's tools that read or write one file.
FILE_TOOLS = ("Read", "Write", "Edit", "StrReplace", "MultiEdit")
READ_TOOLS = frozenset({"Read"})
#: The fields of ``tool_input`` that may name the file, in the order tried.
PATH_FIELDS = ("file_path", "path", "target_file")
#: Anchored: Cursor's matcher is an unanchored regular expression over the tool name.
FILE_MATCHER = "^(" + "|".join(FILE_TOOLS) + ")$"
KIND_OF = {"sessionStart": "session", "postToolUse": "file"}
RULE_FRONT_MATTER = (
    "---\n"
    "description: Lessons from past work kept in .reliora/ and how to get them before a task "
    "or an edit\n"
    "alwaysApply: true\n"
    "---\n"
)

HOOK_ENTRY: dict[str, Any] = {"command": hook_command(NAME), "timeout": HOOK_TIMEOUT}
TOP = {"version": 1}
HOOKS = files.combined(
    files.flat_hooks(("sessionStart",), HOOK_ENTRY, TOP),
    files.flat_hooks(("postToolUse",), {**HOOK_ENTRY, "matcher": FILE_MATCHER}, TOP),
)
FILES = (
    ClientFile(NAME, ".cursor/hooks.json", *HOOKS),
    ClientFile(
        NAME, ".cursor/rules/reliora.mdc", *files.marked_block(BLOCK, empty=RULE_FRONT_MATTER)
    ),
    ClientFile(NAME, ".cursor/mcp.json", *files.mcp_servers()),
)
SIGNS = (".cursor", ".cursorrules")


def personal_files(root: Path, home: Path) -> tuple[ClientFile, ...]:
    """A personal install: the hooks in ``~/.cursor/hooks.json`` and the server in
    ``~/.cursor/mcp.json``, which Cursor reads for every workspace."""
    base = home / ".cursor"
    return (
        ClientFile(NAME, str(base / "hooks.json"), *HOOKS),
        ClientFile(NAME, str(base / "mcp.json"), *files.mcp_servers()),
    )


def _cwd(data: dict[str, Any], fallback: Path) -> Path:
    """The tool's ``cwd``, else the first workspace root, else ``fallback``."""
    roots = data.get("workspace_roots")
    if "cwd" not in data and isinstance(roots, list) and roots and isinstance(roots[0], str):
        return cwd_of({"cwd": roots[0]}, fallback)
    return cwd_of(data, fallback)


def _tool_input(data: dict[str, Any]) -> dict[str, Any]:
    """``tool_input``: an object, or (for some tools) a JSON string of one."""
    value = data.get("tool_input")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def parse_event(data: dict[str, Any], cwd: Path) -> HookEvent:
    name = data.get("hook_event_name")
    if not isinstance(name, str) or name not in KIND_OF:
        raise HookInputError(f"unknown event {str(name)[:80]}")
    session = text_field(data, "session_id", "conversation_id")
    where = _cwd(data, cwd)
    if name == "sessionStart":
        return HookEvent("session", name, session, where)
    tool = text_field(data, "tool_name")
    files: tuple[str, ...] = ()
    if tool in FILE_TOOLS:
        path = text_field(_tool_input(data), *PATH_FIELDS)
        files = (path,) if path else ()
    return HookEvent("file", name, session, where, files=files, reads=tool in READ_TOOLS)


def render_output(event: HookEvent, text: str) -> str:
    return json.dumps({"additional_context": text})


def personal_todo(root: Path, home: Path) -> list[str]:
    return []  # its user-level files take effect with no step of the person's


def todo(root: Path) -> list[str]:
    return [
        "Cursor runs the project's hooks (.cursor/hooks.json) only in a trusted workspace: "
        "trust the folder when Cursor asks",
        "Cursor asks once, per person, to enable the project's `reliora` MCP server "
        "(.cursor/mcp.json): turn it on in Settings > MCP (cursor-agent: `mcp enable reliora`)",
    ]


#: Its hooks send no transcript the end-of-turn ask could read.
read_transcript = None
past_sessions = None
past_lines = None
