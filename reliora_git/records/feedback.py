"""Feedback events as small Markdown files (SPEC.md §8). Pure: text ⇄ FeedbackEvent."""

from __future__ import annotations

import datetime as dt
from typing import Any

from reliora_git.records.errors import RecordError
from reliora_git.records.model import OUTCOMES, FeedbackEvent
from reliora_git.records.parse import scalar, split_front_matter, yaml_line


def parse_event(text: str, locator: str = "") -> FeedbackEvent:
    meta, body, _ = split_front_matter(text.removeprefix("\ufeff").replace("\r\n", "\n"), locator)
    fields = {key: scalar(meta.get(key)) for key in ("record", "outcome", "at", "author")}
    outcome = fields["outcome"]
    if outcome not in OUTCOMES:
        raise RecordError(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}", path=locator)
    if not fields["record"]:
        raise RecordError("missing 'record'", path=locator)
    return FeedbackEvent(
        record=fields["record"],
        outcome=outcome,
        at=fields["at"] or "",
        author=fields["author"],
        note=body.strip(),
        locator=locator,
    )


def render_event(event: FeedbackEvent) -> str:
    meta: dict[str, Any] = {"record": event.record, "outcome": event.outcome, "at": event.at}
    if event.author:
        meta["author"] = event.author
    front = "".join(yaml_line(k, v) for k, v in meta.items())
    note = f"\n{event.note.strip()}\n" if event.note.strip() else ""
    return f"---\n{front}---\n{note}"


def event_file_stem(now: dt.datetime, suffix: str) -> str:
    """``20261202T154500Z-3f9a1c``: sorts by time, and two writers never pick the same name."""
    return f"{now.astimezone(dt.timezone.utc):%Y%m%dT%H%M%SZ}-{suffix}"
