#!/usr/bin/env python3
"""What freshness (SPEC.md §12) costs: search with and without it, and `reliora stale`.

Usage (from the repository root, with the package installed):

    python bench/freshness.py                    # 10,000 records, 10,000 commits
    python bench/freshness.py --records 2000 --commits 2000 --runs 5

Two repositories are made with ``git fast-import`` (so that 10,000 commits take
seconds): the same records and history, but only in one do the records name
code ``paths`` (each one file of ``src/``, which the commits change at random).
A search returns 10 results in both; the ratio of the medians is what
freshness adds. "Measured anew" rows remove the kept freshness results before each
run (what the first command after a new commit pays). Only the standard library is used.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
FILES = 1000


def record_text(n: int, with_paths: bool) -> str:
    paths = f"paths: [src/mod{n % FILES}.py]\n" if with_paths else ""
    return (
        f"---\nid: rec-{n:05d}\ntitle: Retry backoff lesson number {n}\ntags: [retry]\n{paths}"
        f"---\n## Task\nKeep the billing retries sane ({n})\n\n## Solution\nBack off.\n"
    )


def make_repo(root: Path, records: int, commits: int, with_paths: bool, seed: int) -> None:
    """Records first (one commit), then ``commits`` commits that each change one src file."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    stream: list[bytes] = []

    def blob(data: str) -> bytes:
        raw = data.encode()
        return b"data %d\n%s\n" % (len(raw), raw)

    stamp = 1_700_000_000
    stream.append(b"commit refs/heads/main\n")
    stream.append(b"committer Bench <bench@example.com> %d +0000\n" % stamp)
    stream.append(blob("records and code"))
    for n in range(records):
        stream.append(b"M 100644 inline .reliora/experiences/rec-%05d.md\n" % n)
        stream.append(blob(record_text(n, with_paths)))
    for n in range(FILES):
        stream.append(b"M 100644 inline src/mod%d.py\n" % n)
        stream.append(blob(f"v0 {n}\n"))
    for c in range(commits):
        stamp += 60
        target = rng.randrange(FILES)
        stream.append(b"commit refs/heads/main\n")
        stream.append(b"committer Bench <bench@example.com> %d +0000\n" % stamp)
        stream.append(blob(f"change {c}"))
        stream.append(b"M 100644 inline src/mod%d.py\n" % target)
        stream.append(blob(f"v{c + 1} {target}\n"))
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=root, input=b"".join(stream), check=True, env=env
    )
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=root, check=True, env=env)
    (root / ".reliora" / "feedback").mkdir(exist_ok=True)
    # Files written within the last 2 s are never cached (the racy-mtime rule, SPEC.md §9):
    # date them back so that the timed runs are warm, as in a real checkout.
    old = time.time() - 60
    for path in (root / ".reliora").rglob("*"):
        os.utime(path, (old, old))


def forget_freshness(cwd: Path) -> None:
    """Remove the kept freshness results (and change verdicts): the next run measures anew."""
    for kept in (cwd / ".git" / "reliora-cache").glob("*"):
        if kept.suffix in (".freshness", ".changes"):
            kept.unlink()


def timed(command: list[str], cwd: Path, runs: int, cold: bool = False) -> float:
    subprocess.run(command, cwd=cwd, capture_output=True, check=True)  # warm the cache
    times = []
    for _ in range(runs):
        if cold:
            forget_freshness(cwd)
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    reliora = shutil.which("reliora") or "reliora"
    with tempfile.TemporaryDirectory(prefix="reliora-fresh-") as tmp:
        with_paths, without = Path(tmp) / "paths", Path(tmp) / "plain"
        started = time.perf_counter()
        make_repo(with_paths, args.records, args.commits, True, seed=1)
        make_repo(without, args.records, args.commits, False, seed=1)
        print(
            f"made two repositories of {args.records:,} records and {args.commits:,} commits "
            f"in {time.perf_counter() - started:.1f} s"
        )
        search = [reliora, "search", "retry backoff lesson", "--json"]
        plain = timed(search, without, args.runs)
        fresh = timed(search, with_paths, args.runs)
        cold = timed(search, with_paths, args.runs, cold=True)
        stale = timed([reliora, "stale", "--json"], with_paths, max(1, args.runs // 2))
        stale_cold = timed(
            [reliora, "stale", "--json"], with_paths, max(1, args.runs // 2), cold=True
        )
    print(f"search, 10 results, records without paths: {plain:.3f} s")
    print(f"search, 10 results, with freshness:        {fresh:.3f} s ({fresh / plain:.2f}×)")
    print(f"search, 10 results, freshness measured anew: {cold:.3f} s ({cold / plain:.2f}×)")
    print(f"reliora stale --json ({args.records:,} records with paths): {stale:.3f} s")
    print(f"reliora stale --json, measured anew:        {stale_cold:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
