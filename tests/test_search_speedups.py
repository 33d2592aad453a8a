"""The speed-ups change no result: on the til corpus, and against independent implementations.

* the cached search index (index.py) against the catalog of fully parsed records;
* the prefilter in rank.py against scoring every record with the plain matching rule;
* the fast start path of `reliora search` against Typer, and its option table against
  the Typer declaration.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliora_git.interfaces.commands import searching
from reliora_git.interfaces.output import print_json
from reliora_git.records.model import Record
from reliora_git.records.summary import summary_of
from reliora_git.search import rank as rank_module
from reliora_git.search.jsonio import record_to_json, search_document
from reliora_git.search.rank import (
    ContextFilter,
    IndexedRecord,
    Query,
    index_record,
    matched_terms,
    rank,
)
from reliora_git.search.tokens import token_matches, tokenize
from reliora_git.storage import parallel
from reliora_git.storage.catalog import Catalog, load_catalog
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker

TIL_QUERIES: tuple[tuple[str, str | None], ...] = (
    ("migration", None),
    ("postgres index performance", None),
    ("environment variable", None),
    ("search and replace", "vim"),
    ("git rebase", "git"),
    ("timeouts", None),
    ("configuration files", "unix"),
    ("react hooks state", None),
)


def catalog_document(catalog: Catalog, text: str, context: str | None, limit: int) -> str:
    """The `search --json` document as the code before the cache built it: full catalog."""
    query = Query.parse(text)
    ctx = ContextFilter.parse(context) if context else None
    hits = rank(catalog.indexed(), query, feedback=catalog.feedback(), context=ctx)
    # Each shown result's summary, straight from its parsed record (records/summary.py).
    records = {record.id: record for record in catalog.records}
    summaries = {hit.doc.id: summary_of(record_to_json(records[hit.doc.id])) for hit in hits}
    out = io.StringIO()
    with redirect_stdout(out):
        # No record of the corpus names code paths: every freshness is unknown.
        terms = {hit.doc.id: matched_terms(hit.doc.text, hit.matched_tokens) for hit in hits}
        print_json(
            search_document(
                query, ctx, hits, limit, freshness={}, summaries=summaries, matched_terms=terms
            )
        )
    return out.getvalue()


def test_til_search_json_is_byte_identical_to_a_cache_free_catalog_run(
    til_corpus: Path, tmp_path: Path
) -> None:
    cli = Cli(tmp_path)
    env = {"RELIORA_CACHE_DIR": str(tmp_path / "cache")}
    catalog = load_catalog(Store(til_corpus))
    for n, (text, context) in enumerate(TIL_QUERIES):
        args = ["search", text, "--json", "--limit", "25", "--repo", str(til_corpus)]
        if context:
            args += ["--project-context", context]
        expected = catalog_document(catalog, text, context, 25)
        assert json.loads(expected)["total"] > 0, text
        for _ in range(2):  # the first run fills the cache, the second reads it
            done = cli(*args, env=env)
            assert done.returncode == 0, done.stderr
            assert done.stdout == expected, (text, context)
        if n < 2:  # the cache turned off, as well (slow: every record parsed)
            cold = cli(*args, env={"RELIORA_NO_CACHE": "1"})
            assert cold.stdout == expected


def full_docs(index: StoreIndex) -> list[IndexedRecord]:
    """The index's usable records in path order, each with its text (from a segment or parsed)."""
    return [index.full_doc(slot) for slot in index.slots()]


def test_index_gives_what_the_catalog_gives(store: Store, write_record: RecordMaker) -> None:
    write_record("a-one", "Timeouts in pytest", tags=["pytest"])
    write_record("b-two", "Retired advice", status="retired")
    write_record("c-clash", "Same id as a", body="## Task\nx\n\n## Solution\ny\n")
    (store.experiences / "c-clash.md").write_text(
        (store.experiences / "c-clash.md").read_text().replace("id: c-clash", "id: a-one")
    )
    (store.experiences / "d-broken.md").write_text("---\nid: [\n---\n")
    (store.experiences / "e-invalid.md").write_text("---\nid: e-invalid\ntitle: t\n---\n")
    (store.feedback / "a-one").mkdir()
    (store.feedback / "a-one" / "x.md").write_text(
        "---\nrecord: a-one\noutcome: partial\nat: now\n---\n"
    )
    (store.feedback / "a-one" / "bad.md").write_text("---\nrecord: a-one\noutcome: meh\n---\n")
    for path in store.path.rglob("*.md"):  # old enough to be cached (see cache.RACY_NS)
        os.utime(path, (1_700_000_000, 1_700_000_000))
    catalog = load_catalog(store)
    for _ in range(2):  # parsed, then from the cache
        index = open_index(store)
        assert full_docs(index) == catalog.indexed()
        assert index.feedback == catalog.feedback()
        assert [str(e) for e in index.skipped] == [str(e) for e in catalog.skipped()]
        assert len(index.skipped) == 3


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_parsing_in_worker_processes_gives_the_serial_result(
    store: Store, write_record: RecordMaker, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for n in range(12):
        write_record(f"rec-{n:02d}", f"Record number {n} about timeouts", tags=["pytest"])
    (store.experiences / "broken.md").write_text("---\nid: [\n---\n")
    (store.experiences / "invalid.md").write_text("---\nid: invalid\ntitle: t\n---\n")
    (store.feedback / "rec-01").mkdir()
    (store.feedback / "rec-01" / "x.md").write_text(
        "---\nrecord: rec-01\noutcome: success\nat: now\n---\n"
    )
    for path in store.path.rglob("*.md"):  # old enough to be cached (see cache.RACY_NS)
        os.utime(path, (1_700_000_000, 1_700_000_000))
    monkeypatch.setenv("RELIORA_CACHE_DIR", str(tmp_path / "serial"))
    serial = open_index(store)
    monkeypatch.setattr(parallel, "PARALLEL_MIN", 1)
    monkeypatch.setattr(parallel, "PER_WORKER_MIN", 1)
    monkeypatch.setattr(parallel, "BATCH", 5)  # several rounds, each split between workers
    monkeypatch.setenv("RELIORA_JOBS", "3")
    monkeypatch.setenv("RELIORA_CACHE_DIR", str(tmp_path / "forked"))
    assert parallel.worker_count(14) == 3  # fork is there and this process has one thread
    forked = open_index(store)
    assert full_docs(forked) == full_docs(serial) == load_catalog(store).indexed()
    assert forked.inverted.terms == serial.inverted.terms
    assert forked.inverted.postings == serial.inverted.postings
    assert forked.feedback == serial.feedback
    assert [str(e) for e in forked.skipped] == [str(e) for e in serial.skipped]
    assert len(forked.skipped) == 2

    # As small a cache: values from workers share their strings as local ones do (marshal
    # writes a shared string once). The bytes differ only where reference counts do.
    def sizes(folder: Path) -> list[int]:  # segment names are random, their sizes are not
        return sorted(path.stat().st_size for path in folder.iterdir())

    assert sizes(tmp_path / "forked") == sizes(tmp_path / "serial")


# --- the prefilter, against the matching rule applied token by token ---------------------

WORDS = ["time", "timeout", "timeouts", "timer", "cache", "caches", "cached", "git", "tests"]
texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


def naive_fields(record: Record) -> list[list[str]]:
    """The text pieces of each scoring component, in FIELDS order (SPEC.md §5)."""
    return [
        record.tags,
        [record.title],
        record.problems,
        [record.task],
        [record.solution, record.why_it_worked],
        [record.project_context],
        [record.applicability],
        record.failed_attempts,
        record.warnings,
    ]


def naive_counts(record: Record, query: Query) -> list[set[str]]:
    """For each component, the query tokens matching one of its tokens (SPEC.md §4)."""
    counts = []
    for pieces in naive_fields(record):
        tokens = {t for piece in pieces for t in tokenize(piece)}
        counts.append(
            {q.text for q in query.tokens if any(token_matches(q.text, t) for t in tokens)}
        )
    return counts


def naive_matches(record: Record, query: Query) -> set[str]:
    return set().union(*naive_counts(record, query))


records_of_words = st.lists(
    st.builds(
        Record,
        title=texts,
        tags=st.lists(st.sampled_from(WORDS), max_size=3),
        problems=st.lists(texts, max_size=2),
        solution=texts,
        warnings=st.lists(texts, max_size=2),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(
    records=records_of_words,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    chunk=st.sampled_from([1, 2, 5, 4096]),
)
def test_prefilter_keeps_exactly_the_records_that_match(
    records: list[Record], query: str, chunk: int
) -> None:
    for i, record in enumerate(records):
        record.id = f"r{i}"
    docs = [index_record(r) for r in records]
    parsed = Query.parse(query)
    original_chunk = rank_module.PREFILTER_CHUNK
    rank_module.PREFILTER_CHUNK = chunk
    try:
        hits = {hit.doc.id: hit for hit in rank(docs, parsed)}
    finally:
        rank_module.PREFILTER_CHUNK = original_chunk
    for record, doc in zip(records, docs, strict=True):
        matched = naive_matches(record, parsed)
        assert (doc.id in hits) == bool(matched)
        if matched:
            hit = hits[doc.id]
            assert set(hit.matched_tokens) == matched
            assert hit == rank_module.score_record(doc, parsed)
            multiplier = hit.breakdown["coverageMultiplier"]
            for name, weight, found in zip(
                rank_module.FIELDS, rank_module._WEIGHTS, naive_counts(record, parsed), strict=True
            ):
                assert hit.breakdown[name] == weight * len(found) * multiplier, name


@settings(max_examples=150, deadline=None)
@given(
    records=records_of_words,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(" ".join),
    min_count=st.integers(min_value=1, max_value=10),
    chunk=st.sampled_from([1, 3, 4096]),
)
def test_pruned_prefilter_keeps_exactly_the_records_with_enough_tokens(
    records: list[Record], query: str, min_count: int, chunk: int
) -> None:
    docs = [index_record(r) for r in records]
    tokens = Query.parse(query).tokens
    original_chunk = rank_module.PREFILTER_CHUNK
    rank_module.PREFILTER_CHUNK = chunk
    try:
        pruned = rank_module.present_tokens(docs, tokens, min_count)
    finally:
        rank_module.PREFILTER_CHUNK = original_chunk
    expected = {
        i: {t.text for t in tokens if t.text in naive_matches(record, Query(query, tokens, None))}
        for i, record in enumerate(records)
    }
    assert {i: {t.text for t in found} for i, found in pruned.items()} == {
        i: found for i, found in expected.items() if len(found) >= min_count
    }


@pytest.mark.parametrize("min_level", ["strong", "moderate"])
def test_min_level_ranks_as_filtering_every_result(til_corpus: Path, min_level: str) -> None:
    """Skipping records below a level's coverage unscored drops no result of that level."""
    docs = load_catalog(Store(til_corpus)).indexed()
    found = 0
    for text in (
        "git rebase interactive",
        "postgres index performance query plan explain analyze slow",
        "vim search and replace across files with regex",
    ):
        query = Query.parse(text)
        every = [hit for hit in rank(docs, query) if hit.level in ("strong", min_level)]
        assert rank(docs, query, min_level=min_level) == every
        found += len(every)
    assert found > 0


# --- the fast start path of `reliora search` ---------------------------------------------


def test_fast_option_table_matches_the_typer_declaration() -> None:
    import typer.main

    from reliora_git.interfaces.cli import app

    command = typer.main.get_command(app).commands["search"]  # type: ignore[attr-defined]
    declared: dict[str, tuple[str, bool]] = {}
    positional = []
    for param in command.params:
        if not param.opts[0].startswith("-"):
            positional.append(param.name)
            continue
        assert not param.secondary_opts, param.opts
        for spelling in param.opts:
            declared[spelling] = (param.name, not param.is_flag)
    declared.pop("-h", None)
    declared.pop("--help", None)
    assert declared == searching.SEARCH_OPTIONS
    assert positional == ["query"]


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h"],
        ["q", "-n5"],
        ["q", "--limit", "0"],
        ["q", "--limit", "+5"],
        ["q", "--limit"],
        ["q", "--limit", "--json"],
        ["a", "b"],
        [],
        ["q", "--", "x"],
        ["q", "--json", "--json"],
        ["q", "--json=1"],
        ["q", "--unknown"],
        ["q", "--no-json"],
        ["q", "--repo", ""],
    ],
)
def test_fast_path_leaves_unusual_argv_to_typer(args: list[str]) -> None:
    assert searching.parse_search_argv(args) is None


def test_fast_path_reads_plain_argv() -> None:
    assert searching.parse_search_argv(
        ["flaky ci", "-p", "python", "--limit=3", "--json", "--repo", "r", "--include-retired"]
    ) == {
        "query": "flaky ci",
        "project_context": "python",
        "limit": 3,
        "json_output": True,
        "repo": Path("r"),
        "include_retired": True,
    }


@pytest.mark.parametrize(
    "args",
    [
        ["timeouts"],
        ["timeouts", "--json"],
        ["flaky timeouts", "--json", "-p", "python", "--limit", "1"],
        ["timeouts", "--project-context=ruby", "--json"],
        ["timeouts", "--min-level", "strong", "--json"],
        ["timeouts", "--min-level", "bogus"],
        ["timeouts", "--min-level", "bogus", "--json"],
        ["the of and", "--json"],
        ["timeouts", "--include-retired", "-n", "5"],
        ["timeouts", "--repo", "/nonexistent/store", "--json"],
        ["--limit", "2", "timeouts"],
    ],
)
def test_fast_path_and_typer_print_the_same(
    store: Store, write_record: RecordMaker, cli: Cli, args: list[str]
) -> None:
    write_record("flaky-a", "Flaky pytest timeouts", tags=["pytest"], project_context="python")
    write_record("old-b", "Old timeouts", status="retired")
    (store.experiences / "broken.md").write_text("---\nid: [\n---\n")
    fast = cli("search", *args)
    typer_path = cli("search", *args, env={"RELIORA_FAST_CLI": "0"})
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        typer_path.returncode,
        typer_path.stdout,
        typer_path.stderr,
    )


def test_a_cached_search_imports_no_typer_yaml_or_gitpython(
    store: Store, write_record: RecordMaker, repo: Path
) -> None:
    path = write_record("flaky-a", "Flaky pytest timeouts")
    os.utime(path, ns=(1_700_000_000_000_000_000,) * 2)  # old enough to be cached
    code = (
        "import sys\n"
        "from reliora_git.interfaces.commands.searching import fast_main\n"
        f"fast_main(['search', 'timeouts', '--json', '--repo', {str(repo)!r}])\n"
        "heavy = {'typer', 'click', 'yaml', 'frontmatter', 'git', 'rich', 'pydantic',\n"
        "         'detect_secrets', 'difflib', 'reliora_git.search.duplicates'}\n"
        "names = set(sys.modules) | {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(heavy & names))\n"
    )
    found = []
    # The first run parses the record (PyYAML) and scans it for secrets; the second reads
    # the cache.
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True
        )
        assert "flaky-a" in done.stdout
        found.append(done.stdout.strip().splitlines()[-1])
    assert found == ["['frontmatter', 'yaml']", "[]"]


def test_the_collector_runs_again_once_the_command_starts(
    store: Store, write_record: RecordMaker, repo: Path
) -> None:
    """``__main__`` pauses the garbage collector while a command's modules load, and only
    then: the command itself runs with it on."""
    write_record("flaky-a", "Flaky pytest timeouts")
    code = (
        "import gc, sys\n"
        "import reliora_git.interfaces.commands.searching as searching\n"
        "from reliora_git.__main__ import main\n"
        "ran = searching.run_search\n"
        "def run(*args, **kwargs):\n"
        "    print('collector on:', gc.isenabled())\n"
        "    ran(*args, **kwargs)\n"
        "searching.run_search = run\n"
        "sys.argv = ['reliora', 'search', 'timeouts', '--json']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('after:', gc.isenabled())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True
    )
    assert "collector on: True" in done.stdout
    assert "flaky-a" in done.stdout
    assert done.stdout.rstrip().endswith("after: True")


@pytest.mark.parametrize(
    ("argv", "frozen"), [(["search", "timeouts"], True), (["mcp", "--help"], False)]
)
def test_what_a_command_builds_in_bulk_is_frozen_but_never_in_a_server(
    store: Store, write_record: RecordMaker, repo: Path, argv: list[str], frozen: bool
) -> None:
    """A search freezes the index it decoded (cache.paused_gc), so that later collections
    do not walk it; ``mcp`` and ``serve`` keep running, so what they build stays collectable."""
    write_record("flaky-a", "Flaky pytest timeouts")
    code = (
        "import gc, sys\n"
        "from reliora_git.__main__ import main\n"
        "from reliora_git.storage import cache\n"
        f"sys.argv = ['reliora', *{argv!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "with cache.paused_gc():\n"
        "    before = gc.get_freeze_count()\n"
        "    kept = [(i,) for i in range(1000)]\n"
        "print('froze:', gc.get_freeze_count() > before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True
    )
    assert done.stdout.rstrip().endswith(f"froze: {frozen}")
