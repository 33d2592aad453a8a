"""Record text ⇄ :class:`Record` (SPEC.md §3). Pure: text in, data out.

The parser is tolerant: it accepts what it can, coerces what is close (a comma
string for tags, a date for ``created``) and reports the rest as problems, so
that one odd field never hides a whole record. Only text that cannot be read as
a record at all (no front matter, broken YAML, front matter that is not a
mapping) raises :class:`RecordError`.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

import frontmatter.default_handlers
import yaml

from reliora_git.records.errors import RecordError
from reliora_git.records.model import SECTIONS, Problem, Record
from reliora_git.records.text import describe_invisible, escape_invisible, has_invisible

_KNOWN_SECTIONS = ", ".join(heading for heading, _, _ in SECTIONS)

# Trailing spaces and closing hashes are stripped in code: a lazy group followed by
# ``[ \t#]*$`` backtracks quadratically on a long line of spaces (a hostile record).
_HEADING_RE = re.compile(r"^##[ \t]+(.+)$")
_KEY_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A bare ``-`` starts an item too (CommonMark: an item may begin with a blank line): the
# writer starts an item that opens with a code fence that way (see _bullet).
_BULLET_RE = re.compile(r"^ {0,3}[-*](?:[ \t]+(.*))?$")
# The writer escapes a body line that the reader would otherwise take for a heading or
# (inside a list item) for a new item, with one more leading backslash (Markdown shows
# ``\## x`` as ``## x``); the reader takes one off. Both sides use the same patterns, so
# any text reads back exactly as it was given (docs/record-format.md).
_HEADING_LIKE_RE = re.compile(r"\\*##[ \t]")
_ESCAPED_HEADING_RE = re.compile(r"\\+##[ \t]")
_ITEM_LIKE_RE = re.compile(r"\\* ?[-*](?:[ \t]|$)")
_ESCAPED_ITEM_RE = re.compile(r"\\+ ?[-*](?:[ \t]|$)")
# ``=======`` alone is also a Markdown heading underline, so only the outer markers
# (and diff3's ``|||||||``) say that a merge conflict was committed.
_CONFLICT_RE = re.compile(r"^(<{7}|>{7}|\|{7})( |$)", re.MULTILINE)

#: Section heading (normalised) → (Record attribute, is a list).
_SECTION_ATTRS: dict[str, tuple[str, bool]] = {
    " ".join(heading.lower().split()): (
        re.sub(r"(?<!^)(?=[A-Z])", "_", json_name).lower(),
        is_list,
    )
    for heading, json_name, is_list in SECTIONS
}
_KNOWN_KEYS = (
    "id",
    "title",
    "tags",
    "project_context",
    "confidence",
    "created",
    "updated",
    "author",
    "status",
    "supersedes",
    "paths",
    "guards",
)
#: Front-matter keys whose value must be a YAML string (a bare ``42`` or ``yes`` is an error).
_TEXT_KEYS = ("id", "title", "project_context", "confidence", "status", "author")
#: Keys that also accept a YAML date or timestamp.
_DATE_KEYS = ("created", "updated")
_YAML_HANDLER = frontmatter.default_handlers.YAMLHandler()
MAX_FRONT_MATTER_CHARS = 128 * 1024
_MAX_UNKNOWN_WARNINGS = 20


@dataclass
class ParsedRecord:
    record: Record
    #: Problems found while reading (wrong types, unknown sections, conflict markers…).
    problems: list[Problem] = field(default_factory=list)
    #: Line of each top-level front-matter key (for findings about a key).
    key_lines: dict[str, int] = field(default_factory=dict)


def parse_record(text: str, locator: str = "") -> ParsedRecord:
    """Read one record file's text. Raises :class:`RecordError` when it is not a record."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    conflict = _CONFLICT_RE.search(text)
    if conflict:
        line = text.count("\n", 0, conflict.start()) + 1
        raise RecordError("unresolved git conflict marker", path=locator, line=line)
    meta, body, body_line = split_front_matter(text, locator)
    problems: list[Problem] = []
    record = Record(locator=locator)
    key_lines = _key_lines(text, body_line)
    _read_meta(meta, record, problems, key_lines)
    headings = _read_body(body, body_line, record, problems)
    problems.extend(invisible_text_problems(meta, key_lines, body, body_line, headings, locator))
    return ParsedRecord(record, problems, key_lines)


def _key_lines(text: str, body_line: int) -> dict[str, int]:
    """Line number of each top-level front-matter key, so problems can name their line.

    ``body_line`` is the line the body starts on (the closing ``---`` or after it), so
    lines 2 to ``body_line - 1`` hold the front matter and its closing line.
    """
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n", body_line)[1 : body_line - 1], start=2):
        match = _KEY_RE.match(line)
        if match:
            lines.setdefault(match.group(1), number)
    return lines


def split_front_matter(text: str, locator: str) -> tuple[dict[str, Any], str, int]:
    if not _YAML_HANDLER.detect(text):
        raise RecordError(
            "no YAML front matter (the file must start with ---)", path=locator, line=1
        )
    try:
        fm, body = _YAML_HANDLER.split(text)
    except ValueError:
        raise RecordError("front matter is not closed with ---", path=locator, line=1) from None
    if len(fm) > MAX_FRONT_MATTER_CHARS:
        # Building YAML values costs ~15 µs a node in Python: a 1 MiB flow list took 8 s
        # on every search. Real front matter is a few lines; 10,000 tags still fit.
        raise RecordError(
            f"front matter is larger than {MAX_FRONT_MATTER_CHARS // 1024} KiB",
            path=locator,
            line=2,
        )
    # Line numbers of the file where the front matter and the body begin (1-based).
    fm_line = text.count("\n", 0, text.find(fm)) + 1
    body_line = text.count("\n", 0, len(text) - len(body)) + 1
    try:
        # The handler uses yaml's (C)SafeLoader: tags like !!python/object construct nothing.
        meta = _YAML_HANDLER.load(fm)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = fm_line + mark.line if mark is not None else fm_line
        reason = getattr(exc, "problem", None) or "invalid YAML"
        raise RecordError(
            f"front matter is not valid YAML: {reason}", path=locator, line=line
        ) from None
    except Exception as exc:
        # The safe constructors still raise plain errors on bad scalars: ValueError for
        # ``created: 2026-13-45`` or ``!!int abc``, AttributeError for ``!!timestamp q``.
        # They construct nothing unsafe, so whatever they raise is bad input, not a crash.
        raise RecordError(f"front matter is not valid YAML: {exc}", path=locator) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise RecordError("front matter is not a mapping of keys to values", path=locator, line=2)
    if _expanded_size(meta, limit=len(fm) + 64) > len(fm) + 64:
        # Without aliases every YAML node takes at least one character of the source, so
        # more nodes than characters means aliases expand (a "billion laughs" bomb) or
        # refer to themselves. Reject before any code walks, prints or dumps the value.
        raise RecordError(
            "front matter uses YAML aliases that expand beyond the file's size "
            "(an alias bomb or a self-reference)",
            path=locator,
            line=2,
        )
    return meta, body, body_line


def _expanded_size(value: Any, limit: int) -> int:
    """Nodes in ``value`` counting every alias as a copy; stops counting past ``limit``."""
    seen = 0
    stack = [value]
    while stack and seen <= limit:
        item = stack.pop()
        seen += 1
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set)):
            stack.extend(item)
    return seen


def scalar(value: Any) -> str | None:
    """A YAML scalar as text, or None when it is not a scalar."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return None


def _string_list(
    key: str, value: Any, problems: list[Problem], split_commas: bool, line: int | None = None
) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) and split_commas:
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        items = [scalar(item) for item in value]
        if all(item is not None for item in items):
            coerced = [str(v) for v in value if not isinstance(v, str)]
            if coerced:
                # `tags: [3.10]` reads as the number 3.1: keep it, but say so.
                problems.append(
                    Problem(
                        "warning",
                        f"'{key}' item {coerced[0]} is not a quoted string in YAML; "
                        "quote it to keep it exactly as written",
                        line,
                    )
                )
            return [item.strip() for item in items if item and item.strip()]
    elif (single := scalar(value)) is not None:
        return [single]
    problems.append(Problem("error", f"'{key}' must be a list of strings", line))
    return []


def _read_meta(
    meta: dict[str, Any], record: Record, problems: list[Problem], lines: dict[str, int]
) -> None:
    for key in (*_TEXT_KEYS, *_DATE_KEYS):
        if key not in meta or meta[key] is None:
            continue
        value = meta[key]
        text = scalar(value)
        if text is None:
            problems.append(
                Problem(
                    "error",
                    f"'{key}' must be a single value, not a list or mapping",
                    lines.get(key),
                )
            )
            continue
        if key in _TEXT_KEYS and not isinstance(value, str):
            # YAML turns `title: 42`, `id: 0123` or `title: yes` into a number or a boolean,
            # and its text is then not what the file says (0123 is 83): an error, not a guess.
            problems.append(
                Problem(
                    "error",
                    f"'{key}' must be text, not {_yaml_type(value)} (put the value in quotes)",
                    lines.get(key),
                )
            )
        setattr(record, key, text.strip())
    record.tags = _string_list(
        "tags", meta.get("tags"), problems, split_commas=True, line=lines.get("tags")
    )
    record.supersedes = _string_list(
        "supersedes", meta.get("supersedes"), problems, True, lines.get("supersedes")
    )
    record.paths = _string_list("paths", meta.get("paths"), problems, False, lines.get("paths"))
    if meta.get("guards") is not None:
        from reliora_git.records.guards import parse_guards  # records with guards are few

        record.guards, found = parse_guards(meta["guards"], lines.get("guards"))
        problems.extend(found)
    record.extra_meta = {str(k): v for k, v in meta.items() if k not in _KNOWN_KEYS}
    if not record.status:
        record.status = "active"


def _yaml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a date"


def _read_body(
    body: str, first_line: int, record: Record, problems: list[Problem]
) -> list[tuple[str, int]]:
    """Fill ``record``'s sections from ``body``; return each heading with its line in the file."""
    sections: list[tuple[str, int, list[str]]] = [("", first_line, [])]
    fence: str | None = None
    for offset, line in enumerate(body.split("\n")):
        fence = _fence_after(fence, line)
        heading_match = _HEADING_RE.match(line) if fence is None else None
        if heading_match:
            raw = heading_match.group(1)
            heading = raw.rstrip(" \t#").strip() or raw.strip()
            sections.append((heading, first_line + offset, []))
        else:
            if fence is None and line[:1] == "\\" and _ESCAPED_HEADING_RE.match(line):
                line = line[1:]
            sections[-1][2].append(line)

    record.preamble = "\n".join(sections[0][2]).strip()
    seen: set[str] = set()
    repeated: set[str] = set()
    unknown = 0
    # Repeated text sections are joined once at the end: joining on every repeat is
    # quadratic in a hostile file holding thousands of `## Solution` headings.
    texts: dict[str, list[str]] = {}
    for heading, line_no, lines in sections[1:]:
        text = "\n".join(lines).strip()
        key = " ".join(heading.lower().split())
        if key not in _SECTION_ATTRS:
            record.extra_sections.append((heading, text))
            unknown += 1
            if unknown <= _MAX_UNKNOWN_WARNINGS:
                message = f"unknown section '## {heading}' (kept as is; known: {_KNOWN_SECTIONS})"
                problems.append(Problem("warning", message, line_no))
            continue
        attr, is_list = _SECTION_ATTRS[key]
        if key in seen and key not in repeated:
            # Once per heading: a file of 10,000 `## Task` lines is one finding, not 9,999.
            repeated.add(key)
            problems.append(
                Problem("warning", f"section '## {heading}' appears twice; merged", line_no)
            )
        seen.add(key)
        if is_list:
            getattr(record, attr).extend(split_items(text))
        elif text:
            texts.setdefault(attr, []).append(text)
    for attr, parts in texts.items():
        setattr(record, attr, "\n\n".join(parts))
    if unknown > _MAX_UNKNOWN_WARNINGS:
        # A hostile file can hold 100,000 headings: `check` stays readable.
        problems.append(
            Problem("warning", f"… and {unknown - _MAX_UNKNOWN_WARNINGS} more unknown sections")
        )
    return [(heading, line_no) for heading, line_no, _ in sections[1:]]


def invisible_text_problems(
    meta: dict[str, Any],
    key_lines: dict[str, int],
    body: str,
    body_line: int,
    headings: list[tuple[str, int]],
    locator: str = "",
) -> list[Problem]:
    """A warning per field holding invisible characters (records/text.py), naming its line.

    Front matter is judged as YAML reads it (``"\\U000E0049"`` is an escape for a tag
    character), the body line by line as written. Linear: one character-class search
    per string and per body line, at most ``_MAX_UNKNOWN_WARNINGS`` warnings.
    """
    found: list[Problem] = []

    def warn(where: str, text: str, line: int | None) -> None:
        if len(found) < _MAX_UNKNOWN_WARNINGS:
            message = (
                f"{where} holds {describe_invisible(text)}, which people do not see "
                "but agents read: remove them"
            )
            found.append(Problem("warning", message, line))

    if has_invisible(locator):
        warn("the file name", locator, None)
    for key, value in meta.items():
        text = "\n".join(_strings_in(key, value))
        if has_invisible(text):
            warn(f"front matter '{escape_invisible(str(key))}'", text, key_lines.get(str(key)))
    if not has_invisible(body):
        return found
    starts = [line for _, line in headings]
    # Section (-1: the text before the first heading) → its first line holding any, and them.
    by_section: dict[int, tuple[int, list[str]]] = {}
    for offset, line in enumerate(body.split("\n")):
        if has_invisible(line):
            number = body_line + offset
            section = bisect.bisect_right(starts, number) - 1
            by_section.setdefault(section, (number, []))[1].append(line)
    for section, (number, lines) in by_section.items():
        if section < 0:
            where = "the text before the first heading"
        else:
            where = f"section '## {escape_invisible(headings[section][0])}'"
        warn(where, "\n".join(lines), number)
    return found


def _strings_in(key: Any, value: Any) -> list[str]:
    """Every string in a front-matter entry, keys included (aliases were bounded on reading)."""
    strings = [key] if isinstance(key, str) else []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set)):
            stack.extend(item)
    return strings


def _fence_after(fence: str | None, line: str) -> str | None:
    """The open code fence after ``line`` (None outside one): ``##`` inside a fence is text."""
    match = _FENCE_RE.match(line)
    if match is None:
        return fence
    marker = match.group(1)
    if fence is None:
        return marker
    if marker[0] == fence[0] and len(marker) >= len(fence):
        return None
    return fence


def split_items(text: str) -> list[str]:
    """Items of a list section: top-level `-`/`*` bullets; no bullets means one item."""
    items: list[list[str]] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        bullet = _BULLET_RE.match(line) if fence is None else None
        fence = _fence_after(fence, line)
        if bullet:
            if current:
                items.append(current)
            current = [bullet.group(1) or ""]
        else:
            # Continuation lines are indented under their bullet when written.
            line = line[2:] if current and line.startswith("  ") else line
            if fence is None and line[:1] == "\\" and _ESCAPED_ITEM_RE.match(line):
                line = line[1:]
            current.append(line)
    if current:
        items.append(current)
    return [joined for item in items if (joined := "\n".join(item).strip())]


# --- writing -------------------------------------------------------------------------------


def yaml_line(key: str, value: Any) -> str:
    """One front-matter entry; a list of scalars in flow style (``tags: [a, b]``)."""
    options: dict[str, Any] = {"allow_unicode": True, "sort_keys": False, "width": 10_000}
    if isinstance(value, list) and all(scalar(item) is not None for item in value):
        flow: str = yaml.safe_dump(value, default_flow_style=True, **options)
        return f"{key}: {flow.strip()}\n"
    block: str = yaml.safe_dump({key: value}, default_flow_style=False, **options)
    return block


def render_record(record: Record) -> str:
    """Markdown text of ``record``: known keys in fixed order; unknown keys and sections kept."""
    meta: dict[str, Any] = {"id": record.id, "title": record.title, "tags": record.tags}
    optional: dict[str, Any] = {
        "project_context": record.project_context or None,
        "confidence": record.confidence,
        "created": record.created,
        "updated": record.updated,
        "author": record.author,
        "status": record.status,
        "supersedes": record.supersedes or None,
        "paths": record.paths or None,
        "guards": [guard.to_yaml() for guard in record.guards] or None,
    }
    meta.update({k: v for k, v in optional.items() if v is not None})
    meta.update(record.extra_meta)
    front = "".join(yaml_line(k, v) for k, v in meta.items())

    body = _BodyWriter()
    body.block("the text before the first heading", record.preamble)
    for heading, json_name, is_list in SECTIONS:
        value = getattr(record, _SECTION_ATTRS[heading.lower()][0])
        if not value:
            continue
        body.heading(heading)
        if is_list:
            for number, item in enumerate(value, start=1):
                body.item(f"{json_name} item {number}", item)
        else:
            body.block(json_name, value)
    for heading, text in record.extra_sections:
        body.heading(heading)
        body.block(f"section '## {heading}'", text)
    return "\n".join([f"---\n{front}---\n", *body.parts()])


class FieldNotWritable(RecordError):
    """A field whose text the record format cannot hold as given: nothing is saved."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"the field {field} {reason}")
        self.field = field


#: First characters of the lines the writer may have to escape (a cheap test first).
_ESCAPABLE = frozenset("\\#<>|")
_ITEM_STARTS = frozenset("\\ -*")


class _BodyWriter:
    """The body of a record, written so that the reader finds in it exactly what was given.

    Lines the reader would take for structure are escaped (see _HEADING_LIKE_RE); a
    code fence that a field leaves open would swallow every heading after it, so that
    is refused, naming the field (:class:`FieldNotWritable`), unless nothing follows.
    The layout is the one records have always had: a blank line before each heading.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._lines: list[str] = []
        #: The field whose code fence is still open after its text, and that fence.
        self._open: tuple[str, str] | None = None

    def heading(self, heading: str) -> None:
        self._check_closed()
        self._flush()
        self._lines.append(f"## {heading}")

    def block(self, field: str, text: str) -> None:
        """A text field, the text before the first heading, or an unknown section's text."""
        text = text.strip()
        if not text:
            if self._lines:
                self._lines.append("")  # an unknown section without text keeps its line
            return
        self._check_closed()
        fence: str | None = None
        for number, line in enumerate(text.split("\n"), start=1):
            if line[:1] in _ESCAPABLE:
                if fence is None and _HEADING_LIKE_RE.match(line):
                    line = "\\" + line
                elif _CONFLICT_RE.match(line):
                    # Any such line makes the whole file an unresolved merge (parse_record).
                    raise FieldNotWritable(
                        field,
                        f"would not read back: its line {number} reads as a git conflict "
                        "marker; indent that line by a space",
                    )
            fence = _fence_after(fence, line)
            self._lines.append(line)
        self._open = None if fence is None else (field, fence)

    def item(self, field: str, item: str) -> None:
        """One item of a list field: ``- first line``, the rest indented by two spaces."""
        self._check_closed()
        lines = item.strip().split("\n")
        if _FENCE_RE.match(lines[0]):
            # The reader sees no fence on a bullet line: the item starts on the next one.
            self._lines.append("-")
        else:
            self._lines.append(f"- {lines[0]}")
            lines = lines[1:]
        fence: str | None = None
        for line in lines:
            if fence is None and line[:1] in _ITEM_STARTS and _ITEM_LIKE_RE.match(line):
                line = "\\" + line  # on a line of its own it would start a new item
            written = f"  {line}" if line else ""
            fence = _fence_after(fence, written)
            self._lines.append(written)
        self._open = None if fence is None else (field, fence)

    def parts(self) -> list[str]:
        """Each heading with its text (and the text before the first), to join by blank lines."""
        self._flush()
        return self._parts

    def _flush(self) -> None:
        if self._lines:
            self._parts.append("\n".join(self._lines) + "\n")
            self._lines = []

    def _check_closed(self) -> None:
        if self._open is not None:
            field, fence = self._open
            raise FieldNotWritable(
                field,
                f"opens a code fence ({fence}) that it never closes, so everything after "
                "it would be read as code; close the fence",
            )
