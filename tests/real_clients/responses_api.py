"""The OpenAI Responses API (``POST /v1/responses``), scripted, for the Codex test.

Codex sends each turn's whole conversation as ``input`` (messages, function calls and
their outputs) with ``stream: true``, and reads the answer as server-sent events:
``response.created``, the output items as they are added, streamed and done, then
``response.completed``. The script: while the input holds no output of the scripted
call, the model makes the call (``exec_command`` with a shell command, or ``apply_patch``
with a patch); once it does, the model answers in text. Deciding from the request rather
than a counter keeps a retried request answered the same way.

Codex 0.171 adds what a hook returns as ``additionalContext`` to ``input`` as a
``developer`` message, after the item it belongs to (session start, prompt, tool call).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.real_clients.mock_model import Handler, LoggedRequest, Reply, sse_reply

RESPONSES = "/v1/responses"
CALL_ID = "call_mock_1"
FINAL_TEXT = "The billing module is read; nothing else to do."


@dataclass(frozen=True)
class Call:
    """The one tool call of the script: a function (JSON arguments) or a freeform tool."""

    name: str
    arguments: dict[str, Any] | None = None  # a function tool's arguments
    text: str | None = None  # a freeform (custom) tool's input, such as a patch

    def item(self) -> dict[str, Any]:
        if self.text is not None:
            return {
                "type": "custom_tool_call",
                "id": "ctc_mock_1",
                "call_id": CALL_ID,
                "name": self.name,
                "input": self.text,
                "status": "completed",
            }
        return {
            "type": "function_call",
            "id": "fc_mock_1",
            "call_id": CALL_ID,
            "name": self.name,
            "arguments": json.dumps(self.arguments or {}),
            "status": "completed",
        }


def shell_call(body: Any, command: str) -> Call:
    """``command`` through whichever shell tool this Codex offers (0.171: ``exec_command``)."""
    offered = tool_names(body)
    if "exec_command" in offered:
        return Call("exec_command", {"cmd": command})
    if "shell_command" in offered:
        return Call("shell_command", {"command": command})
    return Call("shell", {"command": ["bash", "-lc", command]})


def routes(call: Any) -> dict[str, Handler]:
    """The mock server's handlers; ``call(body) -> Call`` picks the scripted call."""

    def respond(request: LoggedRequest, index: int) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        if call_output(body) is None:
            return sse_reply(_stream(index, call(body).item()))
        message = {
            "type": "message",
            "id": "msg_mock_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}],
        }
        return sse_reply(_stream(index, message))

    return {RESPONSES: respond}


def _stream(index: int, item: dict[str, Any]) -> Iterator[tuple[str | None, Any]]:
    """The events of a response with one output item, as the Responses API streams them."""
    response = {"id": f"resp_mock_{index}", "object": "response", "status": "in_progress"}
    added = {**item, "status": "in_progress"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
    ]
    if item["type"] == "message":
        text = item["content"][0]["text"]
        part = {"type": "output_text", "text": "", "annotations": []}
        where = {"item_id": item["id"], "output_index": 0, "content_index": 0}
        events += [
            {"type": "response.content_part.added", **where, "part": part},
            {"type": "response.output_text.delta", **where, "delta": text},
            {"type": "response.output_text.done", **where, "text": text},
            {"type": "response.content_part.done", **where, "part": {**part, "text": text}},
        ]
    elif item["type"] == "function_call":
        where = {"item_id": item["id"], "output_index": 0}
        arguments = item["arguments"]
        events += [
            {"type": "response.function_call_arguments.delta", **where, "delta": arguments},
            {"type": "response.function_call_arguments.done", **where, "arguments": arguments},
        ]
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    events += [
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [item], "usage": usage},
        },
    ]
    for number, event in enumerate(events):
        yield event["type"], {**event, "sequence_number": number}


# --- reading what the model was sent ------------------------------------------------------------


def input_items(body: Any) -> list[dict[str, Any]]:
    items = body.get("input") if isinstance(body, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def call_output(body: Any) -> int | None:
    """The position in ``input`` of the scripted call's output (None before the call)."""
    return _position(body, ("function_call_output", "custom_tool_call_output"))


def call_position(body: Any) -> int | None:
    """The position in ``input`` of the scripted call itself (None before the call)."""
    return _position(body, ("function_call", "custom_tool_call"))


def _position(body: Any, types: tuple[str, ...]) -> int | None:
    for position, item in enumerate(input_items(body)):
        if item.get("type") in types and item.get("call_id") == CALL_ID:
            return position
    return None


def item_text(item: dict[str, Any]) -> str:
    """What an input item shows the model: a message's text, a call's input, an output."""
    content = item.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    if isinstance(content, str):
        return content
    for field in ("output", "arguments", "input"):
        value = item.get(field)
        if value is not None:
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ""


def request_text(body: Any) -> str:
    """All the text a request shows the model: its instructions and every input item."""
    instructions = body.get("instructions") if isinstance(body, dict) else None
    texts = [instructions] if isinstance(instructions, str) else []
    return "\n".join(texts + [item_text(item) for item in input_items(body)])


def developer_texts(body: Any, after: int = -1) -> list[str]:
    """The developer messages of ``input`` past position ``after``: where hooks' context goes."""
    return [
        item_text(item)
        for position, item in enumerate(input_items(body))
        if position > after and item.get("type") == "message" and item.get("role") == "developer"
    ]


def tool_names(body: Any) -> list[str]:
    """The tools a request offers, a namespace's tools as ``namespace.tool``."""
    tools = body.get("tools") if isinstance(body, dict) else None
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        name = str(tool.get("name") or tool.get("type"))
        names.append(name)
        nested = tool.get("tools")
        if isinstance(nested, list):
            names += [f"{name}.{t.get('name')}" for t in nested if isinstance(t, dict)]
    return names


def script_routes(steps: list[Any], final_text: str = FINAL_TEXT) -> dict[str, Handler]:
    """Handlers for a turn of several scripted calls: while a request's input holds fewer call
    outputs than ``steps``, the model makes the next call (``step(body) -> Call``, call id
    ``call_script_N``); then it answers ``final_text``."""

    def respond(request: LoggedRequest, index: int) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        outputs = [
            item
            for item in input_items(body)
            if item.get("type") in ("function_call_output", "custom_tool_call_output")
        ]
        if len(outputs) < len(steps):
            item = steps[len(outputs)](body).item()
            item.update(call_id=f"call_script_{len(outputs)}", id=f"fc_script_{len(outputs)}")
            return sse_reply(_stream(index, item))
        message = {
            "type": "message",
            "id": "msg_script",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": final_text, "annotations": []}],
        }
        return sse_reply(_stream(index, message))

    return {RESPONSES: respond}
