"""What an entry hands the agent who writes its lesson (SPEC.md §16, "Evidence"). Pure.

A draft alone is a skeleton: the why lives in the commit's body, the pull request's text,
the changelog sentence and the diff. Each entry carries:

* **body**: the messages (the pull request's body, then each commit's) without trailers and
  without a squash merge's narration — bullets such as "fix lint", "add test", "address
  review", "revert unrelated change" tell the request's iterations, not the fix;
* **changelog**: the changelog sentences whole;
* **tests**: the tests it added or changed, by name, and the added lines that assert the new
  behaviour;
* **diff**: the fix itself, the changed lines of code files (tests left out), at most
  :data:`DIFF_LINES`, as a fenced diff;
* **later**: what later commits did to the lines it added — changed them, or reverted it:
  a fix that was reversed must not be taught as today's rule.

Everything is the repository's own text: shown as data, cut, never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from reliora_git.gitrepo.patches import Patched
from reliora_git.operations.coldstart.nouns import Evidence, Later
from reliora_git.operations.coldstart.signals import (
    BULLET,
    TEST,
    TEST_NAME,
    is_code,
    message_body,
)

#: Changed lines of code shown as the fix.
DIFF_LINES = 30
#: The longest body kept (cut at a paragraph end).
BODY_CHARS = 1500
#: Tests named, assertion lines quoted, later commits named.
TESTS_SHOWN = 5
ASSERTIONS_SHOWN = 6
LATER_SHOWN = 3
#: A line of a test that states what must hold.
ASSERTION = re.compile(
    r"\b(?:assert\w*|expect|should|must|raises|require(?:s)?|t\.(?:Error|Fatal)\w*|"
    r"assert_eq!|assert!|toBe\w*|toEqual|toThrow\w*|check)\b"
)
#: A squash merge's bullet that tells the request's iterations: short, and about the process.
NARRATION = re.compile(
    r"\b(?:lint(?:ing)?|linter|typos?|format(?:ting|ted)?|style|review(?:s|ed)?|feedback|"
    r"suggestions?|nits?|wip|cleanup|clean up|changelog|docs?|comments?|coverage|ci|mypy|ruff|"
    r"black|flake8|isort|prettier|eslint|pre-commit|tests?|merge|conflicts?|unrelated|"
    r"rename[sd]?|oops|again|tweaks?|revert(?:s|ed)?|bump(?:s|ed)?|fixup|squash)\b",
    re.IGNORECASE,
)
#: Words a bullet may have and still be narration.
NARRATION_WORDS = 10


def is_narration(line: str) -> bool:
    """A bullet that tells a pull request's iterations ("fix lint", "address review")."""
    words = line.split()
    return len(words) <= NARRATION_WORDS and bool(NARRATION.search(line))


def without_narration(body: str) -> str:
    """``body`` without its narrating bullets and its trailers."""
    kept = [
        line
        for line in message_body(body).splitlines()
        if not (BULLET.match(line) and is_narration(BULLET.sub("", line)))
    ]
    return "\n".join(kept).strip()


def _cut_body(text: str) -> str:
    if len(text) <= BODY_CHARS:
        return text
    end = text.rfind("\n\n", 0, BODY_CHARS)
    return (text[:end] if end > BODY_CHARS // 2 else text[: BODY_CHARS - 1]).rstrip() + " …"


def evidence_of(
    members: Sequence[Patched],
    pr_body: str,
    changelog: Sequence[str],
    later: Sequence[Later] = (),
) -> Evidence:
    """The evidence of the commits ``members`` (oldest last, as the log gives them)."""
    bodies = [without_narration(pr_body), *(without_narration(m.body) for m in members)]
    body = "\n\n".join(dict.fromkeys(b for b in bodies if b))
    tests: list[str] = []
    assertions: list[str] = []
    for member in reversed(members):
        for file, line in member.added:
            if not TEST.search(file):
                continue
            match = TEST_NAME.match(line)
            if match:
                tests.append(match.group(1) or match.group(3))
            elif ASSERTION.search(line) and len(line.strip()) > 6:
                assertions.append(" ".join(line.split())[:160])
    return Evidence(
        body=_cut_body(body),
        changelog=tuple(dict.fromkeys(changelog)),
        tests=tuple(dict.fromkeys(tests))[:TESTS_SHOWN],
        assertions=tuple(dict.fromkeys(assertions))[:ASSERTIONS_SHOWN],
        diff=fenced_diff(members),
        later=tuple(later[:LATER_SHOWN]),
    )


def fenced_diff(members: Sequence[Patched]) -> str:
    """The changed lines of code files (tests, docs and changelogs left out), oldest commit
    first, at most DIFF_LINES, as a fenced ``diff`` block ('' when none)."""
    lines: list[str] = []
    shown = 0
    current = ""
    longest = 0
    for member in reversed(members):
        for file, change in member.diff:
            if not is_code(file):
                continue
            if shown >= DIFF_LINES:
                lines.append(f"… ({_left(members)} more changed lines)")
                return _fence(lines, longest)
            if file != current:
                lines.append(f"--- {file}")
                current = file
            lines.append(change)
            longest = max(longest, _backticks(change))
            shown += 1
    return _fence(lines, longest) if shown else ""


def _left(members: Sequence[Patched]) -> int:
    total = sum(1 for m in members for file, _ in m.diff if is_code(file))
    return max(0, total - DIFF_LINES)


def _backticks(line: str) -> int:
    """The longest run of backticks in ``line`` (a fence must be longer)."""
    longest = run = 0
    for char in line:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def _fence(lines: list[str], longest: int) -> str:
    fence = "`" * max(3, longest + 1)
    return "\n".join([f"{fence}diff", *lines, fence])


def later_of(
    shas: Sequence[str], later: Mapping[str, Sequence[Later]], limit: int = LATER_SHOWN
) -> list[Later]:
    """What later commits did to the lines of the commits ``shas``, each once, oldest first."""
    found: dict[str, Later] = {}
    for sha in shas:
        for item in later.get(sha, ()):
            if item.sha not in shas and item.sha not in found:
                found[item.sha] = item
    return list(found.values())[:limit]
