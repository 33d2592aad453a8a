#!/usr/bin/env python3
"""Every way the push could choose its entries, measured on bench/brief.py's tasks.

Usage (from the repository root, with the package importable):

    python bench/push_rules.py --corpus ../shared/corpora/til

The push (operations/brief/push.py) puts a lesson in full when the ranking is
confident (search/confidence.py) and the lesson earns it (operations/brief/earning.py),
and gives the others a line only when a telling word they share with the task is in
their title or tags (the line rule). This script asks how much of the push's reach
any choice of those rules can keep: for each task of ``bench/data/brief_tasks.jsonl``
(its text alone, as a hook gets it), with its note stored and moved out, it takes
the candidates once and composes the push through the product's own ``compose`` under
every combination of

* the confidence thresholds (score, margin, shown: the chosen ones and lower),
* the full rule (confidence only; a word of its own or two title words, the chosen
  rule; a word of its own or one title word; a word of its own; the first hit, a
  word of its own or two title words),
* the candidates looked at: the brief's five, or ten (a slot left by a candidate
  that earns no entry goes to the next one that does, at most five entries still),

and prints the chosen rules, the rules before the line rule, the combination that
names the note most often while it pushes no more wrong full lessons, no more full
lessons with the note moved out and no more characters than the rules before, and
the most any combination names at all.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "bench"))

from brief import DEFAULT_CORPUS, TASKS, Task, moved_out, read_tasks  # noqa: E402

from reliora_git.operations.brief import push as quiet  # noqa: E402
from reliora_git.operations.brief.earning import Holders, shown_on_line  # noqa: E402
from reliora_git.operations.brief.selection import Situation, select  # noqa: E402
from reliora_git.search import confidence  # noqa: E402
from reliora_git.storage.index import StoreIndex, open_index  # noqa: E402
from reliora_git.storage.store import Store  # noqa: E402

VARIANTS = ("stored", "movedOut")
DEPTHS = (5, 10)
SCORES = (0.8, 0.9, 1.0, confidence.MIN_SCORE)
MARGINS = (0.0, 0.1, 0.15, 0.2, confidence.MIN_MARGIN)
SHOWN = (0.0, 0.5, 0.7, confidence.MIN_SHOWN)


@dataclass(frozen=True)
class Judged:
    """A candidate as the product rendered it, with what every full rule looks at."""

    candidate: quiet.Candidate
    first: bool
    own_words: int
    title_words: int


#: A full rule: whether a confident candidate may go in full.
FullRule = Callable[[Judged], bool]
FULL_RULES: dict[str, FullRule] = {
    "confidence only": lambda j: True,
    "a word of its own or two title words (chosen)": lambda j: (
        j.own_words > 0 or j.title_words >= 2
    ),
    "a word of its own or one title word": lambda j: j.own_words > 0 or j.title_words >= 1,
    "a word of its own": lambda j: j.own_words > 0,
    "the first hit, a word of its own or two title words": lambda j: (
        j.first or j.own_words > 0 or j.title_words >= 2
    ),
}


@dataclass(frozen=True)
class Rules:
    score: float
    margin: float
    shown: float
    full: str
    depth: int
    line_rule: bool = True

    def label(self) -> str:
        lines = "the line rule" if self.line_rule else "no line rule"
        return (
            f"score {self.score}, margin {self.margin}, shown {self.shown}; {self.full}; "
            f"{lines}; {self.depth} candidates"
        )


@dataclass(frozen=True)
class Figures:
    median: float
    named: int
    in_full: int
    fulls: int
    moved_median: float
    moved_fulls: int

    @property
    def wrong_fulls(self) -> int:
        return self.fulls - self.in_full

    def row(self, label: str) -> str:
        return (
            f"| {label} | {self.median:.0f} | {self.named} | {self.in_full} | "
            f"{self.in_full}/{self.fulls} | {self.moved_median:.0f} | {self.moved_fulls} |"
        )


def judged(store: Store, index: StoreIndex, task: str, depth: int) -> list[Judged]:
    """The push's candidates for ``task`` (rendered by the product), the first ``depth``."""
    situation = Situation(task, limit=depth)
    hits = select(store, situation, index=index).hits
    holders = Holders.of(hits)
    _, found = quiet.candidates(store, situation, index=index, freshness=False)
    first = hits[0].doc.id if hits else None
    return [
        Judged(
            c,
            c.lesson.id == first,
            len(holders.own_words(c.lesson.matches)),
            len(shown_on_line(c.lesson.matches)),
        )
        for c in found
    ]


def under(rules: Rules, found: Sequence[Judged]) -> list[quiet.Candidate]:
    """``found`` judged by ``rules`` instead of the product's settings."""
    out = []
    for j in found[: rules.depth]:
        c = j.candidate
        sure = c.confidence
        if sure is not None:
            sure = dataclasses.replace(
                sure,
                confident=sure.score >= rules.score
                and sure.margin >= rules.margin
                and sure.shown >= rules.shown,
            )
        out.append(
            dataclasses.replace(
                c,
                confidence=sure,
                full_earned=FULL_RULES[rules.full](j),
                line_earned=c.line_earned or not rules.line_rule,
            )
        )
    return out


def measure(rules: Rules, cases: dict[str, list[tuple[Task, list[Judged]]]]) -> Figures:
    sizes: dict[str, list[int]] = {}
    named = in_full = fulls = moved_fulls = 0
    for variant in VARIANTS:
        sizes[variant] = []
        for task, found in cases[variant]:
            entries, text = quiet.compose(under(rules, found))
            sizes[variant].append(len(text))
            forms = {e.candidate.lesson.id: e.form for e in entries}
            full = sum(form == "full" for form in forms.values())
            if variant == "stored":
                named += task.id in forms
                in_full += forms.get(task.id) == "full"
                fulls += full
            else:
                moved_fulls += full
    return Figures(
        statistics.median(sizes["stored"]),
        named,
        in_full,
        fulls,
        statistics.median(sizes["movedOut"]),
        moved_fulls,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--tasks", type=Path, default=TASKS)
    args = parser.parse_args()
    store = Store(args.corpus.resolve())
    index = open_index(store)
    tasks = read_tasks(args.tasks)

    cases: dict[str, list[tuple[Task, list[Judged]]]] = {v: [] for v in VARIANTS}
    for variant in VARIANTS:
        for task in tasks:
            context = (
                moved_out(index, task.id) if variant == "movedOut" else contextlib.nullcontext()
            )
            with context:
                cases[variant].append((task, judged(store, index, task.task, max(DEPTHS))))

    chosen_rules = Rules(
        confidence.MIN_SCORE,
        confidence.MIN_MARGIN,
        confidence.MIN_SHOWN,
        "a word of its own or two title words (chosen)",
        5,
    )
    before_rules = dataclasses.replace(chosen_rules, full="confidence only", line_rule=False)
    before = measure(before_rules, cases)
    grid = [
        Rules(score, margin, shown, full, depth)
        for score, margin, shown, full, depth in itertools.product(
            SCORES, MARGINS, SHOWN, FULL_RULES, DEPTHS
        )
    ]
    measured = [(rules, measure(rules, cases)) for rules in grid]
    kept = [
        (rules, f)
        for rules, f in measured
        if f.wrong_fulls <= before.wrong_fulls
        and f.moved_fulls <= before.moved_fulls
        and f.median <= before.median
        and f.moved_median <= before.moved_median
    ]

    def best(pool: list[tuple[Rules, Figures]]) -> tuple[Rules, Figures]:
        return max(pool, key=lambda p: (p[1].named, p[1].in_full, -p[1].wrong_fulls))

    print(f"{len(tasks)} tasks, {len(grid)} combinations with the line rule\n")
    print(
        "| rules | median chars | note named | note in full | full lessons that are the "
        "note | moved out: median chars | moved out: full lessons |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(before.row("before the line rule: " + before_rules.label()))
    print(measure(chosen_rules, cases).row("chosen: " + chosen_rules.label()))
    rules, figures = best(kept)
    print(figures.row("most named, no worse elsewhere: " + rules.label()))
    rules, figures = best(measured)
    print(figures.row("most named at all: " + rules.label()))


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - start:.1f} s)")
