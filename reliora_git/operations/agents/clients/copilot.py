"""GitHub Copilot (CLI and cloud agent): native hooks in ``.github/hooks/reliora.json``, the MCP
server in ``.mcp.json``, the block in ``.github/copilot-instructions.md``.

Hooks (docs.github.com/en/copilot/reference/hooks-reference and
.../copilot-cli-reference/cli-hooks-reference): ``{"version": 1, "hooks": {event: [{"type":
"command", "bash": ..., "timeoutSec": ...}]}}`` in any ``.github/hooks/*.json``, the one hook
file the cloud agent reads too. The input is one JSON object without the event's name:
``sessionId``, ``timestamp``, ``cwd``, plus ``source`` and ``initialPrompt`` (sessionStart),
``prompt`` (userPromptSubmitted) or ``toolName``, ``toolArgs`` and ``toolResult``
(postToolUse). A top-level ``additionalContext`` in the output reaches the model from all three
(Copilot CLI 1.0.102, checked against a mock model: a user message at session start, a
``<system_reminder>`` after the prompt, appended to the tool's result after a tool).
postToolUse rather than preToolUse: it runs only after a tool succeeded, and an error in a
preToolUse hook denies the tool call. Copilot CLI's file tools are ``view``, ``edit`` and
``create`` (``toolArgs.path``); with GPT-5 models edits go through ``apply_patch``, whose
``toolArgs`` is the patch text.

Copilot CLI also runs the hooks of ``.claude/settings.json``; ``claude_code.parse_event``
leaves those runs silent, so a repository with both clients pushes each lesson once. Copilot
CLI reads ``.mcp.json`` and ignores ``.github/mcp.json`` whenever ``.mcp.json`` exists, so the
server goes where Claude Code's goes (one entry serves both).
"""

from __future__ import annotations

import json
import os
import re
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

NAME = "copilot"
#: The event whose hook carries the prompt push (what `reliora serve` shows).
PROMPT_EVENT: str | None = "userPromptSubmitted"
#: Seconds Copilot waits for the hook (its default is 30; ours gives up far sooner).
HOOK_TIMEOUT = 10
#: Copilot CLI's tools that take one file as ``toolArgs.path``.
PATH_TOOLS = ("view", "edit", "create")
#: The tool that edits files through a patch (GPT-5 models).
PATCH_TOOL = "apply_patch"
READ_TOOLS = frozenset({"view"})
#: Copilot matches a hook's ``matcher`` against the whole tool name: the file push starts
#: `reliora` only for file tools, not for every shell command or search.
FILE_MATCHER = "|".join((*PATH_TOOLS, PATCH_TOOL))
#: The patch lines that name a file the patch writes (apply_patch's grammar).
PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)

HOOK_ENTRY: dict[str, Any] = {
    "type": "command",
    "bash": hook_command(NAME),
    "timeoutSec": HOOK_TIMEOUT,
}
TOP = {"version": 1}


HOOKS = files.combined(
    files.flat_hooks(("sessionStart", "userPromptSubmitted"), HOOK_ENTRY, TOP),
    files.flat_hooks(("postToolUse",), {**HOOK_ENTRY, "matcher": FILE_MATCHER}, TOP),
)
FILES = (
    ClientFile(NAME, ".github/hooks/reliora.json", *HOOKS),
    ClientFile(NAME, ".mcp.json", *files.mcp_servers()),
    ClientFile(NAME, ".github/copilot-instructions.md", *BLOCK_EDITOR),
)
SIGNS = (".github/copilot-instructions.md", ".github/instructions", ".github/hooks")


def personal_files(root: Path, home: Path) -> tuple[ClientFile, ...]:
    """A personal install: the server in ``$COPILOT_HOME/mcp-config.json`` (``~/.copilot``).
    Copilot CLI documents no user-level hooks (it reads hooks from the repository only), so
    a personal install gives Copilot the tools, not the push."""
    base = Path(os.environ.get("COPILOT_HOME") or home / ".copilot")
    return (ClientFile(NAME, str(base / "mcp-config.json"), *files.mcp_servers()),)


def _tool_args(data: dict[str, Any]) -> Any:
    """``toolArgs``: an object (Copilot CLI 1.0.102), a JSON string (its hooks reference), or
    the raw text of a freeform tool such as apply_patch."""
    args = data.get("toolArgs")
    if isinstance(args, str) and args.lstrip().startswith("{"):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def patch_files(patch: str) -> tuple[str, ...]:
    """The files a patch adds, updates or moves to, in order, each once."""
    found = (update or moved for update, moved in PATCH_FILE.findall(patch))
    return tuple(dict.fromkeys(path for path in found if path))


def _files(tool: str, args: Any) -> tuple[str, ...]:
    if tool in PATH_TOOLS and isinstance(args, dict):
        path = text_field(args, "path")
        return (path,) if path else ()
    if tool == PATCH_TOOL:
        if isinstance(args, dict):
            args = text_field(args, "input", "patch")
        return patch_files(args) if isinstance(args, str) else ()
    return ()


def parse_event(data: dict[str, Any], cwd: Path) -> HookEvent:
    session = text_field(data, "sessionId")
    where = cwd_of(data, cwd)
    tool = data.get("toolName")
    if isinstance(tool, str):
        # A tool event names no event: with a result it is postToolUse (what we install).
        name = "postToolUse" if "toolResult" in data else "preToolUse"
        files = _files(tool, _tool_args(data))
        return HookEvent("file", name, session, where, files=files, reads=tool in READ_TOOLS)
    prompt = data.get("prompt")
    if isinstance(prompt, str):
        return HookEvent("prompt", "userPromptSubmitted", session, where, prompt=prompt)
    if "source" in data or "initialPrompt" in data:
        return HookEvent("session", "sessionStart", session, where)
    raise HookInputError("not a sessionStart, userPromptSubmitted or tool event of Copilot")


def render_output(event: HookEvent, text: str) -> str:
    return json.dumps({"additionalContext": text})


def personal_todo(root: Path, home: Path) -> list[str]:
    return []  # its user-level files take effect with no step of the person's


def todo(root: Path) -> list[str]:
    steps = [
        "Copilot CLI loads the project's hooks and MCP server only in a folder you trust: "
        "answer its trust prompt once (in prompt mode, -p, pass --trust-folder)"
    ]
    setup = root / ".github" / "workflows" / "copilot-setup-steps.yml"
    try:
        has_reliora = "reliora" in setup.read_text(encoding="utf-8", errors="replace")
    except OSError:
        has_reliora = False
    if not has_reliora:
        steps.append(
            "Copilot cloud agent runs .github/hooks/reliora.json (from the default branch) only "
            "where `reliora` is installed: add its install to "
            ".github/workflows/copilot-setup-steps.yml; its MCP servers are set in the "
            "repository's Copilot settings on GitHub, not in .mcp.json"
        )
    return steps


#: Its hooks send no transcript the end-of-turn ask could read.
read_transcript = None
past_sessions = None
past_lines = None
