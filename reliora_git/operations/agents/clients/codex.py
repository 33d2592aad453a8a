"""Codex: hooks in ``.codex/hooks.json``, the server in ``.codex/config.toml``, the block in
``AGENTS.md``. docs/agents.md cites the pages relied on; the real Codex is tested against a
mock model (tests/real_clients/test_codex.py).

Hook input (Codex docs, Hooks): one JSON object with ``hook_event_name``, ``session_id``,
``cwd`` (the tool's working folder for a tool event), plus ``prompt`` (UserPromptSubmit) or
``tool_name`` and ``tool_input`` (PreToolUse). Codex reads files through its shell tool
(``tool_name: "Bash"``, ``tool_input.command``: the command line) and edits through
``apply_patch`` (``tool_input.command``: the patch), so the paths come from
:mod:`shellpaths`. Output: ``hookSpecificOutput.additionalContext``, which Codex adds to the
model's input as a developer message, for those three events. ``Stop`` (the end of a turn:
``transcript_path``, the rollout JSONL, and ``stop_hook_active``) takes
``{"decision": "block", "reason": …}``: Codex goes on with the reason as a new prompt (the
end-of-turn ask, SPEC.md §16).

Codex loads a project's ``.codex/`` only in a project the person trusts, and runs its hooks
only once the person has reviewed them (:func:`todo`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from reliora_git.operations.agents import files, shellpaths
from reliora_git.operations.agents.clients.base import (
    ClientFile,
    HookEvent,
    HookInputError,
    Step,
    cwd_of,
    hook_command,
    newest,
    text_field,
)
from reliora_git.operations.agents.clients.instructions import BLOCK_EDITOR
from reliora_git.operations.agents.transcript import (
    arguments_of,
    kinds,
    objects,
    output_text,
    read_head,
    read_lines,
    reliora_tool,
    tail,
)
from reliora_git.records.errors import RelioraError
from reliora_git.records.tomltext import TomlError
from reliora_git.records.tomltext import loads as toml_loads

NAME = "codex"
#: The event whose hook carries the prompt push (what `reliora serve` shows).
PROMPT_EVENT: str | None = "UserPromptSubmit"
#: Seconds Codex waits for the hook (its own limit; ours is far shorter).
HOOK_TIMEOUT = 10
#: Codex's tool names in hook input: every shell command is "Bash"; edits are "apply_patch".
SHELL_TOOL = "Bash"
PATCH_TOOL = "apply_patch"
HOOK_EVENTS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PreToolUse", f"{SHELL_TOOL}|{PATCH_TOOL}"),
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

#: Codex sends its first request once the optional MCP servers are up or this grace is over
#: (its default, about 1.5 s, is shorter than `reliora mcp` takes to start on a busy
#: machine). A server that fails to start ends the wait at once; only a hung one costs it.
GRACE_KEY = "mcp_optional_startup_grace_ms"
GRACE_MS = 10_000
SERVER_HEADER = "mcp_servers.reliora"
SERVER = files.MCP_SERVER
#: Table header lines tried as the place for the block before giving up (a file has few).
MAX_PLACES = 64

HOOKS = files.grouped_hooks(HOOK_EVENTS, HOOK_ENTRY)


# --- .codex/config.toml -----------------------------------------------------------------------
#
# The grace is a top-level key, and top-level keys must come before the first table: the block
# goes right before the file's first table (after its own top-level keys), or at the end of a
# file without tables. Every placement is checked by parsing the result: it must read as the
# file did, plus our entries, or nothing is written.


def _block(with_grace: bool) -> str:
    lines = [files.TOML_BEGIN]
    if with_grace:
        lines += [
            "# Codex waits this long for the reliora MCP server before the first request",
            f"{GRACE_KEY} = {GRACE_MS}",
            "",
        ]
    lines += [
        f"[{SERVER_HEADER}]",
        f"command = {json.dumps(SERVER['command'])}",
        f"args = {json.dumps(SERVER['args'])}",
        files.TOML_END,
    ]
    return "\n".join(lines) + "\n"


def _parse(text: str, name: str) -> dict[str, Any]:
    try:
        document: dict[str, Any] = toml_loads(text)
    except TomlError as error:
        raise RelioraError(
            f"is not valid TOML ({error}); fix it, then run again",
            path=name,
            code="invalid_input",
        ) from None
    return document


def _server_of(document: dict[str, Any]) -> Any:
    servers = document.get("mcp_servers")
    return servers.get("reliora") if isinstance(servers, dict) else None


def _with_ours(document: dict[str, Any], with_grace: bool) -> dict[str, Any]:
    merged = dict(document)
    if with_grace:
        merged[GRACE_KEY] = GRACE_MS
    servers = merged.get("mcp_servers")
    merged["mcp_servers"] = {**(servers if isinstance(servers, dict) else {}), "reliora": SERVER}
    return merged


def _reads_as(text: str, expected: dict[str, Any]) -> bool:
    try:
        document: dict[str, Any] = toml_loads(text)
    except TomlError:
        return False
    return document == expected


def _table_lines(text: str) -> list[int]:
    """Offsets of the lines that may open a table (a `[` first; checked by parsing later)."""
    offsets = []
    offset = 0
    for line in text.split("\n"):
        if line.lstrip(" \t").startswith("["):
            offsets.append(offset)
            if len(offsets) == MAX_PLACES:
                break
        offset += len(line) + 1
    return offsets


def _without_block(text: str, span: tuple[int, int]) -> str:
    """``text`` without the block at ``span`` and the line break install put next to it."""
    before, after = text[: span[0]], text[span[1] :]
    for newline in ("\r\n", "\n"):
        if after.startswith(newline):  # placed before a table, a line break after it
            return before + after[len(newline) :]
        if after == "" and before.endswith(newline):  # appended after a line break
            return before[: -len(newline)]
    return before + after


def install_config(text: str | None, name: str) -> str:
    if not text:
        return _block(with_grace=True)
    span = files.block_span(text, name, files.TOML_BEGIN, files.TOML_END, syntax="toml")
    if span is not None:  # ours already: brought up to date in place
        outside = _parse(text[: span[0]] + text[span[1] :], name)
        updated = text[: span[0]] + _block(GRACE_KEY not in outside) + text[span[1] :]
        if not _reads_as(updated, _with_ours(outside, GRACE_KEY not in outside)):
            raise RelioraError(
                "has the reliora block where it no longer fits; remove it by hand, then run again",
                path=name,
                code="invalid_input",
            )
        return updated
    document = _parse(text, name)
    if _server_of(document) is not None:
        return text  # a `reliora` server is there already (perhaps with --repo): kept
    with_grace = GRACE_KEY not in document
    block = _block(with_grace)
    expected = _with_ours(document, with_grace)
    newline = "\r\n" if "\r\n" in text else "\n"
    for offset in _table_lines(text):
        placed = text[:offset] + block + newline + text[offset:]
        if _reads_as(placed, expected):
            return placed
    placed = text + newline + block
    if _reads_as(placed, expected):
        return placed
    raise RelioraError(
        f"has no place where [{SERVER_HEADER}] fits; add it by hand (docs/agents.md)",
        path=name,
        code="invalid_input",
    )


def uninstall_config(text: str | None, name: str) -> str | None:
    if text is None:
        return None
    span = files.block_span(text, name, files.TOML_BEGIN, files.TOML_END, syntax="toml")
    if span is None:
        return text
    rest = _without_block(text, span)
    return rest or None


def config_state(text: str | None, name: str) -> str:
    if text is None:
        return "absent"
    span = files.block_span(text, name, files.TOML_BEGIN, files.TOML_END, syntax="toml")
    if span is None:
        server = _server_of(_parse(text, name))
        if server is None:
            return "not installed"
        return "installed" if files.is_our_server(server) else "another 'reliora' server"
    outside = _parse(text[: span[0]] + text[span[1] :], name)
    held = text[span[0] : span[1]].replace("\r\n", "\n")
    return "installed" if held == _block(GRACE_KEY not in outside) else "outdated"


CONFIG = files.Editor(install_config, uninstall_config, config_state)
FILES = (
    ClientFile(NAME, ".codex/hooks.json", *HOOKS),
    ClientFile(NAME, ".codex/config.toml", *CONFIG),
    ClientFile(NAME, "AGENTS.md", *BLOCK_EDITOR),
)
SIGNS = ("AGENTS.md", ".codex")


def personal_files(root: Path, home: Path) -> tuple[ClientFile, ...]:
    """A personal install: the same hooks and server in ``$CODEX_HOME`` (``~/.codex``), which
    Codex reads for every project; the hook acts only where a store exists."""
    base = Path(os.environ.get("CODEX_HOME") or home / ".codex")
    return (
        ClientFile(NAME, str(base / "hooks.json"), *HOOKS),
        ClientFile(NAME, str(base / "config.toml"), *CONFIG),
    )


# --- hook events ------------------------------------------------------------------------------


def parse_event(data: dict[str, Any], cwd: Path) -> HookEvent:
    name = data.get("hook_event_name")
    if not isinstance(name, str) or name not in KIND_OF:
        raise HookInputError(f"unknown event {str(name)[:80]}")
    files: tuple[str, ...] = ()
    reads = False
    tool_input = data.get("tool_input")
    command = text_field(tool_input, "command") if isinstance(tool_input, dict) else ""
    tool = text_field(data, "tool_name")
    if tool == PATCH_TOOL:
        files = shellpaths.patch_paths(command)
    elif tool == SHELL_TOOL:
        files = shellpaths.read_paths(command)
        reads = bool(files)
        if shellpaths.is_patch(command):  # `apply_patch <<'EOF'` run through the shell
            files = tuple(dict.fromkeys(files + shellpaths.patch_paths(command)))
    return HookEvent(
        KIND_OF[name],
        name,
        text_field(data, "session_id"),
        cwd_of(data, cwd),
        prompt=text_field(data, "prompt"),
        files=files,
        reads=reads,
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


# --- what a person does -----------------------------------------------------------------------


def todo(root: Path) -> list[str]:
    steps = []
    if not _trusted(root):
        steps.append(
            "Codex reads .codex/ (the hooks and the reliora MCP server) only in a project you "
            "trust: answer yes when Codex asks whether to trust this folder (headless: run "
            "`codex exec --trust` here once)"
        )
    if not hooks_trusted(root / ".codex" / "hooks.json"):
        steps.append(
            "Codex runs a project's hooks only after you review them: run /hooks in a Codex "
            "session here and trust the four `reliora hook` hooks (again after "
            ".codex/hooks.json changes)"
        )
    return steps


def personal_todo(root: Path, home: Path) -> list[str]:
    hooks = Path(os.environ.get("CODEX_HOME") or home / ".codex") / "hooks.json"
    if hooks_trusted(hooks):
        return []
    return [
        f"Codex runs your user-level hooks ({hooks}) only after you review them: run /hooks "
        "in a Codex session and trust the four `reliora hook` hooks (until then Codex skips "
        "them without a word)"
    ]


def hooks_trusted(hooks: Path) -> bool:
    """Whether the person's Codex config records trust for each of our hooks in ``hooks``.

    Codex keys a hook as ``<hooks.json path>:<event in snake case>:<group>:<hook>`` and keeps
    the hash it trusted under ``[hooks.state."<key>"]``. The hash is Codex's own: a trust
    recorded for an older version of the hooks counts here, and Codex asks again.
    """
    try:
        listed = json.loads(hooks.read_text("utf-8")).get("hooks")
        config = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"
        state = toml_loads(config.read_text("utf-8")).get("hooks", {}).get("state", {})
    except (OSError, UnicodeDecodeError, ValueError, TomlError, AttributeError):
        return False
    if not isinstance(listed, dict) or not isinstance(state, dict):
        return False
    keys = []
    for event, _ in HOOK_EVENTS:
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in event).lstrip("_")
        for g, group in enumerate(listed.get(event) or []):
            for h, hook in enumerate(group.get("hooks") or [] if isinstance(group, dict) else []):
                if isinstance(hook, dict) and files.HOOK_MARK in str(hook.get("command")):
                    keys.append(f":{snake}:{g}:{h}")
    places = {str(hooks), os.path.realpath(hooks)}
    return bool(keys) and all(
        any(isinstance(state.get(place + key), dict) for place in places) for key in keys
    )


def _trusted(root: Path) -> bool:
    """Whether the person's Codex config trusts ``root`` (``[projects."<path>"]``)."""
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    try:
        projects = toml_loads((home / "config.toml").read_text("utf-8")).get("projects")
    except (OSError, UnicodeDecodeError, TomlError):
        return False
    if not isinstance(projects, dict):
        return False
    for path in {str(root), str(root.resolve())}:
        entry = projects.get(path)
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
    return False


# --- the transcript ------------------------------------------------------------------------------

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


_KINDS = kinds("event_msg", "response_item")


#: Bytes of a rollout's start read to find its working tree.
HEAD_BYTES = 64 * 1024


def past_sessions(top: Path, home: Path) -> list[Path]:
    """This working tree's sessions: ``$CODEX_HOME`` or ``~/.codex``,
    ``sessions/**/rollout-*.jsonl`` whose first line (``session_meta``) names it as ``cwd``."""
    base = Path(os.environ.get("CODEX_HOME") or home / ".codex") / "sessions"
    if not base.is_dir():
        return []
    # Filtered while walking, newest first: 200 newer sessions of other projects do not
    # crowd this working tree's out.
    return newest(base.rglob("rollout-*.jsonl"), keep=lambda path: _rollout_cwd(path) == top)


def _rollout_cwd(path: Path) -> Path | None:
    first = read_head(path, HEAD_BYTES).split(b"\n", 1)[0]
    try:
        payload = json.loads(first).get("payload")
    except (ValueError, AttributeError, RecursionError):
        return None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return Path(cwd) if isinstance(cwd, str) and cwd else None


def past_lines(path: Path, top: Path) -> Iterable[bytes]:
    return read_lines(path)  # the whole rollout is of one working tree (its session_meta)


def read_transcript(lines: Iterable[bytes]) -> Iterator[Step]:
    seen: set[str] = set()
    for entry in objects(lines, _KINDS):
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            continue
        what = payload.get("type")
        if entry.get("type") == "response_item":
            if what == "function_call":  # only reliora's MCP tools matter here
                arguments = arguments_of(payload.get("arguments"))
                step = reliora_tool(str(payload.get("name")), arguments)
                if step is not None:
                    yield step
            continue
        item = payload.get("item") if what == "item_completed" else payload
        if not isinstance(item, dict):
            continue
        key = str(item.get("id") or item.get("call_id") or "")
        if key and key in seen:
            continue
        step = _item(item, str(item.get("type") if what == "item_completed" else what))
        if step is not None:
            seen.add(key)
            yield step


def _item(item: dict[str, Any], kind: str) -> Step | None:
    if kind in ("CommandExecution", "exec_command_end"):
        command = shell_command(item.get("command"))
        if not command:
            return None
        code = item.get("exit_code")
        failed = (isinstance(code, int) and code != 0) or item.get("status") == "failed"
        output = item.get("aggregated_output") or item.get("stderr") or ""
        return Step("run", command, failed=failed, output=tail(str(output)) if failed else "")
    if kind in ("FileChange", "patch_apply_end"):
        changes = item.get("changes")
        if item.get("status") == "failed" or item.get("success") is False:
            return None
        files = tuple(str(p) for p in changes) if isinstance(changes, dict) else ()
        return Step("edit", files=files) if files else None
    if kind in ("UserMessage", "user_message"):
        text = output_text(item.get("content")) or str(item.get("message") or "")
        return Step("prompt", text) if text.strip() else None
    if kind == "McpToolCall" and str(item.get("server")) == "reliora":
        return reliora_tool(f"reliora__{item.get('tool')}", arguments_of(item.get("arguments")))
    return None
