#!/usr/bin/env python3
"""Benchmark `review`'s context diff, and `reliora eval`, at 1,000 and 10,000 records.

Usage (from the repository root, with the package installed in the interpreter you use):

    python bench/context_diff.py                    # 1,000 and 10,000 records, 5 runs
    python bench/context_diff.py --sizes 1000 --runs 3 --out context.json
    python bench/context_diff.py --eval-only --corpus PATH   # `reliora eval` on the corpus

Each store is made as bench/run.py makes them (the corpus's records copied with new
ids, committed and packed), with an ``.reliora/eval.toml`` of :data:`CASES` cases (a
prompt each: the first problem of a record picked at random, expecting that record)
on ``main``; a branch then adds :data:`ADDED` records (copies of others under new
titles) and rewords the solution of :data:`MODIFIED` more. For each size:

* ``review --base main --format json`` as a whole process: the first run after the
  branch is made (the index of git trees knows neither side yet), then ``--runs`` more;
* the context diff alone, in a process of its own per run: the review's trees read,
  then :func:`~reliora_git.operations.review.context_diff.context_diff` timed — what the
  diff adds to a review (the base tree's index and two pushes per prompt);
* ``reliora eval`` on the branch (every lesson's reach, and the cases), once
  (``--no-eval`` leaves it out, and the corpus run below).

``--eval-only`` runs ``reliora eval --json`` on the corpus as it is (a committed copy),
and prints its reach figures and run time. Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import (
    DEFAULT_CORPUS,
    Source,
    cache_dirs,
    child_env,
    git,
    machine,
    make_store,
    read_corpus,
    reliora_command,
)

CASES = 10
ADDED = 5
MODIFIED = 5
_ID_LINE = re.compile(r"^id:.*$", re.MULTILINE)
_TITLE_LINE = re.compile(r"^title:.*$", re.MULTILINE)
_PROBLEM = re.compile(r"^## Problems\n- (.+)$", re.MULTILINE)

#: Run in a child process: the review's trees, then the context diff alone, timed.
TIMED_DIFF = """
import json, sys, time
from reliora_git.operations.review.branch import find_sides
from reliora_git.operations.review.context_diff import context_diff
from reliora_git.operations.review.trees import read_trees
from reliora_git.storage.gitfiles import find_git_store
store = find_git_store(sys.argv[1])
base, head = find_sides(store, "main", "HEAD")
with read_trees(store, base.commit, head.commit) as trees:
    ids = [c.path.rsplit("/", 1)[-1][:-3] for c in trees.record_changes if c.status != "D"]
    start = time.perf_counter()
    found = context_diff(store, trees.index, base.commit, head.commit, ids)
    took = time.perf_counter() - start
print(json.dumps({"seconds": took, "prompts": len(found.prompts), "changed": len(found.changed)}))
"""


def write_cases(root: Path, ids: list[str], rng: random.Random) -> None:
    experiences = root / ".reliora" / "experiences"
    by_id = {path.stem: path for path in experiences.rglob("*.md")}
    lines = []
    picked = 0
    for record_id in rng.sample(ids, len(ids)):
        found = _PROBLEM.search(by_id[record_id].read_text(encoding="utf-8"))
        if found is None:
            continue
        lines += [
            "[[case]]",
            f"prompt = {json.dumps(found.group(1))}",
            f'expect = ["{record_id}"]',
            "",
        ]
        picked += 1
        if picked == CASES:
            break
    (root / ".reliora" / "eval.toml").write_text("\n".join(lines), encoding="utf-8")


def make_branch(root: Path, sources: list[Source], ids: list[str], rng: random.Random) -> None:
    """A branch that adds ADDED records and rewords MODIFIED, committed."""
    git(root, "branch", "-M", "main")
    git(root, "checkout", "-q", "-b", "feature")
    experiences = root / ".reliora" / "experiences"
    for n, source in enumerate(rng.sample(sources, ADDED)):
        record_id = f"bench-added-record-{n:06d}"
        text = _ID_LINE.sub(f"id: {record_id}", source.text, count=1)
        text = _TITLE_LINE.sub(f'title: "Added in the branch: note {n}"', text, count=1)
        (experiences / f"{record_id}.md").write_text(text, encoding="utf-8")
    by_id = {path.stem: path for path in experiences.rglob("*.md")}
    for record_id in rng.sample(ids, MODIFIED):
        path = by_id[record_id]
        path.write_text(path.read_text(encoding="utf-8") + "\nReworded in the branch.\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the branch")


def timed(argv: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=child_env(), capture_output=True, text=True)
    return time.perf_counter() - start, done


def bench_size(
    size: int, sources: list[Source], runs: int, work: Path, with_eval: bool = True
) -> dict[str, Any]:
    rng = random.Random(size)
    root = work / f"store-{size}"
    root.mkdir()
    print(f"making a store of {size:,} records…", file=sys.stderr)
    ids = make_store(root, sources, size)
    write_cases(root, ids, rng)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "eval cases")
    make_branch(root, sources, ids, rng)
    review = [*reliora_command(), "review", "--base", "main", "--format", "json"]
    for folder in cache_dirs(root):
        shutil.rmtree(folder, ignore_errors=True)
    first, done = timed(review, root)
    if done.returncode != 0:
        sys.exit(f"bench: review failed: {done.stderr.strip()}")
    diff = json.loads(done.stdout)["contextDiff"]
    warm = [timed(review, root)[0] for _ in range(runs)]
    alone = []
    for _ in range(runs):
        _, child = timed([sys.executable, "-c", TIMED_DIFF, str(root)], root)
        if child.returncode != 0:
            sys.exit(f"bench: the timed context diff failed: {child.stderr.strip()}")
        alone.append(json.loads(child.stdout)["seconds"])
    eval_seconds, reach = None, {"recallAt5": None}
    if with_eval:
        eval_seconds, evaluated = timed([*reliora_command(), "eval", "--json"], root)
        reach = json.loads(evaluated.stdout)["reach"]
    return {
        "records": size,
        "cases": diff["compared"]["cases"],
        "recordTasks": diff["compared"]["records"],
        "changedPrompts": diff["changed"],
        "reviewFirstS": round(first, 3),
        "reviewMedianS": round(statistics.median(warm), 3),
        "contextDiffMedianS": round(statistics.median(alone), 3),
        "contextDiffMaxS": round(max(alone), 3),
        "evalS": None if eval_seconds is None else round(eval_seconds, 3),
        "evalR5": reach["recallAt5"],
    }


def eval_corpus(corpus: Path, work: Path) -> dict[str, Any]:
    root = work / "corpus"
    shutil.copytree(corpus / ".reliora", root / ".reliora")
    git(root, "init", "-q", "--template=")
    git(root, "config", "gc.auto", "0")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "corpus")
    argv = [*reliora_command(), "eval", "--json"]
    first, done = timed(argv, root)  # builds the store index
    second, done = timed(argv, root)
    document = json.loads(done.stdout)
    reach = document["reach"]
    return {
        "judged": reach["judged"],
        "withoutTask": reach["withoutTask"],
        "recallAt1": reach["recallAt1"],
        "recallAt5": reach["recallAt5"],
        "mrr": reach["mrr"],
        "unreachable": len(reach["unreachable"]),
        "unreachableBy": _reasons(reach["unreachable"]),
        "unreachableExamples": [r["id"] for r in reach["unreachable"][:5]],
        "crowding": reach["crowding"][:5],
        "firstRunS": round(first, 2),
        "secondRunS": round(second, 2),
        "evalOwnS": document["seconds"],
    }


def _reasons(unreachable: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in unreachable:
        reason = record["reason"]
        key = (
            "below the floor"
            if reason.startswith("below")
            else "after the top 5"
            if "after the" in reason
            else "no title or tag word"
        )
        counts[key] = counts.get(key, 0) + 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes")
    parser.add_argument("--runs", type=int, default=5, help="timed runs a row (default 5)")
    parser.add_argument(
        "--eval-only", action="store_true", help="only `reliora eval` on the corpus"
    )
    parser.add_argument(
        "--no-eval", action="store_true", help="skip `reliora eval` on the bench stores"
    )
    parser.add_argument("--out", type=Path, help="write the results as JSON to this file")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"machine": machine()}
    with tempfile.TemporaryDirectory(prefix="reliora-context-") as tmp:
        work = Path(tmp)
        if not args.no_eval:
            results["corpusEval"] = eval_corpus(args.corpus.resolve(), work)
            print(json.dumps(results["corpusEval"], indent=2))
        if not args.eval_only:
            sources = read_corpus(args.corpus.resolve())
            results["sizes"] = []
            for size in (int(s) for s in args.sizes.split(",")):
                row = bench_size(size, sources, args.runs, work, not args.no_eval)
                results["sizes"].append(row)
                print(json.dumps(row))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
