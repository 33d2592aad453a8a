"""The lines a change adds, file by file, as git computes them (what guards judge, SPEC.md §15).

Two ``git diff`` runs with the same selection: ``--raw -z`` names the files
exactly (any bytes in a name), then ``-p -U0`` gives their added lines, one
``diff --git`` section per file in the same order, so no quoted name is ever
parsed out of a patch header. Between the two, files too large to judge are
left out by pathspec, so a 50 MB generated file costs one ``cat-file
--batch-check`` line, not a 50 MB patch. Symbolic links and submodules are not
files; files git takes for binary (a NUL byte, or ``-diff`` in
``.gitattributes``) come back without lines.

The patch is git's own, with the user's diff settings that would change it
turned off: no external diff, no textconv, no colour, fixed prefixes, paths from
the top (``--no-relative``). ``diff --cached`` honours ``GIT_INDEX_FILE``, so the
hook sees the index ``git commit -a`` and ``git commit <paths>`` hand it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reliora_git.gitrepo import git
from reliora_git.records.errors import RelioraError

_NOT_FILES = ("120000", "160000")
_ZERO = frozenset("0")
#: Up to this many files are named on git's command line (one argument each).
_MAX_PATHSPECS = 1000
#: Options that keep the patch git's own whatever the user's configuration says.
_PLAIN = [
    "-M",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-relative",
    "--diff-filter=ACMRT",
]


@dataclass
class AddedLines:
    """The lines one file gains: their text joined by ``\\n`` and each one's line number."""

    path: str
    text: bytes = b""
    numbers: list[int] = field(default_factory=list)
    #: Offset in ``text`` where each line starts (same order as ``numbers``).
    starts: list[int] = field(default_factory=list)

    def line_at(self, offset: int) -> tuple[int, bytes]:
        """The line number and the text of the added line starting at ``offset``."""
        i = bisect.bisect_right(self.starts, offset) - 1
        end = self.text.find(b"\n", self.starts[i])
        return self.numbers[i], self.text[self.starts[i] : end if end >= 0 else len(self.text)]


@dataclass
class ChangeLines:
    """What a change adds: the files with lines, and what was skipped and why."""

    files: list[AddedLines]
    #: Files not judged: (path, reason) — larger than the limit.
    skipped: list[tuple[str, str]] = field(default_factory=list)


def staged_lines(
    top: Path, wanted: Callable[[str], bool], max_bytes: int, exclude: Sequence[str] = ()
) -> ChangeLines:
    """Lines the index adds to HEAD (or to nothing, on an unborn branch)."""
    return _added(top, ["diff", "--cached"], wanted, max_bytes, exclude)


def commit_lines(
    top: Path,
    base: str | None,
    head: str,
    wanted: Callable[[str], bool],
    max_bytes: int,
    exclude: Sequence[str] = (),
) -> ChangeLines:
    """Lines ``head`` adds to ``base`` (to nothing when ``base`` is None: a root commit)."""
    if base is None:
        empty = git.run(["hash-object", "-t", "tree", "--stdin"], top, input=b"")
        base = empty.decode("ascii").strip()
    return _added(top, ["diff", base, head], wanted, max_bytes, exclude)


def _added(
    top: Path,
    command: list[str],
    wanted: Callable[[str], bool],
    max_bytes: int,
    exclude: Sequence[str],
) -> ChangeLines:
    """``exclude``: folders (top-relative, ending in ``/``) never judged, e.g. the store."""
    specs = [f":(top,exclude,literal){folder}" for folder in exclude]
    raw = git.run([*command, "--raw", "-z", "--no-abbrev", *_PLAIN, "--", *specs], top)
    changes = git.parse_diff_raw(raw)
    if not changes:
        return ChangeLines([])
    judged = [
        c
        for c in changes
        if c.new_mode not in _NOT_FILES
        and c.new_blob
        and set(c.new_blob) != _ZERO
        and wanted(c.path)
    ]
    if not judged:
        return ChangeLines([])
    sizes = git.blob_sizes(top, [c.new_blob for c in judged if c.new_blob])
    large = {c.path for c in judged if sizes[c.new_blob or ""] > max_bytes}
    skipped = [(path, f"larger than {max_bytes // 1024} KiB") for path in sorted(large)]
    kept = {c.path for c in judged if c.path not in large}
    if not kept:
        return ChangeLines([], skipped)
    if len(kept) <= _MAX_PATHSPECS:
        # Only the files judged (with the sources of renames, so that git pairs them alike).
        named = sorted(kept | {c.old_path for c in judged if c.path in kept and c.old_path})
        specs = [f":(top,literal){path}" for path in named]
    else:  # a command line has its limits: the large files are left out, the rest read
        specs += [f":(top,exclude,literal){path}" for path in sorted(large)[:_MAX_PATHSPECS]]
    # --raw with -p: the exact names first, then one patch section per name, in order.
    out = git.run(
        [
            *command,
            "--raw",
            "-z",
            "--no-abbrev",
            "-p",
            "-U0",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            *_PLAIN,
            "--",
            *specs,
        ],
        top,
    )
    names, _, patch = out.partition(b"\0\0")
    listed = git.parse_diff_raw(names + b"\0") if names else []
    sections = _sections(patch)
    if len(sections) != len(listed):
        raise RelioraError(
            f"git diff gave {len(sections)} patches for {len(listed)} files", code="git_failed"
        )
    files = [
        _lines_of(change.path, section)
        for change, section in zip(listed, sections, strict=True)
        if change.path in kept
    ]
    return ChangeLines([f for f in files if f.numbers], skipped)


def _sections(patch: bytes) -> list[bytes]:
    """The patch cut at each ``diff --git`` header (a patch line never starts with it)."""
    if not patch:
        return []
    pieces = patch.split(b"\ndiff --git ")
    if not pieces[0].startswith(b"diff --git "):
        raise RelioraError("git diff printed something other than a patch", code="git_failed")
    return pieces


def _lines_of(path: str, section: bytes) -> AddedLines:
    """The added lines of one file's section (none for a binary file or a pure rename)."""
    found = AddedLines(path)
    first = section.find(b"\n@@ ")
    if first < 0:
        return found
    texts: list[bytes] = []
    numbers = found.numbers
    number = 0
    for line in section[first + 1 :].split(b"\n"):
        head = line[:1]
        if head == b"+":
            numbers.append(number)
            texts.append(line[1:])
            number += 1
        elif head == b"@":
            # @@ -a[,b] +c[,d] @@: the added lines start at line c of the new file.
            plus = line.find(b" +")
            end = line.find(b" ", plus + 2)
            number = int(line[plus + 2 : end].split(b",")[0])
    offset = 0
    for text in texts:
        found.starts.append(offset)
        offset += len(text) + 1
    found.text = b"\n".join(texts)
    return found
