"""The only module that runs git. Plain ``git`` subprocesses: fast to start, and exact.

GitPython is kept off the search path (it costs a noticeable import); the
functions here that run on every command use the ``git`` binary directly.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from reliora_git.errors import RelioraError


def run(args: Sequence[str], cwd: Path, *, input: bytes | None = None, check: bool = True) -> bytes:
    """Run ``git args`` in ``cwd`` and return its stdout; a RelioraError when it fails."""
    try:
        # Never let git read our stdin: in `reliora mcp` it carries the protocol stream.
        stdin = subprocess.DEVNULL if input is None else None
        done = subprocess.run(
            ["git", *args], cwd=cwd, input=input, stdin=stdin, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise RelioraError("git is not installed or not on PATH", code="no_git") from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RelioraError(
            f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(done.returncode)}",
            code="git_failed",
        )
    return done.stdout


def user_name(cwd: Path) -> str | None:
    """``user.name`` from git config, or None outside git or when unset."""
    try:
        out = run(["config", "user.name"], cwd, check=False)
    except RelioraError:
        return None
    name = out.decode("utf-8", "replace").strip()
    return name or None


def stage(cwd: Path, paths: Sequence[Path]) -> None:
    run(["add", "--", *(os.fspath(p) for p in paths)], cwd)


def toplevel(cwd: Path) -> Path | None:
    """The top of the work tree ``cwd`` is in, or None outside git."""
    try:
        out = run(["rev-parse", "--show-toplevel"], cwd, check=False)
    except RelioraError:
        return None
    text = out.decode("utf-8", "surrogateescape").strip()
    return Path(text) if text else None
