"""Where a repository wrote its lessons down, from the commits of one ``git log -p``. Pure.

* **units**: each merged pull request with its commits (a merge commit's title and body, a
  squash merge's ``(#N)`` subject), each direct commit; linear, every commit in one unit;
* **changelog lines**: the entries each commit added to a changelog, with their heading;
* **blame links**: the earlier commit that wrote the lines a fix removes (by their text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reliora_git.gitrepo.patches import CHANGELOG, Patched
from reliora_git.operations.coldstart.nouns import Later
from reliora_git.operations.coldstart.signals import (
    BULLET,
    FIX,
    FIX_HEADING,
    ISSUE,
    MECHANICAL_FILES,
    NOISE,
    PATCH_RELEASE,
    PR_MERGE,
    REVERT_LINE,
    SELF_REPAIR_SECONDS,
    TRIVIAL_FIX,
    is_code,
    squash_number,
)

# --- the units: pull requests and direct commits ---------------------------------------------


@dataclass
class Unit:
    head: Patched
    members: list[Patched]
    pull_request: int | None
    title: str
    pr_body: str = ""
    #: The branch merge that brought it (``Merge branch 'stable'``, a release's merge).
    via: str = ""
    #: That merge's subject (``Merge commit from fork``: GitHub's merge of a security fix
    #: prepared in a private fork of an advisory).
    via_subject: str = ""


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


def units(commits: Sequence[Patched]) -> list[Unit]:
    """Each merged pull request with its commits, each squash merge, each direct commit;
    newest first. Linear: every commit joins at most one unit."""
    by_sha = {c.sha: c for c in commits}
    chain = _first_parent_chain(commits)
    on_chain = {c.sha for c in chain}
    taken: set[str] = set()
    found: list[Unit] = []
    for commit in reversed(chain):  # oldest first: a commit is the first merge's that brought it
        if commit.is_merge:
            members = _side(commit, by_sha, on_chain, taken)
            number = _pr_number(commit)
            if number is not None:
                found.append(_pull_request(commit, members, number))
            else:  # `Merge branch 'stable'`: the pull requests merged there, and the rest
                brought = _units_within(members)
                for unit in brought:
                    if not unit.via:  # the nearest merge that brought it (a fork's, inside)
                        unit.via, unit.via_subject = commit.sha, commit.subject
                found += brought
            continue
        found.append(unit_of(commit))
    # Commits the log gave that no first-parent walk reached (a range cut at --since).
    for commit in commits:
        if commit.sha not in on_chain and commit.sha not in taken and not commit.is_merge:
            found.append(unit_of(commit))
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
    match = PR_MERGE.match(merge.subject)
    if match:
        return int(match.group(1))
    squash = squash_number(merge.subject)
    return squash[0] if squash else None


def _pull_request(merge: Patched, members: list[Patched], number: int) -> Unit:
    squash = squash_number(merge.subject)
    if squash:  # the title is the subject; the body is the request's
        return Unit(merge, members, number, squash[1], merge.body)
    body_lines = merge.body.splitlines()
    title = body_lines[0].strip() if body_lines else merge.subject
    return Unit(merge, members, number, title, "\n".join(body_lines[1:]).strip())


def _units_within(members: list[Patched]) -> list[Unit]:
    """The units of the commits a branch merge brought: its pull-request merges with their
    own commits, then each commit left."""
    inside = {m.sha: m for m in members}
    taken: set[str] = set()
    found: list[Unit] = []
    # The first-parent lines the merges stand on, walked once for all of them (each walk stops
    # where an earlier one went): a request's commits are those off these lines. One walk a
    # merge cost the square of the merges (16,000 merges: 72 s).
    base: set[str] = set()
    for member in members:
        if member.is_merge:
            current = inside.get(member.parents[0])
            while current is not None and current.sha not in base:
                base.add(current.sha)
                current = inside.get(current.parents[0]) if current.parents else None
    # Oldest first: a commit belongs to the first request that merged it, not to a later
    # one (a release) whose side reaches it too.
    for member in sorted(members, key=lambda m: (m.time, m.sha)):
        if not member.is_merge or member.sha in taken:
            continue
        taken.add(member.sha)
        side = _side(member, inside, base, taken)
        number = _pr_number(member)
        if number is not None:
            found.append(_pull_request(member, side, number))
            continue
        for unit in (unit_of(m) for m in side if not m.is_merge):
            # `Merge commit from fork`: the merge brought the fix
            unit.via, unit.via_subject = member.sha, member.subject
            found.append(unit)
    found += [unit_of(m) for m in members if m.sha not in taken and not m.is_merge]
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
            return bool(FIX_HEADING.search(category))
        if PATCH_RELEASE.search(self.heading):
            return True  # a patch release holds fixes
        return bool(FIX.search(self.text))


def changelog_lines(commits: Iterable[Patched], headings: dict[str, str]) -> list[ChangelogLine]:
    """The entries each commit added to a changelog (a bullet and its wrapped lines), with the
    heading it stands under at HEAD (``headings``: entry text -> heading).

    An entry that rewrites one the same commit removed (a typo fixed in an old line, a
    wording changed) is an edit, not a new fix: left out.
    """
    found: list[ChangelogLine] = []
    for commit in commits:
        removed = [
            _words(text)
            for text in _entries(line for file, line in commit.removed if CHANGELOG.search(file))
        ]
        for text in _entries(line for _, line in commit.changelog):
            if removed and _is_edit(_words(text), removed):
                continue
            numbers = tuple(int(n) for m in ISSUE.finditer(text) for n in m.groups() if n)
            found.append(ChangelogLine(text, commit.sha, headings.get(text, ""), numbers))
    return found


def _entries(lines: Iterable[str]) -> list[str]:
    """The changelog entries among ``lines``: each bullet with its wrapped lines, on one line."""
    entries: list[list[str]] = []
    for line in lines:
        if BULLET.match(line):
            entries.append([BULLET.sub("", line)])
        elif entries and entries[-1] and line.startswith((" ", "\t")) and line.strip():
            entries[-1].append(line.strip())
        elif entries and entries[-1]:
            entries.append([])  # a line of another kind ends the entry
    return [" ".join(" ".join(words).split()) for words in entries if words]


#: Share of words two changelog entries share for one to be an edit of the other.
EDITED = 0.6


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", text.lower()))


def _is_edit(words: frozenset[str], removed: list[frozenset[str]]) -> bool:
    """Whether an added entry rewrites one of the ``removed`` ones (most of its words kept).
    Bounded: a commit keeps at most MAX_LINES removed and added lines (gitrepo/patches.py)."""
    return any(words and len(words & old) / len(words | old) >= EDITED for old in removed)


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
        elif BULLET.match(line):
            flush()
            current.append(BULLET.sub("", line))
        elif current and line.startswith((" ", "\t")) and line.strip():
            current.append(line.strip())
        else:
            flush()
    flush()
    return headings


# --- evidence ---------------------------------------------------------------------------------


@dataclass
class LineLinks:
    """What the text of changed lines links: each fix to the earlier commit that wrote the
    lines it removes (``blame``), and each commit to the later ones that removed its lines or
    reverted it (``later``, oldest first: what became of a fix since)."""

    blame: dict[str, Patched]
    later: dict[str, list[Later]]


def line_links(commits: Sequence[Patched]) -> LineLinks:
    """One pass, oldest first, over the lines each patch kept: who wrote each line a commit
    removes (blame leaves out self-repairs and mechanical commits), and the reverts."""
    wrote: dict[tuple[str, str], Patched] = {}
    links: dict[str, Patched] = {}
    later: dict[str, list[Later]] = {}
    shas = [c.sha for c in commits]
    tokens = {m.group(1): c for c in commits if (m := REVERT_LINE.search(c.body))}
    for token, sha in resolve_prefixes(tokens, shas).items():
        revert = tokens[token]
        later.setdefault(sha, []).append(Later(revert.sha, revert.subject, True))
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
        for earlier in by_sha.values():
            known = later.setdefault(earlier.sha, [])
            if not any(item.sha == commit.sha for item in known):
                known.append(Later(commit.sha, commit.subject, False))
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
    for items in later.values():  # reverts first, then the changes oldest first
        items.sort(key=lambda item: not item.reverts)
    return LineLinks(links, later)


def issue_numbers(text: str, own: int | None) -> list[int]:
    numbers = [int(n) for m in ISSUE.finditer(text) for n in m.groups() if n]
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


def unit_of(commit: Patched) -> Unit:
    squash = squash_number(commit.subject)
    if squash:
        return Unit(commit, [commit], squash[0], squash[1])
    return Unit(commit, [commit], None, commit.subject)
