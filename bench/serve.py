#!/usr/bin/env python3
"""Time ``reliora serve``: how soon it answers after starting, and each page's answer.

Usage:

    python bench/serve.py [--sizes 1000,10000] [--starts 5] [--runs 15] [--out FILE]

Stores are made as bench/run.py makes them (the corpus's records copied with new ids,
committed in a git repository), and the index cache is warmed by one ``reliora list``
first, as any earlier command leaves it. For each size:

* **start**: ``reliora serve --port N`` is started ``--starts`` times; the clock stops when
  it prints its "Serving" line (the index is loaded and the socket listens: it answers from
  then on) and, again, when the first ``GET /guards`` answers 200 (a page that reads the
  index only);
* **pages**: against one server, each page is fetched once untimed (the stale list and the
  cold-start list are kept per index and HEAD, so the first visit pays for git history;
  while the cold-start list is being made the page answers at once that it is, and the
  runs wait until it is there, so they time the list itself),
  then ``--runs`` times over HTTP from this process; the median, p90 and the slowest.

Prints a Markdown table; ``--out`` also writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import DEFAULT_CORPUS, child_env, machine, make_store, read_corpus, reliora_command

PROMPT = "pytest fixtures run twice when the conftest is imported from two folders"
SEARCH = "git rebase interactive"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def fetch(url: str) -> int:
    return fetch_page(url)[0]


def fetch_page(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return int(answer.status), answer.read()


#: What the cold-start page says while its list is being made (it then reloads itself).
PENDING = b"is being made"


def start(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str, float, float]:
    """A server in ``root``; seconds to its "Serving" line and to its first page."""
    port = free_port()
    began = time.perf_counter()
    process = subprocess.Popen(
        [*reliora_command(), "serve", "--port", str(port)],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    ready = time.perf_counter() - began
    if not line.startswith("Serving"):
        process.kill()
        sys.exit(f"bench: reliora serve did not start: {line}{process.communicate()[1]}")
    url = f"http://127.0.0.1:{port}"
    fetch(url + "/guards")
    first = time.perf_counter() - began
    return process, url, ready, first


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(timeout=30)


def pages(ids: list[str]) -> dict[str, str]:
    prompt = urllib.parse.quote_plus(PROMPT)
    return {
        "lessons (list, page 1)": "/",
        "lessons (list, page 100)": "/?page=100",
        "lessons (most helpful, active)": "/?sort=helpful&show=active&page=3",
        "lessons (tag filter)": "/?tag=git",
        "lessons (search)": "/?q=" + urllib.parse.quote_plus(SEARCH),
        "one lesson": f"/lesson/{ids[len(ids) // 2]}",
        "try a prompt": f"/try?prompt={prompt}",
        "guards": "/guards",
        "sessions": "/sessions",
        "cold start": "/history",
        "stale": "/stale",
    }


def bench_size(size: int, sources: Any, workdir: Path, starts: int, runs: int) -> dict[str, Any]:
    root = workdir / f"store-{size}"
    root.mkdir()
    print(f"bench: making a store of {size} records", file=sys.stderr)
    ids = make_store(root, sources, size)
    env = child_env()
    subprocess.run([*reliora_command(), "list", "--json"], cwd=root, env=env,
                   capture_output=True, check=True)  # fmt: skip
    readies, firsts = [], []
    for _ in range(starts):
        process, _, ready, first = start(root, env)
        stop(process)
        readies.append(ready)
        firsts.append(first)
    result: dict[str, Any] = {
        "size": size,
        "start_ready_s": readies,
        "start_first_page_s": firsts,
        "pages": {},
    }
    process, url, _, _ = start(root, env)
    try:
        for label, path in pages(ids).items():
            began = time.perf_counter()
            status = fetch(url + path)
            cold = time.perf_counter() - began
            if status != 200:
                sys.exit(f"bench: {path} answered {status}")
            while fetch_page(url + path)[1].find(PENDING) >= 0:  # timed: the list itself
                time.sleep(0.05)
            times = []
            for _ in range(runs):
                began = time.perf_counter()
                fetch(url + path)
                times.append(time.perf_counter() - began)
            result["pages"][label] = {"path": path, "first_s": cold, "runs_s": times}
    finally:
        stop(process)
    return result


def p90(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def report(results: list[dict[str, Any]]) -> str:
    lines = [
        "| records | what | median | p90 | slowest | first visit |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        for label, key in (("start: ready (Serving line)", "start_ready_s"),
                           ("start: first page answered", "start_first_page_s")):  # fmt: skip
            v = r[key]
            lines.append(f"| {r['size']:,} | {label} | {statistics.median(v):.3f} s | "
                         f"{p90(v):.3f} s | {max(v):.3f} s | |")  # fmt: skip
        for label, page in r["pages"].items():
            v, first = page["runs_s"], page["first_s"]
            lines.append(f"| {r['size']:,} | {label} | {statistics.median(v):.3f} s | "
                         f"{p90(v):.3f} s | {max(v):.3f} s | {first:.3f} s |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes")
    parser.add_argument("--starts", type=int, default=5, help="server starts timed (default 5)")
    parser.add_argument("--runs", type=int, default=15, help="timed fetches a page (default 15)")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    sources = read_corpus(args.corpus)
    results = []
    with tempfile.TemporaryDirectory(prefix="reliora-bench-serve-") as workdir:
        for size in (int(s) for s in args.sizes.split(",") if s.strip()):
            results.append(bench_size(size, sources, Path(workdir), args.starts, args.runs))
    print(report(results))
    info = machine()
    print(f"\n{info}")
    if args.out:
        args.out.write_text(json.dumps({"machine": info, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
