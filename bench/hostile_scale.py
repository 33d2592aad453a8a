#!/usr/bin/env python3
"""The end-of-turn ask and `reliora history` on the inputs that made them quadratic.

Usage (from the repository root, with the package installed in the interpreter you use):

    python bench/hostile_scale.py                      # every size, 3 runs each
    python bench/hostile_scale.py --ask-mb 1.8 3.6 --reverts 8000 20000 --runs 3

* **The ask** (``reliora hook --client claude-code``, a ``Stop`` event): a Claude Code
  transcript in which many different commands fail, then many files are edited, with no
  passing run after (every failure stays open while every edit happens), written up to
  each size in MB. Each run is a new session, so the whole transcript is read.
* **history**: a repository made with ``git fast-import`` whose commits each revert the one
  before (``This reverts commit SHA.``), against one of as many plain commits.

Each row is the median wall time and the largest peak memory (RSS) of the runs, as the
operating system reports them for the finished child. Only the standard library is used.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def reliora() -> str:
    found = shutil.which("reliora")
    if found is None:
        raise SystemExit("reliora is not on PATH: install the package first")
    return found


def run(args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[float, float, bytes]:
    """Wall seconds, peak MB of this child alone (``wait4``), and its stdout."""
    started = time.perf_counter()
    child = subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(stdin)
    child.stdin.close()
    out = child.stdout.read()
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0  # reaped by wait4
    wall = time.perf_counter() - started
    return wall, usage.ru_maxrss / 1024, out


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    git(path, "config", "user.email", "bench@example.com")
    git(path, "config", "user.name", "Bench")
    return path


# --- the ask ------------------------------------------------------------------------------------


def write_transcript(root: Path, path: Path, size: int) -> None:
    """Half the size in failing commands (each its own family), half in edits."""

    def line(entry: dict[str, object]) -> str:
        return json.dumps(entry, separators=(",", ":")) + "\n"

    def call(tool_id: str, name: str, arguments: dict[str, object]) -> str:
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}
        return line({"type": "assistant", "message": {"content": [block]}})

    def result(tool_id: str, content: str, error: bool = False) -> str:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
        return line({"type": "user", "message": {"content": [{**block, "is_error": error}]}})

    with path.open("w", encoding="utf-8") as out:
        out.write(line({"type": "user", "message": {"content": "make the checks pass"}}))
        written, n = 0, 0
        while written < size // 2:
            chunk = call(f"r{n}", "Bash", {"command": f"./check_{n}.sh --fast"})
            chunk += result(f"r{n}", f"Exit code 1\nError: check {n} failed", error=True)
            out.write(chunk)
            written, n = written + len(chunk), n + 1
        while written < size:
            file = str(root / f"src/module_{n}.py")
            chunk = call(f"e{n}", "Edit", {"file_path": file, "old_string": "a", "new_string": "b"})
            chunk += result(f"e{n}", "The file has been updated successfully.")
            out.write(chunk)
            written, n = written + len(chunk), n + 1


def bench_ask(workdir: Path, sizes_mb: list[float], runs: int) -> list[str]:
    root = new_repo(workdir / "ask")
    subprocess.run([reliora(), "init"], cwd=root, check=True, capture_output=True)
    rows = []
    for mb in sizes_mb:
        transcript = workdir / f"ask-{mb}.jsonl"
        write_transcript(root, transcript, int(mb * 1024 * 1024))
        walls, peaks, asked = [], [], 0
        for i in range(runs):
            event = {
                "session_id": f"s-{mb}-{i}",
                "hook_event_name": "Stop",
                "cwd": str(root),
                "stop_hook_active": False,
                "transcript_path": str(transcript),
            }
            wall, peak, out = run(
                [reliora(), "hook", "--client", "claude-code"], root, json.dumps(event).encode()
            )
            walls.append(wall)
            peaks.append(peak)
            asked += b"before you finish" in out
        size = transcript.stat().st_size / 1024 / 1024
        rows.append(
            f"| the ask, {size:.1f} MB transcript | {statistics.median(walls):.3f} | "
            f"{max(peaks):.0f} | {asked}/{runs} asked |"
        )
    return rows


# --- history ------------------------------------------------------------------------------------


def _object(kind: str, body: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(body)}\0".encode() + body).hexdigest()


def fast_import(root: Path, count: int, reverts: bool) -> None:
    """``count`` commits, each changing src/a.py; with ``reverts``, each message reverts the
    commit before by its sha. The shas are computed here as git computes them (blob, trees,
    commit), so a message can name its parent; ``git fast-import`` then writes the same
    objects."""
    lines, parent = [], ""
    for n in range(1, count + 1):
        subject = f'Revert "change {n - 1}"' if reverts and n > 1 else f"Change {n}"
        body = f"\n\nThis reverts commit {parent}.\n" if reverts and n > 1 else "\n"
        message = (subject + body).encode()
        data = f"value = {n}\n".encode()
        blob = _object("blob", data)
        src = _object("tree", b"100644 a.py\0" + bytes.fromhex(blob))
        tree = _object("tree", b"40000 src\0" + bytes.fromhex(src))
        who = f"Bench <b@example.com> {1_600_000_000 + n * 60} +0000"
        head = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
        parent = _object("commit", f"{head}author {who}\ncommitter {who}\n\n".encode() + message)
        lines.append(f"commit refs/heads/main\nmark :{n}\nauthor {who}\ncommitter {who}\n")
        lines.append(f"data {len(message)}\n{message.decode()}\n")
        if n > 1:
            lines.append(f"from :{n - 1}\n")
        lines.append(f"M 100644 inline src/a.py\ndata {len(data)}\n{data.decode()}\n")
    stream = "".join(lines).encode()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=stream, check=True)
    git(root, "reset", "-q", "--hard", "main")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, check=True, text=True
    ).stdout.strip()
    assert head == parent, "the computed shas differ from git's: the reverts name no commit"


def bench_history(workdir: Path, counts: list[int], runs: int) -> list[str]:
    rows = []
    for count in counts:
        for reverts in (False, True):
            root = new_repo(workdir / f"history-{count}-{reverts}")
            fast_import(root, count, reverts)
            subprocess.run([reliora(), "init"], cwd=root, check=True, capture_output=True)
            walls, peaks = [], []
            for _ in range(runs):
                wall, peak, _out = run([reliora(), "history", "--json"], root)
                walls.append(wall)
                peaks.append(peak)
            kind = "each reverting the one before" if reverts else "plain"
            rows.append(
                f"| history, {count:,} commits, {kind} | {statistics.median(walls):.3f} | "
                f"{max(peaks):.0f} | |"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ask-mb", type=float, nargs="*", default=[1.8, 3.6])
    parser.add_argument("--reverts", type=int, nargs="*", default=[8000, 20000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        rows = bench_ask(workdir, args.ask_mb, args.runs)
        rows += bench_history(workdir, args.reverts, args.runs)
    print("| input | median wall (s) | peak MB | |")
    print("| --- | ---: | ---: | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
