"""Folder stamps (storage/locate.py): the saved index spares listing a folder only while
that is right.

A folder whose stamp is unchanged is not listed: its files are taken from the saved
index and each is stat'ed again. Each test changes the store in one way a user or a
pull request can, and checks which folders were listed and that what the index
answers is what a full build from the files gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from reliora_git.search.rank import Query
from reliora_git.storage import locate as locate_module
from reliora_git.storage.index import IndexState, StoreIndex, open_index
from reliora_git.storage.indexfile import index_file, read_state
from reliora_git.storage.store import ScannedFile, Store, scan_folder
from tests.conftest import OLD_MTIME
from tests.test_index_stages import QUERIES, sample

__all__ = ["sample"]  # the fixture, shared with test_index_stages

#: The folders listed, by locator, in the order listed.
Listed = list[str]
EXPERIENCES = ".reliora/experiences"


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> Listed:
    """The folders locate.py listed (the others' files came from the saved index)."""
    seen: Listed = []

    def counted(
        path: str,
        locator: str,
        stack: list[tuple[str, str]],
        append: Callable[[ScannedFile], None],
    ) -> None:
        seen.append(locator)
        scan_folder(path, locator, stack, append)

    monkeypatch.setattr(locate_module, "scan_folder", counted)
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


def folders_of(store: Store) -> list[str]:
    return sorted(
        store.locator(path)
        for top in (store.path / "experiences", store.path / "feedback")
        for path in [top, *top.rglob("*")]
        if path.is_dir()
    )


def test_an_unchanged_store_lists_no_folder(sample: Store, listed: Listed) -> None:
    open_index(sample).close()
    assert sorted(listed) == folders_of(sample)
    folders = saved(sample).folders
    assert folders is not None
    assert [f[0] for f in folders] == folders_of(sample)
    assert all(trusted for *_, trusted in folders)
    listed.clear()
    with open_index(sample) as index:
        assert not index.built.loaded.changed
        assert listed == []
        assert answers(index) == full_build(sample)


def test_a_record_edited_in_place_is_read_again_without_a_listing(
    sample: Store, listed: Listed
) -> None:
    open_index(sample).close()
    record = a_record(sample)
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace('title: "', 'title: "Zebraword ', 1), encoding="utf-8")
    os.utime(record, (OLD_MTIME + 60, OLD_MTIME + 60))  # old enough to be cached
    listed.clear()
    with open_index(sample) as index:
        assert listed == []
        assert index.built.loaded.patched
        hits = index.rank(Query.parse("zebraword"))
        assert [hit.doc.locator for hit in hits] == [sample.locator(record)]
    assert warm(sample) == full_build(sample)
    folders = saved(sample).folders
    assert folders is not None and all(trusted for *_, trusted in folders)


@pytest.mark.parametrize("change", ["add", "remove", "rename", "add in a new folder"])
def test_only_the_folder_that_changed_is_listed(sample: Store, listed: Listed, change: str) -> None:
    open_index(sample).close()
    record = a_record(sample)
    folder = sample.locator(record.parent)
    expected = [folder]
    if change == "add":
        (record.parent / "zz-added.md").write_text(record.read_text().replace("id: ", "id: zz", 1))
    elif change == "remove":
        record.unlink()
    elif change == "rename":
        record.rename(record.with_name("zz-renamed.md"))
    else:
        deeper = record.parent / "deeper" / "still"
        deeper.mkdir(parents=True)
        (deeper / "zz-added.md").write_text(record.read_text().replace("id: ", "id: zz", 1))
        expected = [folder, f"{folder}/deeper", f"{folder}/deeper/still"]
    listed.clear()
    with open_index(sample) as index:
        assert listed == expected
        assert index.built.loaded.changed
        assert answers(index) == full_build(sample)
    folders = {f[0]: f[3] for f in saved(sample).folders or []}
    assert sorted(folders) == folders_of(sample)
    assert [at for at, trusted in folders.items() if not trusted] == expected  # changed just now
    listed.clear()
    open_index(sample).close()
    assert listed == expected  # listed again until old enough to trust


def test_a_folder_swapped_for_a_link_is_never_read_through(
    sample: Store, listed: Listed, tmp_path: Path
) -> None:
    open_index(sample).close()
    record = a_record(sample)
    folder = record.parent
    moved = tmp_path / "elsewhere"
    folder.rename(moved)
    folder.symlink_to(moved, target_is_directory=True)
    with open_index(sample) as index:
        assert sample.locator(record) not in index.locators
        assert any("symbolic link" in str(error) for error in index.skipped)
        assert answers(index) == full_build(sample)


def test_a_record_replaced_by_a_link_behind_a_restored_mtime_is_reported(
    sample: Store, listed: Listed
) -> None:
    """Whoever sets a folder's mtime back defeats the stamp; the file's own lstat still tells
    a link from a file, and the whole walk then reports it."""
    open_index(sample).close()
    record = a_record(sample)
    folder = record.parent
    before = folder.stat()
    record.unlink()
    record.symlink_to("/etc/hostname")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    listed.clear()
    with open_index(sample) as index:
        assert sorted(listed) == folders_of(sample)
        assert any("symbolic link" in str(error) for error in index.skipped)
    assert warm(sample) == full_build(sample)


def test_a_young_folder_is_trusted_once_old_enough(sample: Store, listed: Listed) -> None:
    record = a_record(sample)
    added = record.parent / "zz-added.md"
    added.write_text(record.read_text().replace("id: ", "id: zz", 1))
    os.utime(added, (OLD_MTIME, OLD_MTIME))  # the file may be cached, its folder is new
    open_index(sample).close()
    folders = {f[0]: f[3] for f in saved(sample).folders or []}
    assert [at for at, trusted in folders.items() if not trusted] == [sample.locator(record.parent)]
    os.utime(record.parent, (OLD_MTIME, OLD_MTIME))
    with open_index(sample) as index:
        assert not index.built.loaded.changed  # nothing parsed: written for the stamps alone
    folders = {f[0]: f[3] for f in saved(sample).folders or []}
    assert all(folders.values())
    listed.clear()
    with open_index(sample) as index:
        assert listed == []
        assert answers(index) == full_build(sample)


def test_a_file_too_young_to_cache_keeps_its_folder_listed(sample: Store, listed: Listed) -> None:
    open_index(sample).close()
    record = a_record(sample)
    record.write_text(record.read_text() + "\nmore\n")  # in place, just now
    with open_index(sample) as index:
        assert index.built.loaded.patched
    # The saved index lacks the young file, so its folder is listed until it is cached.
    folders = {f[0]: f[3] for f in saved(sample).folders or []}
    assert [at for at, trusted in folders.items() if not trusted] == [sample.locator(record.parent)]
    listed.clear()
    assert warm(sample) == full_build(sample)
    assert listed[0] == sample.locator(record.parent)
