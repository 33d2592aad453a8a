"""A record's summary: what a search result says of the lesson (pure).

An agent judges a result by it before it spends a ``show`` (ten full records
are about 8,000 tokens): the first problem — or the task, when a record has
no problems — then the first sentences of the solution, at most
:data:`SUMMARY_LIMIT` characters, cut at a sentence end or else between
words, with ``…`` where something was left out. Whitespace is collapsed to
single spaces and invisible and control characters are removed (records
arrive in pull requests: records/text.py).

It is made from the record's JSON as the store index keeps it (its segment
value, read for the shown results only: a few microseconds each), and in
``org sync`` for the database. It is not cached itself: it costs 8% of
what parsing the record costs (TIL corpus, measured side by side), so making
it for every record a cold start parses would cost more than making it for
the ten results a search shows (about 1 ms together, of a 55 ms search).

No secret is ever in it. Records holding one are refused when saved, but
hand-written ones exist. detect-secrets (credentials.redact) is not used
here: loading its scanners costs about 0.2 s — as much as a warm search of
10,000 records — and a scan 0.1 ms, and four summaries in five hold
something its needles react to (a URL, a path, the word "token"; measured on
the TIL corpus). Instead every word shaped like a credential is masked whole
(``…``): a run of 16 letters and digits that mixes digits in, is all
capitals or mixes cases throughout, or is a lowercase run longer than any
English word; ten digits in a row in a word with letters; the user and
password of a URL. That over-masks (a commit sha, a long number in a URL)
and lets through none of the fakes of the detect-secrets plugins the project
runs (tests/test_newcomer.py checks them against ``redact`` too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from reliora_git.records.text import remove_invisible

#: The longest summary, in characters (about 75 tokens).
SUMMARY_LIMIT = 300
#: The longest lead (the first problem or the task), so that the solution has room.
LEAD_LIMIT = 140
#: Characters read of a field: more is never shown.
_READ = 2 * SUMMARY_LIMIT
SEPARATOR = " — "
ELLIPSIS = "…"
#: What a word shaped like a credential is replaced by.
MASK = "…"

_RUN = re.compile(r"[A-Za-z0-9]{16,}")
_DIGITS = re.compile(r"[0-9]{10,}")
#: The shortest word either rule can flag.
_SHORTEST = 10
_LETTER = re.compile(r"[A-Za-z]")
#: ``scheme://user:password@``: the user and password are masked, the host kept.
_URL_CREDENTIALS = re.compile(r"(://)[^\s/@:]*:[^\s/@]*@")
#: The end of a sentence: its mark, then a space (the text is collapsed to single spaces).
_SENTENCE_END = re.compile(r"(?<=[.!?]) ")
#: Longer than any English word ("internationalization" has 20 letters).
_LONGEST_WORD = 20


def summarize(problems: Sequence[str], task: str, solution_text: str) -> str:
    """A record's summary from its fields (``""`` when they are all empty)."""
    lead = _cleaned(problems[0] if problems else task)
    solution = _cleaned(solution_text)
    if lead and solution:
        lead = _cut_words(lead, LEAD_LIMIT)
        room = SUMMARY_LIMIT - len(lead) - len(SEPARATOR)
        summary = f"{lead}{SEPARATOR}{_sentences(solution, room)}"
    else:
        summary = _sentences(lead or solution, SUMMARY_LIMIT)
    # Every cut is between words, so each word here is whole; removing characters and
    # masking words only shortens it. Invisible characters go first: one inside a token
    # would hide it from the mask.
    if not (summary.isascii() and summary.isprintable()):  # the usual text: nothing to remove
        summary = remove_invisible(summary)
    return masked(summary)


def summary_of(data: Mapping[str, Any]) -> str:
    """The summary of a record as JSON (``show --json``; the store index keeps it so)."""
    problems = data.get("problems") or []
    return summarize(
        [p for p in problems if isinstance(p, str)] if isinstance(problems, list) else [],
        _text(data.get("task")),
        _text(data.get("solution")),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def masked(text: str) -> str:
    """``text`` (one line) with every word shaped like a credential replaced by ``…``."""
    text = _URL_CREDENTIALS.sub(rf"\1{MASK}@", text)
    words = text.split(" ")
    for n, word in enumerate(words):
        # Shorter words hold neither rule's run (a split and len() beat any regex here).
        if len(word) >= _SHORTEST and secret_shaped(word):
            words[n] = MASK
    return " ".join(words)


def secret_shaped(word: str) -> bool:
    """Whether a word (no whitespace) looks like a token or key (see the module docstring)."""
    for run in _RUN.findall(word):
        uppers = sum(c.isupper() for c in run)
        lowers = sum(c.islower() for c in run)
        if uppers + lowers < len(run):  # digits in it
            if uppers + lowers:
                return True
            continue
        if not lowers or (not uppers and len(run) > _LONGEST_WORD):
            return True
        if min(uppers, lowers) * 4 >= len(run):  # cases mixed throughout, not camelCase
            return True
    return _DIGITS.search(word) is not None and _LETTER.search(word) is not None


def _cleaned(text: str) -> str:
    """The start of ``text`` on one line.

    Cut anywhere: the summary's own cuts, between words, come well before.
    """
    return " ".join(text[:_READ].split())


def _sentences(text: str, room: int) -> str:
    """As many whole sentences of ``text`` as fit ``room``; else its first words, cut."""
    if len(text) <= room:
        return text
    cut = 0
    for end in _SENTENCE_END.finditer(text):
        if end.start() + 1 + len(ELLIPSIS) > room:
            break
        cut = end.start()  # the space after the sentence mark
    if cut:
        return f"{text[:cut]} {ELLIPSIS}"
    return _cut_words(text, room)


def _cut_words(text: str, room: int) -> str:
    """``text``, or its first words that fit ``room`` with ``…`` after them."""
    if len(text) <= room:
        return text
    head = text[: room - len(ELLIPSIS)]
    space = head.rfind(" ")
    head = head[:space] if space > 0 else ""  # a word longer than the room is left out
    return head.rstrip(" ,;:-—") + ELLIPSIS
