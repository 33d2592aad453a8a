"""A scripted Gemini API (``/v1beta/models/{model}:{method}``) for the Gemini CLI test.

Gemini CLI sends its turns to ``:streamGenerateContent?alt=sse`` (server-sent
events, one ``GenerateContentResponse`` per ``data:`` line) and may send
side questions (routing, checks) to ``:generateContent`` and ``:countTokens``.
The script: while the conversation holds no tool result, the model asks for
``read_file`` of ``src/billing.py``; once it does, the model answers in text.
Deciding from the request rather than a counter keeps a retried request
answered the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.real_clients.mock_model import Handler, LoggedRequest, Reply, json_reply, sse_reply

MODELS_ROUTE = "/v1beta/models/*"
READ_TARGET = "src/billing.py"
FINAL_TEXT = "The billing module is read; nothing else to do."


def parts_of(body: Any) -> list[dict[str, Any]]:
    """Every part of every turn of a request body (``contents[].parts[]``)."""
    contents = body.get("contents") if isinstance(body, dict) else None
    found: list[dict[str, Any]] = []
    for turn in contents if isinstance(contents, list) else []:
        parts = turn.get("parts") if isinstance(turn, dict) else None
        found += [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    return found


def has_tool_result(body: Any) -> bool:
    return any("functionResponse" in part for part in parts_of(body))


def part_text(part: dict[str, Any]) -> str:
    """What a part shows the model: its text, a call's arguments, a tool result's output."""
    if "functionResponse" in part:
        response = part["functionResponse"].get("response")
        output = response.get("output") if isinstance(response, dict) else None
        return output if isinstance(output, str) else json.dumps(response, ensure_ascii=False)
    if "functionCall" in part:
        return json.dumps(part["functionCall"].get("args"), ensure_ascii=False)
    return str(part.get("text") or "")


def request_text(body: Any) -> str:
    """All the text a request shows the model: the system instruction and every part."""
    system = body.get("systemInstruction") if isinstance(body, dict) else None
    parts = parts_of({"contents": [system]}) if isinstance(system, dict) else []
    return "\n".join(part_text(part) for part in [*parts, *parts_of(body)])


def hook_contexts(text: str) -> list[str]:
    """What hooks added, in order: Gemini CLI wraps each hook's context in <hook_context>.
    Give it the conversation's text, not the system instruction (which names the tag)."""
    return re.findall(r"<hook_context>(.*?)</hook_context>", text, re.DOTALL)


def conversation_text(body: Any) -> str:
    """The text of every part of the conversation (no system instruction)."""
    return "\n".join(part_text(part) for part in parts_of(body))


def tool_result_text(body: Any) -> str:
    """The output of the scripted read_file as the model receives it (with hook context)."""
    results = [
        part_text(part)
        for part in parts_of(body)
        if part.get("functionResponse", {}).get("name") == "read_file"
    ]
    return "\n".join(results)


def pushed(body: Any) -> str:
    """Everything the hooks added to the conversation of a request."""
    return "\n".join(hook_contexts(conversation_text(body)))


def offered_tools(body: Any) -> list[str]:
    """The function names a request offers the model."""
    tools = body.get("tools") if isinstance(body, dict) else None
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        for declaration in tool.get("functionDeclarations") or []:
            names.append(str(declaration.get("name")))
    return names


def turns(requests: list[LoggedRequest]) -> list[Any]:
    """The bodies of the conversation's turns: streamed requests that offer Gemini's tools."""
    return [
        request.body
        for request in requests
        if request.path.endswith(":streamGenerateContent") and offered_tools(request.body)
    ]


def _response(part: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 6, "totalTokenCount": 18},
        "modelVersion": "mock",
    }


def next_part(body: Any) -> dict[str, Any]:
    if offered_tools(body) and not has_tool_result(body):
        return {"functionCall": {"name": "read_file", "args": {"file_path": READ_TARGET}}}
    return {"text": FINAL_TEXT}


def models(request: LoggedRequest, index: int) -> Reply:
    """The handler of every ``/v1beta/models/...`` path."""
    method = request.path.rpartition(":")[2]
    if method == "countTokens":
        return json_reply(200, {"totalTokens": 42})
    if method == "streamGenerateContent":
        return sse_reply([(None, _response(next_part(request.body)))])
    if method == "generateContent":
        return json_reply(200, _response(next_part(request.body)))
    return json_reply(404, {"error": {"code": 404, "message": f"no method {method}"}})


ROUTES: dict[str, Handler] = {MODELS_ROUTE: models}


def script_routes(calls: list[dict[str, Any]], final_text: str = FINAL_TEXT) -> dict[str, Handler]:
    """Handlers for a turn of several scripted calls: while a request holds fewer tool results
    than ``calls``, the model makes the next (a ``functionCall`` part); then it answers
    ``final_text``."""

    def part_for(body: Any) -> dict[str, Any]:
        done = sum(1 for part in parts_of(body) if "functionResponse" in part)
        if offered_tools(body) and done < len(calls):
            return {"functionCall": calls[done]}
        return {"text": final_text}

    def handler(request: LoggedRequest, index: int) -> Reply:
        method = request.path.rpartition(":")[2]
        if method == "countTokens":
            return json_reply(200, {"totalTokens": 42})
        if method == "streamGenerateContent":
            return sse_reply([(None, _response(part_for(request.body)))])
        if method == "generateContent":
            return json_reply(200, _response(part_for(request.body)))
        return json_reply(404, {"error": {"code": 404, "message": f"no method {method}"}})

    return {MODELS_ROUTE: handler}
