"""Options and error handling shared by every command."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from reliora_git.errors import RelioraError
from reliora_git.output import one_line, print_json

RepoOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="Folder holding .reliora/ (default: the nearest one above; env RELIORA_REPO).",
        show_default=False,
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of text.")]


def fail(error: RelioraError, as_json: bool) -> NoReturn:
    """Report ``error`` as one line on stderr (or one JSON object on stdout) and exit."""
    if as_json:
        print_json(error.to_json())
    else:
        # Messages echo ids, paths and YAML text from untrusted files: one clean line.
        print(f"reliora: error: {one_line(str(error))}", file=sys.stderr)
    raise typer.Exit(error.exit_code)


@contextlib.contextmanager
def reporting(as_json: bool = False) -> Iterator[None]:
    """Turn the project's errors into one line and the right exit code; never a traceback."""
    try:
        yield
    except RelioraError as error:
        fail(error, as_json)
    except KeyboardInterrupt:
        print("reliora: interrupted", file=sys.stderr)
        raise typer.Exit(130) from None
    except BrokenPipeError:
        # `reliora list | head` closed the pipe: not an error worth a traceback.
        sys.stderr.close()
        raise typer.Exit(0) from None
