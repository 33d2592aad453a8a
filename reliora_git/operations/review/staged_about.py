"""The pre-commit hook's pointer to the lessons about the code being committed (SPEC.md §12).

``check --staged`` prints one line when staged files are named by active records'
``paths``: ``3 lessons are about files in this commit: reliora about src/x.py``.

It runs on every commit, so it must cost next to nothing: one ``git diff
--cached --name-only`` says which files are staged (nothing outside the store:
done), and the records' paths come from a small cache keyed by the tree of
``.reliora/experiences`` at HEAD, which changes only when records do. Only
when that tree is new, or records are staged in this commit, is the store read
from the git index (the same index ``check --staged`` builds). A store whose
records name no paths leaves an empty cache: every later commit reads 2 git
outputs and a few bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from reliora_git.gitrepo import git
from reliora_git.storage.store import Store

#: The layout of the cache file's content (an older one is not read).
_FORMAT = 1


@dataclass(frozen=True)
class LessonsAbout:
    #: How many active records name the staged files.
    lessons: int
    #: The staged files they name, top-relative, in index order.
    files: list[str]


def lessons_about_staged(store: Store) -> LessonsAbout | None:
    """The active records whose paths name staged files, or None (none, or no git)."""
    # One call for the store's place in the work tree and HEAD's tree of records.
    where = git.run(
        ["rev-parse", "--show-prefix", "-q", "--verify", "HEAD:./.reliora/experiences"],
        store.root,
        check=False,
    )
    lines = where.decode("utf-8", "surrogateescape").split("\n")
    prefix, tree = [*lines, "", ""][:2]
    store_dir = prefix + ".reliora/"
    out = git.run(
        ["diff", "--cached", "--name-only", "-z", "--no-renames"], store.root, check=False
    )
    staged = [name for name in out.decode("utf-8", "surrogateescape").split("\0") if name]
    code = [name for name in staged if not name.startswith(store_dir)]
    if not code:
        return None
    records_staged = any(name.startswith(store_dir + "experiences/") for name in staged)
    record_paths = _record_paths(store, prefix, "" if records_staged else tree.strip())
    if not record_paths:
        return None
    # Every folder above a staged file, with the files below it: each record path is
    # then one lookup (records come from pull requests: no record × file scan).
    files = set(code)
    below: dict[str, list[str]] = {}
    for name in code:
        parts = name.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            below.setdefault("/".join(parts[:depth]) + "/", []).append(name)
    lessons = 0
    named: set[str] = set()
    for paths in record_paths:
        hits = {p for p in paths if p in files}
        for p in paths:
            hits.update(below.get(p, ()) if p.endswith("/") else ())
        if hits:
            lessons += 1
            named |= hits
    if not lessons:
        return None
    return LessonsAbout(lessons, [name for name in code if name in named])


def _record_paths(store: Store, prefix: str, tree: str) -> list[tuple[str, ...]]:
    """The ``paths`` of each active record that has some, as the git index holds the store.

    ``tree`` is HEAD's tree of records when the index holds the same (no record staged):
    the cache's key. Without it the store is read from the index.
    """
    from reliora_git.storage.cache import cache_file, read_cache, write_cache

    root = store.root.resolve()
    path = cache_file(root)
    cache = None if path is None else path.with_suffix(".about-staged")
    if tree and cache is not None:
        stored = read_cache(cache, root)
        if isinstance(stored, tuple) and len(stored) == 3 and stored[:2] == (_FORMAT, tree):
            return [tuple(paths) for paths in stored[2]]
    paths = _from_index(store, prefix)
    if tree and cache is not None:
        write_cache(cache, root, (_FORMAT, tree, [list(p) for p in paths]))
    return paths


def _from_index(store: Store, prefix: str) -> list[tuple[str, ...]]:
    from reliora_git.storage.gitfiles import GitFiles
    from reliora_git.storage.index import open_index

    files, _ = GitFiles.staged(store, prefix)
    index = open_index(store, source=files)
    try:
        return [
            tuple(doc.paths)
            for doc in index.inverted.docs
            if doc is not None and doc.paths and doc.is_active
        ]
    finally:
        index.close()
