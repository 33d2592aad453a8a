"""A record drafted from what the repository says about a change (SPEC.md §16, "From a commit").

Pure. The title comes from the pull request's title, the changelog line or the subject,
cleaned of ``fix:`` prefixes and issue numbers; the problems from the sentences that state a
symptom or a cause (messages, the pull request's body, the changelog line); the solution from
the sentences that state the fix, and the functions the diff changed; ``paths`` from the code
files it changed that still exist at HEAD; the provenance in ``source`` (commit, pull request,
original author, date). The record's ``author`` is left for the person saving it.
"""

from __future__ import annotations

import datetime as dt
import re

from reliora_git.operations.coldstart.nouns import Entry
from reliora_git.operations.coldstart.signals import CAUSE, FAILURE, is_code, message_body
from reliora_git.records.model import ASKED_AS_PLACEHOLDER, Record

MAX_PROBLEMS = 3
MAX_PATHS = 10
SENTENCE_CHARS = 300
TITLE_CHARS = 120
_PREFIX = re.compile(
    r"^(?:\[[^\]]{1,30}\]\s*|(?:fix|bug|bugfix|hotfix|feat|perf|refactor|security)"
    r"(?:\([^)]{0,40}\))?!?:\s*|\w+(?:/\w+)?:\s+(?=[a-z]))",
    re.IGNORECASE,
)
_NUMBERS = re.compile(
    r"\s*\((?:#\d+|[\w-]+/[\w-]+#\d+)(?:,\s*#\d+)*\)|\s*:(?:issue|pr):`\d+`|\s+#\d+\b"
)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(])")
_SOLVING = re.compile(
    r"\b(?:fix(?:e[sd])?|use[sd]?|now|instead|avoid(?:s|ed)?|ensure[sd]?|make[s]?|made|"
    r"check(?:s|ed)?|handle[sd]?|add(?:s|ed)?|chang(?:e|es|ed)|switch(?:es|ed)?|"
    r"so that|to prevent|by|guard(?:s|ed)?|clamp(?:s|ed)?|restore[sd]?|skip(?:s|ped)?)\b",
    re.IGNORECASE,
)
_NOISE_LINE = re.compile(
    r"^(?:This reverts commit|Signed-off-by|Co-authored-by|Reviewed-by|Merge |See |Closes |"
    r"Fixes #|Refs? #|---|===|\*\*\*|<!--|\[x\]|\[ \]|#+ )",
    re.IGNORECASE,
)


def clean_title(text: str) -> str:
    """A subject or title without ``fix:`` / ``[tag]`` prefixes, issue numbers and an end dot."""
    title = " ".join(text.split())
    for _ in range(2):
        title = _PREFIX.sub("", title)
    title = _NUMBERS.sub("", title).strip().rstrip(".").strip()
    title = title[:1].upper() + title[1:]
    return title[:TITLE_CHARS].rstrip()


def paragraphs(text: str) -> list[str]:
    """A message's paragraphs and bullet items, each on one line: wrapped lines joined (a
    wrapped bullet stays one item), the trailers at its end left out, ``Word: text`` inside
    a paragraph kept as text."""
    lines = message_body(text).splitlines()
    items: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            items.append(" ".join(" ".join(current).split()))
            current.clear()

    for line in lines:
        stripped = line.strip()
        if not stripped or _NOISE_LINE.match(stripped):
            flush()
            continue
        if _BULLET.match(line):
            flush()
            stripped = _BULLET.sub("", line).strip()
        current.append(stripped)
    flush()
    return items


def sentences(text: str) -> list[str]:
    found = []
    for paragraph in paragraphs(text):
        found += [s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip()]
    return found


def _cut(text: str) -> str:
    if len(text) <= SENTENCE_CHARS:
        return text
    end = text.rfind(". ", 0, SENTENCE_CHARS)
    return text[: end + 1] if end > SENTENCE_CHARS // 2 else text[: SENTENCE_CHARS - 1] + "…"


def draft(entry: Entry) -> Record:
    """The record an entry suggests: what the repository says, in the record's shape, and
    placeholders (``…``) where only the person or agent who writes the lesson knows.

    The problem is a sentence that states a symptom or a cause, never one that states the
    fix; the solution is the sentences that state the fix, never a list of files (the diff is
    in the evidence); both come from the messages without a squash merge's narration.
    """
    title_source = entry.title
    if entry.source == "changelog" and entry.changelog:
        title_source = entry.changelog[0]
    title = clean_title(title_source) or clean_title(entry.title)
    said: list[str] = []
    texts = [entry.evidence.body] if entry.evidence is not None else entry.texts[1:]
    for text in [*texts, *entry.changelog]:  # messages, the request's body, lines
        said += [c for s in sentences(text) if (c := _stubless(s)) and c not in said]
    title_words = set(title.lower().split())
    said = [s for s in said if set(clean_title(s).lower().split()) != title_words]
    problems = [s for s in said if _states_problem(s)][:MAX_PROBLEMS]
    if entry.source == "session":  # what the session showed: the command and its output
        problems = [" ".join(t.split()) for t in entry.texts][:MAX_PROBLEMS]
    if not problems and entry.changelog and _states_problem(entry.changelog[0]):
        problems = [entry.changelog[0]]
    if not problems:
        problems = [_symptom(title)]
    if entry.boundary:
        problems.append(BOUNDARY_NOTE)
    solving = [s for s in said if s not in problems and _SOLVING.search(s)][:2]
    solution = " ".join(_cut(s) for s in solving) or SOLUTION_PLACEHOLDER
    verification = f"Drafted from {_what(entry)} by reliora history; check it against the code."
    if entry.tests:
        checked = ", ".join(f"`{name}`" for name in entry.tests[:3])
        verification += f" Tests it added: {checked}."
    paths = [f for f in entry.present if is_code(f)] or [
        f for f in entry.present if not re.search(r"(?i)(?:^|/)(?:CHANGES|CHANGELOG|NEWS)", f)
    ]
    return Record(
        title=title,
        problems=[_cut(p) for p in problems],
        solution=solution,
        why_it_worked=WHY_PLACEHOLDER,
        paths=paths[:MAX_PATHS],
        extra_meta={"source": source_line(entry)},
        asked_as=[ASKED_AS_PLACEHOLDER],
        verification=verification,
    )


#: What a draft of a shallow clone's boundary commit says instead of its paths.
BOUNDARY_NOTE = (
    "(a shallow clone's first commit: the files it changed are not known here; "
    "fetch more history with `git fetch --deepen N` to draft its paths)"
)
#: Where a draft does not know: what the person or agent who writes the lesson fills in.
SOLUTION_PLACEHOLDER = (
    "… what the change does and why it fixes the problem, in your words (the evidence's diff "
    "shows the change)"
)
WHY_PLACEHOLDER = "… why it works: the cause, as far as the change and its messages show it"
#: ``Fix #1234``, ``Fixes: #12``, ``closes #3``: a pointer, not a sentence of the lesson.
_STUB = re.compile(
    r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|refs?|see)\b:?\s*(?:#|GH-)\d+\b[.,;]?",
    re.IGNORECASE,
)
#: A sentence that opens with what was done states the fix, not the problem.
_SOLVING_START = re.compile(
    r"^(?:fix(?:e[sd])?|fixing|use[sd]?|add(?:s|ed)?|make[s]?|made|ensure[sd]?|avoid(?:s|ed)?|"
    r"handle[sd]?|change[sd]?|switch(?:es|ed)?|update[sd]?|remove[sd]?|replace[sd]?|"
    r"move[sd]?|rewr(?:ite|ote)|set[s]?|return[s]?|check[s]?|call[s]?|pass(?:es)?|"
    r"now|instead|this (?:pr|change|commit|patch))\b",
    re.IGNORECASE,
)


def _stubless(sentence: str) -> str:
    """A sentence without issue numbers and ``Fix #N`` stubs ('' when nothing else is left)."""
    text = _NUMBERS.sub("", _STUB.sub("", sentence)).strip().lstrip(".,;:- ").rstrip(",;:- ")
    return text if len(text.split()) >= 3 else ""


def _states_problem(sentence: str) -> bool:
    """A symptom or a cause: a cause word, or a failure word in a sentence that does not open
    with the fix (``Fix the crash by …`` is the solution)."""
    if CAUSE.search(sentence):
        return True
    return bool(FAILURE.search(sentence)) and not _SOLVING_START.match(sentence)


_FIX_VERB = re.compile(r"^(?:fix(?:e[sd])?|fixing|correct(?:s|ed)?|repair(?:s|ed)?)\s+", re.I)


def _symptom(title: str) -> str:
    """What went wrong, from a title that says it fixed it: ``Fix empty body being sent`` ->
    ``Empty body being sent``; other titles as they are."""
    symptom = _FIX_VERB.sub("", title)
    return symptom[:1].upper() + symptom[1:] if symptom else title


def _what(entry: Entry) -> str:
    if entry.source == "session":
        return "a past agent session"
    what = f"commit {entry.short}"
    if entry.pull_request is not None:
        what += f" (pull request #{entry.pull_request})"
    return what


def source_line(entry: Entry) -> str:
    """``commit 0123abcd4567 (pull request #45), by Ann Author, 2024-03-01``."""
    date = dt.datetime.fromtimestamp(entry.time, dt.timezone.utc).strftime("%Y-%m-%d")
    who = f", by {entry.author}" if entry.author else ""
    return f"{_what(entry)}{who}, {date}"
