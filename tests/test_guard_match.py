"""records/guard_match.py on hand-made texts, against an independent reading: each line alone.

The matcher searches chunks of whole lines with an RE2 set and then each pattern the set
names; whatever the chunking, the set or the meter do, a line is reported for a pattern
exactly when that pattern, compiled alone, finds a match in that line alone.
"""

from __future__ import annotations

import random

import pytest

from reliora_git.records.guard_match import CHUNK_BYTES, Meter, lines_matching
from reliora_git.records.guards import compiled, open_literal

PATTERNS = [
    "^",
    "$",
    "x*",
    "^$",
    "eval\\(",
    "\\bfoo\\b",
    "(?i)FOO",
    "a.{0,5}b",
    "e$",
    "\\Qa+b\\E",
    "[^a-z]{3}",
]


def reference(patterns: list[str], text: bytes) -> list[tuple[int, list[int]]]:
    """(line start, patterns) for each line that some pattern finds alone, line by line."""
    found = []
    start = 0
    for line in text.split(b"\n"):
        hits = [i for i, p in enumerate(patterns) if compiled(p).search(line) is not None]
        if hits:
            found.append((start, hits))
        start += len(line) + 1
    return found


def sample_text(seed: int) -> bytes:
    """Lines of words, empty lines, and now and then a line longer than a chunk."""
    rng = random.Random(seed)
    words = ["foo", "eval(", "a+b", "axxb", "Foo", "", "x", "123", "tree", "e", "BAR"]
    lines = []
    for _ in range(rng.randrange(1, 400)):
        if rng.random() < 0.01:
            lines.append("z" * (CHUNK_BYTES + rng.randrange(1, 500)) + rng.choice(words))
        else:
            lines.append(" ".join(rng.choice(words) for _ in range(rng.randrange(0, 8))))
    lines.insert(rng.randrange(len(lines) + 1), "foo " * (CHUNK_BYTES // 3))  # one for sure
    return "\n".join(lines).encode()


@pytest.mark.parametrize("seed", range(12))
def test_each_line_is_reported_for_the_patterns_that_match_it_alone(seed: int) -> None:
    text = sample_text(seed)
    expected = reference(PATTERNS, text)
    got = [(start, sorted(hits)) for start, hits in lines_matching(PATTERNS, text)]
    assert got == expected
    alone = Meter(sets=False)  # what a run does once a set pass was slow
    got_alone = [(s, sorted(h)) for s, h in lines_matching(PATTERNS, text, alone)]
    assert got_alone == expected
    assert alone.together == 0.0 and alone.cut == 0


def test_no_pattern_changes_what_another_means() -> None:
    # Joined into one alternation, `\Qa` quoted `eval\(` up to the `\E` of `\Qb\E`.
    patterns = ["\\Qa", "eval\\(", "\\Qb\\E"]
    text = b"x = 1\ny = eval(z)\nb"
    assert list(lines_matching(patterns, text)) == [(6, [1]), (18, [2])]
    assert list(lines_matching(["\\Qa\\E", *patterns[1:]], text)) == [(6, [0, 1]), (18, [2])]


def test_a_refused_pattern_matches_nothing_and_the_others_still_run() -> None:
    patterns = ["(a)\\1", "\\Qeval", "(?:.{0,30}e){1,32}@@", "eval\\("]
    assert list(lines_matching(patterns, b"eval(a)\naa")) == [(0, [3])]


@pytest.mark.parametrize(
    ("pattern", "is_open"),
    [
        ("\\Qabc", True),
        ("x\\Q(", True),
        ("\\Qa\\E\\Qb", True),
        ("\\Qa\\E", False),
        ("\\Qa\\\\E", False),  # inside \Q…, a backslash is a literal: `\\E` ends at its `\E`
        ("\\\\Q", False),  # an escaped backslash, then the letter Q
        ("[\\\\]Q", False),
        ("a\\.b", False),
    ],
)
def test_an_open_literal_is_seen_as_re2_reads_it(pattern: str, is_open: bool) -> None:
    assert open_literal(pattern) is is_open
    # RE2's own reading: an open literal swallows the `)` of a group put around it.
    wrapped_compiles = True
    try:
        compiled(f"(?:{pattern})")
    except ValueError as exc:
        wrapped_compiles = "missing )" not in str(exc)
    assert wrapped_compiles is not is_open


def test_a_budget_of_zero_allows_one_search_and_counts_the_texts_left() -> None:
    meter = Meter(0)
    first = list(lines_matching(["foo"], b"foo\nbar", meter))
    assert first == [(0, [0])]
    assert list(lines_matching(["foo"], b"foo", meter)) == []
    assert meter.over and meter.cut == 1 and set(meter.spent) == {"foo"}
