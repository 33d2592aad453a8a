"""Stopping work that nobody waits for any more: an MCP call whose client cancelled it or left.

A thread cannot be killed from outside, so long work asks at its natural steps —
a record parsed, a record scanned for secrets, a query token looked up — whether
it should go on (:func:`checkpoint`). The MCP server runs each tool call under
:func:`stopped_by` with an event it sets when the client cancels the request or
closes the connection; the call then ends at its next step with
:class:`WorkStopped`, running its ``finally`` blocks (lock files removed, partial
segments deleted) on the way out.

Everywhere else — the command line, the hook, ``org`` — no event is set, and a
checkpoint is one attribute lookup. Pure: no files, no processes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class WorkStopped(BaseException):
    """The caller of this work has gone: stop, nobody reads the result.

    A BaseException, like KeyboardInterrupt, so that no ``except Exception`` on the
    way out turns it into a result or an error report.
    """


_stop = threading.local()


def checkpoint() -> None:
    """Raise :class:`WorkStopped` when the work running on this thread was called off."""
    event: threading.Event | None = getattr(_stop, "event", None)
    if event is not None and event.is_set():
        raise WorkStopped


@contextmanager
def stopped_by(event: threading.Event) -> Iterator[None]:
    """Run the block on this thread so that setting ``event`` stops it at its next checkpoint."""
    previous = getattr(_stop, "event", None)
    _stop.event = event
    try:
        yield
    finally:
        _stop.event = previous
