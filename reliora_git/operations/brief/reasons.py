"""Why the push gave a lesson the form it did, as its deciding code says it (SPEC.md §17).

Every test that decides a lesson's place in a push (the floor in search/taskrank.py,
the confidence in search/confidence.py, the earning rules in earning.py, the caps and the
session's memory in push.py ``compose``) returns its :class:`Reason` rather than a bare
yes or no, so an explanation is the decision itself and can never disagree with it.
"""

from __future__ import annotations

from dataclasses import dataclass

# The rules, as JSON names them (docs/ranking.md, "Why not").
FULL = "full"  # in full: confident and earned, or about a file
ABOUT_FILE = "about_file"  # in full: about a file named, changed or read
NOT_CONFIDENT = "not_confident"  # a line: the ranking is not confident (a threshold missed)
NO_OWN_WORD = "no_own_word"  # a line: no word of its own, too few words in title/tags/asked
MAX_FULL = "max_full"  # a line: two lessons in full came first
NO_LINE_WORD = "no_line_word"  # out: no telling shared word in title, tags or asked-as lines
WEAK_WORDS = "weak_words"  # out: it shares only numbers, versions, short words, fragments
MAX_ENTRIES = "max_entries"  # out: five entries came first
BUDGET = "budget"  # a line or out: the push's character budget
PUSHED_BEFORE = "pushed_before"  # out: pushed earlier in this session (once a session)
PAST_LIMIT = "past_limit"  # out: ranked after the lessons a push considers (--limit)
BELOW_FLOOR = "below_floor"  # out: its score is under the relevance floor
TOO_FEW_WORDS = "too_few_words"  # out: it shares fewer words than the floor asks
NO_SHARED_WORD = "no_shared_word"  # out: it shares no counted word with the task
RETIRED = "retired"  # out: retired or superseded


@dataclass(frozen=True)
class Reason:
    """A rule (one of the names above) and the sentence that says it to a person."""

    rule: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "text": self.text}
