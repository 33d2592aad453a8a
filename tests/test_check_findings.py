"""A whole-store ``check`` answered from its kept findings, and ``list``, as a cold run gives them.

``check`` compares every record with its exact twins; what that finds is kept beside
the index for exactly one state of the store (storage/findings.py), and ``check`` and
``list --json`` lay out their output without the json module's indenting. Each output
must be what a run without any cache gives, byte for byte: on the first run, on a run
answered from what was kept, after a record changed, after one was added, and after a
feedback file changed a score.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from reliora_git.operations.review import check as check_module
from reliora_git.storage.findings import findings_path
from reliora_git.storage.index import open_index
from reliora_git.storage.store import Store
from tests.conftest import OLD_MTIME, TIL_CORPUS, Cli

#: Records of the sample copied into the store, and how many of them get a twin.
RECORDS = 40
TWINS = 8


def _aged(store: Store, mtime: int = OLD_MTIME) -> None:
    """Every store file old enough to be cached (cache.RACY_NS), as files nobody edits are."""
    for path in store.path.rglob("*"):
        if path.is_file():
            os.utime(path, (mtime, mtime))


def _twin(source: Path, target: Path, record_id: str) -> None:
    """A copy of ``source`` under another id: the same title, solution and applicability."""
    text = re.sub(r"^id: .*$", f"id: {record_id}", source.read_text(), count=1, flags=re.M)
    target.write_text(text)


@pytest.fixture
def twin_store(store: Store) -> list[Path]:
    """A store of sample records, some with twins (twins of twins too), all old."""
    sample = sorted((TIL_CORPUS / ".reliora" / "experiences").rglob("*.md"))[:RECORDS]
    copied = []
    for source in sample:
        target = store.experiences / source.parent.name / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        copied.append(target)
    twins = store.experiences / "twins"
    twins.mkdir()
    for n, source in enumerate(copied[:TWINS]):
        _twin(source, twins / f"twin-{n}-abcdef.md", f"twin-{n}-abcdef")
        if n % 2 == 0:
            _twin(source, twins / f"twin-{n}-fedcba.md", f"twin-{n}-fedcba")
    _aged(store)
    return copied


def _outputs(cli: Cli, named: str, no_cache: bool) -> dict[str, tuple[int, str, str]]:
    env = {"RELIORA_NO_CACHE": "1"} if no_cache else {"RELIORA_NO_CACHE": ""}
    runs = {
        "check --json": ["check", "--json"],
        "check": ["check"],
        "check --all": ["check", "--all"],
        "check FILE --json": ["check", named, "--json"],
        "check FILE": ["check", named],
        "list --json": ["list", "--json"],
        "list": ["list"],
        "list --tag --json": ["list", "--tag", "git", "--json"],
    }
    found = {}
    for name, args in runs.items():
        done = cli(*args, env=env)
        found[name] = (done.returncode, done.stdout, done.stderr)
    return found


def _same_as_cold(cli: Cli, store: Store, named: str) -> dict[str, tuple[int, str, str]]:
    """The outputs with the cache, twice (filled, then read), each equal to a cold run's."""
    cold = _outputs(cli, named, no_cache=True)
    filled = _outputs(cli, named, no_cache=False)
    assert filled == cold
    kept = _outputs(cli, named, no_cache=False)
    assert kept == cold
    assert any(path.name.endswith(".findings") for path in store.root.glob(".git/**/*"))
    return cold


def test_check_and_list_give_what_a_cold_run_gives_through_every_change(
    twin_store: list[Path], store: Store, cli: Cli
) -> None:
    named = str(twin_store[1].relative_to(store.root))
    first = _same_as_cold(cli, store, named)
    assert "SIMILAR_EXPERIENCE_FOUND" in first["check"][1]  # the twins are found
    assert '"twin-0-fedcba"' in first["check --json"][1]

    # One record changed: a twin of one record no more, and its words differ.
    changed = twin_store[0]
    text = changed.read_text().replace("## Solution\n", "## Solution\nRun pgbouncer first.\n", 1)
    changed.write_text(text)
    _aged(store, OLD_MTIME + 100)
    after_change = _same_as_cold(cli, store, named)
    assert after_change["check --json"] != first["check --json"]

    # One record added: a third twin of another record.
    _twin(twin_store[2], store.experiences / "twins" / "added-aaaaaa.md", "added-aaaaaa")
    _aged(store, OLD_MTIME + 200)
    after_add = _same_as_cold(cli, store, named)
    assert '"added-aaaaaa"' in after_add["check --json"][1]
    assert after_add["list --json"] != after_change["list --json"]

    # Feedback on a twin changes its score, and so the warnings about it.
    done = cli("feedback", "twin-2-abcdef", "success", "--note", "worked")
    assert done.returncode == 0, done.stderr
    _aged(store, OLD_MTIME + 300)
    after_feedback = _same_as_cold(cli, store, named)
    assert after_feedback["check --json"] != after_add["check --json"]


def test_an_unchanged_store_is_answered_from_the_kept_findings(
    twin_store: list[Path], store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_index(store) as index:
        computed = check_module.check(store, None, index).to_json()
        assert findings_path(index) is not None and findings_path(index).exists()  # type: ignore[union-attr]

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("compared again: the kept findings were not used")

    monkeypatch.setattr(check_module, "find_similar", never)
    with open_index(store) as index:
        report = check_module.check(store, None, index)
    assert report.to_json() == computed
    assert any(file.similar for file in report.files)

    # Another duplicate_overlap is another key: compared again, not read.
    (store.path / "config.toml").write_text(
        (store.path / "config.toml").read_text() + "\nduplicate_overlap = 0.5\n"
    )
    with open_index(store) as index, pytest.raises(AssertionError, match="compared again"):
        check_module.check(store, None, index)


def test_check_json_text_is_the_json_module_s_indenting(
    twin_store: list[Path], store: Store
) -> None:
    import json

    with open_index(store) as index:
        report = check_module.check(store, None, index)
    extra = {"withoutAskedAs": [{"id": "a", "n": 1.5, "none": None, "list": []}]}
    document = report.to_json()
    assert report.json_text() == json.dumps(document, ensure_ascii=False, indent=2)
    document.update(extra)
    assert report.json_text(extra) == json.dumps(document, ensure_ascii=False, indent=2)
    empty = check_module.CheckReport(0, [])
    assert empty.json_text() == json.dumps(empty.to_json(), ensure_ascii=False, indent=2)
