"""Guards at work (SPEC.md §15): which fire on a staged change, a commit, a branch or the code.

The guards come from the store index (each record's guards, defaults applied, in
its IndexedRecord); the lines from git (gitrepo/diff.py) or from the files of
the working tree or of HEAD. Matching is records/guards.py's, on RE2. Guards of
retired and superseded records are off; a finding of a stale record says so.
"""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliora_git.gitrepo import git
from reliora_git.operations.guards.nouns import GuardFinding, GuardOf, GuardReport
from reliora_git.records.errors import RelioraError
from reliora_git.records.guard_match import Meter, lines_matching
from reliora_git.records.guards import ActiveGuard, path_applies
from reliora_git.records.text import escape_invisible
from reliora_git.storage.store import STORE_DIR, Store

if TYPE_CHECKING:
    from reliora_git.gitrepo.diff import AddedLines, ChangeLines
    from reliora_git.operations.freshness import Judged
    from reliora_git.storage.index import StoreIndex

#: Files larger than this are not judged (generated or vendored code, data).
MAX_GUARDED_BYTES = 1 << 20
#: Git's own test for a binary file: a NUL byte in its first 8,000 bytes.
_BINARY_PROBE = 8000
#: A finding shows at most this much of the line it is about.
MAX_SHOWN_LINE = 120


# --- the guards of a store ---------------------------------------------------------------------


def guards_of_index(index: StoreIndex, ids: Iterable[str] | None = None) -> list[GuardOf]:
    """The guards of the index's active records (of the records ``ids`` names, whatever status)."""
    wanted = set(ids) if ids is not None else None
    found: list[GuardOf] = []
    for doc in index.inverted.docs:
        if doc is None or not doc.guards:
            continue
        if wanted is None and not doc.is_active:
            continue  # retired and superseded records' guards are off
        if wanted is not None and doc.id not in wanted:
            continue
        found.extend(GuardOf(doc.id, doc.locator, ActiveGuard(*g), doc.paths) for g in doc.guards)
    return found


def committed_guards(store: Store, tree: str) -> list[GuardOf]:
    """The active guards of HEAD's store: what the hook runs when no record is staged.

    ``tree`` is the id of HEAD's ``.reliora/experiences`` ('' for none): the guards
    found in it are remembered under it (storage/guardlist.py), so that a store
    without guards costs no index and no diff.
    """
    from reliora_git.storage.guardlist import read_guard_list, write_guard_list

    if not tree:
        return []  # no commit yet, or no records in it: nothing staged there either
    rows = read_guard_list(store.root, tree)
    if rows is None:
        from reliora_git.storage.gitfiles import GitFiles
        from reliora_git.storage.index import open_index

        # The records' own tree: names below it, whatever folder git runs in (--full-tree).
        listing = git.run(["ls-tree", "-r", "-z", "--full-tree", tree], store.root)
        entries = git.parse_ls_tree(listing)
        folder = f"{STORE_DIR}/experiences/"
        files = GitFiles.of(store, [(folder + e.path, e.mode, e.blob) for e in entries])
        with open_index(store, source=files) as index:
            rows = [g.row() for g in guards_of_index(index)]
        write_guard_list(store.root, tree, rows)
    return [GuardOf.of_row(row) for row in rows]


# --- matching ----------------------------------------------------------------------------------


def store_folder(top_prefix: str) -> str:
    """The store's folder from the top of the work tree: never judged (records quote code)."""
    return f"{top_prefix}{STORE_DIR}/"


def wanted_by(guards: Sequence[GuardOf], store_dir: str) -> Any:
    """Whether any guard looks at a path (the store's own files never)."""

    def wanted(path: str) -> bool:
        if path.startswith(store_dir):
            return False
        return any(path_applies(g.guard, path) for g in guards)

    return wanted


def findings_in_lines(
    guards: Sequence[GuardOf], change: ChangeLines, meter: Meter | None = None
) -> list[GuardFinding]:
    """What fires on the added lines of a change: one finding per line and record."""
    found: list[GuardFinding] = []
    meter = meter or Meter()
    for added in change.files:
        found.extend(_findings_in_added(guards, added, meter))
    return found


def _findings_in_added(
    guards: Sequence[GuardOf], added: AddedLines, meter: Meter
) -> Iterator[GuardFinding]:
    for start, g in _hits(guards, added.path, added.text, meter):
        number, text = added.line_at(start)
        yield _finding(added.path, number, g, text)


def _hits(
    guards: Sequence[GuardOf],
    path: str,
    text: bytes,
    meter: Meter,
    each_guard: bool = False,
) -> Iterator[tuple[int, GuardOf]]:
    """(line start, guard) for each line of ``text`` and record whose guard matches it, in
    line order, then the guards' order: one finding per line and record (and guard, with
    ``each_guard``)."""
    applicable = _applicable(guards, path)
    if not applicable:
        return
    # Blocking guards search first: if the time runs out, the guards it skips are warnings.
    by_severity = sorted(applicable, key=lambda g: g.guard.severity != "block")
    patterns = list(dict.fromkeys(g.guard.pattern for g in by_severity))
    position = {pattern: i for i, pattern in enumerate(patterns)}
    for start, hits in lines_matching(patterns, text, meter):
        matched = set(hits)
        seen: set[tuple[str, int]] = set()
        for g in applicable:
            key = (g.record_id, g.guard.number if each_guard else 0)
            if position[g.guard.pattern] in matched and key not in seen:
                seen.add(key)
                yield start, g


def _applicable(guards: Sequence[GuardOf], path: str) -> list[GuardOf]:
    """The guards that look at ``path``: each distinct set of paths is judged once."""
    judged: dict[tuple[str, tuple[str, ...], tuple[str, ...]], bool] = {}
    found = []
    for g in guards:
        key = (g.guard.scope, g.guard.paths, g.guard.exclude)
        applies = judged.get(key)
        if applies is None:
            applies = judged[key] = path_applies(g.guard, path)
        if applies:
            found.append(g)
    return found


def findings_in_text(
    guards: Sequence[GuardOf],
    path: str,
    data: bytes,
    meter: Meter | None = None,
    each_guard: bool = False,
) -> list[GuardFinding]:
    """What fires on every line of one file."""
    if not data:
        return []  # no line at all: not even an empty one for `^` to match
    # The newline that ends the last line starts no line of its own (`$`, `x*`).
    data = data[:-1] if data.endswith(b"\n") else data
    found = []
    line, counted = 1, 0
    for start, g in _hits(guards, path, data, meter or Meter(), each_guard):
        line += data.count(b"\n", counted, start)
        counted = start
        end = data.find(b"\n", start)
        found.append(_finding(path, line, g, data[start : end if end >= 0 else len(data)]))
    return found


def _finding(path: str, line: int, g: GuardOf, text: bytes) -> GuardFinding:
    guard = g.guard
    return GuardFinding(
        path, line, g.record_id, guard.severity, guard.message, _shown(text), number=guard.number
    )


def _shown(raw: bytes) -> str:
    """A line of code as a finding shows it: one line, invisible characters escaped, cut.

    Secrets are masked later, for the findings actually shown (:func:`mask_secrets`).
    """
    text = raw.decode("utf-8", "replace").strip()
    if len(text) > MAX_SHOWN_LINE:
        text = text[: MAX_SHOWN_LINE - 1] + "…"
    return escape_invisible(text)


def mask_secrets(findings: Sequence[GuardFinding]) -> None:
    """Mask what looks like a secret in the lines findings show (loads the scanner: only then)."""
    if not any(f.text for f in findings):
        return
    from reliora_git.records.credentials import redact

    for finding in findings:
        if finding.text:
            finding.text = redact(finding.text)


def mark_stale(
    store: Store,
    findings: Sequence[GuardFinding],
    guards: Sequence[GuardOf],
    at: Judged | None = None,
) -> None:
    """Mark the findings of stale records (SPEC.md §12), measured for those records only.

    At HEAD (the hook: the staged change is not in it), or as ``at`` says (``review``:
    at the merge base): a finding is never called stale because of the change it is in.
    """
    fired = {f.record_id for f in findings}
    if not fired:
        return
    from reliora_git.operations.freshness import Subject, freshness

    subjects = {
        g.record_id: Subject(g.record_id, g.locator, g.record_paths)
        for g in guards
        if g.record_id in fired and g.record_paths
    }
    if not subjects:
        return
    states = freshness(store, list(subjects.values()), at)
    for finding in findings:
        fresh = states.get(finding.record_id)
        finding.stale = fresh is not None and fresh.state == "stale"


# --- where the lines come from -----------------------------------------------------------------


def top_of(store: Store) -> tuple[Path, str] | None:
    """The top of the work tree and the store's root from it, or None outside git."""
    top = git.toplevel(store.root)
    if top is None:
        return None
    return top, git.show_prefix(store.root)


def staged_report(
    store: Store, guards: Sequence[GuardOf], top: Path, prefix: str, meter: Meter | None = None
) -> GuardReport:
    """The guards over the lines the index adds (what the commit being made adds)."""
    from reliora_git.gitrepo.diff import staged_lines

    if not guards:
        return GuardReport()
    store_dir = store_folder(prefix)
    change = staged_lines(top, wanted_by(guards, store_dir), MAX_GUARDED_BYTES, [store_dir])
    return _report_of(guards, change, meter or Meter())


def commit_report(
    store: Store,
    guards: Sequence[GuardOf],
    base: str | None,
    head: str,
    meter: Meter | None = None,
) -> GuardReport:
    """The guards over the lines ``head`` adds to ``base`` (None: to nothing)."""
    from reliora_git.gitrepo.diff import commit_lines

    where = top_of(store)
    if where is None or not guards:
        return GuardReport(guards=len(guards))
    top, prefix = where
    store_dir = store_folder(prefix)
    change = commit_lines(
        top, base, head, wanted_by(guards, store_dir), MAX_GUARDED_BYTES, [store_dir]
    )
    return _report_of(guards, change, meter or Meter())


def _report_of(guards: Sequence[GuardOf], change: ChangeLines, meter: Meter) -> GuardReport:
    from reliora_git.operations.guards.budget import note_of

    report = GuardReport(findings_in_lines(guards, change, meter), change.skipped, len(guards))
    report.files = len(change.files)
    report.budget = note_of(meter, guards, report.files)
    return report


def working_tree_report(
    store: Store,
    guards: Sequence[GuardOf],
    limit: int | None = None,
    *,
    each_guard: bool = False,
    enough: int | None = None,
) -> GuardReport:
    """The guards over every line of the files of the working tree (stops at ``limit``).

    ``each_guard`` and ``enough``: one finding per line and guard, at most ``enough`` a
    guard, stopping once every guard has them (as :func:`tree_report`).
    """
    report = GuardReport(guards=len(guards))
    if not guards:
        return report
    where = top_of(store)
    top, prefix = where if where is not None else (store.root, "")
    wanted = wanted_by(guards, store_folder(prefix))
    keep = _Keeper(guards, each_guard, enough)
    for path, data in _work_tree_files(top, where is not None, wanted, report):
        if keep.add(report.findings, findings_in_text(guards, path, data, each_guard=each_guard)):
            break
        if limit is not None and len(report.findings) >= limit:
            del report.findings[limit:]
            break
    return report


class _Keeper:
    """Keeps at most ``enough`` findings a guard (or record); says when all have them."""

    def __init__(self, guards: Sequence[GuardOf], each_guard: bool, enough: int | None) -> None:
        self.each_guard, self.enough = each_guard, enough
        self.keys = len({(g.record_id, g.guard.number if each_guard else 0) for g in guards})
        self.kept: dict[tuple[str, int], int] = {}

    def add(self, into: list[GuardFinding], found: Sequence[GuardFinding]) -> bool:
        """Add what ``found`` may add to ``into``; whether every guard has enough now."""
        if self.enough is None:
            into.extend(found)
            return False
        for finding in found:  # `^` matches every line of every file: keep a few
            key = (finding.record_id, finding.number if self.each_guard else 0)
            if self.kept.get(key, 0) < self.enough:
                self.kept[key] = self.kept.get(key, 0) + 1
                into.append(finding)
        return len(self.kept) == self.keys and min(self.kept.values()) >= self.enough


def tree_report(
    store: Store,
    guards: Sequence[GuardOf],
    rev: str = "HEAD",
    meter: Meter | None = None,
    each_guard: bool = False,
    enough: int | None = None,
) -> GuardReport:
    """The guards over every line of the files of commit ``rev`` (``check``: HEAD's code
    already repeats a lesson; ``review``: a guard the change adds matches head's code).

    ``each_guard``: one finding per line and guard (not per line and record). ``enough``:
    keep at most this many findings a guard (or record), and stop once all have them.
    """
    from reliora_git.operations.guards.budget import note_of

    report = GuardReport(guards=len(guards))
    where = top_of(store)
    if where is None or not guards or git.verify_ref(store.root, rev) is None:
        return report
    top, prefix = where
    wanted = wanted_by(guards, store_folder(prefix))
    entries = [
        e
        for e in git.parse_ls_tree(git.run(["ls-tree", "-r", "-z", rev], top))
        if e.mode not in ("120000", "160000") and wanted(e.path)
    ]
    blobs = git.read_blobs(top, [e.blob for e in entries], MAX_GUARDED_BYTES)
    meter = meter or Meter()
    keep = _Keeper(guards, each_guard, enough)
    for entry in entries:
        blob = blobs[entry.blob]
        if blob.data is None:
            report.skipped.append((entry.path, f"larger than {MAX_GUARDED_BYTES // 1024} KiB"))
        elif b"\0" not in blob.data[:_BINARY_PROBE]:
            found = findings_in_text(guards, entry.path, blob.data, meter, each_guard)
            if keep.add(report.findings, found):
                break
    report.files = len(entries) - len(report.skipped)
    report.budget = note_of(meter, guards, report.files)
    return report


def _work_tree_files(
    top: Path, in_git: bool, wanted: Any, report: GuardReport
) -> Iterator[tuple[str, bytes]]:
    """(path from the top, bytes) of the regular, text files of the working tree within the limit.

    In git: tracked files and untracked ones not ignored (``git ls-files``), read from
    disk as they are now; outside git, a walk that skips hidden folders.
    """
    if in_git:
        out = git.run(
            ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name"], top
        )
        paths: Iterable[str] = sorted(set(git.split_z(out)))
    else:
        paths = _walk(top)
    for path in paths:
        if not wanted(path):
            continue
        full = top.joinpath(*path.split("/"))
        try:
            stat = full.lstat()
        except OSError:
            continue  # deleted, not yet staged
        if not stat_module.S_ISREG(stat.st_mode):
            continue
        if stat.st_size > MAX_GUARDED_BYTES:
            report.skipped.append((path, f"larger than {MAX_GUARDED_BYTES // 1024} KiB"))
            continue
        try:
            data = full.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:_BINARY_PROBE]:
            continue
        yield path, data


def _walk(top: Path) -> Iterator[str]:
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = Path(folder).relative_to(top).as_posix()
        for name in sorted(files):
            yield name if rel == "." else f"{rel}/{name}"


def refuse_unknown(ids: Sequence[str], guards: Sequence[GuardOf]) -> None:
    """An error naming the ids given whose records have no guard."""
    have = {g.record_id for g in guards}
    missing = [i for i in ids if i not in have]
    if missing:
        raise RelioraError(f"no guard in record(s): {', '.join(missing)}", code="usage")


def add_head_warnings(store: Store, index: StoreIndex, report: Any) -> None:
    """``check``: a warning on each active record whose guard matches HEAD's code already.

    The code then already repeats the lesson (it came in with --no-verify, before the
    guard, or from elsewhere): the guard will fire whenever those lines are touched.
    ``check`` gates CI on records from pull requests, so the guards get a review's time
    (operations/guards/budget.py); when it runs out, the record whose guard used most
    of it gets a warning saying so.
    """
    from reliora_git.operations.guards.budget import REVIEW_SECONDS, budget_meter
    from reliora_git.records.model import Problem

    guards = guards_of_index(index)
    if not guards:
        return
    head = tree_report(store, guards, "HEAD", budget_meter(REVIEW_SECONDS))
    by_record: dict[str, list[GuardFinding]] = {}
    for finding in head.findings:
        by_record.setdefault(finding.record_id, []).append(finding)
    locators = {g.record_id: g.locator for g in guards}
    allowed = {(g.record_id, g.guard.number) for g in guards if g.guard.existing_allowed}
    problems: dict[str, list[Problem]] = {}
    for record_id, findings in by_record.items():
        first = findings[0]
        more = f" and {len(findings) - 1} more line(s)" if len(findings) > 1 else ""
        # The same words as review's warning for a guard saved with --allow-existing.
        accepted = all((record_id, f.number) in allowed for f in findings)
        why = (
            "matches accepted when it was saved (existing: allowed)"
            if accepted
            else "the code repeats the lesson"
        )
        message = (
            f"a guard matches HEAD's code already ({escape_invisible(first.path)}:{first.line}"
            f"{more}): {why}; `reliora guard test {record_id}` lists them"
        )
        problems[locators[record_id]] = [Problem("warning", message)]
    note = head.budget
    if note is not None:
        # Named on the record whose guard used most of the time, else on the first one.
        record_id = note.record_id or guards[0].record_id
        problems.setdefault(locators[record_id], []).append(
            Problem("warning", note.summary("check of HEAD's code"))
        )
    report.add_problems(
        problems, [f.locator for f in report.files], {v: k for k, v in locators.items()}
    )
