"""Concurrent writers and interrupted writes: nothing lost, nothing half-written."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reliora_git.operations.lessons import writes
from reliora_git.records.errors import RelioraError
from reliora_git.records.feedback import parse_event
from reliora_git.records.model import Record
from reliora_git.storage.catalog import load_catalog
from reliora_git.storage.store import STALE_TEMP_SECONDS, Store, walk_markdown, write_new
from tests.conftest import Cli, reliora_executable

WORKERS = 8
ROUNDS = 25


def _worker(root: str, worker: int, rounds: int) -> list[str]:
    """One process: `rounds` times, record a new experience and leave feedback on it."""
    store = Store(Path(root))
    ids = []
    for n in range(rounds):
        saved = writes.record(
            store,
            Record(
                # The same title in every process: ids then differ only by their random
                # suffix, the case where two writers could pick one name.
                title=f"Concurrent lesson {n}",
                tags=["concurrency"],
                problems=[f"writer {worker} round {n}"],
                solution=f"solution from worker {worker} round {n}",
                author=f"worker {worker}",  # skips a `git config` run per record
            ),
        )
        writes.feedback(store, saved.record.id, "success", note=f"worker {worker} round {n}")
        ids.append(saved.record.id)
    return ids


def _assert_store_complete(store: Store, records: int, events: int) -> None:
    catalog = load_catalog(store)
    assert catalog.skipped() == []
    assert len(catalog.entries) == records
    assert len(catalog.records) == records  # every file parses, validates, unique id
    assert catalog.feedback_errors == []
    event_files = list(walk_markdown(store, store.feedback))
    assert len(event_files) == events
    ids = {record.id for record in catalog.records}
    for file in event_files:
        event = parse_event(file.path.read_text(encoding="utf-8"), file.locator)
        assert event.record in ids
        assert file.locator.startswith(f".reliora/feedback/{event.record}/")
    counted = sum(
        sum(n for name, n in summary.to_json().items() if name != "adjustment")
        for summary in catalog.feedback().values()
    )
    assert counted == events
    assert list(store.path.rglob("*.tmp")) == []


def test_eight_processes_record_and_give_feedback_at_once(store: Store) -> None:
    context = multiprocessing.get_context("spawn" if sys.platform == "darwin" else "fork")
    with context.Pool(WORKERS) as pool:
        results = pool.starmap(
            _worker, [(str(store.root), worker, ROUNDS) for worker in range(WORKERS)]
        )
    ids = [record_id for batch in results for record_id in batch]
    assert len(ids) == len(set(ids)) == WORKERS * ROUNDS
    _assert_store_complete(store, WORKERS * ROUNDS, WORKERS * ROUNDS)


def test_concurrent_cli_processes_lose_nothing(store: Store, repo: Path) -> None:
    exe = reliora_executable()
    rounds = 1
    script = textwrap.dedent(
        """
        for n in $(seq 1 {rounds}); do
          out=$("$RELIORA" record --json - <<EOF
        {{"title": "Shell lesson $n", "task": "w $W r $n", "solution": "s $W $n"}}
        EOF
          ) || exit 1
          id=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
          "$RELIORA" feedback "$id" partial --note "w $W r $n" >/dev/null || exit 1
        done
        """
    ).format(rounds=rounds)
    procs = [
        subprocess.Popen(
            ["sh", "-c", script],
            cwd=repo,
            env={**os.environ, "RELIORA": exe, "W": str(worker)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(WORKERS)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    _assert_store_complete(store, WORKERS * rounds, WORKERS * rounds)


# --- interrupted writes ----------------------------------------------------------------------

_CRASH_BETWEEN_TEMP_AND_LINK = """
import os, signal, sys
from pathlib import Path
from reliora_git.operations.lessons import writes
from reliora_git.records.model import Record
from reliora_git.storage.store import Store

def crash(*args, **kwargs):
    # The temporary file is written and fsynced; die before it gets its name.
    os.kill(os.getpid(), signal.SIGKILL)

os.link = crash
writes.record(Store(Path(sys.argv[1])), Record(
    title="Interrupted lesson", task="t", solution="complete text ends here"))
"""


def test_a_crash_before_the_link_leaves_no_record_only_a_hidden_temp(
    store: Store, cli: Cli
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CRASH_BETWEEN_TEMP_AND_LINK, str(store.root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert list(store.experiences.glob("*.md")) == []
    temps = list(store.experiences.glob(".*.tmp"))
    assert len(temps) == 1
    assert temps[0].read_text(encoding="utf-8").rstrip().endswith("complete text ends here")
    # Search and check do not see it: it is neither a record nor a broken one.
    searched = cli("search", "interrupted lesson")
    assert searched.returncode == 0 and searched.stderr == ""
    assert "No experiences match" in searched.stdout
    assert cli("check").returncode == 0

    # A young temp file may be another writer's work in progress: kept. An old one is
    # what a dead writer left: the next write removes it.
    young = store.experiences / ".other.md.123.0123abcd.tmp"
    young.write_text("in progress", encoding="utf-8")
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(temps[0], (old, old))
    saved = cli("record", "--title", "Next lesson", "--task", "t", "--solution", "s")
    assert saved.returncode == 0, saved.stderr
    assert not temps[0].exists()
    assert young.exists()


def test_kill_during_record_never_leaves_a_partial_record(store: Store, repo: Path) -> None:
    exe = reliora_executable()
    marker = "END-OF-RECORD-MARKER"
    payload = json.dumps(
        {
            "title": "A large lesson",
            "task": "write a big record",
            # ~900 KB, so that writing it takes a while, and a truncated file lacks the marker.
            "solution": ("lorem ipsum dolor sit amet " * 33_000),
            "verification": marker,
        }
    )
    # Stdin from a file, so that the clock starts when the process does (a pipe would
    # block the test until the process had read it all).
    payload_file = repo.parent / "payload.json"
    payload_file.write_text(payload, encoding="utf-8")
    rng = random.Random(5)
    killed = 0
    for attempt in range(6):
        with open(payload_file, "rb") as stdin:
            proc = subprocess.Popen(
                [exe, "record", "--json", "-"],
                cwd=repo,
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            # The first run dies while starting (so one kill surely lands); the others at
            # random moments, from starting to writing to done.
            time.sleep(rng.uniform(0.0, 2.5) if attempt else 0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        killed += proc.returncode == -signal.SIGKILL
    assert killed > 0  # at least one run really died mid-way
    for path in store.experiences.glob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert text.rstrip().endswith(marker), f"partial record {path.name}"
    catalog = load_catalog(store)
    assert catalog.skipped() == []
    assert len(catalog.records) == len(list(store.experiences.glob("*.md")))


def test_a_write_never_replaces_an_existing_file(store: Store) -> None:
    target = store.experiences / "taken.md"
    target.write_text("original", encoding="utf-8")
    with pytest.raises(RelioraError, match="already exists"):
        write_new(target, "replacement", store)
    assert target.read_text(encoding="utf-8") == "original"
    assert list(store.experiences.glob(".*.tmp")) == []
