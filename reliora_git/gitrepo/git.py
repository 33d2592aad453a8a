"""The only module that runs git. Plain ``git`` subprocesses: fast to start, and exact.

GitPython is kept off the search path (it costs a noticeable import); the
functions here that run on every command use the ``git`` binary directly.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from reliora_git.records.errors import RelioraError


def run(args: Sequence[str], cwd: Path, *, input: bytes | None = None, check: bool = True) -> bytes:
    """Run ``git args`` in ``cwd`` and return its stdout; a RelioraError when it fails."""
    try:
        # Never let git read our stdin: in `reliora mcp` it carries the protocol stream.
        stdin = subprocess.DEVNULL if input is None else None
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=input,
            stdin=stdin,
            capture_output=True,
            check=False,
            env=_absolute_git_env(),
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


#: Bytes read from a streamed git at a time.
STREAM_CHUNK = 1 << 20


def stream(args: Sequence[str], cwd: Path) -> Iterator[bytes]:
    """``git args``' stdout in chunks, as git writes it (a log of hundreds of megabytes is
    never held whole); a RelioraError when git fails, after its output."""
    try:
        process = subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_absolute_git_env(),
        )
    except FileNotFoundError:
        raise RelioraError("git is not installed or not on PATH", code="no_git") from None
    assert process.stdout is not None and process.stderr is not None
    with process:
        while chunk := process.stdout.read(STREAM_CHUNK):
            yield chunk
        # git's stderr is small (its messages): read once it has closed its stdout.
        error = process.stderr.read()
        code = process.wait()
    if code != 0:
        message = error.decode("utf-8", "replace").strip().splitlines()
        raise RelioraError(
            f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(code)}",
            code="git_failed",
        )


def succeeds(args: Sequence[str], cwd: Path) -> bool:
    """Whether ``git args`` exits 0 (a question git answers with its exit code)."""
    try:
        run(args, cwd)
    except RelioraError as error:
        if error.code == "no_git":
            raise
        return False
    return True


def store_in_git(top: Path) -> bool:
    """Whether the store at ``top`` goes to git like code: not ignored, and committed or staged.

    A personal store (``init --personal`` lists it in .git/info/exclude; or it was simply
    never added) is the person's own.
    """
    if succeeds(["check-ignore", "-q", ".reliora/"], top):
        return False
    return succeeds(["ls-files", "--error-unmatch", "--", ".reliora/"], top)


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


# --- plumbing shared by the hook, `hooks` and `review` -----------------------------------------


def _absolute_git_env() -> dict[str, str] | None:
    """The environment for git, with a relative GIT_DIR made absolute.

    Git reads a relative GIT_DIR against the folder it starts in, so it is
    pinned to ours before git runs in another folder. GIT_INDEX_FILE is left
    alone: git reads a relative one (``git commit`` hands hooks ``.git/index``)
    against the top of the work tree, wherever in it git starts.
    """
    changed = {}
    value = os.environ.get("GIT_DIR")
    if value and not os.path.isabs(value):
        changed["GIT_DIR"] = os.path.abspath(value)
    return {**os.environ, **changed} if changed else None


def split_z(out: bytes) -> list[str]:
    """NUL-separated git output as text (file names may be any bytes: kept lossless)."""
    text = out.decode("utf-8", "surrogateescape")
    return text.split("\0")[:-1] if text else []


def rev_parse_path(cwd: Path, *args: str) -> Path:
    """A path printed by ``git rev-parse``, made absolute against ``cwd``."""
    out = run(["rev-parse", *args], cwd).decode("utf-8", "surrogateescape").strip()
    return (cwd / out).resolve()


def hooks_dir(cwd: Path) -> Path:
    """The folder git runs hooks from (worktrees and submodules included; honours hooksPath)."""
    return rev_parse_path(cwd, "--git-path", "hooks")


def default_hooks_dir(cwd: Path) -> Path:
    """Where hooks live when ``core.hooksPath`` is not set: the common git directory."""
    return rev_parse_path(cwd, "--git-common-dir") / "hooks"


def config_value(cwd: Path, key: str) -> str | None:
    out = run(["config", "--get", key], cwd, check=False)
    value = out.decode("utf-8", "surrogateescape").strip()
    return value or None


def show_prefix(cwd: Path) -> str:
    """``cwd`` relative to the top of its work tree, '' or ending in '/' (git's own form)."""
    return run(["rev-parse", "--show-prefix"], cwd).decode("utf-8", "surrogateescape").strip()


def prefix_and_object(cwd: Path, spec: str) -> tuple[str, str]:
    """``cwd`` from the top of its work tree (as :func:`show_prefix`) and the object id
    ``spec`` names ('' when it names none), from one ``git rev-parse``."""
    out = run(["rev-parse", "--show-prefix", "-q", "--verify", spec], cwd, check=False)
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    prefix, found = [*lines, "", ""][:2]
    return prefix.strip(), found.strip()


class IndexEntry(NamedTuple):
    """One line of ``git ls-files -s`` or ``git ls-tree``: a path with its mode and blob.

    A named tuple: the hook reads one per store file, 100,000 on a large store.
    """

    path: str
    mode: str
    blob: str
    stage: int = 0


def parse_ls_tree(out: bytes) -> list[IndexEntry]:
    """``git ls-tree -r -z``: ``<mode> <type> <object>\\t<path>`` records (blobs only)."""
    entries = []
    for item in split_z(out):
        meta, _, path = item.partition("\t")
        mode, kind, blob = meta.split(" ")
        if kind == "blob":
            entries.append(IndexEntry(path, mode, blob))
    return entries


@dataclass(frozen=True)
class Change:
    """One file of ``git diff --raw``: status letter A/C/D/M/R/T/U, paths, blobs and modes."""

    status: str
    path: str
    old_path: str | None = None
    old_blob: str | None = None
    new_blob: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None


def parse_diff_raw(out: bytes) -> list[Change]:
    """``git diff --raw -z --no-abbrev``: ``:<modes> <blobs> <status>\\0<path>[\\0<path>]``."""
    fields = split_z(out)
    changes = []
    i = 0
    while i < len(fields):
        old_mode, new_mode, old_blob, new_blob, status = fields[i].lstrip(":").split(" ")
        letter = status[0]
        if letter in "RC":
            old_path, path = fields[i + 1], fields[i + 2]
            i += 3
        else:
            old_path, path = None, fields[i + 1]
            i += 2
        changes.append(Change(letter, path, old_path, old_blob, new_blob, old_mode, new_mode))
    return changes


def staged_changes(cwd: Path, pathspecs: Sequence[str]) -> list[Change]:
    """Index against HEAD, renames found (on an unborn branch git compares with nothing)."""
    return parse_diff_raw(
        run(
            [
                "diff",
                "--cached",
                "--raw",
                "-z",
                "-M",
                "--no-abbrev",
                "--no-ext-diff",
                "--",
                *pathspecs,
            ],
            cwd,
        )
    )


def tree_changes(cwd: Path, base: str, head: str, pathspecs: Sequence[str]) -> list[Change]:
    return parse_diff_raw(
        run(
            [
                "diff",
                "--raw",
                "-z",
                "-M",
                "--no-abbrev",
                "--no-ext-diff",
                base,
                head,
                "--",
                *pathspecs,
            ],
            cwd,
        )
    )


def ls_tree(cwd: Path, ref: str, pathspecs: Sequence[str]) -> list[IndexEntry]:
    """Blobs of ``ref`` under ``pathspecs`` (relative to ``cwd``), named from the top."""
    return parse_ls_tree(run(["ls-tree", "-r", "-z", "--full-name", ref, "--", *pathspecs], cwd))


@dataclass(frozen=True)
class Blob:
    """A blob's bytes, or None when it is larger than the limit it was read with."""

    size: int
    data: bytes | None


def read_blobs(cwd: Path, blobs: Sequence[str], max_size: int) -> dict[str, Blob]:
    """Many blobs through one ``git cat-file --batch``; blobs over ``max_size`` are not read.

    Their sizes come first from ``--batch-check`` (object headers only), and only
    the blobs within the limit are asked for: a 300 MB blob in a hostile tree
    costs nothing, where reading ``--batch`` output whole held it twice.
    """
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    sizes = blob_sizes(cwd, wanted)
    found = {blob: Blob(size, None) for blob, size in sizes.items() if size > max_size}
    small = [blob for blob in wanted if blob not in found]
    if not small:
        return found
    out = run(["cat-file", "--batch"], cwd, input="".join(f"{b}\n" for b in small).encode())
    pos = 0
    for blob in small:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode("ascii", "replace").split(" ")
        pos = end + 1
        if len(header) != 3:  # "<object> missing"
            raise RelioraError(f"git object {blob} is missing", code="git_failed")
        size = int(header[2])
        found[blob] = Blob(size, out[pos : pos + size])
        pos += size + 1  # the blob is followed by a newline
    return found


def blob_sizes(cwd: Path, blobs: Sequence[str]) -> dict[str, int]:
    """The size of each blob, from ``git cat-file --batch-check`` (no content is read)."""
    blobs = list(dict.fromkeys(blobs))
    out = run(["cat-file", "--batch-check"], cwd, input="".join(f"{b}\n" for b in blobs).encode())
    lines = out.decode("ascii", "replace").split("\n")
    sizes: dict[str, int] = {}
    for blob, line in zip(blobs, lines, strict=False):
        header = line.split(" ")  # "<object> <type> <size>", or "<object> missing"
        if len(header) != 3 or not header[2].isdigit():
            raise RelioraError(f"git object {blob} is missing", code="git_failed")
        sizes[blob] = int(header[2])
    if len(sizes) != len(blobs):
        raise RelioraError("git cat-file --batch-check ended early", code="git_failed")
    return sizes


def verify_ref(cwd: Path, ref: str) -> str | None:
    """The commit id ``ref`` names, or None when it names none."""
    out = run(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        cwd,
        check=False,
    )
    text = out.decode("ascii", "replace").strip()
    return text or None


def merge_base(cwd: Path, a: str, b: str) -> str | None:
    out = run(["merge-base", a, b], cwd, check=False).decode("ascii", "replace").strip()
    return out or None


def default_branch(cwd: Path) -> str | None:
    """origin/HEAD when it is set, else the first of main, master, origin/main, origin/master."""
    out = run(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"], cwd, check=False)
    ref = out.decode("utf-8", "surrogateescape").strip()
    if ref:
        return ref
    for candidate in (
        "refs/heads/main",
        "refs/heads/master",
        "refs/remotes/origin/main",
        "refs/remotes/origin/master",
    ):
        if verify_ref(cwd, candidate):
            return candidate
    return None


@dataclass(frozen=True)
class BaseBranch:
    """The branch a change is reviewed against, and why that one (said to the user)."""

    ref: str
    reason: str


def review_base(cwd: Path) -> BaseBranch | None:
    """Where a pull request from this clone would go: the remote's branch, not a local one.

    origin/HEAD when it is set; else the upstream of local main (or master); else
    origin/main (or origin/master); only without any of them the local main or
    master. A local main is a poor base where a remote one exists: its commits that
    were never pushed are part of the pull request, yet would not be reviewed.
    """
    out = run(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"], cwd, check=False)
    ref = out.decode("utf-8", "surrogateescape").strip()
    if ref:
        return BaseBranch(ref, "the remote's default branch, origin/HEAD")
    for name in ("main", "master"):
        if not verify_ref(cwd, f"refs/heads/{name}"):
            continue
        # for-each-ref: a branch named like a tag or a path is never mistaken for it.
        upstream = run(["for-each-ref", "--format=%(upstream)", f"refs/heads/{name}"], cwd)
        tracked = upstream.decode("utf-8", "surrogateescape").strip()
        if tracked.startswith("refs/remotes/") and verify_ref(cwd, tracked):
            return BaseBranch(tracked, f"the upstream of {name}")
    for name in ("main", "master"):
        if verify_ref(cwd, f"refs/remotes/origin/{name}"):
            return BaseBranch(
                f"refs/remotes/origin/{name}", f"origin's {name}; origin/HEAD is not set"
            )
    for name in ("main", "master"):
        if verify_ref(cwd, f"refs/heads/{name}"):
            return BaseBranch(f"refs/heads/{name}", "no remote-tracking branch, so the local one")
    return None


def count_commits(cwd: Path, include: str, exclude: str) -> int:
    """How many commits ``include`` reaches that ``exclude`` does not (``exclude..include``)."""
    out = run(
        ["rev-list", "--count", "--end-of-options", f"{exclude}..{include}"], cwd, check=False
    )
    text = out.decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else 0


def changed_since(cwd: Path, commit: str | None) -> list[str]:
    """Files (top-relative) that differ between ``commit`` and the working tree, staged or not.

    One ``git diff`` against the commit covers what the branch committed since it and
    what is staged or not yet staged; without a commit (an unborn branch) the staged
    files are the changes. A rename gives both names: lessons about the old one apply.
    """
    if commit is None:
        out = run(["ls-files", "-z", "--full-name"], cwd)
        return sorted(set(split_z(out)))
    changes = parse_diff_raw(
        run(["diff", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", commit, "--"], cwd)
    )
    found = {change.path for change in changes}
    found.update(change.old_path for change in changes if change.old_path)
    return sorted(found)
