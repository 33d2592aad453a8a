"""`reliora mcp` starting and stopping, as agent clients start and stop it.

A client waits for the answer to ``initialize`` before anything else, so the server
answers it before loading the MCP SDK (interfaces/mcp_wire.py); the SDK is then
handed the same request and its own answer is dropped. These tests check that the
early answer is the SDK's answer, word for word, for every protocol revision (and
that what follows it is unchanged); how fast it comes is measured by
bench/mcp_start.py, not here.

Clients stop a server by closing its stdin or with SIGINT, then SIGTERM. Each must
end it with exit code 0 whether it is still starting, idle or in the middle of a
call, and a call in the middle of its work must stop without leaving a lock file,
a temporary file or a half-saved record behind. (A call stopped by a closed stdin:
tests/test_mcp_concurrency.py.) The SDK's own client would kill a server that
outlives it, hiding a hang, so these tests speak JSON-RPC themselves.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")

from reliora_git.interfaces.mcp_wire import HANDSHAKE_VERSIONS
from reliora_git.storage.store import Store
from tests.conftest import reliora_executable
from tests.test_mcp import server_environment
from tests.test_mcp_concurrency import (
    HANG_BOUND_SECONDS,
    LATE_RECORD,
    RawClient,
    generated_store,
    package_path,
    wait_until_reading,
)

#: The early answer's own warning, printed when the SDK answers otherwise.
DIFFERS = b"answers initialize otherwise"


def initialize(version: str, ident: int | str = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "lifecycle-test", "version": "1.0"},
        },
    }


def first_session(repo: Path, first: dict[str, Any], env: dict[str, str]) -> tuple[list[Any], str]:
    """The server's answers to ``first``, then to ``tools/list``; and its stderr.

    stdin stays open until both answers have come: a closed stdin stops the server.
    """
    process = subprocess.Popen(
        [reliora_executable(), "mcp"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**server_environment(), **package_path(), **env},
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        messages = [
            first,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "tools", "method": "tools/list", "params": {}},
        ]
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(2)]
        process.stdin.close()
        assert process.wait(timeout=HANG_BOUND_SECONDS) == 0
        stderr = process.stderr.read().decode() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return answers, stderr


@pytest.mark.parametrize("version", [*HANDSHAKE_VERSIONS, "2026-07-28", "2099-01-01"])
def test_the_early_initialize_answer_is_the_sdks(repo: Path, version: str) -> None:
    """Answered early (known revisions) or by the SDK (others): the same words either way."""
    request = initialize(version)
    early, early_err = first_session(repo, request, {})
    # RELIORA_FAST_CLI=0: started through Typer, the SDK answers initialize itself.
    sdk, sdk_err = first_session(repo, request, {"RELIORA_FAST_CLI": "0"})
    assert early == sdk
    [answered, tools] = early
    assert answered["id"] == 0 and answered["result"]["serverInfo"]["name"] == "reliora"
    assert answered["result"]["protocolVersion"] in HANDSHAKE_VERSIONS
    if version in HANDSHAKE_VERSIONS:
        assert answered["result"]["protocolVersion"] == version
    assert tools["id"] == "tools"
    assert {tool["name"] for tool in tools["result"]["tools"]} >= {"brief", "show", "record"}
    assert DIFFERS.decode() not in early_err and "Traceback" not in early_err, early_err
    assert sdk_err == ""


@pytest.mark.parametrize(
    "first",
    [
        initialize("2025-06-18", ident="a string id"),
        # Not answered early (no clientInfo): the SDK's error, as before.
        {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": "x"}},
        # Not an initialize at all.
        {"jsonrpc": "2.0", "id": 8, "method": "ping"},
    ],
    ids=["string id", "bad params", "ping first"],
)
def test_other_first_messages_get_the_sdks_answer(repo: Path, first: dict[str, Any]) -> None:
    early, early_err = first_session(repo, first, {})
    sdk, _ = first_session(repo, first, {"RELIORA_FAST_CLI": "0"})
    assert early[0] == sdk[0]
    assert early[0]["id"] == first["id"]
    assert DIFFERS.decode() not in early_err, early_err


def test_a_client_that_closes_stdin_at_once_ends_the_server(repo: Path) -> None:
    done = subprocess.run(
        [reliora_executable(), "mcp"],
        cwd=repo,
        input=b"",
        capture_output=True,
        env={**server_environment(), **package_path()},
        timeout=HANG_BOUND_SECONDS,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


STOPS = ["SIGINT", "SIGTERM", "closes stdin"]


def stop(client: RawClient, how: str) -> int:
    """Stop the server as a client does; its exit code."""
    if how == "closes stdin":
        return client.exit_code_after_closing()
    client.process.send_signal(getattr(signal, how))
    try:
        code = client.process.wait(timeout=HANG_BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the server did not stop on {how}") from None
    client.drained.join(timeout=HANG_BOUND_SECONDS)
    return code


@pytest.mark.parametrize("how", STOPS)
@pytest.mark.parametrize("when", ["starting", "idle"])
def test_the_server_stops_with_exit_code_0(repo: Path, how: str, when: str) -> None:
    """Starting: just after the early initialize answer, the SDK perhaps still loading."""
    client = RawClient(repo)  # sends initialize and waits for its answer
    try:
        if when == "idle":
            client.request(1, "tools/list", {})
            assert {t["name"] for t in client.answer(1)["result"]["tools"]} >= {"brief"}
        assert stop(client, how) == 0
        assert b"Traceback" not in client.stderr, client.stderr
    finally:
        client.process.kill()
        client.process.wait()


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_running_call_cleanly(store: Store, repo: Path, how: str) -> None:
    generated_store(store)
    client = RawClient(repo)
    try:
        client.request(1, "tools/call", {"name": "record", "arguments": LATE_RECORD})
        wait_until_reading(repo, client)
        assert stop(client, how) == 0
        assert b"Traceback" not in client.stderr, client.stderr
    finally:
        client.process.kill()
        client.process.wait()
    # Had the call run on to its end, it would have saved the record.
    saved = [
        p.name for p in store.experiences.iterdir() if not p.name.startswith(("generated-", "."))
    ]
    assert saved == []
    # Nothing is left locked or half written by the stopped call (its segment included).
    assert not [p for p in store.path.rglob("*") if p.name.endswith((".lock", ".tmp"))]
    assert not list((repo / ".git" / "reliora-cache").glob(".*.tmp"))


def test_mcp_help_still_comes_from_typer(repo: Path) -> None:
    done = subprocess.run(
        [reliora_executable(), "mcp", "--help"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=HANG_BOUND_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Usage: reliora mcp" in done.stdout
    assert "SIGTERM" in done.stdout  # how it stops, and with which exit code
