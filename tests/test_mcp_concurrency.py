"""`reliora mcp` under parallel tool calls, as agents make them, and after its client has gone.

Clients call tools concurrently; the server runs each call on a worker thread over
one kept store index (index.LiveIndex). These tests drive the real server with the
MCP SDK's own client: many calls of every tool at once while the store changes under
them (records added by the calls themselves and by hand between rounds, so the kept
index is replaced while other calls still read it).

A client that cancels a call or goes away must not leave the server computing for
nobody. The SDK's client kills a server that outlives it, which would hide that, so
those tests speak JSON-RPC to the server themselves.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import queue
import random
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import anyio
import pytest

pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")

from mcp import ClientSession
from mcp.types import CallToolResult

import reliora_git
from reliora_git.storage.store import Store
from tests.conftest import RecordMaker, git, reliora_executable
from tests.test_mcp import reliora_mcp, server_environment

ROUNDS = 10
CALLS_PER_ROUND = 100
BASE_RECORDS = 30
#: The tools of one round, by how many calls each gets (100 in all).
MIX = {
    "search": 25,
    "show": 15,
    "about": 15,
    "check": 10,
    "record": 10,
    "feedback": 15,
    "update": 10,
}


def package_path() -> dict[str, str]:
    """PYTHONPATH for the server: the very package this test imports (a worktree's, say)."""
    return {"PYTHONPATH": str(Path(reliora_git.__file__).resolve().parents[1])}


def base_id(n: int) -> str:
    return f"base-lesson-{n:02d}"


def base_records(write_record: RecordMaker) -> None:
    for n in range(BASE_RECORDS):
        body = (
            "## Problems\n"
            f"- the quokka{n:02d}z worker dropped jobs under load\n\n"
            "## Solution\n"
            f"Retry the quokka{n:02d}z jobs with a bounded backoff\n"
        )
        write_record(
            base_id(n),
            f"Quokka{n} worker retries",
            body,
            tags=["retries", f"quokka{n:02d}z"],
            paths=[f"src/quokka{n:02d}z.py"],
            created="2026-01-01",
            status="active",
        )


def error_text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


class Round:
    """One round's calls: each knows what a sane answer to it looks like."""

    def __init__(self, number: int, session: ClientSession, recorded: list[str]) -> None:
        self.number = number
        self.session = session
        self.recorded = recorded
        self.errors: list[str] = []
        self.answers = 0

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        result = await self.session.call_tool(tool, arguments)
        if result.is_error:
            self.errors.append(f"{tool} {arguments}: {error_text(result)}")
            return None
        text = result.content[0]
        assert text.type == "text"
        assert json.loads(text.text) == result.structured_content
        self.answers += 1
        return result.structured_content

    def expect(self, ok: bool, what: str) -> None:
        if not ok:
            self.errors.append(what)

    async def search(self, k: int) -> None:
        n = (self.number * 7 + k) % BASE_RECORDS
        found = await self.call("search", {"query": f"quokka{n:02d}z retries", "limit": 3})
        if found is not None:
            top = found["results"][0]["id"] if found["results"] else None
            self.expect(top == base_id(n), f"search quokka{n:02d}z: top {top}")

    async def show(self, k: int) -> None:
        n = (self.number * 11 + k) % BASE_RECORDS
        shown = await self.call("show", {"id": base_id(n)})
        if shown is not None:
            self.expect(shown["id"] == base_id(n), f"show {base_id(n)}: {shown.get('id')}")

    async def about(self, k: int) -> None:
        n = (self.number * 13 + k) % BASE_RECORDS
        found = await self.call("about", {"paths": [f"src/quokka{n:02d}z.py"]})
        if found is not None:
            ids = [r["id"] for r in found["results"]]
            self.expect(ids == [base_id(n)], f"about quokka{n:02d}z: {ids}")

    async def check(self, k: int) -> None:
        report = await self.call("check", {} if k % 2 else {"paths": [self.locator(k)]})
        if report is not None:
            self.expect(report["ok"] is True, f"check: {report}")

    def locator(self, k: int) -> str:
        return f".reliora/experiences/{base_id(k % BASE_RECORDS)}.md"

    async def record(self, k: int) -> None:
        title = f"Round {self.number} lesson {k} about wombat{self.number}x{k} caches"
        saved = await self.call(
            "record",
            {
                "title": title,
                "task": "Make cold starts fast",
                "solution": f"Warm the wombat{self.number}x{k} cache first",
            },
        )
        if saved is not None:
            self.recorded.append(saved["id"])

    async def feedback(self, k: int) -> None:
        record = base_id((self.number + k) % BASE_RECORDS)
        event = await self.call(
            "feedback", {"id": record, "outcome": "success", "note": f"round {self.number}"}
        )
        if event is not None:
            self.expect(event["record"] == record, f"feedback {record}: {event}")

    async def update(self, k: int) -> None:
        # One update per record and round: updates of one record take turns (a lock file).
        record = base_id((self.number * MIX["update"] + k) % BASE_RECORDS)
        warning = f"Seen again in round {self.number}"
        saved = await self.call("update", {"id": record, "addWarnings": [warning]})
        if saved is not None:
            self.expect(saved["id"] == record, f"update {record}: {saved}")


def test_a_hundred_parallel_calls_of_every_tool_while_the_store_changes(
    store: Store, repo: Path, write_record: RecordMaker
) -> None:
    base_records(write_record)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base lessons")
    recorded: list[str] = []
    by_hand: list[str] = []

    async def scenario() -> None:
        async with reliora_mcp(repo, env=package_path()) as session:
            for number in range(ROUNDS):
                this = Round(number, session, recorded)
                calls = [
                    (getattr(this, tool), k) for tool, count in MIX.items() for k in range(count)
                ]
                random.Random(number).shuffle(calls)
                assert len(calls) == CALLS_PER_ROUND
                async with anyio.create_task_group() as group:
                    for work, k in calls:
                        group.start_soon(work, k)
                assert this.errors == [], "\n".join(this.errors[:10])
                assert this.answers == CALLS_PER_ROUND
                # Between rounds, a record written by hand: the next round's index is new.
                by_hand.append(f"hand-written-{number}")
                write_record(
                    by_hand[-1],
                    f"Hand written platypus{number} lesson",
                    created="2026-01-02",
                    status="active",
                )
            # Everything saved during the rounds is found, and the store is valid.
            for record_id in [*recorded, *by_hand]:
                shown = await session.call_tool("show", {"id": record_id})
                assert not shown.is_error, error_text(shown)
            report = await session.call_tool("check", {})
            assert not report.is_error and report.structured_content["ok"] is True
            found = await session.call_tool("search", {"query": "wombat0x3"})
            assert found.structured_content["results"][0]["id"] in recorded

    anyio.run(scenario)
    assert len(recorded) == ROUNDS * MIX["record"]
    assert len(set(recorded)) == len(recorded)
    events = list(store.feedback.rglob("*.md"))
    assert len(events) == ROUNDS * MIX["feedback"]


def test_a_replaced_index_stays_open_until_its_last_holder_is_done(
    store: Store, write_record: RecordMaker
) -> None:
    """LiveIndex in one process: what the server's threads share (see the test above)."""
    from reliora_git.storage.index import LiveIndex

    write_record("first-lesson", "Retries of quokka jobs")
    live = LiveIndex()
    held = live.open(store)  # a call that is still running
    slot = held.resolve("first-lesson")
    write_record("second-lesson", "Backoff of quokka jobs")
    with live.open(store) as current:  # a later call: the store changed, a new index
        assert current is not held
        assert current.has_id("second-lesson") and not held.has_id("second-lesson")
    # The replaced index still answers its holder, then closes with its last reference.
    assert held.record_json(slot)["id"] == "first-lesson"
    held.close()
    with pytest.raises(RuntimeError):
        held.acquire()
    # The current one stays open for the next call until the server closes it.
    with live.open(store) as again:
        assert again.has_id("second-lesson")
    live.close()


# --- a client that goes away ------------------------------------------------------------------

#: A hang bound, not a timing assertion: a server that computes on for nobody fails here
#: instead of hanging CI. Work on the generated store, done to the end, takes longer.
HANG_BOUND_SECONDS = 120
#: Records in the generated store: the first call parses them all (a cold start), seconds
#: of work, one checkpoint per record (records/stopping.py).
GENERATED_RECORDS = 6_000
#: A record saved only when the slow call runs to its end.
LATE_RECORD = {
    "title": "Saved only after reading the whole store",
    "task": "Show that a call whose client left never finishes",
    "solution": "Stop at the next record",
}


def generated_store(store: Store) -> None:
    words = " ".join(f"word{k}" for k in range(300))  # about 2 KB to tokenize in each
    for n in range(GENERATED_RECORDS):
        (store.experiences / f"generated-{n:05d}.md").write_text(
            f"---\nid: generated-{n:05d}\ntitle: Generated lesson {n}\n---\n"
            f"## Problems\n- problem {n} of the worker pool\n\n## Solution\nfix {n} {words}\n",
            encoding="utf-8",
        )
    # Old enough to be cached (cache.RACY_NS): only cacheable records go into the segment
    # that wait_until_reading watches for, however fast this store was written.
    for path in store.experiences.glob("generated-*.md"):
        os.utime(path, (1_700_000_000, 1_700_000_000))


class RawClient:
    """JSON-RPC over the server's stdin/stdout, one message a line (the stdio transport)."""

    def __init__(self, repo: Path) -> None:
        # stderr is a terminal: a cold start then writes its segment in steps of 1,024
        # records (progress.py), so wait_until_reading sees the work begin early.
        terminal, stderr = pty.openpty()
        self.process = subprocess.Popen(
            [reliora_executable(), "mcp"],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**server_environment(), **package_path()},
        )
        os.close(stderr)
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr = b""
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        self.drained = threading.Thread(target=self._drain, args=(terminal,), daemon=True)
        self.drained.start()
        self.request(
            0,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        assert "result" in self.answer(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self.lines.put(line)

    def _drain(self, terminal: int) -> None:
        with contextlib.suppress(OSError):  # EIO once the server has exited
            while chunk := os.read(terminal, 4096):
                self.stderr += chunk
        os.close(terminal)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, id: int, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})

    def answer(self, id: int) -> dict[str, Any]:
        while True:
            message: dict[str, Any] = json.loads(self.lines.get(timeout=HANG_BOUND_SECONDS))
            if message.get("id") == id:
                return message

    def exit_code_after_closing(self) -> int:
        """Close stdin (the client is gone) and wait for the server to exit."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=HANG_BOUND_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("the server computed on after its client had gone") from None
        self.drained.join(timeout=HANG_BOUND_SECONDS)
        return code


def wait_until_reading(repo: Path, client: RawClient) -> None:
    """Until the slow call is provably under way: its first segment of parsed records exists.

    (A segment is written batch by batch while a cold start parses the store.)
    """
    cache = repo / ".git" / "reliora-cache"
    for _ in range(HANG_BOUND_SECONDS * 20):
        if any(cache.glob(".*.seg.*.tmp")) or any(cache.glob("*.seg")):
            return
        assert client.process.poll() is None, client.stderr
        threading.Event().wait(0.05)
    raise AssertionError("the slow call never started reading the store")


@pytest.mark.parametrize("how", ["closes the connection", "cancels the call"])
def test_a_call_whose_client_has_gone_stops(store: Store, repo: Path, how: str) -> None:
    generated_store(store)
    client = RawClient(repo)
    try:
        stop_in_flight_call(store, repo, client, how)
    finally:
        # A server left running would keep this worker's reader threads alive, and a
        # process with threads parses serially (storage/parallel.py): later tests would fail.
        client.process.kill()
        client.process.wait()


def stop_in_flight_call(store: Store, repo: Path, client: RawClient, how: str) -> None:
    client.request(1, "tools/call", {"name": "record", "arguments": LATE_RECORD})
    wait_until_reading(repo, client)
    if how == "cancels the call":
        client.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1, "reason": "the user pressed Esc"},
            }
        )
        # The server still serves; the cancelled call gets no answer.
        client.request(2, "tools/list", {})
        assert {t["name"] for t in client.answer(2)["result"]["tools"]} >= {"record"}
    assert client.exit_code_after_closing() == 0
    assert b"Traceback" not in client.stderr and b"Error" not in client.stderr, client.stderr
    # Had the call run on to its end, it would have saved the record.
    saved = [
        p.name for p in store.experiences.iterdir() if not p.name.startswith(("generated-", "."))
    ]
    assert saved == []
    # Nothing is left locked or half written by the stopped call (its segment included).
    assert not [p for p in store.path.rglob("*") if p.name.endswith((".lock", ".tmp"))]
    assert not list((repo / ".git" / "reliora-cache").glob(".*.tmp"))
