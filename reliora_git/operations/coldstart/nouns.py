"""The nouns of the cold start: an entry, its evidence parts and its evidence. Pure data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Part:
    """One piece of evidence and what it adds to the score."""

    name: str
    score: float
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"part": self.name, "score": round(self.score, 3), "text": self.text}


@dataclass
class Entry:
    """A place where the repository wrote a lesson down."""

    source: str  # "pull-request", "changelog", "commit" or "session"
    sha: str  # the commit it stands on ("" for a session)
    commits: list[str]
    title: str
    time: int
    author: str
    files: list[str]
    parts: list[Part] = field(default_factory=list)
    pull_request: int | None = None
    #: What the repository says about it, for the draft: its title, the pull request's body,
    #: each commit's message.
    texts: list[str] = field(default_factory=list)
    changelog: list[str] = field(default_factory=list)
    #: Files of ``files`` that exist at HEAD.
    present: list[str] = field(default_factory=list)
    #: All its code files are gone from HEAD (listed only with --all).
    gone: bool = False
    records: list[str] = field(default_factory=list)
    #: It stands on a shallow clone's boundary commit (its change is not known).
    boundary: bool = False
    #: The names of the tests it added (``test_refund_rounds_half_up``, ``it('retries once')``).
    tests: list[str] = field(default_factory=list)
    #: How its evidence is made (evidence.py), when it is asked for: most entries are never
    #: shown, and the evidence of every entry of a whole history cost an eighth of the run.
    evidence_maker: Callable[[], Evidence] | None = field(default=None, repr=False, compare=False)
    made: Evidence | None = field(default=None, repr=False, compare=False)

    @property
    def evidence(self) -> Evidence | None:
        """What the agent writes the lesson from (None for an entry without commits)."""
        if self.made is None and self.evidence_maker is not None:
            self.made = self.evidence_maker()
        return self.made

    @evidence.setter
    def evidence(self, value: Evidence | None) -> None:
        self.made = value

    @property
    def score(self) -> float:
        return sum(part.score for part in self.parts)

    @property
    def short(self) -> str:
        return self.sha[:12]


@dataclass(frozen=True)
class Later:
    """A later commit that changed the entry's lines, or reverted it."""

    sha: str
    subject: str
    reverts: bool

    def line(self) -> str:
        how = "reverted it" if self.reverts else "changed its lines"
        return f"{self.sha[:12]} {how}: {self.subject}"


@dataclass(frozen=True)
class Evidence:
    body: str = ""
    changelog: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    assertions: tuple[str, ...] = ()
    #: The fenced diff ('' when it changed no code line).
    diff: str = ""
    later: tuple[Later, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "body": self.body,
            "changelog": list(self.changelog),
            "tests": list(self.tests),
            "assertions": list(self.assertions),
            "diff": self.diff,
            "later": [
                {"sha": later.sha, "subject": later.subject, "reverts": later.reverts}
                for later in self.later
            ],
        }

    def text(self) -> str:
        """The evidence as Markdown lines for the agent (``history --ask``)."""
        parts: list[str] = []
        if self.body:
            parts.append("What the messages say:\n" + _quoted(self.body))
        if self.changelog:
            parts.append("Changelog: " + " / ".join(self.changelog))
        if self.tests:
            parts.append("Tests: " + ", ".join(self.tests))
        if self.assertions:
            parts.append("What they assert:\n" + "\n".join(f"    {a}" for a in self.assertions))
        if self.diff:
            parts.append("The change (code, tests left out):\n" + self.diff)
        if self.later:
            parts.append("Later: " + "; ".join(later.line() for later in self.later))
        return "\n".join(parts)


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())
