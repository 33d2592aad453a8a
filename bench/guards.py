#!/usr/bin/env python3
"""Benchmark guards (SPEC.md §15) in the pre-commit hook, at 10,000 records.

Usage (from the repository root, with the package's dependencies installed):

    python bench/guards.py                      # 10,000 records, 15 runs a row
    python bench/guards.py --size 1000 --runs 9 --before 309c3f1 --out guards.json

Each row is one ``python -m reliora_git check --staged`` process per run (what the
installed hook runs), in a store made as bench/run.py makes them (the corpus's
records copied with new ids, committed and packed), with a code file staged:

* **no guard in the store**, nothing staged in ``.reliora/``: this checkout against
  ``--before`` (default: HEAD with the hook's guard step taken out; or a commit,
  extracted with ``git archive``), the runs interleaved so that both see the same
  load, each version with a cache folder of its own;
* **100 guards** (one each in 100 records, committed) over a **2,000-line staged
  change** (20 files of 100 lines, some lines matching): the figure the issue
  bounds (≤ +100 ms over the row without guards); interleaved with ``--before``
  when that is a commit;
* the same guards with a **50 MB staged file** (skipped by the size limit, never
  diffed);
* **120 slow guards** more (6 each in 20 other records, the pattern
  ``(?:[ -~]{0,30}e){1,4}@@…``: linear, but about 1.5 s a megabyte each) with a
  **700 KB text file** staged: what the hook's time budget bounds (``--slow-runs``
  runs; ``--slow-before REV`` times a build without the budget too, one run each);
* the hostile pattern ``(a+)+$`` on a 60,000-character line, in process (RE2):
  one ``matching_lines`` call, best and median of 25.

Only the standard library is used (and the package itself for the in-process row).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import DEFAULT_CORPUS, REPO_ROOT, child_env, git, machine, make_store, read_corpus

GUARDS = 100
CHANGED_FILES = 20
LINES_PER_FILE = 100
SLOW_RECORDS = 20
SLOW_EACH = 6
SLOW_PATTERN = "(?:[ -~]{{0,30}}e){{1,4}}@@{record}x{guard}"
SLOW_FILE_BYTES = 700_000


def hook_argv() -> list[str]:
    return [sys.executable, "-m", "reliora_git", "check", "--staged"]


def env_for(checkout: Path, cache: Path) -> dict[str, str]:
    """The environment of one checkout's runs: its code, and a cache of its own.

    Each version keeps its own store index (the cache is stamped with the code that
    wrote it): sharing one, the runs of two versions would rebuild it for each other.
    """
    env = child_env()
    env["PYTHONPATH"] = str(checkout)
    env["RELIORA_CACHE_DIR"] = str(cache)
    return env


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        sys.exit(f"bench: {' '.join(argv)} failed (exit {code}): {err.strip()[-500:]}")
    if proc.stderr:
        proc.stderr.close()
    return elapsed, usage.ru_utime + usage.ru_stime, code


def rows_of(label: str, checkouts: dict[str, Path], root: Path, runs: int) -> list[dict[str, Any]]:
    """``runs`` interleaved runs of the hook from each checkout (after one untimed run each)."""
    found: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in checkouts}
    codes: dict[str, set[int]] = {name: set() for name in checkouts}
    for i in range(runs + 1):
        for name, checkout in checkouts.items():
            cache = root.parent / f"cache-{name}"
            wall, cpu, code = timed(hook_argv(), root, env_for(checkout, cache))
            codes[name].add(code)
            if i:
                found[name]["wall"].append(wall)
                found[name]["cpu"].append(cpu)
    return [
        {
            "what": f"{label} ({name})",
            "median_wall_s": round(statistics.median(found[name]["wall"]), 4),
            "best_wall_s": round(min(found[name]["wall"]), 4),
            "median_cpu_s": round(statistics.median(found[name]["cpu"]), 4),
            "runs": runs,
            "exit_codes": sorted(codes[name]),
        }
        for name in checkouts
    ]


def extract(rev: str, into: Path) -> Path:
    """The package as it was at ``rev`` (git archive: nothing in .git changes)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "reliora_git"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def guards_off(checkout: Path) -> Path:
    """``checkout`` with the hook's guard step taken out: everything else the same code."""
    staged = checkout / "reliora_git" / "operations" / "staged.py"
    text = staged.read_text(encoding="utf-8")
    step = "guards = staged_guards(store, staged)"
    if step not in text:
        sys.exit("bench: cannot find the guard step in operations/review/staged.py")
    staged.write_text(text.replace(step, "guards = GuardReport()"), encoding="utf-8")
    return checkout


def stage_code(root: Path, files: int, lines: int) -> None:
    """``files`` new source files of ``lines`` lines each, one line in 50 a guard's target."""
    src = root / "src"
    src.mkdir(exist_ok=True)
    for f in range(files):
        body = []
        for n in range(lines):
            if n % 50 == 7:
                body.append(f"    forbidden_call_{(f * 7 + n) % GUARDS}(value)  # repeats a lesson")
            else:
                body.append(
                    f"    total_{n} = compute(item_{n}, factor={n % 13}) + offset  # line {n}"
                )
        (src / f"module_{f:02}.py").write_text("\n".join(body) + "\n", encoding="utf-8")
    git(root, "add", "src")


def add_guards(root: Path, ids: list[str], count: int) -> None:
    """Give ``count`` records one guard each (a mix of literal and regex patterns), committed."""
    experiences = root / ".reliora" / "experiences"
    by_id = {path.stem: path for path in experiences.rglob("*.md")}
    step = max(1, len(ids) // count)
    for n, record_id in enumerate(ids[::step][:count]):
        path = by_id[record_id]
        text = path.read_text(encoding="utf-8")
        if n % 3 == 0:
            guard = f'guards:\n- pattern: "forbidden_call_{n}\\\\("\n  paths: ["src/**/*.py"]\n'
        elif n % 3 == 1:
            guard = f'guards:\n- pattern: "\\\\bforbidden_call_{n}\\\\b.*lesson$"\n'
        else:
            guard = f"guards:\n- pattern: 'forbidden_call_{n}[(]'\n  severity: warn\n"
        head, sep, rest = text.partition("\n---\n")
        path.write_text(head + "\n" + guard.rstrip("\n") + sep + rest, encoding="utf-8")
    git(root, "add", "-A", ".reliora")
    git(root, "commit", "-q", "-m", f"{count} guards")


def add_slow_guards(root: Path, ids: list[str]) -> None:
    """Give 20 records that have no guard yet 6 slow guards each, committed."""
    experiences = root / ".reliora" / "experiences"
    by_id = {path.stem: path for path in experiences.rglob("*.md")}
    free = [i for i in ids if "guards:" not in by_id[i].read_text(encoding="utf-8")]
    step = max(1, len(free) // SLOW_RECORDS)
    for r, record_id in enumerate(free[step // 2 :: step][:SLOW_RECORDS]):
        path = by_id[record_id]
        items = "".join(
            f"- pattern: '{SLOW_PATTERN.format(record=r, guard=g)}'\n" for g in range(SLOW_EACH)
        )
        head, sep, rest = path.read_text(encoding="utf-8").partition("\n---\n")
        path.write_text(head + "\nguards:\n" + items.rstrip("\n") + sep + rest, encoding="utf-8")
    git(root, "add", "-A", ".reliora")
    git(root, "commit", "-q", "-m", f"{SLOW_RECORDS * SLOW_EACH} slow guards")


def stage_words(root: Path, size: int) -> None:
    """A text file of ``size`` bytes of short words, many with an `e` (the slow guards'
    letter), staged."""
    rng = random.Random(7)
    words = ["the", "offset", "compute", "value", "element", "tree", "seven", "eleven", "at"]
    lines: list[str] = []
    total = 0
    while total < size:
        line = " ".join(rng.choice(words) for _ in range(12))
        lines.append(line)
        total += len(line) + 1
    (root / "notes.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    git(root, "add", "notes.txt")


def hostile() -> dict[str, Any]:
    sys.path.insert(0, str(REPO_ROOT))
    from reliora_git.records.guard_match import matching_lines
    from reliora_git.records.guards import compiled

    line = ("a" * 60_000 + "b").encode()
    compiled("(a+)+$")  # compiled once, as in the hook
    times = []
    for _ in range(25):
        start = time.perf_counter()
        found = list(matching_lines("(a+)+$", line))
        times.append(time.perf_counter() - start)
    assert found == []
    return {
        "what": "hostile (a+)+$ on a 60,000-character line (in process)",
        "median_wall_s": round(statistics.median(times), 6),
        "best_wall_s": round(min(times), 6),
        "runs": len(times),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--before",
        default="guards-off",
        help="what the first row compares with: a commit before guards, or 'guards-off' "
        "(default: this checkout's HEAD with the hook's guard step taken out), or 'none'",
    )
    parser.add_argument(
        "--slow-runs", type=int, default=3, help="runs of the row with 120 slow guards"
    )
    parser.add_argument(
        "--slow-before",
        default=None,
        metavar="REV",
        help="also time the slow guards' row with the package as it was at REV (one run "
        "each: a build without the time budget takes tens of seconds)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    sources = read_corpus(args.corpus)
    results: list[dict[str, Any]] = []
    info = machine()
    with tempfile.TemporaryDirectory(prefix="reliora-guards-") as tmp:
        work = Path(tmp)
        root = work / "store"
        root.mkdir()
        print(f"making a store of {args.size:,} records…", file=sys.stderr)
        ids = make_store(root, sources, args.size)
        checkouts = {"after": REPO_ROOT}
        if args.before != "none":
            before = work / "before"
            before.mkdir()
            if args.before == "guards-off":
                name = "before: guards off"
                checkouts = {name: guards_off(extract("HEAD", before)), "after": REPO_ROOT}
            else:
                checkouts = {f"before: {args.before}": extract(args.before, before)}
                checkouts["after"] = REPO_ROOT
        (root / "README.md").write_text("one line of code\n", encoding="utf-8")
        git(root, "add", "README.md")
        results += rows_of("hook, no guard in the store, 1 line staged", checkouts, root, args.runs)
        git(root, "commit", "-q", "--no-verify", "-m", "readme")
        stage_code(root, CHANGED_FILES, LINES_PER_FILE)
        label = f"hook, no guard, {CHANGED_FILES * LINES_PER_FILE:,} lines staged"
        results += rows_of(label, {"after": REPO_ROOT}, root, args.runs)
        git(root, "reset", "-q")
        add_guards(root, ids, GUARDS)
        git(root, "add", "src")
        label = f"hook, {GUARDS} guards, {CHANGED_FILES * LINES_PER_FILE:,} lines staged"
        # A build given as --before runs guards too: interleaved, the same load for both.
        with_guards = checkouts if args.before not in ("guards-off", "none") else {}
        results += rows_of(label, with_guards or {"after": REPO_ROOT}, root, args.runs)
        git(root, "reset", "-q")
        big = root / "data" / "big.txt"
        big.parent.mkdir()
        with open(big, "w", encoding="utf-8") as handle:
            line = "forbidden_call_1(value) " * 4 + "\n"
            handle.write(line * (50 * 1024 * 1024 // len(line)))
        git(root, "add", "data")
        label = f"hook, {GUARDS} guards, a 50 MB file staged"
        results += rows_of(label, {"after": REPO_ROOT}, root, args.runs)
        git(root, "reset", "-q")
        add_slow_guards(root, ids)
        stage_words(root, SLOW_FILE_BYTES)
        label = (
            f"hook, {SLOW_RECORDS * SLOW_EACH} slow guards (+{GUARDS}), "
            f"a {SLOW_FILE_BYTES // 1000} KB file staged"
        )
        results += rows_of(label, {"after": REPO_ROOT}, root, args.slow_runs)
        if args.slow_before:
            older = work / "slow-before"
            older.mkdir()
            name = f"before: {args.slow_before}"
            results += rows_of(label, {name: extract(args.slow_before, older)}, root, 1)
    results.append(hostile())
    for row in results:
        cpu = row.get("median_cpu_s")
        print(
            f"| {args.size:,} | {row['what']} | {row['median_wall_s']:.4f} | "
            f"{row['best_wall_s']:.4f} | {'' if cpu is None else f'{cpu:.4f}'} |"
        )
    if args.out:
        args.out.write_text(
            json.dumps({"machine": info, "size": args.size, "results": results}, indent=2)
        )
    print(f"load average after: {os.getloadavg()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
