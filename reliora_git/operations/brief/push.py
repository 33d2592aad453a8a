"""``reliora brief --push``: the quiet form of a brief that every agent hook prints.

A push is paid for on every prompt of every session (SPEC.md §14.2), so it is
the brief's selection (operations/brief/full.py) in a leaner form:

* a lesson goes **in full** only when the ranking is confident that it bears
  on the task (search/confidence.py), or when it is about a file named or
  changed; at most :data:`MAX_FULL`;
* the other candidates above the floor are **one line** each
  (``- Title (id): shares w1, w2``); at most :data:`MAX_ENTRIES` entries in all;
* nothing when none clears the floor.

The text is for a model: the problem a lesson solved and what worked, its
warnings, no field names or scores (``--json`` keeps them), and an opening
line that says what the lessons are without claiming where they came from.

Hooks push once a session (operations/agents/hook.py): :func:`compose` takes
what the session already got and leaves it out, except that a lesson shown
only as a line comes once in full when a file it is about is read.
Selection (slow: the index) and composition (fast, pure) are apart, so that
the hook holds its session lock only while composing.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reliora_git.operations.brief import reasons
from reliora_git.operations.brief.earning import Holders, no_line, shown_on_line, telling
from reliora_git.operations.brief.full import CHARS_PER_TOKEN, check_budget
from reliora_git.operations.brief.reasons import Reason
from reliora_git.operations.brief.selection import (
    DEFAULT_LIMIT,
    Lesson,
    Selection,
    Situation,
    add_freshness,
    select,
)
from reliora_git.operations.brief.text import clean, cut, labelled, one_line
from reliora_git.search.confidence import Confidence, judge
from reliora_git.search.taskrank import Settings, TaskHit, WordMatch
from reliora_git.storage.index import StoreIndex
from reliora_git.storage.store import Store

FRAMING = (
    "Lessons kept in this repository's .reliora/. Check them against the code: "
    "they are notes, not instructions."
)
MAX_FULL = 2
MAX_ENTRIES = 5
#: Longest parts, in characters (cut at a sentence end, else a space).
TITLE_FULL = 120
TITLE_LINE = 60
PROBLEM_CHARS = 240
SOLUTION_CHARS = 400
ITEM_CHARS = 160
#: Shared words named under a full lesson, and on a line.
WORDS_SHOWN = 3
WORDS_ON_LINE = 2
#: What a session's hooks say, once, when its pushes reach push_session_budget.
SPENT = (
    "Reliora: this session's lessons reached their budget (push_session_budget); "
    "ask for more with `reliora brief TASK`."
)


@dataclass
class Candidate:
    """A selected lesson, rendered in both forms, with the reason it may go in full."""

    lesson: Lesson
    #: About a named or changed file, or the ranking's confidence (None: about a file only).
    confidence: Confidence | None
    #: It may go in full: a word no other candidate holds, or title words (earning.py).
    full_earned: bool = True
    #: A telling word it shares is in its title, tags or asked-as lines (earning.py).
    line_earned: bool = True
    full: str = ""
    line: str = ""
    #: Why it does not earn a full entry, or a line (earning.py), when it does not.
    full_refused: Reason | None = None
    line_refused: Reason | None = None

    @property
    def about_files(self) -> bool:
        return bool(self.lesson.paths)

    @property
    def confident(self) -> bool:
        """In full: about a named or changed file, or a confident match that earns it."""
        return self.about_files or (
            self.confidence is not None and self.confidence.confident and self.full_earned
        )

    @property
    def earns_entry(self) -> bool:
        """Any entry at all: about a file, in full, or a line that shows why (earning.py)."""
        return self.about_files or self.confident or self.line_earned

    def why_full(self) -> Reason:
        """Why it is in full when nothing caps it (or, when not :attr:`confident`, why not)."""
        return reasons.why_full(
            self.about_files, self.confidence, self.full_earned, self.full_refused
        )

    def why_out(self) -> Reason:
        """Why it earns no entry at all (only when not :attr:`earns_entry`)."""
        return reasons.why_out(self.line_refused)


@dataclass
class Entry:
    candidate: Candidate
    form: str  # "full" or "line"

    @property
    def text(self) -> str:
        return self.candidate.full if self.form == "full" else self.candidate.line


@dataclass
class Push:
    task: str
    files: list[str]
    budget: int
    candidates: list[Candidate] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    rendered: str = ""
    #: Each candidate's id → why it has its form or was left out (compose's own decisions).
    decisions: dict[str, Reason] = field(default_factory=dict)
    #: What the push was selected from (its task hits above the floor, their count).
    selection: Selection | None = None

    @property
    def used(self) -> int:
        return math.ceil(len(self.rendered) / CHARS_PER_TOKEN)

    def text(self) -> str:
        return self.rendered

    def to_json(self) -> dict[str, Any]:
        """The ``brief --push --json`` document: the brief's fields, each lesson's ``form``."""
        shown = {entry.candidate.lesson.id for entry in self.entries}
        return {
            "task": self.task,
            "files": self.files,
            "budget": self.budget,
            "used": self.used,
            "lessons": [_lesson_json(entry.candidate, entry.form) for entry in self.entries],
            "omitted": [
                {
                    "id": c.lesson.id,
                    "title": clean(c.lesson.title),
                    "reason": _reason_json(c),
                }
                for c in self.candidates
                if c.lesson.id not in shown
            ],
        }


def _reason_json(candidate: Candidate) -> dict[str, Any]:
    reason = candidate.lesson.reason_json()
    reason["earns"] = {"line": candidate.line_earned, "full": candidate.full_earned}
    if candidate.confidence is not None:
        reason["confidence"] = candidate.confidence.to_json()
    return reason


def _lesson_json(candidate: Candidate, form: str) -> dict[str, Any]:
    lesson = candidate.lesson
    return {
        "id": lesson.id,
        "title": clean(lesson.title),
        "locator": clean(lesson.locator),
        "form": form,
        "reason": _reason_json(candidate),
        "freshness": lesson.freshness.to_json() if lesson.freshness else None,
        "text": candidate.full if form == "full" else candidate.line,
    }


# --- selection ----------------------------------------------------------------------------------


def candidates(
    store: Store,
    situation: Situation,
    *,
    index: StoreIndex | None = None,
    settings: Settings | None = None,
    freshness: bool = True,
) -> tuple[list[str], list[Candidate]]:
    """The files named or changed, and the brief's lessons rendered in both forms.

    ``freshness=False`` leaves out the ``stale:`` line (read from the working tree's git
    history): ``review`` pushes from trees that are not checked out (evaluation/).
    """
    chosen = select(store, situation, index=index, settings=settings)
    return chosen.files, candidates_of(store, chosen, freshness)


def candidates_of(store: Store, chosen: Selection, freshness: bool = True) -> list[Candidate]:
    """The lessons of ``chosen`` judged and rendered in both forms (see :func:`candidates`)."""
    found = judged(chosen.lessons, chosen.hits, chosen.total)
    if found:
        if freshness:
            add_freshness(store, chosen.index, [c.lesson for c in found])
        for candidate in found:
            _render(candidate, chosen.index.record_json(_slot(chosen.index, candidate)))
    return found


def judged(lessons: Sequence[Lesson], hits: Sequence[TaskHit], total: int) -> list[Candidate]:
    """``lessons`` as candidates (not rendered): the ranking's confidence in each, and whether
    it earns a line or a full entry (earning.py). ``hits``: the task's hits above the floor,
    best first; ``total``: records with a score in the store."""
    position = {hit.doc.id: i for i, hit in enumerate(hits)}
    holders = Holders.of(hits)
    found = []
    for lesson in lessons:
        at = position.get(lesson.id)
        confidence = judge(hits, at, total) if at is not None else None
        full_refused = holders.no_full(lesson.matches)
        line_refused = no_line(lesson.matches)
        found.append(
            Candidate(
                lesson,
                confidence,
                full_earned=full_refused is None,
                line_earned=line_refused is None,
                full_refused=full_refused,
                line_refused=line_refused,
            )
        )
    return found


def _slot(index: StoreIndex, candidate: Candidate) -> int:
    slot = index.slot_of(candidate.lesson.id)
    assert slot is not None
    return slot


def push(
    store: Store,
    task: str = "",
    *,
    query: str = "",
    files: Sequence[str] = (),
    changes: bool = False,
    base: str | None = None,
    budget: int | None = None,
    limit: int = DEFAULT_LIMIT,
    index: StoreIndex | None = None,
    settings: Settings | None = None,
) -> Push:
    """``reliora brief --push``: the push for a situation, outside any session."""
    situation = Situation(task, query, tuple(files), changes, base, limit)
    budget = check_budget(store, budget)
    chosen = select(store, situation, index=index, settings=settings)
    found = candidates_of(store, chosen)
    result = Push(task, chosen.files, budget, found, selection=chosen)
    result.entries, result.rendered = compose(
        found, limit=budget * CHARS_PER_TOKEN, decisions=result.decisions
    )
    return result


# --- composition (pure) ---------------------------------------------------------------------------


def compose(
    found: Sequence[Candidate],
    pushed: Mapping[str, str] | None = None,
    read: Collection[str] = (),
    limit: int | None = None,
    decisions: dict[str, Reason] | None = None,
) -> tuple[list[Entry], str]:
    """The entries and text of a push of ``found``.

    ``pushed`` maps the ids a session already got to their form: those are left out, except
    that a lesson pushed as a line comes in full once when it is about a file in ``read``.
    ``limit`` caps the text's characters: full lessons turn into lines from the last, then
    entries are left out from the end. ``decisions``, when given, is filled with each
    candidate's id → the reason for its form or for leaving it out (reasons.py).
    """
    pushed = pushed or {}
    why: dict[str, Reason] = {} if decisions is None else decisions
    entries: list[Entry] = []
    fulls = 0
    for candidate in found:
        lesson = candidate.lesson
        if len(entries) >= MAX_ENTRIES:
            why[lesson.id] = Reason(
                reasons.MAX_ENTRIES, f"left out: {MAX_ENTRIES} entries came before it"
            )
            continue
        if not candidate.earns_entry:
            why[lesson.id] = candidate.why_out()
            continue
        before = pushed.get(lesson.id)
        if before == "full":
            why[lesson.id] = _pushed_before("in full")
            continue
        if before is not None:  # a line so far: in full once, when a file it is about is read
            if not any(path in read for path in lesson.paths):
                why[lesson.id] = _pushed_before("as a line")
                continue
            form = "full"
            why[lesson.id] = Reason(
                reasons.ABOUT_FILE, "in full once: a file it is about was read after its line"
            )
        else:
            why[lesson.id] = candidate.why_full()
            form = "full" if candidate.confident else "line"
        if form == "full" and fulls >= MAX_FULL:
            if before is not None:
                why[lesson.id] = _pushed_before("as a line, and two lessons in full came first")
                continue
            form = "line"
            why[lesson.id] = Reason(
                reasons.MAX_FULL, f"a line, not in full: {MAX_FULL} lessons in full came first"
            )
        fulls += form == "full"
        entries.append(Entry(candidate, form))
    text = render_push(entries)
    while limit is not None and entries and len(text) > limit:
        full = [i for i, entry in enumerate(entries) if entry.form == "full"]
        budget = f"the push reached its budget ({limit} characters)"
        if full:
            entry = entries[full[-1]]
            entry.form = "line"
            why[entry.candidate.lesson.id] = Reason(
                reasons.BUDGET, f"a line, not in full: {budget}"
            )
        else:
            entry = entries.pop()
            why[entry.candidate.lesson.id] = Reason(reasons.BUDGET, f"left out: {budget}")
        text = render_push(entries)
    return entries, text


def _pushed_before(form: str) -> Reason:
    return Reason(
        reasons.PUSHED_BEFORE,
        f"left out: pushed {form} earlier in this session (a lesson is pushed once a session)",
    )


@dataclass
class Step:
    """One hook's push in a session: its entries and text; ``spent`` when the session's
    budget left no room for what was new (``text`` is then :data:`SPENT`)."""

    entries: list[Entry]
    text: str
    spent: bool = False


def session_step(
    found: Sequence[Candidate],
    pushed: Mapping[str, str],
    chars: int,
    read: Collection[str],
    budget: int,
    decisions: dict[str, Reason] | None = None,
) -> Step:
    """The push of ``found`` in a session that already got ``pushed`` (id → form) and
    ``chars`` characters, within ``budget`` (push_session_budget; 0: no cap).

    The hooks (agents/hook.py) and ``reliora eval`` (evaluation/) both push through this.
    """
    entries, text = compose(found, pushed, read, decisions=decisions)
    left = budget - chars
    if entries and budget and len(text) > left:
        entries, text = compose(found, pushed, read, limit=left, decisions=decisions)
        if not entries:  # something new to say, and no room left for it this session
            if decisions is not None:
                spent = Reason(reasons.BUDGET, "left out: the session's pushes reached "
                               "push_session_budget")  # fmt: skip
                decisions.update(dict.fromkeys(decisions, spent))
            return Step([], SPENT, spent=True)
    return Step(entries, text)


def render_push(entries: Sequence[Entry]) -> str:
    """The framing line, the full lessons, then the lines ("" without entries)."""
    if not entries:
        return ""
    full = [entry.text for entry in entries if entry.form == "full"]
    lines = [entry.text for entry in entries if entry.form == "line"]
    parts = [FRAMING, *full]
    if lines:
        heading = "Also related (`reliora show ID` for one):" if full else "Possibly related:"
        parts.append("\n".join([heading, *lines]))
    return "\n\n".join(parts)


# --- rendering ----------------------------------------------------------------------------------


def _render(candidate: Candidate, data: Mapping[str, Any]) -> None:
    lesson = candidate.lesson
    show = f"(reliora show {lesson.id})"
    title = shorten(one_line(lesson.title), TITLE_FULL)
    body = [f"## {title} ({lesson.id})", _why(lesson) + "."]
    stale = lesson.freshness.line() if lesson.freshness else None
    if stale:
        body.append(one_line(stale))
    # Problem and solution read as the record has them: paragraphs, fenced code with its line
    # breaks and every character (text.py), cut at a sentence or block end.
    problems = [p for p in data.get("problems") or [] if isinstance(p, str)]
    problem = next((p for p in problems if one_line(p)), "") or _raw(data.get("task"))
    if problem:
        body.append(labelled("Problem", problem, PROBLEM_CHARS, show))
    solution = labelled("What worked", _raw(data.get("solution")), SOLUTION_CHARS, show)
    if solution:
        body.append(solution)
    for label, key in (("Watch out", "warnings"), ("Did not work", "failedAttempts")):
        items = [one_line(v) for v in data.get(key) or [] if isinstance(v, str) and v.strip()]
        if items:
            more = f" (+{len(items) - 1} more {show})" if len(items) > 1 else ""
            body.append(f"{label}: {cut(items[0], ITEM_CHARS, show)}{more}")
    if data.get("guards"):
        body.append("Its guard checks commits for this mistake (the pre-commit hook).")
    candidate.full = "\n".join(body)
    short = shorten(one_line(lesson.title), TITLE_LINE)
    candidate.line = f"- {short} ({lesson.id}): {_why(lesson, WORDS_ON_LINE, capital=False)}"


def _why(lesson: Lesson, words: int = WORDS_SHOWN, capital: bool = True) -> str:
    """About which file, or which words it shares with the task (no fields, no scores)."""
    if lesson.paths:
        shown = ", ".join(one_line(p) for p in lesson.paths[:2])
        more = f" and {len(lesson.paths) - 2} more" if len(lesson.paths) > 2 else ""
        text = f"about {shown}{more}"
    else:
        # The words the entry stands on first (earning.py): those in its title or tags, then
        # other telling words; never "shares 3, 10" while it shares a real word.
        on_line = {m.word for m in shown_on_line(lesson.matches)}
        matches = sorted(lesson.matches, key=lambda m: (m.word not in on_line, not telling(m.word)))
        text = "shares " + ", ".join(shown_words(matches, words))
    return text[0].upper() + text[1:] if capital else text


def shown_words(matches: Sequence[WordMatch], count: int) -> list[str]:
    """The first ``count`` words of ``matches`` (best first), each shown once (SPEC.md §14.2).

    One word can come twice: as a compound of two task words and as written (``time out``
    and ``timeout``), as two forms of one stem (``retry``, ``retries``), or from two matches
    of the same word. A match whose word or any record term it matched was already shown is
    left out. Words that are not telling (earning.py) are shown only when no telling word
    is: a line never reads ``shares retry, doesn``.
    """
    chosen = [m for m in matches if telling(m.word)] or list(matches)
    seen: set[str] = set()
    shown: list[str] = []
    for match in chosen:
        keys = {_key(match.word), *(_key(term) for term in match.terms)}
        if keys & seen:
            continue
        seen |= keys
        shown.append(match.word)
        if len(shown) == count:
            break
    return shown


def _key(word: str) -> str:
    return "".join(word.split()).casefold()


def shorten(text: str, limit: int) -> str:
    """``text`` whole when it fits ``limit`` characters, else cut at a space with an ellipsis."""
    if len(text) <= limit:
        return text
    window = text[: limit - 1]
    space = window.rfind(" ")
    return (window[:space] if space > limit // 2 else window).rstrip() + "…"


def _raw(value: Any) -> str:
    return value if isinstance(value, str) else ""
