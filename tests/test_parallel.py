"""Parsing in worker processes (parallel.py): the same values, in order, whatever happens."""

from __future__ import annotations

import os
import sys

import pytest

from reliora_git.storage import parallel

_PARENT = os.getpid()
#: Worker processes are forked on Linux only (parallel.py); elsewhere parsing stays serial.
forks = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")


def _upper(locator: str, text: str) -> tuple[str, str, int]:
    return (locator, text.upper(), os.getpid())


def _dies_in_a_worker(locator: str, text: str) -> tuple[str, str]:
    if os.getpid() != _PARENT:
        os._exit(3)  # as the kernel's OOM killer would end it: no exception, no cleanup
    return (locator, text)


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers for any number of files (the real thresholds need thousands)."""
    monkeypatch.setattr(parallel, "PARALLEL_MIN", 1)
    monkeypatch.setattr(parallel, "PER_WORKER_MIN", 1)
    monkeypatch.setenv("RELIORA_JOBS", "2")


@forks
def test_values_come_back_in_order_from_the_workers(forced: None) -> None:
    pairs = [(f"loc-{i}", f"text {i}") for i in range(50)]
    with parallel.computer(_upper, len(pairs)) as compute_all:
        values = compute_all(pairs)
    assert [(loc, text) for loc, text, _ in values] == [(loc, text.upper()) for loc, text in pairs]
    assert {pid for _, _, pid in values} - {_PARENT}  # computed elsewhere, not here


@forks
def test_a_killed_worker_leaves_the_work_to_this_process(forced: None) -> None:
    pairs = [(f"loc-{i}", f"text {i}") for i in range(20)]
    with parallel.computer(_dies_in_a_worker, len(pairs)) as compute_all:
        assert compute_all(pairs) == pairs
        assert compute_all(pairs[:3]) == pairs[:3]


@forks
def test_few_files_or_one_job_stay_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parallel.worker_count(parallel.PARALLEL_MIN - 1) == 1
    monkeypatch.setenv("RELIORA_JOBS", "1")
    assert parallel.worker_count(10 * parallel.PARALLEL_MIN) == 1
    monkeypatch.setenv("RELIORA_JOBS", "4")
    assert parallel.worker_count(10 * parallel.PARALLEL_MIN) == 4
    assert parallel.worker_count(parallel.PARALLEL_MIN) == 2  # at least PER_WORKER_MIN each


#: Set just before a fork: the worker sees it, the parent clears it at once.
_SEEN_AT_FORK: list[str] = []


def _what_the_worker_saw() -> tuple[int, list[str]]:
    return os.getpid(), list(_SEEN_AT_FORK)


@forks
def test_a_forked_call_runs_elsewhere_with_this_process_memory_as_it_was() -> None:
    _SEEN_AT_FORK.append("the index")
    try:
        future = parallel.call_forked(_what_the_worker_saw)
    finally:
        _SEEN_AT_FORK.clear()
    assert future is not None
    pid, seen = future.result(timeout=60)
    assert pid != os.getpid()
    assert seen == ["the index"]


def test_no_fork_while_another_thread_runs() -> None:
    import threading

    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert parallel.call_forked(_what_the_worker_saw) is None
    finally:
        release.set()
        other.join()
