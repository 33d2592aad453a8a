"""Which changes of files in a history changed code, not only blank lines, whitespace or
comment lines (SPEC.md §12, judged by :func:`reliora_git.records.code_change.meaningful`):
the per-blob judgement behind freshness (operations/freshness.py).

The blobs are read with one ``git cat-file --batch``; verdicts are kept by the blob pair
and the language in ``<cache>.changes`` (a blob pair judges the same whatever commit made
it, and the judging code is in the cache's stamp).
"""

from __future__ import annotations

from reliora_git.gitrepo import git
from reliora_git.gitrepo.file_history import Log
from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import Store

#: Files whose contents are judged: regular files (a mode, a link, a submodule counts).
_REGULAR = ("100644", "100755")


def changed_code(store: Store, log: Log, judged: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """Which of the ``judged`` (commit, file) changes changed code (the commit by its
    position in ``log``).

    An added, deleted or retyped file always did. For a modified one the two blobs are
    read (one ``git cat-file --batch`` for all) and judged; verdicts are kept by the blobs
    and the language (a blob pair judges the same whatever commit made it).
    """
    from reliora_git.records.code_change import MAX_JUDGED_BYTES, Judge
    from reliora_git.records.code_lines import syntax_of

    changed: set[tuple[int, str]] = set()
    waiting: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    names: dict[tuple[str, str, str], str] = {}
    for nth, name in judged:
        old_mode, new_mode, old_blob, new_blob, status = log[nth][1][name]
        if status != "M" or old_mode != new_mode or new_mode not in _REGULAR:
            changed.add((nth, name))
            continue
        key = (old_blob, new_blob, syntax_of(name).name)
        waiting.setdefault(key, []).append((nth, name))
        names[key] = name
    if not waiting:
        return changed
    verdicts = _VerdictCache(store)
    unknown = [key for key in waiting if key not in verdicts.entries]
    blobs: dict[str, git.Blob] = {}
    if unknown:
        try:
            wanted = [blob for key in unknown for blob in key[:2]]
            blobs = git.read_blobs(store.root, wanted, MAX_JUDGED_BYTES)
        except RelioraError:
            blobs = {}  # not readable here (a partial clone): every change counts
        texts = {
            blob: found.data.decode("utf-8", "replace")
            for blob, found in blobs.items()
            if found.data is not None
        }
        judge = Judge()
        for key in unknown:
            old, new = texts.get(key[0]), texts.get(key[1])
            verdicts.entries[key] = (
                old is None or new is None or judge.meaningful(names[key], old, new)
            )
        verdicts.save()
    for key, changes in waiting.items():
        if verdicts.entries[key]:
            changed.update(changes)
    return changed


class _VerdictCache:
    """Whether a change of code changed it, by (old blob, new blob, language), in
    ``<cache>.changes``: what two blobs say never changes (the judging code is in the
    cache's stamp)."""

    #: Above this many verdicts the file starts again (a few MB at most).
    LIMIT = 100_000

    def __init__(self, store: Store) -> None:
        from reliora_git.storage.cache import cache_file, read_cache

        self.root = store.root.resolve()
        path = cache_file(self.root)
        self.path = None if path is None else path.with_suffix(".changes")
        stored = None if self.path is None else read_cache(self.path, self.root)
        self.entries: dict[tuple[str, str, str], bool] = {}
        if isinstance(stored, dict) and len(stored) < self.LIMIT:
            self.entries = stored

    def save(self) -> None:
        from reliora_git.storage.cache import write_cache

        if self.path is not None:
            write_cache(self.path, self.root, self.entries)
