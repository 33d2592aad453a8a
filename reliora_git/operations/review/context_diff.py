"""How a change alters what agents are told: the pushes at base and at head, and what differs.

For each eval case (``.reliora/eval.toml`` as head has it) and for the task of each record
the change adds or modifies (a record without a Task by its first problem, as ``eval``
judges reach), the hooks' push in a fresh session (evaluation/replay.py) is computed over
the store at base and over the store at head, both read from git objects through the
store index (no checkout: base's index is opened from its tree as head's is, patched from
head's in memory, and not saved over it). What differs is a lesson entering or leaving
the push, or going from a line to full and back.

Files a case names are matched against the records' paths only, so the trees' code is not
read; a lesson's ``stale:`` line (from the working tree's history) is left out on both
sides. A head eval.toml that does not read is reported, not raised: the review goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reliora_git.gitrepo import git
from reliora_git.operations.evaluation.cases import EVAL_FILE, Case, parse_cases
from reliora_git.operations.evaluation.reach import own_task
from reliora_git.operations.evaluation.replay import Pushed, judge, replay
from reliora_git.records.errors import RelioraError
from reliora_git.storage.config import load_config
from reliora_git.storage.gitfiles import EXPERIENCES, FEEDBACK, GitFiles
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.parallel import mapper
from reliora_git.storage.store import MAX_RECORD_BYTES, Store, decode_utf8

#: Record tasks pushed at most (two pushes each, 5–30 ms a push from 1,000 to 10,000 records):
#: a pull request that imports a thousand notes must not make the review take minutes.
MAX_RECORD_TASKS = 50


@dataclass(frozen=True)
class FormChange:
    id: str
    title: str
    base: str
    head: str


@dataclass
class PromptDiff:
    """One prompt's push at base and at head."""

    #: "case" (an eval case) or "record" (the task of a record the change adds or modifies).
    kind: str
    #: The case's name (``case N``) or the record's id.
    label: str
    prompt: str
    files: tuple[str, ...]
    base: list[Pushed]
    head: list[Pushed]
    #: For an eval case: whether it passes at base and at head (None for a record's task).
    passed: tuple[bool, bool] | None = None

    @property
    def flips(self) -> bool:
        """An eval case that passes on one side and fails on the other."""
        return self.passed is not None and self.passed[0] != self.passed[1]

    @property
    def entering(self) -> list[Pushed]:
        before = {p.id for p in self.base}
        return [p for p in self.head if p.id not in before]

    @property
    def leaving(self) -> list[Pushed]:
        after = {p.id for p in self.head}
        return [p for p in self.base if p.id not in after]

    @property
    def form_changes(self) -> list[FormChange]:
        before = {p.id: p.form for p in self.base}
        return [
            FormChange(p.id, p.title, before[p.id], p.form)
            for p in self.head
            if p.id in before and before[p.id] != p.form
        ]

    @property
    def differs(self) -> bool:
        return bool(self.entering or self.leaving or self.form_changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "prompt": self.prompt,
            "files": list(self.files),
            "differs": self.differs,
            "base": [p.to_json() for p in self.base],
            "head": [p.to_json() for p in self.head],
            "entering": [p.to_json() for p in self.entering],
            "leaving": [p.to_json() for p in self.leaving],
            "formChanges": [
                {"id": c.id, "title": c.title, "base": c.base, "head": c.head}
                for c in self.form_changes
            ],
            "passed": None
            if self.passed is None
            else {"base": self.passed[0], "head": self.passed[1]},
        }


@dataclass
class ContextDiff:
    prompts: list[PromptDiff] = field(default_factory=list)
    #: Why head's eval.toml was not used (it does not read), else None.
    cases_error: RelioraError | None = None
    #: Added or modified records whose task was not pushed (beyond MAX_RECORD_TASKS).
    records_left_out: int = 0

    @property
    def changed(self) -> list[PromptDiff]:
        return [p for p in self.prompts if p.differs]

    def count(self, kind: str) -> int:
        return sum(p.kind == kind for p in self.prompts)

    @property
    def flipped(self) -> list[PromptDiff]:
        """The eval cases whose result changes: passing at base and failing at head, or back."""
        return [p for p in self.prompts if p.flips]

    def to_json(self) -> dict[str, Any]:
        return {
            "compared": {"cases": self.count("case"), "records": self.count("record")},
            "changed": len(self.changed),
            "casesError": None if self.cases_error is None else str(self.cases_error),
            "recordsLeftOut": self.records_left_out,
            "prompts": [p.to_json() for p in self.prompts],
            "casesChanged": [
                {
                    "label": p.label,
                    "base": "passed" if p.passed and p.passed[0] else "failed",
                    "head": "passed" if p.passed and p.passed[1] else "failed",
                }
                for p in self.flipped
            ],
        }


def context_diff(
    store: Store,
    head_index: StoreIndex,
    base_commit: str,
    head_commit: str,
    changed_ids: list[str],
) -> ContextDiff:
    """The pushes at base and at head for head's eval cases and ``changed_ids``' tasks.

    ``head_index``: the store at head (review/trees.py); ``changed_ids``: the records the
    change adds or modifies, at head (the first :data:`MAX_RECORD_TASKS` with a task).
    """
    found = ContextDiff()
    prompts: list[tuple[str, Case]] = []
    prefix = git.show_prefix(store.root)  # the store's folder from the top of the repository
    try:
        prompts += [("case", case) for case in head_cases(store, head_commit, prefix)]
    except RelioraError as error:
        found.cases_error = error
    tasks = 0
    for number, record_id in enumerate(changed_ids, 1):
        slot = head_index.slot_of(record_id)
        asked = own_task(head_index.record_json(slot)) if slot is not None else None
        if asked is None:
            continue
        if tasks == MAX_RECORD_TASKS:
            found.records_left_out += 1
            continue
        tasks += 1
        prompts.append(("record", Case(number, None, asked[0], name=record_id)))
    if not prompts:
        return found
    budget = load_config(store).push_session_budget
    with tree_index(store, base_commit, head_index, prefix) as base_index:
        _SHARED.append((store, base_index, head_index, budget))
        try:
            # A push costs about as much as parsing records/100 files (5 ms at 1,000 records,
            # 30 ms at 10,000): large stores spread the prompts over worker processes, forked
            # with both indexes in memory (storage/parallel.py); results keep their order.
            weight = 2 * len(prompts) * max(1, len(head_index.slots()) // 100)
            with mapper(weight) as run:
                for part in run(_diff_all, prompts):
                    found.prompts += part
        finally:
            _SHARED.pop()
    return found


#: (store, base index, head index, push_session_budget) while :func:`context_diff` runs.
_SHARED: list[tuple[Store, StoreIndex, StoreIndex, int]] = []


def _diff_all(prompts: Sequence[tuple[str, Case]]) -> list[PromptDiff]:
    store, base_index, head_index, budget = _SHARED[-1]
    found = []
    for kind, case in prompts:
        base = replay(store, base_index, case, budget, freshness=False)
        head = replay(store, head_index, case, budget, freshness=False)
        passed = (judge(case, base).passed, judge(case, head).passed) if kind == "case" else None
        found.append(PromptDiff(kind, case.label, case.prompt, case.files, base, head, passed))
    return found


def head_cases(store: Store, commit: str, prefix: str) -> list[Case]:
    """The cases of the eval.toml ``commit`` holds ([] without one); ``prefix``: the store
    folder's path in the repository (``git rev-parse --show-prefix`` in it)."""
    entries = git.ls_tree(store.root, commit, [EVAL_FILE])
    if not entries:
        return []
    entry = entries[0]
    locator = entry.path[len(prefix) :]
    if entry.mode not in ("100644", "100755"):
        raise RelioraError("is not a regular file", path=locator, code="invalid_eval")
    blob = git.read_blobs(store.root, [entry.blob], MAX_RECORD_BYTES).get(entry.blob)
    if blob is None or blob.data is None:
        raise RelioraError("is larger than 1 MiB", path=locator, code="invalid_eval")
    return parse_cases(decode_utf8(blob.data, locator), locator)


def tree_index(store: Store, commit: str, like: StoreIndex, prefix: str) -> StoreIndex:
    """The store as ``commit`` has it, patched in memory from ``like`` (another tree's
    index): only the blobs ``like`` lacks are parsed, and the saved index is left as it is."""
    specs = [EXPERIENCES.rstrip("/"), FEEDBACK.rstrip("/")]
    files = [
        (entry.path[len(prefix) :], entry.mode, entry.blob)
        for entry in git.ls_tree(store.root, commit, specs)
    ]
    return open_index(store, like.state, source=GitFiles.of(store, files), save=False)
