"""When the push may show a lesson in full: the ranking is confident it bears on the task.

Pure: the task ranking's hits (taskrank.py) in, a judgement out (SPEC.md §14.2).

A push is paid for on every prompt, so a lesson goes in full only when three
things hold of its hit, each measured in units of the most one word can give
in this store (the idf of a word held by a single record, ``unit``):

* its **score** is at least :data:`MIN_SCORE` units: it shares several telling words;
* its **margin** over the next hit is at least :data:`MIN_MARGIN` units: it stands
  out, rather than being one of several records on a common topic;
* the words it shares **in its title or problems** (exact matches) add up to at
  least :data:`MIN_TITLE_PROBLEMS` units of idf: it is about the task, not only
  mentioning its words in passing.

Chosen by bench/brief.py on 139 tasks (docs/ranking.md): with the task's note
stored, the top hit passes for 50 tasks, 39 of them the note; with the note
moved out, for 18 of 139 prompts (0.13 a prompt).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reliora_git.search.taskrank import TaskHit, idf_of

MIN_SCORE = 1.3
MIN_MARGIN = 0.25
MIN_TITLE_PROBLEMS = 0.6


@dataclass(frozen=True)
class Confidence:
    confident: bool
    #: Score, margin over the next hit, and title-and-problems idf, in units (see above).
    score: float
    margin: float
    title_problems: float

    def to_json(self) -> dict[str, object]:
        return {
            "confident": self.confident,
            "score": round(self.score, 3),
            "margin": round(self.margin, 3),
            "titleProblems": round(self.title_problems, 3),
        }


def judge(hits: Sequence[TaskHit], position: int, total: int) -> Confidence:
    """How confident the ranking is that ``hits[position]`` bears on the task."""
    unit = idf_of(1, total) if total else 1.0
    hit = hits[position]
    following = hits[position + 1].score if position + 1 < len(hits) else 0.0
    telling = sum(
        m.idf
        for m in hit.matches
        if not m.stemmed and ("title" in m.fields or "problems" in m.fields)
    )
    score, margin, title_problems = hit.score / unit, (hit.score - following) / unit, telling / unit
    return Confidence(
        score >= MIN_SCORE and margin >= MIN_MARGIN and title_problems >= MIN_TITLE_PROBLEMS,
        score,
        margin,
        title_problems,
    )
