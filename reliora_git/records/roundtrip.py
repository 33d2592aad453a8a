"""What a record saves is what it reads back, field by field (SPEC.md §3). Pure.

The writer (parse.render_record) escapes what the reader would take for
structure; this module says what "the same" means and finds the first field
that is not, so that a save that would silently move text between fields is
refused instead (docs/record-format.md).

"The same" allows two things, documented as part of the format: blank space at
the ends of a field (or a list item) is not kept, and a Windows line end
(``\\r\\n``) in the body reads as ``\\n``; an empty list item is no item.
"""

from __future__ import annotations

from typing import Any

from reliora_git.records.model import SECTIONS, Record

#: Record attribute → the name a user knows it by (the JSON names of SPEC.md §7).
_FRONT_TEXT = {"id": "id", "title": "title", "project_context": "projectContext"}
_FRONT_OPTIONAL = {
    "confidence": "confidence",
    "status": "status",
    "created": "created",
    "updated": "updated",
    "author": "author",
}
_FRONT_LISTS = {"tags": "tags", "supersedes": "supersedes", "paths": "paths"}
#: Body sections: attribute → (JSON name, is a list).
_BODY = {
    "".join(f"_{c.lower()}" if c.isupper() else c for c in json_name): (json_name, is_list)
    for _, json_name, is_list in SECTIONS
}


def _body_text(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def _items(items: list[str], body: bool) -> list[str]:
    cleaned = (_body_text(item) if body else item.strip() for item in items)
    return [item for item in cleaned if item]


def normalize(record: Record) -> None:
    """Make ``record`` what the store keeps: ends of fields trimmed, empty items dropped."""
    for attr in _FRONT_TEXT:
        setattr(record, attr, getattr(record, attr).strip())
    for attr in _FRONT_OPTIONAL:
        value = getattr(record, attr)
        if isinstance(value, str):
            setattr(record, attr, value.strip())
    for attr in _FRONT_LISTS:
        setattr(record, attr, _items(getattr(record, attr), body=False))
    for attr, (_, is_list) in _BODY.items():
        value = getattr(record, attr)
        setattr(record, attr, _items(value, body=True) if is_list else _body_text(value))
    record.preamble = _body_text(record.preamble)
    record.extra_sections = [(head, _body_text(text)) for head, text in record.extra_sections]


def first_difference(intended: Record, read: Record) -> str | None:
    """The name of the first field that ``read`` does not hold as ``intended`` has it."""
    fields: list[tuple[str, Any, Any]] = [
        (name, getattr(intended, attr), getattr(read, attr))
        for table in (_FRONT_TEXT, _FRONT_OPTIONAL, _FRONT_LISTS)
        for attr, name in table.items()
    ]
    fields.extend(
        (json_name, getattr(intended, attr), getattr(read, attr))
        for attr, (json_name, _) in _BODY.items()
    )
    fields.append(("the text before the first heading", intended.preamble, read.preamble))
    for key, value in intended.extra_meta.items():
        fields.append((f"front matter key {key!r}", value, read.extra_meta.get(key, _MISSING)))
    for key in read.extra_meta.keys() - intended.extra_meta.keys():
        fields.append((f"front matter key {key!r}", _MISSING, read.extra_meta[key]))
    fields.append(("the unknown sections", intended.extra_sections, read.extra_sections))
    for name, wanted, found in fields:
        # repr: a YAML .nan in an unknown key is not equal to itself, yet reads back as written.
        if wanted != found and repr(wanted) != repr(found):
            return name
    return None


_MISSING = object()
