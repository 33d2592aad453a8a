"""Strict validation of a parsed record (SPEC.md §3). Pure: a Record in, problems out."""

from __future__ import annotations

import re
from collections.abc import Mapping

from reliora_git.records.model import (
    CONFIDENCES,
    MAX_ASKED,
    MAX_ASKED_CHARS,
    STATUSES,
    Problem,
    Record,
)

ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")
#: Caps on the fields every brief and result shows (docs/record-format.md): a record from a pull
#: request must not fill an agent's context, or push every other lesson out of a brief, with
#: one huge title or list.
MAX_TITLE = 200
MAX_TAGS = 20
MAX_TAG = 40
MAX_PATHS = 50


def is_valid_id(value: str) -> bool:
    return ID_RE.fullmatch(value) is not None


def validate(record: Record, lines: Mapping[str, int] | None = None) -> list[Problem]:
    """Everything wrong with ``record`` on its own (store-wide checks live in the API).

    ``lines`` maps front-matter keys to their line in the file, so that a finding
    about a key can name its line.
    """
    problems: list[Problem] = []
    lines = lines or {}

    def error(message: str, key: str = "") -> None:
        problems.append(Problem("error", message, lines.get(key)))

    if not record.id:
        error("missing required field 'id'" + _id_hint(record.locator))
    elif not is_valid_id(record.id):
        error(f"id {record.id!r} must match [a-z0-9][a-z0-9-]{{0,79}}", "id")
    if not record.title.strip():
        error("missing required field 'title'")
    elif len(record.title) > MAX_TITLE:
        error(f"title is {len(record.title)} characters; at most {MAX_TITLE}", "title")
    if len(record.tags) > MAX_TAGS:
        error(f"{len(record.tags)} tags; at most {MAX_TAGS}", "tags")
    long_tags = [tag for tag in record.tags if len(tag) > MAX_TAG]
    if long_tags:
        error(f"a tag of {len(long_tags[0])} characters; at most {MAX_TAG} each", "tags")
    if len(record.paths) > MAX_PATHS:
        error(f"{len(record.paths)} paths; at most {MAX_PATHS}", "paths")
    if not record.task.strip() and not record.problems:
        error("needs a '## Task' or a '## Problems' section")
    if not record.solution.strip():
        error("needs a '## Solution' section")
    if record.confidence is not None and record.confidence not in CONFIDENCES:
        error(
            f"confidence {record.confidence!r} must be one of {', '.join(CONFIDENCES)}",
            "confidence",
        )
    if record.status not in STATUSES:
        error(f"status {record.status!r} must be one of {', '.join(STATUSES)}", "status")
    for other in record.supersedes:
        if not is_valid_id(other):
            error(f"supersedes names {other!r}, which is not a valid id", "supersedes")
    for path in record.paths:
        if not is_repo_path(path):
            error(
                f"paths names {path!r}, which is not a relative path inside the repository "
                "(no leading '/', no '..', no backslash)",
                "paths",
            )
    problems.extend(_asked_as_problems(record))
    if record.guards:
        from reliora_git.records.guards import guard_problems  # compiles with RE2: only then

        problems.extend(guard_problems(record.guards, lines.get("guards")))
    return problems


def is_placeholder(text: str) -> bool:
    """Text a draft left for its writer to replace: it starts with "…" (``history``,
    ``record --from-commit`` and the end-of-turn ask write their placeholders so)."""
    return text.strip().startswith("…")


def filled_asked_as(lines: list[str]) -> list[str]:
    """The asked-as lines that are not placeholders left unfilled: placeholder words saved as
    content would make every draft's record match every task that says "ask" or "lesson"."""
    return [line for line in lines if not is_placeholder(line)]


#: Fields a draft may leave as a placeholder: dropped when saved (then validation names a
#: required one that is missing, rather than saving "… what the change does" as the lesson).
PLACEHOLDER_TEXTS = ("title", "task", "solution", "why_it_worked", "applicability", "verification")
PLACEHOLDER_LISTS = ("problems", "failed_attempts", "warnings", "asked_as")


def drop_placeholders(record: Record) -> None:
    """Leave out what a draft's writer did not fill in (see :func:`is_placeholder`)."""
    for name in PLACEHOLDER_TEXTS:
        if is_placeholder(getattr(record, name)):
            setattr(record, name, "")
    for name in PLACEHOLDER_LISTS:
        setattr(record, name, [item for item in getattr(record, name) if not is_placeholder(item)])


def _asked_as_problems(record: Record) -> list[Problem]:
    """Warnings on asked-as lines the ranking does not read whole (never an invalid record:
    the lines are optional, and the rest of the lesson stands without them)."""
    found = []
    if len(record.asked_as) > MAX_ASKED:
        found.append(
            Problem(
                "warning",
                f"{len(record.asked_as)} asked-as lines; the ranking reads the first {MAX_ASKED}",
            )
        )
    long = [line for line in record.asked_as[:MAX_ASKED] if len(line) > MAX_ASKED_CHARS]
    if long:
        found.append(
            Problem(
                "warning",
                f"an asked-as line of {len(long[0])} characters; the ranking reads the first "
                f"{MAX_ASKED_CHARS} of each (one sentence, as a person would ask)",
            )
        )
    return found


def _id_hint(locator: str) -> str:
    """What to do about a missing id: the file name usually says what it would be."""
    stem = locator.rsplit("/", 1)[-1].removesuffix(".md")
    if is_valid_id(stem):
        return f"; add the line `id: {stem}` to the front matter"
    return "; add an `id:` line, or save the file with `reliora record --from-file FILE`"


def is_repo_path(value: str) -> bool:
    """A repo-relative POSIX path that cannot climb out of the repository when joined to it.

    Record paths name code; whoever later joins them to the work tree (review, hooks)
    must never be led outside it by a record from a pull request.
    """
    if not value or "\x00" in value or "\\" in value or value.startswith("/"):
        return False
    if len(value) >= 2 and value[1] == ":":  # C:foo on Windows
        return False
    return ".." not in value.split("/")
