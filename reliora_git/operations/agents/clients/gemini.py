"""Gemini CLI: hooks, the MCP server and ``context.fileName`` in ``.gemini/settings.json``; the
instruction block in ``AGENTS.md`` (shared with Codex). docs/agents.md cites the pages relied on.

Hook input (Gemini CLI docs, Hooks reference): one JSON object with ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``, plus ``source``
(SessionStart), ``prompt`` (BeforeAgent) or ``tool_name``, ``tool_input`` and
``tool_response`` (AfterTool). Output: ``hookSpecificOutput.additionalContext``
reaches the model from SessionStart (prepended to the first prompt when headless),
BeforeAgent (appended to the prompt) and AfterTool (appended to the tool result),
each wrapped in ``<hook_context>``, with ``<`` and ``>`` escaped; from BeforeTool it is
dropped, so the file push runs after the tool. ``AfterAgent`` (once a turn, after the final
answer: ``transcript_path``, a JSONL chat record, and ``stop_hook_active``) takes
``{"decision": "deny", "reason": …}``: Gemini sends the reason to the agent as a new prompt
(the end-of-turn ask, SPEC.md §16). Gemini CLI loads project settings only
in a trusted folder, and reads only ``GEMINI.md`` unless ``context.fileName`` says more.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from reliora_git.operations.agents import files, jsonedit
from reliora_git.operations.agents.clients.base import (
    ClientFile,
    HookEvent,
    HookInputError,
    Noted,
    Step,
    cwd_of,
    hook_command,
    newest,
    text_field,
)
from reliora_git.operations.agents.clients.instructions import BLOCK_EDITOR
from reliora_git.operations.agents.files import Editor
from reliora_git.operations.agents.transcript import (
    kinds,
    objects,
    output_text,
    read_lines,
    reliora_tool,
    tail,
)
from reliora_git.records.errors import RelioraError

NAME = "gemini"
#: The event whose hook carries the prompt push (what `reliora serve` shows).
PROMPT_EVENT: str | None = "BeforeAgent"
SETTINGS_PATH = ".gemini/settings.json"
#: Milliseconds (Gemini's unit) before Gemini gives up on the hook; ours is far shorter.
HOOK_TIMEOUT_MS = 10_000
#: Gemini's tools that read or write files, and the tool_input fields naming them (older
#: releases named read_file's `absolute_path`, read_many_files' `paths`).
FILE_TOOLS: dict[str, tuple[str, ...]] = {
    "read_file": ("file_path", "absolute_path"),
    "read_many_files": ("include", "paths"),
    "write_file": ("file_path",),
    "replace": ("file_path",),
}
READ_TOOLS = frozenset({"read_file", "read_many_files"})
HOOK_EVENTS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", None),
    ("BeforeAgent", None),
    # A regular expression searched in the tool name: anchored, or `mcp_x_read_file` matches.
    ("AfterTool", "^(" + "|".join(FILE_TOOLS) + ")$"),
    ("AfterAgent", None),
)
KIND_OF = {
    "SessionStart": "session",
    "BeforeAgent": "prompt",
    "AfterTool": "file",
    "AfterAgent": "stop",
}
HOOK_ENTRY: dict[str, Any] = {
    "type": "command",
    "command": hook_command(NAME),
    "timeout": HOOK_TIMEOUT_MS,
}
#: read_many_files takes glob patterns: only plain paths name a file we can brief on.
_GLOB = re.compile(r"[*?\[\]{}!]")
#: Headless, Gemini puts the session-start context in front of the prompt BeforeAgent gets.
_LEADING_CONTEXT = re.compile(r"\A(?:\s*<hook_context>.*?</hook_context>)+\s*", re.DOTALL)

# --- context.fileName: AGENTS.md read next to GEMINI.md ----------------------------------------

CONTEXT_PATH = ("context", "fileName")
OUR_FILE = "AGENTS.md"
#: What Gemini reads when fileName is not set; kept when install sets it.
DEFAULT_FILE = "GEMINI.md"


def _context_node(text: str, name: str) -> jsonedit.Node | None:
    files.root_object(text, name)
    files.object_at(text, CONTEXT_PATH[:1], name)
    node = jsonedit.resolve(text, CONTEXT_PATH)
    if node is not None and not isinstance(files.value_of(text, node), (str, list)):
        raise RelioraError(
            "'context.fileName' is neither a file name nor a list of them; fix it, then run again",
            path=name,
            code="invalid_input",
        )
    return node


def _names(text: str, node: jsonedit.Node) -> list[Any]:
    value = files.value_of(text, node)
    return value if isinstance(value, list) else [value]


def _list_of(token: str) -> str:
    """The list install makes of a single name (``token``, as written in the file)."""
    return "[" + json.dumps(OUR_FILE) + ", " + token + "]"


def _from_a_string(text: str, node: jsonedit.Node) -> str | None:
    """The original string token when ``node`` is the list install made of one: the file name
    first, then that token as it was (a list people write would rarely start so)."""
    if node.kind != "array" or len(node.children) != 2:
        return None
    second = node.children[1]
    token = text[second.start : second.end]
    if text[node.start : node.end] != _list_of(token) or second.kind != "value":
        return None
    return token


def context_files(noted: bool = True) -> Editor:
    """``context.fileName`` names AGENTS.md as well as what it named (GEMINI.md by default).

    A list that names AGENTS.md already is left alone. Otherwise install notes that it added
    AGENTS.md (agents/install.py keeps the note in the clone's git directory), and only with
    that note (``noted``) does uninstall take it out again, in the shape install made:
    absent, it became ``["AGENTS.md", "GEMINI.md"]`` (removed whole); a list got AGENTS.md
    appended (the last one is taken out); a single name became ``["AGENTS.md", <that name as
    written>]`` (turned back; a lone "GEMINI.md" comes back as no fileName, the same to
    Gemini). Without the note the setting is a person's, and stays as it is.
    """
    # Never AGENTS.md last, as an appended list has it: uninstall tells the two apart.
    created = [OUR_FILE, DEFAULT_FILE]

    def install(text: str | None, name: str) -> str:
        if text is None:
            return json.dumps({"context": {"fileName": created}}, indent=2) + "\n"
        node = _context_node(text, name)
        if node is None:
            context = files.object_at(text, CONTEXT_PATH[:1], name)
            if context is None:
                root = jsonedit.root(text)
                return jsonedit.append(text, root, {"fileName": created}, key="context")
            return jsonedit.append(text, context, created, key="fileName")
        if OUR_FILE in _names(text, node):
            return text
        if node.kind == "array":
            return jsonedit.append(text, node, OUR_FILE)
        return text[: node.start] + _list_of(text[node.start : node.end]) + text[node.end :]

    def uninstall(text: str | None, name: str) -> str | None:
        if text is None:
            return None
        node = _context_node(text, name)
        if not noted or node is None or node.kind != "array":
            return text
        if OUR_FILE not in _names(text, node):
            return text
        if _names(text, node) == created:
            return files.emptied(files.remove_cascading(text, CONTEXT_PATH, keep=0))
        token = _from_a_string(text, node)
        if token is not None:
            return text[: node.start] + token + text[node.end :]
        index = len(node.children) - 1 - _names(text, node)[::-1].index(OUR_FILE)
        return jsonedit.remove(text, node, index)

    def state(text: str | None, name: str) -> str:
        if text is None:
            return "absent"
        node = _context_node(text, name)
        held = [] if node is None else _names(text, node)
        # Listed, it says nothing of an install: a person may list AGENTS.md themselves.
        return files.NEUTRAL if OUR_FILE in held else "not installed"

    return Editor(install, uninstall, state)


def _lists_agents_md(text: str | None) -> bool:
    node = None if text is None else _context_node(text, SETTINGS_PATH)
    return node is not None and text is not None and OUR_FILE in _names(text, node)


SETTINGS = files.combined(
    files.grouped_hooks(HOOK_EVENTS, HOOK_ENTRY),
    files.mcp_servers(),
    context_files(),
)
#: The same, for an uninstall with no note that install added AGENTS.md to context.fileName.
_SETTINGS_UNNOTED = files.combined(
    files.grouped_hooks(HOOK_EVENTS, HOOK_ENTRY),
    files.mcp_servers(),
    context_files(noted=False),
)
FILES = (
    ClientFile(
        NAME,
        SETTINGS_PATH,
        *SETTINGS,
        noted=Noted(".".join(CONTEXT_PATH), _lists_agents_md, _SETTINGS_UNNOTED.uninstall),
    ),
    ClientFile(NAME, "AGENTS.md", *BLOCK_EDITOR),
)
SIGNS = (".gemini", "GEMINI.md")


def personal_files(root: Path, home: Path) -> tuple[ClientFile, ...]:
    """A personal install: the hooks and the server in ``~/.gemini/settings.json`` (read for
    every project, merged with a project's own); no ``context.fileName``: the instructions
    come with the session-start push."""
    user = files.combined(files.grouped_hooks(HOOK_EVENTS, HOOK_ENTRY), files.mcp_servers())
    return (ClientFile(NAME, str(home / ".gemini" / "settings.json"), *user),)


# --- hook events --------------------------------------------------------------------------------


def tool_files(tool: str, tool_input: Any) -> tuple[str, ...]:
    """The files a file tool's arguments name (plain paths only, never glob patterns)."""
    if tool not in FILE_TOOLS or not isinstance(tool_input, dict):
        return ()
    for field in FILE_TOOLS[tool]:
        value = tool_input.get(field)
        if isinstance(value, str) and value:
            return (value,)
        if isinstance(value, list):
            return tuple(p for p in value if isinstance(p, str) and p and not _GLOB.search(p))
    return ()


def parse_event(data: dict[str, Any], cwd: Path) -> HookEvent:
    name = data.get("hook_event_name")
    if not isinstance(name, str) or name not in KIND_OF:
        raise HookInputError(f"unknown event {str(name)[:80]}")
    tool = text_field(data, "tool_name")
    return HookEvent(
        KIND_OF[name],
        name,
        text_field(data, "session_id"),
        cwd_of(data, cwd),
        prompt=_LEADING_CONTEXT.sub("", text_field(data, "prompt")),
        files=tool_files(tool, data.get("tool_input")) if name == "AfterTool" else (),
        reads=tool in READ_TOOLS,
        transcript_path=text_field(data, "transcript_path"),
        transcript_format=NAME,
        stop_hook_active=data.get("stop_hook_active") is True,
    )


def render_output(event: HookEvent, text: str) -> str:
    if event.kind == "stop":
        return json.dumps({"decision": "deny", "reason": text})
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": text}}
    )


# --- what a person must do ----------------------------------------------------------------------


def trusted(root: Path, rules: dict[str, Any]) -> bool:
    """Whether Gemini's trust rules (``~/.gemini/trustedFolders.json``) trust ``root``: the
    longest rule path that holds it decides; TRUST_PARENT trusts its rule's parent folder."""
    place = Path(os.path.realpath(root))
    best: tuple[int, str] | None = None
    for rule, level in rules.items():
        folder = Path(rule).parent if level == "TRUST_PARENT" else Path(rule)
        folder = Path(os.path.realpath(folder))
        if (place == folder or folder in place.parents) and (best is None or len(rule) > best[0]):
            best = (len(rule), str(level))
    return best is not None and best[1] in ("TRUST_FOLDER", "TRUST_PARENT")


def _trust_rules() -> dict[str, Any]:
    path = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or str(
        Path.home() / ".gemini" / "trustedFolders.json"
    )
    try:
        rules = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return rules if isinstance(rules, dict) else {}


def personal_todo(root: Path, home: Path) -> list[str]:
    return []  # its user-level files take effect with no step of the person's


def todo(root: Path) -> list[str]:
    if trusted(root, _trust_rules()):
        return []
    return [
        "Gemini CLI reads .gemini/settings.json (the hooks, the `reliora` server, AGENTS.md) "
        "only in a trusted folder: trust this folder when Gemini CLI asks, or run /permissions "
        "in a session"
    ]


# --- the transcript ------------------------------------------------------------------------------

_EDITS = {"replace": "file_path", "write_file": "file_path", "edit": "file_path"}
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>", re.DOTALL)


_KINDS = kinds("gemini", "user")


#: A chat kept as one JSON document is read whole up to this size.
MAX_JSON_BYTES = 16 * 1024 * 1024


def past_sessions(top: Path, home: Path) -> list[Path]:
    """This working tree's chats: ``~/.gemini/tmp/<sha256 of the path>/chats/*``."""
    import hashlib

    folder = home / ".gemini" / "tmp" / hashlib.sha256(str(top).encode()).hexdigest() / "chats"
    return newest(p for p in folder.glob("*") if p.suffix in (".json", ".jsonl"))


def past_lines(path: Path, top: Path) -> Iterable[bytes]:
    """A chat file as the lines the reader takes: a ``.jsonl`` as it is, a chat kept as one
    JSON document as its messages (the folder is the hash of ``top``'s own path)."""
    if path.suffix != ".json":
        yield from read_lines(path)
        return
    whole = b"".join(read_lines(path, max_bytes=MAX_JSON_BYTES, max_line=MAX_JSON_BYTES))
    try:
        data = json.loads(whole)
    except (ValueError, RecursionError):
        return
    messages = data.get("messages") if isinstance(data, dict) else None
    for message in messages if isinstance(messages, list) else []:
        yield json.dumps(message).encode()


def read_transcript(lines: Iterable[bytes]) -> Iterator[Step]:
    seen: set[str] = set()
    for entry in objects(lines, _KINDS):
        update = entry.get("$set")
        messages = update.get("messages") if isinstance(update, dict) else [entry]
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict):
                yield from _message(message, seen)


def _message(message: dict[str, Any], seen: set[str]) -> Iterator[Step]:
    if message.get("type") == "user":
        parts = message.get("displayContent") or message.get("content")
        if isinstance(parts, list) and any(
            isinstance(p, dict) and "functionResponse" in p for p in parts
        ):
            return  # a tool result sent back to the model
        text = _HOOK_CONTEXT.sub("", output_text(parts)).strip()
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
        step = _call(call)
        if step is not None:
            yield step


def _call(call: dict[str, Any]) -> Step | None:
    name, arguments = str(call.get("name")), call.get("args")
    arguments = arguments if isinstance(arguments, dict) else {}
    status = call.get("status")
    if name == "run_shell_command":
        command = arguments.get("command")
        if not isinstance(command, str):
            return None
        output = _output(call.get("result"))
        code = _EXIT_CODE.search(output)
        failed = status == "error" or (code is not None and code.group(1) != "0")
        return Step("run", command, failed=failed, output=tail(output) if failed else "")
    if status != "success":
        return None
    if name in _EDITS:
        file = arguments.get(_EDITS[name])
        return Step("edit", files=(file,)) if isinstance(file, str) and file else None
    return reliora_tool(name, arguments)


def _output(result: Any) -> str:
    texts = []
    for part in result if isinstance(result, list) else []:
        call = part.get("functionResponse") if isinstance(part, dict) else None
        response = call.get("response") if isinstance(call, dict) else None
        if isinstance(response, dict):
            texts.append(str(response.get("output") or response.get("error") or ""))
    return "\n".join(texts)
