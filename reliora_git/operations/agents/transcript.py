"""An agent session's transcript, read into the few steps the end-of-turn ask needs (SPEC §16).

Each client writes its own transcript (``transcript_path`` in its hook events), and its
module in clients/ reads it (``read_transcript``); what they share is here:

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
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from reliora_git.operations.agents.clients.base import Step

#: The most of a transcript read: its end, where the turn that just ended is.
MAX_BYTES = 16 * 1024 * 1024
#: A longer line (a huge tool output) is skipped whole.
MAX_LINE = 4 * 1024 * 1024
CHUNK = 1024 * 1024
#: The end of a failed command's output kept for its error line.
OUTPUT_TAIL = 4000
#: A reliora MCP tool, however the client prefixes it (mcp__reliora__record, mcp_reliora_record).
_RELIORA_TOOL = re.compile(r"reliora(?:__|_|\.)(record|update|feedback)$", re.IGNORECASE)


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


def read_head(path: Path, max_bytes: int) -> bytes:
    """At most the first ``max_bytes`` of a regular file (b"" for anything else): a FIFO, a
    device or a link to one in a session folder must neither block nor be read for ever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, max_bytes)
    except OSError:
        return b""
    finally:
        os.close(fd)


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


def steps(path: Path, client: str) -> list[Step]:
    """The steps of the transcript at ``path`` in ``client``'s format ([] for a client that
    keeps none, or an unknown one): each client module reads its own (``read_transcript``)."""
    from reliora_git.operations.agents import clients

    try:
        parse = clients.load(client).read_transcript
    except KeyError:
        return []
    return [] if parse is None else list(parse(read_lines(path)))


def kinds(*names: str) -> re.Pattern[bytes]:
    """A line holding ``"type": NAME`` for one of ``names`` (compact or spaced JSON)."""
    return re.compile(rb'"type":\s*"(?:' + "|".join(names).encode() + rb')"')


def objects(lines: Iterable[bytes], kinds: re.Pattern[bytes]) -> Iterator[dict[str, Any]]:
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


def output_text(value: Any) -> str:
    """A tool output as text: a string, or the text of a list of content blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(output_text(part.get("text")) for part in value if isinstance(part, dict))
    return ""


def tail(text: str) -> str:
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


def arguments_of(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value
