"""``reliora history``: each place judged and ranked by explained evidence (SPEC.md §16). Pure.

Sources (sources.py): ``pull-request`` (a merged pull request that shows a fix, one entry
for all its commits), ``changelog`` (a fix line, linked to the commit that added it and so
to its pull request), ``commit`` (a fix with evidence pushed without a pull request, a
revert with its reason), and ``session`` entries from past agent sessions (agents/), joined
by the command. Every entry's score is the sum of its parts, each named in ``why``
(docs/history.md gives the parts, their weights and what they were measured on).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from reliora_git.gitrepo.patches import Patched
from reliora_git.operations.coldstart.evidence import (
    evidence_of,
    is_narration,
    later_of,
    without_narration,
)
from reliora_git.operations.coldstart.nouns import Entry, Later, Part
from reliora_git.operations.coldstart.signals import (
    ADVISORY_MERGE,
    BOT,
    CAUSE,
    DAY,
    FAILURE,
    FEATURE,
    FIX,
    FIXES_TRAILER,
    MECHANICAL_FILES,
    MENDS,
    NOISE,
    PERF,
    REVERT_LINE,
    REVERT_SUBJECT,
    SECURITY,
    SMALL_CHANGE,
    STATES,
    TEST,
    TEST_NAME,
    TRIVIAL_FIX,
    WEIGHTS,
    WINDOW_DAYS,
    is_code,
    is_noise,
)
from reliora_git.operations.coldstart.sources import (
    ChangelogLine,
    LineLinks,
    Unit,
    changelog_lines,
    issue_numbers,
    line_links,
    unit_of,
    units,
)


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
    unit: Unit,
    changelog: list[ChangelogLine],
    blame: dict[str, Patched],
    now: int,
    reverted: dict[str, str] | None = None,
) -> list[Part]:
    """The evidence parts of one unit; [] when it is not a lesson (noise, no fix)."""
    head = unit.head
    members = unit.members or [head]
    title = unit.title
    if is_noise(title, head.author) or BOT.search(head.author):
        return []
    # A squash merge lists its commits' subjects as `* subject` lines of its body; those that
    # narrate the request's iterations ("fix lint", "address review") are not evidence of a
    # fix, a revert or a cause (evidence.py).
    squashed = [
        line[2:]
        for m in members
        for line in m.body.splitlines()
        if line.startswith("* ") and not is_narration(line[2:])
    ]
    subjects = [title, *(m.subject for m in members), *squashed[:20]]
    bodies = [
        without_narration(unit.pr_body),
        *(without_narration(m.body) for m in members),
        without_narration(head.body),
    ]
    body = "\n".join(dict.fromkeys(b for b in bodies if b))
    text = "\n".join([*subjects, body])
    if ADVISORY_MERGE.match(unit.via_subject) or ADVISORY_MERGE.match(head.subject):
        # A security advisory's fix (GitHub merges it, or squashes it, from a private fork).
        text += "\nsecurity advisory (merged from its private fork)"
    parts: list[Part] = []
    revert = REVERT_SUBJECT.match(head.subject) or REVERT_LINE.search(head.body)
    fixes = [line for line in changelog if line.is_fix]
    if revert:
        reason = body.strip()
        if len(reason) >= 20:
            said = _first(CAUSE, reason) or reason[:100]
            parts.append(Part("revert reason", WEIGHTS["revert reason"], said))
        else:
            parts.append(Part("revert without a reason", WEIGHTS["revert without a reason"]))
        token = match.group(1) if (match := REVERT_LINE.search(head.body)) else ""
        named = (reverted or {}).get(token) or (revert.group(1) if revert.re is REVERT_SUBJECT
                                                else token[:12])  # fmt: skip
        parts.append(Part("fix", WEIGHTS["fix"], f"reverts {token[:12]} ({named[:80]})"))
    elif any(FIX.search(s) for s in subjects) or FIXES_TRAILER.search(
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
    elif (perf := PERF.search(body)) and any(is_code(f) for m in members for f in m.files):
        parts.append(Part("fix", WEIGHTS["fix"], f"a performance fault: {perf.group()!r}"))
    elif MENDS.match(title) and tested(members) and issue_numbers(text, unit.pull_request):
        said = f"{title.split()[0].lower()}… with a test and an issue"
        parts.append(Part("fix", WEIGHTS["fix"], said))
    elif not (CAUSE.search(body) and FAILURE.search(text)):
        # No word says so; a small change of code with a test, not announced as a feature,
        # is still most often a fix (terse subjects: "parse plain int in more inputs").
        changed = sum(m.changed_lines for m in members)
        coded = any(is_code(f) for m in members for f in m.files)
        if not (tested(members) and coded and changed <= SMALL_CHANGE * 2) or FEATURE.match(title):
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
    issues = issue_numbers(raw, unit.pull_request)
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


def tested(members: Sequence[Patched]) -> bool:
    """A test file changed with the code."""
    return any(TEST.search(f) for m in members for f in m.files)


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
    by_number: dict[int, list[ChangelogLine]] = {}  # indexed once, not scanned per request
    for line in lines:
        by_commit.setdefault(line.sha, []).append(line)
        for number in dict.fromkeys(line.numbers):
            by_number.setdefault(number, []).append(line)
    links = line_links(commits)
    by_sha = {c.sha: c for c in commits}
    reverted = {later.sha: sha for sha, items in links.later.items() for later in items
                if later.reverts}  # fmt: skip
    entries: list[Entry] = []
    claimed: set[int] = set()
    for unit in units(commits):
        members = unit.members or [unit.head]
        shas = [unit.head.sha, *(m.sha for m in members if m.sha != unit.head.sha)]
        shas += [unit.via] if unit.via else []
        own_lines = [line for sha in shas for line in by_commit.get(sha, [])]
        if unit.pull_request is not None:  # a line added elsewhere that names this request
            own_lines += [
                line for line in by_number.get(unit.pull_request, []) if line.sha not in shas
            ]
        parts = judge(unit, own_lines, links.blame, now, _reverted_names(unit, reverted, by_sha))
        if not parts:
            continue
        claimed.update(id(line) for line in own_lines)
        entries.append(_entry(unit, shas, parts, own_lines, head_files, names, links.later))
    entries += _changelog_entries(lines, claimed, entries, by_sha, now, head_files, names, links)
    kept = [e for e in entries if keep_gone or not e.gone]
    return rank(kept)


def _reverted_names(
    unit: Unit, reverted: dict[str, str], by_sha: dict[str, Patched]
) -> dict[str, str]:
    """The subject of the commit ``unit``'s revert line names, by the token written there."""
    token = match.group(1) if (match := REVERT_LINE.search(unit.head.body)) else ""
    sha = reverted.get(unit.head.sha)
    return {token: by_sha[sha].subject} if token and sha in by_sha else {}


def _changelog_entries(
    lines: Sequence[ChangelogLine],
    claimed: set[int],
    entries: list[Entry],
    by_sha: dict[str, Patched],
    now: int,
    head_files: frozenset[str],
    names: dict[str, list[str]],
    links: LineLinks,
) -> list[Entry]:
    """Entries for the fix lines no pull request or commit entry stands for.

    A line that repeats an entry's title is part of that entry (its changelog evidence), not
    another; a line that states no symptom (a heading, "Performance improvements") is none;
    a line a release commit added stands on the commit it repeats when one is in the window.
    """
    titles = TitleIndex(entries)
    found: list[Entry] = []
    for line in lines:
        if id(line) in claimed or not line.is_fix or is_noise(line.text, ""):
            continue
        release = NOISE.search(by_sha[line.sha].subject)  # "Release 1.2.3", "Version 1.2.3"
        # A release commit's lines tell fixes merged before it: half the line's words in an
        # earlier entry's title or subjects are enough to say which (a fix says more).
        same = titles.match(line.text, before=by_sha[line.sha].time if release else None)
        if same is not None:  # the line repeats an entry already listed
            same.changelog.append(line.text)
            if not any(part.name == "changelog" for part in same.parts):
                same.parts.insert(-1, Part("changelog", WEIGHTS["changelog"], line.text[:120]))
            if same.evidence is not None:
                same.evidence = replace(
                    same.evidence, changelog=(*same.evidence.changelog, line.text)
                )
            continue
        if not states_something(line.text):
            continue
        commit = by_sha[line.sha]
        parts = [
            Part("fix", WEIGHTS["fix"], "a changelog line under " + (line.heading or "a fix")),
            Part("changelog", WEIGHTS["changelog"], line.text[:120]),
            Part("recency", _recency(commit.time, now), _age(commit.time, now)),
        ]
        unit = Unit(commit, [commit], None, line.text)
        entry = _entry(unit, [commit.sha], parts, [line], head_files, names, links.later)
        entry.source, entry.files = "changelog", [f for f in commit.files if is_code(f)]
        found.append(entry)
    return found


def states_something(text: str) -> bool:
    """A changelog line that says what went wrong or how the behaviour changed, in a few words
    at least: not a heading alone, not "Performance improvements"."""
    return len(text.split()) >= 4 and bool(
        FIX.search(text) or FAILURE.search(text) or STATES.search(text)
    )


#: Tokens shorter than this, and these words, say nothing about which change a line is.
_TITLE_NOISE = frozenset(
    {"fix", "fixes", "fixed", "fixing", "bug", "the", "and", "for", "with", "when", "from",
     "that", "this", "into", "not", "now", "issue", "pull", "request"}
)  # fmt: skip
#: Share of the words of a line and an entry's title both hold for the line to repeat it.
REPEATS = 0.6
#: Share of a release commit's line's words an earlier entry must hold (at least two).
RELEASED = 0.5


def _title_words(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9_]+", text.lower())
    return frozenset(w for w in words if len(w) >= 3 and w not in _TITLE_NOISE)


class TitleIndex:
    """The entries by the words of their titles: which one a changelog line repeats.

    A line is compared only with the entries sharing one of its words, each counted once per
    word (a dictionary of word → entries): linear in the words, never every entry per line.
    """

    def __init__(self, entries: Sequence[Entry]) -> None:
        # Its title and each of its commits' subjects: a fork's merge is titled "Merge commit
        # from fork", its fix says what it fixes.
        self.words: list[frozenset[str]] = []
        self.entries: list[Entry] = []
        for entry in entries:
            for subject in dict.fromkeys(
                [entry.title, *(t.split("\n", 1)[0] for t in entry.texts)]
            ):
                self.words.append(_title_words(subject))
                self.entries.append(entry)
        self.by_word: dict[str, list[int]] = {}
        for n, words in enumerate(self.words):
            for word in words:
                self.by_word.setdefault(word, []).append(n)

    def match(self, text: str, before: int | None = None) -> Entry | None:
        """The entry whose title or a subject ``text`` repeats (most of the words of both);
        ``before``: a release's time, for a line of a release commit (half of the line's
        words, in an entry no newer than the release)."""
        words = _title_words(text)
        if len(words) < 2:
            return None
        shared: dict[int, int] = {}
        for word in words:
            for n in self.by_word.get(word, ())[:_PER_WORD]:
                if before is None or self.entries[n].time <= before:
                    shared[n] = shared.get(n, 0) + 1
        best = max(shared, key=lambda n: (shared[n], -n), default=None)
        if best is None:
            return None
        if before is not None:
            held = shared[best] / len(words)
            return self.entries[best] if held >= RELEASED and shared[best] >= 2 else None
        union = len(words | self.words[best])
        return self.entries[best] if shared[best] / union >= REPEATS else None


#: Entries looked at per word of a line (a common word names many: the rarer ones decide).
_PER_WORD = 50


def entry_for(
    commits: Sequence[Patched],
    head_files: frozenset[str],
    now: int,
    headings: dict[str, str] | None = None,
    later: Sequence[Patched] = (),
) -> Entry:
    """The entry of ``commits[0]`` (with, for a merge, the commits it brought), judged when it
    is a lesson, with no parts when not: ``record --from-commit`` drafts from any commit, the
    way ``history`` drafts its entries. ``later``: the commits after it up to HEAD (what they
    did to its lines is part of its evidence)."""
    unit = units(commits)[0] if commits[0].is_merge else unit_of(commits[0])
    lines = changelog_lines(unit.members or [unit.head], headings or {})
    links = line_links([*later, *commits])
    parts = judge(unit, lines, links.blame, now)
    shas = [unit.head.sha, *(m.sha for m in unit.members if m.sha != unit.head.sha)]
    return _entry(unit, shas, parts, lines, head_files, {}, links.later)


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
    unit: Unit,
    shas: list[str],
    parts: list[Part],
    lines: list[ChangelogLine],
    head_files: frozenset[str],
    names: dict[str, list[str]],
    later: dict[str, list[Later]] | None = None,
) -> Entry:
    members = unit.members or [unit.head]
    files = list(dict.fromkeys(f for m in members for f in m.files))
    code = [f for f in files if is_code(f)]
    present = [f for f in files if f in head_files]
    texts = [unit.title, unit.pr_body, *(m.subject + "\n\n" + m.body for m in members)]
    tests = []
    for member in members:
        for file, line in member.added:
            match = TEST_NAME.match(line) if TEST.search(file) else None
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
        present,
        bool(code) and not any(f in head_files for f in code),
        records,
        unit.head.boundary,
        list(dict.fromkeys(tests))[:5],
        evidence_maker=functools.partial(
            evidence_of, members, unit.pr_body, [line.text for line in lines],
            later_of(shas, later or {}),
        ),
    )  # fmt: skip
