"""Record text ⇄ :class:`Record` (SPEC.md §3). Pure: text in, data out.

The parser is tolerant: it accepts what it can, coerces what is close (a comma
string for tags, a date for ``created``) and reports the rest as problems, so
that one odd field never hides a whole record. Only text that cannot be read as
a record at all (no front matter, broken YAML, front matter that is not a
mapping) raises :class:`RecordError`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

import frontmatter.default_handlers
import yaml

from reliora_git.errors import RecordError
from reliora_git.model import SECTIONS, Problem, Record

_HEADING_RE = re.compile(r"^##[ \t]+(.+?)[ \t#]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BULLET_RE = re.compile(r"^ {0,3}[-*][ \t]+(.*)$")
_CONFLICT_RE = re.compile(r"^(<{7}|={7}|>{7})( |$)", re.MULTILINE)

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
)
_YAML_HANDLER = frontmatter.default_handlers.YAMLHandler()


@dataclass
class ParsedRecord:
    record: Record
    #: Problems found while reading (wrong types, unknown sections, conflict markers…).
    problems: list[Problem] = field(default_factory=list)


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
    _read_meta(meta, record, problems)
    _read_body(body, body_line, record, problems)
    return ParsedRecord(record, problems)


def split_front_matter(text: str, locator: str) -> tuple[dict[str, Any], str, int]:
    if not _YAML_HANDLER.detect(text):
        raise RecordError(
            "no YAML front matter (the file must start with ---)", path=locator, line=1
        )
    try:
        fm, body = _YAML_HANDLER.split(text)
    except ValueError:
        raise RecordError("front matter is not closed with ---", path=locator, line=1) from None
    # Line numbers of the file where the front matter and the body begin (1-based).
    fm_line = text.count("\n", 0, text.find(fm)) + 1
    body_line = text.count("\n", 0, len(text) - len(body)) + 1
    try:
        meta = _YAML_HANDLER.load(fm)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = fm_line + mark.line if mark is not None else fm_line
        reason = getattr(exc, "problem", None) or "invalid YAML"
        raise RecordError(
            f"front matter is not valid YAML: {reason}", path=locator, line=line
        ) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise RecordError("front matter is not a mapping of keys to values", path=locator, line=2)
    return meta, body, body_line


def scalar(value: Any) -> str | None:
    """A YAML scalar as text, or None when it is not a scalar."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return None


def _string_list(key: str, value: Any, problems: list[Problem], split_commas: bool) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) and split_commas:
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        items = [scalar(item) for item in value]
        if all(item is not None for item in items):
            return [item.strip() for item in items if item and item.strip()]
    elif (single := scalar(value)) is not None:
        return [single]
    problems.append(Problem("error", f"'{key}' must be a list of strings"))
    return []


def _read_meta(meta: dict[str, Any], record: Record, problems: list[Problem]) -> None:
    for key in (
        "id",
        "title",
        "project_context",
        "confidence",
        "status",
        "created",
        "updated",
        "author",
    ):
        if key not in meta or meta[key] is None:
            continue
        text = scalar(meta[key])
        if text is None:
            problems.append(
                Problem("error", f"'{key}' must be a single value, not a list or mapping")
            )
            continue
        setattr(record, key, text.strip())
    record.tags = _string_list("tags", meta.get("tags"), problems, split_commas=True)
    record.supersedes = _string_list(
        "supersedes", meta.get("supersedes"), problems, split_commas=True
    )
    record.paths = _string_list("paths", meta.get("paths"), problems, split_commas=False)
    record.extra_meta = {str(k): v for k, v in meta.items() if k not in _KNOWN_KEYS}
    if not record.status:
        record.status = "active"


def _read_body(body: str, first_line: int, record: Record, problems: list[Problem]) -> None:
    sections: list[tuple[str, int, list[str]]] = [("", first_line, [])]
    fence: str | None = None
    for offset, line in enumerate(body.split("\n")):
        fence = _fence_after(fence, line)
        heading_match = _HEADING_RE.match(line) if fence is None else None
        if heading_match:
            sections.append((heading_match.group(1).strip(), first_line + offset, []))
        else:
            sections[-1][2].append(line)

    record.preamble = "\n".join(sections[0][2]).strip()
    seen: set[str] = set()
    for heading, line_no, lines in sections[1:]:
        text = "\n".join(lines).strip()
        key = " ".join(heading.lower().split())
        if key not in _SECTION_ATTRS:
            record.extra_sections.append((heading, text))
            problems.append(Problem("warning", f"unknown section '## {heading}'", line_no))
            continue
        attr, is_list = _SECTION_ATTRS[key]
        if key in seen:
            problems.append(
                Problem("warning", f"section '## {heading}' appears twice; merged", line_no)
            )
        seen.add(key)
        if is_list:
            getattr(record, attr).extend(split_items(text))
        else:
            previous = getattr(record, attr)
            setattr(record, attr, f"{previous}\n\n{text}" if previous else text)


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
            current = [bullet.group(1)]
        else:
            # Continuation lines are indented under their bullet when written.
            current.append(line[2:] if current and line.startswith("  ") else line)
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
    }
    meta.update({k: v for k, v in optional.items() if v is not None})
    meta.update(record.extra_meta)
    front = "".join(yaml_line(k, v) for k, v in meta.items())

    parts = [f"---\n{front}---\n"]
    if record.preamble:
        parts.append(record.preamble + "\n")
    for heading, _json_name, is_list in SECTIONS:
        attr = _SECTION_ATTRS[heading.lower()][0]
        value = getattr(record, attr)
        if not value:
            continue
        text = "\n".join(_bullet(item) for item in value) if is_list else value.strip()
        parts.append(f"## {heading}\n{text}\n")
    parts.extend(f"## {heading}\n{text}\n" for heading, text in record.extra_sections)
    return "\n".join(parts)


def _bullet(item: str) -> str:
    lines = item.strip().split("\n")
    return "\n".join([f"- {lines[0]}", *(f"  {line}" if line else "" for line in lines[1:])])
