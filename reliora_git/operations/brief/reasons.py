"""Why the push gave a lesson the form it did, as its deciding code says it (SPEC.md §17).

Every test that decides a lesson's place in a push (the floor in search/taskrank.py,
the confidence in search/confidence.py, the earning rules in earning.py, the caps and the
session's memory in push.py ``compose``) returns its :class:`Reason` rather than a bare
yes or no, so an explanation is the decision itself and can never disagree with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reliora_git.search.confidence import Confidence

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


def shown_number(value: float, least: float) -> str:
    """``value`` to 2 decimals, or 3 when 2 would read as ``least`` (1.0996 is not 1.10)."""
    text = f"{value:.2f}"
    return f"{value:.3f}" if float(text) == least and value < least else text


_UNITS = {
    "score": "score",
    "margin": "margin over the next",
    "shown": "score from shown fields (title, tags, solution)",
}


def why_full(
    about_files: bool,
    confidence: Confidence | None,
    full_earned: bool,
    full_refused: Reason | None,
) -> Reason:
    """A candidate's form when nothing caps it: in full (why), or a line (which rule).
    Decides as push.Candidate.confident does, from the same judgements."""
    if about_files:
        return Reason(ABOUT_FILE, "in full: it is about a file named or read")
    if confidence is not None and confidence.short_of:
        missed = ", ".join(
            f"{_UNITS[name]} {shown_number(value, least)} (needs {least:.2f})"
            for name, value, least in confidence.short_of
        )
        return Reason(
            NOT_CONFIDENT,
            f"a line, not in full: the ranking is not confident enough, {missed}; in "
            "units of the most one word gives in this store",
        )
    if not full_earned:
        refused = full_refused or Reason(NO_OWN_WORD, "it earns no full entry")
        return Reason(refused.rule, f"a line, not in full: {refused.text}")
    if confidence is None:
        return Reason(NOT_CONFIDENT, "a line, not in full: it is not ranked")
    return Reason(
        FULL,
        "in full: the ranking is confident (score, margin over the next and the part in "
        "shown fields over their thresholds) and it earns it",
    )


def why_out(line_refused: Reason | None) -> Reason:
    """Why a candidate earns no entry at all (earning.py's reason for no line)."""
    found = line_refused or Reason(
        NO_LINE_WORD, "no word it shares is in its title, tags or asked-as lines"
    )
    return Reason(found.rule, f"left out: {found.text}")
