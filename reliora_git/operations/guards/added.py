"""The guards a change adds, modifies or turns on, for ``review`` (SPEC.md §15).

A guard that a pull request adds runs on every commit once it is merged: a
``block`` guard ``^`` would stop them all. So ``review`` names each guard the
change brings (its pattern, the files it looks at, its severity) and runs it
over every file of head: a guard that already matches head's code is an error
on its record, as ``record`` refuses it at save (a guard describes a mistake the
code does not contain), and ``review`` exits 1. One whose record says
``existing: allowed`` (saved with ``--allow-existing``) was accepted as it is: a
warning, as ``check`` gives for it, never an invalid record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliora_git.operations.guards.nouns import GuardFinding, GuardOf, GuardReport
from reliora_git.operations.guards.scan import tree_report
from reliora_git.records.guard_match import Meter
from reliora_git.records.guards import ActiveGuard, resolve, shown_pattern
from reliora_git.records.model import Problem

if TYPE_CHECKING:
    from reliora_git.records.model import Record
    from reliora_git.storage.store import Store

#: How many of the lines of head a new guard matches are named.
SHOWN_MATCHES = 5


@dataclass
class GuardChange:
    """One guard that a change adds, modifies or turns on (its record becomes active)."""

    record_id: str
    locator: str
    #: Its position in the record (1-based).
    number: int
    #: ``added``, ``modified`` (the same pattern, other paths or severity) or ``turned on``.
    kind: str
    pattern: str
    #: The files it looks at: its globs, else the record's paths; empty: every file.
    paths: list[str]
    severity: str
    message: str
    #: Whether it runs once merged: its record is valid and active at head.
    runs: bool
    #: The first lines of head's code it matches already.
    matches: list[GuardFinding] = field(default_factory=list)
    #: It matches more lines than ``matches`` names.
    more: bool = False
    #: Globs of files it never looks at.
    exclude: list[str] = field(default_factory=list)
    #: Its record says the matches already in the code were accepted (``existing: allowed``).
    existing_allowed: bool = False

    @property
    def refused(self) -> bool:
        """It matches head's code and nobody accepted that: ``review`` fails."""
        return bool(self.matches) and not self.existing_allowed

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record_id,
            "guard": self.number,
            "change": self.kind,
            "pattern": self.pattern,
            "paths": self.paths,
            "exclude": self.exclude,
            "severity": self.severity,
            "message": self.message,
            "existing": "allowed" if self.existing_allowed else None,
            "runs": self.runs,
            "matchesHead": [{"path": f.path, "line": f.line, "text": f.text} for f in self.matches],
            "moreMatches": self.more,
        }

    def problem(self) -> Problem | None:
        """An error on the record when the guard already matches head's code (a warning
        when its record accepted that: ``existing: allowed``)."""
        if not self.matches:
            return None
        where = ", ".join(f"{f.path}:{f.line}" for f in self.matches)
        more = " and more" if self.more else ""
        if self.existing_allowed:
            return Problem(
                "warning",
                f"guard {self.number} (`{shown_pattern(self.pattern)}`) matches head's code "
                f"({where}{more}): matches accepted when it was saved (existing: allowed); "
                "it fires when those lines are touched",
            )
        return Problem(
            "error",
            f"guard {self.number} (`{shown_pattern(self.pattern)}`) already matches head's "
            f"code ({where}{more}): once merged it fires on every commit that touches those "
            "lines. A guard describes a mistake the code does not contain: fix those lines "
            "in this change, or narrow the guard's pattern or paths",
        )


def changed_guards(
    store: Store,
    active: Sequence[GuardOf],
    records: Sequence[tuple[str, Record, Record | None]],
    head: str,
    meter: Meter,
) -> tuple[list[GuardChange], GuardReport]:
    """The guards ``records`` bring, and how their run over every file of ``head`` went.

    ``active``: the guards of head's active, valid records (what runs once merged);
    ``records``: (head locator, head record, base record or None) of each record the
    change adds, modifies or renames. A guard is listed when base did not have it, with
    the same pattern, paths and severity, in an active record.
    """
    changes: list[GuardChange] = []
    for locator, record, before in records:
        changes.extend(_brought(locator, record, before))
    wanted = {(c.locator, c.number) for c in changes}
    running = [g for g in active if (g.locator, g.guard.number) in wanted]
    ran = {(g.locator, g.guard.number) for g in running}
    for change in changes:
        change.runs = (change.locator, change.number) in ran
    if not running:
        return changes, GuardReport()
    return changes, _match_head(store, running, head, meter, changes)


def _brought(locator: str, record: Record, before: Record | None) -> list[GuardChange]:
    """The guards of ``record`` that ``before`` did not have active."""
    if not record.guards:
        return []
    old: dict[tuple[Any, ...], ActiveGuard] = {}
    was_active = before is not None and before.status not in ("retired", "superseded")
    if before is not None:
        old = {_meaning(g): g for g in resolve(before, before.guards)}
    patterns = {key[0] for key in old}
    found = []
    for guard in resolve(record, record.guards):
        key = _meaning(guard)
        if key in old and was_active:
            continue
        kind = "turned on" if key in old else "modified" if guard.pattern in patterns else "added"
        found.append(
            GuardChange(
                record.id or "(no id)",
                locator,
                guard.number,
                kind,
                guard.pattern,
                list(guard.paths),
                guard.severity,
                guard.message,
                runs=False,
                exclude=list(guard.exclude),
                existing_allowed=guard.existing_allowed,
            )
        )
    return found


def _meaning(guard: ActiveGuard) -> tuple[Any, ...]:
    """What decides where a guard fires and what it does (not its message)."""
    return (guard.pattern, guard.scope, guard.paths, guard.exclude, guard.severity)


def _match_head(
    store: Store, running: list[GuardOf], head: str, meter: Meter, changes: list[GuardChange]
) -> GuardReport:
    """Fill each change's ``matches`` with the first lines of head that its guard matches."""
    report = tree_report(store, running, head, meter, each_guard=True, enough=SHOWN_MATCHES + 1)
    by_guard = {(c.record_id, c.number): c for c in changes if c.runs}
    for finding in report.findings:
        change = by_guard.get((finding.record_id, finding.number))
        if change is None:
            continue
        if len(change.matches) < SHOWN_MATCHES:
            change.matches.append(finding)
        else:
            change.more = True
    return report
