"""``reliora org search`` without Typer: the command's body, and a fast start path.

The same contract as ``search`` (commands/searching.py): a search is run before
every task, and starting Typer costs more than the query. ``__main__`` hands
the plain spellings here first; anything else (``--help``, a repeated
``--repo``, a value Typer would convert) returns None and goes to Typer, which
runs :func:`run_org_search` too. ``ORG_SEARCH_OPTIONS`` mirrors the Typer
declaration in commands/org.py; a test compares them.
"""

from __future__ import annotations

from collections.abc import Sequence

from reliora_git.interfaces.commands.plain import Options, exit_code, parse_plain_argv, plain_limit
from reliora_git.interfaces.commands.reporting import reporting
from reliora_git.interfaces.commands.searching import check_level

ORG_SEARCH_OPTIONS: Options = {
    "--repo": ("repos", True),
    "--project-context": ("project_context", True),
    "-p": ("project_context", True),
    "--limit": ("limit", True),
    "-n": ("limit", True),
    "--min-level": ("min_level", True),
    "--include-retired": ("include_retired", False),
    "--db": ("db", True),
    "--json": ("json_output", False),
}


def run_org_search(
    query: str,
    *,
    repos: Sequence[str] = (),
    project_context: str | None = None,
    limit: int = 10,
    min_level: str | None = None,
    include_retired: bool = False,
    db: str | None = None,
    json_output: bool = False,
) -> None:
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.org.db import opened, require_schema
    from reliora_git.org.search import OrgSearcher

    with reporting(json_output):
        check_level(min_level)
        with opened(db) as conn:
            require_schema(conn)
            result = OrgSearcher(conn).search(
                query,
                repos=list(repos),
                project_context=project_context,
                min_level=min_level,
                include_retired=include_retired,
                limit=limit,
            )
        if json_output:
            print_json(result.document())
        else:
            printer = Printer()
            note = result.query.truncation_note()  # --json says it as truncatedTokens
            if note:
                printer.warn(note)
            printer.org_search(result)


def fast_main(argv: list[str]) -> int | None:
    """Run ``reliora org search …`` without Typer and return its exit code, or None."""
    if argv[:2] != ["org", "search"]:
        return None
    parsed = parse_plain_argv(argv[2:], ORG_SEARCH_OPTIONS, 1)
    if parsed is None:
        return None
    (query,), values = parsed
    if not plain_limit(values):
        return None
    if "repos" in values:
        values["repos"] = [values["repos"]]
    return exit_code(run_org_search, query, **values)
