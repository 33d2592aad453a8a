"""The OpenAI Chat Completions API, scripted, for clients that speak it (Copilot CLI's BYOK).

The conversation: while a request's ``messages`` hold no tool result, the model calls one
tool (a function call with JSON arguments); once they do, it answers with a final text.
Deciding from the request rather than a counter keeps a retried request answered the same
way. Replies stream as ``chat.completion.chunk`` server-sent events ending in ``[DONE]``
when the request asks for ``stream``, as Copilot CLI does.

Copilot CLI 1.0.102 sends hook context as messages: a ``user`` message at session start,
a ``<system_reminder>`` inside the prompt's ``user`` message, and text appended to a
``tool`` message after the tool; so the helpers read every message, whatever its role.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.real_clients.mock_model import Handler, LoggedRequest, Reply, json_reply, sse_reply

CHAT = "/v1/chat/completions"
TOOL_CALL_ID = "call_mock_1"


def routes(tool: str, arguments: dict[str, Any], final_text: str) -> dict[str, Handler]:
    """Handlers for the mock server: call ``tool`` with ``arguments``, then say ``final_text``."""

    def chat(request: LoggedRequest, index: int) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        message: dict[str, Any] = {"role": "assistant", "content": final_text}
        finish = "stop"
        if tool_position(body) is None and tool in tool_names(body):
            call = {"name": tool, "arguments": json.dumps(arguments)}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": TOOL_CALL_ID, "type": "function", "function": call}],
            }
            finish = "tool_calls"
        if body.get("stream"):
            return with_done(sse_reply(chunks(body, message, finish)))
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return json_reply(200, {**_head(body, "chat.completion"), "choices": [choice]})

    return {CHAT: chat}


def _head(body: dict[str, Any], kind: str) -> dict[str, Any]:
    return {"id": "chatcmpl-mock", "object": kind, "created": 0, "model": body.get("model")}


def chunks(
    body: dict[str, Any], message: dict[str, Any], finish: str
) -> Iterator[tuple[None, dict[str, Any]]]:
    """The stream of one reply: the whole message as one delta, the finish, then [DONE]."""
    delta = dict(message)
    if "tool_calls" in delta:
        delta["tool_calls"] = [{**call, "index": 0} for call in delta["tool_calls"]]
    head = _head(body, "chat.completion.chunk")
    yield None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    end = {"index": 0, "delta": {}, "finish_reason": finish}
    yield None, {**head, "choices": [end], "usage": usage}


def with_done(reply: Reply) -> Reply:
    """``reply`` (an event stream) followed by the ``data: [DONE]`` line OpenAI ends with."""
    status, headers, stream = reply
    assert not isinstance(stream, bytes)

    def with_done() -> Iterator[bytes]:
        yield from stream
        yield b"data: [DONE]\n\n"

    return status, headers, with_done()


def tool_names(body: Any) -> list[str]:
    tools = body.get("tools") if isinstance(body, dict) else None
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def messages(body: Any) -> list[dict[str, Any]]:
    found = body.get("messages") if isinstance(body, dict) else None
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


def message_text(message: dict[str, Any]) -> str:
    """What a message shows the model: its text (a string or text parts) and its tool calls."""
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    calls = message.get("tool_calls")
    text = content if isinstance(content, str) else ""
    return text + (json.dumps(calls) if calls else "")


def message_texts(body: Any) -> list[str]:
    return [message_text(message) for message in messages(body)]


def tool_position(body: Any) -> int | None:
    """The index of the first tool result (``role: "tool"``) among the messages, if any."""
    for position, message in enumerate(messages(body)):
        if message.get("role") == "tool":
            return position
    return None


def request_text(body: Any) -> str:
    return "\n".join(message_texts(body))
