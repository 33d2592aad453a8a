"""Feedback events as small Markdown files (SPEC.md §8). Pure: text ⇄ FeedbackEvent."""

from __future__ import annotations

import datetime as dt
from typing import Any

from reliora_git.records.errors import RecordError
from reliora_git.records.model import OUTCOMES, FeedbackEvent, Problem
from reliora_git.records.parse import scalar, split_front_matter, yaml_line
from reliora_git.records.text import describe_invisible, has_invisible


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


def invisible_text_problems(text: str, locator: str = "") -> list[Problem]:
    """A warning when a feedback file holds invisible characters, naming the first line.

    As for records (records/parse.py), a YAML escape counts too: its fields are
    read when the front matter holds a backslash (``author: "\\U000E0049"``).
    Linear: one character-class search per line.
    """
    if has_invisible(text):
        lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if has_invisible(line)]
        found, line = "\n".join(line for _, line in lines), lines[0][0]
    elif "\\" in text:
        try:
            event = parse_event(text, locator)
        except RecordError:
            return []
        found, line = "\n".join((event.record, event.at, event.author or "")), 0
        if not has_invisible(found):
            return []
    else:
        return []
    hidden = describe_invisible(found)
    message = f"holds {hidden}, which people do not see but agents read: remove them"
    return [Problem("warning", message, line or None)]
