#!/usr/bin/env python3
"""Time how long ``reliora mcp`` takes to answer ``initialize`` after being started.

Usage:

    python bench/mcp_start.py --runs 10 [-- reliora mcp --repo STORE]

Without a command after ``--`` it starts ``reliora mcp`` in the current folder, with
the ``reliora`` beside this interpreter (else the one on PATH).

Each run starts the server as a client does (a new process with pipes for stdin and
stdout), writes the ``initialize`` request at once, as clients do, and reads the clock
when the answer's line arrives on stdout (what a client waits for before anything
else); then it sends ``notifications/initialized`` and ``tools/list`` and reads the
clock again when the tool list arrives (when an agent can first call a tool). Then it
closes stdin and waits for the server to exit. It speaks JSON-RPC itself, standard
library only, so that the client's own imports do not blur the figures.

Prints one JSON object on stdout: for ``initialize`` and ``tools_list``, the seconds
from the start of the process of each run, in order, and their median, min and max;
``exit_codes``, of each server once its stdin was closed. Exit 1 when a server fails
to answer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench-mcp-start", "version": "1"},
    },
}
#: A hang bound per run, so a broken server fails the bench instead of stalling it.
HANG_SECONDS = 60


def one_start(command: list[str]) -> tuple[float, float, int]:
    """Seconds from starting ``command`` to its answers to initialize and tools/list; exit code."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        send(process, INITIALIZE)
        answer(process, 0)
        initialized = time.perf_counter() - start
        send(process, INITIALIZED)
        send(process, TOOLS_LIST)
        answer(process, 1)
        listed = time.perf_counter() - start
    except RuntimeError:
        process.kill()
        process.wait()
        stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
        detail = stderr.strip().splitlines()[-1:] or ["nothing on stderr"]
        raise RuntimeError(f"the server did not answer ({detail[0]})") from None
    process.stdin.close()
    try:
        code = process.wait(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise RuntimeError("the server did not exit after its stdin was closed") from None
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    return initialized, listed, code


def send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def answer(process: subprocess.Popen[bytes], ident: int) -> dict[str, Any]:
    """The server's answer to request ``ident`` (notifications before it are skipped)."""
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("stdout closed")
        message = json.loads(line)
        if message.get("id") == ident:
            if "result" not in message:
                raise RuntimeError(f"request {ident} failed: {line[:300]!r}")
            return dict(message)


def summary(seconds: list[float]) -> dict[str, Any]:
    return {
        "seconds": [round(s, 4) for s in seconds],
        "median": round(statistics.median(seconds), 4),
        "min": round(min(seconds), 4),
        "max": round(max(seconds), 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="server starts (default 10)")
    parser.add_argument(
        "command", nargs="*", help="the server command, after -- (default: reliora mcp)"
    )
    args = parser.parse_args(argv)
    # The reliora beside this interpreter (a virtualenv's), else the one on PATH.
    beside = Path(sys.executable).with_name("reliora")
    command = args.command or [str(beside) if beside.exists() else "reliora", "mcp"]
    initialize: list[float] = []
    tools_list: list[float] = []
    codes: list[int] = []
    for _ in range(args.runs):
        try:
            initialized, listed, code = one_start(command)
        except (OSError, RuntimeError, ValueError) as error:
            print(f"mcp_start: {error}", file=sys.stderr)
            return 1
        initialize.append(initialized)
        tools_list.append(listed)
        codes.append(code)
    report = {
        "initialize": summary(initialize),
        "tools_list": summary(tools_list),
        "exit_codes": codes,
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
