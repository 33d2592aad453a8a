"""``reliora history``: the commits that look like lessons, for a cold start (SPEC.md §16).

A new store is empty, and its repository's history already holds the moments a lesson came
from. Three rules, each deterministic and explained in the entry it lists
(docs/history.md gives them with their measured precision):

* **revert**: the commit reverts another (``This reverts commit SHA`` in its message, or a
  ``Revert "…"`` subject); the reverted commit is named;
* **follow-up fix**: a message that says it fixes something, on a commit that changed a
  source file another commit changed at most :data:`FOLLOW_UP_DAYS` days before (a fix of
  something recent: the earlier commit is named);
* **cause**: the message explains why (``because``, ``regression``, ``workaround``,
  ``root cause``, ``caused by``, ``turns out``…), in a message of at least a line of body.

Commits that are never lessons are left out before the rules: merges, bots, version bumps and
releases, typo, formatting and lint fixes, and changes to documentation only. Each entry
says whether a record already names the commit (its sha, 7 characters or more, in a record).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reliora_git.gitrepo import git
from reliora_git.gitrepo.commits import Commit
from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import Store

#: A fix "follows" a commit to the same file made at most this many days before it.
FOLLOW_UP_DAYS = 7
DAY = 24 * 3600
#: Words around a cause shown in an entry's reason.
CAUSE_CONTEXT = 60
#: A fix that says less than this in its subject and has no body says too little to learn from.
MIN_WORDS = 4
FILES_SHOWN = 8

_REVERTS = re.compile(r"\bThis reverts commit ([0-9a-f]{7,40})\b")
_REVERT_SUBJECT = re.compile(r'^Revert\s+"(.+)"\s*$')
_FIX = re.compile(
    r"\b(?:fix(?:e[sd])?|fixing|bug(?:fix)?|hotfix|regression|broke(?:n)?|crash(?:es|ed)?|"
    r"correct(?:s|ed|ly)?|repair(?:s|ed)?|workaround|handle|prevent(?:s|ed)?|avoid(?:s|ed)?|"
    r"wrong|incorrect(?:ly)?|missing|restore[sd]?)\b",
    re.IGNORECASE,
)
_CAUSE = re.compile(
    r"\b(?:because|regression|work[- ]?around|root[- ]cause|caused by|turns? out|"
    r"due to|race condition|the (?:problem|issue|bug) (?:is|was)|broke|so that it no longer)\b",
    re.IGNORECASE,
)
#: Something went wrong: what a cause must come with to be a lesson.
_FAILURE = re.compile(
    r"\b(?:fix|bug|regress|broke|crash|panic|fail|error|wrong|incorrect|issue|problem|leak|"
    r"hang|deadlock|race|overflow|corrupt|flaky|slow|timeout|exception)\w*",
    re.IGNORECASE,
)
#: Subjects of commits that are never a lesson.
_NOISE = re.compile(
    r"\b(?:typos?|spelling|whitespace|formatting|format(?:ted)?|lint(?:ing)?|prettier|black|"
    r"isort|bump(?:s|ed)?|release[ds]?|version|changelog|readme|copyright|license|"
    r"dependabot|renovate|update (?:deps|dependencies))\b|^(?:docs?|chore|style|ci|build|"
    r"release|deps)(?:\(.*?\))?!?:|^\w+\((?:deps|deps-dev)\)!?:|^v?\d+\.\d+(?:\.\d+)?\S*\s*$|"
    r"^Merge |^tests?(?:\(.*?\))?:|^add(?:ed|s)? (?:a |more )?(?:regression )?tests?\b",
    re.IGNORECASE,
)
_BOT = re.compile(r"\[bot\]$|^(?:dependabot|renovate|github-actions|pre-commit-ci)\b", re.I)
#: What a fix of no lesson fixes: a typo or syntax, the docs, lint, types, tests' set-up, CI.
_TRIVIAL_FIX = re.compile(
    r"\b(?:syntax|rst|markdown|docs?|documentation|docstrings?|comments?|imports?|lint|flake8|"
    r"ruff|mypy|pep ?8|pylint|eslint|clippy|typing|type hints?|annotations?|ci|build|travis|"
    r"azure|appveyor|tox|coverage|warnings?|deprecation|merge|conflicts?|indentation|"
    r"link|links|example|examples|wording|grammar|test on|tests? for|style|some tests|"
    r"missing files?|(?:fix(?:e[sd]|ing)?|broken)(?: \w+)? tests?|makefile)\b",
    re.IGNORECASE,
)
#: Files whose change says nothing about code (a follow-up to them is no fix of code).
_NOT_CODE = re.compile(
    r"(?:^|/)(?:CHANGES|CHANGELOG|HISTORY|NEWS|AUTHORS|CONTRIBUTORS|README)[^/]*$|"
    r"\.(?:md|rst|txt|adoc|lock)$|(?:^|/)(?:package-lock\.json|yarn\.lock|pnpm-lock\.yaml|"
    r"go\.sum|Cargo\.lock|poetry\.lock|uv\.lock)$|^docs?/|^\.github/|(?:^|/)\.travis\.yml$|"
    r"(?:^|/)\.?appveyor\.yml$|(?:^|/)\.azure-pipelines\.yml$|(?:^|/)\.gitlab-ci\.yml$",
    re.IGNORECASE,
)
_TEST = re.compile(r"(?:^|/)(?:tests?|spec|__tests__|testdata|fixtures)/|(?:^|/)test_[^/]*$|"
                   r"_test\.\w+$|\.(?:test|spec)\.\w+$", re.IGNORECASE)  # fmt: skip
#: Trailer lines at the end of a message (not the author's explanation).
_TRAILER = re.compile(r"^[A-Za-z][A-Za-z-]*(?:-by|-Id|-id)?: |^(?:Closes|Fixes|Refs?) #", re.I)
_HEX = re.compile(rb"\b[0-9a-f]{7,40}\b")


@dataclass(frozen=True)
class Reason:
    kind: str  # "revert", "follow-up" or "cause"
    text: str
    commit: str = ""  # the commit it reverts or follows (full sha), when there is one

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "commit": self.commit[:12] or None}


@dataclass
class Entry:
    commit: Commit
    reasons: list[Reason] = field(default_factory=list)
    #: Records that name the commit.
    records: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit.short,
            "sha": self.commit.sha,
            "date": date_of(self.commit.time),
            "author": self.commit.author,
            "subject": self.commit.subject,
            "reasons": [reason.to_json() for reason in self.reasons],
            "files": list(self.commit.files),
            "recordedIn": self.records,
        }


def date_of(time: int) -> str:
    return dt.datetime.fromtimestamp(time, dt.timezone.utc).strftime("%Y-%m-%d")


def message_body(body: str) -> str:
    """The body without its trailers (``Signed-off-by:``, ``Co-authored-by:``…)."""
    lines = body.rstrip().splitlines()
    while lines and (_TRAILER.match(lines[-1]) or not lines[-1].strip()):
        lines.pop()
    return "\n".join(lines).strip()


def is_noise(commit: Commit) -> bool:
    """A commit that is never a lesson: a bot's, a bump or release, a typo or lint fix, or one
    that changed documentation only."""
    if _BOT.search(commit.author) or _NOISE.search(commit.subject):
        return True
    return bool(commit.files) and all(_NOT_CODE.search(f) for f in commit.files)


def _cause(commit: Commit) -> Reason | None:
    body = message_body(commit.body)
    if not body:
        return None  # a subject alone rarely explains; a body that does is the signal
    text = f"{commit.subject}\n{body}"
    match = _CAUSE.search(text)
    if match is None or not _FAILURE.search(text):
        return None  # a reason given for a feature or a choice is no lesson from trouble
    start = max(0, match.start() - CAUSE_CONTEXT)
    snippet = " ".join(text[start : match.end() + CAUSE_CONTEXT].split())
    lead = "…" if start else ""
    return Reason("cause", f'explains a cause: "{lead}{snippet}…"')


def _revert(commit: Commit, subjects: dict[str, str]) -> Reason | None:
    match = _REVERTS.search(commit.body)
    quoted = _REVERT_SUBJECT.match(commit.subject)
    if match is None and quoted is None:
        return None
    reverted = match.group(1) if match else ""
    subject = subjects.get(reverted, quoted.group(1) if quoted else "")
    named = f"{reverted[:12]} ({subject})" if reverted and subject else reverted[:12] or subject
    return Reason("revert", f"reverts {named}", reverted)


def find(
    commits: Sequence[Commit],
    reverted_subjects: dict[str, str] | None = None,
    recorded: Iterable[tuple[str, str]] = (),
) -> list[Entry]:
    """The commits of ``commits`` (newest first, as ``git log`` gives them) that look like
    lessons, newest first (pure).

    ``reverted_subjects``: the subject of each reverted commit (by the sha in the message);
    ``recorded``: (record id, a commit sha prefix it names).
    """
    subjects = reverted_subjects or {}
    names: dict[str, list[str]] = {}
    for record, prefix in recorded:
        names.setdefault(prefix, []).append(record)
    # The newest change of each code file so far, oldest commit first.
    last_change: dict[str, Commit] = {}
    entries: list[Entry] = []
    for commit in reversed(commits):
        noise = is_noise(commit)
        reasons: list[Reason] = []
        if not noise:
            revert = _revert(commit, subjects)
            if revert is not None:
                reasons.append(revert)
            elif (
                _FIX.search(commit.subject)
                and not _TRIVIAL_FIX.search(commit.subject)
                and (len(commit.subject.split()) >= MIN_WORDS or message_body(commit.body))
            ):
                followed = _followed(commit, last_change)
                if followed is not None:
                    reasons.append(followed)
            cause = _cause(commit)
            if cause is not None:
                reasons.append(cause)
        if not noise:
            for file in _code_files(commit):
                last_change[file] = commit
        if reasons:
            entries.append(Entry(commit, reasons, _records_naming(commit.sha, names)))
    entries.reverse()
    return entries


def _code_files(commit: Commit) -> list[str]:
    return [f for f in commit.files if not _NOT_CODE.search(f) and not _TEST.search(f)]


def _followed(commit: Commit, last_change: dict[str, Commit]) -> Reason | None:
    """The recent commit this fix follows: the newest one, at most FOLLOW_UP_DAYS before,
    that changed every code file the fix changes (a fix confined to a recent change)."""
    code = _code_files(commit)
    candidates = {last_change[f].sha: last_change[f] for f in code if f in last_change}
    for earlier in sorted(candidates.values(), key=lambda c: c.time, reverse=True):
        days = (commit.time - earlier.time) / DAY
        if not 0 <= days <= FOLLOW_UP_DAYS or not set(code) <= set(earlier.files):
            continue
        when = "the same day" if days < 1 else f"{days:.0f} days later"
        named = ", ".join(code[:3]) + (" …" if len(code) > 3 else "")
        text = f"fixes {named}, changed by {earlier.short} ({earlier.subject}) {when}"
        return Reason("follow-up", text, earlier.sha)
    return None


def _records_naming(sha: str, names: dict[str, list[str]]) -> list[str]:
    found: list[str] = []
    for length in range(7, len(sha) + 1):
        found += names.get(sha[:length], [])
    return sorted(set(found))


def commit_prefixes(text: bytes) -> set[str]:
    """Every word of ``text`` that may be a commit sha (7 to 40 hex digits)."""
    return {match.decode("ascii") for match in _HEX.findall(text)}


# --- reading a repository ------------------------------------------------------------------


@dataclass
class Report:
    scanned: int
    entries: list[Entry]


def recorded_commits(store: Store) -> list[tuple[str, str]]:
    """(record id, a word of it that may be a commit sha) for every record the store index
    parsed: the id is the parsed record's, never text taken from a file's bytes."""
    from reliora_git.storage.index import open_index
    from reliora_git.storage.store import read_regular_file

    pairs: list[tuple[str, str]] = []
    with open_index(store) as index:
        for doc in index.docs():
            try:
                data = read_regular_file(store.root / doc.locator, doc.locator)
            except RelioraError:
                continue
            pairs += [(doc.id, prefix) for prefix in commit_prefixes(data)]
    return pairs


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


def lesson_commits(store: Store, since: str | None = None) -> Report:
    """The commits of the store's repository that look like lessons, newest first."""
    from reliora_git.gitrepo import commits

    if commits.commit_count(store.root) == 0:
        if git.toplevel(store.root) is None:
            raise RelioraError("history reads git history: this is not a git repository",
                               code="no_git")  # fmt: skip
        return Report(0, [])
    found = commits.log(store.root, since=since)
    reverted = list(dict.fromkeys(m.group(1) for c in found if (m := _REVERTS.search(c.body))))
    known = {c.sha: c.subject for c in found}
    subjects = {token: known[sha] for token, sha in resolve_prefixes(reverted, known).items()}
    missing = [token for token in reverted if token not in subjects]
    named = commits.subjects(store.root, missing)
    for token, sha in resolve_prefixes(missing, named).items():
        subjects[token] = named[sha]
    return Report(len(found), find(found, subjects, recorded_commits(store)))
