"""Plain data shared by the pure core and the I/O layers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CONFIDENCES = ("low", "medium", "high")
STATUSES = ("active", "superseded", "retired")
OUTCOMES = ("success", "partial", "failure", "not-applicable", "outdated")
#: The task ranking reads a record's first this-many asked-as lines (SPEC.md §3: 2-5), each up
#: to MAX_ASKED_CHARS characters: a record from a pull request cannot stuff the field with a
#: store's vocabulary (records/validate.py warns past them).
MAX_ASKED = 5
MAX_ASKED_CHARS = 200
#: What a draft holds where its writer is to write the asked-as lines (history, ``record
#: --from-commit``): never text made up by the tool. A line starting with "…" is a placeholder
#: left unfilled, and is dropped when the record is saved (records/validate.py).
ASKED_AS_PLACEHOLDER = (
    "… how someone would ask an agent for a task where this lesson helps, in their words, "
    "not the commit's: the symptom they see, what they are building (2-5 lines)"
)

#: Body sections in canonical order: (heading, JSON name, is a list).
SECTIONS: tuple[tuple[str, str, bool], ...] = (
    ("Task", "task", False),
    ("Problems", "problems", True),
    ("Solution", "solution", False),
    ("Why it worked", "whyItWorked", False),
    ("Failed attempts", "failedAttempts", True),
    ("Warnings", "warnings", True),
    ("Applicability", "applicability", False),
    ("Verification", "verification", False),
    ("Asked as", "askedAs", True),
)


@dataclass(frozen=True)
class Guard:
    """One guard as the record says it (defaults are applied by :func:`resolve`)."""

    pattern: str
    paths: tuple[str, ...] = ()
    message: str = ""
    severity: str = "warn"
    #: Globs of files it never looks at (the one module that legitimately wraps the call).
    exclude: tuple[str, ...] = ()
    #: ``allowed``: the person accepted the matches already in the code when saving it
    #: (``--allow-existing``); '' otherwise.
    existing: str = ""

    @property
    def existing_allowed(self) -> bool:
        return self.existing == "allowed"

    def to_json(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "paths": list(self.paths),
            "exclude": list(self.exclude),
            "message": self.message,
            "severity": self.severity,
            "existing": self.existing or None,
        }

    def to_yaml(self) -> dict[str, Any]:
        """What the front matter holds: the pattern, and what differs from the defaults."""
        data: dict[str, Any] = {"pattern": self.pattern}
        if self.paths:
            data["paths"] = list(self.paths)
        if self.exclude:
            data["exclude"] = list(self.exclude)
        if self.message:
            data["message"] = self.message
        data["severity"] = self.severity
        if self.existing:
            data["existing"] = self.existing
        return data


@dataclass
class Record:
    """One experience. Text fields are '' and list fields [] when absent."""

    id: str = ""
    title: str = ""
    tags: list[str] = field(default_factory=list)
    project_context: str = ""
    confidence: str | None = None
    status: str = "active"
    created: str | None = None
    updated: str | None = None
    author: str | None = None
    supersedes: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    #: Checks of the code a change adds (SPEC.md §15; records/guards.py).
    guards: list[Guard] = field(default_factory=list)
    task: str = ""
    problems: list[str] = field(default_factory=list)
    solution: str = ""
    why_it_worked: str = ""
    failed_attempts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    applicability: str = ""
    verification: str = ""
    #: How people would ask for a task this lesson helps with (SPEC.md §3): read by the task
    #: ranking as a field of its own, so tasks that share no word with the title find it.
    asked_as: list[str] = field(default_factory=list)
    #: Front-matter keys this version does not know, kept verbatim on rewrite.
    extra_meta: dict[str, Any] = field(default_factory=dict)
    #: Body sections this version does not know: (heading, text), in file order.
    extra_sections: list[tuple[str, str]] = field(default_factory=list)
    #: Text before the first heading, kept on rewrite.
    preamble: str = ""
    #: Repo-relative POSIX path of the file; '' for a record not yet saved.
    locator: str = ""

    @property
    def is_active(self) -> bool:
        return self.status not in ("retired", "superseded")


@dataclass(frozen=True)
class Problem:
    """A validation finding. ``severity`` is 'error' or 'warning'."""

    severity: str
    message: str
    line: int | None = None


@dataclass(frozen=True)
class FeedbackEvent:
    record: str
    outcome: str
    at: str
    author: str | None = None
    note: str = ""
    locator: str = ""


@dataclass(frozen=True)
class FeedbackSummary:
    success: int = 0
    partial: int = 0
    failure: int = 0
    not_applicable: int = 0
    outdated: int = 0
    adjustment: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "success": self.success,
            "partial": self.partial,
            "failure": self.failure,
            "notApplicable": self.not_applicable,
            "outdated": self.outdated,
            "adjustment": round(self.adjustment, 4),
        }
