"""``check``: validate records and report duplicates."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from reliora_git import api
from reliora_git.commands.common import JsonFlag, RepoOption, reporting
from reliora_git.store import find_store


def check(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Record files to check closely (default: the whole store).", show_default=False
        ),
    ] = None,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Validate records; exit 1 when any is invalid. Similar records are warnings only.

    Every record is validated and checked for clashing ids and exact duplicates;
    the files named in PATHS are also searched for similar experiences.

    \b
    Example:
      reliora check .reliora/experiences/flaky-pytest-timeouts-3f9a1c.md
    """
    from reliora_git.output import Printer, print_json

    with reporting(json_output):
        report = api.check(find_store(repo), paths or None)
        if json_output:
            print_json(report_to_json(report))
        else:
            Printer().check(report)
    if not report.ok:
        raise typer.Exit(1)


def report_to_json(report: api.CheckReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "checked": report.checked,
        "files": [
            {
                "locator": f.locator,
                "id": f.id,
                "problems": [
                    {"severity": p.severity, "message": p.message, "line": p.line}
                    for p in f.problems
                ],
                "warnings": [w.to_json() for w in f.similar],
            }
            for f in report.files
        ],
    }


def register(app: typer.Typer) -> None:
    app.command()(check)
