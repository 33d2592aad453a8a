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
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from reliora_git.operations.agents import files
from reliora_git.operations.agents.clients.base import (
    ClientFile,
    HookEvent,
    HookInputError,
    Step,
    cwd_of,
    hook_command,
    newest,
    text_field,
    within,
)
from reliora_git.operations.agents.clients.instructions import BLOCK_EDITOR
from reliora_git.operations.agents.transcript import (
    kinds,
    objects,
    output_text,
    read_lines,
    reliora_tool,
    tail,
)

NAME = "claude-code"
#: The event whose hook carries the prompt push (what `reliora serve` shows).
PROMPT_EVENT: str | None = "UserPromptSubmit"
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


def personal_files(root: Path, home: Path) -> tuple[ClientFile, ...]:
    """A personal install (SPEC.md §14.3): the hooks in ``.claude/settings.local.json``
    (this clone only; kept out of git by ``.git/info/exclude``) and the server in the local
    MCP scope of ``~/.claude.json`` (``projects.<this repository>.mcpServers``)."""
    config = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home)
    local = files.mcp_servers(key=("projects", str(root), "mcpServers"))
    return (
        ClientFile(NAME, ".claude/settings.local.json", *SETTINGS),
        ClientFile(NAME, str(config / ".claude.json"), *local),
    )


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


def personal_todo(root: Path, home: Path) -> list[str]:
    return []  # its user-level files take effect with no step of the person's


def todo(root: Path) -> list[str]:
    return [
        "Claude Code asks once, per person, to approve the project's `reliora` MCP server "
        "(.mcp.json): answer yes, or run /mcp in a session"
    ]


# --- the transcript ------------------------------------------------------------------------------

_EDITS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path"}
_EDITS["NotebookEdit"] = "notebook_path"
#: What Claude Code writes as a user entry that the person did not type.
_NOT_TYPED = ("<command-", "<local-command", "Caveat:", "<system-reminder>", "<bash-")


_KINDS = kinds("assistant", "user")


def past_sessions(top: Path, home: Path) -> list[Path]:
    """This working tree's sessions: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``,
    ``projects/<the path, every character but a letter or digit written ->/*.jsonl``."""
    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    folder = base / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(top))
    return newest(folder.glob("*.jsonl")) if folder.is_dir() else []


def past_lines(path: Path, top: Path) -> Iterator[bytes]:
    """The session's lines that happened in ``top`` or inside it. Claude Code names the folder
    of a project by writing every character but a letter or digit as ``-``: ``/w/a-b`` and
    ``/w/a/b`` share one, so each line's ``cwd`` decides (a line without one goes with the
    line before it)."""
    inside = False
    for line in read_lines(path):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and "cwd" in data:
            inside = within(data["cwd"], top)
        if inside:
            yield line


def read_transcript(lines: Iterable[bytes]) -> Iterator[Step]:
    calls: dict[str, tuple[str, Any]] = {}
    for entry in objects(lines, _KINDS):
        kind, message = entry.get("type"), entry.get("message")
        if entry.get("isSidechain") or not isinstance(message, dict):
            continue
        content = message.get("content")
        if kind == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    calls[str(block.get("id"))] = (str(block.get("name")), block.get("input"))
        elif kind == "user" and not entry.get("isMeta"):
            if isinstance(content, str):
                yield from _prompt(content)
                continue
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    yield from _prompt(str(block.get("text") or ""))
                elif block.get("type") == "tool_result":
                    call = calls.pop(str(block.get("tool_use_id")), None)
                    if call is not None:
                        yield from _result(*call, block)


def _prompt(text: str) -> Iterator[Step]:
    if text.strip() and not text.lstrip().startswith(_NOT_TYPED):
        yield Step("prompt", text)


def _result(name: str, arguments: Any, block: dict[str, Any]) -> Iterator[Step]:
    failed = block.get("is_error") is True
    arguments = arguments if isinstance(arguments, dict) else {}
    if name == "Bash":
        command = arguments.get("command")
        if isinstance(command, str):
            output = tail(output_text(block.get("content"))) if failed else ""
            yield Step("run", command, failed=failed, output=output)
    elif name in _EDITS and not failed:
        file = arguments.get(_EDITS[name])
        if isinstance(file, str) and file:
            yield Step("edit", files=(file,))
    elif not failed and (step := reliora_tool(name, arguments)) is not None:
        yield step
