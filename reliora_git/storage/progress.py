"""A progress bar on stderr for long work (SPEC.md §9), and nothing otherwise.

Drawn only when there is much to do, stderr is a terminal and
``RELIORA_NO_PROGRESS`` is unset (or ``0``): never in a pipe, a hook's log or an
MCP server's stderr, and never on stdout. Typer (Click) is imported only then.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator

#: Work below this many files finishes before a bar would be worth reading.
PROGRESS_MIN = 2000


def wanted(total: int) -> bool:
    if total < PROGRESS_MIN:
        return False
    if os.environ.get("RELIORA_NO_PROGRESS", "") not in ("", "0"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


@contextlib.contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A function to call with each step's count of files done; a bar only when :func:`wanted`."""
    if not wanted(total):
        yield lambda done: None
        return
    import typer

    with typer.progressbar(
        length=total, label=label, file=sys.stderr, show_eta=True, show_pos=True
    ) as bar:
        yield bar.update
