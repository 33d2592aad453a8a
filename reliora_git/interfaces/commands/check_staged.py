"""``check --staged``, without Typer: the pre-commit hook runs it on every commit.

``__main__`` sends the hook's exact command lines here before the CLI framework
is imported (its import costs more than checking one staged record); ``check``
in commands/check.py calls the same function for every other spelling.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.interfaces.commands.reporting import reporting

if TYPE_CHECKING:
    from reliora_git.operations.guards.nouns import GuardFinding
    from reliora_git.operations.review.staged_about import LessonsAbout
    from reliora_git.storage.store import Store


def run_check_staged(
    paths: list[str] | None, repo: Path | None, json_output: bool, show_all: bool = False
) -> int:
    """Check the git index; the exit code (1 for a conflict or a blocking invalid record)."""
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.review.staged import check_staged
    from reliora_git.records.errors import RelioraError
    from reliora_git.storage.config import load_config
    from reliora_git.storage.gitfiles import find_git_store

    with reporting(json_output):
        if paths:
            raise RelioraError("--staged checks the whole index; give no PATHS", code="usage")
        store = find_git_store(repo)
        config = load_config(store)
        result = check_staged(
            store,
            duplicates=config.hook_duplicates,
            duplicate_overlap=config.duplicate_overlap,
            secrets_entropy=config.secrets_entropy,
        )
        findings = result.guards.findings
        if findings:
            from reliora_git.operations.guards.scan import mask_secrets

            mask_secrets(findings)
        if json_output:
            guard_json = result.guards.to_json()
            found = _lessons_about(store)
            print_json(
                {
                    **result.report.to_json(),
                    "staged": True,
                    "guardFindings": guard_json,
                    "guardBudget": None
                    if result.guards.budget is None
                    else result.guards.budget.to_json(),
                    "lessonsAbout": None
                    if found is None
                    else {"lessons": found.lessons, "files": found.files},
                }
            )
        else:
            if result.report.checked or result.report.files:
                # Nothing staged under .reliora/ (most commits): say nothing of records.
                # The hook takes no options: name the whole command that shows the details.
                Printer().check(result.report, show_all, "`reliora check --staged --all`")
            stopping = [
                f.locator
                for f in result.report.files
                if f.has_errors
                and (
                    config.block_on_invalid
                    or f.locator in result.conflicts
                    or f.locator in result.linked
                )
            ]
            if stopping:
                Printer().line(invalid_advice(stopping, conflicts=bool(result.conflicts)))
            if result.secrets:
                Printer().line(secret_advice(len(result.secrets)))
            for finding in findings:
                Printer().line(finding.summary())
            if result.guards.budget is not None:
                # Said, never silent: a guard skipped may be one that blocks.
                Printer().line(result.guards.budget.summary("commit"))
            if result.guards.blocking:
                Printer().line(guard_advice(result.guards.blocking))
            _point_to_lessons(store)
    blocked = (
        result.conflicts
        or result.linked
        or result.secrets
        or (result.has_invalid_records and config.block_on_invalid)
        or result.guards.blocking
    )
    return 1 if blocked else 0


def guard_advice(blocking: list[GuardFinding]) -> str:
    """How to go on when a `block` guard fired (SPEC.md §15)."""
    ids = sorted({f.record_id for f in blocking})
    lines = "a line repeats" if len(blocking) == 1 else f"{len(blocking)} lines repeat"
    return (
        f"commit stopped: {lines} a lesson whose guard blocks ({', '.join(ids)}). Change the "
        "line, or commit anyway with `git commit --no-verify`, or change the lesson "
        f"(`reliora show {ids[0]}`; `reliora update {ids[0]} --json -` or `reliora retire "
        f"{ids[0]}`) in a commit of its own."
    )


def invalid_advice(locators: list[str], conflicts: bool = False) -> str:
    """How to go on when staged store files stop the commit (their errors are printed above).

    Said as the guard and secret refusals say it: the commit was stopped, and how to go on.
    """
    from reliora_git.interfaces.output import one_line

    which = (
        f"{one_line(locators[0])} has errors"
        if len(locators) == 1
        else f"{len(locators)} staged files of the store have errors"
    )
    if conflicts:  # committing conflict markers is never the way on
        return f"commit stopped: {which} (above). Resolve the conflicts and `git add` it again."
    return (
        f"commit stopped: {which} (above). Fix the record and `git add` it again, or commit "
        "anyway with `git commit --no-verify` (block_on_invalid = false in "
        ".reliora/config.toml makes invalid records a warning)."
    )


def secret_advice(files: int) -> str:
    """What to do about staged secrets; the blob is in the object store already."""
    which = "a staged file holds" if files == 1 else f"{files} staged files hold"
    return (
        f"commit stopped: {which} a secret. Remove it and `git add` the file again, or mark "
        "a false positive with `pragma: allowlist secret` on its line. `git add` already "
        "wrote it into .git's object store, so rotate the secret if it was real."
    )


def _lessons_about(store: Store) -> LessonsAbout | None:
    """The lessons about the files being committed (operations/review/staged_about.py), if any."""
    from reliora_git.operations.review.staged_about import lessons_about_staged
    from reliora_git.records.errors import RelioraError

    try:
        return lessons_about_staged(store)
    except (RelioraError, OSError):
        return None  # a pointer, never a reason to stop a commit


def _point_to_lessons(store: Store) -> None:
    """One line naming the lessons about the files being committed."""
    import shlex

    from reliora_git.interfaces.output import Printer, one_line

    found = _lessons_about(store)
    if found is None:
        return
    named = " ".join(shlex.quote(one_line(name)) for name in found.files[:3])
    more = " …" if len(found.files) > 3 else ""
    are = "lesson is" if found.lessons == 1 else "lessons are"
    Printer().line(f"{found.lessons} {are} about files in this commit: reliora about {named}{more}")
