"""``reliora eval``: the cases of ``.reliora/eval.toml`` and every lesson's reach, in one run
over the store index every command reads."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

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
    reach: Reach
    fail_under: float | None
    seconds: float

    @property
    def failed_cases(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.passed]

    @property
    def under(self) -> bool:
        """R@5 is under ``--fail-under``."""
        return self.fail_under is not None and self.reach.recall(5) < self.fail_under

    @property
    def passed(self) -> bool:
        return not self.failed_cases and not self.under

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "file": EVAL_FILE,
            "cases": [v.to_json() for v in self.verdicts],
            "failedCases": len(self.failed_cases),
            "reach": self.reach.to_json(),
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
    return [judge(case, replay(store, index, case, budget)) for case in cases]


def run_eval(store: Store, fail_under: float | None = None) -> EvalReport:
    check_fail_under(fail_under)
    started = time.perf_counter()
    index = open_index(store)
    try:
        verdicts = run_cases(store, index)
        reached = reach(index)
    finally:
        index.close()
    return EvalReport(verdicts, reached, fail_under, time.perf_counter() - started)
