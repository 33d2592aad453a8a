#!/usr/bin/env python3
"""Time ``reliora search`` with a pasted 10,000-word query (the query-token cap, issue 23).

Usage (from the repository root, with the package installed):

    python bench/long_query.py                       # 10,000 records of ../shared/corpora/til
    python bench/long_query.py --records 10000 --words 10000 --runs 3
    python bench/long_query.py --code /tmp/old       # another checkout's reliora_git (PYTHONPATH)

Builds a store as bench/run.py does (the corpus copied over and over, committed),
takes the query's words from the corpus itself — the first ``--words`` distinct
words of its texts, so most of them match records, as a pasted log of real
output would — and measures ``reliora search QUERY --json`` as a whole process:
one untimed warm-up (it also fills the cache), then ``--runs`` timed runs; wall
seconds, CPU seconds and peak resident memory (rusage of the process), medians.
Prints one JSON object. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import DEFAULT_CORPUS, child_env, make_store, read_corpus, reliora_command, run_once

_WORD = re.compile(r"[a-z]{3,}")


def corpus_words(texts: list[str], count: int) -> list[str]:
    """The first ``count`` distinct lower-case words of the corpus, in order of appearance."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text.lower()):
            seen.setdefault(word)
            if len(seen) == count:
                return list(seen)
    return list(seen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--words", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--code", type=Path, help="a checkout whose reliora_git to measure")
    args = parser.parse_args(argv)

    sources = read_corpus(args.corpus)
    words = corpus_words([s.text for s in sources], args.words)
    query = " ".join(words)
    env = child_env()
    if args.code is not None:
        env["PYTHONPATH"] = str(args.code.resolve())
    with tempfile.TemporaryDirectory(prefix="reliora-long-query-") as folder:
        root = Path(folder) / "store"
        root.mkdir()
        make_store(root, sources, args.records)
        argv_ = [*reliora_command(), "search", query, "--json"]
        seconds, cpu, peak = [], [], []
        for run in range(args.runs + 1):
            elapsed, used, code, peak_mb, stderr = run_once(argv_, root, env)
            if code != 0:
                print(stderr, file=sys.stderr)
                return 1
            if run:  # the first run is the warm-up
                seconds.append(elapsed)
                cpu.append(used)
                peak.append(peak_mb)
    result = {
        "records": args.records,
        "queryWords": len(words),
        "queryBytes": len(query.encode()),
        "code": str(args.code) if args.code else "installed",
        "seconds": round(statistics.median(seconds), 2),
        "cpu": round(statistics.median(cpu), 2),
        "peakMb": round(max(peak), 1),
        "load": os.getloadavg()[0],
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
