"""``init``, ``search``, ``show``, ``list`` and ``feedback``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliora_git.interfaces.commands.common import JsonFlag, RepoOption, reporting
from reliora_git.interfaces.commands.plain import run_feedback, run_list, run_show
from reliora_git.interfaces.commands.searching import run_search
from reliora_git.interfaces.output import Printer, print_json
from reliora_git.records.errors import RelioraError
from reliora_git.records.model import OUTCOMES

#: `init` points to `reliora history` in a repository with at least this many commits.
HISTORY_HINT_COMMITS = 10


def init(
    hooks: Annotated[
        bool,
        typer.Option(
            "--hooks",
            help="Also install the git pre-commit hook (reliora hooks install), which checks "
            "commits; not the agents' hooks (reliora agent install).",
        ),
    ] = False,
    personal: Annotated[
        bool,
        typer.Option(
            "--personal",
            help="A store for you alone in a project you do not own: listed in "
            ".git/info/exclude, so git never sees it.",
        ),
    ] = False,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Create .reliora/ (--hooks: also git's pre-commit hook).

    The store holds a README for reviewers, config.toml, experiences/ and
    feedback/. It goes at the top of the git work tree you are in (or the current
    folder outside git, or --repo). Running it again only adds what is missing.
    --hooks also runs `reliora hooks install` (git's pre-commit hook, which
    checks commits; the agents' hooks are `reliora agent install`). --personal
    keeps the store out of git (`/.reliora/` in .git/info/exclude): pair it with
    `reliora agent install --personal`.

    \b
    Examples:
      reliora init --hooks
      reliora init --personal && reliora agent install --personal
    """
    from reliora_git.gitrepo import git
    from reliora_git.gitrepo.commits import commit_count
    from reliora_git.gitrepo.hooks import install as install_hook
    from reliora_git.gitrepo.hooks import refusal as hook_refusal
    from reliora_git.operations.agents.install import next_steps
    from reliora_git.storage.template import init_store

    with reporting(json_output):
        root = repo.resolve() if repo else git.toplevel(Path.cwd()) or Path.cwd()
        refused = hook_refusal(root) if hooks else None
        if refused is not None:  # before the store is made: a refusal leaves nothing behind
            raise RelioraError(
                f"{refused.message}; nothing was written (run `git init` first, or "
                "`reliora init` without --hooks for a store outside git)"
                if refused.code == "not_git"
                else f"{refused.message}; nothing was written",
                code=refused.code,
            )
        exclude = None
        if personal:
            from reliora_git.operations.agents.personal import exclude_store

            if git.toplevel(root) is None:
                raise RelioraError(
                    "--personal keeps the store out of git, and this is not a git repository; "
                    "nothing was written (run `reliora init` without --personal here)",
                    code="not_git",
                )
            exclude = exclude_store(root)
        updated: list[str] = []  # lines added to an existing store's .gitignore
        store, created = init_store(root, updated)
        if exclude is not None and exclude.action != "unchanged":
            exclude.write()
            updated.append(f"{exclude.shown_as} (/.reliora/: git does not see the store)")
        hook = install_hook(root) if hooks else None
        steps = next_steps(store.root, after="init", personal=personal)
        commits = commit_count(store.root)
        if commits >= HISTORY_HINT_COMMITS:  # a cold start: the history holds lessons already
            steps.append(
                f"Start from this repository's past ({commits} commits): ask your coding agent "
                'to "run `reliora history --ask` and do what it says" (or call the MCP tool '
                "`history`): it hands the agent the best places where the history wrote a "
                "lesson down, with their evidence, to write each lesson in its own words; "
                "`reliora history` lists them for you"
            )
        if json_output:
            document: dict[str, object] = {
                "store": str(store.path),
                "created": created,
                "updated": updated,
            }
            if hook is not None:
                document["hook"] = {"action": hook.action, "message": hook.message}
            document["nextSteps"] = steps
            print_json(document)
            return
        printer = Printer()
        for path in created:
            printer.line(f"created {path}")
        for note in updated:
            printer.line(f"updated {note}")
        printer.line(
            f"Store ready at {store.path}" if created else f"{store.path} is already set up"
        )
        if hook is not None:
            printer.line(hook.message)
        if steps:
            printer.line("Next steps:")
            for number, step in enumerate(steps, start=1):
                printer.line(f"  {number}. {step}")


def search(
    query: Annotated[
        str,
        typer.Argument(metavar="QUERY", help="Words of the task, e.g. 'flaky pytest timeouts'."),
    ],
    project_context: Annotated[
        str | None,
        typer.Option(
            "--project-context",
            "-p",
            help="Keep only records whose project context, tags or applicability match.",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Results to show (default 10).")
    ] = None,
    min_level: Annotated[
        str | None,
        typer.Option("--min-level", help="Lowest match level shown: strong, moderate, weak."),
    ] = None,
    include_retired: Annotated[
        bool, typer.Option("--include-retired", help="Also search retired and superseded records.")
    ] = False,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Rank experiences for QUERY, every score explained.

    Each result's score is explained field by field (--json: scoreBreakdown).

    \b
    Example:
      reliora search "pytest timeouts on ci" --project-context python --limit 5
    """
    # The body is shared with the fast start path in __main__ (see commands/searching.py).
    run_search(
        query,
        project_context=project_context,
        limit=limit,
        min_level=min_level,
        include_retired=include_retired,
        repo=repo,
        json_output=json_output,
    )


def show(
    record_id: Annotated[
        str, typer.Argument(metavar="ID", help="An id, or a unique prefix of one.")
    ],
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Show one experience in full, with its feedback.

    \b
    Example:
      reliora show flaky-pytest
    """
    run_show(record_id, repo=repo, json_output=json_output)


def list_(
    tag: Annotated[
        str | None, typer.Option("--tag", "-t", help="Only records with this tag.")
    ] = None,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """List every experience, newest first.

    \b
    Example:
      reliora list --tag pytest
    """
    run_list(tag=tag, repo=repo, json_output=json_output)


def feedback(
    record_id: Annotated[str, typer.Argument(metavar="ID", help="The experience you used.")],
    outcome: Annotated[
        str, typer.Argument(metavar="OUTCOME", help=f"One of: {', '.join(OUTCOMES)}.")
    ],
    note: Annotated[str, typer.Option("--note", "-m", help="What happened, in a sentence.")] = "",
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Record how an experience worked out (one new file).

    Each outcome is an event file of its own under .reliora/feedback/; nothing
    is ever edited, so feedback from many branches merges without conflicts.

    \b
    Example:
      reliora feedback flaky-pytest success --note "fixed the CI timeouts"
    """
    run_feedback(record_id, outcome, note=note, repo=repo, json_output=json_output)


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(search)
    app.command()(show)
    app.command("list")(list_)
    app.command()(feedback)
