"""An agent session's transcript, read into the few steps the end-of-turn ask needs (SPEC §16).

Each client writes its own transcript (``transcript_path`` in its hook events):

* Claude Code: JSONL, one entry a line; ``type: "assistant"`` entries hold the model's
  ``tool_use`` blocks (``Bash``, ``Edit``…), ``type: "user"`` entries the ``tool_result``
  blocks (``is_error``) and the person's prompts (hook text is ``isMeta``);
* Codex: a JSONL rollout; ``event_msg`` entries of ``item_completed`` hold each
  ``CommandExecution`` (command, ``exit_code``, output), ``FileChange`` and ``UserMessage``
  (older releases: ``exec_command_end``, ``patch_apply_end``, ``user_message``);
* Gemini CLI: JSONL; ``type: "gemini"`` messages hold ``toolCalls`` (``run_shell_command``
  with ``Exit Code: N`` in its output, ``replace``, ``write_file``), ``type: "user"``
  messages the prompts; a message is written again, whole, as it grows.

Reading is streaming, bounded and linear: at most :data:`MAX_BYTES` from the end of the
file, a line longer than :data:`MAX_LINE` skipped without being kept, lines that cannot
matter skipped before they are parsed, and bad JSON skipped. A missing or unreadable file,
or one that is not a regular file, reads as no steps.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

#: The most of a transcript read: its end, where the turn that just ended is.
MAX_BYTES = 16 * 1024 * 1024
#: A longer line (a huge tool output) is skipped whole.
MAX_LINE = 4 * 1024 * 1024
CHUNK = 1024 * 1024
#: The end of a failed command's output kept for its error line.
OUTPUT_TAIL = 4000
#: A reliora MCP tool, however the client prefixes it (mcp__reliora__record, mcp_reliora_record).
_RELIORA_TOOL = re.compile(r"reliora(?:__|_|\.)(record|update|feedback)$", re.IGNORECASE)


@dataclass(frozen=True)
class Step:
    """One thing that happened in a session, in order.

    kind: ``run`` (a shell command; ``failed`` and the ``output`` tail when it failed),
    ``edit`` (``files`` changed), ``prompt`` (the person's words), ``record`` (a record
    saved or updated through an MCP tool), ``feedback`` (``files`` holds the lesson ids).
    """

    kind: str
    text: str = ""
    failed: bool = False
    output: str = ""
    files: tuple[str, ...] = ()


def read_lines(path: Path, max_bytes: int = MAX_BYTES, max_line: int = MAX_LINE) -> Iterator[bytes]:
    """The complete lines of the last ``max_bytes`` of ``path``; nothing when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        handle = os.fdopen(fd, "rb") if stat.S_ISREG(info.st_mode) else None
    except OSError:
        handle = None
    if handle is None:  # a folder, a FIFO or a device would fail, block or never end
        os.close(fd)
        return
    with handle:
        try:
            yield from _lines(handle, info.st_size, max_bytes, max_line)
        except OSError:
            return


def _lines(handle: BinaryIO, size: int, max_bytes: int, max_line: int) -> Iterator[bytes]:
    """The lines of ``handle`` (``size`` bytes): the last ``max_bytes``, none longer than
    ``max_line``. One pass; a line held only while it is shorter than ``max_line``."""
    partial = size > max_bytes
    if partial:
        handle.seek(size - max_bytes)
    left = max_bytes
    pending = b""
    skipping = partial  # the first line of a tail is cut: skip it
    while left > 0:
        chunk = handle.read(min(CHUNK, left))
        if not chunk:
            break
        left -= len(chunk)
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            if not skipping:
                line = pending + chunk[start:end] if pending else chunk[start:end]
                if line:
                    yield line
            pending, skipping, start = b"", False, end + 1
        if not skipping:
            pending += chunk[start:]
            if len(pending) > max_line:
                pending, skipping = b"", True
    if pending and not skipping:
        yield pending  # a last line without its newline (the client may be writing it)


def steps(path: Path, reader: str) -> list[Step]:
    """The steps of the transcript at ``path`` in ``reader``'s format ([] for an unknown one)."""
    parse = READERS.get(reader)
    return [] if parse is None else list(parse(read_lines(path)))


def _kinds(*names: str) -> re.Pattern[bytes]:
    """A line holding ``"type": NAME`` for one of ``names`` (compact or spaced JSON)."""
    return re.compile(rb'"type":\s*"(?:' + "|".join(names).encode() + rb')"')


def _objects(lines: Iterable[bytes], kinds: re.Pattern[bytes]) -> Iterator[dict[str, Any]]:
    """The JSON objects of the lines that hold one of ``kinds`` (the rest are not parsed)."""
    for line in lines:
        if kinds.search(line) is None:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            yield value


def _text(value: Any) -> str:
    """A tool output as text: a string, or the text of a list of content blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(part.get("text")) for part in value if isinstance(part, dict))
    return ""


def _tail(text: str) -> str:
    return text[-OUTPUT_TAIL:]


def reliora_tool(name: str, arguments: Any) -> Step | None:
    """The step a call of reliora's own MCP tool ``record``, ``update`` or ``feedback`` is."""
    match = _RELIORA_TOOL.search(name)
    if match is None:
        return None
    if match.group(1).lower() == "feedback":
        lesson = arguments.get("id") if isinstance(arguments, dict) else None
        return Step("feedback", files=(lesson,)) if isinstance(lesson, str) else None
    return Step("record")


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value


# --- Claude Code --------------------------------------------------------------------------------

_CLAUDE_EDITS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path"}
_CLAUDE_EDITS["NotebookEdit"] = "notebook_path"
#: What Claude Code writes as a user entry that the person did not type.
_CLAUDE_NOT_TYPED = ("<command-", "<local-command", "Caveat:", "<system-reminder>", "<bash-")


_CLAUDE_KINDS = _kinds("assistant", "user")


def claude_code(lines: Iterable[bytes]) -> Iterator[Step]:
    calls: dict[str, tuple[str, Any]] = {}
    for entry in _objects(lines, _CLAUDE_KINDS):
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
                yield from _claude_prompt(content)
                continue
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    yield from _claude_prompt(str(block.get("text") or ""))
                elif block.get("type") == "tool_result":
                    call = calls.pop(str(block.get("tool_use_id")), None)
                    if call is not None:
                        yield from _claude_result(*call, block)


def _claude_prompt(text: str) -> Iterator[Step]:
    if text.strip() and not text.lstrip().startswith(_CLAUDE_NOT_TYPED):
        yield Step("prompt", text)


def _claude_result(name: str, arguments: Any, block: dict[str, Any]) -> Iterator[Step]:
    failed = block.get("is_error") is True
    arguments = arguments if isinstance(arguments, dict) else {}
    if name == "Bash":
        command = arguments.get("command")
        if isinstance(command, str):
            output = _tail(_text(block.get("content"))) if failed else ""
            yield Step("run", command, failed=failed, output=output)
    elif name in _CLAUDE_EDITS and not failed:
        file = arguments.get(_CLAUDE_EDITS[name])
        if isinstance(file, str) and file:
            yield Step("edit", files=(file,))
    elif not failed and (step := reliora_tool(name, arguments)) is not None:
        yield step


# --- Codex --------------------------------------------------------------------------------------

_SHELLS = {"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"}


def shell_command(command: Any) -> str:
    """A command Codex ran, as the line the model wrote (``bash -lc LINE`` gives LINE)."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(part, str) for part in command):
        return ""
    if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-c", "-lc"):
        return str(command[2])
    return " ".join(command)


_CODEX_KINDS = _kinds("event_msg", "response_item")


def codex(lines: Iterable[bytes]) -> Iterator[Step]:
    seen: set[str] = set()
    for entry in _objects(lines, _CODEX_KINDS):
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            continue
        what = payload.get("type")
        if entry.get("type") == "response_item":
            if what == "function_call":  # only reliora's MCP tools matter here
                step = reliora_tool(str(payload.get("name")), _arguments(payload.get("arguments")))
                if step is not None:
                    yield step
            continue
        item = payload.get("item") if what == "item_completed" else payload
        if not isinstance(item, dict):
            continue
        key = str(item.get("id") or item.get("call_id") or "")
        if key and key in seen:
            continue
        step = _codex_item(item, str(item.get("type") if what == "item_completed" else what))
        if step is not None:
            seen.add(key)
            yield step


def _codex_item(item: dict[str, Any], kind: str) -> Step | None:
    if kind in ("CommandExecution", "exec_command_end"):
        command = shell_command(item.get("command"))
        if not command:
            return None
        code = item.get("exit_code")
        failed = (isinstance(code, int) and code != 0) or item.get("status") == "failed"
        output = item.get("aggregated_output") or item.get("stderr") or ""
        return Step("run", command, failed=failed, output=_tail(str(output)) if failed else "")
    if kind in ("FileChange", "patch_apply_end"):
        changes = item.get("changes")
        if item.get("status") == "failed" or item.get("success") is False:
            return None
        files = tuple(str(p) for p in changes) if isinstance(changes, dict) else ()
        return Step("edit", files=files) if files else None
    if kind in ("UserMessage", "user_message"):
        text = _text(item.get("content")) or str(item.get("message") or "")
        return Step("prompt", text) if text.strip() else None
    if kind == "McpToolCall" and str(item.get("server")) == "reliora":
        return reliora_tool(f"reliora__{item.get('tool')}", _arguments(item.get("arguments")))
    return None


# --- Gemini CLI ---------------------------------------------------------------------------------

_GEMINI_EDITS = {"replace": "file_path", "write_file": "file_path", "edit": "file_path"}
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>", re.DOTALL)


_GEMINI_KINDS = _kinds("gemini", "user")


def gemini(lines: Iterable[bytes]) -> Iterator[Step]:
    seen: set[str] = set()
    for entry in _objects(lines, _GEMINI_KINDS):
        update = entry.get("$set")
        messages = update.get("messages") if isinstance(update, dict) else [entry]
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict):
                yield from _gemini_message(message, seen)


def _gemini_message(message: dict[str, Any], seen: set[str]) -> Iterator[Step]:
    if message.get("type") == "user":
        parts = message.get("displayContent") or message.get("content")
        if isinstance(parts, list) and any(
            isinstance(p, dict) and "functionResponse" in p for p in parts
        ):
            return  # a tool result sent back to the model
        text = _HOOK_CONTEXT.sub("", _text(parts)).strip()
        if text and not text.startswith("<session_context>"):
            yield Step("prompt", text)
        return
    for call in message.get("toolCalls") or []:
        if not isinstance(call, dict) or call.get("status") is None:
            continue  # not run yet: the message is written again when it is
        key = str(call.get("id"))
        if key in seen:
            continue
        seen.add(key)
        step = _gemini_call(call)
        if step is not None:
            yield step


def _gemini_call(call: dict[str, Any]) -> Step | None:
    name, arguments = str(call.get("name")), call.get("args")
    arguments = arguments if isinstance(arguments, dict) else {}
    status = call.get("status")
    if name == "run_shell_command":
        command = arguments.get("command")
        if not isinstance(command, str):
            return None
        output = _gemini_output(call.get("result"))
        code = _EXIT_CODE.search(output)
        failed = status == "error" or (code is not None and code.group(1) != "0")
        return Step("run", command, failed=failed, output=_tail(output) if failed else "")
    if status != "success":
        return None
    if name in _GEMINI_EDITS:
        file = arguments.get(_GEMINI_EDITS[name])
        return Step("edit", files=(file,)) if isinstance(file, str) and file else None
    return reliora_tool(name, arguments)


def _gemini_output(result: Any) -> str:
    texts = []
    for part in result if isinstance(result, list) else []:
        call = part.get("functionResponse") if isinstance(part, dict) else None
        response = call.get("response") if isinstance(call, dict) else None
        if isinstance(response, dict):
            texts.append(str(response.get("output") or response.get("error") or ""))
    return "\n".join(texts)


READERS: dict[str, Callable[[Iterable[bytes]], Iterator[Step]]] = {
    "claude-code": claude_code,
    "codex": codex,
    "gemini": gemini,
}
