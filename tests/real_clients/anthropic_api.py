"""The Anthropic Messages API, scripted, for Claude Code against the mock model.

The conversation: the first turn that offers the ``Read`` tool gets a ``tool_use`` of
``Read`` on one file; once the conversation holds that tool's result, the model answers
with a final text. Anything else (a side request without tools) gets a short text, and
``count_tokens`` a small count. Replies stream as server-sent events when the request asks
for ``stream``, as Claude Code does for its turns.

Claude Code 2.1.332 puts what hooks add (``additionalContext``) in ``role: "system"``
messages inside ``messages`` ("UserPromptSubmit hook additional context: …"), so the
helpers below read every message of a request, whatever its role.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from tests.real_clients.mock_model import Handler, LoggedRequest, Reply, json_reply, sse_reply

MESSAGES = "/v1/messages"
COUNT_TOKENS = "/v1/messages/count_tokens"
READ_TOOL_USE_ID = "toolu_mock_read_1"
MODEL = "claude-mock"


def routes(file_path: str, final_text: str) -> dict[str, Handler]:
    """Handlers for the mock server: read ``file_path`` (absolute), then say ``final_text``."""

    def messages(request: LoggedRequest, index: int) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        blocks: list[dict[str, Any]]
        if READ_TOOL_USE_ID in tool_result_ids(body):
            blocks, stop = [{"type": "text", "text": final_text}], "end_turn"
        elif "Read" in tool_names(body):
            read = {"file_path": file_path}
            blocks = [{"type": "tool_use", "id": READ_TOOL_USE_ID, "name": "Read", "input": read}]
            stop = "tool_use"
        else:
            blocks, stop = [{"type": "text", "text": "OK"}], "end_turn"
        if body.get("stream"):
            return sse_reply(message_events(blocks, stop))
        return json_reply(200, message(blocks, stop))

    def count_tokens(request: LoggedRequest, index: int) -> Reply:
        return json_reply(200, {"input_tokens": 100})

    return {MESSAGES: messages, COUNT_TOKENS: count_tokens}


def message(blocks: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_mock",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def message_events(blocks: list[dict[str, Any]], stop: str) -> Iterator[tuple[str | None, Any]]:
    """The stream of one message: start, each block (start, one delta, stop), delta, stop."""
    start = {**message([], ""), "stop_reason": None}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": opening,
            },
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def tool_names(body: Mapping[str, Any]) -> list[str]:
    return [str(tool.get("name")) for tool in body.get("tools") or [] if isinstance(tool, dict)]


def content_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def tool_result_ids(body: Mapping[str, Any]) -> set[str]:
    return {
        str(block.get("tool_use_id"))
        for message in body.get("messages") or []
        for block in content_blocks(message)
        if block.get("type") == "tool_result"
    }


def block_text(block: Mapping[str, Any]) -> str:
    if block.get("type") == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            return inner
        return "\n".join(block_text(part) for part in inner or [] if isinstance(part, dict))
    if block.get("type") == "tool_use":
        return json.dumps(block.get("input"))
    return str(block.get("text") or "")


def message_texts(body: Mapping[str, Any]) -> list[str]:
    """The text of each message of a request, in order (every role, every kind of block)."""
    return [
        "\n".join(block_text(block) for block in content_blocks(message))
        for message in body.get("messages") or []
    ]


def request_text(body: Mapping[str, Any]) -> str:
    """All the text a request shows the model: the system prompt and every message."""
    system = body.get("system")
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system or []
    parts = [block_text(block) for block in blocks if isinstance(block, dict)]
    return "\n".join([*parts, *message_texts(body)])


def pushed_by(text: str, word: str) -> list[str]:
    """For each occurrence of ``word``, the hook whose context holds it ("PreToolUse:Read", …).

    Claude Code labels each hook's context "<event>[:<tool>] hook additional context: …".
    """
    label = " hook additional context:"
    hooks = []
    start = text.find(word)
    while start != -1:
        end = text.rfind(label, 0, start)
        line_start = text.rfind("\n", 0, end) + 1
        hooks.append(text[line_start:end] if end != -1 else "(no hook)")
        start = text.find(word, start + 1)
    return hooks


def read_position(body: Mapping[str, Any]) -> int | None:
    """The index of the message that calls the scripted Read, when the request holds it."""
    for position, message in enumerate(body.get("messages") or []):
        for block in content_blocks(message):
            if block.get("type") == "tool_use" and block.get("id") == READ_TOOL_USE_ID:
                return position
    return None


def turns(requests: list[LoggedRequest]) -> list[dict[str, Any]]:
    """The bodies of the conversation's turns: the requests that offered Claude Code's tools."""
    return [
        request.body
        for request in requests
        if request.path == MESSAGES
        and isinstance(request.body, dict)
        and "Read" in tool_names(request.body)
    ]


def script_routes(calls: list[tuple[str, dict[str, Any]]], final_text: str) -> dict[str, Handler]:
    """Handlers for a scripted turn of several tool calls: while a request holds fewer tool
    results than ``calls``, the model makes the next call (id ``toolu_script_N``); then it
    answers ``final_text``. Requests that offer no tools (side requests) get a short text."""

    def messages(request: LoggedRequest, index: int) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        done = len(tool_result_ids(body))
        blocks: list[dict[str, Any]]
        if not tool_names(body):
            blocks, stop = [{"type": "text", "text": "OK"}], "end_turn"
        elif done < len(calls):
            name, arguments = calls[done]
            call = {"type": "tool_use", "id": f"toolu_script_{done}", "name": name}
            blocks, stop = [{**call, "input": arguments}], "tool_use"
        else:
            blocks, stop = [{"type": "text", "text": final_text}], "end_turn"
        if body.get("stream"):
            return sse_reply(message_events(blocks, stop))
        return json_reply(200, message(blocks, stop))

    def count_tokens(request: LoggedRequest, index: int) -> Reply:
        return json_reply(200, {"input_tokens": 100})

    return {MESSAGES: messages, COUNT_TOKENS: count_tokens}
