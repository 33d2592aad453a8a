"""``review``: the experiences a branch adds, changes and removes, for a pull request."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from reliora_git.interfaces.commands.common import AllFlag, RepoOption, reporting


def review(
    refs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[BASE [HEAD]]",
            help="As in `git diff`: BASE, BASE HEAD or BASE..HEAD (the options say the same).",
            show_default=False,
        ),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="Compare from the merge base with this ref "
            "(default: the default branch: origin/HEAD, else main or master).",
            show_default=False,
        ),
    ] = None,
    head: Annotated[
        str | None, typer.Option("--head", help="The ref under review (default HEAD).")
    ] = None,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="text, markdown (a pull-request comment), json, or github (a workflow "
            "annotation per guard finding). Default: text on a terminal, else markdown.",
            show_default=False,
        ),
    ] = None,
    repo: RepoOption = None,
    show_all: AllFlag = False,
    include_retired: Annotated[
        bool,
        typer.Option(
            "--include-retired",
            help="List retired and superseded records about the changed code too (marked).",
        ),
    ] = False,
) -> None:
    """Review a branch: its record changes and guard findings.

    From the merge base of BASE (default: the default branch) to HEAD.

    Guard findings: each line head adds that a lesson's guard matches (file,
    line, the line itself, lesson). And, under its record, each guard the
    change adds, modifies or turns on (pattern, files, severity), run over all
    of head's code.

    Records: added, modified, renamed and removed, each with its title, id,
    file, the fields that changed, validation problems, similar experiences
    (in the base store and among the changed records) and the feedback events
    added. Likely duplicates are shown in full; related records on one line
    (--all: in full); a modified or renamed record is warned about likely
    duplicates only.

    Text on a terminal; Markdown when piped (record text escaped, under
    60 KB: ready to post as a pull-request comment), or as --format says.

    Exit status 1 when a `block` guard fires on the lines head adds, when a
    guard the change brings already matches head's code (an error on its
    record; a warning when the record says `existing: allowed`, as
    --allow-existing saves it), when the guards run out of their time (10 s of CPU;
    RELIORA_GUARD_BUDGET sets it), when a record or note holds a secret, or
    when a store folder is a link; else 0 (an invalid record too: gate on
    `reliora check`).

    \b
    Examples:
      reliora review
      reliora review main feature
      reliora review origin/main..HEAD --format json
      reliora review > review.md    # Markdown, for a pull-request comment
    """
    from reliora_git.interfaces.output import emit, print_json
    from reliora_git.interfaces.review import (
        FORMATS,
        to_github_annotations,
        to_json,
        to_markdown,
        to_text,
    )
    from reliora_git.operations.review.branch import build_review
    from reliora_git.records.errors import RelioraError
    from reliora_git.storage.gitfiles import find_git_store

    if output_format is None:
        # A person at a terminal reads text; a pipe or a file gets the comment CI posts.
        output_format = "text" if sys.stdout.isatty() else "markdown"
    as_json = output_format == "json"
    with reporting(as_json):
        if output_format not in FORMATS:
            raise RelioraError(f"--format must be one of {', '.join(FORMATS)}", code="usage")
        base, head = refs_of(refs or [], base, head)
        store = find_git_store(repo)
        result = build_review(store, base, head or "HEAD", include_retired=include_retired)
        if as_json:
            print_json(to_json(result))
        else:
            if output_format == "markdown":
                text = to_markdown(result, show_all=show_all)
            elif output_format == "github":
                text = to_github_annotations(result)
            else:
                text = to_text(result, show_all)
            emit(text.removesuffix("\n"))
    if (
        result.folder_errors
        or result.has_secrets
        or result.guard_blocks
        or result.new_guards_match
        or result.guard_budget is not None
    ):
        # A store folder kept as a link (every record would vanish), a secret about to be
        # merged, a guard that would fire on code already there, or guards that did not
        # all run (a review that did not look is no pass): fail the CI job.
        raise typer.Exit(1)


def refs_of(refs: list[str], base: str | None, head: str | None) -> tuple[str | None, str | None]:
    """BASE and HEAD from the positional forms (``A``, ``A B``, ``A..B``) and the options."""
    from reliora_git.records.errors import RelioraError

    for separator in ("...", ".."):  # review always starts from the merge base
        if len(refs) == 1 and separator in refs[0]:
            left, right = refs[0].split(separator, 1)
            refs = [left or "HEAD", right or "HEAD"]
            break
    if len(refs) > 2:
        raise RelioraError("review takes at most two refs: BASE [HEAD]", code="usage")
    given = dict(zip(("base", "head"), refs, strict=False))
    if ("base" in given and base is not None) or ("head" in given and head is not None):
        raise RelioraError("give the refs as arguments or as --base/--head, not both", code="usage")
    return given.get("base", base), given.get("head", head)


def register(app: typer.Typer) -> None:
    app.command()(review)
