"""A :class:`~reliora_git.operations.review.branch.Review` as Markdown, JSON or text (pure).

The Markdown is meant to be posted as a pull-request comment by CI, so record
text is untrusted input to a web page: every character that Markdown or HTML
could act on is escaped, and ``@`` is followed by a zero-width space so that
nobody is notified by a record. The comment stays under 60 KB.

Every format starts from :func:`shown_review`, the one withholding step: each
string of the review (titles, ids, file names, other records' titles in
warnings, feedback authors and notes, error messages…) has its secrets masked
(records/credentials.py ``redact``) and its invisible characters written as
``<U+E0049>`` (records/text.py). It walks the review's data generically, so a
field added later is withheld too, without anyone remembering to.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable
from typing import Any

from reliora_git.interfaces import context_output
from reliora_git.interfaces.output import clean, one_line, related_line, shown_warnings
from reliora_git.operations.guards.added import GuardChange
from reliora_git.operations.guards.nouns import GuardFinding
from reliora_git.operations.review.branch import KIND_ORDER, RecordChange, Review, Side
from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackEvent
from reliora_git.records.text import escape_invisible
from reliora_git.search.jsonio import event_to_json, problem_to_json

#: GitHub refuses comments over 65,536 characters; stay well below in bytes.
MAX_MARKDOWN_BYTES = 60_000
#: The first line of the comment, so CI can find and update its own (sticky) comment.
COMMENT_MARKER = "<!-- reliora-review -->"
MAX_TEXT = 300
MAX_ITEMS = 5
MAX_GUARD_FINDINGS = 50
MAX_GUARD_CHANGES = 20
#: A pattern is shown whole (records/guards.py refuses longer ones).
MAX_PATTERN_SHOWN = 600
FORMATS = ("markdown", "json", "text", "github")

_MARKDOWN_PUNCTUATION = set("\\`*_{}[]()#+-.!|~")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "@&#8203;"}
_SPACES = re.compile(r"\s+")
#: Whitespace that would end a line (all but space and tab).
_BREAKS = re.compile(r"[^\S \t]")


# --- the one withholding step ---------------------------------------------------------------

#: Fields that come from git itself, not from the change: kept as they are (a commit's
#: 40 hex digits would otherwise be masked as a high-entropy string).
_FROM_GIT = frozenset({(Side, "commit")})


def shown_review(review: Review) -> Review:
    """``review`` as it may be shown to anyone: every string with its secrets masked and
    its invisible characters escaped. Each renderer below starts here."""
    from reliora_git.records.credentials import redact

    seen: dict[str, str] = {}  # the same ids, kinds and names recur: scan each once

    def shown(text: str) -> str:
        if text not in seen:
            seen[text] = escape_invisible(redact(text, entropy=review.entropy))
        return seen[text]

    walked = _walk(review, shown)
    assert isinstance(walked, Review)
    return walked


def _walk(value: Any, shown: Callable[[str], str]) -> Any:
    """A copy of ``value`` with ``shown`` applied to every string in it, keys included."""
    if isinstance(value, str):
        return shown(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, list):
        return [_walk(item, shown) for item in value]
    if isinstance(value, tuple):
        return tuple(_walk(item, shown) for item in value)
    if isinstance(value, dict):
        return _walk_mapping(value, shown)
    if isinstance(value, RelioraError):
        return _walk_error(value, shown)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        walked = copy.copy(value)
        for item in dataclasses.fields(value):
            if (type(value), item.name) not in _FROM_GIT:
                # object.__setattr__: events, problems and warnings are frozen dataclasses.
                object.__setattr__(walked, item.name, _walk(getattr(value, item.name), shown))
        return walked
    # A YAML date in a record's JSON, or a type added later: shown as text, never as is.
    return shown(str(value))


def _walk_mapping(mapping: dict[Any, Any], shown: Callable[[str], str]) -> dict[Any, Any]:
    walked: dict[Any, Any] = {}
    for key, item in mapping.items():
        new_key, new_item = _walk(key, shown), _walk(item, shown)
        earlier = walked.get(new_key)
        if isinstance(earlier, list) and isinstance(new_item, list):
            # Two record ids that differ only in a secret mask alike: keep both's events.
            walked[new_key] = earlier + new_item
        elif new_key not in walked:
            walked[new_key] = new_item
    return walked


def _walk_error(error: RelioraError, shown: Callable[[str], str]) -> RelioraError:
    """A copy of ``error`` (message, path, details…) without calling its ``__init__``."""
    walked = Exception.__new__(type(error))
    for name, attr in vars(error).items():
        setattr(walked, name, _walk(attr, shown))
    walked.args = (walked.message,)
    return walked


# --- escaping ------------------------------------------------------------------------------


def md(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` as inert Markdown on one line: no HTML, links, images, mentions or emphasis."""
    flat = _cut(_SPACES.sub(" ", clean(text)).strip(), limit)
    out = []
    for char in flat:
        if char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char in _MARKDOWN_PUNCTUATION:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def plain(text: str, limit: int = MAX_TEXT) -> str:
    return _cut(one_line(text), limit)


def quoted(code: str, limit: int = 200) -> str:
    """A line of code for the terminal: cleaned and on one line, its spacing kept."""
    return _cut(_BREAKS.sub(" ", clean(code)).strip(), limit)


def _cut(flat: str, limit: int) -> str:
    """``flat`` in ``limit`` characters, marked ``…``: cut after a whole word, unless
    that would drop more than a third of the room (a long URL, a run of escaped
    invisible characters: what is shown of it matters more than a clean cut)."""
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    space = head.rfind(" ")
    if space >= limit * 2 // 3:
        head = head[:space].rstrip()
    return head + "…"


def _summary(review: Review) -> str:
    counts = [f"{review.count(kind)} {kind}" for kind in KIND_ORDER if review.count(kind)]
    events = review.feedback_events
    if events:
        counts.append(f"{events} feedback event{'s' if events != 1 else ''}")
    return ", ".join(counts) or "no changes to experiences"


def base_line(
    review: Review, ref: Callable[[str], str] = plain, text: Callable[[str], str] = plain
) -> str:
    """Which base the review used and why; and the unpushed commits of its local branch that
    head holds, reviewed as the change's (a pull request would show them too).

    ``ref`` shows a branch name (a code span in Markdown), ``text`` the words around it.
    """
    base = review.base
    line = (
        f"base: {ref(base.ref)} ({text(base.reason)}); the change is what head adds since "
        "it forked from it"
    )
    if base.local_ahead is not None:
        name, count = base.local_ahead
        commits = "1 commit" if count == 1 else f"{count} commits"
        are = "is" if count == 1 else "are"
        line += (
            f". {commits} of local {ref(name)} not yet on {ref(base.ref)} {are} counted as part "
            f"of it (push {ref(name)} first, or pass {ref('--base ' + name)} to leave them out)"
        )
    return line


# --- Markdown ------------------------------------------------------------------------------


def to_markdown(review: Review, max_bytes: int = MAX_MARKDOWN_BYTES, show_all: bool = False) -> str:
    review = shown_review(review)
    head = [
        COMMENT_MARKER,
        "## Reliora: experiences in this change",
        "",
        f"Base {md(review.base.ref)} ({review.base.commit[:12]}) → head {md(review.head.ref)} "
        f"({review.head.commit[:12]}): {_summary(review)}.",
    ]
    if review.base.chosen:
        said = base_line(review, _code, md)
        head.append(f"\n{said[:1].upper()}{said[1:]}.")
    for error in review.folder_errors:
        head.append(f"\n**{md(error.path or '')} {md(error.message)}**.")
    invalid = sum(change.invalid for change in review.changes)
    if invalid:
        head.append(f"\n**{invalid} record(s) are invalid**: run `reliora check` on them.")
    matching = sum(g.refused for change in review.changes for g in change.guards)
    if matching:
        head.append(
            f"\n**{matching} guard(s) this change brings already match head's code**: "
            "once merged they fire on every commit that touches those lines."
        )
    if review.guard_budget is not None:
        head.append(f"\n**{md(review.guard_budget.summary('review'), 600)}**.")
    sections = [_md_change(change, show_all) for change in review.changes]
    if review.guard_findings:
        sections.insert(0, _md_guard_findings(review))
    if review.about_code:
        sections.append(_md_about_code(review))
    told = context_output.to_markdown(review.context, md, _code)
    if told is not None:
        sections.append(told)
    if review.other_feedback:
        sections.append(_md_other_feedback(review))
    if review.feedback_errors:
        sections.append(
            "### Unreadable feedback files\n\n"
            + "\n".join(f"- {md(str(error))}" for error in review.feedback_errors[:MAX_ITEMS])
        )
    body = "\n".join(head)
    size = len(body.encode("utf-8"))
    reserve = 300  # room for the truncation note
    for shown, section in enumerate(sections):
        piece = "\n\n" + section
        piece_size = len(piece.encode("utf-8"))
        if size + piece_size + reserve > max_bytes:
            left = len(sections) - shown
            body += (
                f"\n\n_…{left} more section(s) not shown: this comment is kept under "
                f"{max_bytes // 1000} KB. Run `reliora review` locally for the full list._"
            )
            break
        body += piece
        size += piece_size
    return body + "\n"


def _md_guard_findings(review: Review) -> str:
    """Lines head adds that repeat a lesson: ids and paths in code spans, messages escaped."""
    blocking = sum(f.severity == "block" for f in review.guard_findings)
    lines = ["### Code that repeats a lesson", ""]
    if blocking:
        lines += [f"**{blocking} finding(s) block this change** (`severity: block`).", ""]
    for finding in review.guard_findings[:MAX_GUARD_FINDINGS]:
        where = _code(f"{finding.path}:{finding.line}")
        stale = " (stale lesson)" if finding.stale else ""
        lines.append(
            f"- {where} repeats {_code(finding.record_id)}{stale}, {finding.severity}: "
            f"{md(finding.message)}"
        )
        if finding.text:
            # The line itself, as `guard test` quotes it (masked, cut): a code span is inert.
            lines.append(f"  {_code(finding.text)}")
    left = len(review.guard_findings) - MAX_GUARD_FINDINGS
    if left > 0:
        lines.append(f"- _…and {left} more: run `reliora review` locally_")
    return "\n".join(lines)


def _code(text: str) -> str:
    """``text`` in a code span long enough for the backticks it holds (one line)."""
    text = one_line(text)
    fence = "`" * (longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _guard_summary(finding: GuardFinding) -> str:
    return finding.summary() + (f" [{finding.severity}]" if finding.severity == "block" else "")


def to_github_annotations(review: Review) -> str:
    """A workflow command per guard finding (``::warning file=…,line=…::…``, ``::error``),
    per guard the change brings that already matches head's code (an error on its
    record's file), and one error when the guards ran out of time.

    Values are escaped as GitHub's toolkit does (``%``, CR, LF; and ``:`` ``,`` in
    properties), so a record's message can never start a workflow command of its own.
    """
    review = shown_review(review)
    lines = []
    for finding in review.guard_findings:
        level = "error" if finding.severity == "block" else "warning"
        title = f"repeats lesson {finding.record_id}"
        props = f"file={_property(finding.path)},line={finding.line},title={_property(title)}"
        message = f"{finding.message} (reliora show {finding.record_id})"
        lines.append(f"::{level} {props}::{_data(message)}")
    for change in review.changes:
        for guard in change.guards:
            problem = guard.problem()
            if problem is not None:
                title = f"guard {guard.number} already matches head's code"
                props = f"file={_property(change.locator)},title={_property(title)}"
                lines.append(f"::{problem.severity} {props}::{_data(problem.message)}")
    if review.guard_budget is not None:
        summary = review.guard_budget.summary("review")
        lines.append(f"::error title=guards stopped::{_data(summary)}")
    return "".join(line + "\n" for line in lines)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _md_change(change: RecordChange, show_all: bool) -> str:
    title = md(change.title) if change.title else "_(no title)_"
    lines = [f"### {change.kind.capitalize()}: {title}", ""]
    lines.append(f"- **id:** {md(change.id) if change.id else '_(none)_'}")
    if change.old_locator:
        lines.append(f"- **file:** {md(change.old_locator)} → {md(change.locator)}")
    else:
        lines.append(f"- **file:** {md(change.locator)}")
    if change.changed_fields:
        lines.append(f"- **changed:** {', '.join(md(f) for f in change.changed_fields)}")
    if change.retired_reason:
        lines.append(f"- **retired:** {md(change.retired_reason)}")
    if change.supersedes:
        lines.append(f"- **supersedes:** {', '.join(md(i) for i in change.supersedes)}")
    for name, before, after in change.changes:
        old, new = word_excerpt(before, after)
        body = f"- {clean(old)}\n+ {clean(new)}" if old or new else ""
        fence = "`" * max(3, longest_backticks(body) + 1)  # record text cannot close it
        lines.append(f"\n**{md(name)}**\n{fence}diff\n{body}\n{fence}\n")
    for item in change.record_problems[:MAX_ITEMS]:
        lines.append(f"- **problem:** {md(item)}")
    for problem in change.problems:
        where = f" (line {problem.line})" if problem.line else ""
        label = "invalid" if problem.severity == "error" else "warning"
        lines.append(f"- **{label}:** {md(problem.message)}{where}")
    lines.extend(_md_guard_change(guard) for guard in change.guards[:MAX_GUARD_CHANGES])
    if len(change.guards) > MAX_GUARD_CHANGES:
        lines.append(f"- _…and {len(change.guards) - MAX_GUARD_CHANGES} more guards_")
    shown, related = shown_warnings(change.similar, show_all)
    for warning in shown:
        what = "likely duplicate of" if warning.likely else "related to"
        lines.append(
            f"- **SIMILAR\\_EXPERIENCE\\_FOUND**, {what} {md(warning.title)}, "
            f"{md(warning.id)} in {md(warning.locator)} ({warning.match_level} match, "
            f"{md(warning.evidence)}): consider feedback on it, or refining it, "
            "instead of a new record"
        )
    if related:
        lines.append(f"- **also related:** {', '.join(md(w.id) for w in related)}")
    lines.extend(_md_event(event) for event in change.feedback[:MAX_ITEMS])
    if len(change.feedback) > MAX_ITEMS:
        lines.append(f"- _…and {len(change.feedback) - MAX_ITEMS} more feedback events_")
    return "\n".join(lines)


def _md_guard_change(guard: GuardChange) -> str:
    """A guard the change brings: its pattern, files and severity escaped like record text."""
    where = ", ".join(md(path, 120) for path in guard.paths[:MAX_ITEMS]) or "every file"
    if len(guard.paths) > MAX_ITEMS:
        where += f" and {len(guard.paths) - MAX_ITEMS} more"
    if guard.exclude:
        where += " except " + ", ".join(md(path, 120) for path in guard.exclude[:MAX_ITEMS])
    off = "" if guard.runs else " _(does not run: the record is not active and valid)_"
    line = (
        f"- **guard {guard.number} {md(guard.kind)}, {md(guard.severity)}:** "
        f"pattern {md(guard.pattern, MAX_PATTERN_SHOWN)} in {where}{off}"
    )
    if guard.matches:
        found = ", ".join(_code(f"{f.path}:{f.line}") for f in guard.matches)
        line += f"; **already matches head's code:** {found}{' …' if guard.more else ''}"
        if guard.existing_allowed:
            line += " (accepted when saved: `existing: allowed`)"
    return line


def _text_guard_change(guard: GuardChange) -> list[str]:
    where = ", ".join(plain(path, 120) for path in guard.paths) or "every file"
    if guard.exclude:
        where += " except " + ", ".join(plain(path, 120) for path in guard.exclude)
    off = " (does not run: the record is not active and valid)" if not guard.runs else ""
    lines = [
        f"         guard {guard.number} {guard.kind}, {plain(guard.severity, 40)}: "
        f"pattern {plain(guard.pattern, MAX_PATTERN_SHOWN)} in {plain(where, 600)}{off}"
    ]
    if guard.matches:
        found = ", ".join(plain(f"{f.path}:{f.line}", 200) for f in guard.matches)
        more = " and more" if guard.more else ""
        accepted = " (accepted when saved: existing: allowed)" if guard.existing_allowed else ""
        lines.append(f"           already matches head's code: {found}{more}{accepted}")
    return lines


def _about_mark(data: dict[str, object]) -> str | None:
    """``retired`` or ``superseded by X`` (review --include-retired lists those too)."""
    from reliora_git.operations.lessons.about import lifecycle_mark

    return lifecycle_mark(dict(data))


def _md_about_code(review: Review) -> str:
    lines = ["### Experiences about code this change touches", ""]
    for data, files in review.about_code[:MAX_ITEMS]:
        touched = ", ".join(md(f) for f in files[:5]) + (" …" if len(files) > 5 else "")
        mark = _about_mark(data)
        shown = f" _{md(mark)}_" if mark else ""
        lines.append(f"- **{md(str(data['title']))}** ({md(str(data['id']))}){shown}: {touched}")
    if len(review.about_code) > MAX_ITEMS:
        lines.append(f"- _…and {len(review.about_code) - MAX_ITEMS} more_")
    return "\n".join(lines)


#: Words of context kept around a change, and the longest excerpt shown of a field.
EXCERPT_CONTEXT = 4
EXCERPT_WORDS = 40


def word_excerpt(before: str, after: str) -> tuple[str, str]:
    """The changed part of two texts, word by word, with a little context; cut with "…"."""
    old, new = before.split(), after.split()
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    first = max(0, start - EXCERPT_CONTEXT)

    def cut(words: list[str]) -> str:
        last = len(words) - max(0, end - EXCERPT_CONTEXT)
        shown = words[first:last]
        text = " ".join(shown[:EXCERPT_WORDS])
        prefix = "… " if first > 0 else ""
        suffix = " …" if last < len(words) or len(shown) > EXCERPT_WORDS else ""
        return prefix + text + suffix

    return cut(old), cut(new)


def longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def _md_event(event: FeedbackEvent) -> str:
    who = f" by {md(event.author, 80)}" if event.author else ""
    note = f": {md(event.note)}" if event.note else ""
    return f"- **feedback:** {md(event.outcome, 40)}{who}{note}"


def _md_other_feedback(review: Review) -> str:
    lines = ["### Feedback on unchanged records", ""]
    for record_id, events in sorted(review.other_feedback.items()):
        title = review.other_titles.get(record_id)
        name = f"{md(title)} ({md(record_id)})" if title else f"{md(record_id)} (unknown record)"
        lines.append(f"- {name}")
        lines.extend("  " + _md_event(event) for event in events[:MAX_ITEMS])
        if len(events) > MAX_ITEMS:
            lines.append(f"  - _…and {len(events) - MAX_ITEMS} more_")
    return "\n".join(lines)


# --- JSON ----------------------------------------------------------------------------------


def to_json(review: Review) -> dict[str, Any]:
    """The review as one JSON document, withheld like the other formats: a bot that posts
    its fields posts no secret and no hidden text (invisible characters as ``<U+E0049>``)."""
    review = shown_review(review)
    return {
        "base": {
            "ref": review.base.ref,
            "commit": review.base.commit,
            "reason": review.base.reason,
            "localAhead": None
            if review.base.local_ahead is None
            else {"branch": review.base.local_ahead[0], "commits": review.base.local_ahead[1]},
        },
        "head": {"ref": review.head.ref, "commit": review.head.commit},
        "ok": review.ok,
        "storeErrors": [error.to_json()["error"] for error in review.folder_errors],
        "summary": {kind: review.count(kind) for kind in KIND_ORDER}
        | {"feedbackEvents": review.feedback_events},
        "records": [
            {
                "kind": change.kind,
                "id": change.id,
                "title": change.title,
                "locator": change.locator,
                "oldLocator": change.old_locator,
                "changedFields": change.changed_fields,
                "retiredReason": change.retired_reason,
                "supersedes": change.supersedes,
                "changes": [
                    {"field": name, "before": before, "after": after}
                    for name, before, after in change.changes
                ],
                "recordProblems": change.record_problems,
                "problems": [problem_to_json(p) for p in change.problems],
                "warnings": [w.to_json() for w in change.similar],
                "feedback": [event_to_json(e) for e in change.feedback],
                "guards": [guard.to_json() for guard in change.guards],
            }
            for change in review.changes
        ],
        "otherFeedback": [
            event_to_json(event) for events in review.other_feedback.values() for event in events
        ],
        "feedbackErrors": [_error_json(error) for error in review.feedback_errors],
        "guardFindings": [finding.to_json() for finding in review.guard_findings],
        "guardBudget": None if review.guard_budget is None else review.guard_budget.to_json(),
        "aboutChangedCode": [
            {
                "id": data["id"],
                "title": data["title"],
                "locator": data["locator"],
                "status": data.get("status", "active"),
                "supersededBy": data.get("supersededBy") or [],
                "files": files,
            }
            for data, files in review.about_code
        ],
        "contextDiff": review.context.to_json(),
    }


def _error_json(error: RecordError) -> dict[str, Any]:
    return {"path": error.path, "line": error.line, "message": error.message}


# --- text ----------------------------------------------------------------------------------


def to_text(review: Review, show_all: bool = False) -> str:
    review = shown_review(review)
    lines = [
        f"{plain(review.base.ref)} ({review.base.commit[:12]}) -> "
        f"{plain(review.head.ref)} ({review.head.commit[:12]}): {_summary(review)}"
    ]
    if review.base.chosen:
        lines.append(base_line(review))
    lines.extend(f"error: {plain(str(error))}" for error in review.folder_errors)
    if review.guard_budget is not None:
        lines.append(f"error: {plain(review.guard_budget.summary('review'), 600)}")
    if review.guard_findings:
        lines.append("")
        lines.append("code that repeats a lesson (guards):")
        for finding in review.guard_findings:
            lines.append(f"  {plain(_guard_summary(finding), 600)}")
            if finding.text:  # the line itself, as `guard test` quotes it (masked, cut)
                lines.append(f"      {quoted(finding.text)}")
    for change in review.changes:
        lines.append("")
        where = (
            f"{change.old_locator} -> {change.locator}" if change.old_locator else change.locator
        )
        lines.append(f"{change.kind:<9}{plain(change.title) or '(no title)'}")
        # An invalid record's id is any text a pull request chose: cleaned like the rest.
        lines.append(f"         id {plain(change.id or '') or '(none)'}  {plain(where)}")
        if change.changed_fields:
            lines.append(f"         changed: {plain(', '.join(change.changed_fields))}")
        if change.retired_reason:
            lines.append(f"         retired: {plain(change.retired_reason)}")
        if change.supersedes:
            lines.append(f"         supersedes: {plain(', '.join(change.supersedes))}")
        for name, before, after in change.changes:
            old, new = word_excerpt(before, after)
            lines.append(f"         {plain(name)}: - {plain(old)}")
            lines.append(f"         {' ' * len(plain(name))}  + {plain(new)}")
        for item in change.record_problems[:MAX_ITEMS]:
            lines.append(f"         problem: {plain(item)}")
        for problem in change.problems:
            where_line = f" (line {problem.line})" if problem.line else ""
            lines.append(f"         {problem.severity}: {plain(problem.message)}{where_line}")
        for guard in change.guards:
            lines.extend(_text_guard_change(guard))
        shown, related = shown_warnings(change.similar, show_all)
        for warning in shown:
            lines.append(f"         SIMILAR_EXPERIENCE_FOUND: {plain(warning.message)}")
        if related:
            lines.append(f"         {plain(related_line(related))}")
        for event in change.feedback:
            lines.append(f"         feedback: {_text_event(event)}")
    for record_id, events in sorted(review.other_feedback.items()):
        lines.append("")
        lines.append(f"feedback on {plain(record_id)}:")
        # Two spaces under a heading, as the guard findings: the change blocks' 9 align
        # under their kind column, which these sections do not have.
        lines.extend(f"  {_text_event(event)}" for event in events)
    for error in review.feedback_errors:
        lines.append(f"unreadable feedback: {plain(str(error))}")
    if review.about_code:
        lines.append("")
        lines.append("experiences about code this change touches:")
        for data, files in review.about_code:
            touched = ", ".join(plain(f) for f in files[:5])
            mark = _about_mark(data)
            marked = f" [{plain(mark)}]" if mark else ""
            lines.append(
                f"  {plain(str(data['id']))}  {plain(str(data['title']))}{marked}: {touched}"
            )
    told = context_output.to_text(review.context, plain)
    if told:
        lines += ["", *told]
    return "\n".join(lines) + "\n"


def _text_event(event: FeedbackEvent) -> str:
    who = f" by {plain(event.author, 80)}" if event.author else ""
    note = f": {plain(event.note)}" if event.note else ""
    return f"{plain(event.outcome, 40)}{who}{note}"
