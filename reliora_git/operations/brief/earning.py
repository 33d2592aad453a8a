"""Which entries of a push earn their place (SPEC.md §14.2). Pure: the ranking's matches in.

A push is read on every prompt, so every entry must be worth the agent's attention:

* **No entry on weak words.** A shared word that is a number, a version string, a
  fragment of a contraction (``doesn``, ``isn``) or under three letters (``3``, ``10``,
  ``py``, ``v2``, ``ci``) says nothing about what a lesson is about: a task to
  "bump the minimum Python to 3.10" shares ``3`` and ``10`` with half of any store.
  Such words are left out of every test below, so a lesson that shares only them
  gets no entry.
* **A line** (``- Title (id): shares w1, w2``) is a pointer the agent may follow:
  it is pushed only when a word it shares with the task is in its title, tags or
  asked-as lines (how people ask for it) — not only somewhere in its body.
* **In full** only when, besides the ranking's confidence (search/confidence.py),
  the lesson holds a task word that no other candidate above the floor holds, or
  at least :data:`TITLE_WORDS_FOR_FULL` telling task words in its title, tags and
  asked-as lines:
  a tool's name that a dozen lessons share (``pnpm``, ``jest``) says which area a
  task is in, not which lesson bears on it. (The word of its own alone cut half
  the right full lessons on bench/brief.py's tasks, which avoid their notes'
  distinctive words; two title words keep those.)

Lessons chosen because they are about a file named or changed are pointed at by
the file, not by words, and are not judged here. Chosen by bench/brief.py
(docs/ranking.md, "The push").
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reliora_git.operations.brief.reasons import NO_LINE_WORD, NO_OWN_WORD, WEAK_WORDS, Reason
from reliora_git.search.taskrank import TaskHit, WordMatch

#: Fields a line stands on (SPEC.md §14.2): what the lesson is about (title, tags) and how
#: people ask for it (its asked-as lines, SPEC.md §3), not a word anywhere in its body.
LINE_FIELDS = frozenset({"title", "tags", "asked"})
#: Shorter words are not telling (``ci``, ``py``, ``js``, ``db``).
MIN_LETTERS = 3
#: What is left of a negative contraction when a tokenizer splits ``'t`` off (``doesn't`` →
#: ``doesn``), and the same written without the apostrophe: no English word on its own, so a
#: task and a lesson that share one share nothing. (``can``, ``won``, ``shan`` are left out:
#: they are words too.)
CONTRACTION_FRAGMENTS = frozenset(
    stem + tail
    for stem in (
        "doesn", "isn", "don", "didn", "wasn", "weren", "aren", "hasn", "haven", "hadn",
        "couldn", "shouldn", "wouldn", "mustn", "needn", "ain",
    )
    for tail in ("", "t")
)  # fmt: skip
#: Telling task words in a lesson's title, tags and asked-as lines that let it go in full
#: without a word of its own (see above).
TITLE_WORDS_FOR_FULL = 2


@functools.lru_cache(maxsize=4096)
def telling(word: str) -> bool:
    """A shared word an entry may stand on: three letters or more, not a number, not a
    version string (``v2``, ``3rc1``, ``2b``), not a fragment of a contraction (``doesn``,
    ``isn``). A compound (``time out``, ``doesn t``) is judged whole."""
    compact = word.replace(" ", "")
    if len(compact) < MIN_LETTERS or compact.casefold() in CONTRACTION_FRAGMENTS:
        return False
    letters = sum(c.isalpha() for c in compact)
    if letters == 0:
        return False
    # Versions: a letter or two around digits (v2, 3rc1, 2b, r12), never a word.
    return not (any(c.isdigit() for c in compact) and letters <= 2)


def telling_matches(matches: Iterable[WordMatch]) -> list[WordMatch]:
    return [m for m in matches if telling(m.word)]


def shown_on_line(matches: Sequence[WordMatch]) -> list[WordMatch]:
    """The telling shared words in the lesson's title, tags or asked-as lines."""
    return [m for m in telling_matches(matches) if LINE_FIELDS.intersection(m.fields)]


def earns_line(matches: Sequence[WordMatch]) -> bool:
    """A telling shared word is in the lesson's title, tags or asked-as lines."""
    return no_line(matches) is None


#: Shared words named in a reason.
WORDS_IN_REASON = 4


def no_line(matches: Sequence[WordMatch]) -> Reason | None:
    """Why ``matches`` earn no line (None: they do): the test of :func:`earns_line`."""
    if shown_on_line(matches):
        return None
    told = telling_matches(matches)
    if not told:
        weak = ", ".join(dict.fromkeys(m.word for m in matches)) or "nothing"
        return Reason(
            WEAK_WORDS,
            "it shares only numbers, version strings, words under three letters or "
            f"fragments of contractions ({weak})",
        )
    return Reason(
        NO_LINE_WORD,
        f"no word it shares is in its title, tags or asked-as lines (it shares {held_where(told)})",
    )


def held_where(matches: Sequence[WordMatch], count: int = WORDS_IN_REASON) -> str:
    """``word (field, field); …`` for the first ``count`` matches, and how many more."""
    shown = "; ".join(f"{m.word} ({', '.join(m.fields)})" for m in matches[:count])
    more = f"; {len(matches) - count} more" if len(matches) > count else ""
    return shown + more


@dataclass(frozen=True)
class Holders:
    """How many candidates above the floor hold each telling task word."""

    counts: dict[str, int]

    @classmethod
    def of(cls, hits: Sequence[TaskHit]) -> Holders:
        counts: dict[str, int] = {}
        for hit in hits:
            for word in hit.matched_words:
                if telling(word):
                    counts[word] = counts.get(word, 0) + 1
        return cls(counts)

    def own_words(self, matches: Sequence[WordMatch]) -> list[str]:
        """The telling words of ``matches`` that no other candidate holds."""
        return [m.word for m in telling_matches(matches) if self.counts.get(m.word, 0) <= 1]

    def earns_full(self, matches: Sequence[WordMatch]) -> bool:
        """A word of its own among the candidates, or enough telling words in its line fields
        (the ranking's confidence is judged apart: search/confidence.py)."""
        return self.no_full(matches) is None

    def no_full(self, matches: Sequence[WordMatch]) -> Reason | None:
        """Why ``matches`` do not earn a full entry (None: they do): :meth:`earns_full`."""
        if self.own_words(matches):
            return None
        on_line = shown_on_line(matches)
        if len(on_line) >= TITLE_WORDS_FOR_FULL:
            return None
        return Reason(
            NO_OWN_WORD,
            "every word it shares is held by another candidate too, and "
            f"{len(on_line)} telling word{'' if len(on_line) == 1 else 's'} of the task "
            f"{'is' if len(on_line) == 1 else 'are'} in its title, tags or asked-as lines "
            f"(in full needs {TITLE_WORDS_FOR_FULL})",
        )
