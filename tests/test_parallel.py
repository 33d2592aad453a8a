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
