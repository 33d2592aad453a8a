#!/usr/bin/env python3
"""Benchmark `reliora` as whole processes against `git grep` on stores of 1k, 10k and 100k records.

Usage (from the repository root, with the package installed in the interpreter you use):

    python bench/run.py                      # 1,000, 10,000 and 100,000 records
    python bench/run.py --quick              # 1,000 and 10,000 only
    python bench/run.py --corpus PATH --out results.json

Stores are made by copying the records of a corpus (default: ../shared/corpora/til
next to the repository) as they are, rewriting only the ``id:`` line and the file
name, into temporary git repositories whose files are committed (so that
``git grep`` and ``check --staged`` see a realistic repository). Every command an
agent runs is measured: ``search`` (four queries, and the first search after a
clone), ``show`` (by id and by a unique prefix), ``feedback``, ``record --json -``,
``list``, ``check`` (the whole store), ``check --staged``, the prompt hook (``reliora hook``
with a UserPromptSubmit event, as Claude Code runs it) and a ``search`` tool call
of a running ``reliora mcp`` server. Every CLI command is run as a separate process,
once untimed and then several times; the table shows medians, the ratio to
``git grep -il`` measured right after it over the same files (for the same query
words; for commands without a query, those of ``postgres index performance``), and
the peak resident memory of the process (``wait4`` rusage of that one child).

Only the standard library is used, except by the MCP row: it runs bench/mcp_client.py,
which needs the ``mcp`` SDK (2.x) and is skipped, with a line saying so, without it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import itertools
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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
#: The git grep that commands without query words are compared with: the three-word query's.
REFERENCE_QUERY = "postgres index performance"
#: Commands that read or print every record are measured below this size only.
WHOLE_STORE_MAX = 10_000
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


def make_store(root: Path, sources: list[Source], count: int) -> list[str]:
    """A committed git repository at ``root`` whose store holds ``count`` copied records.

    Returns the ids of the records, in the order they were made.
    """
    experiences = root / ".reliora" / "experiences"
    feedback = root / ".reliora" / "feedback"
    experiences.mkdir(parents=True)
    feedback.mkdir()
    (root / ".reliora" / "config.toml").write_text("search_limit = 10\n", encoding="utf-8")
    pairs = new_ids(sources, count)
    for i, (source, record_id) in enumerate(pairs):
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
    return [record_id for _, record_id in pairs]


def stage_new_record(root: Path, source: Source) -> None:
    """One new record, staged (not committed), for `check --staged`."""
    path = root / ".reliora" / "experiences" / "bench-new-staged-record-000001.md"
    text = _ID_LINE.sub("id: bench-new-staged-record-000001", source.text, count=1)
    path.write_text(text, encoding="utf-8")
    git(root, "add", "--", str(path))


def unique_prefix(target: str, ids: list[str]) -> str:
    """The shortest prefix of ``target`` that starts no other id (``target`` if none is)."""
    shared = 0
    for other in ids:
        if other == target or other[:1] != target[:1]:
            continue
        n = 0
        while n < min(len(other), len(target)) and other[n] == target[n]:
            n += 1
        shared = max(shared, n)
    return target[: shared + 1] if shared + 1 < len(target) else target


def record_input(source: Source, n: int) -> bytes:
    """A new record for ``record --json -``: ``source``'s fields under a title of run ``n``.

    The text stays that of a real record, so ``record``'s duplicate check finds its
    copies in the store (similar, not exact duplicates: the title differs), and the
    title differs from run to run, so every run makes a new id.
    """
    text = source.text
    front = text.split("\n---", 1)[0] if text.startswith("---") else ""

    def value(name: str) -> str:
        match = re.search(rf"^{name}:[ \t]*(.*?)\s*$", front, re.MULTILINE)
        raw = match.group(1) if match else ""
        if raw.startswith('"'):
            try:
                return str(json.loads(raw))
            except ValueError:
                pass
        return raw.strip("'\"")

    tags = [t.strip().strip("'\"") for t in value("tags").strip("[]").split(",") if t.strip()]
    sections: dict[str, str] = {}
    for match in re.finditer(r"^## (.+?)\s*\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL):
        sections[match.group(1).strip().lower()] = match.group(2).strip()
    problems = [
        " ".join(item.split())
        for item in re.split(r"^- ", sections.get("problems", ""), flags=re.MULTILINE)
        if item.strip()
    ]
    context = value("project_context")
    title = value("title") or source.record_id
    document = {
        "title": f"Bench run {n}: {title}, once more",
        "tags": tags,
        "problems": problems,
        "solution": sections.get("solution", "") or title,
        "applicability": sections.get("applicability", "")
        or f"Projects using {context or ', '.join(tags) or 'this tool'}.",
        "projectContext": context,
    }
    return json.dumps(document).encode("utf-8")


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
    #: "failed (exit N)" when the command failed: no timings then, ``note`` says why.
    failed: str = ""
    #: Why the command was not run at this size ("" when it was).
    skipped: str = ""
    note: str = ""
    #: The command line measured, for the JSON.
    command: str = ""
    #: The ``git grep -il`` measured right after this command, for the ratio.
    reference: Measure | None = None

    @property
    def valid(self) -> bool:
        return not (self.unsupported or self.failed or self.skipped)

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds and self.valid else None

    @property
    def median_cpu(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu and self.valid else None

    @property
    def ratio(self) -> float | None:
        ref = self.reference.median if self.reference else None
        return self.median / ref if self.median is not None and ref else None


def run_once(
    argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None
) -> tuple[float, float, int, float, str]:
    """(seconds, CPU seconds, exit code, peak RSS in MB, stderr) of one process, from its rusage.

    ``stdin``, when given, is read by the process from a file (written before the clock starts).
    """
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as given:
        if stdin is not None:
            given.write(stdin)
            given.seek(0)
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=None if stdin is None else given,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    # ru_maxrss is KiB on Linux, bytes on macOS.
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, cpu, proc.returncode, usage.ru_maxrss / scale, stderr


def first_line(stderr: str) -> str:
    """The first line of ``stderr``; of a Python traceback, its last line (the exception)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "(nothing on stderr)"
    return lines[-1] if lines[0].startswith("Traceback") else lines[0]


def measure(
    label: str,
    size: int,
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    runs: int,
    warmup: int,
    stdin: Callable[[int], bytes] | None = None,
) -> Measure:
    """``runs`` timed runs of ``argv`` after ``warmup`` untimed ones.

    ``stdin(i)`` is what run ``i`` (counting the warm-up runs) reads on stdin. Exit 0 and 1
    are answers (no match, an invalid record); any other exit, or a traceback, ends the
    measure as failed: its row says so with the first line of stderr.
    """
    result = Measure(label, size, command=shlex.join(argv) + (" < JSON" if stdin else ""))
    for i in range(warmup + runs):
        elapsed, cpu, code, peak, stderr = run_once(argv, cwd, env, stdin(i) if stdin else None)
        if code == 2 and "No such option" in stderr:
            result.unsupported = True
            result.note = "n/a: option not supported by this build"
            return result
        # Python ends with exit 1 on an uncaught exception too: that is no answer.
        if code not in (0, 1) or "Traceback (most recent call last)" in stderr:
            result.failed = f"failed (exit {code})"
            result.note = first_line(stderr)
            result.seconds.clear()
            result.cpu.clear()
            return result
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


def grep_argv(query: str) -> list[str]:
    argv = ["git", "grep", "-il"]
    for word in query_words(query):
        argv += ["-e", word]
    return [*argv, "--", ".reliora/experiences"]


def shown(m: Measure) -> str:
    """One measure for the progress lines."""
    if m.skipped:
        return f"skipped ({m.skipped})"
    if m.failed:
        return f"{m.failed}: {m.note}"
    if m.median is None:
        return "n/a"
    ref = f"  (git grep {m.reference.median:.3f} s)" if m.reference and m.reference.median else ""
    return f"{m.median:.3f} s{ref}"


def bench_size(
    size: int, sources: list[Source], workdir: Path, runs: int, warmup: int
) -> list[Measure]:
    root = workdir / f"store-{size}"
    print(f"\n== {size:,} records: making the store in {root} …", flush=True)
    start = time.perf_counter()
    ids = make_store(root, sources, size)
    print(f"   made and committed in {time.perf_counter() - start:.1f} s", flush=True)
    env = child_env()
    reliora = reliora_command()
    measures = []

    def reference() -> Measure:
        """The three-word query's git grep, measured now (right after the command it is for)."""
        return measure(
            "git grep -il (three words)", size, grep_argv(REFERENCE_QUERY), root, env, runs, warmup
        )

    def command(
        label: str,
        args: list[str],
        stdin: Callable[[int], bytes] | None = None,
        skip: str = "",
    ) -> None:
        """Measure ``reliora ARGS`` and then its reference grep (unless ``skip`` says why not)."""
        if skip:
            m = Measure(label, size, skipped=skip, command=shlex.join([*reliora, *args]))
        else:
            m = measure(label, size, [*reliora, *args], root, env, runs, warmup, stdin)
            if m.valid:
                m.reference = reference()
        measures.append(m)
        print(f"   {label}: {shown(m)}", flush=True)

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
    print(f"   {cold.label}: {shown(cold)}", flush=True)

    for label, text, context in QUERIES:
        argv = [*reliora, "search", text, "--json"]
        if context:
            argv += ["--project-context", context]
        found = measure(label, size, argv, root, env, runs, warmup)
        grep = measure(
            f"git grep -il ({label[8:]})", size, grep_argv(text), root, env, runs, warmup
        )
        found.reference = grep
        measures += [found, grep]
        print(f"   {label}: {shown(found)}", flush=True)

    # A record from the middle of the store: it has a feedback event (every 100th has).
    middle = ids[len(ids) // 2]
    prefix = unique_prefix(middle, ids)
    command("show ID --json", ["show", middle, "--json"])
    command(
        f"show PREFIX --json ({len(prefix)} of {len(middle)} chars)", ["show", prefix, "--json"]
    )
    command("feedback ID success --note bench", ["feedback", middle, "success", "--note", "bench"])
    source = sources[len(sources) // 2]
    command(
        "record --json - (new record, duplicate check)",
        ["record", "--json", "-"],
        stdin=lambda i: record_input(source, next(RECORD_RUNS)),
    )
    whole = "" if size <= WHOLE_STORE_MAX else f"reads every record: {WHOLE_STORE_MAX:,} at most"
    command("list --json", ["list", "--json"], skip=whole)
    command("check (whole store)", ["check"], skip=whole)

    stage_new_record(root, sources[0])
    command("check --staged (1 staged record)", ["check", "--staged"])
    prompts = prompt_tasks()
    command(
        "hook UserPromptSubmit (prompt hook)",
        ["hook"],
        stdin=lambda i: prompt_event(root, f"p{i}", prompts[i % len(prompts)]),
    )

    mcp = measure_mcp(size, root, env, runs, warmup)
    if mcp.valid:
        mcp.reference = reference()
    measures.append(mcp)
    extra = f" = {mcp.median * 1000:.1f} ms per call" if mcp.median is not None else ""
    print(f"   {mcp.label}: {shown(mcp)}{extra}", flush=True)
    return measures


TASKS = Path(__file__).resolve().parent / "data" / "brief_tasks.jsonl"


def prompt_tasks() -> list[str]:
    """The task prompts of bench/data/brief_tasks.jsonl (bench/hook.py sends the same)."""
    if not TASKS.exists():
        return ["invoices fail because the payment provider rate limits our billing retries"]
    lines = TASKS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["task"] for line in lines if line.strip()]


def prompt_event(root: Path, session: str, prompt: str) -> bytes:
    """A Claude Code UserPromptSubmit event, as `reliora hook` reads it on stdin."""
    document = {
        "session_id": session,
        "transcript_path": str(root / ".transcript.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return json.dumps(document).encode()


def growth(measures: list[Measure]) -> str:
    """Each command's median at every size over its median at the smallest size measured:
    what one-record commands (show, feedback) must keep near 1.0×."""
    first: dict[str, Measure] = {}
    lines = []
    for m in measures:
        if m.median is None or m.size == 0 or m.label.startswith("git grep"):
            continue
        base = first.setdefault(m.label, m)
        if base is not m and base.median:
            wall = m.median / base.median
            cpu = (m.median_cpu or 0) / base.median_cpu if base.median_cpu else 0.0
            lines.append(
                f"* {m.label}: {m.size:,} records {wall:.2f}× (CPU {cpu:.2f}×) "
                f"its time at {base.size:,}"
            )
    return "\n".join(lines)


#: Numbers the titles of `record` runs, so that no two runs of a whole bench make the same one.
RECORD_RUNS = itertools.count(1)
MCP_CLIENT = Path(__file__).resolve().with_name("mcp_client.py")


def measure_mcp(size: int, root: Path, env: dict[str, str], runs: int, warmup: int) -> Measure:
    """The ``search`` tool of one running ``reliora mcp --repo ROOT``: wall time per call.

    bench/mcp_client.py starts the server, connects with the MCP SDK's stdio client and
    times the calls itself; CPU and peak memory are the server's (Linux /proc).
    """
    label = "mcp: search tool call (running server)"
    # `search` is among the tools only with --all-tools (an agent is offered four by default).
    server = [*reliora_command(), "mcp", "--all-tools", "--repo", str(root)]
    client = [
        sys.executable,
        str(MCP_CLIENT),
        "--runs",
        str(runs),
        "--warmup",
        str(max(1, warmup)),
        "--query",
        REFERENCE_QUERY,
        "--",
        *server,
    ]
    result = Measure(label, size, command=f"{shlex.join(server)}, tool search {REFERENCE_QUERY!r}")
    if importlib.util.find_spec("mcp") is None:
        result.skipped = f"the mcp package is not installed in {sys.executable}"
        print(f"   MCP row skipped: {result.skipped}", flush=True)
        return result
    try:
        done = subprocess.run(
            client, cwd=root, env=env, capture_output=True, text=True, timeout=1800, check=False
        )
    except subprocess.TimeoutExpired:
        result.failed = "failed (timeout)"
        result.note = "bench/mcp_client.py ran for more than 30 minutes"
        return result
    if done.returncode != 0:
        result.failed = f"failed (exit {done.returncode})"
        result.note = first_line(done.stderr)
        return result
    report = json.loads(done.stdout)
    result.seconds = report["seconds"]
    result.cpu = report["cpu"]
    result.peak_mb = report["peak_mb"] or 0.0
    return result


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


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(measures: list[Measure]) -> str:
    rows = [
        "| size | what | median wall (s) | median CPU (s) | runs | × git grep | peak MB |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for m in measures:
        size = f"{m.size:,}" if m.size else "—"
        if m.skipped or m.failed:
            what = f"{m.label} (skipped: {m.skipped})" if m.skipped else f"{m.label}: {m.note}"
            rows.append(f"| {size} | {cell(what)} | {m.failed or '—'} | — | 0 | — | — |")
            continue
        median = "n/a" if m.median is None else f"{m.median:.3f}"
        cpu = "n/a" if m.median_cpu is None else f"{m.median_cpu:.3f}"
        ratio = "" if m.ratio is None else f"{m.ratio:.1f}×"
        peak = "n/a" if m.unsupported or not m.peak_mb else f"{m.peak_mb:.0f}"
        rows.append(
            f"| {size} | {m.label} | {median} | {cpu} | {len(m.seconds)} | {ratio} | {peak} |"
        )
    return "\n".join(rows)


NOTES = f"""\
Notes:
* Every CLI row is one process per run (`reliora …` in the store's folder), after one
  untimed warm-up run (but the cold first search); CPU is user + system, peak MB the
  process's maximum resident set (wait4 rusage).
* × git grep: the row's median wall time over that of `git grep -il` over
  .reliora/experiences, measured right after the command in the same run: for the search
  rows with the query's own words; for every other row (show, feedback, record, list,
  check, check --staged, the prompt hook, mcp) with those of the three-word query:
  `{shlex.join(grep_argv(REFERENCE_QUERY))}`.
* feedback and record write one new file per run (feedback: an event of the record
  show measures; record: a new record whose title differs each run).
* mcp: one `reliora mcp --repo STORE` server per size, kept running; bench/mcp_client.py
  calls its `search` tool with {{"query": "{REFERENCE_QUERY}"}} once untimed, then
  `runs` times; wall is measured in the client per call, CPU is the server's during
  each call (/proc schedstat), peak MB the server's VmHWM.
* — : not measured at that size, for the reason given."""


def to_json(measures: list[Measure], info: dict[str, Any]) -> dict[str, Any]:
    return {
        "machine": info,
        "reference_query": REFERENCE_QUERY,
        "results": [
            {
                "size": m.size,
                "what": m.label,
                "command": m.command,
                "median_s": m.median,
                "median_cpu_s": m.median_cpu,
                "runs_s": [round(s, 4) for s in m.seconds],
                "cpu_s": [round(s, 4) for s in m.cpu],
                "peak_mb": round(m.peak_mb, 1) if m.valid and m.peak_mb else None,
                "reference": m.reference.label if m.reference else None,
                "reference_command": m.reference.command if m.reference else None,
                "reference_median_s": m.reference.median if m.reference else None,
                "ratio": None if m.ratio is None else round(m.ratio, 2),
                "exit_codes": sorted(m.exit_codes),
                "supported": not m.unsupported,
                "failed": m.note if m.failed else None,
                "exit": m.failed or None,
                "skipped": m.skipped or None,
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
    print()
    print(NOTES)
    grown = growth(measures)
    if grown:
        print("\nGrowth with the store (median at a size over the median at the smallest):")
        print(grown)
    print(f"\nload average before {info['load_average']}, after {info['load_average_after']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(to_json(measures, info), indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
