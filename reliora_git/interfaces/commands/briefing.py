"""``reliora brief`` without Typer: the command's body, and a fast start path for plain argv.

Agent clients run a brief on every prompt, so, like ``search`` (searching.py),
``__main__`` hands ``reliora brief …`` to :func:`fast_main` first: it accepts only
the plain spellings of the options and gives up (returns None) on anything
else — ``--help``, an unknown option, a value Typer would convert or reject — so
that Typer (commands/brief.py) parses and reports those. Both paths run
:func:`run_brief`. ``BRIEF_OPTIONS`` mirrors the Typer declaration; a test
compares the two.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from reliora_git.interfaces.commands.plain import exit_code
from reliora_git.interfaces.commands.reporting import reporting

#: Each spelling of a `brief` option → (parameter of run_brief, takes a value).
BRIEF_OPTIONS: dict[str, tuple[str, bool]] = {
    "--query": ("query", True),
    "-q": ("query", True),
    "--file": ("files", True),
    "-f": ("files", True),
    "--changes": ("changes", False),
    "--base": ("base", True),
    "--budget": ("budget", True),
    "--limit": ("limit", True),
    "-n": ("limit", True),
    "--repo": ("repo", True),
    "--json": ("json_output", False),
    "--push": ("push", False),
    "--explain": ("explain", False),
    "--why": ("why", True),
}


def run_brief(
    task: str | None = None,
    *,
    query: str = "",
    files: list[str] | None = None,
    changes: bool = False,
    base: str | None = None,
    budget: int | None = None,
    limit: int | None = None,
    push: bool = False,
    explain: bool = False,
    why: list[str] | None = None,
    repo: Path | None = None,
    json_output: bool = False,
) -> None:
    """The `brief` command once its arguments are parsed (exits through SystemExit on errors)."""
    if explain or why:
        _run_explain(task, query, files, changes, base, budget, limit, push, why, repo, json_output)
        return
    from reliora_git.interfaces.output import emit, print_json
    from reliora_git.operations.brief.full import brief
    from reliora_git.operations.brief.selection import DEFAULT_LIMIT
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        text = _read_task(task)
        make = brief
        if push:
            from reliora_git.operations.brief.push import push as make  # type: ignore[assignment]
        result = make(
            find_store(repo),
            text,
            query=query,
            files=files or [],
            changes=changes,
            base=base,
            budget=budget,
            limit=limit or DEFAULT_LIMIT,
        )
        if json_output:
            print_json(result.to_json())
        elif result.text():
            emit(result.text())
        else:
            # stdout stays empty (a hook injects nothing); a person is told why.
            print(
                "reliora: no lessons bear on this (none about these files, none above "
                "the relevance floor)",
                file=sys.stderr,
            )


def _run_explain(
    task: str | None,
    query: str,
    files: list[str] | None,
    changes: bool,
    base: str | None,
    budget: int | None,
    limit: int | None,
    push: bool,
    why: list[str] | None,
    repo: Path | None,
    json_output: bool,
) -> None:
    """``brief --push --explain [--why ID]…``: the push, then why lessons were left out or
    made a line (operations/brief/explain.py)."""
    from reliora_git.interfaces.output import emit, print_json
    from reliora_git.operations.brief.explain import explain_document, explain_push
    from reliora_git.operations.brief.selection import DEFAULT_LIMIT, Situation
    from reliora_git.records.errors import RelioraError
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        if not push:
            raise RelioraError(
                "--explain and --why explain a push: add --push "
                "(reliora brief --push --explain TASK)",
                code="usage",
            )
        situation = Situation(
            _read_task(task), query, tuple(files or ()), changes, base, limit or DEFAULT_LIMIT
        )
        result, explained = explain_push(find_store(repo), situation, why or (), budget=budget)
        if json_output:
            print_json({**result.to_json(), "explain": explain_document(explained)})
            return
        lines = [result.text() or "(nothing is pushed for this)", ""]
        if explained:
            lines.append("Why not (the push's own decisions):")
            for item in explained:
                lines += item.lines()
        else:
            lines.append("Every candidate is pushed in full; search ranks nothing else.")
        emit("\n".join(lines))


def _read_task(task: str | None) -> str:
    """The task text; ``-`` reads it from stdin (an issue body, a prompt)."""
    if task != "-":
        return task or ""
    from reliora_git.records.errors import RelioraError

    try:
        data = sys.stdin.buffer.read(1024 * 1024 + 1)
    except OSError as exc:
        raise RelioraError(f"cannot read the task from stdin: {exc}", code="usage") from None
    if len(data) > 1024 * 1024:
        raise RelioraError("the task on stdin is larger than 1 MiB", code="usage")
    return data.decode("utf-8", "replace")


def parse_brief_argv(args: list[str]) -> dict[str, Any] | None:
    """Keyword arguments of :func:`run_brief` for ``args`` (after ``brief``), or None for Typer.

    Plain means: at most one TASK, ``--opt value`` / ``--opt=value`` / ``-o value``
    (a value neither empty nor starting with ``-``), bare flags, each option once
    except ``--file`` and ``--why``, which may repeat; ``--budget`` and ``--limit`` plain digits.
    """
    values: dict[str, Any] = {}
    positional: list[str] = []
    files: list[str] = []
    why: list[str] = []
    pending = iter(args)
    for arg in pending:
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, equals, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        spec = BRIEF_OPTIONS.get(name)
        if spec is None:
            return None
        param, takes_value = spec
        if not takes_value:
            if equals or param in values:
                return None
            values[param] = True
            continue
        value = inline if equals else next(pending, None)
        if value is None or value == "" or (not equals and value.startswith("-")):
            return None
        if param == "files":
            files.append(value)
        elif param == "why":
            why.append(value)
        elif param in values:
            return None
        else:
            values[param] = value
    if len(positional) > 1:
        return None
    for number in ("budget", "limit"):
        if number in values:
            raw = values[number]
            if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
                return None
            values[number] = int(raw)
    if "repo" in values:
        values["repo"] = Path(values["repo"])
    if files:
        values["files"] = files
    if why:
        values["why"] = why
    return {"task": positional[0] if positional else None, **values}


def fast_main(argv: list[str]) -> int | None:
    """Run ``reliora brief …`` without Typer and return its exit code, or None to use Typer."""
    if not argv or argv[0] != "brief":
        return None
    kwargs = parse_brief_argv(argv[1:])
    if kwargs is None:
        return None
    return exit_code(run_brief, **kwargs)
