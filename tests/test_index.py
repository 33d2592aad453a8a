"""The store index: the inverted index itself, and every command reading through it.

Every command's answer must be the one a fresh parse of every file would give,
whatever state the cache is in; and a warm command parses only what changed.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from reliora_git.operations.lessons import reads as api
from reliora_git.operations.lessons import writes
from reliora_git.operations.review import check as check_op
from reliora_git.records.model import Record
from reliora_git.search.inverted import InvertedIndex, record_terms, within_distance
from reliora_git.search.rank import Hit, Query, index_record, rank
from reliora_git.storage import load, progress
from reliora_git.storage.index import LiveIndex, index_file, open_index
from reliora_git.storage.store import Store
from reliora_git.storage.watch import Watch
from tests.conftest import Cli, RecordMaker

#: An mtime well outside the racy window, so that files written by a test are cached.
OLD = 1_700_000_000_000_000_000


def age(store: Store) -> None:
    for path in store.path.rglob("*.md"):
        os.utime(path, ns=(OLD, OLD))


def built(*records: Record) -> InvertedIndex:
    docs = [index_record(r) for r in records]
    return InvertedIndex.empty().extended((doc, record_terms(doc.text)) for doc in docs)


def rec(record_id: str, title: str, **fields: object) -> Record:
    return Record(id=record_id, title=title, locator=f"x/{record_id}.md", **fields)  # type: ignore[arg-type]


# --- the inverted index, pure --------------------------------------------------------------


def test_terms_are_sorted_and_prefixes_match_in_both_directions() -> None:
    index = built(
        rec("a", "Timeouts everywhere", tags=["config"]),
        rec("b", "A timeout", problems=["configuration drift"]),
        rec("c", "Time and tests", solution="testing"),
    )
    assert index.terms == sorted(set(index.terms))
    term_sets = {t: {index.terms[i] for i in index.matching_terms(t)} for t in ("timeout",)}
    assert term_sets["timeout"] == {"timeout", "timeouts"}
    # A query token longer than a record token that prefixes it (≥ 5 characters).
    assert {index.terms[i] for i in index.matching_terms("configurations")} == {
        "config",
        "configuration",
    }
    # Below five characters only the exact token matches: `test` is not `testing`.
    assert {index.terms[i] for i in index.matching_terms("test")} == set()
    assert {index.terms[i] for i in index.matching_terms("time")} == {"time"}


def test_postings_say_which_components_hold_a_token() -> None:
    index = built(rec("a", "Cache rules", tags=["cache"], problems=["stale cache"]))
    (mask,) = index.masks("cache").values()
    # tags (bit 0), title (bit 1), problems (bit 2)
    assert mask == 0b111
    assert index.document_frequency("cache") == 1
    assert index.document_frequency("caches") == 1  # the §4 rule: `cache` is a prefix
    assert index.document_frequency("nothing") == 0


def summary(hits: list[Hit]) -> list[tuple[object, ...]]:
    return [(h.doc.id, h.score, h.level, h.matched_tokens, h.breakdown) for h in hits]


def test_dead_slots_are_ignored_and_compaction_keeps_every_result() -> None:
    records = [
        rec(f"r{n}", f"Timeout number {n}", tags=["ci"] if n % 2 else ["pytest"]) for n in range(6)
    ]
    index = built(*records)
    index.drop([1, 4])
    query = Query.parse("timeout pytest")
    live = [index_record(r) for n, r in enumerate(records) if n not in (1, 4)]
    expected = summary(rank(live, query))
    assert len(expected) == 4
    texts = {slot: index_record(r).text for slot, r in enumerate(records)}
    assert summary(index.rank(query, texts.__getitem__)) == expected
    compacted, renumber = index.compacted()
    assert renumber == [0, -1, 1, 2, -1, 3]
    new_texts = {renumber[s]: t for s, t in texts.items() if renumber[s] >= 0}
    assert summary(compacted.rank(query, new_texts.__getitem__)) == expected
    assert index.document_frequency("pytest") == compacted.document_frequency("pytest") == 2


def test_suggestions_are_close_frequent_live_and_never_stop_words() -> None:
    index = built(
        rec("a", "Token refresh", tags=["token"]),
        rec("b", "Tokens again", problems=["token expiry"]),
        rec("c", "Tone over"),
        rec("d", "The other"),
    )
    # Most frequent first (`token` is in two records), then alphabetical.
    assert index.suggestions("tokne") == ["token", "tokens", "tone"]
    assert index.suggestions("tokenz") == ["token", "tokens"]
    assert index.suggestions("thr") == []  # `the` is a stop word
    assert index.suggestions("xyzzy") == []
    index.drop([2])
    assert index.suggestions("tokne") == ["token", "tokens"]


def test_edit_distance_limit() -> None:
    assert within_distance("token", "tokne", 2)
    assert not within_distance("token", "tokne", 1)
    assert within_distance("abc", "abd", 1)
    assert not within_distance("abcdef", "uvwxyz", 2)


# --- every command through the index --------------------------------------------------------


@pytest.fixture
def filled(store: Store, write_record: RecordMaker) -> Store:
    write_record("flaky-a", "Flaky pytest timeouts", tags=["pytest"], created="2026-01-02")
    write_record("cache-b", "Cache invalidation rules", tags=["cache"], created="2026-01-03")
    write_record("old-c", "Old timeouts advice", status="retired", created="2026-01-01")
    (store.experiences / "broken.md").write_text("---\nid: [\n---\n")
    events = store.feedback / "flaky-a"
    events.mkdir(parents=True)
    (events / "20261202T120000Z-aaaaaa.md").write_text(
        "---\nrecord: flaky-a\noutcome: success\nat: '2026-12-02T12:00:00Z'\n---\nworked on 3.12\n"
    )
    age(store)
    return store


class Reads:
    """Which store files a command read (every parse goes through load.read_text)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.locators: list[str] = []
        real = load.read_text

        def spy(entry: object) -> str:
            self.locators.append(entry.locator)  # type: ignore[attr-defined]
            return real(entry)  # type: ignore[arg-type]

        monkeypatch.setattr(load, "read_text", spy)


def commands(store: Store) -> dict[str, object]:
    """Every read-only command's answer, as plain data."""
    search = api.search(store, "timeouts", include_retired=True)
    shown = api.show(store, "flaky")
    return {
        "search": [(h.doc.id, h.score, h.level) for h in search.hits],
        "skipped": [str(e) for e in search.skipped],
        "show": (shown.record.title, shown.feedback, [e.note for e in shown.events]),
        "list": [r["id"] for r in api.list_records(store).records],
        "list-tag": [r["id"] for r in api.list_records(store, "PYTEST").records],
        "check": [
            (f.locator, [p.message for p in f.problems]) for f in check_op.check(store).files
        ],
    }


def test_every_command_answers_the_same_cold_warm_and_without_cache(
    filled: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = commands(filled)
    assert cold["list"] == ["cache-b", "flaky-a", "old-c"]  # newest first
    assert cold["show"][2] == ["worked on 3.12"]  # type: ignore[index]
    [(broken, [message])] = cold["check"]  # type: ignore[misc]
    assert broken == ".reliora/experiences/broken.md"
    assert message.startswith("front matter is not valid YAML")
    reads = Reads(monkeypatch)
    assert commands(filled) == cold
    # Warm: the broken file is read again (errors are cheap), the rest only where needed.
    assert ".reliora/experiences/cache-b.md" not in reads.locators
    with monkeypatch.context() as patch:
        patch.setenv("RELIORA_NO_CACHE", "1")
        assert commands(filled) == cold


def test_a_warm_show_parses_only_its_own_files(
    filled: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    (filled.experiences / "broken.md").unlink()
    api.search(filled, "timeouts")  # fills the cache
    reads = Reads(monkeypatch)
    parsed: list[str] = []
    real_parse = api.__dict__["_read_file"]

    def spy(store: Store, locator: str) -> str:
        parsed.append(locator)
        return str(real_parse(store, locator))

    monkeypatch.setattr(api, "_read_file", spy)
    shown = api.show(filled, "flaky")
    assert shown.record.id == "flaky-a"
    assert reads.locators == []  # nothing parsed through the index
    assert parsed == [
        ".reliora/experiences/flaky-a.md",
        ".reliora/feedback/flaky-a/20261202T120000Z-aaaaaa.md",
    ]
    writes.feedback(filled, "cache", "partial", "half")
    check_op.check(filled)
    api.list_records(filled)
    # Only the new event, too young to cache (see cache.RACY_NS), is read again.
    assert set(reads.locators) == {next(p for p in _events(filled) if "cache-b" in p)}


def _events(store: Store) -> list[str]:
    return [store.locator(p) for p in sorted(store.feedback.rglob("*.md"))]


def test_edits_adds_deletes_and_renames_are_seen_by_every_command(
    filled: Store, write_record: RecordMaker
) -> None:
    commands(filled)
    write_record("new-d", "Timeouts in new places", tags=["pytest"], created="2026-02-01")
    (filled.experiences / "cache-b.md").rename(filled.experiences / "moved.md")
    path = filled.experiences / "flaky-a.md"
    # Same size, same second: the racy rule keeps this edit from hiding behind the cache.
    path.write_text(path.read_text().replace("Flaky pytest", "Flaky pytesT"))
    (filled.experiences / "old-c.md").unlink()
    after = commands(filled)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RELIORA_NO_CACHE", "1")
        assert commands(filled) == after
    assert after["list"] == ["new-d", "cache-b", "flaky-a"]
    assert after["show"][0] == "Flaky pytesT timeouts"  # type: ignore[index]


def test_lost_or_damaged_segments_only_cost_speed(filled: Store) -> None:
    expected = commands(filled)
    path = index_file(filled.root.resolve())
    assert path is not None
    segments = sorted(path.parent.glob(path.name + ".*.seg"))
    assert segments
    segments[0].write_bytes(segments[0].read_bytes()[::-1])
    assert commands(filled) == expected
    for segment in path.parent.glob(path.name + ".*.seg"):
        segment.unlink()
    assert commands(filled) == expected


def test_a_long_running_index_sees_every_edit(filled: Store, write_record: RecordMaker) -> None:
    live = LiveIndex()
    with live.open(filled) as index:
        assert [h.doc.id for h in api.search(filled, "timeouts", index=index).hits] == ["flaky-a"]
    write_record("new-d", "More timeouts", tags=["pytest"])
    (filled.experiences / "flaky-a.md").unlink()
    with live.open(filled) as index:
        assert [h.doc.id for h in api.search(filled, "timeouts", index=index).hits] == ["new-d"]
        assert api.show(filled, "new", index).record.title == "More timeouts"


def test_the_index_is_compacted_when_many_records_changed(
    store: Store, write_record: RecordMaker
) -> None:
    for n in range(8):
        write_record(f"r{n}", f"Timeout {n}")
    age(store)
    first = open_index(store)
    assert len(first.state.inverted.docs) == 8
    for n in range(4):
        write_record(f"r{n}", f"Timeout {n} rewritten")
    age(store)
    again = open_index(store)
    assert len(again.state.inverted.docs) == 8  # four dead slots dropped, four new ones
    assert [h.doc.title for h in api.search(store, "rewritten").hits] == [
        f"Timeout {n} rewritten" for n in range(4)
    ]


# --- the CLI ------------------------------------------------------------------------------


def test_did_you_mean_in_text_and_json(filled: Store, cli: Cli) -> None:
    document = cli.json("search", "timeuts pytest")
    assert document["suggestions"] == {"timeuts": ["timeouts"]}
    assert [r["id"] for r in document["results"]] == ["flaky-a"]
    assert "suggestions" not in cli.json("search", "timeouts")
    done = cli("search", "timeuts")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "did you mean: timeuts → timeouts?"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_on_a_terminal_only(
    filled: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress, "PROGRESS_MIN", 1)
    monkeypatch.setenv("RELIORA_NO_CACHE", "1")
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    api.search(filled, "timeouts")
    assert "reading records" in terminal.getvalue()
    assert "4/4" in terminal.getvalue()
    monkeypatch.setenv("RELIORA_NO_PROGRESS", "1")
    quiet = FakeTerminal()
    monkeypatch.setattr("sys.stderr", quiet)
    api.search(filled, "timeouts")
    assert quiet.getvalue() == ""
    assert capsys.readouterr().out == ""


def test_cli_commands_read_through_the_cache(filled: Store, cli: Cli, repo: Path) -> None:
    for args in (["list"], ["show", "flaky"], ["check"], ["search", "timeouts"]):
        warm = cli(*args, "--json")
        cold = cli(*args, "--json", env={"RELIORA_NO_CACHE": "1"})
        assert (warm.returncode, warm.stdout, warm.stderr) == (
            cold.returncode,
            cold.stdout,
            cold.stderr,
        ), args
        json.loads(warm.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_watch_reports_every_kind_of_change(store: Store, write_record: RecordMaker) -> None:
    (store.experiences / "sub").mkdir()
    path = write_record("a", "Timeouts")
    changes = [
        lambda: path.write_text(path.read_text() + "\n"),
        lambda: os.utime(path, ns=(OLD, OLD)),
        lambda: write_record("b", "New"),
        lambda: (store.experiences / "b.md").rename(store.experiences / "sub" / "b.md"),
        lambda: (store.experiences / "sub" / "b.md").write_text("x"),
        lambda: (store.experiences / "sub" / "b.md").unlink(),
        lambda: (store.feedback / "a").mkdir(parents=True),
    ]
    for change in changes:
        watch = Watch([store.path])
        assert watch.quiet() and watch.quiet()
        change()
        assert not watch.quiet()
        assert not watch.quiet()  # stays unquiet: the walk it asks for has not happened yet
        watch.close()


def test_a_long_running_index_walks_again_only_after_a_change(
    filled: Store, write_record: RecordMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = LiveIndex()
    first = live.open(filled)
    if sys.platform.startswith("linux"):
        assert live.open(filled) is first  # nothing changed: not even walked
    write_record("new-d", "More timeouts", tags=["pytest"])
    second = live.open(filled)
    assert second is not first
    assert "new-d" in {doc.id for doc in second.docs()}
    live.close()
    monkeypatch.setenv("RELIORA_NO_WATCH", "1")
    unwatched = LiveIndex()
    third = unwatched.open(filled)
    assert unwatched.open(filled) is not third  # without a watch, every call walks
