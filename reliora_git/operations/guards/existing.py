"""At save: new guards that already match the working tree (SPEC.md §15).

A new guard describes a mistake the code does not contain yet; one that matches
today would fire on every commit touching those lines. ``record``/``update``
refuse it with the first matches, unless the person accepts them
(``--allow-existing``): then the guard is saved with ``existing: allowed``, so
that ``check``, the hook and ``review`` read the same acceptance from the record
and judge the guard alike (a warning, never an invalid record).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reliora_git.operations.guards.nouns import GuardFinding, GuardOf
from reliora_git.operations.guards.scan import mask_secrets, working_tree_report
from reliora_git.records.errors import RelioraError
from reliora_git.records.guards import EXISTING_ALLOWED, resolve
from reliora_git.records.text import escape_invisible

if TYPE_CHECKING:
    from reliora_git.records.model import Guard, Record
    from reliora_git.storage.store import Store

#: How many of the lines a new guard already matches are named.
SHOWN_EXISTING = 5


@dataclass(frozen=True)
class AcceptedMatches:
    """A new guard saved although it matches the code: the person accepted it."""

    number: int
    pattern: str
    #: The first lines it matches (``path:line``).
    where: tuple[str, ...]

    @property
    def message(self) -> str:
        return (
            f"guard {self.number} already matches the code ({', '.join(self.where)}); "
            f"saved with existing: {EXISTING_ALLOWED} (--allow-existing)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "code": "GUARD_MATCHES_EXISTING_CODE",
            "guard": self.number,
            "matches": list(self.where),
            "message": self.message,
        }


def where_it_fires(guard: Guard) -> tuple[Any, ...]:
    """What makes two guards the same at save: pattern, paths and exclusions."""
    return (guard.pattern, guard.paths, guard.exclude)


def judge_existing(
    store: Store, record: Record, before: Sequence[Guard] = (), *, allow: bool = False
) -> list[AcceptedMatches]:
    """Refuse the new guards of ``record`` (not in ``before``) that match the working tree,
    or with ``allow`` mark them ``existing: allowed`` in ``record`` and say which.

    A guard whose record already says ``existing: allowed`` was accepted: not judged.
    """
    old = {where_it_fires(g) for g in before}
    fresh = [
        n
        for n, g in enumerate(record.guards, start=1)
        if where_it_fires(g) not in old and not g.existing_allowed
    ]
    if not fresh:
        return []
    resolved = resolve(record, record.guards)
    guards = [
        GuardOf(record.id or "(new)", record.locator, resolved[n - 1], tuple(record.paths))
        for n in fresh
    ]
    # Refusing needs the first few lines; accepting needs each guard that matches (a few
    # lines each: `^` matches every line, and the scan stops once every guard has them).
    if allow:
        report = working_tree_report(store, guards, each_guard=True, enough=SHOWN_EXISTING)
    else:
        report = working_tree_report(store, guards, limit=SHOWN_EXISTING)
    if not report.findings:
        return []
    mask_secrets(report.findings)
    if not allow:
        _refuse(report.findings)
    by_guard: dict[int, list[GuardFinding]] = {}
    for finding in report.findings:
        by_guard.setdefault(finding.number, []).append(finding)
    accepted = []
    for number, found in sorted(by_guard.items()):
        guard = record.guards[number - 1]
        record.guards[number - 1] = dataclasses.replace(guard, existing=EXISTING_ALLOWED)
        where = tuple(f"{escape_invisible(f.path)}:{f.line}" for f in found[:SHOWN_EXISTING])
        accepted.append(AcceptedMatches(number, guard.pattern, where))
    return accepted


def _refuse(findings: Sequence[GuardFinding]) -> None:
    numbers = sorted({f.number for f in findings})
    shown = "; ".join(f"{escape_invisible(f.path)}:{f.line}: {f.text}" for f in findings)
    more = " (and maybe more)" if len(findings) >= SHOWN_EXISTING else ""
    which = "guard {} already matches" if len(numbers) == 1 else "guards {} already match"
    raise RelioraError(
        f"{which.format(', '.join(map(str, numbers)))} the code: {shown}{more}. "
        "A guard describes a mistake the code does not contain; change the pattern, its "
        "paths or --guard-exclude, or save it anyway with --allow-existing",
        code="guard_matches",
    )
