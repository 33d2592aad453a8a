"""``review``: the experiences a branch adds, changes and removes, for a pull request."""

from __future__ import annotations

from typing import Annotated

import typer

from reliora_git.commands.common import AllFlag, RepoOption, reporting


def review(
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="Compare from the merge base with this ref "
            "(default: the default branch: origin/HEAD, else main or master).",
            show_default=False,
        ),
    ] = None,
    head: Annotated[str, typer.Option("--head", help="The ref under review.")] = "HEAD",
    output_format: Annotated[
        str,
        typer.Option("--format", "-f", help="markdown (a pull-request comment), json or text."),
    ] = "markdown",
    repo: RepoOption = None,
    show_all: AllFlag = False,
) -> None:
    """List records added, modified, renamed and removed between two refs.

    Each comes with its title, id, file, the fields that changed, validation
    problems, similar experiences (in the base store and among the changed
    records) and the feedback events added. The Markdown escapes record text
    and stays under 60 KB, ready to post as a pull-request comment. Likely
    duplicates are shown in full; related records on one line (--all: in full);
    a modified or renamed record is warned about likely duplicates only.

    \b
    Examples:
      reliora review
      reliora review --base origin/main --format json
    """
    from reliora_git.changes import build_review
    from reliora_git.errors import RelioraError
    from reliora_git.output import emit, print_json
    from reliora_git.review import FORMATS, to_json, to_markdown, to_text
    from reliora_git.staged import find_git_store

    as_json = output_format == "json"
    with reporting(as_json):
        if output_format not in FORMATS:
            raise RelioraError(f"--format must be one of {', '.join(FORMATS)}", code="usage")
        result = build_review(find_git_store(repo), base, head)
        if as_json:
            print_json(to_json(result))
        else:
            if output_format == "markdown":
                text = to_markdown(result, show_all=show_all)
            else:
                text = to_text(result, show_all)
            emit(text.removesuffix("\n"))
    if result.folder_errors or result.has_secrets:
        # A store folder kept as a link (every record would vanish), or a secret about
        # to be merged: fail the CI job that runs the review.
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(review)
