"""Records whose size is far out of line with the store's (keyword stuffing). Pure.

The brief's ranking bounds what a long record gains from each word (taskrank.py),
so a record stuffed with a store's vocabulary ranks first for no task; `check`
still names one, because its words say nothing a reader can use and a reviewer
should see it (docs/ranking.md, "Bounded influence per record").
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from reliora_git.records.model import Problem

#: A record is out of line when it holds more than FACTOR times the median record's tokens,
#: and more than MIN_TOKENS (on the til corpus of 1,871 notes the largest is 5.9 times the
#: median, 918 tokens: none is named).
FACTOR = 6
MIN_TOKENS = 800
#: Fewer records than this say too little about what a usual record is.
MIN_RECORDS = 20


def outsized(records: Iterable[tuple[str, int]]) -> dict[str, list[Problem]]:
    """Locator → a warning, for each record (locator, tokens) far larger than the store's."""
    found = list(records)
    if len(found) < MIN_RECORDS:
        return {}
    median = statistics.median(size for _, size in found)
    limit = max(FACTOR * median, MIN_TOKENS)
    return {
        locator: [
            Problem(
                "warning",
                f"holds {size} words, {size / max(median, 1):.0f} times the store's median "
                f"record ({median:.0f}): a record stuffed with words ranks for tasks it is not "
                "about; cut it or split it into lessons",
            )
        ]
        for locator, size in found
        if size > limit
    }
