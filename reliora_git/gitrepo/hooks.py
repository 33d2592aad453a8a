"""``reliora hooks install | uninstall | status``: the pre-commit hook, kept safe.

The hook goes where git looks for it (``git rev-parse --git-path hooks``), so
linked worktrees and submodules work. A hook that is already there is moved
aside (``pre-commit.reliora-chained``: same folder, so content and mode are
kept by a rename) and our script runs it first; ``uninstall`` renames it
back. Our script is recognised by its marker line, so installing twice
writes nothing and a foreign hook is never taken for ours. When
``core.hooksPath`` hands the hooks folder to another tool (husky, lefthook…)
nothing is written: the user adds one line to that tool's configuration.
"""

from __future__ import annotations

import os
import secrets
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from reliora_git.gitrepo import git
from reliora_git.records.errors import RelioraError

HOOK_NAME = "pre-commit"
CHAINED_NAME = "pre-commit.reliora-chained"
MARKER = "reliora-managed-hook"
#: The line another hook manager should run (printed when core.hooksPath is set).
HOOK_COMMAND = "reliora check --staged"
_PYTHON_LINE = 'RELIORA_PYTHON=""'


def script_template() -> str:
    """The shipped hook script: inside an installed wheel, or at the top of a source checkout."""
    here = Path(__file__).resolve().parents[1]  # the package's folder
    for candidate in (here / "hook_scripts", here.parent / "hooks"):
        path = candidate / HOOK_NAME
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise RelioraError(
        "the pre-commit hook script is missing from this installation", code="broken_install"
    )


def render_script(python: str) -> str:
    """The script with the interpreter that runs reliora written in (found again at commit)."""
    template = script_template()
    if _PYTHON_LINE not in template:
        raise RelioraError(
            "the shipped hook script has no RELIORA_PYTHON line", code="broken_install"
        )
    return template.replace(_PYTHON_LINE, f"RELIORA_PYTHON={shlex.quote(python)}", 1)


def is_ours(path: Path) -> bool:
    try:
        head = path.read_bytes()[:1024]
    except OSError:
        return False
    return MARKER.encode() in head


@dataclass(frozen=True)
class HookState:
    """Where the hook goes and what is there now."""

    hooks_dir: Path
    #: core.hooksPath when it points away from the default hooks folder, else None.
    managed_by: str | None
    installed: bool
    #: A foreign hook in the hook's place (not ours, not moved aside).
    foreign: bool
    chained: bool

    @property
    def hook(self) -> Path:
        return self.hooks_dir / HOOK_NAME

    @property
    def chained_hook(self) -> Path:
        return self.hooks_dir / CHAINED_NAME


def state(cwd: Path) -> HookState:
    if git.toplevel(cwd) is None:
        raise RelioraError(f"{cwd} is not in a git repository", code="not_git")
    hooks_dir = git.hooks_dir(cwd)
    configured = git.config_value(cwd, "core.hooksPath")
    managed_by = configured if configured and hooks_dir != git.default_hooks_dir(cwd) else None
    hook = hooks_dir / HOOK_NAME
    present = hook.exists() or hook.is_symlink()
    ours = present and not hook.is_symlink() and is_ours(hook)
    chained = hooks_dir / CHAINED_NAME
    return HookState(
        hooks_dir,
        managed_by,
        installed=ours,
        foreign=present and not ours,
        chained=chained.exists() or chained.is_symlink(),
    )


@dataclass(frozen=True)
class Outcome:
    """What a hooks command did, for the CLI to print."""

    action: str  # installed, updated, unchanged, uninstalled, absent, external
    state: HookState
    message: str


def refusal(cwd: Path) -> RelioraError | None:
    """Why ``install`` would refuse here, found before anything is written (else None).

    ``init --hooks`` asks first, so that a refused hook leaves no store behind.
    """
    try:
        current = state(cwd)
        if current.managed_by is None:
            render_script(sys.executable)
            _check_no_conflict(current)
    except RelioraError as error:
        return error
    return None


def _check_no_conflict(current: HookState) -> None:
    if current.foreign and current.chained:
        raise RelioraError(
            f"both {current.hook} and {current.chained_hook} exist and neither is the reliora "
            "hook; move one of them away first",
            code="hook_conflict",
        )


def install(cwd: Path, python: str | None = None) -> Outcome:
    """Install (or refresh) our hook; a foreign hook is moved aside and chained."""
    current = state(cwd)
    if current.managed_by is not None:
        return Outcome("external", current, external_message(current.managed_by))
    script = render_script(python or sys.executable)
    hook = current.hook
    if current.installed:
        if hook.read_text(encoding="utf-8", errors="replace") == script:
            return Outcome("unchanged", current, f"the reliora hook is already installed in {hook}")
        _write_executable(hook, script)
        return Outcome("updated", state(cwd), f"updated the reliora hook in {hook}")
    if current.foreign:
        _check_no_conflict(current)
        # A rename in the same folder keeps the file exactly: content, mode, symlink.
        os.rename(hook, current.chained_hook)
    current.hooks_dir.mkdir(parents=True, exist_ok=True)
    _write_executable(hook, script)
    chained = (
        f" (the existing hook is kept as {CHAINED_NAME} and runs first)" if current.foreign else ""
    )
    return Outcome("installed", state(cwd), f"installed the reliora hook in {hook}{chained}")


def uninstall(cwd: Path) -> Outcome:
    """Remove our hook and put back the one it replaced, exactly as it was."""
    current = state(cwd)
    if current.managed_by is not None:
        return Outcome(
            "external",
            current,
            f"core.hooksPath is set to {current.managed_by}; remove the line "
            f"`{HOOK_COMMAND}` from that tool's pre-commit configuration",
        )
    if not current.installed:
        return Outcome("absent", current, f"the reliora hook is not installed in {current.hook}")
    current.hook.unlink()
    restored = ""
    if current.chained:
        os.rename(current.chained_hook, current.hook)
        restored = f"; restored the previous hook from {CHAINED_NAME}"
    return Outcome(
        "uninstalled", state(cwd), f"removed the reliora hook from {current.hook}{restored}"
    )


def external_message(hooks_path: str) -> str:
    return (
        f"core.hooksPath is set to {hooks_path} (husky, lefthook or another hook manager owns "
        f"it), so nothing was written; add this line to that tool's pre-commit hook:\n"
        f"{HOOK_COMMAND}"
    )


def _write_executable(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file renamed into place, mode 0755."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
