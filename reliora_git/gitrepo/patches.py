"""Commits with what their diffs say, from one ``git log -p`` (for ``history``, SPEC.md §16).

One ``git log -p --unified=0`` over the range gives, for each commit, its message, its parents
and, from its patch: the files it changed, the lines it removed and added, in order and
apart (bounded per commit), and the lines it added to a changelog. Merges come without a patch
(their pull request is read from their message and parents). The parser (:func:`parse`) is
pure, linear in the output, and kept apart from the function that runs git.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reliora_git.gitrepo import git
from reliora_git.gitrepo.logparse import (
    is_sha,
    is_time,
    log_format,
    records_of,
    stream_tokens,
)

#: A commit's fields, framed with NUL (logparse.py): a message or an added line cannot make
#: a record of a commit that does not exist.
_FORMAT = log_format("%H", "%P", "%at", "%an", "%s", "%b")
#: Files whose added lines are changelog entries.
CHANGELOG = re.compile(
    r"(?:^|/)(?:CHANGES|CHANGELOG|HISTORY|NEWS|RELEASE[-_ ]?NOTES)(?:\.\w+)?$", re.IGNORECASE
)
#: Removed and added lines kept per commit (a vendored tree or a generated file is not read
#: whole: the lines past these are counted, not kept).
MAX_LINES = 400
#: The longest line kept (a minified file's line is not a line a person wrote).
MAX_LINE_CHARS = 300


@dataclass
class Patched:
    """One commit and what its patch says."""

    sha: str
    parents: tuple[str, ...]
    time: int
    author: str
    subject: str
    body: str
    files: list[str] = field(default_factory=list)
    #: (file, line) removed and added, at most MAX_LINES each.
    removed: list[tuple[str, str]] = field(default_factory=list)
    added: list[tuple[str, str]] = field(default_factory=list)
    #: (changelog file, line) added to a changelog.
    changelog: list[tuple[str, str]] = field(default_factory=list)
    #: (file, "-line" or "+line") in the patch's order, changelogs left out, at most MAX_LINES:
    #: the fix as a diff, for the evidence an agent writes a lesson from.
    diff: list[tuple[str, str]] = field(default_factory=list)
    #: Lines changed in all (removed + added), kept or not.
    changed_lines: int = 0
    #: A shallow clone's boundary: its change is not known here (gitrepo/commits.py).
    boundary: bool = False

    @property
    def short(self) -> str:
        return self.sha[:12]

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


def _path(raw: str) -> str | None:
    """The path of a ``--- a/x`` / ``+++ b/x`` line (None for /dev/null)."""
    raw = raw.removesuffix("\t")  # git ends a ---/+++ path holding a space with a TAB
    if raw == "/dev/null":
        return None
    if raw.startswith('"') and raw.endswith('"'):
        raw = raw[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        raw = raw.encode("latin-1", "replace").decode("utf-8", "replace")
    return raw[2:] if raw[:2] in ("a/", "b/") else raw


def parse(output: bytes | Iterable[bytes]) -> list[Patched]:
    """The commits of ``git log -z -p --unified=0 --format=<_FORMAT>`` output (whole, or as
    chunks as git writes them), in its order; a record whose fields do not validate is
    skipped (logparse.py). Streamed, only one commit's patch text is held at a time."""
    commits: list[Patched] = []
    chunks = [output] if isinstance(output, bytes) else output
    tokens = stream_tokens(chunks)
    for (sha, parents, time, author, subject, body), rest in records_of(tokens, 6, _valid):
        commit = Patched(sha, tuple(parents.split()), int(time), author, subject, body.strip())
        _read_patch(commit, "".join(rest).splitlines())
        commits.append(commit)
    return commits


def _valid(header: Sequence[str]) -> bool:
    return is_sha(header[0]) and all(map(is_sha, header[1].split())) and is_time(header[2])


def _read_patch(commit: Patched, lines: list[str]) -> None:
    current = ""
    seen_files: set[str] = set()
    old = ""
    for line in lines:
        if line.startswith("--- "):
            old = _path(line[4:]) or ""
            continue
        if line.startswith("+++ "):
            current = _path(line[4:]) or old
            if current and current not in seen_files:
                seen_files.add(current)
                commit.files.append(current)
            continue
        if line.startswith("@@"):
            continue
        if not current or line[:1] not in "+-" or line.startswith(("+++", "---")):
            continue
        commit.changed_lines += 1
        text = line[1:MAX_LINE_CHARS]
        if len(commit.diff) < MAX_LINES and not CHANGELOG.search(current):
            commit.diff.append((current, line[0] + text))
        if line[0] == "-":
            if len(commit.removed) < MAX_LINES:
                commit.removed.append((current, text))
        else:
            if CHANGELOG.search(current):
                if len(commit.changelog) < MAX_LINES:
                    commit.changelog.append((current, text))
            elif len(commit.added) < MAX_LINES:
                commit.added.append((current, text))


def log(cwd: Path, since: str | None = None, rev: str = "HEAD") -> list[Patched]:
    """The commits reachable from ``rev`` (since ``since``), newest first, with their patches
    against their first parent (merges: none)."""
    args = ["log", "-z", "-p", "--unified=0", "--no-renames", "--no-color", "--no-ext-diff"]
    args += ["--no-textconv", f"--format={_FORMAT}"]
    if since:
        args.append(f"--since={since}")
    args += ["--end-of-options", rev, "--"]
    found = parse(git.stream(args, cwd))
    from reliora_git.gitrepo.commits import shallow_boundary

    boundary = shallow_boundary(cwd) if found else frozenset()
    for commit in found:
        if commit.sha in boundary:  # its parents are not here: its patch is the whole tree
            commit.files, commit.removed, commit.added = [], [], []
            commit.diff = []
            commit.changelog, commit.boundary = [], True
    return found


def files_at(cwd: Path, rev: str = "HEAD") -> frozenset[str]:
    """Every file path at ``rev`` (to tell which files still exist)."""
    out = git.run(["ls-tree", "-r", "-z", "--name-only", "--end-of-options", rev], cwd, check=False)
    return frozenset(name for name in out.decode("utf-8", "replace").split("\x00") if name)


def show_text(cwd: Path, rev: str, path: str, limit: int = 2 * 1024 * 1024) -> str:
    """The text of ``path`` at ``rev`` ("" when absent or larger than ``limit``)."""
    out = git.run(["cat-file", "-p", f"{rev}:{path}"], cwd, check=False)
    return "" if len(out) > limit else out.decode("utf-8", "replace")
