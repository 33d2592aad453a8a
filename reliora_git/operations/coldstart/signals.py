"""The words and paths the cold start reads (SPEC.md §16). Pure: patterns and small tests.

What says an entry fixes something (``FIX``), states a cause (``CAUSE``) or a failure
(``FAILURE``), is security (``SECURITY``), noise (``NOISE``, ``TRIVIAL_FIX``, ``BOT``), a test
or code (``TEST``, ``NOT_CODE``), a feature (``FEATURE``); the weights of the evidence parts.
Every pattern is one alternation of fixed words: linear in the text.
"""

from __future__ import annotations

import functools
import re

DAY = 24 * 3600
#: The default window, and what recency is measured against.
WINDOW_DAYS = 730
#: Weights of the evidence parts (fitted on one graded repository, docs/history.md).
WEIGHTS = {
    "fix": 1.0,
    "cause": 2.0,
    "test": 1.0,
    "issue": 0.75,
    "changelog": 1.5,
    "pull request": 0.5,
    "blame": 1.0,
    "security": 1.5,
    "explained": 0.5,
    "revert reason": 1.0,
    "recency": 0.5,
    "revert without a reason": -1.5,
    "mechanical": -1.0,
    "feature": -1.0,
    "small change with a test": 0.25,
}
#: Code lines a "small change with a test" changes at most.
SMALL_CHANGE = 60
#: A change to more code files than this is mechanical (a rename, a reformat, a vendoring).
MECHANICAL_FILES = 30
#: A fix of lines its own author wrote within this long is a self-repair, not a lesson.
SELF_REPAIR_SECONDS = 3600

FIX = re.compile(
    r"\b(?:fix(?:e[sd])?|fixing|bug(?:fix)?s?|hotfix|regression|broke(?:n)?|crash(?:es|ed)?|"
    r"correct(?:s|ed|ly)?|repair(?:s|ed)?|workaround|prevent(?:s|ed)?|avoid(?:s|ed)?|"
    r"wrong|incorrect(?:ly)?|restore[sd]?|panic(?:s|ked)?|leak(?:s|ed)?|"
    r"overflow(?:s|ed)?|unsound|vulnerab\w*|no longer|don'?t|do not|doesn'?t|"
    r"should(?:n'?t)?|harden\w*|honou?r(?:s|ed)?|respect(?:s|ed)?|propagat\w*|"
    r"reset(?:s|ting)?|missing|double[ds]?|duplicated?|properly|regard(?:less)?|"
    r"edge cases?|race|deadlock|nil|null|underflow|truncat\w*|sign[- ]extend\w*|"
    # Performance faults are faults: a quadratic decoder is fixed without the word "fix".
    r"quadratic(?:ally)?|slow(?:s|ness|er|ly)?|hang(?:s|ing)?|hung|timeouts?|timed out)\b"
    r"|\bO\(n(?:\^2|²|\*\*2| ?\* ?n)\)",
    re.IGNORECASE,
)
#: GitHub's merge of a fix prepared in the private fork of a security advisory.
ADVISORY_MERGE = re.compile(r"^Merge commit from fork\b")
#: Performance faults, where a body names them ("decoding was quadratic"): a fix's words.
PERF = re.compile(
    r"\b(?:quadratic(?:ally)?|exponential(?:ly)?|hang(?:s|ing)?|hung|timeouts?|timed out|"
    r"too slow|slow(?:s|ed)? down|memory leak|leak(?:s|ed|ing)?|(?:cpu|memory) spike)\b"
    r"|\bO\(n(?:\^2|²|\*\*2| ?\* ?n)\)",
    re.IGNORECASE,
)
#: A subject that says it makes something right without a fix word: with a test changed and
#: an issue named, such a change is a fix (SPEC.md §16, "Noise kept out").
MENDS = re.compile(
    r"^(?:handle[sd]?|handling|ensure[sd]?|ensuring|resolve[sd]?|resolving|guard(?:s|ed)?|"
    r"check(?:s|ed)?|validate[sd]?|reject(?:s|ed)?|raise[sd]?|keep(?:s)?|preserve[sd]?|"
    r"allow(?:s|ed)?|consider(?:s|ed)?|treat(?:s|ed)?|skip(?:s|ped)?|clamp(?:s|ed)?)\b",
    re.IGNORECASE,
)
#: A changelog line states a symptom or a change of behaviour (not only a heading, or
#: "Performance improvements"): a fix or failure word, or how the behaviour now differs.
STATES = re.compile(
    r"\b(?:now|no longer|instead|correctly|when|if|unless|before|after|again|properly)\b",
    re.IGNORECASE,
)
CAUSE = re.compile(
    r"\b(?:because|regression|work[- ]?around|root[- ]cause|caused by|turns? out|due to|"
    r"race condition|previously|no longer|the (?:problem|issue|bug) (?:is|was)|which meant|"
    r"this (?:meant|means|caused|causes|led to|leads to)|resulting in|would (?:fail|crash|"
    r"panic|hang|break|return)|could (?:fail|crash|panic|hang|break|lead))\b",
    re.IGNORECASE,
)
FAILURE = re.compile(
    r"\b(?:fix|bug|regress|broke|crash|panic|fail|error|wrong|incorrect|issue|problem|leak|"
    r"hang|deadlock|race|overflow|corrupt|flaky|slow|timeout|exception|unsound|undefined)\w*",
    re.IGNORECASE,
)
SECURITY = re.compile(
    r"\b(?:security|vulnerab\w*|CVE-\d+|GHSA-|open redirect|injection|XSS|CSRF|traversal|"
    r"spoof\w*|denial of service|DoS|timing attack|unsound)\b",
    re.IGNORECASE,
)
ISSUE = re.compile(
    r"(?:^|[\s(,])(?:#|GH-|gh-)(\d{1,7})\b|:(?:issue|pr):`(\d+)`|/(?:issues|pull)/(\d+)"
)
FIXES_TRAILER = re.compile(r"^(?:Fixes|Closes|Resolves|Fix|Close)s?:? +\S", re.IGNORECASE | re.M)
PR_MERGE = re.compile(r"^Merge pull request #(\d+) from \S+")


def squash_number(subject: str) -> tuple[int, str] | None:
    """A squash merge's pull request and title: ``Fix the race (#123)`` → (123, ``Fix the
    race``); None for another subject. Plain string steps, linear (a pattern with ``\\s*``
    on both sides of the number took 13 s over a subject of 80,000 spaces)."""
    text = subject.rstrip()
    if not text.endswith(")"):
        return None
    at = text.rfind("(#")
    digits = text[at + 2 : -1] if at != -1 else ""
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 9):
        return None
    return int(digits), text[:at].rstrip()


REVERT_SUBJECT = re.compile(r'^Revert\s+"(.+)"\s*$')
REVERT_LINE = re.compile(r"^This reverts commit ([0-9a-f]{7,40})\.?\s*$", re.MULTILINE)
NOISE = re.compile(
    r"\b(?:typos?|spelling|whitespace|formatting|format(?:ted)?|lint(?:ing)?|prettier|black|"
    r"isort|bump(?:s|ed)?|release[ds]?|version|changelog|readme|copyright|license|"
    r"dependabot|renovate|update (?:deps|dependencies)|pre-commit|autoupdate)\b|^(?:docs?|chore|"
    r"style|ci|build|release|deps)(?:\(.*?\))?!?:|^\w+\((?:deps|deps-dev)\)!?:|"
    r"^v?\d+\.\d+(?:\.\d+)?\S*\s*$|^(?:tests?|bench)(?:\(.*?\))?:",
    re.IGNORECASE,
)
BOT = re.compile(r"\[bot\]$|^(?:dependabot|renovate|github-actions|pre-commit-ci)\b", re.I)
TRIVIAL_FIX = re.compile(
    r"\b(?:syntax|rst|markdown|docs?|documentation|docstrings?|comments?|imports?|lint|flake8|"
    r"ruff|mypy|pep ?8|pylint|eslint|clippy|typing|type hints?|annotations?|ci|build|travis|"
    r"azure|appveyor|tox|coverage|warnings?|deprecation|merge|conflicts?|indentation|"
    r"links?|examples?|wording|grammar|style|typos?|spelling|makefile|workflows?|actions?|"
    r"(?:fix(?:e[sd]|ing)?|broken)(?: \w+)? tests?)\b",
    re.IGNORECASE,
)
NOT_CODE = re.compile(
    r"(?:^|/)(?:CHANGES|CHANGELOG|HISTORY|NEWS|AUTHORS|CONTRIBUTORS|README|LICENSE|SECURITY|"
    r"CODE_OF_CONDUCT)[^/]*$|\.(?:md|rst|txt|adoc|lock|svg|png|jpg|gif|ico)$|"
    r"(?:^|/)(?:package-lock\.json|yarn\.lock|pnpm-lock\.yaml|go\.sum|Cargo\.lock|"
    r"poetry\.lock|uv\.lock)$|^docs?/|^\.github/|^\.(?:circleci|gitlab|devcontainer)/|"
    r"(?:^|/)\.[\w-]+\.ya?ml$|(?:^|/)\.gitignore$|(?:^|/)(?:tox\.ini|Makefile)$|^\.reliora/",
    re.IGNORECASE,
)
TEST = re.compile(
    r"(?:^|/)(?:tests?|spec|__tests__|testdata|fixtures)/|(?:^|/)test_[^/]*$|_test\.\w+$|"
    r"\.(?:test|spec)\.\w+$|(?:^|/)tests?\.\w+$",
    re.IGNORECASE,
)
BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
#: A title that announces something new (a feature is rarely a lesson, unless it says why).
FEATURE = re.compile(
    r"^(?:feat(?:ure)?(?:\([^)]*\))?!?:|(?:add|adds|added|support|supports|introduce|implement|"
    r"new|enable|expose|create|allow|provide|bump|upgrade|update|use|move|rename|refactor|"
    r"improve|optimi[sz]e|apply|drop|deprecate|tweak|refactor|speciali[sz]e|simplify|clean|"
    r"cleanup|reorgani[sz]e|document|run|resize|make)\b)",
    re.IGNORECASE,
)
#: A version heading of a patch release (``Version 3.0.4``, ``## [1.2.3] - …``).
PATCH_RELEASE = re.compile(r"\b\d+\.\d+\.[1-9]\d*\b")
#: A test declared on an added line: ``def test_x``, ``fn test_x``, ``func TestX``,
#: ``test('…')`` / ``it("…")`` / ``describe(`…`)``.
TEST_NAME = re.compile(
    r"^\s*(?:async\s+)?(?:def|fn|func)\s+(test\w*|Test\w*)|"
    r"^\s*(?:test|it)(?:\.\w+)?\(\s*(['\"`])(.{4,120}?)\2"
)
FIX_HEADING = re.compile(r"\b(?:fix|fixes|fixed|bug|bugs|bugfix(?:es)?|security|patch)\b", re.I)


@functools.lru_cache(maxsize=1 << 16)
def is_code(path: str) -> bool:
    """A file of code, not a test, doc, changelog, lock file or CI file (asked of the same
    paths for every commit that touches them: kept)."""
    return not NOT_CODE.search(path) and not TEST.search(path)


def message_body(body: str) -> str:
    """The body without the trailers at its end (``Signed-off-by:``, ``Fixes: #1``…): only the
    last block of ``Word: text`` lines is trailers; such a line inside a paragraph is text."""
    lines = body.rstrip().splitlines()
    end = len(lines)
    while end and re.match(r"^[A-Za-z][\w-]*: \S|^(?:Closes|Fixes|Refs?) #\d", lines[end - 1]):
        end -= 1
    if end < len(lines) and (end == 0 or not lines[end - 1].strip()):
        lines = lines[:end]
    return "\n".join(line for line in lines if not REVERT_LINE.match(line)).strip()


def is_noise(subject: str, author: str) -> bool:
    return bool(BOT.search(author) or NOISE.search(subject))
