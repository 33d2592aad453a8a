"""The corpus of bad and hostile record files, and how Reliora must treat each one.

Most cases are plain files in ``tests/bad_records/`` (``.gitattributes`` keeps their
bytes exact). The rest cannot live in a checkout as files — symlinks, a folder named
``x.md``, a FIFO, a file over 1 MiB, bytes that are not UTF-8, file names with escape
characters or invalid UTF-8, 10,000 tags — and :func:`install_bad_corpus` makes them.

Reuse (hook, review, search tests)::

    from tests.bad_corpus import install_bad_corpus

    expected = install_bad_corpus(store.path)       # store.path is the .reliora folder
    for locator, case in expected.items():
        ...  # case.valid, case.message, case.line, case.kind, case.title

Keys are locators (repo-relative POSIX paths, e.g. ``.reliora/experiences/empty.md``).
An invalid case is skipped by search/list with one warning line holding its locator
and ``message`` (and ``:line`` when ``line`` is set); ``check`` reports it as an error.
A valid case is a usable record whose hostile content must be neutralised on output.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

BAD_RECORDS = Path(__file__).resolve().parent / "bad_records"
#: The title of the record placed *outside* the repository, behind symlinks: it must
#: never appear in any output, or a link was followed.
OUTSIDE_TITLE = "Outside secret that must never be read"
MAX_RECORD_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Expected:
    """What Reliora must make of one corpus file."""

    #: A usable record (shown by search and list) rather than one skipped with a warning.
    valid: bool
    #: For an invalid case, a fragment of the warning line and of check's error.
    message: str = ""
    #: The line the warning names (``locator:line``), when it names one.
    line: int | None = None
    #: file, symlink, folder or fifo. ``git add -A`` stages files as blobs and symlinks
    #: as links (mode 120000), and silently skips the FIFO and the empty folder.
    kind: str = "file"
    #: For a valid case, the title exactly as ``--json`` must show it.
    title: str = ""


# Checked-in files: name → expectation.
FILES: dict[str, Expected] = {
    "broken-yaml.md": Expected(False, "front matter is not valid YAML", 4),
    "front-matter-list.md": Expected(False, "front matter is not a mapping", 2),
    "front-matter-scalar.md": Expected(False, "front matter is not a mapping", 2),
    "no-front-matter.md": Expected(False, "no YAML front matter", 1),
    "unclosed-front-matter.md": Expected(False, "front matter is not closed", 1),
    "empty.md": Expected(False, "no YAML front matter", 1),
    "missing-title.md": Expected(False, "missing required field 'title'"),
    "missing-id.md": Expected(False, "missing required field 'id'"),
    "missing-solution.md": Expected(False, "needs a '## Solution' section"),
    "number-title.md": Expected(False, "'title' must be text, not a number", 3),
    "boolean-title.md": Expected(False, "'title' must be text, not a boolean", 3),
    "octal-id.md": Expected(False, "'id' must be text, not a number", 2),
    "list-title.md": Expected(False, "'title' must be a single value", 3),
    "mapping-tags.md": Expected(False, "'tags' must be a list of strings", 4),
    "bad-status.md": Expected(False, "status 'deleted' must be one of", 4),
    "bad-date.md": Expected(False, "month must be in 1..12"),
    "hostile-id.md": Expected(False, "id '../../outside' must match", 2),
    "uppercase-id.md": Expected(False, "id 'Upper-Case' must match", 2),
    "ansi-id.md": Expected(False, "must match [a-z0-9]", 2),
    "conflict-markers.md": Expected(False, "unresolved git conflict marker", 6),
    "python-object.md": Expected(False, "could not determine a constructor", 3),
    "alias-bomb.md": Expected(False, "YAML aliases that expand", 2),
    "self-reference.md": Expected(False, "YAML aliases that expand", 2),
    # Two files claim one id: the one at experiences/<id>.md keeps it, although the
    # copy sorts first.
    "0-duplicate-id-copy.md": Expected(
        False, "id 'duplicate-id' is already used by .reliora/experiences/duplicate-id.md"
    ),
    "duplicate-id.md": Expected(True, title="The first record with this id"),
    "bom.md": Expected(True, title="Saved by an editor that writes a byte order mark"),
    "crlf.md": Expected(True, title="Saved with Windows line ends"),
    "bom-crlf.md": Expected(True, title="A byte order mark and Windows line ends"),
    "ansi-title.md": Expected(
        True, title="Terminal \x1b[31mred\x1b[0m text\x1b]0;pwned\x07 with a bell\x00 and NUL"
    ),
    "rtl-override.md": Expected(
        True, title="Invoice \u202efdp.exe\u202c and isolates \u2066x\u2069"
    ),
}

_VALID_BODY = "## Problems\n- something broke\n\n## Solution\nfix it\n"


def _valid_record(record_id: str, title: str, extra: str = "", body: str = _VALID_BODY) -> str:
    return f"---\nid: {record_id}\ntitle: {title}\n{extra}---\n{body}"


def install_bad_corpus(store_dir: Path, outside: Path | None = None) -> dict[str, Expected]:
    """Put every corpus case into ``store_dir/experiences/``; return locator → Expected.

    ``store_dir`` is a ``.reliora`` folder at the top of a repository. Symlink targets
    go to ``outside`` (default: a folder beside the repository), and hold a valid
    record titled :data:`OUTSIDE_TITLE` so that a followed link would show.
    """
    store_dir = store_dir.absolute()  # symlink targets must not be relative
    experiences = store_dir / "experiences"
    experiences.mkdir(parents=True, exist_ok=True)
    root = store_dir.parent
    outside = outside or root.parent / "outside-the-repo"
    outside.mkdir(parents=True, exist_ok=True)

    def locator(path: Path) -> str:
        return path.relative_to(root).as_posix()

    expected: dict[str, Expected] = {}
    for name, case in FILES.items():
        shutil.copyfile(BAD_RECORDS / name, experiences / name)
        expected[locator(experiences / name)] = case

    secret = outside / "secret.md"
    secret.write_text(_valid_record("outside-secret", OUTSIDE_TITLE), encoding="utf-8")
    (outside / "folder").mkdir(exist_ok=True)
    (outside / "folder" / "secret-in-folder.md").write_text(
        _valid_record("outside-secret-in-folder", OUTSIDE_TITLE), encoding="utf-8"
    )
    link_cases = {
        "link-outside.md": secret,
        "link-to-folder.md": outside / "folder",
        "linked-folder": outside / "folder",  # not named *.md: still reported, not walked
        "link-broken.md": outside / "does-not-exist.md",
    }
    for name, target in link_cases.items():
        os.symlink(target, experiences / name)
        expected[locator(experiences / name)] = Expected(
            False, "is a symbolic link, not a regular file", kind="symlink"
        )

    folder = experiences / "folder.md"
    folder.mkdir()
    expected[locator(folder)] = Expected(False, "is a folder, not a file", kind="folder")

    fifo = experiences / "named-pipe.md"
    os.mkfifo(fifo)  # reading it naively would hang search forever
    expected[locator(fifo)] = Expected(False, "is not a regular file", kind="fifo")

    too_large = experiences / "too-large.md"
    padding = "x" * 100 + "\n"
    body = _VALID_BODY + padding * (MAX_RECORD_BYTES // len(padding) + 1)
    too_large.write_text(_valid_record("too-large", "Over one MiB", body=body), encoding="utf-8")
    expected[locator(too_large)] = Expected(False, "is larger than 1024 KiB")

    not_utf8 = experiences / "not-utf8.md"
    not_utf8.write_bytes(
        _valid_record("not-utf8", "Latin-1 bytes").encode() + b"caf\xe9 in Latin-1\n"
    )
    expected[locator(not_utf8)] = Expected(False, "is not valid UTF-8 text", 10)

    # A file name with an escape sequence and a newline: the warning must stay one
    # clean line. The content is broken too, so that it is warned about.
    evil_name = experiences / "evil\x1b[2J\nname.md"
    evil_name.write_text("not a record\n", encoding="utf-8")
    expected[locator(evil_name)] = Expected(False, "no YAML front matter", 1)

    # A valid record whose file name is not UTF-8 (git stores names as bytes).
    latin1 = Path(os.fsdecode(os.fsencode(experiences) + b"/caf\xe9-latin1-name.md"))
    latin1.write_text(_valid_record("cafe-latin1-name", "A file name in Latin-1"), "utf-8")
    expected[locator(latin1)] = Expected(True, title="A file name in Latin-1")

    many_tags = experiences / "many-tags.md"
    tags = ", ".join(f"tag{n}" for n in range(10_000))
    many_tags.write_text(
        _valid_record("many-tags", "Ten thousand tags", extra=f"tags: [{tags}, needle]\n"),
        encoding="utf-8",
    )
    # Ten thousand tags would fill every brief and result: refused by the field caps.
    tags_line = many_tags.read_text("utf-8").splitlines().index(f"tags: [{tags}, needle]") + 1
    expected[locator(many_tags)] = Expected(False, "10001 tags; at most 20", tags_line)

    huge_front = experiences / "huge-front-matter.md"
    items = ",".join("a" for _ in range(70_000))
    huge_front.write_text(
        _valid_record("huge-front-matter", "Huge front matter", extra=f"tags: [{items}]\n"),
        encoding="utf-8",
    )
    expected[locator(huge_front)] = Expected(False, "front matter is larger than 128 KiB", 2)

    long_lines = experiences / "long-lines.md"
    # A 200,000-space heading line made the old heading regex backtrack quadratically.
    long_body = (
        "## Problems\n- " + "word " * 60_000 + "\n\n## Solution\n" + "y" * 200_000 + "\n"
        "## Odd" + " " * 200_000 + "x\n"
    )
    long_lines.write_text(
        _valid_record("long-lines", "Very long lines", body=long_body), encoding="utf-8"
    )
    expected[locator(long_lines)] = Expected(True, title="Very long lines")
    return expected


def invalid_locators(expected: dict[str, Expected]) -> list[str]:
    return sorted(loc for loc, case in expected.items() if not case.valid)


def valid_locators(expected: dict[str, Expected]) -> list[str]:
    return sorted(loc for loc, case in expected.items() if case.valid)
