"""``reliora search`` without Typer: the command's body, and a fast start path for plain argv.

Starting Typer costs about 0.4 s on a 2-core machine (it imports Click and
pydantic), more than a whole search of 10,000 cached records. An agent runs a
search before every task, so ``__main__`` hands ``reliora search …`` to
:func:`fast_main` first. It accepts only the plain spellings of the command's
options (``--opt value``, ``--opt=value``, flags) with exactly one query, and
gives up (returns None) on anything else — ``--help``, an unknown or repeated
spelling, a value that Typer would reject or convert — so that Typer parses and
reports those exactly as before. Both paths run :func:`run_search`.

``SEARCH_OPTIONS`` mirrors the Typer declaration in ``commands/basic.py``; a test
compares the two, and another runs the same argv through both paths.
``RELIORA_FAST_CLI=0`` turns the fast path off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reliora_git.interfaces.commands.plain import exit_code, parse_plain_argv, plain_limit
from reliora_git.interfaces.commands.reporting import reporting

LEVEL_NAMES = ("strong", "moderate", "weak")

#: Each spelling of a `search` option → (parameter of run_search, takes a value).
SEARCH_OPTIONS: dict[str, tuple[str, bool]] = {
    "--project-context": ("project_context", True),
    "-p": ("project_context", True),
    "--limit": ("limit", True),
    "-n": ("limit", True),
    "--min-level": ("min_level", True),
    "--include-retired": ("include_retired", False),
    "--repo": ("repo", True),
    "--json": ("json_output", False),
}


def check_level(min_level: str | None) -> None:
    """Refuse a --min-level that is not a level (Typer passes any string through)."""
    if min_level is not None and min_level not in LEVEL_NAMES:
        from reliora_git.records.errors import RelioraError

        raise RelioraError(
            f"--min-level must be one of {', '.join(LEVEL_NAMES)}", code="invalid_option"
        )


def run_search(
    query: str,
    *,
    project_context: str | None = None,
    limit: int | None = None,
    min_level: str | None = None,
    include_retired: bool = False,
    repo: Path | None = None,
    json_output: bool = False,
) -> None:
    """The `search` command once its arguments are parsed (exits through SystemExit on errors)."""
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.lessons import reads
    from reliora_git.storage.config import load_config
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        check_level(min_level)
        store = find_store(repo)
        result = reads.search(
            store,
            query,
            project_context=project_context,
            min_level=min_level,
            include_retired=include_retired,
        )
        shown = limit or load_config(store).search_limit
        printer = Printer()
        printer.skipped(result.skipped)
        # Freshness for the results shown only: git history is read for those (SPEC.md §12).
        freshness = result.shown_freshness(store, shown)
        if json_output:
            print_json(result.document(shown, freshness))
        else:
            note = result.query.truncation_note()  # --json says it as truncatedTokens
            if note:
                printer.warn(note)
            printer.search(result, shown, freshness)


def parse_search_argv(args: list[str]) -> dict[str, Any] | None:
    """Keyword arguments of :func:`run_search` for ``args`` (after ``search``), or None.

    None means "let Typer parse this": it is returned for every argv that is not
    one of the plain forms, so an error or a help text is always Typer's own.
    """
    parsed = parse_plain_argv(args, SEARCH_OPTIONS, 1)
    if parsed is None:
        return None
    (query,), values = parsed
    if not plain_limit(values):
        return None
    return {"query": query, **values}


def fast_main(argv: list[str]) -> int | None:
    """Run ``reliora search …`` without Typer and return its exit code, or None to use Typer."""
    if not argv or argv[0] != "search":
        return None
    kwargs = parse_search_argv(argv[1:])
    if kwargs is None:
        return None
    return exit_code(run_search, kwargs.pop("query"), **kwargs)
