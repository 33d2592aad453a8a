"""Normalisation and tokens (SPEC.md §4). Pure functions, no I/O."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from reliora_git.search.stopwords import STOP_WORDS

# A token is a maximal run of Unicode letters and digits.
_TOKEN_RE = re.compile(r"[^\W_]+")

#: The shorter of two tokens must be at least this long to match as a prefix.
PREFIX_MIN = 5


def normalize(text: str) -> str:
    """NFKC-normalise and lower-case ``text`` (ASCII text skips the NFKC pass)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text.lower()


def tokenize(text: str) -> list[str]:
    """All tokens of ``text`` in order, stop words included."""
    return _TOKEN_RE.findall(normalize(text))


def content_tokens(text: str) -> list[str]:
    """The unique non-stop-word tokens of ``text``, in first-seen order.

    The tails of English contractions are not tokens here (see :func:`without_contractions`):
    ``doesn't verify`` gives ``verify``, not ``doesn``, ``t`` and ``verify``.
    """
    if "'" in text or "\u2019" in text:
        text = without_contractions(text)
    words = tokenize(text)
    return unique(t for t in words if t not in STOP_WORDS)


#: A contraction's tail: an apostrophe (straight or typographic) and ``t``, ``s``, ``d``,
#: ``m``, ``re``, ``ll`` or ``ve``, between a letter and the end of the word. The ``n``
#: before ``'t`` is caught too, to be given back when the head is no stop word.
_CONTRACTION = re.compile(r"(?<=[^\W_])(n?)['\u2019](?:t|s|d|m|re|ll|ve)(?![^\W_])", re.IGNORECASE)


def without_contractions(text: str) -> str:
    """``text`` with the tails of contractions cut off, for query tokens (docs/ranking.md).

    §4 splits ``doesn't`` into ``doesn`` and ``t``: a one-letter token that matched every
    ``t`` of the store (``don't``, ``can't``, ``isn't``…). ``it's``, ``we're``,
    ``they've``, ``I'll``, ``I'd``, ``I'm`` and the possessive ``'s`` keep their head only;
    ``n't`` goes whole when what is left is a stop word (``doesn't`` → ``does``, as in
    "does not"), else only ``'t`` does (``can't`` → ``can``, ``won't`` → ``won``).
    """
    return _CONTRACTION.sub(_cut_tail, text)


def _cut_tail(match: re.Match[str]) -> str:
    if not match.group(1):
        return ""
    start = match.start()
    head = match.string[max(0, start - 12) : start]
    word = re.findall(r"[^\W_]+$", head)
    return "" if word and normalize(word[0]) in STOP_WORDS else match.group(1)


def unique(items: Iterable[str]) -> list[str]:
    """``items`` without repeats, in first-seen order."""
    return list(dict.fromkeys(items))


def token_matches(query_token: str, record_token: str) -> bool:
    """True when the tokens are equal, or the shorter (≥ 5 chars) is a prefix of the longer."""
    if query_token == record_token:
        return True
    short, long = sorted((query_token, record_token), key=len)
    return len(short) >= PREFIX_MIN and long.startswith(short)
