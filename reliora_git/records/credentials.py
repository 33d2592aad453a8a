"""Secrets in store files, found with Yelp's detect-secrets (docs/security.md).

Agents paste what they saw — environment dumps, connection strings, tokens —
and the store is committed and pushed with the code. Everything a record or
feedback event holds (:func:`scan_store_file`: its fields, unknown keys at any
depth, unknown sections, preamble, id, file name, whole text) is scanned line
by line with detect-secrets' plugins for specific credentials (AWS, GitHub,
GitLab, Slack, Stripe, private keys, JWTs, URLs with a password…); its entropy
plugins, which also flag the hashes and ids real notes are full of, only when
``secrets_entropy = true``. Its keyword plugin (``password = …`` in prose) and
public-IP plugin are never used.

The plugins run in secret_scanners.py (linear on hostile text, each loaded
only when a text could hold what it finds), which also knows where each secret
is (:func:`redact`).

A line holding detect-secrets' own ``pragma: allowlist secret`` is skipped:
an allowed false positive stays visible in the file. Findings never carry the
value, only a masked form (``…2f1c``, :func:`mask`).

Imported only by the paths that write, show or judge records, and each plugin
only when a text first needs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackEvent, Record
from reliora_git.records.secret_scanners import Hit, Scanners, line_hits, ready, scanners_for

_PRAGMA = re.compile(r"pragma:\s*allowlist[ -]secret", re.IGNORECASE)
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Finding:
    #: The field's JSON name, with the item for a list (``problems[2]``, 1-based).
    field: str
    #: The line within the field (or item), 1-based.
    line: int
    #: What detect-secrets calls it (``GitHub Token``), and that as a slug (``github-token``).
    kind: str
    masked: str

    @property
    def slug(self) -> str:
        return kind_slug(self.kind)

    def __str__(self) -> str:
        return f"{self.field}, line {self.line}: {self.kind} ({self.masked})"

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "line": self.line,
            "kind": self.slug,
            "description": self.kind,
            "masked": self.masked,
        }


class SecretFound(RelioraError):
    """A record or note holds a credential: nothing is saved (exit 2)."""

    def __init__(self, findings: Sequence[Finding], what: str = "the experience") -> None:
        # One finding is named in the message itself; several are counted there and
        # listed one a line (details), so that none is reported twice.
        if len(findings) == 1:
            found, it, real, each = f"a secret: {findings[0]}", "it", "it was", "its line"
        else:
            found, it, real, each = f"{len(findings)} secrets", "them", "they were", "each line"
        super().__init__(
            f"{what} holds {found}; remove {it} (rotate {it} if {real} real), or mark a "
            f"false positive with `pragma: allowlist secret` on {each}",
            code="secret_found",
        )
        self.findings = list(findings)

    @property
    def details(self) -> list[str]:
        if len(self.findings) == 1:
            return []
        return [f"  {finding}" for finding in self.findings]

    def to_json(self) -> dict[str, object]:
        document = super().to_json()
        error = document["error"]
        assert isinstance(error, dict)
        error["findings"] = [finding.to_json() for finding in self.findings]
        return document


def kind_slug(kind: str) -> str:
    return _NOT_SLUG.sub("-", kind.lower()).strip("-")


def mask(value: str) -> str:
    """``…2f1c``: the last 4 characters of a value of 12 or more, nothing of a shorter one.

    Never more than 4 characters of a secret in total: with the kind beside it
    (``GitHub Token``) they are enough to tell which one to rotate, never enough
    to use or to guess it; a short password shows none.
    """
    value = value.strip()
    if len(value) < 12:
        return "…"
    return f"…{value[-4:]}"


def scan_fields(
    fields: Iterable[tuple[str, str]], *, entropy: bool = False, allowed: Iterable[str] = ()
) -> list[Finding]:
    """The findings in (field name, text) pairs, in field order, then line order.

    ``allowed`` are kinds (slugs, see :func:`kind_slug`) not to report.
    """
    return [finding for finding, _ in _scan(fields, entropy, allowed)]


def redact(text: str, *, entropy: bool = False) -> str:
    """``text`` with every secret found in it replaced by its mask (:func:`mask`).

    For what is shown rather than judged (``review``'s comment): a line marked
    ``pragma: allowlist secret`` is redacted too, and no kind is ever allowed —
    hiding a false positive costs a reader little, printing a real one costs a
    rotation. Line endings are kept; text without a secret comes back unchanged.
    """
    return _redact(text, scanners_for(text, entropy))


def _redact(text: str, scanners: Scanners) -> str:
    """:func:`redact` with scanners chosen for ``text`` (or for more text holding it)."""
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029")
        hits = line_hits(scanners, body) if body.strip() else []
        if not hits:
            out.append(line)
            continue
        cursor = 0
        for start, end, masked in _merged(hits):
            out.append(body[cursor:start])
            out.append(masked)
            cursor = end
        out.append(line[cursor:])
    return "".join(out)


#: Keys of a record's JSON that are not text a person wrote (never masked).
_UNMASKED = frozenset({"id", "locator", "status", "confidence", "created", "updated", "guards"})


def masked_record(data: dict[str, Any]) -> dict[str, Any]:
    """A record's JSON with every secret in its text masked (:func:`redact`): what every read
    of the store shows (show, list, the push, the view, MCP). ``check`` and the hook still
    report the file; this keeps a record that arrived holding a secret from being shown or
    pushed verbatim. ``data`` itself when nothing is masked."""
    texts = {key: value for key, value in data.items() if key not in _UNMASKED}
    # Chosen once for the record, not for each field.
    scanners = ready() or scanners_for(_all_text(texts.values()))
    changed: dict[str, Any] = {}
    for key, value in texts.items():
        if isinstance(value, str) and value:
            shown = _redact(value, scanners)
            if shown != value:
                changed[key] = shown
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            items = [_redact(v, scanners) for v in value]
            if items != value:
                changed[key] = items
    return {**data, **changed} if changed else data


def mask_record(record: Record) -> None:
    """``record`` (as parsed from its file) with every secret in its text masked, as
    :func:`masked_record` masks the JSON every other read gets (``show`` parses the file)."""
    texts = [getattr(record, name) for name in _TEXTS]
    lists = [getattr(record, name) for name in _LISTS]
    sections = [text for _, text in record.extra_sections]
    scanners = ready() or scanners_for(_all_text([*texts, *lists, sections]))
    for name, value in zip(_TEXTS, texts, strict=True):
        if value:
            setattr(record, name, _redact(value, scanners))
    for name, items in zip(_LISTS, lists, strict=True):
        setattr(record, name, [_redact(item, scanners) for item in items])
    record.extra_sections = [
        (heading, _redact(text, scanners)) for heading, text in record.extra_sections
    ]


#: The text fields and the lists of text of a :class:`Record` that are masked.
_TEXTS = ("title", "project_context", "task", "solution", "why_it_worked", "applicability",
          "verification")  # fmt: skip
_LISTS = ("tags", "problems", "failed_attempts", "warnings", "asked_as")


def _all_text(values: Iterable[Any]) -> str:
    """The strings of ``values`` (and of the lists among them) as one text, to choose the
    scanners once for all of them: a plugin one of them needs is in it."""
    parts: list[str] = []
    for value in values:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
    return "\n".join(parts)


def _merged(hits: Iterable[Hit]) -> list[tuple[int, int, str]]:
    """Spans to withhold, overlapping ones joined (then masked as ``…``: whose 4 to show?)."""
    spans: list[tuple[int, int, str]] = []
    for hit in sorted(hits, key=lambda hit: (hit.start, -hit.end)):
        if spans and hit.start < spans[-1][1]:
            start, end, _ = spans[-1]
            if hit.end > end:
                spans[-1] = (start, hit.end, "…")
            continue
        spans.append((hit.start, hit.end, mask(hit.value)))
    return spans


def record_fields(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The text fields of a record as JSON (``record_to_json``), lists item by item."""
    fields: list[tuple[str, str]] = []
    for name, value in data.items():
        if name in ("locator", "id", "created", "updated", "status", "confidence"):
            continue
        if isinstance(value, str):
            fields.append((name, value))
        elif isinstance(value, list):
            fields.extend(
                (f"{name}[{n}]", item) for n, item in enumerate(value, 1) if isinstance(item, str)
            )
        elif isinstance(value, dict):
            fields.extend((f"{name}.{k}", str(v)) for k, v in value.items())
    return fields


def other_record_fields(record: Record) -> list[tuple[str, str]]:
    """What :func:`record_fields` leaves out: the id, the front-matter keys this
    version does not know (``retired_reason``…) with every string in them at any
    depth, keys too, the sections it does not know, and the text before the first
    heading. A secret in any of them is as pushed as one in the solution."""
    fields: list[tuple[str, str]] = [("id", record.id)] if record.id else []
    for key, value in record.extra_meta.items():
        fields.extend(_strings_of(str(key), value))
    fields.extend((f"section {heading}", text) for heading, text in record.extra_sections)
    if record.preamble:
        fields.append(("preamble", record.preamble))
    return fields


def scan_store_file(
    locator: str,
    text: str | None,
    fields: Iterable[tuple[str, str]] = (),
    *,
    entropy: bool = False,
    allowed: Iterable[str] = (),
) -> list[Finding]:
    """Every secret a store file (record or feedback event) holds, each reported once.

    First ``fields`` — the parsed fields, named as the user knows them
    (``solution, line 2``). Then what no field shows: the file name
    (``locator``), every line of ``text`` (named by its front-matter key or
    section, ``line`` then being the line of the file), and every string of its
    front matter as YAML reads it — escapes (``\\x67hp_…``) and continuation
    lines spell values no single line shows. ``text`` None: the file is not
    written yet, ``fields`` are all it will hold.
    """
    seen: set[tuple[str, str]] = set()
    found: list[Finding] = []
    fields = list(fields)
    # Chosen once for everything the file holds (the strings YAML reads choose their own).
    whole = ready(entropy) or scanners_for(
        _all_text([*(v for _, v in fields), locator, text or ""]), entropy
    )

    def add(named: Iterable[tuple[str, str]], numbered_from: int = 1, chosen: bool = True) -> None:
        scanners = whole if chosen else None
        for finding, value in _scan(named, entropy, allowed, numbered_from, scanners):
            if (finding.kind, value) not in seen:
                seen.add((finding.kind, value))
                found.append(finding)

    add(fields)
    if locator:
        add([("file name", locator)])
    if text is not None:
        # A line of the file that a field held as it is (or as a list item, ``- `` before
        # it: a non-word character and a space that no expression needs) found what it
        # holds already: scanning the file costs little more than the fields.
        scanned = {line.strip() for _, value in fields for line in value.splitlines()}
        hidden = False
        for label, number, line in _labelled_lines(text):
            bare = line.strip()
            if label.startswith("front matter") and _MAY_HIDE.match(line):
                hidden = True
            if bare in scanned or (bare.startswith("- ") and bare[2:].strip() in scanned):
                continue
            scanned.add(bare)
            add([(label, line)], numbered_from=number)
        if hidden:
            strings = [
                (name, value)
                for name, value in _front_matter_strings(text, locator)
                if any(line.strip() not in scanned for line in value.splitlines())
            ]
            add(strings, chosen=False)
    return found


#: A front-matter line whose value YAML may read otherwise than it is written: an
#: escape (``"\\x67hp_…"``) or a continued value (an indented line that is neither a
#: list item nor a nested key). Only then is the front matter read as YAML to scan
#: its strings — a millisecond a file, here where ``check`` scans every one.
_MAY_HIDE = re.compile(r".*\\|[ \t]+(?![ \t]*(?:-[ \t]|[\w.-]+:(?:[ \t]|$)))")


def event_fields(event: FeedbackEvent) -> list[tuple[str, str]]:
    """A feedback event's fields, as :func:`scan_store_file` names them."""
    fields = [("note", event.note), ("record", event.record), ("at", event.at)]
    if event.author:
        fields.append(("author", event.author))
    return fields


def scan_event_file(
    locator: str, text: str | None, event: FeedbackEvent | None = None, *, entropy: bool = False
) -> list[Finding]:
    """Every secret a feedback file holds: its name and every line of ``text``.

    Named as its fields are (``author, line 1``, ``note, line 2``: lines counted
    within the key's value and within the note), so that a note reads as it did
    when only notes were scanned. ``check`` scans every feedback file, so YAML,
    at about a millisecond an event here, is read only when a line could hide
    a value from a line scan: a backslash (an escape in a double-quoted string)
    or an indented line (a value continued). ``event`` (it as read) is scanned
    when there is no text.
    """
    seen: set[tuple[str, str]] = set()
    found: list[Finding] = []

    def add(named: Iterable[tuple[str, str]], scanners: Scanners | None = None) -> None:
        for finding, value in _scan(named, entropy, (), 1, scanners):
            if (finding.kind, value) not in seen:
                seen.add((finding.kind, value))
                found.append(finding)

    if text is None:
        add(event_fields(event) if event is not None else [])
    else:
        whole = scanners_for(text, entropy)  # once for the file: each part is in it
        hidden = False
        for label, _, lines in _labelled_parts(text):
            if label == "preamble":  # an event's body is its note, read stripped
                label = "note"
                while lines and not lines[0].strip():
                    lines = lines[1:]
            elif any(_MAY_HIDE.match(line) for line in lines):
                hidden = True
            add([(label.removeprefix("front matter "), "\n".join(lines))], whole)
        if hidden:
            add(_front_matter_strings(text, locator))
    if locator:
        add([("file name", locator)])
    return found


def _scan(
    fields: Iterable[tuple[str, str]],
    entropy: bool,
    allowed: Iterable[str],
    first_line: int = 1,
    scanners: Scanners | None = None,
) -> list[tuple[Finding, str]]:
    """(finding, its value) in (field name, text) pairs; lines numbered from ``first_line``.

    ``scanners``: chosen for a text holding every field's (else for the fields here)."""
    skip = {kind_slug(kind) for kind in allowed}
    fields = list(fields)
    if scanners is None:
        scanners = ready(entropy) or scanners_for(_all_text(text for _, text in fields), entropy)
    found: list[tuple[Finding, str]] = []
    for name, text in fields:
        for number, line in enumerate(text.splitlines(), start=first_line):
            if not line.strip() or _PRAGMA.search(line):
                continue
            seen: set[tuple[str, str]] = set()
            for hit in line_hits(scanners, line):
                key = (hit.kind, hit.value)
                if key in seen or kind_slug(hit.kind) in skip:
                    continue
                seen.add(key)
                found.append((Finding(name, number, hit.kind, mask(hit.value)), hit.value))
    return found


def _strings_of(name: str, value: Any, depth: int = 0) -> list[tuple[str, str]]:
    """Every string in a YAML value, keys included, named by where it is (``key.sub[2]``)."""
    if depth > 64:  # parse.py refuses alias bombs; nesting this deep is no record
        return []
    if isinstance(value, dict):
        found: list[tuple[str, str]] = []
        for key, item in value.items():
            found.append((f"{name} (a key)", str(key)))
            found.extend(_strings_of(f"{name}.{key}", item, depth + 1))
        return found
    if isinstance(value, (list, tuple)):
        return [
            pair
            for n, item in enumerate(value, 1)
            for pair in _strings_of(f"{name}[{n}]", item, depth + 1)
        ]
    if value is None:
        return []
    return [(name, value if isinstance(value, str) else str(value))]


def _front_matter_strings(text: str, locator: str) -> list[tuple[str, str]]:
    """The strings of ``text``'s front matter as YAML reads them (none if it does not read)."""
    from reliora_git.records.parse import split_front_matter

    try:
        meta, _, _ = split_front_matter(text.removeprefix("\ufeff").replace("\r\n", "\n"), locator)
    except RecordError:
        return []
    return [pair for key, value in meta.items() for pair in _strings_of(str(key), value)]


#: The opening of a heading line; what follows is cut with str methods, not a lazy
#: group before a trailing run (``(.*?)[ \t#]*$`` backtracks quadratically on a long
#: run of spaces or ``#`` that does not end the line).
_SECTION_MARK = re.compile(r"#{1,6}[ \t]+")
_NOT_A_KEY_START = frozenset("#:'\"")


def _front_key(line: str) -> str | None:
    """``key`` of a ``key: value`` line of front matter, else None. Linear in the line."""
    head, colon, _ = line.partition(":")
    if not colon or not head or head[0].isspace() or head[0] in _NOT_A_KEY_START:
        return None
    return head.rstrip(" \t")


def _section_heading(line: str) -> str | None:
    """The heading of a ``## Heading`` line, else None. Linear in the line."""
    mark = _SECTION_MARK.match(line)
    return None if mark is None else line[mark.end() :].rstrip(" \t#")


def _labelled_parts(text: str) -> Iterable[tuple[str, int, list[str]]]:
    """(part, its first line number, its lines): :func:`_labelled_lines` grouped."""
    part: tuple[str, int, list[str]] | None = None
    for label, number, line in _labelled_lines(text):
        if part is None or part[0] != label:
            if part is not None:
                yield part
            part = (label, number, [])
        part[2].append(line)
    if part is not None:
        yield part


def _labelled_lines(text: str) -> Iterable[tuple[str, int, str]]:
    """(what part of the file, line number, line) for each line of a store file.

    The part is ``front matter KEY``, ``section HEADING``, or ``preamble`` (body
    text before the first heading): enough to find the line, which is what counts.
    """
    label = "preamble"
    in_front = False
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        if number == 1 and line.rstrip() == "---":
            in_front, label = True, "front matter"
            continue
        if in_front:
            if line.rstrip() == "---":
                in_front, label = False, "preamble"
                continue
            key = _front_key(line)
            if key is not None:
                label = f"front matter {key}"
        else:
            heading = _section_heading(line)
            if heading is not None:
                label = f"section {heading}"
        yield label, number, line
