"""``reliora history``: where the repository already wrote a lesson down (SPEC.md §16).

Pure: it takes the commits of one ``git log -p`` (gitrepo/patches.py), the files at HEAD and
the changelog's headings, and returns entries ranked by explained evidence. Sources:

* ``pull-request``: a merged pull request (a merge commit's title and body, a squash merge's
  ``(#N)`` subject) that shows a fix; one entry stands for all its commits;
* ``changelog``: a changelog line under a fix, bug or security heading (or saying it fixes
  something), linked to the commit that added it and so to that commit's pull request;
* ``commit``: a fix with evidence pushed without a pull request, a revert with its reason;
* ``session`` entries come from past agent sessions (agents/past_sessions.py), joined by
  the command.

Every entry's score is the sum of its parts, each named in ``why`` (docs/history.md gives
the parts, their weights and what they were measured on). Reading is one pass over the
commits, oldest first for the blame link (the commit that wrote the lines a fix removes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reliora_git.gitrepo.patches import Patched

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
    r"edge cases?|race|deadlock|nil|null|underflow|truncat\w*|sign[- ]extend\w*)\b",
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
_ISSUE = re.compile(
    r"(?:^|[\s(,])(?:#|GH-|gh-)(\d{1,7})\b|:(?:issue|pr):`(\d+)`|/(?:issues|pull)/(\d+)"
)
_FIXES_TRAILER = re.compile(r"^(?:Fixes|Closes|Resolves|Fix|Close)s?:? +\S", re.IGNORECASE | re.M)
_PR_MERGE = re.compile(r"^Merge pull request #(\d+) from \S+")
_SQUASH = re.compile(r"\s*\(#(\d+)\)\s*$")
_REVERT_SUBJECT = re.compile(r'^Revert\s+"(.+)"\s*$')
_REVERT_LINE = re.compile(r"^This reverts commit ([0-9a-f]{7,40})\.?\s*$", re.MULTILINE)
NOISE = re.compile(
    r"\b(?:typos?|spelling|whitespace|formatting|format(?:ted)?|lint(?:ing)?|prettier|black|"
    r"isort|bump(?:s|ed)?|release[ds]?|version|changelog|readme|copyright|license|"
    r"dependabot|renovate|update (?:deps|dependencies)|pre-commit|autoupdate)\b|^(?:docs?|chore|"
    r"style|ci|build|release|deps)(?:\(.*?\))?!?:|^\w+\((?:deps|deps-dev)\)!?:|"
    r"^v?\d+\.\d+(?:\.\d+)?\S*\s*$|^(?:tests?|bench)(?:\(.*?\))?:",
    re.IGNORECASE,
)
_BOT = re.compile(r"\[bot\]$|^(?:dependabot|renovate|github-actions|pre-commit-ci)\b", re.I)
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
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
#: A title that announces something new (a feature is rarely a lesson, unless it says why).
FEATURE = re.compile(
    r"^(?:feat(?:ure)?(?:\([^)]*\))?!?:|(?:add|adds|added|support|supports|introduce|implement|"
    r"new|enable|expose|create|allow|provide|bump|upgrade|update|use|move|rename|refactor|"
    r"improve|optimi[sz]e|apply|drop|deprecate|tweak|refactor|speciali[sz]e|simplify|clean|"
    r"cleanup|reorgani[sz]e|document|run|resize|make)\b)",
    re.IGNORECASE,
)
#: A version heading of a patch release (``Version 3.0.4``, ``## [1.2.3] - …``).
_PATCH_RELEASE = re.compile(r"\b\d+\.\d+\.[1-9]\d*\b")
#: A test declared on an added line: ``def test_x``, ``fn test_x``, ``func TestX``,
#: ``test('…')`` / ``it("…")`` / ``describe(`…`)``.
_TEST_NAME = re.compile(
    r"^\s*(?:async\s+)?(?:def|fn|func)\s+(test\w*|Test\w*)|"
    r"^\s*(?:test|it)(?:\.\w+)?\(\s*(['\"`])(.{4,120}?)\2"
)
_FIX_HEADING = re.compile(r"\b(?:fix|fixes|fixed|bug|bugs|bugfix(?:es)?|security|patch)\b", re.I)


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
    #: What the repository says about it, for the draft: messages, pull-request body,
    #: changelog lines, and the functions its hunks are in.
    texts: list[str] = field(default_factory=list)
    changelog: list[str] = field(default_factory=list)
    functions: list[tuple[str, str]] = field(default_factory=list)
    #: Files of ``files`` that exist at HEAD.
    present: list[str] = field(default_factory=list)
    #: All its code files are gone from HEAD (listed only with --all).
    gone: bool = False
    records: list[str] = field(default_factory=list)
    #: It stands on a shallow clone's boundary commit (its change is not known).
    boundary: bool = False
    #: The names of the tests it added (``test_refund_rounds_half_up``, ``it('retries once')``).
    tests: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(part.score for part in self.parts)

    @property
    def short(self) -> str:
        return self.sha[:12]


def is_code(path: str) -> bool:
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
    return "\n".join(line for line in lines if not _REVERT_LINE.match(line)).strip()


def is_noise(subject: str, author: str) -> bool:
    return bool(_BOT.search(author) or NOISE.search(subject))


# --- the units: pull requests and direct commits ---------------------------------------------


@dataclass
class _Unit:
    head: Patched
    members: list[Patched]
    pull_request: int | None
    title: str
    pr_body: str = ""
    #: The branch merge that brought it (``Merge branch 'stable'``, a release's merge).
    via: str = ""


def _first_parent_chain(commits: Sequence[Patched]) -> list[Patched]:
    by_sha = {c.sha: c for c in commits}
    chain: list[Patched] = []
    current = commits[0] if commits else None
    seen: set[str] = set()
    while current is not None and current.sha not in seen:
        seen.add(current.sha)
        chain.append(current)
        current = by_sha.get(current.parents[0]) if current.parents else None
    return chain


def units(commits: Sequence[Patched]) -> list[_Unit]:
    """Each merged pull request with its commits, each squash merge, each direct commit;
    newest first. Linear: every commit joins at most one unit."""
    by_sha = {c.sha: c for c in commits}
    chain = _first_parent_chain(commits)
    on_chain = {c.sha for c in chain}
    taken: set[str] = set()
    found: list[_Unit] = []
    for commit in reversed(chain):  # oldest first: a commit is the first merge's that brought it
        if commit.is_merge:
            members = _side(commit, by_sha, on_chain, taken)
            number = _pr_number(commit)
            if number is not None:
                found.append(_pull_request(commit, members, number))
            else:  # `Merge branch 'stable'`: the pull requests merged there, and the rest
                brought = _units_within(members)
                for unit in brought:
                    unit.via = commit.sha
                found += brought
            continue
        found.append(_unit_of(commit))
    # Commits the log gave that no first-parent walk reached (a range cut at --since).
    for commit in commits:
        if commit.sha not in on_chain and commit.sha not in taken and not commit.is_merge:
            found.append(_unit_of(commit))
    found.sort(key=lambda unit: unit.head.time, reverse=True)
    return found


def _side(
    merge: Patched, by_sha: dict[str, Patched], stop: set[str], taken: set[str]
) -> list[Patched]:
    """The commits a merge brought: reachable from its other parents, not from ``stop``."""
    members = []
    todo = list(merge.parents[1:])
    while todo:
        sha = todo.pop()
        member = by_sha.get(sha)
        if member is None or sha in stop or sha in taken:
            continue
        taken.add(sha)
        members.append(member)
        todo.extend(member.parents)
    return members


def _pr_number(merge: Patched) -> int | None:
    """The pull request a merge commit merged: ``Merge pull request #N from …``, or a merge
    titled like a squash (``title (#N)``)."""
    match = _PR_MERGE.match(merge.subject) or _SQUASH.search(merge.subject)
    return int(match.group(1)) if match else None


def _pull_request(merge: Patched, members: list[Patched], number: int) -> _Unit:
    squash = _SQUASH.search(merge.subject)
    if squash:  # the title is the subject; the body is the request's
        return _Unit(merge, members, number, merge.subject[: squash.start()], merge.body)
    body_lines = merge.body.splitlines()
    title = body_lines[0].strip() if body_lines else merge.subject
    return _Unit(merge, members, number, title, "\n".join(body_lines[1:]).strip())


def _units_within(members: list[Patched]) -> list[_Unit]:
    """The units of the commits a branch merge brought: its pull-request merges with their
    own commits, then each commit left."""
    inside = {m.sha: m for m in members}
    taken: set[str] = set()
    found: list[_Unit] = []
    # Oldest first: a commit belongs to the first request that merged it, not to a later
    # one (a release) whose side reaches it too.
    for member in sorted(members, key=lambda m: (m.time, m.sha)):
        if not member.is_merge or member.sha in taken:
            continue
        taken.add(member.sha)
        base: set[str] = set()
        current = inside.get(member.parents[0])
        while current is not None and current.sha not in base:
            base.add(current.sha)
            current = inside.get(current.parents[0]) if current.parents else None
        side = _side(member, inside, base, taken)
        number = _pr_number(member)
        if number is not None:
            found.append(_pull_request(member, side, number))
            continue
        for unit in (_unit_of(m) for m in side if not m.is_merge):
            unit.via = member.sha  # `Merge commit from fork`: the merge brought the fix
            found.append(unit)
    found += [_unit_of(m) for m in members if m.sha not in taken and not m.is_merge]
    return found


# --- changelog lines --------------------------------------------------------------------------


@dataclass
class ChangelogLine:
    text: str
    sha: str
    heading: str = ""
    numbers: tuple[int, ...] = ()

    @property
    def is_fix(self) -> bool:
        """Under a fix, bug or security heading; where headings are only versions, a line that
        says it fixes something (never a typo, docs or lint line)."""
        if NOISE.search(self.text) or (len(self.text) < 60 and TRIVIAL_FIX.search(self.text)):
            return False
        category = "" if re.search(r"\d", self.heading) else self.heading
        if category:
            return bool(_FIX_HEADING.search(category))
        if _PATCH_RELEASE.search(self.heading):
            return True  # a patch release holds fixes
        return bool(FIX.search(self.text))


def changelog_lines(commits: Iterable[Patched], headings: dict[str, str]) -> list[ChangelogLine]:
    """The entries each commit added to a changelog (a bullet and its wrapped lines), with the
    heading it stands under at HEAD (``headings``: entry text -> heading)."""
    found: list[ChangelogLine] = []
    for commit in commits:
        entries: list[list[str]] = []
        for _, line in commit.changelog:
            if _BULLET.match(line):
                entries.append([_BULLET.sub("", line)])
            elif entries and entries[-1] and line.startswith((" ", "\t")) and line.strip():
                entries[-1].append(line.strip())
            elif entries and entries[-1]:
                entries.append([])  # a line of another kind ends the entry
        for words in filter(None, entries):
            text = " ".join(" ".join(words).split())
            numbers = tuple(int(n) for m in _ISSUE.finditer(text) for n in m.groups() if n)
            found.append(ChangelogLine(text, commit.sha, headings.get(text, ""), numbers))
    return found


def changelog_headings(text: str) -> dict[str, str]:
    """Each entry of a changelog (a bullet and its wrapped lines, on one line) and the heading
    above it (Markdown ``#`` headings, reStructuredText underlined titles)."""
    headings: dict[str, str] = {}
    heading = ""
    lines = text.splitlines()
    current: list[str] = []

    def flush() -> None:
        if current:
            headings[" ".join(" ".join(current).split())] = heading
            current.clear()

    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if line.startswith("#"):
            flush()
            heading = line.lstrip("#").strip()
        elif line.strip() and re.fullmatch(r"([-=~^*])\1{2,}", following.strip()):
            flush()
            heading = line.strip()
        elif _BULLET.match(line):
            flush()
            current.append(_BULLET.sub("", line))
        elif current and line.startswith((" ", "\t")) and line.strip():
            current.append(line.strip())
        else:
            flush()
    flush()
    return headings


# --- evidence ---------------------------------------------------------------------------------


def _blame_links(commits: Sequence[Patched]) -> dict[str, Patched]:
    """For each commit, the earlier commit that wrote most of the lines it removes (by their
    text, file by file), leaving out self-repairs and mechanical commits. One pass, oldest
    first, over the lines each patch kept."""
    wrote: dict[tuple[str, str], Patched] = {}
    links: dict[str, Patched] = {}
    for commit in reversed(commits):
        counts: dict[str, int] = {}
        by_sha: dict[str, Patched] = {}
        for file, line in commit.removed:
            key = (file, line.strip())
            if len(key[1]) < 12 or not any(c.isalnum() for c in key[1]):
                continue
            earlier = wrote.get(key)
            if earlier is None or earlier.sha == commit.sha:
                continue
            counts[earlier.sha] = counts.get(earlier.sha, 0) + 1
            by_sha[earlier.sha] = earlier
        if counts:
            best = by_sha[max(counts, key=lambda sha: counts[sha])]
            self_repair = (
                best.author == commit.author and commit.time - best.time < SELF_REPAIR_SECONDS
            )
            mechanical = sum(map(is_code, best.files)) > MECHANICAL_FILES
            if not self_repair and not mechanical:
                links[commit.sha] = best
        for file, line in commit.added:
            key = (file, line.strip())
            if len(key[1]) >= 12:
                wrote[key] = commit
    return links


def _issue_numbers(text: str, own: int | None) -> list[int]:
    numbers = [int(n) for m in _ISSUE.finditer(text) for n in m.groups() if n]
    return [n for n in dict.fromkeys(numbers) if n != own]


def resolve_prefixes(tokens: Iterable[str], shas: Iterable[str]) -> dict[str, str]:
    """Each token (7 to 40 hex digits) and the one sha of ``shas`` it starts (linear: shas
    are looked up by their first 7 digits, never scanned once per token)."""
    by_start: dict[str, list[str]] = {}
    for sha in shas:
        by_start.setdefault(sha[:7], []).append(sha)
    found = {}
    for token in tokens:
        matches = [sha for sha in by_start.get(token[:7], []) if sha.startswith(token)]
        if len(matches) == 1:
            found[token] = matches[0]
    return found


def _recency(time: int, now: int) -> float:
    age = max(0.0, (now - time) / DAY)
    return WEIGHTS["recency"] * max(0.0, 1 - age / WINDOW_DAYS)


def _first(pattern: re.Pattern[str], text: str, context: int = 50) -> str:
    match = pattern.search(text)
    if match is None:
        return ""
    start = max(0, match.start() - context)
    snippet = " ".join(text[start : match.end() + context].split())
    return ("…" if start else "") + snippet + "…"


def judge(
    unit: _Unit,
    changelog: list[ChangelogLine],
    blame: dict[str, Patched],
    now: int,
    reverted: dict[str, str] | None = None,
) -> list[Part]:
    """The evidence parts of one unit; [] when it is not a lesson (noise, no fix)."""
    head = unit.head
    members = unit.members or [head]
    title = unit.title
    if is_noise(title, head.author) or _BOT.search(head.author):
        return []
    # A squash merge lists its commits' subjects as `* subject` lines of its body.
    squashed = [line[2:] for m in members for line in m.body.splitlines() if line.startswith("* ")]
    subjects = [title, *(m.subject for m in members), *squashed[:20]]
    bodies = [unit.pr_body, *(message_body(m.body) for m in members), message_body(head.body)]
    body = "\n".join(b for b in bodies if b)
    text = "\n".join([*subjects, body])
    parts: list[Part] = []
    revert = _REVERT_SUBJECT.match(head.subject) or _REVERT_LINE.search(head.body)
    fixes = [line for line in changelog if line.is_fix]
    if revert:
        reason = body.strip()
        if len(reason) >= 20:
            said = _first(CAUSE, reason) or reason[:100]
            parts.append(Part("revert reason", WEIGHTS["revert reason"], said))
        else:
            parts.append(Part("revert without a reason", WEIGHTS["revert without a reason"]))
        token = match.group(1) if (match := _REVERT_LINE.search(head.body)) else ""
        named = (reverted or {}).get(token) or (revert.group(1) if revert.re is _REVERT_SUBJECT
                                                else token[:12])  # fmt: skip
        parts.append(Part("fix", WEIGHTS["fix"], f"reverts {token[:12]} ({named[:80]})"))
    elif any(FIX.search(s) for s in subjects) or _FIXES_TRAILER.search(
        "\n".join(m.body for m in members)
    ):
        fix_subjects = [s for s in subjects if FIX.search(s)]
        if fix_subjects and all(TRIVIAL_FIX.search(s) for s in fix_subjects) and not fixes:
            return []
        word = next((m.group() for s in subjects if (m := FIX.search(s))), "fixes")
        parts.append(Part("fix", WEIGHTS["fix"], f"says {word!r}"))
    elif fixes:
        parts.append(Part("fix", WEIGHTS["fix"], "its changelog line is a fix"))
    elif SECURITY.search(text):
        parts.append(Part("fix", WEIGHTS["fix"], "a security change"))
    elif not (CAUSE.search(body) and FAILURE.search(text)):
        # No word says so; a small change of code with a test, not announced as a feature,
        # is still most often a fix (terse subjects: "parse plain int in more inputs").
        changed = sum(m.changed_lines for m in members)
        tested = any(TEST.search(f) for m in members for f in m.files)
        coded = any(is_code(f) for m in members for f in m.files)
        if not (tested and coded and changed <= SMALL_CHANGE * 2) or FEATURE.match(title):
            return []
        small = WEIGHTS["small change with a test"]
        parts.append(Part("small change with a test", small, f"{changed} lines changed"))
    if body and CAUSE.search(body) and FAILURE.search(text):
        parts.append(Part("cause", WEIGHTS["cause"], _first(CAUSE, body)))
    elif len(body) >= 80:
        parts.append(Part("explained", WEIGHTS["explained"], f"{len(body)} characters of body"))
    files = [f for m in members for f in m.files]
    code = [f for f in files if is_code(f)]
    if files and not code and not any(TEST.search(f) for f in files) and not fixes:
        return []  # documentation, CI or packaging only
    if FEATURE.match(title) and not any(p.name == "cause" for p in parts) and not revert:
        parts.append(Part("feature", WEIGHTS["feature"], f"the title announces: {title[:40]}"))
    if code and any(TEST.search(f) for f in files):
        tests = [f for f in dict.fromkeys(files) if TEST.search(f)]
        parts.append(Part("test", WEIGHTS["test"], f"changes a test ({tests[0]})"))
    raw = "\n".join([*subjects, unit.pr_body, *(m.body for m in members)])
    issues = _issue_numbers(raw, unit.pull_request)
    if issues:
        parts.append(Part("issue", WEIGHTS["issue"], "names #" + ", #".join(map(str, issues[:3]))))
    if fixes:
        parts.append(Part("changelog", WEIGHTS["changelog"], fixes[0].text[:120]))
    if unit.pull_request is not None:
        parts.append(Part("pull request", WEIGHTS["pull request"], f"#{unit.pull_request}"))
    linked = next((blame[m.sha] for m in members if m.sha in blame), None)
    if linked is not None:
        days = max(0, (head.time - linked.time) // DAY)
        parts.append(
            Part("blame", WEIGHTS["blame"], f"changes lines {linked.short} wrote {days} days before"
                 f" ({linked.subject[:60]})")
        )  # fmt: skip
    if SECURITY.search(text):
        parts.append(Part("security", WEIGHTS["security"], _first(SECURITY, text, 30)))
    if len(set(code)) > MECHANICAL_FILES:
        parts.append(Part("mechanical", WEIGHTS["mechanical"], f"{len(set(code))} code files"))
    parts.append(Part("recency", _recency(head.time, now), _age(head.time, now)))
    return parts


def _age(time: int, now: int) -> str:
    days = max(0, (now - time) // DAY)
    return f"{days} days ago" if days < 60 else f"{days // 30} months ago"


def find(
    commits: Sequence[Patched],
    head_files: frozenset[str],
    headings: dict[str, str],
    now: int,
    recorded: Iterable[tuple[str, str]] = (),
    keep_gone: bool = False,
) -> list[Entry]:
    """The entries of ``commits`` (newest first, as ``git log`` gives them), best first."""
    names: dict[str, list[str]] = {}
    for record, prefix in recorded:
        names.setdefault(prefix, []).append(record)
    lines = changelog_lines(commits, headings)
    by_commit: dict[str, list[ChangelogLine]] = {}
    for line in lines:
        by_commit.setdefault(line.sha, []).append(line)
    blame = _blame_links(commits)
    by_sha = {c.sha: c for c in commits}
    tokens = {m.group(1) for c in commits if (m := _REVERT_LINE.search(c.body))}
    reverted = {t: by_sha[sha].subject for t, sha in resolve_prefixes(tokens, by_sha).items()}
    entries: list[Entry] = []
    claimed: set[int] = set()
    for unit in units(commits):
        members = unit.members or [unit.head]
        shas = [unit.head.sha, *(m.sha for m in members if m.sha != unit.head.sha)]
        shas += [unit.via] if unit.via else []
        own_lines = [line for sha in shas for line in by_commit.get(sha, [])]
        if unit.pull_request is not None:  # a line added elsewhere that names this request
            own_lines += [
                line for line in lines if unit.pull_request in line.numbers and line.sha not in shas
            ]
        parts = judge(unit, own_lines, blame, now, reverted)
        if not parts:
            continue
        claimed.update(id(line) for line in own_lines)
        entries.append(_entry(unit, shas, parts, own_lines, head_files, names))
    for line in lines:  # fix lines no pull request or commit entry stands for
        if id(line) in claimed or not line.is_fix or is_noise(line.text, ""):
            continue
        commit = by_sha[line.sha]
        parts = [
            Part("fix", WEIGHTS["fix"], "a changelog line under " + (line.heading or "a fix")),
            Part("changelog", WEIGHTS["changelog"], line.text[:120]),
            Part("recency", _recency(commit.time, now), _age(commit.time, now)),
        ]
        unit = _Unit(commit, [commit], None, line.text)
        entry = _entry(unit, [commit.sha], parts, [line], head_files, names)
        entry.source, entry.files = "changelog", [f for f in commit.files if is_code(f)]
        entries.append(entry)
    kept = [e for e in entries if keep_gone or not e.gone]
    return rank(kept)


def entry_for(commits: Sequence[Patched], head_files: frozenset[str], now: int) -> Entry:
    """The entry of ``commits[0]`` (with, for a merge, the commits it brought), judged when it
    is a lesson, with no parts when not: ``record --from-commit`` drafts from any commit."""
    unit = units(commits)[0] if commits[0].is_merge else _unit_of(commits[0])
    lines = changelog_lines(unit.members or [unit.head], {})
    parts = judge(unit, lines, {}, now)
    shas = [unit.head.sha, *(m.sha for m in unit.members if m.sha != unit.head.sha)]
    return _entry(unit, shas, parts, lines, head_files, {})


def _unit_of(commit: Patched) -> _Unit:
    squash = _SQUASH.search(commit.subject)
    if squash:
        return _Unit(commit, [commit], int(squash.group(1)), commit.subject[: squash.start()])
    return _Unit(commit, [commit], None, commit.subject)


def session_entry(
    client: str,
    session: str,
    time: int,
    now: int,
    *,
    command: str = "",
    error: str = "",
    files: Sequence[str] = (),
    fixed: bool = False,
    correction: str = "",
) -> Entry:
    """An entry for a troubled moment of a past agent session (already masked and cut)."""
    if correction:
        title = f"The person corrected the agent: {correction}"
        parts = [Part("correction", WEIGHTS["cause"], correction[:120])]
        texts = [title, correction]
    else:
        title = f"{command} failed" + (", then passed after a change" if fixed else "")
        parts = [Part("fix" if fixed else "failure", WEIGHTS["fix"], title[:120])]
        if files:
            parts.append(Part("changed", WEIGHTS["test"], ", ".join(files[:3])))
        texts = [title, f"Its output, quoted: «{error}»." if error else ""]
    parts.append(Part("session", WEIGHTS["pull request"], f"{client} session {session[:40]}"))
    parts.append(Part("recency", _recency(time, now), _age(time, now)))
    return Entry(
        "session",
        "",
        [],
        title,
        time,
        "",
        list(files),
        parts,
        texts=[t for t in texts if t],
        present=list(files),
    )


def rank(entries: list[Entry]) -> list[Entry]:
    """Best first: by score, then newest, then sha (deterministic)."""
    return sorted(entries, key=lambda e: (-round(e.score, 6), -e.time, e.sha))


def _entry(
    unit: _Unit,
    shas: list[str],
    parts: list[Part],
    lines: list[ChangelogLine],
    head_files: frozenset[str],
    names: dict[str, list[str]],
) -> Entry:
    members = unit.members or [unit.head]
    files = list(dict.fromkeys(f for m in members for f in m.files))
    code = [f for f in files if is_code(f)]
    present = [f for f in files if f in head_files]
    texts = [unit.title, unit.pr_body, *(m.subject + "\n\n" + m.body for m in members)]
    functions = list(dict.fromkeys(fn for m in members for fn in m.functions))
    tests = []
    for member in members:
        for file, line in member.added:
            match = _TEST_NAME.match(line) if TEST.search(file) else None
            if match:
                tests.append(match.group(1) or match.group(3))
    source = "pull-request" if unit.pull_request is not None else "commit"
    records = sorted({r for sha in shas for n in range(7, 41) for r in names.get(sha[:n], [])})
    return Entry(
        source,
        unit.head.sha,
        shas,
        " ".join(unit.title.split()),
        unit.head.time,
        unit.head.author,
        files,
        parts,
        unit.pull_request,
        [t for t in texts if t.strip()],
        [line.text for line in lines],
        functions,
        present,
        bool(code) and not any(f in head_files for f in code),
        records,
        unit.head.boundary,
        list(dict.fromkeys(tests))[:5],
    )
