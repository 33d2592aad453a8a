"""Text as a brief or a push shows it (SPEC.md §14.2): clean of control and invisible
characters, neutralised for an agent's context, and read as the record has it.

* :func:`one_line` is for what is one line by nature (titles, ids, warnings).
* :func:`as_written` is for a multi-line field (solution, problem, task): paragraphs and
  fenced code blocks keep their line breaks and every character of the code; only the
  white space inside a prose paragraph is collapsed.
* Both cut to a limit at a sentence or block end, never inside a fence, a Markdown link,
  an inline code span or a word, followed by ``… (reliora show ID)``.

Records are untrusted: every function here is linear in the text (no backtracking pattern,
no scan that starts again from each position).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from reliora_git.records.text import neutralize, remove_invisible

#: A fence opener: up to three spaces, three or more backticks or tildes, an info string
#: (the language). Fixed prefix, no nested quantifier: linear.
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
#: A line that starts a line of its own inside a paragraph: a list item, a heading, a quote,
#: a table row (a paragraph of steps must not be run together into one line).
_OWN_LINE = re.compile(r"[ \t]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|#{1,6}[ \t]|>|\|)")
#: A list marker at the start of a line (no cut right after it: ``- … (reliora show ID)``).
_MARKER = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
#: White space in prose, collapsed to one space.
_SPACES = re.compile(r"\s+")
#: What joins the cut mark to a kept code block.
_AFTER_CODE = "\n"
#: What ends a sentence when white space follows (the cut prefers it).
_SENTENCE_ENDS = frozenset(".!?;")


def clean(text: str) -> str:
    """``text`` without control, bidirectional or invisible characters, and neutralised for an
    agent's context (records/text.py: no wrapper tags, no turn markers)."""
    return neutralize(remove_invisible(text))


def one_line(text: str) -> str:
    return " ".join(clean(text).split())


# --- blocks -------------------------------------------------------------------------------------


@dataclass
class Block:
    """One piece of a field as shown: a code block (kept whole, never cut inside) or one line
    of prose with the places a cut may fall."""

    text: str
    code: bool
    #: What joins it to the block before: "" (first), "\n" (same paragraph), "\n\n".
    joint: str = ""
    #: Offsets in ``text`` where a cut may fall (``text[:offset]`` is kept), ascending, each
    #: with whether a sentence ends there.
    cuts: list[tuple[int, bool]] = field(default_factory=list)


def blocks(text: str) -> list[Block]:
    """``text`` (cleaned here) as blocks: fenced code (with its fence lines and language),
    indented code, and prose lines (list items, headings and quotes each a line of their own;
    other lines of a paragraph joined with their white space collapsed)."""
    lines = clean(text).split("\n")
    found: list[Block] = []
    paragraph: list[str] = []
    joint = ""  # what joins the next block: a blank line seen before it, or one line break

    def add(block: Block) -> None:
        nonlocal joint
        block.joint = joint if found else ""
        joint = "\n"
        found.append(block)

    def end_paragraph() -> None:
        for block in _paragraph(paragraph) if paragraph else ():
            add(block)
        paragraph.clear()

    at = 0
    while at < len(lines):
        line = lines[at]
        at += 1
        fence = _FENCE.fullmatch(line)
        if fence and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
            end_paragraph()
            indent, marker = fence.group(1), fence.group(2)
            code = [line]
            while at < len(lines) and not _closes(marker, lines[at]):
                code.append(lines[at])
                at += 1
            if at < len(lines):
                code.append(lines[at])
                at += 1
            else:  # unclosed: closed here, or it would turn the rest of the push into code
                while len(code) > 1 and not code[-1].strip():
                    code.pop()
                code.append(indent + marker)
            add(Block("\n".join(code), code=True))
        elif line.strip():
            paragraph.append(line)
        else:
            end_paragraph()
            joint = "\n\n"
    end_paragraph()
    return found


def _closes(marker: str, line: str) -> bool:
    """CommonMark: a closing fence is up to three spaces, the opener's character at least as
    many times, then only white space."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return False
    run = len(stripped) - len(stripped.lstrip(marker[0]))
    return run >= len(marker) and not stripped[run:].strip()


def _paragraph(lines: list[str]) -> list[Block]:
    if all(line.startswith(("    ", "\t")) for line in lines):
        return [Block("\n".join(lines), code=True)]  # indented code: as written
    logical: list[list[str]] = []
    for line in lines:
        if not logical or _OWN_LINE.match(line):
            logical.append([line])
        else:
            logical[-1].append(line)
    return [_prose("\n".join(group)) for group in logical]


def _prose(raw: str) -> Block:
    """One prose line: white space collapsed outside inline code spans (a span keeps its
    characters; a line break in it is a space, as Markdown shows it), with its cut places."""
    indent = len(raw) - len(raw.lstrip())
    out = [raw[:indent]]
    length = indent
    code: list[tuple[int, int]] = []
    at = indent
    for start, end in [*_code_spans(raw), (len(raw), len(raw))]:
        words = _SPACES.sub(" ", raw[at:start])
        out.append(words)
        length += len(words)
        span = raw[start:end].replace("\n", " ")
        if span:
            code.append((length, length + len(span)))
            out.append(span)
            length += len(span)
        at = end
    text = "".join(out).rstrip()
    protected = sorted([*code, *_links(text, code)])
    marker = _MARKER.match(text)
    after = max(indent, marker.end() if marker else 0)
    return Block(text, code=False, cuts=_cut_places(text, protected, after))


def _code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each inline code span: a run of n backticks up to the next run of
    exactly n. Each length's runs are walked by one pointer that only moves forward: linear."""
    runs: list[tuple[int, int]] = []
    at = text.find("`")
    while at >= 0:
        end = at
        while end < len(text) and text[end] == "`":
            end += 1
        runs.append((at, end - at))
        at = text.find("`", end)
    by_length: dict[int, list[int]] = {}
    for number, (_, size) in enumerate(runs):
        by_length.setdefault(size, []).append(number)
    pointer = dict.fromkeys(by_length, 0)
    spans = []
    number = 0
    while number < len(runs):
        start, size = runs[number]
        same = by_length[size]
        while pointer[size] < len(same) and same[pointer[size]] <= number:
            pointer[size] += 1
        if pointer[size] < len(same):
            closer = same[pointer[size]]
            spans.append((start, runs[closer][0] + size))
            number = closer + 1
        else:
            number += 1  # no closer: the backticks are text
    return spans


def _links(text: str, code: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(start, end) of each Markdown link or image ``[text](url)``, ``[text][ref]``: from its
    ``[`` to the ``)`` or ``]`` after. Brackets inside code spans do not count. A bracket
    stack and two forward-only searches: linear. (The destination holds no white space, so
    only the text and a title need keeping whole; an unclosed one keeps the line's rest.)"""
    found: list[tuple[int, int]] = []
    opened: list[int] = []
    closing = {"(": (")", [-1]), "[": ("]", [-1])}  # last search's answer per kind
    spans = iter(code)
    span = next(spans, None)
    at = 0
    while at < len(text):
        if span is not None and at >= span[0]:
            at = span[1]
            span = next(spans, None)
            continue
        char = text[at]
        if char == "[":
            opened.append(at)
        elif char == "]" and opened:
            start = opened.pop()
            after = text[at + 1 : at + 2]
            if after in closing:
                mark, last = closing[after]
                if last[0] != len(text) and last[0] <= at:
                    found_at = text.find(mark, at + 2)
                    last[0] = len(text) if found_at < 0 else found_at
                found.append((start, min(last[0] + 1, len(text))))
        at += 1
    return found


def _cut_places(text: str, protected: list[tuple[int, int]], after: int) -> list[tuple[int, bool]]:
    """Offsets of white space outside every protected range (and past a list marker), with
    whether a sentence ends there; ``protected`` is sorted by start."""
    places: list[tuple[int, bool]] = []
    reach = 0  # the furthest end of the ranges that start before the current offset
    ranges = iter(protected)
    pending = next(ranges, None)
    for at, char in enumerate(text):
        while pending is not None and pending[0] < at:
            reach = max(reach, pending[1])
            pending = next(ranges, None)
        if at > after and char.isspace() and at >= reach and not text[at - 1].isspace():
            places.append((at, text[at - 1] in _SENTENCE_ENDS))
    return places


# --- cutting ------------------------------------------------------------------------------------


def as_written(text: str, limit: int, show: str) -> str:
    """A multi-line field as the record has it (see :func:`blocks`), whole when it fits in
    ``limit`` characters, else cut by :func:`cut_blocks` and followed by ``… (reliora show
    ID)``; "" for a field with nothing to show."""
    return cut_blocks(blocks(text), limit, show)


def labelled(label: str, text: str, limit: int, show: str) -> str:
    """``Label: text`` for a field that opens with prose, ``Label:`` and the text on the lines
    after for one that opens with code, a list or a heading (a fence must start its line);
    "" when the field is empty."""
    found = blocks(text)
    shown = cut_blocks(found, limit, show)
    if not shown:
        return ""
    first = found[0]
    inline = shown.startswith("…") or not (first.code or _OWN_LINE.match(first.text))
    return f"{label}: {shown}" if inline else f"{label}:\n{shown}"


def cut(text: str, limit: int, show: str) -> str:
    """One line of text (already clean) whole when it fits in ``limit`` characters, else cut
    at its last sentence end within the limit (else between words, never inside a link or a
    code span) and followed by ``… (reliora show ID)``."""
    if len(text) <= limit:
        return text
    return cut_blocks([_prose(text)], limit, show)


class _Place(NamedTuple):
    """Where a cut falls: its offset in the joined text (compared first), the blocks kept
    whole, and how much of the next one is kept (0: none)."""

    offset: int
    whole: int
    part: int = 0
    after_code: bool = False


def cut_blocks(found: Sequence[Block], limit: int, show: str) -> str:
    """The blocks joined, whole when they fit ``limit`` characters. Else the longest start that
    ends at a block end or a sentence end within the limit (when it keeps at least a third of
    it), else between words, never inside a code block: a fence fits whole or the cut goes
    before it. Then ``… (reliora show ID)``, on a line of its own after code."""
    if sum(len(block.joint) + len(block.text) for block in found) <= limit:
        return _joined(found)
    best = word = _Place(0, 0)
    offset = 0
    for number, block in enumerate(found):
        start = offset + len(block.joint)
        if start > limit:
            break
        for at, sentence in block.cuts:
            if start + at > limit:
                break
            word = _Place(start + at, number, at)
            best = word if sentence else best
        offset = start + len(block.text)
        if offset <= limit:
            best = word = _Place(offset, number + 1, after_code=block.code)
    chosen = best if best.offset >= limit // 3 else word  # `word` is never before `best`
    kept = _joined(found[: chosen.whole])
    if chosen.part:
        block = found[chosen.whole]
        kept += block.joint + block.text[: chosen.part]
    kept = kept.rstrip()
    if not kept:
        return f"… {show}"
    # After code the mark goes on a line of its own: on the closing fence's line it would
    # leave the fence open and turn the rest of the push into code.
    return f"{kept}{_AFTER_CODE if chosen.after_code else ' '}… {show}"


def _joined(found: Sequence[Block]) -> str:
    return "".join(block.joint + block.text for block in found)
