"""The time guards may spend on one commit or one review, and the line that says it ran out.

Guards are linear, but not free: a few hundred hostile patterns cost seconds a
megabyte (records/guard_match.py). A commit (``check --staged``) and a review
each give the guards a budget of CPU seconds; when it runs out, the remaining
searches are skipped and one line says so, naming the guard that used most of
it — never silently. ``RELIORA_GUARD_BUDGET`` (seconds) sets it: it is read
from the environment of whoever runs the check, never from the store, whose
config a pull request could change.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from reliora_git.operations.guards.nouns import BUDGET_VARIABLE, BudgetNote
from reliora_git.records.guard_match import Meter

if TYPE_CHECKING:
    from reliora_git.operations.guards.nouns import GuardOf

#: CPU seconds of matching per commit: some hundred times what 100 guards cost on a
#: 2,000-line change (docs/benchmarks.md).
COMMIT_SECONDS = 2.0
#: Per review (and per ``check`` of HEAD's code): it also runs new guards over all the code.
REVIEW_SECONDS = 10.0


def budget_meter(default: float) -> Meter:
    """A meter with the budget ``RELIORA_GUARD_BUDGET`` gives (seconds), else ``default``."""
    given = os.environ.get(BUDGET_VARIABLE, "").strip()
    try:
        seconds = float(given) if given else default
    except ValueError:
        seconds = default  # a typo must not turn the guards off
    if seconds != seconds:  # nan
        seconds = default
    return Meter(max(seconds, 0.0))


def note_of(meter: Meter, guards: Sequence[GuardOf], files: int) -> BudgetNote | None:
    """What to say when ``meter`` ran out before every guard searched every file (else None)."""
    if not meter.cut or meter.seconds is None:
        return None
    pattern, seconds = max(meter.spent.items(), key=lambda kv: kv[1], default=(None, 0.0))
    named = next((g for g in guards if g.guard.pattern == pattern), None)
    return BudgetNote(
        meter.seconds,
        meter.used,
        len(guards),
        named.record_id if named else None,
        named.guard.number if named else None,
        pattern if named else None,
        seconds,
        meter.together,
        meter.cut,
        files,
    )
