#!/usr/bin/env python3
"""Where a command's milliseconds go, stage by stage, each run a fresh process.

Usage (from the repository root, with the package installed in the interpreter you use):

    python bench/stages.py STORE show ID          # show ID --json
    python bench/stages.py STORE search "postgres index performance"
    python bench/stages.py STORE show ID --runs 9 --json

STORE is a folder holding ``.reliora/`` (bench/run.py --keep leaves its stores, or
make one with ``make_store`` there). The command itself runs twice first, so that its
index is saved; then each run starts a new interpreter that does what
the command does, in the order it does it, and reads the thread's CPU clock between
the stages: the interpreter's own start (``python -c pass``, measured apart), the
command's imports, reading the index file, locate (folder stamps checked, files
stat'ed or folders listed), load, build, then resolving the id and the record's own
work (``show``) or ranking and the shown results' freshness (``search``), and the
JSON (one more process, untimed, first). Medians over the runs are printed.

Only the standard library is used (and the package, in the child processes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: The child: the stages of one command, timed with the thread's CPU clock.
CHILD = r"""
import json, sys, time
clock = time.thread_time
marks = [("start", clock())]
def mark(name):
    marks.append((name, clock()))
from reliora_git.storage import cache
from reliora_git.storage.cache import paused_gc
if hasattr(cache, "bulk_lives_on"):
    cache.bulk_lives_on()
import reliora_git.interfaces.output
from reliora_git.operations.lessons import reads
from reliora_git.storage.answer import StoreIndex
from reliora_git.storage.build import build
from reliora_git.storage.indexfile import index_file, read_state
from reliora_git.storage.load import load
from reliora_git.storage.locate import locate
from reliora_git.storage.segments import Segments
from reliora_git.storage.store import find_store
mark("imports")
store = find_store()
root = store.root.resolve()
path = index_file(root)
with paused_gc():
    state = read_state(path, root)
    mark("read the index file")
    try:
        located = locate(store, None, state)
    except TypeError:  # a build whose locate takes no saved index (no folder stamps)
        located = locate(store)
    mark("locate")
    loaded = load(located, state, Segments(path))
    mark("load")
    index = StoreIndex(build(loaded), Segments(path), path, lambda state: None)
    mark("build")
what, text = sys.argv[1], sys.argv[2]
if what == "show":
    index.identity(index.resolve(text))
    mark("resolve the id")
    shown = reads.show(store, text, index=index)
    mark("the record: read, parse, mask, freshness, history")
    out = json.dumps(shown.document(), ensure_ascii=False, indent=2)
else:
    result = reads.search(store, text, index=index)
    mark("rank")
    fresh = result.shown_freshness(store, 10)
    mark("freshness of the shown results")
    out = json.dumps(result.document(10, fresh), ensure_ascii=False, indent=2)
mark("JSON")
print(json.dumps([(name, (at - marks[i][1]) * 1000) for i, (name, at) in enumerate(marks[1:])]))
"""


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELIORA_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as an installed package is
    return env


def interpreter_ms(runs: int) -> float:
    """The CPU of ``python -c pass``: what every command costs before its first import."""
    times = []
    for _ in range(runs):
        child = subprocess.Popen([sys.executable, "-c", "pass"], env=child_env())
        _, status, usage = os.wait4(child.pid, 0)  # this child's own CPU, to the microsecond
        child.returncode = os.waitstatus_to_exitcode(status)
        times.append((usage.ru_utime + usage.ru_stime) * 1000)
    return statistics.median(times)


def stages(store: Path, what: str, text: str, runs: int) -> dict[str, float]:
    """Median CPU ms of each stage over ``runs`` fresh processes (one untimed first)."""
    # The command itself first, so that the index file is there and saved as it would be.
    command = [sys.executable, "-m", "reliora_git", what, text, "--json"]
    for _ in range(2):
        subprocess.run(command, cwd=store, capture_output=True, env=child_env(), check=False)
    rows: list[list[tuple[str, float]]] = []
    for i in range(runs + 1):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, what, text],
            cwd=store,
            capture_output=True,
            text=True,
            env=child_env(),
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr.strip().splitlines()[-1])
        if i:
            rows.append([(name, float(ms)) for name, ms in json.loads(done.stdout)])
    names = [name for name, _ in rows[0]]
    medians = {name: statistics.median(row[k][1] for row in rows) for k, name in enumerate(names)}
    medians["total (this process, after the interpreter)"] = statistics.median(
        sum(ms for _, ms in row) for row in rows
    )
    return medians


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="a folder holding .reliora/")
    parser.add_argument("command", choices=("show", "search"))
    parser.add_argument("text", help="the id (show) or the query (search)")
    parser.add_argument("--runs", type=int, default=7, help="timed processes (default 7)")
    parser.add_argument("--json", action="store_true", help="print the medians as JSON")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    found = {"interpreter start (python -c pass)": interpreter_ms(args.runs)}
    found.update(stages(args.store.resolve(), args.command, args.text, args.runs))
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    width = max(len(name) for name in found)
    for name, ms in found.items():
        print(f"{name:<{width}}  {ms:7.1f} ms")
    print(f"({args.runs} runs each, {time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
