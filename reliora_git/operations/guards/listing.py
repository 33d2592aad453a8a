"""``reliora guard list``: every active guard of the store, as the hook runs it, and the
guards that watch some files, for ``about`` (SPEC.md §15).

The guards come from the store index with their defaults applied (records/guards.py
``resolve``): the paths they look at, the files they leave out, the message a finding
shows. Guards of retired and superseded records are off, so never listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reliora_git.gitrepo import git
from reliora_git.operations.guards.nouns import GuardOf
from reliora_git.operations.guards.scan import guards_of_index, store_folder, top_of
from reliora_git.records.guards import EXISTING_ALLOWED, path_applies
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import Store

#: What each ``scope`` of a guard's paths means, as ``guard list`` says it.
SCOPES = {
    "glob": "its own globs",
    "record": "the lesson's paths",
    "all": "every file outside .reliora/",
}


def guard_json(g: GuardOf) -> dict[str, Any]:
    """One guard as ``guard list --json`` (and ``about``) name it."""
    guard = g.guard
    return {
        "record": g.record_id,
        "locator": g.locator,
        "guard": guard.number,
        "pattern": guard.pattern,
        "scope": guard.scope,
        "paths": list(guard.paths),
        "exclude": list(guard.exclude),
        "severity": guard.severity,
        "message": guard.message,
        "existing": EXISTING_ALLOWED if guard.existing_allowed else None,
    }


@dataclass
class GuardList:
    guards: list[GuardOf]

    @property
    def records(self) -> int:
        return len({g.record_id for g in self.guards})

    def to_json(self) -> dict[str, Any]:
        return {
            "total": len(self.guards),
            "records": self.records,
            "guards": [guard_json(g) for g in self.guards],
        }


def list_guards(store: Store, index: StoreIndex | None = None) -> GuardList:
    """The guards of the store's active records, by lesson id then position (``index``: the
    store's index when the caller holds it, as a long-running server does)."""
    if index is not None:
        guards = guards_of_index(index)
    else:
        with open_index(store) as opened:
            guards = guards_of_index(opened)
    guards.sort(key=lambda g: (g.record_id, g.guard.number))
    return GuardList(guards)


def guards_watching(
    store: Store, index: StoreIndex, wanted: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """The active guards that look at the files ``wanted`` names, by record id (``about``).

    ``wanted``: top-relative paths (a folder ends with ``/``: a guard watches it when it
    looks at a file in it). Each guard is its :func:`guard_json` without its record, plus
    ``watches``: the paths of ``wanted`` it looks at. The store's own files are never
    watched (the hook never judges them).
    """
    guards = guards_of_index(index)
    if not guards:
        return {}
    where = top_of(store)
    store_dir = store_folder(where[1] if where is not None else "")
    files = {w: _files_of(where, w) for w in wanted}
    found: dict[str, list[dict[str, Any]]] = {}
    for g in guards:
        watches = [
            w
            for w in wanted
            if any(not f.startswith(store_dir) and path_applies(g.guard, f) for f in files[w])
        ]
        if watches:
            shown = guard_json(g)
            del shown["record"], shown["locator"]
            found.setdefault(g.record_id, []).append({**shown, "watches": watches})
    return found


def _files_of(where: Any, path: str) -> list[str]:
    """The file ``path``, or the work tree's files in the folder ``path`` (tracked and
    untracked, not ignored; none outside git)."""
    if not path.endswith("/"):
        return [path]
    if where is None:
        return []
    top, _ = where
    args = ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name"]
    out = git.run([*args, "--", f":(top,literal){path}"], top, check=False)
    return sorted(set(git.split_z(out)))
