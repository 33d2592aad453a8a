"""Parse many store files on every core, for a cache that is empty or out of date.

A warm search parses nothing, but the first one after a clone or an upgrade
(the cache is keyed to the parsing code) parses every record: about 0.3 ms each,
most of it in PyYAML and the tokenizer, so half a minute at 100,000 records on
one core. When at least :data:`PARALLEL_MIN` files need parsing, worker
processes share the work; below that, starting them costs more than it saves.

Workers are forked (on Linux), so they start without importing anything, and
only from a process with one thread: forking a process where other threads run
(an MCP server's I/O, say) can copy a lock that one of them holds. Elsewhere the
work runs here, serially, with the same results: the computation is a pure
function of (locator, text), and results come back in order. ``RELIORA_JOBS``
sets the number of processes (default: one per core; ``1`` turns this off).

Workers are forked when the pool is made (so a connection opened afterwards is
not copied into them), close any socket they inherited anyway, and die with
their parent however it ends: a killed ``org sync`` must not leave a worker
holding its database session, and with it the repository's lock (issue 23).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future

#: What a file parses to (a cache value): a function of its locator and text.
Compute = Callable[[str, str], tuple[Any, ...]]
Pairs = Sequence[tuple[str, str]]
#: The fewest files worth starting worker processes for, and the fewest per worker.
PARALLEL_MIN = 2000
PER_WORKER_MIN = 1000
#: Files read and parsed per round: bounds the texts held in memory at once.
BATCH = 8192


def _start_worker(parent: int) -> None:
    """Set up a forked worker: quiet on Ctrl-C, holding no socket, dying with its parent."""
    import signal

    # Ctrl-C reaches the whole process group: the parent reports it, workers stay quiet.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _close_inherited_sockets()
    _die_with(parent)


def _close_inherited_sockets() -> None:
    """Close the sockets a worker inherited (a database connection's, say), without a word.

    A worker that kept a copy of the parent's connection would keep its
    transaction and locks open after the parent was killed. ``os.close`` sends
    nothing (a client library's close would tell the server the session ended).
    The pool talks to workers over pipes, which stay; so do standard input,
    output and error, whatever they are.
    """
    import stat

    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in fds:
        if fd <= 2:
            continue
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.close(fd)
        except OSError:
            continue  # the listing's own descriptor, closed by now


def _die_with(parent: int) -> None:
    """End this worker when ``parent`` ends, however it ends (SIGKILL, the OOM killer…).

    The kernel sends SIGKILL on the parent's death (PR_SET_PDEATHSIG); a thread
    watching the parent's pid covers a parent that died before that was set, and
    a system where it cannot be.
    """
    import signal
    import threading

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="reliora-parent-watch", daemon=True).start()


def _compute_all(compute: Compute, pairs: Pairs) -> list[tuple[Any, ...]]:
    return [compute(locator, text) for locator, text in pairs]


def worker_count(files: int) -> int:
    """How many processes to parse ``files`` files with (1: here, serially)."""
    if files < PARALLEL_MIN:
        return 1
    import threading  # here: a warm search never needs it

    if threading.active_count() > 1:
        return 1
    if not sys.platform.startswith("linux"):
        # macOS has fork, but its system libraries may crash a forked child (Python's
        # own default there is spawn, whose start-up would cost what it saves here).
        return 1
    chosen = os.environ.get("RELIORA_JOBS", "")
    if chosen.isdigit() and int(chosen) > 0:
        jobs = int(chosen)
    elif hasattr(os, "sched_getaffinity"):
        jobs = len(os.sched_getaffinity(0))  # the cores this process may run on
    else:
        jobs = os.cpu_count() or 1
    return max(1, min(jobs, files // PER_WORKER_MIN))


#: A function of one piece of the work (a list of items) that returns one result for it.
PieceFunction = Callable[[Sequence[Any]], Any]


@contextlib.contextmanager
def mapper(files: int) -> Iterator[Callable[[PieceFunction, Sequence[Any]], list[Any]]]:
    """``run(function, items)``: ``function`` on pieces of ``items``, results in piece order.

    For ~``files`` files of work: with several worker processes (see
    :func:`worker_count`) the items are cut into a few pieces per worker, else
    ``function`` runs here on all of them as one piece. ``function`` must be
    picklable (a module-level function, or a ``functools.partial`` of one).
    """
    jobs = worker_count(files)
    if jobs == 1:
        yield lambda function, items: [function(items)] if items else []
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_start_worker,
        initargs=(os.getpid(),),
    )
    # Fork the workers now, not at the first piece of work: a caller that opens a
    # connection after entering (org sync) then has none of them holding a copy of it.
    pool.submit(int)
    broken = False

    def run(function: PieceFunction, items: Sequence[Any]) -> list[Any]:
        nonlocal broken
        if not items:
            return []
        if not broken:
            # A few pieces per worker, so that one slow piece does not leave a core idle.
            step = max(1, -(-len(items) // (jobs * 4)))
            pieces = [items[i : i + step] for i in range(0, len(items), step)]
            try:
                return list(pool.map(function, pieces))
            except BrokenProcessPool:
                broken = True  # a worker was killed (out of memory?): go on without them
        return [function(items)]

    try:
        yield run
    finally:
        # On an error or Ctrl-C, queued pieces are dropped rather than parsed first.
        pool.shutdown(wait=True, cancel_futures=True)


def call_forked(function: Callable[[], Any]) -> Future[Any] | None:
    """``function()`` in one worker process forked now, its result a future; None where a
    fork is not safe (another thread runs, or not Linux: see :func:`worker_count`).

    For work that would hold the GIL for a while in a server: forked, it runs on another
    core and leaves this process's threads free. The worker sees this process's memory as
    it is now (so ``function`` may read module globals set just before), and ends after
    this one call; ``function`` must be a module-level function, its result picklable.
    """
    import threading

    if threading.active_count() > 1 or not sys.platform.startswith("linux"):
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        1,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_start_worker,
        initargs=(os.getpid(),),
    )
    future = pool.submit(function)  # forks the worker, before the pool's own thread starts
    pool.shutdown(wait=False)  # the call already submitted still runs; then the worker ends
    return future


@contextlib.contextmanager
def computer(compute: Compute, files: int) -> Iterator[Callable[[Pairs], list[tuple[Any, ...]]]]:
    """A function from (locator, text) pairs to their values, in order, for ~``files`` files."""
    with mapper(files) as run:
        yield functools.partial(compute_on, run, compute)


def compute_on(
    run: Callable[[PieceFunction, Sequence[Any]], list[Any]], compute: Compute, pairs: Pairs
) -> list[tuple[Any, ...]]:
    """The values of ``pairs`` by ``compute``, through a :func:`mapper`'s ``run``."""
    piece = functools.partial(_compute_all, compute)
    return [value for part in run(piece, pairs) for value in part]
