"""Records change in place: ``update`` and ``retire`` (SPEC.md §11).

A record is read through the store index, changed, checked exactly as a new
record is (validation, secrets, reading back), and written back with
:func:`~reliora_git.storage.store.replace_file`, which refuses when the file changed on
disk after it was read. Unknown front-matter keys and sections are kept.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.operations.lessons.targets import Target, find_target
from reliora_git.operations.lessons.writes import check_reads_back, refuse_secrets, validate_new
from reliora_git.operations.paths import PathWarning
from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import Record
from reliora_git.records.validate import drop_placeholders
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import Store, decode_utf8, read_regular_file, replace_file

if TYPE_CHECKING:
    from reliora_git.operations.guards.existing import AcceptedMatches

#: Fields an update replaces when given (Record attribute names).
REPLACED = (
    "title",
    "task",
    "solution",
    "why_it_worked",
    "applicability",
    "verification",
    "project_context",
    "confidence",
    "tags",
    "paths",
    "asked_as",
    "guards",
)
#: Fields an update appends to (``--add-problem`` and the like).
APPENDED = (
    "problems",
    "failed_attempts",
    "warnings",
    "asked_as",
    "tags",
    "paths",
    "supersedes",
    "guards",
)
#: Of those, the lists that keep each item once (a tag again, a path again: no change).
APPENDED_ONCE = ("tags", "paths", "supersedes", "asked_as")
#: JSON keys of an update (``update --json -``, the MCP tool) → (attribute, appended).
JSON_KEYS = {
    "title": ("title", False),
    "task": ("task", False),
    "solution": ("solution", False),
    "whyItWorked": ("why_it_worked", False),
    "applicability": ("applicability", False),
    "verification": ("verification", False),
    "projectContext": ("project_context", False),
    "confidence": ("confidence", False),
    "tags": ("tags", False),
    "paths": ("paths", False),
    "askedAs": ("asked_as", False),
    "addProblems": ("problems", True),
    "addFailedAttempts": ("failed_attempts", True),
    "addWarnings": ("warnings", True),
    "addAskedAs": ("asked_as", True),
    "addTags": ("tags", True),
    "addPaths": ("paths", True),
    "addSupersedes": ("supersedes", True),
    "guards": ("guards", False),
    "addGuards": ("guards", True),
}


@dataclass
class Changes:
    """What an update sets: replaced fields, and items appended to list fields."""

    replace: dict[str, object] = field(default_factory=dict)
    append: dict[str, list[str]] = field(default_factory=dict)
    #: Front-matter keys this version does not know, set as given (``retired_reason``).
    extra: dict[str, object] = field(default_factory=dict)
    status: str | None = None

    def empty(self) -> bool:
        has_appends = any(self.append.values())
        return not (self.replace or has_appends or self.extra or self.status)


def changes_from_json(data: object) -> Changes:
    """The changes a JSON object asks for (``None`` values are left out: not given)."""
    if not isinstance(data, dict):
        raise RelioraError("the changes must be one JSON object", code="invalid_json")
    changes = Changes()
    for key, value in data.items():
        spec = JSON_KEYS.get(key)
        if spec is None:
            from reliora_git.records.jsonnames import json_name_hint

            hint = json_name_hint(key, JSON_KEYS)
            known = ", ".join(sorted(JSON_KEYS))
            raise RelioraError(f"unknown key {key!r}{hint}; known: {known}", code="invalid_json")
        if value is None:
            continue
        name, appended = spec
        if name == "guards":  # objects, not strings (records/guards.py)
            from reliora_git.search.jsonio import guards_from_json

            try:
                guards = guards_from_json(value)
            except RelioraError as exc:
                raise RelioraError(exc.message, code="invalid_json") from None
            if appended:
                changes.append[name] = guards  # type: ignore[assignment]  # Guard items
            else:
                changes.replace[name] = guards
            continue
        if appended or name in ("tags", "paths", "asked_as"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise RelioraError(f"{key!r} must be a list of strings", code="invalid_json")
        elif not isinstance(value, str):
            raise RelioraError(f"{key!r} must be a string", code="invalid_json")
        (changes.append if appended else changes.replace)[name] = value
    return changes


def update(
    store: Store,
    id_or_prefix: str,
    changes: Changes,
    *,
    index: StoreIndex | None = None,
    today: dt.date | None = None,
    allow_existing: bool = False,
) -> Record:
    """Change the record ``id_or_prefix`` in place; the record as saved (see :func:`updated`)."""
    found = updated(
        store, id_or_prefix, changes, index=index, today=today, allow_existing=allow_existing
    )
    return found.record


@dataclass
class Updated:
    record: Record
    #: Paths given that the work tree has no file or folder for (saved all the same).
    path_warnings: list[PathWarning] = field(default_factory=list)
    #: New guards saved although they match the code (``--allow-existing``).
    guard_warnings: list[AcceptedMatches] = field(default_factory=list)


def updated(
    store: Store,
    id_or_prefix: str,
    changes: Changes,
    *,
    index: StoreIndex | None = None,
    today: dt.date | None = None,
    allow_existing: bool = False,
) -> Updated:
    """Change the record ``id_or_prefix`` in place: the record as saved, and path warnings.

    An invalid record can be repaired this way (SPEC.md §11): it is found by the id
    its file gives, and saved only when the result is valid. Paths given are saved as
    ``about`` reads them (operations/paths.py); ``supersedes`` ids may be prefixes.
    """
    from reliora_git.records.parse import render_record
    from reliora_git.records.roundtrip import normalize

    if changes.empty():
        raise RelioraError("nothing to change: give at least one field", code="usage")
    index = index or open_index(store)
    target = find_target(index, id_or_prefix)
    path = store.root.joinpath(*target.locator.split("/"))
    original = read_regular_file(path, target.locator)
    record = _readable(original, target)
    guards_before = list(record.guards)
    replace, append, warnings = _given(store, index, changes, target.record_id)
    for name, value in replace.items():
        if name not in REPLACED:
            raise RelioraError(f"{name!r} cannot be updated", code="usage")
        setattr(record, name, value)
    for name, items in append.items():
        if name not in APPENDED:
            raise RelioraError(f"{name!r} cannot be appended to", code="usage")
        had = getattr(record, name)
        if name in APPENDED_ONCE:
            items = _not_in(had, items)
        setattr(record, name, [*had, *items])
    record.extra_meta.update(changes.extra)
    if changes.status is not None:
        record.status = changes.status
    record.updated = (today or dt.datetime.now(dt.timezone.utc).date()).isoformat()
    drop_placeholders(record)
    normalize(record)
    validate_new(record)
    record.locator = record.locator or target.locator
    accepted: list[AcceptedMatches] = []
    if record.guards:  # only guards new in this update: refused, or marked accepted
        from reliora_git.operations.guards.existing import judge_existing

        accepted = judge_existing(store, record, guards_before, allow=allow_existing)
    text = render_record(record)
    refuse_secrets(store, record, text=text)
    check_reads_back(text, target.locator, record)
    replace_file(path, original, text, store)
    return Updated(record, warnings, accepted)


def _not_in(had: list[str], items: list[str]) -> list[str]:
    """``items`` that ``had`` lacks, each once, in order."""
    seen = set(had)
    new = []
    for item in items:
        if item not in seen:
            seen.add(item)
            new.append(item)
    return new


def _given(
    store: Store, index: StoreIndex, changes: Changes, own_id: str
) -> tuple[dict[str, object], dict[str, list[str]], list[PathWarning]]:
    """The changes as saved: paths as ``about`` reads them, ``supersedes`` as full ids."""
    from reliora_git.operations.lessons.targets import resolve_supersedes
    from reliora_git.operations.paths import saved_paths

    replace = dict(changes.replace)
    append = {name: list(items) for name, items in changes.append.items()}
    warnings: list[PathWarning] = []
    if isinstance(replace.get("paths"), list):
        replace["paths"], found = saved_paths(store, replace["paths"])  # type: ignore[arg-type]
        warnings += found
    if append.get("paths"):
        append["paths"], found = saved_paths(store, append["paths"])
        warnings += [w for w in found if w not in warnings]
    if append.get("supersedes"):
        append["supersedes"] = resolve_supersedes(index, append["supersedes"], own_id)
    return replace, append, warnings


def _readable(original: bytes, target: Target) -> Record:
    """The record in ``original``, read to be changed field by field.

    A file search skips may still be read well enough: then the update repairs it. What
    the reader cannot make sense of (broken YAML, a value of the wrong type) would be
    lost by rewriting the file from its fields, so that is left to ``reliora edit``.
    """
    from reliora_git.records.parse import parse_record

    hint = f"; repair it with `reliora edit {target.record_id}`"
    try:
        parsed = parse_record(decode_utf8(original, target.locator), target.locator)
    except RecordError as exc:
        raise RecordError(f"{exc.message}{hint}", path=exc.path, line=exc.line) from None
    if not target.valid:
        errors = [p for p in parsed.problems if p.severity == "error"]
        if errors:
            raise RecordError(
                f"{errors[0].message}{hint}", path=target.locator, line=errors[0].line
            )
        # A record without an id is named by its file: that is the id it gets.
        parsed.record.id = parsed.record.id or target.record_id
    return parsed.record


@dataclass(frozen=True)
class Editing:
    """A record being edited by hand (``reliora edit``): where it is and what was read."""

    record_id: str
    locator: str
    path: Path
    original: bytes


def begin_edit(store: Store, id_or_prefix: str, index: StoreIndex | None = None) -> Editing:
    """Start editing ``id_or_prefix``: an invalid record too, so that it can be repaired."""
    index = index or open_index(store)
    target = find_target(index, id_or_prefix)
    path = store.root.joinpath(*target.locator.split("/"))
    return Editing(target.record_id, target.locator, path, read_regular_file(path, target.locator))


def finish_edit(store: Store, editing: Editing, text: str) -> Record:
    """Save the edited text as written, if it is a valid record with the same id."""
    from reliora_git.records.parse import parse_record

    record = parse_record(text, editing.locator).record
    record.locator = editing.locator
    if record.id and record.id != editing.record_id:
        raise RelioraError(
            f"the id cannot change (it names the file and its feedback): keep "
            f"{editing.record_id!r}",
            code="invalid_record",
        )
    validate_new(record)  # a missing id is named here, with the line to add
    refuse_secrets(store, record, text=text)
    check_reads_back(text, editing.locator)
    replace_file(editing.path, editing.original, text, store)
    return record


def retire(store: Store, id_or_prefix: str, reason: str, **kwargs: object) -> Record:
    """Set ``status: retired`` and ``retired_reason`` (the record stays, out of search)."""
    if not reason.strip():
        raise RelioraError("--reason must say why the record is retired", code="usage")
    changes = Changes(extra={"retired_reason": reason.strip()}, status="retired")
    return update(store, id_or_prefix, changes, **kwargs)  # type: ignore[arg-type]
