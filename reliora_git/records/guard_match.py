"""Which lines of a text the guards' patterns match (SPEC.md §15), and what it cost. Pure.

Every pattern is parsed by RE2 on its own: no text of one pattern is ever joined
to another's, so no pattern can change what another means (joined into one
alternation, a ``\\Q`` left open in one pattern quoted the patterns after it,
and a trusted guard stopped matching). Two steps, both linear:

* an RE2 set (each pattern added to it separately) tells in one pass over a
  chunk of text (whole lines, about 2 KiB) which patterns match anywhere in it:
  most added lines match no guard, so most patterns never search them;
* each pattern the set names then searches the chunk alone, for its lines.

RE2 is linear in the text, but what a byte costs grows with the pattern: a
hundred hostile guards cost seconds a megabyte, and more in a set, whose
automaton never gives up when it thrashes (a single pattern's falls back to
RE2's NFA). A :class:`Meter` carries the time (CPU seconds) a run may spend,
charged to each pattern's own searches and to the set's passes; once spent,
the remaining searches are skipped, and the meter tells how many texts not
every pattern searched and which pattern cost most. A set pass that is slow
(:data:`SLOW_SET_PASS` on one chunk) ends the use of sets for the run: from
then on each pattern searches alone, charged its own time. So a run overshoots
its budget by at most one set pass over one chunk, or one pattern's search of
one chunk (a line longer than a chunk is searched by each pattern alone).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from reliora_git.records.guards import RE2_MAX_MEM, compiled

#: Texts are searched in chunks of whole lines up to this size: what one set pass can cost
#: before the meter is read again is what it costs on a chunk.
CHUNK_BYTES = 2 * 1024
#: The first chunk of a text is smaller: a set that thrashes (some hundred microseconds a
#: byte with a hundred hostile patterns) is found out there, for little.
FIRST_CHUNK_BYTES = 256
#: A set's pass over one chunk takes some microseconds; one that takes this long means its
#: automaton is thrashing: the patterns then search alone (and are charged their own time).
SLOW_SET_PASS = 0.005


@dataclass
class Meter:
    """The time the guards of one run (a commit, a review) may spend, and who spent it.

    ``seconds`` None: no limit (the time is still counted).
    """

    seconds: float | None = None
    clock: Callable[[], float] = time.process_time
    #: CPU seconds each pattern's own searches took.
    spent: dict[str, float] = field(default_factory=dict)
    #: CPU seconds of the sets' passes (all the patterns of a file at once).
    together: float = 0.0
    #: Texts that not every pattern searched because the time ran out.
    cut: int = 0
    #: False once a set's pass was slow: from then on each pattern searches alone.
    sets: bool = True
    #: Searches and set passes run so far, and the seconds they took in all.
    passes: int = 0
    used: float = 0.0

    @property
    def over(self) -> bool:
        """The time is spent (a budget of 0 allows one pass: its clock may read 0 s)."""
        return self.seconds is not None and self.passes > 0 and self.used >= self.seconds

    def charge(self, pattern: str | None, seconds: float) -> None:
        """Count one pass: a pattern's own search, or (None) a set's pass."""
        if pattern is None:
            self.together += seconds
        else:
            self.spent[pattern] = self.spent.get(pattern, 0.0) + seconds
        self.used += seconds
        self.passes += 1


def lines_matching(
    patterns: Sequence[str], text: bytes, meter: Meter | None = None
) -> Iterator[tuple[int, list[int]]]:
    """Each line of ``text`` that some pattern matches: (its start offset, which patterns).

    ``text`` is lines joined by ``\\n`` (a last empty line is a line). In line order;
    the patterns are searched in the order given (put the ones that matter most first:
    when the meter runs out, the later ones are skipped). A pattern that cannot run
    (refused, see records/guards.py) matches nothing.
    """
    meter = meter or Meter()
    usable = [i for i, pattern in enumerate(patterns) if _regex(pattern) is not None]
    if not usable:
        return
    for offset, chunk in _chunks(text):
        if meter.over:
            meter.cut += 1
            return
        by_start: dict[int, list[int]] = {}
        stopped = False
        for i in _candidates(patterns, usable, chunk, meter):
            if meter.over:
                stopped = True
                break
            began = meter.clock()
            starts = list(_line_starts(_regex(patterns[i]), chunk))
            meter.charge(patterns[i], meter.clock() - began)
            for start in starts:
                by_start.setdefault(offset + start, []).append(i)
        yield from sorted(by_start.items())
        if stopped:
            meter.cut += 1
            return


def matching_lines(pattern: str, text: bytes) -> Iterator[int]:
    """Offsets of the starts of the lines of ``text`` that ``pattern`` matches, once a line."""
    return _line_starts(compiled(pattern), text)


def _candidates(
    patterns: Sequence[str], usable: list[int], chunk: bytes, meter: Meter
) -> list[int]:
    """The patterns that match somewhere in ``chunk``, as a set tells (all: when it cannot)."""
    if len(usable) < 2 or not meter.sets or len(chunk) > CHUNK_BYTES:
        return usable  # a line longer than a chunk: a set pass over it could not be cut
    group = _set_of(tuple(patterns[i] for i in usable))
    if group is None:
        return usable  # over RE2's memory budget: each pattern alone
    began = meter.clock()
    hits = group.Match(chunk)
    took = meter.clock() - began
    meter.charge(None, took)
    if took > SLOW_SET_PASS:
        meter.sets = False
    if not hits or 0 not in hits:
        # The sentinel (index 0) matches every text: without it the set's automaton ran
        # out of memory and the answer is no answer.
        meter.sets = False
        return usable
    return [usable[hit - 1] for hit in sorted(hits) if hit]


def _chunks(text: bytes) -> Iterator[tuple[int, bytes]]:
    """(offset, chunk) of ``text``: whole lines, at most :data:`FIRST_CHUNK_BYTES` for the
    first and :data:`CHUNK_BYTES` for the others, unless one line is longer (then that
    line alone).

    Each chunk is lines joined by ``\\n`` again (the newline that ends it is left out),
    so ``^``, ``$`` and ``\\b`` mean at its edges what they mean in the text.
    """
    start, size = 0, FIRST_CHUNK_BYTES
    while True:
        if len(text) - start <= size:
            yield start, text[start:]
            return
        cut = text.rfind(b"\n", start, start + size + 1)
        if cut < 0:  # the line at ``start`` is longer than a chunk
            cut = text.find(b"\n", start + size)
            if cut < 0:
                yield start, text[start:]
                return
        yield start, text[start:cut]
        start, size = cut + 1, CHUNK_BYTES


def _line_starts(regex: Any, text: bytes) -> Iterator[int]:
    """Offsets of the starts of the lines ``regex`` matches, once a line: one RE2 search
    per matching line plus one."""
    pos, end = 0, len(text)
    while pos <= end:
        match = regex.search(text, pos)
        if match is None:
            return
        yield text.rfind(b"\n", 0, match.start()) + 1
        nl = text.find(b"\n", max(match.start(), match.end() - 1))
        if nl < 0:
            return
        pos = nl + 1


@functools.lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    """``pattern`` compiled, or None when it cannot run as a guard."""
    try:
        return compiled(pattern)
    except ValueError:
        return None


@functools.lru_cache(maxsize=64)
def _set_of(patterns: tuple[str, ...]) -> Any:
    """An RE2 set of the patterns, each added (so parsed) on its own, after a sentinel
    that matches every text (index 0); None when RE2 refuses it (over its memory budget)."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_nl = True
    options.max_mem = RE2_MAX_MEM
    try:
        group = re2.Set.SearchSet(options)
        group.Add("")
        for pattern in patterns:
            group.Add("(?m)" + pattern)
        group.Compile()
    except re2.error:
        return None
    return group
