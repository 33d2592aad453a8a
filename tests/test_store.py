"""The store on disk: finding it, ids, and atomic never-overwriting writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import Store, check_id, find_store, new_id, slugify, write_new


def test_write_new_never_overwrites_and_leaves_no_temporary_file(store: Store) -> None:
    path = store.experiences / "a.md"
    write_new(path, "first", store)
    with pytest.raises(RelioraError, match="already exists"):
        write_new(path, "second", store)
    assert path.read_text() == "first"
    assert sorted(p.name for p in store.experiences.iterdir()) == [".gitkeep", "a.md"]


def test_write_new_refuses_paths_outside_the_store(store: Store) -> None:
    with pytest.raises(RelioraError, match="outside"):
        write_new(store.root / "elsewhere" / "x.md", "text", store)
    assert not (store.root / "elsewhere" / "x.md").exists()


def test_store_is_found_walking_up_or_by_option_or_env(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nested = store.root / "src" / "deep"
    nested.mkdir(parents=True)
    assert find_store(cwd=nested).root == store.root
    assert find_store(store.root).root == store.root
    monkeypatch.setenv("RELIORA_REPO", str(store.root))
    assert find_store(cwd=tmp_path).root == store.root
    monkeypatch.delenv("RELIORA_REPO")
    with pytest.raises(RelioraError, match=r"no \.reliora/ store found"):
        find_store(cwd=tmp_path)


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Flaky pytest timeouts on CI runners", "flaky-pytest-timeouts-on-ci-runners"),
        ("Café: naïve UTF-8 handling", "cafe-naive-utf-8-handling"),
        ("一二三", "experience"),
        ("a" * 60, "a" * 48),
        ("word " * 20, "-".join(["word"] * 9)),  # 9 words = 44 chars; a 10th would pass 48
    ],
)
def test_slugs_are_short_lowercase_ascii(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_new_ids_are_valid_and_distinct() -> None:
    ids = {new_id("Same title") for _ in range(50)}
    assert len(ids) == 50
    assert all(check_id(i) == i for i in ids)


@pytest.mark.parametrize("bad", ["../../etc/x", "a/b", "..", "A-Upper", "a\x00b", "", "-lead"])
def test_ids_from_the_command_line_are_checked(bad: str) -> None:
    with pytest.raises(RelioraError, match="not a record id"):
        check_id(bad)
