"""The index of staged files (keyed by blob id) never changes what `check --staged` says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reliora_git.operations.review.staged import check_staged
from reliora_git.storage import parallel
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git


def staged_report(cli: Cli, cached: bool) -> str:
    env = {} if cached else {"RELIORA_NO_CACHE": "1"}
    done = cli("check", "--staged", "--json", env=env)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def test_cached_and_uncached_staged_checks_agree_as_the_index_changes(
    repo: Path, store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("deploy-rollback", "Deploy rollback plan", tags=["deploy"], project_context="ops")
    write_record("pytest-timeouts", "Flaky pytest timeouts", tags=["pytest"], project_context="py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "records")

    write_record(
        "rollback-again", "Deploy rollback plan again", tags=["deploy"], project_context="ops"
    )
    git(repo, "add", "-A")
    cold = staged_report(cli, cached=True)  # builds the cache
    assert "deploy-rollback" in cold
    assert staged_report(cli, cached=True) == cold == staged_report(cli, cached=False)

    # An unchanged record's staged blob changes: its cached value must not be reused.
    write_record("pytest-timeouts", "Deploy rollback plan", tags=["deploy"], project_context="ops")
    git(repo, "add", "-A")
    after = staged_report(cli, cached=True)
    assert after == staged_report(cli, cached=False)
    assert after != cold

    # Feedback staged for a record counts at once.
    done = cli("feedback", "deploy-rollback", "success")
    assert done.returncode == 0, done.stderr
    git(repo, "add", "-A")
    assert staged_report(cli, cached=True) == staged_report(cli, cached=False)


def test_a_search_after_a_staged_check_still_uses_and_keeps_its_cache(
    repo: Path, store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("one", "Deploy rollback plan", tags=["deploy"])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    write_record("two", "Deploy rollback plan, again", tags=["deploy"])
    git(repo, "add", "-A")
    first = cli("search", "deploy", "--json").stdout
    (index_path,) = (repo / ".git" / "reliora-cache").glob("*.index")
    for legacy in (".cache", ".cache-staged"):  # value caches of earlier versions
        index_path.with_suffix(legacy).write_bytes(b"old")
    staged_report(cli, cached=True)
    assert cli("search", "deploy", "--json").stdout == first
    caches = {p.name for p in (repo / ".git" / "reliora-cache").iterdir()}
    (index,) = (name for name in caches if name.endswith(".index"))
    stem = index.removesuffix(".index")
    assert f"{stem}.index-git" in caches  # the index of files kept in git, beside the other
    assert all(name.startswith(stem) for name in caches)
    assert not {f"{stem}.cache", f"{stem}.cache-staged"} & caches  # removed when the index is


def test_the_hooks_fast_start_path_answers_like_the_full_cli(
    repo: Path, store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("one", "Deploy rollback plan", tags=["deploy"], project_context="ops")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    write_record("two", "Deploy rollback plan", tags=["deploy"], project_context="ops")
    (store.experiences / "broken.md").write_text("---\nid: broken\n---\n")
    git(repo, "add", "-A")
    for args in (["check", "--staged"], ["check", "--staged", "--json"]):
        fast = cli(*args)
        full = cli(*args, env={"RELIORA_FAST_CLI": "0"})
        assert fast.returncode == full.returncode == 1
        assert fast.stdout == full.stdout
        assert "SIMILAR_EXPERIENCE_FOUND" in fast.stdout + fast.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_staged_files_parsed_in_worker_processes_give_the_serial_result(
    repo: Path, store: Store, write_record: RecordMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(8):
        write_record(f"deploy-{n}", f"Deploy rollback plan {n}", tags=["deploy"])
    (store.experiences / "broken.md").write_text("---\nid: [\n---\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "records")
    write_record("deploy-again", "Deploy rollback plan", tags=["deploy"])
    git(repo, "add", "-A")
    monkeypatch.setenv("RELIORA_NO_CACHE", "1")
    serial = check_staged(store)
    monkeypatch.setattr(parallel, "PARALLEL_MIN", 1)
    monkeypatch.setattr(parallel, "PER_WORKER_MIN", 1)
    monkeypatch.setenv("RELIORA_JOBS", "2")
    assert parallel.worker_count(9) == 2
    forked = check_staged(store)
    assert forked == serial
    assert [w.id for f in forked.report.files for w in f.similar][:1] == ["deploy-0"]
