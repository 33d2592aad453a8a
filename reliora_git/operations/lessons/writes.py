"""Writing lessons: ``record`` and ``feedback`` as plain functions (CLI and MCP alike),
and the checks every writer shares: secrets refused, text that reads back as written.

The writers import git and PyYAML (parse, feedback) where they run.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliora_git.records.errors import RelioraError
from reliora_git.records.model import OUTCOMES, FeedbackEvent, Record
from reliora_git.records.validate import drop_placeholders, validate
from reliora_git.search.duplicates import (
    SimilarityWarning,
    find_similar,
)
from reliora_git.storage.config import load_config
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import (
    MAX_RECORD_BYTES,
    Store,
    check_id,
    decode_utf8,
    new_id,
    write_new,
)

if TYPE_CHECKING:
    from reliora_git.operations.guards.existing import AcceptedMatches
    from reliora_git.operations.paths import PathWarning

#: Fresh random names tried when a concurrent writer took the same one (chance ~1e-7 each).
_NAME_ATTEMPTS = 5


@dataclass
class Saved:
    record: Record
    warnings: list[SimilarityWarning] = field(default_factory=list)
    #: Paths saved although the work tree has no such file or folder.
    path_warnings: list[PathWarning] = field(default_factory=list)
    #: New guards saved although they match the code (``--allow-existing``).
    guard_warnings: list[AcceptedMatches] = field(default_factory=list)

    def warnings_json(self) -> list[dict[str, Any]]:
        """``record --json``'s warnings (and MCP's): paths, guards, then similar records."""
        return (
            [w.to_json() for w in self.path_warnings]
            + [w.to_json() for w in self.guard_warnings]
            + [w.to_json() for w in self.warnings]
        )


def prepare(store: Store, new: Record) -> Record:
    """Give ``new`` an id, date, status and author where it has none, then validate it.

    Its fields are made what the store keeps (records/roundtrip.py: ends trimmed).
    """
    from reliora_git.gitrepo import git
    from reliora_git.records.roundtrip import normalize

    new.id = new.id or new_id(new.title)
    new.created = new.created or _utc_now().date().isoformat()
    new.status = new.status or "active"
    drop_placeholders(new)
    if new.author is None:
        new.author = git.user_name(store.root)
    normalize(new)
    validate_new(new)
    return new


def record(
    store: Store,
    new: Record,
    *,
    stage: bool = False,
    index: StoreIndex | None = None,
    allow_secrets: Iterable[str] = (),
    allow_existing: bool = False,
) -> Saved:
    """Save ``new`` (see :func:`prepare`) and return the existing records it resembles.

    A record holding a secret is refused (:class:`~reliora_git.records.credentials.SecretFound`)
    unless its kind is in ``allow_secrets`` (``record --allow-secret KIND``).
    """
    from reliora_git.gitrepo import git
    from reliora_git.operations.paths import saved_paths
    from reliora_git.records.parse import render_record

    generated_id = not new.id
    # Paths as `about` reads them (./x, x//y, absolute in the work tree → top-relative).
    new.paths, path_warnings = saved_paths(store, new.paths)
    prepare(store, new)
    refuse_secrets(store, new, allow_secrets)
    accepted: list[AcceptedMatches] = []
    if new.guards:  # a guard that already matches the code: refused, or marked accepted
        from reliora_git.operations.guards.existing import judge_existing

        accepted = judge_existing(store, new, allow=allow_existing)
    index = index or open_index(store)
    if index.has_id(new.id):
        raise RelioraError(f"an experience with id {new.id!r} already exists", code="exists")
    if new.supersedes:  # prefixes to full ids, like every command that takes an id
        from reliora_git.operations.lessons.targets import resolve_supersedes

        new.supersedes = resolve_supersedes(index, new.supersedes, new.id)
    path = store.experiences / f"{new.id}.md"
    new.locator = store.locator(path)
    text = render_record(new)
    check_reads_back(text, new.locator, new)
    threshold = load_config(store).duplicate_overlap
    # The records it replaces are meant to be like it: no duplicate warning about them.
    warnings = [
        warning
        for warning in find_similar(new, index, duplicate_overlap=threshold)
        if warning.id not in new.supersedes
    ]
    for attempt in range(_NAME_ATTEMPTS):
        try:
            write_new(path, text, store)
            break
        except RelioraError as exc:
            # A concurrent writer saved the same generated id first: draw another suffix.
            if exc.code != "exists" or not generated_id or attempt == _NAME_ATTEMPTS - 1:
                raise
            new.id = new_id(new.title)
            path = store.experiences / f"{new.id}.md"
            new.locator = store.locator(path)
            text = render_record(new)
            check_reads_back(text, new.locator, new)
    if stage:
        git.stage(store.root, [path])
    return Saved(new, warnings, path_warnings, accepted)


def refuse_secrets(
    store: Store, new: Record, allowed: Iterable[str] = (), text: str | None = None
) -> None:
    """Raise SecretFound when anything ``new`` holds is a credential (docs/security.md):
    its fields, unknown keys and sections, preamble, id and file name, and ``text``
    (the file about to be written, when known)."""
    from reliora_git.records.credentials import (
        SecretFound,
        other_record_fields,
        record_fields,
        scan_store_file,
    )
    from reliora_git.search.jsonio import record_to_json

    entropy = load_config(store).secrets_entropy
    fields = record_fields(record_to_json(new)) + other_record_fields(new)
    locator = new.locator or (store.locator(store.experiences / f"{new.id}.md") if new.id else "")
    findings = scan_store_file(locator, text, fields, entropy=entropy, allowed=allowed)
    if findings:
        raise SecretFound(findings)


def refuse_event_secrets(store: Store, event: FeedbackEvent, text: str) -> None:
    """Raise SecretFound when a feedback event about to be written holds a credential
    anywhere: note, author (git's user name), record, file name, text."""
    from reliora_git.records.credentials import SecretFound, event_fields, scan_store_file

    entropy = load_config(store).secrets_entropy
    findings = scan_store_file(event.locator, text, event_fields(event), entropy=entropy)
    if findings:
        raise SecretFound(findings, "the feedback event")


def check_reads_back(text: str, locator: str, intended: Record | None = None) -> None:
    """Refuse to save what the store would then skip or call invalid, or read otherwise.

    The exact bytes about to be written go through the reader ``check`` and
    ``search`` use (size limit, strict UTF-8, parsing, validation): a record that
    saves but never reads back is a lesson the user believes stored and nobody
    will find (e.g. a 2 MB log pasted as the solution). With ``intended`` (the
    record rendered, see records/roundtrip.py) every field must read back as it
    is there: text never moves silently from one field to another.
    """
    from reliora_git.storage.catalog import read_entry
    from reliora_git.storage.values import entry_problems

    data = _within_limit(text, "experience")
    entry = read_entry(locator, decode_utf8(data, locator))
    errors = [message for severity, message, _ in entry_problems(entry) if severity == "error"]
    if errors or not entry.usable:
        reason = errors[0] if errors else entry.first_error().message
        raise RelioraError(
            f"the experience would not read back as a record: {reason}", code="invalid_record"
        )
    if intended is not None and entry.record is not None:
        from reliora_git.records.roundtrip import first_difference

        differs = first_difference(intended, entry.record)
        if differs is not None:
            raise RelioraError(
                f"the field {differs} would not read back as given (a line in it reads as "
                "record structure); nothing was saved",
                code="invalid_record",
            )


def _check_event_reads_back(text: str, locator: str) -> None:
    """The same for a feedback event: its note must not make it unreadable."""
    from reliora_git.storage.values import event_value

    data = _within_limit(text, "feedback event")
    value = event_value(locator, decode_utf8(data, locator))
    if value[0] != "ok":
        raise RelioraError(
            f"the feedback event would not read back: {value[1]}", code="invalid_feedback"
        )


def _within_limit(text: str, what: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) > MAX_RECORD_BYTES:
        raise RelioraError(
            f"the {what} would be {len(data) / 1024:.0f} KiB, over the "
            f"{MAX_RECORD_BYTES // 1024} KiB a store file may have, so it would not read "
            "back; nothing was saved (keep long logs in a file and name it)",
            code="too_large",
        )
    return data


def validate_new(new: Record) -> None:
    """Raise a usage error naming the first thing that keeps ``new`` from being saved."""
    errors = [p for p in validate(new) if p.severity == "error"]
    if errors:
        raise RelioraError(
            f"the experience is not valid: {errors[0].message}", code="invalid_record"
        )


def feedback(
    store: Store,
    id_or_prefix: str,
    outcome: str,
    note: str = "",
    index: StoreIndex | None = None,
) -> FeedbackEvent:
    from reliora_git.gitrepo import git
    from reliora_git.records.feedback import event_file_stem, render_event

    if outcome not in OUTCOMES:
        raise RelioraError(
            f"outcome {outcome!r} must be one of {', '.join(OUTCOMES)}", code="invalid_outcome"
        )
    check_id(id_or_prefix)  # before the store is read at all
    if note:
        from reliora_git.records.credentials import SecretFound, scan_fields

        entropy = load_config(store).secrets_entropy
        findings = scan_fields([("note", note)], entropy=entropy)
        if findings:
            raise SecretFound(findings, "the feedback note")
    index = index or open_index(store)
    target_id, _ = index.identity(index.resolve(id_or_prefix))
    author = git.user_name(store.root)
    for attempt in range(_NAME_ATTEMPTS):
        now = _utc_now()
        # target_id passed validation, so this path stays inside feedback/ (and
        # write_new checks that again before it creates anything).
        path = store.feedback / target_id / f"{event_file_stem(now, os.urandom(3).hex())}.md"
        event = FeedbackEvent(
            record=target_id,
            outcome=outcome,
            at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            author=author,
            note=note,
            locator=store.locator(path),
        )
        text = render_event(event)
        refuse_event_secrets(store, event, text)
        _check_event_reads_back(text, event.locator)
        try:
            write_new(path, text, store)
        except RelioraError as exc:
            # Another writer took the same second and random suffix: pick a new name.
            if exc.code != "exists" or attempt == _NAME_ATTEMPTS - 1:
                raise
            continue
        return event
    raise AssertionError("unreachable")


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)
