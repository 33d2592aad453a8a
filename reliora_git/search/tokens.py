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
    """The unique non-stop-word tokens of ``text``, in first-seen order."""
    return unique(t for t in tokenize(text) if t not in STOP_WORDS)


def unique(items: Iterable[str]) -> list[str]:
    """``items`` without repeats, in first-seen order."""
    return list(dict.fromkeys(items))


def token_matches(query_token: str, record_token: str) -> bool:
    """True when the tokens are equal, or the shorter (≥ 5 chars) is a prefix of the longer."""
    if query_token == record_token:
        return True
    short, long = sorted((query_token, record_token), key=len)
    return len(short) >= PREFIX_MIN and long.startswith(short)
