"""Errors to one line and an exit code, without Typer (the fast ``search`` path uses this too).

``SystemExit`` rather than ``typer.Exit``: Typer and Click let it through
unchanged, so both start paths end a process the same way.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import NoReturn

from reliora_git.interfaces.output import OutputError, flush_stdout, one_line, print_json
from reliora_git.records.errors import RelioraError, from_os_error

#: What this command has written to the store so far (see :func:`wrote`).
_written: list[str] = []


def wrote(what: str) -> None:
    """Remember that the command changed the store (``saved ID as PATH``).

    If printing the result then fails, the error says what was written, so that
    a retry can look it up instead of saving it twice.
    """
    _written.append(what)


def fail(error: RelioraError, as_json: bool) -> NoReturn:
    """Report ``error`` as one line on stderr (or one JSON object on stdout) and exit."""
    if as_json:
        try:
            print_json(error.to_json())
            flush_stdout()
        except OutputError as failed:
            with contextlib.suppress(OSError):
                print(f"reliora: error: {one_line(str(error))}", file=sys.stderr)
            _output_failed(failed)
    else:
        # Messages echo ids, paths and YAML text from untrusted files: one clean line.
        print(f"reliora: error: {one_line(str(error))}", file=sys.stderr)
        for detail in error.details:  # e.g. one line per secret found, masked
            print(f"reliora: error: {one_line(detail)}", file=sys.stderr)
    raise SystemExit(error.exit_code)


@contextlib.contextmanager
def reporting(as_json: bool = False) -> Iterator[None]:
    """Turn the project's errors into one line and the right exit code; never a traceback."""
    try:
        yield
        flush_stdout()
    except OutputError as error:
        _output_failed(error)
    except RelioraError as error:
        fail(error, as_json)
    except BrokenPipeError:
        # `reliora list | head` closed the pipe: quiet, as git is. Point stdout at
        # /dev/null so that the interpreter's last flush does not complain either.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0) from None
    except OSError as error:
        # Permissions, a full disk, a file where a folder should be: say so, no traceback.
        fail(from_os_error(error), as_json)
    except KeyboardInterrupt:
        print("reliora: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


def _output_failed(error: OutputError) -> NoReturn:
    """One line on stderr (stdout is what failed), exit 2; never a traceback."""
    done = "; ".join(_written)
    reason = f"could not print the result: {error}"
    with contextlib.suppress(OSError):
        print(
            f"reliora: error: {done}, but {reason}" if done else f"reliora: error: {reason}",
            file=sys.stderr,
        )
    # Nothing more may reach the broken stream, not even the interpreter's last flush.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise SystemExit(2)
