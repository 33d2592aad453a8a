"""``org sync`` under faults: killed half-way, and two syncs of one repository at once.

A real server (the ``pg_server`` fixture) and the installed ``reliora``; the
state is read back with SQL and compared with what git holds at each commit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from reliora_git.storage.store import Store
from tests.conftest import RecordMaker, git, reliora_executable

pytestmark = pytest.mark.usefixtures("pg_server")


def make_records(write_record: RecordMaker, count: int, word: str) -> None:
    for n in range(count):
        write_record(
            f"{word}-{n:04d}",
            f"{word.title()} lesson {n} about queue backpressure",
            "## Problems\n- consumers fell behind\n\n## Solution\n"
            + " ".join(f"{word}{k}" for k in range(n % 40, n % 40 + 30))
            + "\n",
            tags=[word],
        )


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def sync(url: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [reliora_executable(), "org", "sync", *args],
        env={**os.environ, "RELIORA_DB_URL": url, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def database_state(url: str, name: str = "repo") -> tuple[str, set[tuple[str, str]], int]:
    """(synced commit, {(locator, blob)} of its records, its postings count)."""
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT repo_id, commit FROM repos WHERE name = %s", (name,)).fetchone()
        assert row is not None
        repo_id, synced = row
        files = set(
            conn.execute(
                "SELECT locator, blob FROM records WHERE repo_id = %s", (repo_id,)
            ).fetchall()
        )
        (postings,) = conn.execute(
            "SELECT count(*) FROM postings WHERE repo_id = %s", (repo_id,)
        ).fetchone() or (0,)
    return synced, files, postings


def git_state(repo: Path, ref: str) -> set[tuple[str, str]]:
    out = git(repo, "ls-tree", "-r", ref, "--", ".reliora/experiences")
    found = set()
    for line in out.splitlines():
        meta, path = line.split("\t")
        if path.endswith(".md"):
            found.add((path, meta.split()[2]))
    return found


def test_a_sync_killed_half_way_leaves_the_previous_state(
    store: Store, write_record: RecordMaker, repo: Path, org_db: str
) -> None:
    import psycopg

    make_records(write_record, 10, "small")
    first = commit(repo, "small")
    assert sync(org_db, str(repo)).wait(timeout=120) == 0
    before = database_state(org_db)
    assert before[0] == first and before[1] == git_state(repo, first)
    make_records(write_record, 3000, "large")
    second = commit(repo, "large")

    killed_inside = 0
    for _ in range(3):
        running = sync(org_db, str(repo))
        with psycopg.connect(org_db, autocommit=True) as watcher:
            deadline = time.monotonic() + 60
            # Kill it once its transaction is open: it holds the repository's lock.
            while time.monotonic() < deadline and running.poll() is None:
                (inside,) = watcher.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND objid <> 0 AND pid <> pg_backend_pid()"  # 0: the schema's lock
                ).fetchone() or (0,)
                if inside:
                    killed_inside += 1
                    break
                time.sleep(0.02)
        running.send_signal(signal.SIGKILL)
        running.wait(timeout=60)
        assert database_state(org_db) == before
    assert killed_inside == 3  # each kill landed inside the transaction, not before or after

    assert sync(org_db, str(repo)).wait(timeout=300) == 0
    after = database_state(org_db)
    assert after[0] == second and after[1] == git_state(repo, second)


def test_two_syncs_of_one_repository_at_once_leave_one_consistent_state(
    store: Store, write_record: RecordMaker, repo: Path, org_db: str, pg_server: object
) -> None:
    import psycopg

    make_records(write_record, 300, "alpha")
    alpha = commit(repo, "alpha")
    git(repo, "checkout", "-q", "-b", "beta")
    for path in sorted(store.experiences.glob("alpha-00[0-4]*.md")):
        path.unlink()
    make_records(write_record, 200, "beta")
    beta = commit(repo, "beta")
    git(repo, "checkout", "-q", "main")

    # What one sync of each commit alone leaves, in a database of its own.
    expected = {}
    for ref, sha in (("main", alpha), ("beta", beta)):
        alone = pg_server.url(f"alone_{ref}_{os.getpid()}")  # type: ignore[attr-defined]
        with psycopg.connect(pg_server.url(), autocommit=True) as conn:  # type: ignore[attr-defined]
            conn.execute(f"CREATE DATABASE alone_{ref}_{os.getpid()}")
        assert sync(alone, "--ref", ref, str(repo)).wait(timeout=120) == 0
        expected[sha] = database_state(alone)
        assert expected[sha][1] == git_state(repo, sha)

    for trial in range(4):
        first, second = ("main", "beta") if trial % 2 else ("beta", "main")
        runs = [sync(org_db, "--ref", first, str(repo)), sync(org_db, "--ref", second, str(repo))]
        for run in runs:
            _, err = run.communicate(timeout=300)
            assert run.returncode == 0, err
        state = database_state(org_db)
        assert state == expected[state[0]]  # exactly one commit's content, nothing mixed
    # Same ref twice at once: the second finds the first's work done.
    runs = [sync(org_db, "--ref", "main", str(repo)) for _ in range(2)]
    assert [run.wait(timeout=300) for run in runs] == [0, 0]
    assert database_state(org_db) == expected[alpha]


# --- killed while its worker processes parse -----------------------------------------------------


def children_of(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from /proc: no tool of the project's involved)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # "pid (comm) state ppid …": comm may hold spaces and parentheses.
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def workers_of(pid: int) -> list[int]:
    """``pid``'s forked parse workers: children running what it runs (git children do not)."""
    try:
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    found = []
    for child in children_of(pid):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes() == own:
                found.append(child)
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    """Running (a zombie has exited: it waits only to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def repository_locked(watcher: object) -> bool:
    (held,) = watcher.execute(  # type: ignore[attr-defined]
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
        "AND objid <> 0 AND pid <> pg_backend_pid()"  # 0: the schema's lock
    ).fetchone() or (0,)
    return bool(held)


@pytest.mark.parametrize("sent", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_sync_killed_while_its_workers_parse_locks_nothing_and_leaves_no_worker(
    store: Store, write_record: RecordMaker, repo: Path, org_db: str, sent: signal.Signals
) -> None:
    """Killed workers' parent: the next sync completes, and no worker outlives it.

    Workers that inherited the connection's socket used to keep the killed sync's
    transaction, and its advisory lock, open for ever: the next sync waited for good.
    """
    import psycopg

    make_records(write_record, 10, "small")
    commit(repo, "small")
    assert sync(org_db, str(repo)).wait(timeout=120) == 0
    before = database_state(org_db)
    make_records(write_record, 4000, "large")
    second = commit(repo, "large")

    workers: list[int] = []
    running = sync(org_db, str(repo), env={"RELIORA_JOBS": "2"})
    again: subprocess.Popen[str] | None = None
    try:
        locked = False
        with psycopg.connect(org_db, autocommit=True) as watcher:
            deadline = time.monotonic() + 120
            # Kill it inside its transaction, while its workers are alive.
            while time.monotonic() < deadline and running.poll() is None:
                workers = workers_of(running.pid)
                locked = repository_locked(watcher)
                if workers and locked:
                    break
                time.sleep(0.005)
            running.send_signal(sent)
        running.wait(timeout=60)
        assert workers and locked, "the sync ended before its workers and its lock were seen"
        assert database_state(org_db) == before  # killed inside the transaction

        again = sync(org_db, str(repo))
        _, err = again.communicate(timeout=180)  # waiting for ever fails here
        assert again.returncode == 0, err
        after = database_state(org_db)
        assert after[0] == second and after[1] == git_state(repo, second)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(alive(pid) for pid in workers):
            time.sleep(0.05)
        assert not [pid for pid in workers if alive(pid)], "workers outlived their killed parent"
    finally:
        for process in (running, again):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


# --- a busy repository, a hostile one: reported on one line, the others sync -------------------


def second_repository(tmp_path: Path, name: str, word: str) -> Path:
    """Another git repository with a store of three records."""
    from reliora_git.storage.template import init_store

    other = tmp_path / name
    other.mkdir()
    git(other, "init", "-q", "-b", "main", "--template=")
    created, _ = init_store(other)
    for n in range(3):
        (created.experiences / f"{word}-{n}.md").write_text(
            f'---\nid: {word}-{n}\ntitle: "{word.title()} lesson {n}"\n---\n'
            "## Problems\n- the queue stalled\n\n## Solution\ndrain it\n",
            encoding="utf-8",
        )
    commit(other, word)
    return other


def synced_ids(url: str, name: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT r.id FROM records r JOIN repos USING (repo_id) "
            "WHERE repos.name = %s AND r.visible ORDER BY r.id",
            (name,),
        ).fetchall()
    return [rid for (rid,) in rows]


def test_a_busy_repository_is_said_on_one_line_waited_for_a_bounded_time_and_the_others_sync(
    store: Store, write_record: RecordMaker, repo: Path, org_db: str, tmp_path: Path
) -> None:
    import psycopg

    from reliora_git.org.db import LOCK_SPACE

    make_records(write_record, 3, "busy")
    commit(repo, "busy")
    other = second_repository(tmp_path, "other", "calm")
    with psycopg.connect(org_db) as holder:  # another sync, stuck inside its transaction
        holder.execute("SELECT pg_advisory_xact_lock(%s, hashtext('repo'))", (LOCK_SPACE,))
        running = sync(org_db, "--wait", "1", str(repo), str(other))
        try:
            _, err = running.communicate(timeout=120)  # waiting for ever fails here
        finally:
            running.kill()
        assert running.returncode == 2, err
        lines = err.splitlines()
        assert "reliora: repo is busy: another sync is writing it; waiting up to 1 s" in lines
        assert [line for line in lines if line.startswith("reliora: error:")] == [
            f"reliora: error: {repo}: repository 'repo' is busy: another sync was still "
            "writing it after 1 s; nothing was changed, try again later"
        ]
        assert "Traceback" not in err
        assert synced_ids(org_db, "other") == ["calm-0", "calm-1", "calm-2"]
    # The holder is gone: the repository syncs.
    again = sync(org_db, "--wait", "1", str(repo), str(other))
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert synced_ids(org_db, "repo") == ["busy-0000", "busy-0001", "busy-0002"]


def org_search(url: str, cwd: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [reliora_executable(), "org", "search", *args, "--json"],
        cwd=cwd,
        env={**os.environ, "RELIORA_DB_URL": url},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def local_search(cwd: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [reliora_executable(), "search", *args, "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_a_nul_in_a_title_or_tag_syncs_and_searches_as_locally_and_the_next_repository_syncs(
    store: Store, write_record: RecordMaker, repo: Path, org_db: str, tmp_path: Path
) -> None:
    """PostgreSQL text cannot hold U+0000: it is kept escaped and given back as it was."""
    # YAML double quotes: "\0" is U+0000; "\x01" is the escape's own character.
    (store.experiences / "nul-title.md").write_text(
        '---\nid: nul-title\ntitle: "Queue backpressure\\0 stalls \\x01 consumers"\n'
        'tags: ["queue\\0", "\\x010", "\\x01"]\n---\n'
        "## Problems\n- backpressure\u0000 stalled the queue\n\n## Solution\nbound it\n",
        encoding="utf-8",
    )
    write_record("plain", "Queue backpressure in workers", tags=["queue"])
    commit(repo, "nul")
    check = subprocess.run(
        [reliora_executable(), "check"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr  # the local reader accepts it
    other = second_repository(tmp_path, "other", "after")

    running = sync(org_db, str(repo), str(other))
    _, err = running.communicate(timeout=120)
    assert running.returncode == 0, err
    assert "Traceback" not in err
    assert synced_ids(org_db, "repo") == ["nul-title", "plain"]
    assert synced_ids(org_db, "other") == ["after-0", "after-1", "after-2"]

    found = org_search(org_db, repo, "queue backpressure stalls", "--repo", "repo")
    local = local_search(repo, "queue backpressure stalls")
    for result in found["results"]:  # type: ignore[attr-defined]
        assert result.pop("repo") == "repo"
        result.pop("commit")
        result.pop("freshness")  # the database keeps no history
    for result in local["results"]:  # type: ignore[attr-defined]
        result.pop("freshness")
    assert found == local
    titles = {r["id"]: r["title"] for r in found["results"]}  # type: ignore[attr-defined]
    assert titles["nul-title"] == "Queue backpressure\0 stalls \x01 consumers"
    tags = {r["id"]: r["tags"] for r in found["results"]}  # type: ignore[attr-defined]
    assert tags["nul-title"] == ["queue\0", "\x010", "\x01"]


def test_a_file_name_that_is_not_utf8_is_left_out_on_one_line_and_the_rest_syncs(
    store: Store, write_record: RecordMaker, repo: Path, org_db: str, tmp_path: Path
) -> None:
    write_record("named-well", "A record with a good name")
    bad = os.path.join(os.fsencode(store.experiences), b"bad-\xff-name.md")
    with open(bad, "wb") as handle:
        handle.write(b"---\nid: bad-name\ntitle: Bad name\n---\n## Problems\n- x\n")
    commit(repo, "names")
    other = second_repository(tmp_path, "other", "after")

    for flags in ((), ("--json",)):
        running = sync(org_db, *flags, str(repo), str(other))
        out, err = running.communicate(timeout=120)
        assert running.returncode == 0, err
        assert "Traceback" not in err
        warnings = [line for line in err.splitlines() if "not valid UTF-8" in line]
        assert warnings == [
            "reliora: warning: repo: .reliora/experiences/bad-\\xff-name.md: "
            "the file name is not valid UTF-8: left out"
        ]
        if flags:
            document = json.loads(out)
            assert document["errors"] == []
            (first, second) = document["repos"]
            left_out = {
                "path": ".reliora/experiences/bad-\\xff-name.md",
                "line": None,
                "message": "the file name is not valid UTF-8: left out",
            }
            assert left_out in first["skipped"]
            assert second["repo"] == "other"
    assert synced_ids(org_db, "repo") == ["named-well"]
    assert synced_ids(org_db, "other") == ["after-0", "after-1", "after-2"]


def test_a_blob_over_the_size_limit_is_reported_never_read_and_the_rest_syncs(
    store: Store, write_record: RecordMaker, repo: Path, org_db: str
) -> None:
    from reliora_git.storage.store import MAX_RECORD_BYTES

    write_record("small-one", "A small record about queues")
    start = "---\nid: huge\ntitle: Huge\n---\n## Problems\n- "
    text = start + "x" * (MAX_RECORD_BYTES - len(start)) + "\n"  # one byte over the limit
    (store.experiences / "huge.md").write_text(text, encoding="utf-8")
    commit(repo, "huge")
    blob = git(repo, "rev-parse", "HEAD:.reliora/experiences/huge.md").strip()
    assert int(git(repo, "cat-file", "-s", blob)) == MAX_RECORD_BYTES + 1  # just over
    # Keep only the start of the loose object: its header (type, size) still reads, its
    # content cannot. A sync that asked git for the content would fail on it.
    loose = repo / ".git" / "objects" / blob[:2] / blob[2:]
    data = loose.read_bytes()
    loose.chmod(0o644)
    loose.write_bytes(data[:64])
    assert int(git(repo, "cat-file", "-s", blob)) == MAX_RECORD_BYTES + 1
    unreadable = subprocess.run(
        ["git", "cat-file", "blob", blob], cwd=repo, capture_output=True, check=False
    )
    assert unreadable.returncode != 0

    running = sync(org_db, str(repo))
    _, err = running.communicate(timeout=120)
    assert running.returncode == 0, err
    assert err.splitlines() == [
        "reliora: warning: repo: .reliora/experiences/huge.md: is larger than 1024 KiB"
    ]
    assert synced_ids(org_db, "repo") == ["small-one"]


@pytest.mark.parametrize(
    "text", ["", "plain", "\0", "\x01", "\x010", "\x01\x01\0", "a\0\x01b\x01", "\x01" * 5 + "0"]
)
def test_text_kept_for_postgresql_holds_no_nul_and_reads_back_exactly(text: str) -> None:
    from reliora_git.org.pgtext import shown, stored

    assert "\0" not in stored(text)
    assert shown(stored(text)) == text


def test_a_repository_that_fails_half_way_is_one_line_and_the_next_still_syncs(
    store: Store, write_record: RecordMaker, repo: Path, org_db: str, tmp_path: Path
) -> None:
    """A broken object store (a record's blob cut short) fails that repository only."""
    write_record("broken-blob", "A record whose blob is damaged")
    commit(repo, "broken")
    blob = git(repo, "rev-parse", "HEAD:.reliora/experiences/broken-blob.md").strip()
    loose = repo / ".git" / "objects" / blob[:2] / blob[2:]
    data = loose.read_bytes()
    loose.chmod(0o644)
    loose.write_bytes(data[: len(data) // 2])
    other = second_repository(tmp_path, "other", "after")

    running = sync(org_db, str(repo), str(other))
    _, err = running.communicate(timeout=120)
    assert running.returncode == 2, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("reliora: error:")]
    assert len(errors) == 1 and errors[0].startswith(f"reliora: error: {repo}: git cat-file failed")
    assert synced_ids(org_db, "other") == ["after-0", "after-1", "after-2"]
    assert synced_ids(org_db, "repo") == []  # rolled back: nothing of it was written
