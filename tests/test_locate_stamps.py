"""Folder stamps (storage/locate.py): a saved index spares the walk only while it is right.

When no folder of the store changed since the index was saved, the files are taken
from it and each is stat'ed again instead of listing every folder. Each test changes
the store in one way a user or a pull request can, and checks that what the index
answers is what a full build from the files gives, and whether the walk ran.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reliora_git.search.rank import Query
from reliora_git.storage import locate as locate_module
from reliora_git.storage.index import IndexState, StoreIndex, open_index
from reliora_git.storage.indexfile import index_file, read_state
from reliora_git.storage.store import Store, scan_markdown
from tests.conftest import OLD_MTIME
from tests.test_index_stages import QUERIES, sample

__all__ = ["sample"]  # the fixture, shared with test_index_stages

Walks = list[str]


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Walks:
    """The folders the walk listed, per command (the rest came from the saved index)."""
    seen: Walks = []
    real = scan_markdown

    def counted(store: Store, folder: Path, stamps: object = None) -> object:
        seen.append(store.locator(folder))
        return real(store, folder, stamps)  # type: ignore[arg-type]

    monkeypatch.setattr(locate_module, "scan_markdown", counted)  # the walk locate.py runs
    return seen


def saved(store: Store) -> IndexState:
    root = store.root.resolve()
    path = index_file(root)
    assert path is not None
    state = read_state(path, root)
    assert state is not None
    return state


def answers(index: StoreIndex) -> dict[str, object]:
    """What the commands ask of an index, as plain data (test_index_stages has more)."""
    slots = index.slots()
    return {
        "slots": [index.identity(slot) for slot in slots],
        "json": [index.record_json(slot) for slot in slots],
        "skipped": [str(error) for error in index.skipped],
        "superseded_by": index.superseded_by,
        "feedback": index.feedback,
        "search": {
            query: [(h.doc.id, h.score, h.level) for h in index.rank(Query.parse(query))]
            for query in QUERIES
        },
    }


def full_build(store: Store) -> dict[str, object]:
    with open_index(store, IndexState.empty(), save=False) as index:
        return answers(index)


def warm(store: Store) -> dict[str, object]:
    with open_index(store) as index:
        return answers(index)


def a_record(store: Store) -> Path:
    return sorted((store.path / "experiences").rglob("*.md"))[20]


def test_an_unchanged_store_is_not_walked(sample: Store, walks: Walks) -> None:
    open_index(sample).close()
    folders = saved(sample).folders
    assert folders is not None
    assert [f[0] for f in folders[:2]] == [".reliora", ".reliora/experiences"]
    walks.clear()
    with open_index(sample) as index:
        assert not index.built.loaded.changed
        assert walks == []
        assert answers(index) == full_build(sample)


def test_a_record_edited_in_place_is_read_again_without_a_walk(sample: Store, walks: Walks) -> None:
    open_index(sample).close()
    record = a_record(sample)
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace('title: "', 'title: "Zebraword ', 1), encoding="utf-8")
    os.utime(record, (OLD_MTIME + 60, OLD_MTIME + 60))  # old enough to be cached
    walks.clear()
    with open_index(sample) as index:
        assert walks == []
        assert index.built.loaded.patched
        hits = index.rank(Query.parse("zebraword"))
        assert [hit.doc.locator for hit in hits] == [sample.locator(record)]
    assert warm(sample) == full_build(sample)
    assert saved(sample).folders is not None  # the files are all the walk would find


@pytest.mark.parametrize("change", ["add", "remove", "rename", "add in a new folder"])
def test_a_file_added_removed_or_renamed_is_found_by_a_walk(
    sample: Store, walks: Walks, change: str
) -> None:
    open_index(sample).close()
    record = a_record(sample)
    if change == "add":
        (record.parent / "zz-added.md").write_text(record.read_text().replace("id: ", "id: zz", 1))
    elif change == "remove":
        record.unlink()
    elif change == "rename":
        record.rename(record.with_name("zz-renamed.md"))
    else:
        folder = sample.path / "experiences" / "deeper" / "still"
        folder.mkdir(parents=True)
        (folder / "zz-added.md").write_text(record.read_text().replace("id: ", "id: zz", 1))
    walks.clear()
    with open_index(sample) as index:
        assert ".reliora/experiences" in walks
        assert index.built.loaded.changed
    assert warm(sample) == full_build(sample)
    assert saved(sample).folders is None  # a folder changed just now: no stamp is trusted yet


def test_a_record_replaced_by_a_link_behind_a_restored_mtime_is_reported(
    sample: Store, walks: Walks
) -> None:
    """Whoever sets a folder's mtime back defeats the stamp; the file's own lstat still tells
    a link from a file, and the walk then reports it."""
    open_index(sample).close()
    record = a_record(sample)
    folder = record.parent
    before = folder.stat()
    record.unlink()
    record.symlink_to("/etc/hostname")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    walks.clear()
    with open_index(sample) as index:
        assert ".reliora/experiences" in walks
        assert any("symbolic link" in str(error) for error in index.skipped)
    assert warm(sample) == full_build(sample)


def test_stamps_wait_until_the_folders_are_old_enough(sample: Store, walks: Walks) -> None:
    record = a_record(sample)
    added = record.parent / "zz-added.md"
    added.write_text(record.read_text().replace("id: ", "id: zz", 1))
    os.utime(added, (OLD_MTIME, OLD_MTIME))  # the file may be cached, its folder is new
    open_index(sample).close()
    assert saved(sample).folders is None  # its folder changed within cache.RACY_NS
    os.utime(record.parent, (OLD_MTIME, OLD_MTIME))
    with open_index(sample) as index:
        assert not index.built.loaded.changed  # nothing parsed: written for the stamps alone
    assert saved(sample).folders is not None
    walks.clear()
    with open_index(sample) as index:
        assert walks == []
        assert answers(index) == full_build(sample)


def test_no_stamps_while_a_file_is_too_young_to_cache(sample: Store, walks: Walks) -> None:
    open_index(sample).close()
    record = a_record(sample)
    record.write_text(record.read_text() + "\nmore\n")  # in place, just now
    with open_index(sample) as index:
        assert index.built.loaded.patched
    # The saved index lacks the young file, so its files are not all the walk found.
    assert saved(sample).folders is None
    walks.clear()
    assert warm(sample) == full_build(sample)
    assert ".reliora/experiences" in walks
