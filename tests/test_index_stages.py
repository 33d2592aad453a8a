"""The store index as stages (storage/index.py): what is read lazily answers as what is built.

A warm command opens the saved index section by section (storage/indexfile.py) and
resolves ids from its record table; ``list --json`` prints each record's line from
the segments. Both must give exactly what a full build from the files gives: the
same ids, errors, records, rankings and JSON, byte for byte. On the til sample, with
the cases that derive something from several files (a superseding record, an id
clash, a broken file, a retired record).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reliora_git.operations.lessons import reads
from reliora_git.records.errors import RelioraError
from reliora_git.storage.index import IndexState, StoreIndex, open_index
from reliora_git.storage.store import Store
from tests.conftest import OLD_MTIME, TIL_CORPUS, reliora_executable

QUERIES = ["git", "postgres index performance", "environment variable", "search and replace"]


@pytest.fixture
def sample(tmp_path: Path) -> Store:
    """A writable copy of the til sample with the cases that involve several files."""
    root = tmp_path / "til"
    shutil.copytree(TIL_CORPUS, root)
    experiences = root / ".reliora" / "experiences"
    files = sorted(experiences.rglob("*.md"))
    ids = [re.search(r"^id:\s*(\S+)", f.read_text(), re.MULTILINE).group(1) for f in files]  # type: ignore[union-attr]
    newer = re.sub(
        r"^id:.*$",
        f"id: newer-one-abcdef\nsupersedes: [{ids[4]}]",
        files[3].read_text(),
        count=1,
        flags=re.M,
    )
    (experiences / "newer-one-abcdef.md").write_text(newer)
    (experiences / "aaa-clash.md").write_text(files[9].read_text())  # claims ids[9] too
    (experiences / "broken-record-000000.md").write_text("---\nid: broken-record-000000\n---\nx\n")
    retired = re.sub(
        r"^(id:.*)$", r"\1\nstatus: retired", files[11].read_text(), count=1, flags=re.M
    )
    files[11].write_text(retired)
    for path in root.rglob("*"):  # old enough to be cached (cache.RACY_NS)
        os.utime(path, (OLD_MTIME, OLD_MTIME))
    return Store(root)


def resolved_by_scan(index: StoreIndex, typed: str) -> object:
    """What resolving ``typed`` means, by a scan of the live records in path order."""
    from reliora_git.search.near_ids import did_you_mean

    live = [doc for slot in index.slots() if (doc := index.inverted.docs[slot]) is not None]
    exact = [doc for doc in live if doc.id == typed]
    found = exact or [doc for doc in live if doc.id.startswith(typed)]
    if len(found) == 1:
        return (found[0].id, found[0].locator)
    if found:
        names = ", ".join(sorted(doc.id for doc in found))
        return ("ambiguous_id", f"id prefix {typed!r} is ambiguous; it matches {names}")
    hint = did_you_mean(typed, [doc.id for doc in live])
    return ("unknown_id", f"no experience with id {typed!r}{hint}")


def answers(index: StoreIndex) -> dict[str, object]:
    """Everything a command may ask of an index, as plain data."""
    ids = sorted(index.table.ids)
    resolved: dict[str, object] = {}
    for typed in [*ids, *{i[:n] for i in ids for n in (1, 3, 6)}, "nosuch", "zzz-unknown-id"]:
        try:
            resolved[typed] = index.identity(index.resolve(typed))
        except RelioraError as exc:
            resolved[typed] = (exc.code, exc.message)
        assert resolved[typed] == resolved_by_scan(index, typed), typed
    slots = index.slots()
    return {
        "resolved": resolved,
        "slots": [index.identity(slot) for slot in slots],
        "docs": [index.inverted.docs[slot] for slot in slots],
        "json": [index.record_json(slot) for slot in slots],
        "texts": [index.text_of(slot) for slot in slots],
        "skipped": [str(error) for error in index.skipped],
        "superseded_by": index.superseded_by,
        "feedback": index.feedback,
        "search": {
            query: [(h.doc.id, h.score, h.level) for h in index.rank(reads.Query.parse(query))]
            for query in QUERIES
        },
    }


def test_the_index_read_section_by_section_answers_as_a_full_build(sample: Store) -> None:
    built = open_index(sample, IndexState.empty(), save=False)  # every file parsed now
    assert built.built.loaded.patched
    open_index(sample).close()  # writes the index file
    read = open_index(sample)
    # Read from the file, every file as it was: nothing parsed, nothing patched.
    assert not read.built.loaded.patched and not read.built.loaded.changed
    assert read.state.table is not None
    assert read.superseded_by  # the sample's cases are there
    assert any("already used by" in str(error) for error in read.skipped)
    assert answers(read) == answers(built)


def test_list_lines_are_the_listed_records_as_json(sample: Store) -> None:
    open_index(sample).close()
    for tag in (None, "git", "GIT", "no-such-tag", ""):
        records = reads.list_records(sample, tag).records
        expected = [json.dumps(record, ensure_ascii=False) for record in records]
        lines = reads.list_lines(sample, tag)
        assert lines.lines == expected
        assert [str(e) for e in lines.skipped] == [
            str(e) for e in reads.list_records(sample).skipped
        ]
    assert any(
        json.loads(line)["status"] == "superseded" for line in reads.list_lines(sample).lines
    )


def test_one_record_commands_print_the_same_warm_cold_and_without_cache(sample: Store) -> None:
    ids = sorted(open_index(sample).table.ids)
    commands = [
        ["show", ids[5], "--json"],
        ["show", ids[4], "--json"],  # superseded
        ["show", ids[9][:8]],
        ["show", "a", "--json"],  # ambiguous
        ["show", "nosuchid", "--json"],  # unknown, with a suggestion or none
        ["show", "broken-record-000000", "--json"],
        ["list", "--json"],
        ["list", "--tag", "git", "--json"],
    ]

    def run(args: list[str], **env: str) -> tuple[int, str, str]:
        done = subprocess.run(
            [reliora_executable(), *args],
            cwd=sample.root,
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            check=False,
        )
        return done.returncode, done.stdout, done.stderr

    for args in commands:
        warm = run(args)
        assert warm == run(args, RELIORA_NO_CACHE="1"), args
        assert warm[0] in (0, 2)
