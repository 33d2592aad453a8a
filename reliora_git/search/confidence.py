"""When the push may show a lesson in full: the ranking is confident it bears on the task.

Pure: the task ranking's hits (taskrank.py) in, a judgement out (SPEC.md §14.2).

A push is paid for on every prompt, so a lesson goes in full only when three
things hold of its hit, each measured in units of the most one word can give
in this store (the idf of a word held by a single record, ``unit``):

* its **score** is at least :data:`MIN_SCORE` units: it shares several telling words;
* its **margin** over the next hit is at least :data:`MIN_MARGIN` units: it stands
  out, rather than being one of several records on a common topic;
* the part of its score from words in the fields a push **shows** (title, tags,
  solution: taskrank.SHOWN_MASK) is at least :data:`MIN_SHOWN` units: it is about
  the task where a reader will see it, not only in sections a brief shows little
  of — where a record stuffed with a store's vocabulary hides its words.

Chosen by bench/brief.py on 139 tasks (docs/ranking.md): with the task's note
stored, the top hit passes for 51 tasks, 42 of them the note; with the note
moved out, for 16 of 139 prompts (0.12 a prompt).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reliora_git.search.taskrank import SHOWN_MASK, TaskHit, idf_of

MIN_SCORE = 1.1
MIN_MARGIN = 0.25
MIN_SHOWN = 0.9


@dataclass(frozen=True)
class Confidence:
    confident: bool
    #: Score, margin over the next hit, and the score from shown fields, in units (see above).
    score: float
    margin: float
    shown: float
    #: The thresholds it fell short of, as (name, its value, the threshold): empty when
    #: confident. Kept from the judgement itself, so an explanation cannot disagree with it.
    short_of: tuple[tuple[str, float, float], ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "confident": self.confident,
            "score": round(self.score, 3),
            "margin": round(self.margin, 3),
            "shown": round(self.shown, 3),
        }


def judge(hits: Sequence[TaskHit], position: int, total: int) -> Confidence:
    """How confident the ranking is that ``hits[position]`` bears on the task."""
    unit = idf_of(1, total) if total else 1.0
    hit = hits[position]
    following = hits[position + 1].score if position + 1 < len(hits) else 0.0
    # Every way a word matched counts (as written, by stem, by compound or split): each is
    # a word the record holds where a push shows it.
    visible = hit.score_in(SHOWN_MASK)
    score, margin, shown = hit.score / unit, (hit.score - following) / unit, visible / unit
    short_of = tuple(
        (name, value, least)
        for name, value, least in (
            ("score", score, MIN_SCORE),
            ("margin", margin, MIN_MARGIN),
            ("shown", shown, MIN_SHOWN),
        )
        if not value >= least
    )
    return Confidence(not short_of, score, margin, shown, short_of)
