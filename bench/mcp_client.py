#!/usr/bin/env python3
"""Time the ``search`` tool of one running ``reliora mcp`` server (run by bench/run.py).

Usage (with the ``mcp`` SDK, 2.x, installed in the interpreter you use):

    python bench/mcp_client.py --runs 7 --query "postgres index" -- reliora mcp --repo STORE

Starts the server once with the command after ``--``, connects over stdio with the
official MCP client, calls ``search`` ``--warmup`` times untimed, then ``--runs`` times
timed, and prints one JSON object on stdout:

* ``seconds``: the wall time of each timed call, measured in this client (request sent
  to result parsed);
* ``cpu``: the server's CPU seconds during each timed call, summed over its threads
  from ``/proc/PID/task/*/schedstat`` (nanoseconds; empty where /proc does not have it);
* ``peak_mb``: the server's peak resident memory (``VmHWM``), or null.

Exit 3 when the ``mcp`` package is missing; 1 when the server fails or a call is an error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def server_pid() -> int | None:
    """The one child process of this client: the server ``stdio_client`` started."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name (field 2) may hold spaces: the parent pid follows its ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            return int(entry.name)
    return None


def cpu_seconds(pid: int | None) -> float | None:
    """CPU seconds of ``pid`` so far, summed over its threads (schedstat is nanoseconds)."""
    if pid is None:
        return None
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, IndexError, ValueError):
                continue  # a thread that ended between the listing and the read
    except OSError:
        return None
    return total / 1e9 if total else None


def peak_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def first_line(stderr: str) -> str:
    """The first line of ``stderr``; of a Python traceback, its last line (the exception)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[-1] if lines[0].startswith("Traceback") else lines[0]


def error_text(result: Any) -> str:
    texts = [getattr(part, "text", "") for part in result.content or []]
    return " ".join(t for t in texts if t)[:300] or "the tool call returned an error"


async def bench(command: list[str], query: str, runs: int, warmup: int, errlog: Any) -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    seconds: list[float] = []
    cpu: list[float] = []
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, read_timeout_seconds=600) as session,
    ):
        await session.initialize()
        pid = server_pid()
        arguments = {"query": query}
        for i in range(warmup + runs):
            before = cpu_seconds(pid)
            start = time.perf_counter()
            result = await session.call_tool("search", arguments)
            elapsed = time.perf_counter() - start
            after = cpu_seconds(pid)
            if result.is_error:
                raise RuntimeError(f"search tool error: {error_text(result)}")
            if i >= warmup:
                seconds.append(elapsed)
                if before is not None and after is not None:
                    cpu.append(max(0.0, after - before))
        peak = peak_mb(pid)
    return {"seconds": seconds, "cpu": cpu if len(cpu) == len(seconds) else [], "peak_mb": peak}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed calls (default 7)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed calls first (default 1)")
    parser.add_argument("--query", default="postgres index performance")
    parser.add_argument("command", nargs="+", help="the server command, after --")
    args = parser.parse_args(argv)
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError as error:  # missing, or shadowed by a file beside a script
        print(f"mcp_client: cannot import mcp in {sys.executable}: {error}", file=sys.stderr)
        return 3
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            report = anyio.run(bench, args.command, args.query, args.runs, args.warmup, errlog)
        except Exception as error:  # reported, with the server's stderr
            while getattr(error, "exceptions", None):
                error = error.exceptions[0]  # anyio's task groups wrap what was raised
            errlog.seek(0)
            server_err = first_line(errlog.read())
            reason = f"{type(error).__name__}: {error}".splitlines()[0]
            detail = f" (server stderr: {server_err})" if server_err else ""
            print(f"mcp_client: {reason}{detail}", file=sys.stderr)
            return 1
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
