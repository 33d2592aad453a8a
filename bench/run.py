#!/usr/bin/env python3
"""Benchmark `reliora` as whole processes against `git grep` on stores of 1k, 10k and 100k records.

Usage (from the repository root, with the package installed in the interpreter you use):

    python bench/run.py                      # 1,000, 10,000 and 100,000 records
    python bench/run.py --quick              # 1,000 and 10,000 only
    python bench/run.py --corpus PATH --out results.json

Stores are made by copying the records of a corpus (default: ../shared/corpora/til
next to the repository) as they are, rewriting only the ``id:`` line and the file
name, into temporary git repositories whose files are committed (so that
``git grep`` and ``check --staged`` see a realistic repository). Every command is
run as a separate process several times; the table shows medians, the ratio to
``git grep -il`` for the same query words over the same files, and the peak
resident memory of the process (``wait4`` rusage of that one child).

Only the standard library is used: no extra setup.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpora" / "til"
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)

#: (label, query, --project-context or None): one word, three words, a phrase, with a context.
QUERIES: tuple[tuple[str, str, str | None], ...] = (
    ("search: one word", "migration", None),
    ("search: three words", "postgres index performance", None),
    ("search: phrase", "environment variable", None),
    ("search: --project-context", "search and replace", "vim"),
)
STOP_WORDS = {"a", "and", "the", "of", "to", "in", "for", "with", "on", "is"}
#: One feedback event for every FEEDBACK_EVERY-th record, so that path is measured too.
FEEDBACK_EVERY = 100
OUTCOMES = ("success", "partial", "failure", "not-applicable", "outdated")
_ID_LINE = re.compile(r"^id:.*$", re.MULTILINE)
_HEX_SUFFIX = re.compile(r"-[0-9a-f]{6}$")
#: Enough git identity for commits in a clean environment.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


# --- making stores ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    folder: str  # sub-folder of experiences/, kept as it is
    record_id: str
    text: str


def read_corpus(corpus: Path) -> list[Source]:
    root = corpus / ".reliora" / "experiences"
    if not root.is_dir():
        sys.exit(f"bench: no corpus at {root} (pass --corpus PATH)")
    sources = []
    for path in sorted(root.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        match = re.search(r"^id:\s*(\S+)\s*$", text, re.MULTILINE)
        record_id = match.group(1).strip("'\"") if match else path.stem
        sources.append(Source(path.parent.relative_to(root).as_posix(), record_id, text))
    if not sources:
        sys.exit(f"bench: the corpus at {root} holds no records")
    return sources


def new_ids(sources: list[Source], count: int) -> list[tuple[Source, str]]:
    """``count`` (source, new id) pairs: the corpus over and over, each copy with a fresh id."""
    used: set[str] = set()
    pairs = []
    for i in range(count):
        source = sources[i % len(sources)]
        slug = _HEX_SUFFIX.sub("", source.record_id)[:48].rstrip("-") or "record"
        salt = 0
        while True:
            digest = hashlib.sha1(f"{source.record_id}/{i}/{salt}".encode()).hexdigest()[:6]
            candidate = f"{slug}-{digest}"
            if candidate not in used:
                break
            salt += 1
        used.add(candidate)
        pairs.append((source, candidate))
    return pairs


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"bench: git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def make_store(root: Path, sources: list[Source], count: int) -> Path:
    """A committed git repository at ``root`` whose store holds ``count`` copied records."""
    experiences = root / ".reliora" / "experiences"
    feedback = root / ".reliora" / "feedback"
    experiences.mkdir(parents=True)
    feedback.mkdir()
    (root / ".reliora" / "config.toml").write_text("search_limit = 10\n", encoding="utf-8")
    for i, (source, record_id) in enumerate(new_ids(sources, count)):
        folder = experiences / source.folder
        folder.mkdir(parents=True, exist_ok=True)
        text = _ID_LINE.sub(f"id: {record_id}", source.text, count=1)
        (folder / f"{record_id}.md").write_text(text, encoding="utf-8")
        if i % FEEDBACK_EVERY == 0:
            events = feedback / record_id
            events.mkdir()
            outcome = OUTCOMES[(i // FEEDBACK_EVERY) % len(OUTCOMES)]
            (events / f"20261202T120000Z-{record_id[-6:]}.md").write_text(
                f"---\nrecord: {record_id}\noutcome: {outcome}\nat: '2026-12-02T12:00:00Z'\n---\n",
                encoding="utf-8",
            )
    git(root, "init", "-q", "--template=")
    git(root, "config", "commit.gpgsign", "false")
    # A commit of thousands of loose objects starts `git gc --auto` in the background, which
    # then competes with the measurements for a core (it made the first 100,000-record
    # search look 1.6× slower). Pack now, in the foreground, as a real repository would be.
    git(root, "config", "gc.auto", "0")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"{count} records")
    git(root, "repack", "-a", "-d", "-q")
    return root


def stage_new_record(root: Path, source: Source) -> None:
    """One new record, staged (not committed), for `check --staged`."""
    path = root / ".reliora" / "experiences" / "bench-new-staged-record-000001.md"
    text = _ID_LINE.sub("id: bench-new-staged-record-000001", source.text, count=1)
    path.write_text(text, encoding="utf-8")
    git(root, "add", "--", str(path))


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Measure:
    label: str
    size: int
    seconds: list[float] = field(default_factory=list)
    #: User + system CPU seconds of each run: steadier than wall time on a busy machine.
    cpu: list[float] = field(default_factory=list)
    peak_mb: float = 0.0
    exit_codes: set[int] = field(default_factory=set)
    unsupported: bool = False
    note: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds and not self.unsupported else None

    @property
    def median_cpu(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu and not self.unsupported else None


def run_once(
    argv: list[str], cwd: Path, env: dict[str, str]
) -> tuple[float, float, int, float, str]:
    """(seconds, CPU seconds, exit code, peak RSS in MB, stderr) of one process, from its rusage."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    # ru_maxrss is KiB on Linux, bytes on macOS.
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, cpu, proc.returncode, usage.ru_maxrss / scale, stderr


def measure(
    label: str, size: int, argv: list[str], cwd: Path, env: dict[str, str], runs: int, warmup: int
) -> Measure:
    result = Measure(label, size)
    for i in range(warmup + runs):
        elapsed, cpu, code, peak, stderr = run_once(argv, cwd, env)
        if code == 2 and "No such option" in stderr:
            result.unsupported = True
            result.note = "n/a: option not supported by this build"
            return result
        if code not in (0, 1):
            sys.exit(f"bench: {' '.join(argv)} failed with exit {code}: {stderr.strip()[-500:]}")
        result.exit_codes.add(code)
        if i >= warmup:
            result.seconds.append(elapsed)
            result.cpu.append(cpu)
            result.peak_mb = max(result.peak_mb, peak)
    return result


def query_words(query: str) -> list[str]:
    return [w for w in re.findall(r"[^\W_]+", query.lower()) if w not in STOP_WORDS]


def reliora_command() -> list[str]:
    """The installed console script beside this interpreter, else on PATH, else ``-m``."""
    beside = Path(sys.executable).with_name("reliora")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("reliora")
    # From a checkout that is not installed: child_env() puts the checkout on PYTHONPATH.
    return [found] if found else [sys.executable, "-m", "reliora_git"]


def cache_dirs(root: Path) -> list[Path]:
    return [root / ".git" / "reliora-cache"]


def bench_size(
    size: int, sources: list[Source], workdir: Path, runs: int, warmup: int
) -> list[Measure]:
    root = workdir / f"store-{size}"
    print(f"\n== {size:,} records: making the store in {root} …", flush=True)
    start = time.perf_counter()
    make_store(root, sources, size)
    print(f"   made and committed in {time.perf_counter() - start:.1f} s", flush=True)
    env = child_env()
    reliora = reliora_command()
    measures = []

    # The first search of a store builds the cache: report it once, as "cold".
    label, text, context = QUERIES[0]
    for folder in cache_dirs(root):
        shutil.rmtree(folder, ignore_errors=True)
    cold = measure(
        "search: first run (cold cache)",
        size,
        [*reliora, "search", text, "--json"],
        root,
        env,
        runs=1,
        warmup=0,
    )
    measures.append(cold)
    print(f"   {cold.label}: {cold.seconds[0]:.3f} s", flush=True)

    for label, text, context in QUERIES:
        argv = [*reliora, "search", text, "--json"]
        if context:
            argv += ["--project-context", context]
        found = measure(label, size, argv, root, env, runs, warmup)
        grep_argv = ["git", "grep", "-il"]
        for word in query_words(text):
            grep_argv += ["-e", word]
        grep_argv += ["--", ".reliora/experiences"]
        reference = measure(f"git grep -il ({label[8:]})", size, grep_argv, root, env, runs, warmup)
        found.note = f"vs {reference.label}"
        measures += [found, reference]
        print(f"   {label}: {found.median:.3f} s  (git grep {reference.median:.3f} s)", flush=True)

    stage_new_record(root, sources[0])
    staged = measure(
        "check --staged (1 staged record)",
        size,
        [*reliora, "check", "--staged"],
        root,
        env,
        runs,
        warmup,
    )
    measures.append(staged)
    print(
        f"   {staged.label}: {'n/a' if staged.unsupported else f'{staged.median:.3f} s'}",
        flush=True,
    )
    return measures


def child_env() -> dict[str, str]:
    env = {**os.environ, **GIT_ENV, "NO_COLOR": "1"}
    for name in ("RELIORA_REPO", "RELIORA_NO_CACHE", "RELIORA_CACHE_DIR", "RELIORA_FAST_CLI"):
        env.pop(name, None)
    # An installed package has its bytecode compiled by pip; a checkout whose environment
    # forbids writing it would recompile every module on every run and measure that instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if reliora_command()[0] == sys.executable:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def bench_version(runs: int, warmup: int, cwd: Path) -> Measure:
    env = child_env()
    argv = [*reliora_command(), "--version"]
    return measure("reliora --version", 0, argv, cwd, env, runs, warmup)


# --- reporting -------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    return {
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": git_version.strip(),
    }


def table(measures: list[Measure]) -> str:
    rows = [
        "| size | what | median wall (s) | median CPU (s) | runs | × git grep | peak MB |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    references = {(m.size, m.label): m for m in measures if m.label.startswith("git grep")}
    for m in measures:
        median = "n/a" if m.median is None else f"{m.median:.3f}"
        cpu = "n/a" if m.median_cpu is None else f"{m.median_cpu:.3f}"
        ratio = ""
        if m.note.startswith("vs ") and m.median is not None:
            ref = references[(m.size, m.note[3:])]
            if ref.median:
                ratio = f"{m.median / ref.median:.1f}×"
        size = f"{m.size:,}" if m.size else "—"
        peak = "n/a" if m.unsupported else f"{m.peak_mb:.0f}"
        rows.append(
            f"| {size} | {m.label} | {median} | {cpu} | {len(m.seconds)} | {ratio} | {peak} |"
        )
    return "\n".join(rows)


def to_json(measures: list[Measure], info: dict[str, Any]) -> dict[str, Any]:
    return {
        "machine": info,
        "results": [
            {
                "size": m.size,
                "what": m.label,
                "median_s": m.median,
                "median_cpu_s": m.median_cpu,
                "runs_s": [round(s, 4) for s in m.seconds],
                "peak_mb": None if m.unsupported else round(m.peak_mb, 1),
                "reference": m.note[3:] if m.note.startswith("vs ") else None,
                "supported": not m.unsupported,
            }
            for m in measures
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS,
        help="folder holding .reliora/experiences to copy (default: %(default)s)",
    )
    parser.add_argument("--quick", action="store_true", help="1,000 and 10,000 records only")
    parser.add_argument("--sizes", help="comma-separated store sizes (overrides --quick)")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per command (default 7)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    parser.add_argument("--out", type=Path, help="write the results as JSON to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary stores")
    args = parser.parse_args(argv)

    sizes = (
        tuple(int(s.replace("_", "")) for s in args.sizes.split(","))
        if args.sizes
        else QUICK_SIZES
        if args.quick
        else SIZES
    )
    sources = read_corpus(args.corpus.resolve())
    info = machine()
    print(f"corpus: {len(sources):,} records from {args.corpus}; machine: {info}")
    workdir = Path(tempfile.mkdtemp(prefix="reliora-bench-"))
    measures = [bench_version(args.runs * 2, args.warmup, workdir)]
    try:
        for size in sizes:
            # Fewer runs at the largest sizes keep the whole run within minutes.
            runs = max(3, args.runs // 2) if size >= 100_000 else args.runs
            measures += bench_size(size, sources, workdir, runs, args.warmup)
            if not args.keep:
                shutil.rmtree(workdir / f"store-{size}", ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    info["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print()
    print(table(measures))
    print(f"\nload average before {info['load_average']}, after {info['load_average_after']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(to_json(measures, info), indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
