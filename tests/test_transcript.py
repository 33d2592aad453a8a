"""Transcripts read into steps (operations/agents/transcript.py): each client's format as its
real binary writes it (Claude Code 2.1.332, Codex 0.171.0, Gemini CLI 0.61.0, trimmed to the
fields that matter), and hostile files: huge lines, bad JSON, missing files, FIFOs, a tail
of a big file."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from reliora_git.operations.agents.clients.base import Step
from reliora_git.operations.agents.transcript import read_lines, steps


def jsonl(path: Path, entries: list[Any]) -> Path:
    path.write_text(
        "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries), encoding="utf-8"
    )
    return path


def claude_entries(root: Path) -> list[dict[str, Any]]:
    """A troubled Claude Code turn: check fails, an Edit, check passes, the final answer."""

    def assistant(block: dict[str, Any]) -> dict[str, Any]:
        return {"type": "assistant", "isSidechain": False, "message": {"content": [block]}}

    def result(tool_id: str, content: str, error: bool | None = None) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
        if error is not None:
            block["is_error"] = error
        return {"type": "user", "isSidechain": False, "message": {"content": [block]}}

    bash = {"command": "python3 check.py", "description": "Run the check"}
    edit = {"file_path": str(root / "src/billing.py"), "old_string": "a", "new_string": "b"}
    return [
        {"type": "queue-operation", "content": "The customer is charged twice; fix billing"},
        {"type": "user", "message": {"role": "user", "content": "The customer is charged twice"}},
        {"type": "attachment", "attachment": {"type": "hook_additional_context"}},
        assistant({"type": "tool_use", "id": "t0", "name": "Bash", "input": bash}),
        result("t0", "Exit code 1\nTraceback…\nAssertionError: customer charged twice", True),
        # What Claude Code also writes: the request it sent, repeating the messages.
        {"type": "api-request-blob", "message": {"role": "user", "content": "repeated"}},
        assistant({"type": "tool_use", "id": "t1", "name": "Edit", "input": edit}),
        result("t1", "The file has been updated successfully."),
        assistant({"type": "tool_use", "id": "t2", "name": "Bash", "input": bash}),
        result("t2", "ok", False),
        assistant({"type": "text", "text": "Fixed: charged once."}),
        # A stop hook's reason comes back as a user entry the person did not type.
        {"type": "user", "isMeta": True, "message": {"content": "Stop hook feedback:\nrecord"}},
        {"type": "system", "subtype": "stop_hook_summary"},
    ]


def test_claude_code_transcript(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "t.jsonl", claude_entries(tmp_path))
    assert steps(path, "claude-code") == [
        Step("prompt", "The customer is charged twice"),
        Step(
            "run",
            "python3 check.py",
            failed=True,
            output="Exit code 1\nTraceback…\nAssertionError: customer charged twice",
        ),
        Step("edit", files=(str(tmp_path / "src/billing.py"),)),
        Step("run", "python3 check.py"),
    ]


def test_claude_code_skips_subagents_failed_edits_and_reads_reliora_tools(tmp_path: Path) -> None:
    def call(tool_id: str, name: str, arguments: dict[str, Any], **entry: Any) -> dict[str, Any]:
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}
        return {"type": "assistant", "message": {"content": [block]}, **entry}

    def done(tool_id: str, error: bool = False, **entry: Any) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": "x", "is_error": error}
        return {"type": "user", "message": {"content": [block]}, **entry}

    path = jsonl(
        tmp_path / "t.jsonl",
        [
            call("a", "Bash", {"command": "make"}, isSidechain=True),
            done("a", True, isSidechain=True),
            call("b", "Edit", {"file_path": "x.py"}),
            done("b", error=True),  # "String to replace not found": nothing changed
            call("c", "mcp__reliora__record", {"title": "t"}),
            done("c"),
            call("d", "mcp__reliora__feedback", {"id": "lesson-1", "outcome": "success"}),
            done("d"),
            {"type": "user", "message": {"content": "<command-name>/clear</command-name>"}},
            done("never-called"),
        ],
    )
    assert steps(path, "claude-code") == [Step("record"), Step("feedback", files=("lesson-1",))]


def test_codex_rollout(tmp_path: Path) -> None:
    def completed(item: dict[str, Any]) -> dict[str, Any]:
        return {"type": "event_msg", "payload": {"type": "item_completed", "item": item}}

    failing = {
        "type": "CommandExecution",
        "id": "call_0",
        "command": ["/bin/bash", "-lc", "python3 check.py"],
        "status": "failed",
        "aggregated_output": "Traceback…\nAssertionError: customer charged twice\n",
        "exit_code": 1,
    }
    path = jsonl(
        tmp_path / "rollout.jsonl",
        [
            {"type": "session_meta", "payload": {"cwd": str(tmp_path)}},
            completed({"type": "UserMessage", "id": "u", "content": [{"text": "fix"}]}),
            completed(failing),
            completed(failing),  # written twice: read once
            {
                "type": "response_item",
                "payload": {"type": "function_call", "name": "exec_command", "arguments": "{}"},
            },
            completed({"type": "FileChange", "id": "call_1", "status": "completed",
                       "changes": {str(tmp_path / "src/billing.py"): {"type": "update"}}}),
            completed({**failing, "id": "call_2", "status": "completed", "exit_code": 0}),
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "mcp__reliora__feedback",
                    "arguments": json.dumps({"id": "lesson-2", "outcome": "partial"}),
                },
            },
        ],
    )  # fmt: skip
    assert steps(path, "codex") == [
        Step("prompt", "fix"),
        Step(
            "run",
            "python3 check.py",
            failed=True,
            output="Traceback…\nAssertionError: customer charged twice\n",
        ),
        Step("edit", files=(str(tmp_path / "src/billing.py"),)),
        Step("run", "python3 check.py"),
        Step("feedback", files=("lesson-2",)),
    ]


def test_gemini_chat_record(tmp_path: Path) -> None:
    def shell(call_id: str, output: str) -> dict[str, Any]:
        response = {"functionResponse": {"id": call_id, "response": {"output": output}}}
        return {
            "id": call_id,
            "name": "run_shell_command",
            "args": {"command": "python3 check.py"},
            "result": [response],
            "status": "success",
        }

    fail = shell("s1", "<untrusted_context>\nOutput: AssertionError: twice\nExit Code: 1\n")
    edit = {
        "id": "r1",
        "name": "replace",
        "args": {"file_path": str(tmp_path / "src/billing.py")},
        "status": "success",
    }
    path = jsonl(
        tmp_path / "chat.jsonl",
        [
            {"sessionId": "s", "projectHash": "h", "kind": "main"},
            {"$set": {"messages": [{"type": "user", "content": [{"text": "<session_context>"}]}]}},
            {
                "id": "m0",
                "type": "user",
                "content": [{"text": "fix it"}, {"text": "<hook_context>lessons</hook_context>"}],
            },
            {"id": "m1", "type": "gemini", "content": ""},  # before its tool call ran
            {"id": "m1", "type": "gemini", "content": "", "toolCalls": [fail]},
            {"id": "m2", "type": "user", "content": [{"functionResponse": {"id": "s1"}}]},
            {"$set": {"lastUpdated": "2026-12-04T18:40:53.382Z"}},
            {"id": "m3", "type": "gemini", "toolCalls": [edit]},
            {"id": "m3", "type": "gemini", "toolCalls": [edit]},  # the same message again
            {"id": "m4", "type": "gemini", "toolCalls": [shell("s2", "Output: ok\n")]},
        ],
    )
    assert steps(path, "gemini") == [
        Step("prompt", "fix it"),
        Step(
            "run",
            "python3 check.py",
            failed=True,
            output="<untrusted_context>\nOutput: AssertionError: twice\nExit Code: 1\n",
        ),
        Step("edit", files=(str(tmp_path / "src/billing.py"),)),
        Step("run", "python3 check.py"),
    ]


# --- hostile files ------------------------------------------------------------------------


def test_a_missing_file_a_folder_and_an_unknown_format_read_as_nothing(tmp_path: Path) -> None:
    assert steps(tmp_path / "missing.jsonl", "claude-code") == []
    assert steps(tmp_path, "claude-code") == []
    path = jsonl(tmp_path / "t.jsonl", claude_entries(tmp_path))
    assert steps(path, "no-such-client") == []


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result: list[list[Step]] = []
    reader = threading.Thread(target=lambda: result.append(steps(fifo, "claude-code")))
    reader.start()
    reader.join(10)
    if reader.is_alive():  # it blocked: let it finish before failing
        with open(fifo, "w"):
            pass
        reader.join()
    assert result == [[]]


def test_bad_json_and_wrong_shapes_are_skipped(tmp_path: Path) -> None:
    good = claude_entries(tmp_path)
    bad = [
        '{"type":"user","message":',
        '{"type":"assistant"} trailing',
        '["type","user"]',
        '{"type":"user","message":{"content":[1,null,"x",{"type":"tool_result"}]}}',
        '{"type":"assistant","message":{"content":{"type":"tool_use"}}}',
        '{"type":"user","message":"not an object"}',
        "[" * 100_000 + '"type":"user"',  # deep nesting: RecursionError, not a crash
        "\x00\xff binary",
    ]
    lines = [json.dumps(e, separators=(",", ":")) for e in good]
    text = "\n".join(bad[:4] + lines[:5] + bad[4:] + lines[5:]) + "\n"
    path = tmp_path / "t.jsonl"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    assert [s.kind for s in steps(path, "claude-code")] == ["prompt", "run", "edit", "run"]


def test_a_huge_line_is_skipped_and_the_lines_after_it_are_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with path.open("wb") as out:
        out.write(b'{"type":"user","message":{"content":"first"}}\n')
        out.write(b'{"type":"user","message":{"content":"' + b"x" * 3_000_000 + b'"}}\n')
        out.write(b'{"type":"user","message":{"content":"last"}}')  # no newline yet
    lines = list(read_lines(path, max_line=1_000_000))
    assert [json.loads(line)["message"]["content"] for line in lines] == ["first", "last"]


def test_a_big_file_is_read_from_its_end_and_a_cut_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    entries = [{"type": "user", "message": {"content": f"prompt {n}"}} for n in range(1000)]
    jsonl(path, entries)
    size = path.stat().st_size
    lines = list(read_lines(path, max_bytes=size // 10))
    texts = [json.loads(line)["message"]["content"] for line in lines]
    assert texts[-1] == "prompt 999" and 80 <= len(texts) <= 100
    assert all(text.startswith("prompt ") for text in texts)  # the cut first line is gone
