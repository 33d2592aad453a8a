"""Whether anything under the store's folders changed since the last look (Linux inotify).

A long-running process (the MCP server) answers many calls on one store. Walking
it for every call costs a ``stat`` per record file (tens of milliseconds at
10,000 records); the kernel can say instead whether any file or folder there
was written, created, removed, renamed or touched since the walk. A
:class:`Watch` is armed *before* a walk, so a change made during the walk is
reported too; :meth:`Watch.quiet` is True only when nothing at all happened
since, so the previous walk and index are still exactly the store.

Anything unusual — not Linux, no inotify, the watch limit reached, a queue
overflow, a watched folder removed or moved — makes :meth:`Watch.quiet` False,
which only means walking again. Changes made on another machine (a network file
system) are not reported by inotify: set ``RELIORA_NO_WATCH=1`` there.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path

# <sys/inotify.h>
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_MODIFY = 0x002
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_EVENTS = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
)


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    if not hasattr(libc, "inotify_init1"):
        return None
    return libc


class Watch:
    """An inotify watch on some folders and every folder below them."""

    def __init__(self, folders: Iterable[Path]) -> None:
        self._fd: int | None = None
        self._broken = True
        if os.environ.get("RELIORA_NO_WATCH", "") not in ("", "0"):
            return
        libc = _libc()
        if libc is None:
            return
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return
        self._fd = fd
        mask = _EVENTS | _IN_ONLYDIR | _IN_DONT_FOLLOW
        for top in folders:
            for folder in _folders_below(top):
                if libc.inotify_add_watch(fd, os.fsencode(folder), mask) < 0:
                    self.close()  # out of watches, or the folder went away: walk instead
                    return
        self._broken = False

    def quiet(self) -> bool:
        """True when nothing happened under the folders since the watch was armed."""
        if self._broken or self._fd is None:
            return False
        try:
            while os.read(self._fd, 65536):
                self._broken = True  # an event (or an overflow): this watch has done its job
        except BlockingIOError:
            pass
        except OSError:
            self._broken = True
        return not self._broken

    def close(self) -> None:
        self._broken = True
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def _folders_below(top: Path) -> list[str]:
    """``top`` and every real folder below it (symbolic links are not followed, as in the walk)."""
    if not top.is_dir() or top.is_symlink():
        return []
    found = [os.fspath(top)]
    stack = [os.fspath(top)]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        found.append(entry.path)
                        stack.append(entry.path)
        except OSError:
            continue
    return found
