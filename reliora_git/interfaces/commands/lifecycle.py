"""``update``, ``edit``, ``retire`` and ``supersede``: change a record in place (SPEC.md §11);
``stale`` and ``about``: records and the code they are about."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reliora_git.interfaces.commands.common import RepoOption, reporting
from reliora_git.interfaces.commands.guard import (
    AllowExistingFlag,
    BlockFlag,
    GuardExcludeOption,
    GuardMessageOption,
    GuardOption,
    GuardPathOption,
    guards_from_flags,
)
from reliora_git.interfaces.commands.reporting import wrote
from reliora_git.interfaces.output import Printer, print_json
from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import find_store

if TYPE_CHECKING:
    from reliora_git.operations.freshness import Freshness
    from reliora_git.operations.lessons.lifecycle import Changes


def update(
    record_id: Annotated[str, typer.Argument(metavar="ID", help="An id, or a unique prefix.")],
    title: Annotated[str | None, typer.Option(help="New title.")] = None,
    task: Annotated[str | None, typer.Option(help="New task.")] = None,
    solution: Annotated[str | None, typer.Option(help="New solution.")] = None,
    why: Annotated[str | None, typer.Option(help="New 'why it worked'.")] = None,
    applicability: Annotated[str | None, typer.Option(help="New applicability.")] = None,
    verification: Annotated[str | None, typer.Option(help="New verification.")] = None,
    project_context: Annotated[str | None, typer.Option(help="New project context.")] = None,
    confidence: Annotated[str | None, typer.Option(help="low, medium or high.")] = None,
    add_problem: Annotated[list[str] | None, typer.Option(help="Append a problem.")] = None,
    add_failed: Annotated[list[str] | None, typer.Option(help="Append a failed attempt.")] = None,
    add_warning: Annotated[list[str] | None, typer.Option(help="Append a warning.")] = None,
    add_asked: Annotated[
        list[str] | None,
        typer.Option(
            "--add-asked",
            metavar="TEXT",
            help="Append a way someone would ask for a task where it helps, in their words.",
        ),
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="The tags (replace them all).")] = None,
    path: Annotated[list[str] | None, typer.Option(help="The code paths (replace them).")] = None,
    add_tag: Annotated[list[str] | None, typer.Option(help="Add a tag (repeatable).")] = None,
    add_path: Annotated[
        list[str] | None, typer.Option(help="Add a code path (repeatable).")
    ] = None,
    supersedes: Annotated[
        list[str] | None,
        typer.Option(
            "--supersedes", metavar="ID", help="Add a record this one replaces (id or prefix)."
        ),
    ] = None,
    json_input: Annotated[
        str | None,
        typer.Option("--json", metavar="-", help="Read the changes as a JSON object on stdin."),
    ] = None,
    guard: GuardOption = None,
    guard_path: GuardPathOption = None,
    guard_exclude: GuardExcludeOption = None,
    guard_message: GuardMessageOption = None,
    block: BlockFlag = False,
    allow_existing: AllowExistingFlag = False,
    repo: RepoOption = None,
) -> None:
    """Change a record in place (fields replace, --add-* append).

    Unknown front-matter keys and sections are kept, `updated` is set to today
    (UTC). The change is checked like a new record (validation, secrets) and
    refused when the file changed on disk after it was read, so nobody's
    write is lost.

    \b
    Examples:
      reliora update flaky-pytest --add-warning "not needed on pytest 8.2+"
      reliora update flaky-pytest --add-path tests/conftest.py --supersedes old-timeouts
      reliora update flaky-pytest --add-asked "the e2e job dies before it finishes on CI"
      echo '{"solution": "…", "addProblems": ["…"]}' | reliora update flaky-pytest --json -
    """
    from reliora_git.operations.lessons.lifecycle import Changes, updated

    as_json = json_input is not None
    with reporting(as_json):
        changes = _json_changes(json_input) if json_input is not None else Changes()
        given = {
            "title": title,
            "task": task,
            "solution": solution,
            "why_it_worked": why,
            "applicability": applicability,
            "verification": verification,
            "project_context": project_context,
            "confidence": confidence,
            "tags": tag,
            "paths": path,
        }
        changes.replace.update({k: v for k, v in given.items() if v is not None})
        for name, items in (
            ("problems", add_problem),
            ("failed_attempts", add_failed),
            ("warnings", add_warning),
            ("asked_as", add_asked),
            ("tags", add_tag),
            ("paths", add_path),
            ("supersedes", supersedes),
        ):
            if items:
                changes.append[name] = [*changes.append.get(name, []), *items]
        added_guards = guards_from_flags(guard, guard_path, block, guard_exclude, guard_message)
        if added_guards:  # --guard appends (a JSON "guards" list replaces them all)
            had = changes.append.get("guards", [])
            changes.append["guards"] = [*had, *added_guards]  # type: ignore[list-item]
        store = find_store(repo)
        result = updated(store, record_id, changes, allow_existing=allow_existing)
        saved = result.record
        wrote(f"updated {saved.id} in {saved.locator}")
        messages = [w.message for w in result.path_warnings]
        messages += [w.message for w in result.guard_warnings]
        for message in messages:  # stderr: a --json document stays one document
            Printer().warn(message)
        warnings = [w.to_json() for w in result.path_warnings]
        warnings += [w.to_json() for w in result.guard_warnings]
        _report(saved.id, saved.locator, saved.updated, "updated", as_json, warnings)


def edit(
    record_id: Annotated[str, typer.Argument(metavar="ID", help="An id, or a unique prefix.")],
    repo: RepoOption = None,
) -> None:
    """Edit a record in $EDITOR; it is saved only when valid.

    The editor opens a draft copy in .reliora/.drafts/. A draft that is not a
    valid record (or holds a secret, or changes the id) is kept and named, so
    nothing typed is lost; the record is refused if its file changed meanwhile.

    \b
    Example:
      EDITOR=nano reliora edit flaky-pytest
    """
    import os
    import shlex
    import subprocess

    from reliora_git.operations.lessons.lifecycle import begin_edit, finish_edit
    from reliora_git.storage.store import store_folder

    with reporting():
        store = find_store(repo)
        editing = begin_edit(store, record_id)
        drafts = store_folder(store, store.path / ".drafts")
        draft = drafts / f"edit-{editing.record_id}-{os.getpid()}.md"
        draft.unlink(missing_ok=True)  # never follow a planted link
        with open(draft, "xb") as handle:
            handle.write(editing.original)
        shown = store.locator(draft)
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        if subprocess.run([*shlex.split(editor), str(draft)], check=False).returncode != 0:
            raise RelioraError(
                f"the editor failed; your draft is kept at {shown}", code="editor_failed"
            )
        text = draft.read_bytes()
        if text == editing.original:
            draft.unlink()
            Printer().line(f"no change to {editing.record_id}")
            return
        try:
            saved = finish_edit(store, editing, text.decode("utf-8"))
        except (RelioraError, UnicodeDecodeError) as exc:
            reason = exc.message if isinstance(exc, RelioraError) else "is not UTF-8"
            code = exc.code if isinstance(exc, RelioraError) else "invalid_record"
            raise RelioraError(f"{reason}; your draft is kept at {shown}", code=code) from None
        draft.unlink()
        wrote(f"saved {saved.id} in {saved.locator}")
        Printer().line(f"saved {saved.id} in {saved.locator}")


def retire(
    record_id: Annotated[str, typer.Argument(metavar="ID", help="An id, or a unique prefix.")],
    reason: Annotated[str, typer.Option(help="Why it no longer holds.")],
    repo: RepoOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Retire a record: search leaves it out, its file stays.

    The record gets `status: retired` and `retired_reason`; `search
    --include-retired` and `show` still find it. To mark it replaced by a newer
    record instead: `reliora supersede NEW ID`.

    \b
    Example:
      reliora retire flaky-pytest --reason "fixed upstream in pytest-timeout 2.3"
    """
    from reliora_git.operations.lessons.lifecycle import retire as run_retire

    with reporting(json_output):
        saved = run_retire(find_store(repo), record_id, reason)
        wrote(f"retired {saved.id} in {saved.locator}")
        _report(saved.id, saved.locator, saved.updated, "retired", json_output)


def supersede(
    new_id: Annotated[
        str, typer.Argument(metavar="NEW", help="The record that replaces them (id or prefix).")
    ],
    old_ids: Annotated[
        list[str], typer.Argument(metavar="OLD…", help="The records it replaces (ids or prefixes).")
    ],
    repo: RepoOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Mark OLD records as replaced by the NEW one.

    Adds OLD to NEW's `supersedes`, as `reliora update NEW --supersedes OLD`
    does: OLD's files are not touched, and search leaves them out unless
    --include-retired (`show OLD` says `superseded by: NEW`). Only an active
    record supersedes. A lesson that no longer holds and has no successor is
    retired instead (`reliora retire ID --reason …`).

    \b
    Example:
      reliora supersede flaky-pytest-timeouts-2d5170 old-ci-timeouts-81c0d2
    """
    from reliora_git.operations.lessons.lifecycle import Changes, updated

    with reporting(json_output):
        changes = Changes(append={"supersedes": list(old_ids)})
        saved = updated(find_store(repo), new_id, changes).record
        wrote(f"updated {saved.id} in {saved.locator}")
        if saved.status != "active":  # saved as asked, but it replaces nothing while so
            Printer().warn(
                f"{saved.id} is {saved.status}: it supersedes nothing until it is active again"
            )
        if json_output:
            print_json(
                {
                    "id": saved.id,
                    "locator": saved.locator,
                    "updated": saved.updated,
                    "supersedes": saved.supersedes,
                }
            )
        else:
            Printer().line(f"{saved.id} supersedes {', '.join(saved.supersedes)} ({saved.locator})")


def _report(
    record_id: str,
    locator: str,
    updated: str | None,
    what: str,
    as_json: bool,
    warnings: list[dict[str, str]] | None = None,
) -> None:
    if as_json:
        document: dict[str, object] = {"id": record_id, "locator": locator, "updated": updated}
        if warnings:
            document["warnings"] = warnings
        print_json(document)
    else:
        Printer().line(f"{what} {record_id} in {locator}")


def _json_changes(source: str) -> Changes:
    from reliora_git.operations.lessons.lifecycle import changes_from_json

    if source != "-":
        raise RelioraError("--json takes '-' (the JSON object on stdin)", code="invalid_option")
    try:
        data = json.loads(sys.stdin.read())
    except json.JSONDecodeError as exc:
        raise RelioraError(f"stdin is not JSON: {exc}", code="invalid_json") from None
    return changes_from_json(data)


IncludeRetired = Annotated[
    bool,
    typer.Option("--include-retired", help="List retired and superseded records too (marked)."),
]


def stale(
    repo: RepoOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    include_retired: IncludeRetired = False,
    exit_code: Annotated[
        bool, typer.Option("--exit-code", help="Exit 1 when a record is stale (for CI).")
    ] = False,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            metavar="REF",
            help="Judge at the merge base of HEAD with REF: the code changes of the commits "
            "REF lacks are not counted (default: the default branch, when HEAD is on another "
            "branch or detached; --base HEAD counts every commit).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """List records whose code changed since they were recorded.

    Read from git history.

    A record is stale when a commit changed the code of one of its `paths`
    after the last commit that changed the record (a change of only blank
    lines, whitespace or comment lines does not count), when a path no longer
    exists, or when `outdated` feedback came after its last change. `success` or `partial`
    feedback committed after the code changed confirms it: it is measured from
    that feedback's commit. Each is listed with the commits that touched its
    paths since. Retired and superseded records are left out unless
    --include-retired.

    On a branch (HEAD not on the default branch), it is judged at the merge
    base with the default branch: what the branch does to the code is its own
    change, under review, not news that a lesson went out of date (its updates
    to records still count). --base REF names another base; --base HEAD
    judges at HEAD.

    \b
    Examples:
      reliora stale --json
      reliora stale --exit-code     # in CI: fail while a lesson is stale
      reliora stale --base HEAD     # count this branch's own commits too
    """
    from reliora_git.operations.lessons.about import stale_records

    with reporting(json_output):
        result = stale_records(find_store(repo), include_retired=include_retired, base=base)
        checked, found = result.checked, result.stale
        at = result.at
        if json_output:
            print_json(
                {
                    "checked": checked,
                    # Null: judged at HEAD; else the merge base, and the commits not counted.
                    "base": None
                    if at is None or at.base is None
                    else {"ref": at.ref, "commit": at.base, "commitsNotCounted": result.left_out},
                    "stale": [
                        {
                            "id": data["id"],
                            "title": data["title"],
                            "locator": data["locator"],
                            "status": data["status"],
                            "supersededBy": data["supersededBy"],
                            "freshness": fresh.to_json(),
                            "commits": [commit.to_json() for commit in fresh.commits],
                        }
                        for data, fresh in found
                    ],
                }
            )
        else:
            _print_stale(found, checked, result.where())
    if exit_code and found:
        raise typer.Exit(1)


def _print_stale(
    found: list[tuple[dict[str, Any], Freshness]], checked: int, where: str | None
) -> None:
    from reliora_git.interfaces.output import one_line
    from reliora_git.operations.lessons.about import lifecycle_mark

    printer = Printer()
    for data, fresh in found:
        mark = lifecycle_mark(data)
        shown = f"  [{one_line(mark)}]" if mark else ""
        printer.line(f"{data['id']}  {one_line(data['title'])}{shown}")
        printer.line(f"    {one_line(fresh.line() or '')}")
        if fresh.confirmed_at is not None:
            confirmed = fresh.confirmed_at.to_json()
            printer.line(f"    confirmed by feedback in {confirmed['commit'][:10]}")
        for commit in fresh.commits[:10]:
            info = commit.to_json()
            printer.line(
                f"    {info['commit'][:10]} {info['date'][:10]} {one_line(commit.subject)}"
            )
    printer.line(f"{len(found)} of {checked} record(s) with paths are stale")
    if where is not None:
        printer.line(one_line(where))


def about(
    paths: Annotated[list[str], typer.Argument(metavar="PATH…", help="Files or folders.")],
    repo: RepoOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    include_retired: IncludeRetired = False,
) -> None:
    """List the records about these files or folders.

    Those whose `paths` name them, and those whose guards watch them (marked
    `guard: PATTERN`: the pre-commit hook checks the lines added there),
    newest first. Read them before editing the code: stale ones (the code
    changed since) are marked. Retired and superseded records are left out
    unless --include-retired (then marked `retired` or `superseded by ID`).

    \b
    Example:
      reliora about src/billing/retry.py
    """
    from reliora_git.interfaces.output import one_line
    from reliora_git.operations.lessons.about import about as run_about
    from reliora_git.operations.lessons.about import lifecycle_mark

    with reporting(json_output):
        found = run_about(find_store(repo), paths, include_retired=include_retired)
        if json_output:
            print_json(found.to_json())
            return
        printer = Printer()
        if not found.records:
            printer.line("No experiences are about " + ", ".join(found.paths) + ".")
        for data, fresh in found.records:
            marks = [lifecycle_mark(data), "stale" if fresh.state == "stale" else None]
            mark = "".join(f"  [{one_line(m)}]" for m in marks if m)
            printer.line(f"{data['id']}  {one_line(data['title'])}{mark}")
            if "paths" in found.matched_by(data):
                own = data.get("paths") or []
                printer.line(f"    about: {', '.join(one_line(p) for p in own)}")
            for guard in found.guards.get(data["id"], []):  # why a guard-only lesson is here
                printer.line(f"    guard: {_shown_guard(guard)}")
            if fresh.line():
                printer.line(f"    {one_line(fresh.line() or '')}")


def _shown_guard(guard: dict[str, Any]) -> str:
    """A guard that watches the files asked about: its pattern, severity and files."""
    from reliora_git.interfaces.output import one_line
    from reliora_git.records.guards import shown_pattern

    watches = ", ".join(one_line(p) for p in guard["watches"])
    return f"{shown_pattern(guard['pattern'])} ({guard['severity']}; watches {watches})"


def register(app: typer.Typer) -> None:
    app.command()(update)
    app.command()(edit)
    app.command()(retire)
    app.command()(supersede)
    app.command()(stale)
    app.command()(about)
