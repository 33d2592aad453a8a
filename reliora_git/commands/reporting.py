"""Errors to one line and an exit code, without Typer (the fast ``search`` path uses this too).

``SystemExit`` rather than ``typer.Exit``: Typer and Click let it through
unchanged, so both start paths end a process the same way.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import NoReturn

from reliora_git.errors import RelioraError, from_os_error
from reliora_git.output import one_line, print_json


def fail(error: RelioraError, as_json: bool) -> NoReturn:
    """Report ``error`` as one line on stderr (or one JSON object on stdout) and exit."""
    if as_json:
        print_json(error.to_json())
    else:
        # Messages echo ids, paths and YAML text from untrusted files: one clean line.
        print(f"reliora: error: {one_line(str(error))}", file=sys.stderr)
    raise SystemExit(error.exit_code)


@contextlib.contextmanager
def reporting(as_json: bool = False) -> Iterator[None]:
    """Turn the project's errors into one line and the right exit code; never a traceback."""
    try:
        yield
    except RelioraError as error:
        fail(error, as_json)
    except BrokenPipeError:
        # `reliora list | head` closed the pipe: not an error worth a traceback.
        sys.stderr.close()
        raise SystemExit(0) from None
    except OSError as error:
        # Permissions, a full disk, a file where a folder should be: say so, no traceback.
        fail(from_os_error(error), as_json)
    except KeyboardInterrupt:
        print("reliora: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
