#!/usr/bin/env python3
"""Recall and precision of `reliora history` against a reader's grades (docs/history.md).

Usage (from the repository root, with the package installed; each clone checked out at the
graded head, which the grades file names):

    python bench/history_eval.py --case /tmp/repos/chi docs/history-grades/chi.json \\
        --case /tmp/repos/bytes docs/history-grades/bytes.json

For each case, `reliora history --json --since FROM --limit 100000 --no-sessions` runs in the
clone, FROM being the graded window's start. An entry stands for the commits it lists
(a pull request: all of its commits and its merge; a changelog line: the commit that added
it). Then:

* recall: of the commits graded 2, the share some entry stands for;
* precision: of the best 20 entries, the share that stand for a commit graded 2;
* also the share graded 1 or 2 (lenient), the drafts' fields filled, and the time against
  ``git log -p`` over the same window.

Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

TOP = 20


def timed(args: list[str], cwd: Path, runs: int = 3) -> tuple[float, bytes]:
    walls, out = [], b""
    for _ in range(runs):
        started = time.perf_counter()
        out = subprocess.run(args, cwd=cwd, capture_output=True, check=True).stdout
        walls.append(time.perf_counter() - started)
    return statistics.median(walls), out


def evaluate(clone: Path, grades_file: Path) -> dict[str, Any]:
    grades = json.loads(grades_file.read_text(encoding="utf-8"))
    graded = {c["sha"]: c["grade"] for c in grades["commits"]}
    since = grades["window"]["from"]
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    reliora = shutil.which("reliora") or "reliora"
    wall, out = timed(
        [reliora, "history", "--json", "--since", since, "--limit", "100000", "--no-sessions"],
        clone,
    )
    log_wall, _ = timed(["git", "log", "-p", f"--since={since}"], clone)
    entries = json.loads(out)["entries"]
    lessons = {sha for sha, grade in graded.items() if grade == 2}
    found: set[str] = set()
    for entry in entries:
        found.update(sha for sha in entry["commits"] if sha in graded)
    top = entries[:TOP]

    def best(entry: dict[str, Any]) -> int:
        return max((graded.get(sha, 0) for sha in entry["commits"]), default=0)

    drafts = [e["draft"] for e in top if best(e) == 2]
    return {
        "repository": grades["repository"],
        "head matches": head == grades["head"],
        "graded": len(graded),
        "lessons": len(lessons),
        "entries": len(entries),
        "recall": len(found & lessons) / len(lessons) if lessons else None,
        "missed": sorted(sha[:12] for sha in lessons - found),
        "precision": sum(best(e) == 2 for e in top) / len(top) if top else None,
        "precision lenient": sum(best(e) >= 1 for e in top) / len(top) if top else None,
        "top": [
            (e["commits"][0][:12] if e["commits"] else "", best(e), e["title"][:70]) for e in top
        ],
        "drafts with problem and solution": (
            sum(bool(d.get("problems")) and bool(d.get("solution")) for d in drafts),
            len(drafts),
        ),
        "seconds": round(wall, 3),
        "git log -p seconds": round(log_wall, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", nargs=2, action="append", metavar=("CLONE", "GRADES"),
                        required=True)  # fmt: skip
    args = parser.parse_args()
    for clone, grades in args.case:
        print(json.dumps(evaluate(Path(clone), Path(grades)), indent=1))


if __name__ == "__main__":
    main()
