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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reliora_git.records.guard_match import Meter
from reliora_git.records.guards import shown_pattern

if TYPE_CHECKING:
    from reliora_git.operations.guards import GuardOf

#: CPU seconds of matching per commit: some hundred times what 100 guards cost on a
#: 2,000-line change (docs/benchmarks.md).
COMMIT_SECONDS = 2.0
#: Per review (and per ``check`` of HEAD's code): it also runs new guards over all the code.
REVIEW_SECONDS = 10.0
BUDGET_VARIABLE = "RELIORA_GUARD_BUDGET"


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


@dataclass
class BudgetNote:
    """The guards ran out of time: who used it, and what was left undone."""

    seconds: float
    used: float
    #: How many guards were to run.
    guards: int
    #: The record and guard whose own searches took longest (None: no guard searched
    #: alone yet, all the time went into the passes of all guards at once).
    record_id: str | None
    number: int | None
    pattern: str | None
    slowest_seconds: float
    #: Seconds of the passes of all guards at once (an RE2 set over a chunk).
    together: float
    #: Files that not every guard searched.
    files_cut: int
    files: int

    def summary(self, what: str = "commit") -> str:
        """One line: the budget, who used most of it, what was left undone."""
        if self.record_id is not None and self.pattern is not None:
            from reliora_git.records.credentials import redact  # a pattern is record text

            pattern = redact(shown_pattern(self.pattern))
            who = (
                f"the slowest was guard {self.number} of lesson {self.record_id} "
                f"(`{pattern}`, {self.slowest_seconds:.2f} s; reliora show {self.record_id})"
            )
        else:
            who = "all of it went to searching the guards at once"
        files = f"{self.files} file{'s' * (self.files != 1)}"
        at_once = f", {self.together:.2f} s of it all at once" if self.together >= 0.005 else ""
        return (
            f"guards stopped: their {self.seconds:g} s for a {what} ran out ({self.used:.2f} s "
            f"used by {self.guards} guard{'s' * (self.guards != 1)}{at_once}); {who}; "
            f"{self.files_cut} of {files} not searched by every guard ({BUDGET_VARIABLE} sets "
            "the budget in seconds)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "used": round(self.used, 3),
            "guards": self.guards,
            "together": round(self.together, 3),
            "slowest": None
            if self.record_id is None
            else {
                "record": self.record_id,
                "guard": self.number,
                "pattern": self.pattern,
                "seconds": round(self.slowest_seconds, 3),
            },
            "filesNotSearchedByEveryGuard": self.files_cut,
            "files": self.files,
        }


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
