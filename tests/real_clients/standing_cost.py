"""What Reliora costs a model request when no lesson fits (SPEC §14.3, "The standing cost").

Counted in the request the client itself sent, whatever its API: the definitions of
Reliora's tools (each as the client wrote it into the body, compact JSON), and the lines of
Reliora's instructions (the block in CLAUDE.md or AGENTS.md, the personal form the
session-start push carries, the MCP server's instructions if it had any) each time they
appear in the request's text.
"""

from __future__ import annotations

import json
from typing import Any

from reliora_git.interfaces import mcp_help
from reliora_git.operations.agents.clients import instructions

#: The most Reliora may add to a request in which no lesson fits.
MOST = 4_000
#: The names a client gives Reliora's tools hold this (mcp__reliora__brief, reliora-brief…).
OURS = "reliora"


def tool_chars(body: Any) -> int:
    """Characters of Reliora's tool definitions in a request body (compact JSON, as sent)."""
    tools = body.get("tools") if isinstance(body, dict) else None
    return _ours(tools if isinstance(tools, list) else [])


def _ours(tools: list[Any]) -> int:
    total = 0
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")  # chat completions: {"type": "function", "function": …}
        name = str(tool.get("name") or (function or {}).get("name") or "")
        if OURS in name:  # a whole tool, or a namespace of Reliora's tools
            total += len(json.dumps(tool, ensure_ascii=False, separators=(",", ":")))
            continue
        for nested in ("tools", "functionDeclarations"):  # Codex namespaces, Gemini's list
            inner = tool.get(nested)
            if isinstance(inner, list):
                total += _ours(inner)
    return total


def _instruction_lines() -> set[str]:
    texts = [instructions.BLOCK, instructions.PERSONAL, mcp_help.INSTRUCTIONS or ""]
    return {line.strip() for text in texts for line in text.splitlines() if line.strip()}


def instruction_chars(text: str) -> int:
    """Characters of Reliora's instruction lines in a request's text, each time they appear."""
    return sum(text.count(line) * len(line) for line in _instruction_lines())


def reliora_chars(body: Any, text: str) -> int:
    """Everything Reliora adds to one request: tools and instructions."""
    return tool_chars(body) + instruction_chars(text)


def report(client: str, body: Any, text: str) -> None:
    """With RELIORA_COST_REPORT naming a file, append this client's figures to it (JSON lines):
    how docs/agents.md's table of the standing cost per client is made."""
    import os

    where = os.environ.get("RELIORA_COST_REPORT")
    if where:
        figures = {"client": client, "tools": tool_chars(body), "instructions": 0}
        figures["instructions"] = instruction_chars(text)
        with open(where, "a", encoding="utf-8") as out:
            out.write(json.dumps(figures) + "\n")
        if os.environ.get("RELIORA_COST_DUMP"):
            with open(os.environ["RELIORA_COST_DUMP"], "w", encoding="utf-8") as out:
                json.dump(body, out)
