"""Fuzzing the parser and the checker: only the project's own errors may come out."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliora_git.interfaces.output import clean, one_line
from reliora_git.operations.lessons import reads
from reliora_git.operations.review import check as check_op
from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.feedback import parse_event
from reliora_git.records.parse import FieldNotWritable, parse_record, render_record
from reliora_git.storage.catalog import load_catalog, read_entry
from reliora_git.storage.store import Store, decode_utf8
from reliora_git.storage.template import init_store

FAST = settings(max_examples=150, deadline=None)

# --- YAML-ish and Markdown-ish text ----------------------------------------------------------

_KEYS = st.sampled_from(
    [
        "id",
        "title",
        "tags",
        "project_context",
        "confidence",
        "created",
        "updated",
        "author",
        "status",
        "supersedes",
        "paths",
        "record",
        "outcome",
        "at",
        "extra",
        "a",
        "b",
    ]
)
_SCALARS = st.one_of(
    st.sampled_from(
        [
            "42",
            "0123",
            "4.2",
            "yes",
            "no",
            "null",
            "~",
            "2026-12-02",
            "2026-13-45",
            "2026-12-02T15:45:00Z",
            "!!int abc",
            "!!float x",
            "!!binary ###",
            "!!timestamp q",
            "!!python/object/apply:os.system ['true']",
            "!!set {a, b}",
            "'quoted'",
            '"\\e[31m"',
            '"\\u202e"',
            "&x value",
            "*x",
            "*missing",
            "|",
            ">",
            "'",
            '"',
            "[",
            "{",
            "- a",
            "ok",
            "high",
            "active",
            "retired",
            "success",
            "flaky-pytest-3f9a1c",
            "../../x",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
)


def _value(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _SCALARS
    inner = _value(depth - 1)
    return st.one_of(
        _SCALARS,
        st.lists(inner, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(_KEYS, inner), max_size=3).map(
            lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        ),
        st.tuples(st.sampled_from(["&a ", "&b ", ""]), inner).map("".join),
    )


_FRONT = st.lists(st.tuples(_KEYS, _value(2)).map(lambda kv: f"{kv[0]}: {kv[1]}"), max_size=8).map(
    "\n".join
)
_BODY_LINES = st.one_of(
    st.sampled_from(
        [
            "## Task",
            "## Problems",
            "## Solution",
            "## Why it worked",
            "## Failed attempts",
            "## Warnings",
            "## Applicability",
            "## Verification",
            "## Other",
            "##",
            "## #",
            "```",
            "~~~",
            "- item",
            "* item",
            "  continued",
            "<<<<<<< HEAD",
            "=======",
            ">>>>>>> x",
            "|||||||",
            "---",
            "",
            "\t",
            "\r",
            "\x00",
            "\x1b[2J",
            "\u202e",
        ]
    ),
    st.text(max_size=30),
)
_BODY = st.lists(_BODY_LINES, max_size=20).map("\n".join)
_PREFIX = st.sampled_from(["---\n", "\ufeff---\n", "---\r\n", "", "--- \n", "----\n"])
_CLOSE = st.sampled_from(["\n---\n", "\n---", "\r\n---\r\n", "\n", "\n...\n", "\n--- x\n"])
_DOCUMENTS = st.tuples(_PREFIX, _FRONT, _CLOSE, _BODY).map("".join)


def _parse_or_record_error(text: str) -> None:
    try:
        parsed = parse_record(text, "fuzz.md")
    except RecordError as exc:
        assert exc.path == "fuzz.md"
        assert exc.message
        return
    # Whatever parsed can be validated, rendered and shown without an exception, except
    # that a render which would not read back the same (a field that opens a code fence
    # and never closes it, before another section) is refused with a message naming it.
    entry = read_entry("fuzz.md", text)
    assert entry.record is not None
    try:
        render_record(parsed.record)
    except FieldNotWritable as exc:
        assert exc.field and exc.message.startswith(f"the field {exc.field} ")
    one_line(parsed.record.title)
    for value in (parsed.record.task, parsed.record.solution, *parsed.record.problems):
        assert "\x1b" not in clean(value)


@FAST
@given(st.binary(max_size=600))
def test_random_bytes(data: bytes) -> None:
    try:
        text = decode_utf8(data, "fuzz.md")
    except RecordError:
        return
    _parse_or_record_error(text)


@FAST
@given(st.text(max_size=400))
def test_random_text(text: str) -> None:
    _parse_or_record_error(text)
    _parse_or_record_error("---\n" + text)


@settings(max_examples=300, deadline=None)
@given(_DOCUMENTS)
def test_random_yaml_and_markdown(text: str) -> None:
    _parse_or_record_error(text)


@FAST
@given(_DOCUMENTS)
def test_random_feedback_events(text: str) -> None:
    try:
        event = parse_event(text, "feedback.md")
    except RecordError:
        return
    assert event.record and event.outcome


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("fuzz-store")
    store, _ = init_store(root)
    (store.experiences / "good.md").write_text(
        "---\nid: good\ntitle: A good record\n---\n## Task\nsearch\n## Solution\nfound\n",
        encoding="utf-8",
    )
    return store


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.one_of(_DOCUMENTS.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary()))
def test_search_and_check_survive_any_file(fuzz_store: Store, data: bytes) -> None:
    path: Path = fuzz_store.experiences / "fuzzed.md"
    path.write_bytes(data)
    try:
        result = reads.search(fuzz_store, "search found")
        assert "good" in [hit.doc.id for hit in result.hits]
        report = check_op.check(fuzz_store)
        assert report.checked == 2
        assert len(load_catalog(fuzz_store).entries) == 2
    except RelioraError as exc:  # pragma: no cover - the test fails with the message
        pytest.fail(f"search or check raised for a single bad file: {exc}")


_UNSAFE_ON_A_TERMINAL = ("\x1b", "\x07", "\x9b", "\x00", "\u202e", "\u2066", "\u200f", "\x7f")


_HOSTILE_TEXT = st.text(
    st.one_of(st.sampled_from(_UNSAFE_ON_A_TERMINAL), st.characters(codec="utf-8")),
    min_size=1,
    max_size=30,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(_HOSTILE_TEXT, st.lists(_HOSTILE_TEXT, max_size=3)), min_size=1, max_size=3),
    st.text(min_size=1, max_size=20),
)
def test_human_output_of_any_record_text_is_terminal_safe(
    tmp_path_factory: pytest.TempPathFactory, records: list[tuple[str, list[str]]], query: str
) -> None:
    import io
    import json

    from reliora_git.interfaces.output import Printer

    store, _ = init_store(tmp_path_factory.mktemp("output"))
    for n, (title, tags) in enumerate(records):
        (store.experiences / f"r{n}.md").write_text(
            f"---\nid: r{n}\ntitle: {json.dumps(title)}\ntags: {json.dumps(tags)}\n---\n"
            f"## Problems\n- {title}\n\n## Solution\n{' '.join(tags)} {title}\n",
            encoding="utf-8",
            errors="surrogatepass",
        )
    out, err = io.StringIO(), io.StringIO()
    printer = Printer(out, err)
    try:
        result = reads.search(store, query)
        printer.search(result, 10)
        printer.skipped(result.skipped)
    except RelioraError as exc:
        assert exc.code == "empty_query"
    listed = reads.list_records(store).records
    printer.listing(listed)
    for record in listed:
        shown = reads.show(store, record["id"])
        printer.record(shown.record, shown.feedback)
    printer.check(check_op.check(store, [str(store.experiences / "r0.md")]))
    for text in (out.getvalue(), err.getvalue()):
        for bad in _UNSAFE_ON_A_TERMINAL:
            assert bad not in text
