"""What an agent is told for a case: the hooks' pushes in a fresh session, replayed in memory.

A case is a prompt and the files the agent then reads. The hooks push for the prompt
(``UserPromptSubmit``), then for each file read (``PreToolUse``), once a session: a lesson
already pushed is not pushed again, except once in full when a file it is about is read
after it was only a line; the session stops at ``push_session_budget`` characters. The
selection and the composition are the hooks' own (brief/push.py: ``candidates`` and
``session_step``); only the session's memory is a dictionary here instead of a file under
the git directory, so an eval writes nothing and no earlier session counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reliora_git.operations.brief import push
from reliora_git.operations.brief.reasons import Reason
from reliora_git.operations.brief.selection import Situation
from reliora_git.operations.evaluation.cases import Case
from reliora_git.operations.paths import in_store_folder
from reliora_git.storage.index import StoreIndex
from reliora_git.storage.store import Store


@dataclass(frozen=True)
class Pushed:
    """A lesson as the session got it: ``form`` is ``full`` or ``line`` (full once wins)."""

    id: str
    title: str
    form: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title, "form": self.form}


def situations(case: Case) -> list[tuple[Situation, tuple[str, ...]]]:
    """The hook events of ``case`` in order, as (situation, files read)."""
    events: list[tuple[Situation, tuple[str, ...]]] = [(Situation(case.prompt), ())]
    # As the hook: reading the store's own files pushes nothing.
    read = [path for path in case.files if not in_store_folder(path)]
    events += [(Situation(files=(path,)), (path,)) for path in read]
    return events


def replay(
    store: Store,
    index: StoreIndex,
    case: Case,
    budget: int,
    *,
    freshness: bool = True,
    decisions: dict[str, Reason] | None = None,
) -> list[Pushed]:
    """The lessons ``case``'s session is pushed, in the order first pushed, with their form.

    ``budget``: the store's ``push_session_budget``. ``freshness=False``: no ``stale:`` line
    (for trees that are not checked out: it only lengthens a lesson's text). ``decisions``,
    when given, gets each candidate's reason for its form (brief/reasons.py): the first
    event's that made it a candidate, unless a later one pushed it in full.
    """
    forms: dict[str, str] = {}
    titles: dict[str, str] = {}
    chars = 0
    for situation, read in situations(case):
        _, found = push.candidates(store, situation, index=index, freshness=freshness)
        if not found:
            continue
        step_why: dict[str, Reason] | None = {} if decisions is not None else None
        step = push.session_step(found, forms, chars, read, budget, step_why)
        if decisions is not None and step_why is not None:
            for record_id, reason in step_why.items():
                if record_id not in decisions or reason.rule in _FULL_RULES:
                    decisions[record_id] = reason
        if step.spent:
            break
        chars += len(step.text)
        for entry in step.entries:
            lesson = entry.candidate.lesson
            titles[lesson.id] = lesson.title
            if forms.get(lesson.id) != "full":
                forms[lesson.id] = entry.form
    return [Pushed(record_id, titles[record_id], form) for record_id, form in forms.items()]


_FULL_RULES = ("full", "about_file")


@dataclass(frozen=True)
class Verdict:
    """A case's result: what was pushed, and what it expected that did not hold."""

    case: Case
    pushed: tuple[Pushed, ...]
    #: Expected ids not pushed, or only as a line when ``full = true``: (id, "missing"|"line").
    missing: tuple[tuple[str, str], ...]
    #: ``never`` ids that were pushed, with their form.
    unwanted: tuple[Pushed, ...]
    #: Expected id → why it was not pushed, or only as a line (the push's own reason).
    why: dict[str, Reason] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.missing and not self.unwanted

    def to_json(self) -> dict[str, object]:
        return {
            "number": self.case.number,
            "name": self.case.name or None,
            "line": self.case.line,
            "prompt": self.case.prompt,
            "files": list(self.case.files),
            "passed": self.passed,
            "pushed": [p.to_json() for p in self.pushed],
            "missing": [
                {"id": i, "got": got, **_why_json(self.why.get(i))} for i, got in self.missing
            ],
            "unwanted": [p.to_json() for p in self.unwanted],
        }


def _why_json(reason: Reason | None) -> dict[str, str]:
    return {} if reason is None else {"rule": reason.rule, "why": reason.text}


def judge(case: Case, pushed: Sequence[Pushed]) -> Verdict:
    forms = {p.id: p.form for p in pushed}
    missing = []
    for record_id in case.expect:
        form = forms.get(record_id)
        if form is None:
            missing.append((record_id, "missing"))
        elif case.full and form != "full":
            missing.append((record_id, "line"))
    unwanted = tuple(p for p in pushed if p.id in case.never)
    return Verdict(case, tuple(pushed), tuple(missing), unwanted)
