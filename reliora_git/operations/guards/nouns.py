"""The nouns of guards: a guard and its record, a finding, a report, a budget's note.

Plain data, imported by every module of this wing and by what shows guards to people.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliora_git.records.guards import ActiveGuard, shown_pattern
from reliora_git.records.text import escape_invisible, neutralize

if TYPE_CHECKING:
    from reliora_git.storage.guardlist import GuardRow

#: The variable that sets the guards' time (read in budget.py, named in a budget's note).
BUDGET_VARIABLE = "RELIORA_GUARD_BUDGET"


@dataclass(frozen=True)
class GuardOf:
    """An active guard and the record it belongs to."""

    record_id: str
    locator: str
    guard: ActiveGuard
    #: The record's own paths (what its freshness is measured on).
    record_paths: tuple[str, ...] = ()

    def row(self) -> GuardRow:
        return (self.record_id, self.locator, tuple(self.guard), self.record_paths)

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> GuardOf:
        return cls(row[0], row[1], ActiveGuard(*row[2]), tuple(row[3]))


@dataclass
class GuardFinding:
    """One line that repeats a lesson."""

    path: str
    line: int
    record_id: str
    severity: str
    message: str
    #: The line itself, cleaned (invisible characters escaped, secrets masked, cut).
    text: str = ""
    stale: bool = False
    #: The guard's position in its record (1-based).
    number: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "record": self.record_id,
            "severity": self.severity,
            "message": self.message,
            "stale": self.stale,
            "text": self.text,
        }

    def summary(self) -> str:
        """``src/dates.py:14: repeats lesson ID: message (reliora show ID)``."""
        stale = " (stale: its code changed since it was recorded)" if self.stale else ""
        # Commit output reaches agents that commit: the message (from a record, so from a pull
        # request) has its tags and turn markers neutralised, its invisible characters shown.
        message = neutralize(escape_invisible(" ".join(self.message.split())))
        return (
            f"{escape_invisible(self.path)}:{self.line}: repeats lesson {self.record_id}{stale}: "
            f"{message} (reliora show {self.record_id})"
        )


@dataclass
class GuardReport:
    findings: list[GuardFinding] = field(default_factory=list)
    #: Files not judged and why (too large).
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: How many guards ran.
    guards: int = 0
    #: Set when the guards' time ran out: what was not searched, and who used it.
    budget: BudgetNote | None = None
    #: How many files the guards were to search.
    files: int = 0

    @property
    def blocking(self) -> list[GuardFinding]:
        return [f for f in self.findings if f.severity == "block"]

    def to_json(self) -> list[dict[str, Any]]:
        return [finding.to_json() for finding in self.findings]


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
