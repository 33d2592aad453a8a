#!/usr/bin/env python3
"""Time the secret scan on hostile text: 1 MiB lines and records made to make expressions work.

Usage (from the repository root, with the package installed in the interpreter you use):

    python bench/secret_scan.py                 # every case, 3 runs each, default plugins
    python bench/secret_scan.py --entropy       # with the entropy plugins too
    python bench/secret_scan.py --runs 5 --out secrets.json

Cases (each 1 MiB = 1,048,576 characters):

* ``slashes``: one line of ``/`` — npm's ``//.+/:_authToken=`` backtracked over
  it (64,000 took 17 s before, a MiB about an hour);
* ``eyJ``: one line of ``eyJeyJ…`` — JWT's ``eyJ[…]+\\.`` restarted at each ``eyJ``;
* ``authToken``: ``//x//x…/:_authToken=`` — npm's expression failing from every ``//``;
* ``jwt-like``: ``eyJa.eyJa.…`` — a JWT candidate every 10 characters, each checked;
* ``keywords``: ``password = key=token: secret AKC AKIA … `` repeated — every
  keyword-gated expression runs on the whole line;
* ``mixed line``: a seeded random mix of all of the above and more, one line;
* ``mixed record``: the same mix as a record file (front matter, sections,
  80-character lines), scanned as ``check`` scans a file (``scan_store_file``);
* ``redact mixed``: ``redact`` (what ``review`` prints goes through) on the mixed line.

Only the standard library and the package are used; the plugins are loaded
before timing. Prints a table — wall-clock best and median, and the best CPU
time of the process (``time.process_time``), which a machine busy with other
work inflates less — and ``--out`` writes the numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable

from reliora_git.records import credentials, secret_scanners

MIB = 1 << 20
HOSTILE_PIECES = [
    "/",
    "//",
    "eyJ",
    "eyJa.",
    "://",
    "://a:",
    "https://a:",
    "xoxb-1-",
    "1-",
    "-",
    "=",
    "a:",
    " AKC",
    "AKIA",
    "_authToken=",
    "/:_authToken= ",
    "ghp_",
    "glpat-",
    "key=",
    "password = ",
    "secret_access_key: ",
    "'",
    '"a',
    " ",
    "a",
]


def _fill(piece: str) -> str:
    return (piece * (MIB // len(piece) + 1))[:MIB]


def _mixed(seed: int = 23) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(HOSTILE_PIECES) for _ in range(MIB // 3))[:MIB]


def _record(body: str) -> str:
    lines = [body[i : i + 80] for i in range(0, len(body), 80)]
    half = len(lines) // 2
    return (
        "---\nid: hostile\ntitle: Hostile\nextra:\n  note: x\n---\n"
        + "## Task\n"
        + "\n".join(lines[:half])
        + "\n\n## Solution\n"
        + "\n".join(lines[half:])
        + "\n"
    )


def cases() -> dict[str, Callable[[bool], object]]:
    mixed = _mixed()
    record = _record(mixed)
    keywords = _fill("password = key=token: secret AKC AKIA cl sl ac sk -us sg. ")

    def line(text: str) -> Callable[[bool], object]:
        return lambda entropy: credentials.scan_fields([("x", text)], entropy=entropy)

    return {
        "slashes": line("/" * MIB),
        "eyJ": line(_fill("eyJ")),
        "authToken": line(_fill("//x")[: MIB - 13] + "/:_authToken="),
        "jwt-like": line(_fill("eyJa.")),
        "keywords": line(keywords),
        "mixed line": line(mixed),
        "mixed record": lambda entropy: credentials.scan_store_file(
            ".reliora/experiences/hostile.md", record, entropy=entropy
        ),
        "redact mixed": lambda entropy: credentials.redact(mixed, entropy=entropy),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--entropy", action="store_true", help="the entropy plugins too")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    secret_scanners.all_scanners(args.entropy)  # load every plugin before timing
    results = {}
    header = f"{'case':<14} {'best s':>8} {'median s':>9} {'CPU best s':>11}"
    print(f"{header}  (1 MiB, {args.runs} runs)")
    for name, run in cases().items():
        times, cpu = [], []
        for _ in range(args.runs):
            started, started_cpu = time.perf_counter(), time.process_time()
            run(args.entropy)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        best, median = min(times), statistics.median(times)
        results[name] = {"best": best, "median": median, "cpu_best": min(cpu)}
        print(f"{name:<14} {best:>8.3f} {median:>9.3f} {min(cpu):>11.3f}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            json.dump({"entropy": args.entropy, "runs": args.runs, "results": results}, out)


if __name__ == "__main__":
    main()
