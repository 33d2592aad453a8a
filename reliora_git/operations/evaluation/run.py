"""``reliora eval``: the cases of ``.reliora/eval.toml`` and every lesson's reach, in one run
over the store index every command reads."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from reliora_git.operations.brief.reasons import Reason
from reliora_git.operations.evaluation.cases import EVAL_FILE, check_ids, read_cases
from reliora_git.operations.evaluation.reach import Reach, reach
from reliora_git.operations.evaluation.replay import Verdict, judge, replay
from reliora_git.records.errors import RelioraError
from reliora_git.storage.config import load_config
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import Store


@dataclass
class EvalReport:
    verdicts: list[Verdict]
    #: None with ``--cases``: the cases only.
    reach: Reach | None
    fail_under: float | None
    seconds: float

    @property
    def failed_cases(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.passed]

    @property
    def under(self) -> bool:
        """R@5 is under ``--fail-under``."""
        return (
            self.fail_under is not None
            and self.reach is not None
            and self.reach.recall(5) < self.fail_under
        )

    @property
    def passed(self) -> bool:
        return not self.failed_cases and not self.under

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "file": EVAL_FILE,
            "cases": [v.to_json() for v in self.verdicts],
            "failedCases": len(self.failed_cases),
            "reach": None if self.reach is None else self.reach.to_json(),
            "failUnder": self.fail_under,
            "seconds": round(self.seconds, 3),
        }


def check_fail_under(value: float | None) -> None:
    if value is not None and not 0.0 <= value <= 1.0:
        raise RelioraError("--fail-under must be between 0 and 1 (an R@5 share)", code="usage")


def run_cases(store: Store, index: StoreIndex) -> list[Verdict]:
    """Each case of the store's eval.toml replayed as the hooks push it, and judged."""
    cases = read_cases(store)
    known = {doc.id for doc in index.all_docs if doc is not None}
    check_ids(cases, known)
    budget = load_config(store).push_session_budget
    verdicts = []
    for case in cases:
        decisions: dict[str, Reason] = {}
        verdict = judge(case, replay(store, index, case, budget, decisions=decisions))
        if verdict.missing:
            verdict = replace(verdict, why=why_missing(store, index, verdict, decisions))
        verdicts.append(verdict)
    return verdicts


def why_missing(
    store: Store, index: StoreIndex, verdict: Verdict, decisions: dict[str, Reason]
) -> dict[str, Reason]:
    """Why each expected lesson of a failed case was not pushed, or only as a line: the
    session's own reason when it was a candidate, else why the prompt's push does not
    consider it (brief/explain.py: under the floor, past the limit, retired…)."""
    from reliora_git.operations.brief.explain import explain
    from reliora_git.operations.brief.push import push
    from reliora_git.operations.brief.selection import Situation

    found = {i: decisions[i] for i, _ in verdict.missing if i in decisions}
    rest = [i for i, _ in verdict.missing if i not in found]
    if rest:
        result = push(store, verdict.case.prompt, index=index)
        for item in explain(result, index, Situation(verdict.case.prompt), rest):
            found[item.id] = item.reason
    return found


def run_eval(
    store: Store, fail_under: float | None = None, *, cases_only: bool = False
) -> EvalReport:
    """The cases, then (unless ``cases_only``) every lesson's reach."""
    check_fail_under(fail_under)
    if cases_only and fail_under is not None:
        raise RelioraError(
            "--fail-under judges the reach, which --cases leaves out: use one or the other",
            code="usage",
        )
    started = time.perf_counter()
    index = open_index(store)
    try:
        verdicts = run_cases(store, index)
        reached = None if cases_only else reach(index)
    finally:
        index.close()
    return EvalReport(verdicts, reached, fail_under, time.perf_counter() - started)
