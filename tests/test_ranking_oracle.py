"""Search, end to end, against a brute-force scorer written straight from SPEC.md §4–§5.

The oracle below shares no code with ``reliora_git``: it has its own tokenizer
(§4: NFKC, lower case, ``[^\\W_]+``), its own copy of the stop words, the §4
matching rule, and scores every record of the store token by token in exact
rational arithmetic (``fractions.Fraction``). Hypothesis writes small random
stores to disk as Markdown files in the §3 format (feedback events in the §8
format), drawn from a small vocabulary whose words are prefixes of one another,
differ in case or width, or are stop words, so that prefix matches, phrases,
ties and thresholds come up often. The product is run through its public API
(``reliora_git.operations.lessons.reads.search`` rendered by
``reliora_git.search.jsonio.search_document``)
with the cache off, then on (cold, then warm), and every result must be what
the oracle computes: ids in order, numbers, levels, matched tokens and the
whole score breakdown.

Not covered here: §11 superseding by another record's ``supersedes`` list (a
record is only ever superseded here by its own ``status``).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from reliora_git.operations.lessons.reads import search
from reliora_git.records.errors import RelioraError
from reliora_git.search.jsonio import search_document
from reliora_git.storage.store import Store
from reliora_git.storage.template import init_store

# --- the oracle: SPEC.md §4 and §5, written out again ----------------------------------------

#: SPEC.md §4, copied from the spec (not imported from reliora_git.search.stopwords).
ORACLE_STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because
    been before being below between both but by can could did do does doing down
    during each few for from further had has have having he her here hers him his
    how i if in into is it its itself just me more most my no nor not of off on
    once only or other our ours out over own same she should so some such than
    that the their theirs them then there these they this those through to too
    under until up very was we were what when where which while who whom why will
    with would you your yours
    """.split()
)
ORACLE_TOKEN = re.compile(r"[^\W_]+")

#: SPEC.md §5: component (JSON name) → weight per matching query token, in JSON order.
WEIGHTS = {
    "tags": 9,
    "title": 8,
    "problems": 7,
    "task": 5,
    "solution": 4,
    "projectContext": 4,
    "applicability": 4,
    "failedAttempts": 3,
    "warnings": 2,
}
OUTCOME_WEIGHTS = {
    "success": Fraction(1),
    "partial": Fraction(1, 2),
    "failure": Fraction(-1),
    "not-applicable": Fraction(-1, 4),
    "outdated": Fraction(-1, 2),
}
OUTCOME_JSON = {
    "success": "success",
    "partial": "partial",
    "failure": "failure",
    "not-applicable": "notApplicable",
    "outdated": "outdated",
}
PHRASE = 12
#: §5.9: the components the --project-context filter looks at.
CONTEXT_FIELDS = ("projectContext", "tags", "applicability")


def oracle_tokens(text: str) -> list[str]:
    return ORACLE_TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def oracle_query_tokens(text: str) -> list[str]:
    """Unique non-stop-word tokens in first-seen order."""
    return list(dict.fromkeys(t for t in oracle_tokens(text) if t not in ORACLE_STOP_WORDS))


def oracle_matches(q: str, t: str) -> bool:
    """§4: equal, or the shorter (at least 5 characters) is a prefix of the longer."""
    if q == t:
        return True
    short, long = (q, t) if len(q) <= len(t) else (t, q)
    return len(short) >= 5 and long.startswith(short)


def has_run(sequence: list[str], run: list[str]) -> bool:
    """``run`` occurs as consecutive whole tokens of ``sequence``."""
    n = len(run)
    return any(sequence[i : i + n] == run for i in range(len(sequence) - n + 1))


@dataclass
class Rec:
    """One generated record: what is written to its file, and what the oracle scores."""

    id: str
    title: str
    tags: list[str]
    project_context: str
    task: str
    problems: list[str]
    solution: str
    why: str
    failed: list[str]
    warnings: list[str]
    applicability: str
    status: str | None  # None: no `status:` key (active)
    confidence: str | None
    subfolder: bool
    outcomes: list[str] = field(default_factory=list)

    @property
    def locator(self) -> str:
        sub = "sub/" if self.subfolder else ""
        return f".reliora/experiences/{sub}{self.id}.md"

    def sequences(self) -> dict[str, list[list[str]]]:
        """Each component's token sequences (each list item and each tag its own)."""
        pieces = {
            "tags": self.tags,
            "title": [self.title],
            "problems": self.problems,
            "task": [self.task],
            "solution": [self.solution, self.why],
            "projectContext": [self.project_context],
            "applicability": [self.applicability],
            "failedAttempts": self.failed,
            "warnings": self.warnings,
        }
        return {name: [oracle_tokens(p) for p in texts] for name, texts in pieces.items()}


def level_of(coverage: Fraction, relevance: Fraction) -> str:
    if coverage >= Fraction(3, 4) and relevance >= 18:
        return "strong"
    if coverage >= Fraction(2, 5) and relevance >= 8:
        return "moderate"
    return "weak"


def oracle_search(
    records: list[Rec],
    text: str,
    context: str | None,
    min_level: str | None,
    include_retired: bool,
) -> list[dict[str, Any]]:
    """Every result, best first, as exact numbers (Fractions)."""
    query = oracle_query_tokens(text)
    assert query, "callers handle a query without tokens"
    sequence = oracle_tokens(text)
    context_tokens = oracle_query_tokens(context) if context else []
    allowed = {
        None: {"strong", "moderate", "weak"},
        "weak": {"strong", "moderate", "weak"},
        "moderate": {"strong", "moderate"},
        "strong": {"strong"},
    }[min_level]
    results = []
    for rec in records:
        status = rec.status or "active"
        if status in ("retired", "superseded") and not include_retired:
            continue
        seqs = rec.sequences()
        if context:
            near = [t for name in CONTEXT_FIELDS for s in seqs[name] for t in s]
            if not any(oracle_matches(c, t) for c in context_tokens for t in near):
                continue
        counts = {}
        matched: set[str] = set()
        for name, field_seqs in seqs.items():
            tokens = [t for s in field_seqs for t in s]
            hits = {q for q in query if any(oracle_matches(q, t) for t in tokens)}
            counts[name] = len(hits)
            matched |= hits
        if not matched:
            continue
        phrase = (
            PHRASE
            if len(sequence) >= 2
            and any(has_run(s, sequence) for field_seqs in seqs.values() for s in field_seqs)
            else 0
        )
        coverage = Fraction(len(matched), len(query))
        multiplier = Fraction(3, 5) + Fraction(2, 5) * coverage
        raw = {name: WEIGHTS[name] * counts[name] for name in WEIGHTS}
        relevance = (sum(raw.values()) + phrase) * multiplier
        total = sum((OUTCOME_WEIGHTS[o] for o in rec.outcomes), Fraction(0))
        adjustment = min(Fraction(5, 2), max(Fraction(-3, 2), total))
        level = level_of(coverage, relevance)
        if level not in allowed:
            continue
        breakdown = {name: raw[name] * multiplier for name in WEIGHTS}
        breakdown["exactPhrase"] = phrase * multiplier
        breakdown["coverageMultiplier"] = multiplier
        breakdown["feedback"] = adjustment
        feedback: dict[str, Any] = dict.fromkeys(OUTCOME_JSON.values(), 0)
        for outcome in rec.outcomes:
            feedback[OUTCOME_JSON[outcome]] += 1
        feedback["adjustment"] = adjustment
        results.append(
            {
                "id": rec.id,
                "title": rec.title.strip(),
                "locator": rec.locator,
                "tags": rec.tags,
                "status": status,
                "confidence": rec.confidence,
                "score": relevance + adjustment,
                "relevance": relevance,
                "coverage": coverage,
                "matchLevel": level,
                "matchedTokens": [q for q in query if q in matched],
                "feedback": feedback,
                "scoreBreakdown": breakdown,
            }
        )
    results.sort(key=lambda r: r["id"])
    results.sort(key=lambda r: (r["score"], r["relevance"]), reverse=True)
    return results


# --- random stores ---------------------------------------------------------------------------

#: Prefixes of one another (5+ characters or not), case and width variants, NFKC
#: compatibility forms (ligature, superscript, circled digit), accents, stop words.
VOCAB = [
    "time",
    "timeout",
    "timeouts",
    "TIMEOUT",
    "timer",
    "times",
    "config",
    "configs",
    "configuration",
    "Configure",
    "conf",
    "test",
    "tests",
    "testing",
    "cache",
    "caches",
    "cached",
    "cach",
    "node",
    "nodejs",
    "Node.js",
    "js",
    "git",
    "GIT",
    "déjà",
    "DÉJÀ",
    "deja",
    "Ｆｕｌｌ",
    "full",
    "fullwidth",
    "ﬁle",
    "file",
    "files",
    "x²",
    "x2",
    "①",
    "utf-8",
    "time_out",
    "naïve",
    "the",
    "and",
    "of",
    "to",
    "a",
    "out",
    "in",
]
SEPARATORS = [" ", " ", " ", ", ", ". ", "-", "/", " (", ") ", "! ", "\n"]
IDS = ["a", "a-1", "a1", "a10", "a2", "b", "b-b", "c0", "c-0", "m", "x", "x-x", "zeta", "z9"]
OUTCOMES = list(OUTCOME_WEIGHTS)


def _words(pairs: list[tuple[str, str]]) -> str:
    return "".join(sep + word for sep, word in pairs)[len(pairs[0][0]) :]


def texts(max_words: int = 6, lines: bool = True) -> st.SearchStrategy[str]:
    """1 to ``max_words`` words joined by random separators (one draw per word: fast)."""
    separators = SEPARATORS if lines else SEPARATORS[:-1]
    pairs = [(sep, word) for sep in separators for word in VOCAB]
    return st.lists(st.sampled_from(pairs), min_size=1, max_size=max_words).map(_words)


def optional_text(lines: bool = True) -> st.SearchStrategy[str]:
    return st.one_of(st.just(""), texts(lines=lines))


item_lists = st.lists(texts(lines=False), max_size=3)
short_lists = st.lists(texts(max_words=4, lines=False), max_size=2)


@st.composite
def records(draw: st.DrawFn, record_id: str) -> Rec:
    task = draw(optional_text())
    problems = draw(item_lists)
    if not task and not problems:  # §3: a record needs a Task or Problems
        problems = [draw(texts(lines=False))]
    return Rec(
        id=record_id,
        title=draw(texts(lines=False)),
        tags=draw(st.lists(texts(max_words=2, lines=False), max_size=3)),
        project_context=draw(optional_text(lines=False)),
        task=task,
        problems=problems,
        solution=draw(texts()),
        why=draw(optional_text()),
        failed=draw(short_lists),
        warnings=draw(short_lists),
        applicability=draw(optional_text()),
        status=draw(st.sampled_from([None, None, "active", "retired", "superseded"])),
        confidence=draw(st.sampled_from([None, "low", "medium", "high"])),
        subfolder=draw(st.booleans()),
        outcomes=draw(st.lists(st.sampled_from(OUTCOMES), max_size=5)),
    )


@st.composite
def stores(draw: st.DrawFn) -> list[Rec]:
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=12, unique=True))
    return [draw(records(record_id)) for record_id in ids]


QUERY_SEPARATORS = [" ", " ", " ", "  ", ", ", "? ", "-", ".", "_", "/", " & "]


@st.composite
def joined(draw: st.DrawFn, words: list[str]) -> str:
    n = len(words) - 1
    seps = draw(st.lists(st.sampled_from(QUERY_SEPARATORS), min_size=n, max_size=n))
    return "".join(s + w for s, w in zip(["", *seps], words, strict=True))


queries = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4).flatmap(joined)


@st.composite
def queries_for(draw: st.DrawFn, recs: list[Rec]) -> str:
    """Random words, or (often) a run of tokens of one component: phrases come up.

    The run is taken from all the component's sequences end to end, so it sometimes
    straddles two list items, two tags, or the solution and why it worked: no phrase.
    """
    kind = draw(st.sampled_from(["words", "words", "run", "run", "prefix"]))
    if kind == "words":
        return draw(queries)
    rec = draw(st.sampled_from(recs))
    if kind == "prefix":  # a record token cut or extended: prefixes of 4, 5, 6… characters
        tokens = [t for seqs in rec.sequences().values() for s in seqs for t in s]
        token = draw(st.sampled_from(tokens))
        cut = draw(st.integers(min(4, len(token)), len(token)))
        variant = token[:cut] + draw(st.sampled_from(["", "", "s", "ing", "uration"]))
        return draw(joined([variant, *draw(st.lists(st.sampled_from(VOCAB), max_size=2))]))
    tokens = [t for seq in draw(st.sampled_from(list(rec.sequences().values()))) for t in seq]
    if len(tokens) < 2:
        return draw(queries)
    start = draw(st.integers(0, len(tokens) - 2))
    size = draw(st.integers(2, min(4, len(tokens) - start)))
    return draw(joined(tokens[start : start + size]))


def front_matter_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # JSON is YAML


def record_file(rec: Rec) -> str:
    meta = {"id": rec.id, "title": rec.title, "tags": rec.tags}
    if rec.project_context:
        meta["project_context"] = rec.project_context
    if rec.confidence:
        meta["confidence"] = rec.confidence
    if rec.status:
        meta["status"] = rec.status
    head = "".join(f"{key}: {front_matter_value(value)}\n" for key, value in meta.items())
    body = []
    if rec.task:
        body.append(f"## Task\n{rec.task}\n")
    if rec.problems:
        body.append("## Problems\n" + "".join(f"- {p}\n" for p in rec.problems))
    body.append(f"## Solution\n{rec.solution}\n")
    if rec.why:
        body.append(f"## Why it worked\n{rec.why}\n")
    if rec.failed:
        body.append("## Failed attempts\n" + "".join(f"- {p}\n" for p in rec.failed))
    if rec.warnings:
        body.append("## Warnings\n" + "".join(f"* {p}\n" for p in rec.warnings))
    if rec.applicability:
        body.append(f"## Applicability\n{rec.applicability}\n")
    return f"---\n{head}---\n\n" + "\n".join(body)


def write_store(root: Path, recs: list[Rec]) -> Store:
    store, _ = init_store(root)
    (store.experiences / "sub").mkdir()
    n = 0
    for rec in recs:
        path = root / rec.locator
        path.write_text(record_file(rec), encoding="utf-8")
        if rec.outcomes:
            folder = store.feedback / rec.id
            folder.mkdir()
        for outcome in rec.outcomes:  # §8: <UTC stamp>-<6 hex>.md, record/outcome/at
            n += 1
            stamp = f"202612{n % 28 + 1:02d}T1545{n % 60:02d}Z"
            (folder / f"{stamp}-{n:06x}.md").write_text(
                f"---\nrecord: {rec.id}\noutcome: {outcome}\nat: '2026-12-02T15:45:00Z'\n---\n",
                encoding="utf-8",
            )
    # Old enough to be cached (a file changed within the last 2 s never is).
    for path in store.path.rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    return store


# --- running the product ---------------------------------------------------------------------


@contextmanager
def environment(**values: str | None) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def product_document(
    store: Store,
    text: str,
    context: str | None,
    min_level: str | None,
    include_retired: bool,
    limit: int | None,
) -> dict[str, Any]:
    result = search(
        store,
        text,
        project_context=context,
        min_level=min_level,
        include_retired=include_retired,
    )
    assert result.skipped == [], [str(e) for e in result.skipped]
    document = search_document(result.query, result.context, result.hits, limit)
    return json.loads(json.dumps(document))  # exactly what `search --json` prints


def close(actual: Any, expected: Fraction, what: str) -> None:
    assert isinstance(actual, (int, float)), (what, actual)
    assert abs(actual - float(expected)) <= 1e-4 + 1e-9, (what, actual, float(expected))
    # The JSON rounds to 4 decimals.
    assert actual == round(actual, 4), (what, actual)


def compare(document: dict[str, Any], expected: list[dict[str, Any]], limit: int | None) -> None:
    shown = expected if limit is None else expected[:limit]
    got = document["results"]
    assert [r["id"] for r in got] == [r["id"] for r in shown], [
        (r["id"], float(r["score"]), float(r["relevance"])) for r in expected
    ]
    assert document["total"] == len(expected)
    for rank, (actual, want) in enumerate(zip(got, shown, strict=True), start=1):
        where = f"{want['id']} (rank {rank})"
        assert actual["rank"] == rank
        for key in ("title", "locator", "tags", "status", "confidence"):
            assert actual[key] == want[key], (where, key)
        for key in ("matchLevel", "matchedTokens"):
            assert actual[key] == want[key], (where, key, actual[key], want[key])
        for key in ("score", "relevance", "coverage"):
            close(actual[key], want[key], f"{where} {key}")
        assert set(actual["scoreBreakdown"]) == set(want["scoreBreakdown"]), where
        for key, value in want["scoreBreakdown"].items():
            close(actual["scoreBreakdown"][key], value, f"{where} scoreBreakdown.{key}")
        parts = sum(v for k, v in actual["scoreBreakdown"].items() if k != "coverageMultiplier")
        assert abs(parts - actual["score"]) <= 0.001, where
        feedback = dict(actual["feedback"])
        close(feedback.pop("adjustment"), want["feedback"]["adjustment"], f"{where} feedback")
        assert feedback == {k: v for k, v in want["feedback"].items() if k != "adjustment"}


def describe(recs: list[Rec], text: str, expected: list[dict[str, Any]]) -> None:
    """What the example exercised (see `pytest --hypothesis-show-statistics`)."""
    event(f"results: {min(len(expected), 4)}{'+' if len(expected) >= 4 else ''}")
    event(f"levels: {'/'.join(sorted({r['matchLevel'] for r in expected})) or '-'}")
    event(f"phrase bonus: {any(r['scoreBreakdown']['exactPhrase'] for r in expected)}")
    event(f"feedback changes a score: {any(r['scoreBreakdown']['feedback'] for r in expected)}")
    tokens = {t for rec in recs for seqs in rec.sequences().values() for s in seqs for t in s}
    query = oracle_query_tokens(text)
    prefix = any(q != t and oracle_matches(q, t) for q in query for t in tokens)
    event(f"a prefix match in the store: {prefix}")
    scores = [r["score"] for r in expected]
    event(f"tied scores: {len(scores) != len(set(scores))}")


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Rec], str, str | None]:
    recs = draw(stores())
    context = draw(st.one_of(st.none(), st.none(), queries))
    return recs, draw(queries_for(recs)), context


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    case=cases(),
    min_level=st.sampled_from([None, None, "weak", "moderate", "strong"]),
    include_retired=st.booleans(),
    limit=st.one_of(st.none(), st.integers(min_value=1, max_value=12)),
)
def test_search_ranks_as_the_spec_says(
    case: tuple[list[Rec], str, str | None],
    min_level: str | None,
    include_retired: bool,
    limit: int | None,
) -> None:
    recs, text, context = case
    with tempfile.TemporaryDirectory(prefix="reliora-oracle-") as tmp:
        root = Path(tmp) / "work"
        root.mkdir()
        store = write_store(root, recs)
        cache = Path(tmp) / "cache"
        empty = not oracle_query_tokens(text) or (
            context is not None and not oracle_query_tokens(context)
        )
        runs = [
            {"RELIORA_NO_CACHE": "1", "RELIORA_CACHE_DIR": None},
            {"RELIORA_NO_CACHE": None, "RELIORA_CACHE_DIR": str(cache)},  # cold
            {"RELIORA_NO_CACHE": None, "RELIORA_CACHE_DIR": str(cache)},  # warm
        ]
        if empty:  # §4: a query (or context) without a searchable word is a usage error
            for run in runs[:1]:
                with environment(**run), pytest.raises(RelioraError):
                    search(store, text, project_context=context)
            return
        expected = oracle_search(recs, text, context, min_level, include_retired)
        describe(recs, text, expected)
        for n, run in enumerate(runs):
            with environment(**run):
                document = product_document(store, text, context, min_level, include_retired, limit)
            if n == 1:  # the cold run filled the cache: the next one reads it
                assert any(cache.rglob("*")), "the cache was not written"
            assert document["tokens"] == oracle_query_tokens(text)
            if context is None:
                assert document["projectContext"] is None
            else:
                assert document["projectContext"] == {
                    "text": context,
                    "tokens": oracle_query_tokens(context),
                }
            compare(document, expected, limit)


# --- the oracle itself, on cases worked out by hand ------------------------------------------


def test_oracle_tokens_and_matching_rule() -> None:
    assert oracle_tokens("Node.js utf-8 Ｆｕｌｌ ﬁle x² time_out") == [
        "node",
        "js",
        "utf",
        "8",
        "full",
        "file",
        "x2",
        "time",
        "out",
    ]
    assert oracle_matches("timeout", "timeouts")
    assert oracle_matches("configuration", "config")
    assert not oracle_matches("test", "testing")
    assert not oracle_matches("cach", "cache")
    assert oracle_query_tokens("the time and the TIME of timer") == ["time", "timer"]


def hand_record(**fields: Any) -> Rec:
    base: dict[str, Any] = {
        "id": "r",
        "title": "t",
        "tags": [],
        "project_context": "",
        "task": "",
        "problems": ["p"],
        "solution": "s",
        "why": "",
        "failed": [],
        "warnings": [],
        "applicability": "",
        "status": None,
        "confidence": None,
        "subfolder": False,
    }
    return Rec(**{**base, **fields})


def test_oracle_on_a_record_worked_out_by_hand() -> None:
    rec = hand_record(
        title="Timeouts of the cache",
        tags=["cache", "ci"],
        solution="raise the timeout",
        why="of the cache",
        outcomes=["success", "success", "success", "partial"],
    )
    [hit] = oracle_search([rec], "timeout of the cache", None, None, False)
    # Both tokens in title and solution, cache in tags; phrase "timeout of the cache" is
    # nowhere whole (solution and why are two sequences); coverage 1.
    assert hit["scoreBreakdown"]["title"] == 16
    assert hit["scoreBreakdown"]["tags"] == 9
    assert hit["scoreBreakdown"]["solution"] == 8
    assert hit["scoreBreakdown"]["exactPhrase"] == 0
    assert hit["relevance"] == 33
    assert hit["scoreBreakdown"]["feedback"] == Fraction(5, 2)  # 3.5 clamped
    assert hit["matchLevel"] == "strong"
    [hit] = oracle_search([rec], "the cache testing", None, None, False)
    assert hit["coverage"] == Fraction(1, 2)
    assert hit["scoreBreakdown"]["exactPhrase"] == 0
    [hit] = oracle_search([rec], "of the cache", None, None, False)
    assert hit["scoreBreakdown"]["exactPhrase"] == 12  # whole run inside `why`
    assert oracle_search([rec], "cache", "python", None, False) == []
    assert oracle_search([hand_record(status="retired")], "t", None, None, False) == []
