"""The guards of a committed store, remembered by the git tree of its records (SPEC.md §15).

The pre-commit hook must cost nothing measurable in a store without guards,
and most commits stage no record: then the staged store is HEAD's, and the
tree id of HEAD's ``.reliora/experiences`` names exactly the records whose
guards apply. That tree id keys a small file beside the store index holding
the active guards found in it (often none): one ``git rev-parse`` and one small
read tell the hook whether there is anything to run, with no store index
opened and no record parsed. A tree id names exact content, so the file can
never be wrong for it; it is rebuilt (from the store index) when the records
change, and costs only speed when missing, corrupt or from other code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reliora_git.storage.cache import cache_file, read_cache, write_cache

#: (record id, record locator, ActiveGuard as a plain tuple, the record's paths).
GuardRow = tuple[str, str, tuple[Any, ...], tuple[str, ...]]


def _path(root: Path) -> Path | None:
    path = cache_file(root)
    return None if path is None else path.with_suffix(".guards")


def read_guard_list(root: Path, tree: str) -> list[GuardRow] | None:
    """The active guards remembered for the records tree ``tree``, or None if not known."""
    path = _path(root.resolve())
    if path is None:
        return None
    content = read_cache(path, root.resolve())
    if not isinstance(content, tuple) or len(content) != 2 or content[0] != tree:
        return None
    rows = content[1]
    return list(rows) if isinstance(rows, (list, tuple)) else None


def write_guard_list(root: Path, tree: str, rows: list[GuardRow]) -> None:
    path = _path(root.resolve())
    if path is not None:
        write_cache(path, root.resolve(), (tree, tuple(rows)))
