"""Which ids an id that names no record was probably meant to be (a did-you-mean).

An id is a slug of the title and six random hex digits (``key-rotation-3fa9c1``), so
people mistype it the ways they mistype words: hyphens left out (``keyrotation``),
words swapped (``rotation-key``), a letter wrong, the hex suffix misremembered. Each
known id costs a few string operations; the edit distance, the one dearer test, is
only computed for ids of about the same length that begin like the one typed. This
runs only on the error path, once per unknown id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reliora_git.search.inverted import within_distance

#: Suggestions given at most.
MOST = 3
_HEX_TAIL = re.compile(r"-[0-9a-f]{1,6}$")


def _stem(record_id: str) -> str:
    """The id without its random tail: ``key-rotation-3fa9c1`` → ``key-rotation``."""
    stem = _HEX_TAIL.sub("", record_id)
    return stem or record_id


def _allowed_edits(length: int) -> int:
    return 1 if length <= 5 else 2 if length <= 12 else 3


def near_ids(typed: str, known: Iterable[str]) -> list[str]:
    """Up to three of ``known`` that ``typed`` probably meant, the closest first.

    Closest: the same words without hyphens or with the hex tail wrong
    (``keyrotation``, ``key-rotation-3fa9c2``); then the same words in another order,
    or a run of at least five of its letters (``rotation-key``, ``keyrot``,
    ``keyrotation`` for ``old-key-rotation-4f2588``); then a few letters off
    (``key-rotaton``: at most 1, 2 or 3 edits as the id grows).
    """
    typed_stem = _stem(typed)
    squashed = {typed.replace("-", ""), typed_stem.replace("-", "")}
    words = {word for word in typed_stem.split("-") if word}
    most = _allowed_edits(len(typed_stem))
    ranked: list[tuple[int, int, str]] = []
    for record_id in known:
        stem = _stem(record_id)
        flat = stem.replace("-", "")
        if flat in squashed:
            ranked.append((0, 0, record_id))
            continue
        stem_words = set(stem.split("-"))
        if len(words) > 1 and words <= stem_words:
            ranked.append((1, len(stem_words - words), record_id))
            continue
        if any(
            (len(part) >= 5 and part in flat) or (len(flat) >= 5 and part.startswith(flat))
            for part in squashed
        ):
            ranked.append((1, len(flat), record_id))
            continue
        if abs(len(stem) - len(typed_stem)) > most or stem[:1] != typed_stem[:1]:
            continue
        if within_distance(typed_stem, stem, most):
            ranked.append((2, 0, record_id))
    ranked.sort()
    return [record_id for _, _, record_id in ranked[:MOST]]


def did_you_mean(typed: str, known: Iterable[str]) -> str:
    """`` (did you mean 'key-rotation-3fa9c1'?)`` for ``typed``, or ``""`` when none is near."""
    near = [repr(record_id) for record_id in near_ids(typed, known)]
    if not near:
        return ""
    listed = near[0] if len(near) == 1 else f"{', '.join(near[:-1])} or {near[-1]}"
    return f" (did you mean {listed}?)"
