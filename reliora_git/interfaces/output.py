"""Rendering for people (a terminal or a pipe) and for programs (one JSON document).

Record text is untrusted: what reaches a terminal has control characters,
bidirectional overrides and invisible characters (records/text.py) removed;
JSON keeps it verbatim (json escapes it), except review's (interfaces/review.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from reliora_git.records.text import is_plain, remove_invisible

if TYPE_CHECKING:
    # Names for annotations only: importing search.duplicates at start would cost every
    # command that prints, `search` and `show` included, for classes they never see.
    from reliora_git.operations.freshness import Freshness, History
    from reliora_git.operations.lessons.reads import SearchResult
    from reliora_git.operations.review.check import CheckReport
    from reliora_git.org.search import OrgResult
    from reliora_git.records.errors import RelioraError
    from reliora_git.records.model import FeedbackEvent, FeedbackSummary, Record
    from reliora_git.search.duplicates import SimilarityWarning
    from reliora_git.search.rank import Hit

# Lone surrogates come from file names that are not UTF-8 (os.fsdecode's surrogateescape);
# they cannot be encoded for a terminal, so they are shown as U+FFFD.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_COLOURS = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
#: Feedback events ``show`` lists for people; the rest are counted (all are in --json).
MAX_EVENTS_SHOWN = 10
_LEVEL_COLOUR = {"strong": "green", "moderate": "yellow", "weak": "dim"}


def clean(text: str) -> str:
    """``text`` safe for a terminal: no escape sequences, no direction overrides, nothing
    invisible (tag characters, zero-width characters, soft hyphens…: records/text.py)."""
    if is_plain(text):  # the usual text, found so faster (a whole-store check cleans 30,000)
        return text
    return _SURROGATE.sub("\ufffd", remove_invisible(text))


def one_line(text: str) -> str:
    # Printable text (is_plain) holds no whitespace but the space: unless two meet or one
    # ends it, there is nothing to join (the usual case, and a whole-store check has 30,000).
    if is_plain(text) and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(clean(text).split())


def status_mark(record: dict[str, Any]) -> str:
    """`` [retired]`` or `` [superseded by ID]`` after a record that is not active ('' if it is)."""
    superseded_by = record.get("supersededBy") or []
    if superseded_by:
        return f" [superseded by {', '.join(one_line(str(i)) for i in superseded_by)}]"
    status = record.get("status")
    if status in (None, "", "active"):
        return ""
    return f" [{one_line(str(status))}]"


def use_colour(stream: IO[str]) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


class OutputError(Exception):
    """The result could not be written to stdout (a full disk, an I/O error).

    Kept apart from the store's own OSErrors: the error cannot be reported on
    the stream that just failed, and a command that already wrote to the store
    must say so (commands/reporting.py).
    """

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.error = error


def emit(text: str, stream: IO[str] | None = None) -> None:
    """Write one line to ``stream`` (stdout); a failure is an :class:`OutputError`."""
    out = stream or sys.stdout
    with _writing(out):
        out.write(text + "\n")


@contextlib.contextmanager
def _writing(out: IO[str]) -> Iterator[None]:
    """Writes to ``out``: a failure to write stdout becomes an :class:`OutputError`."""
    try:
        yield
    except BrokenPipeError:
        raise  # `| head`: reporting() ends quietly
    except OSError as exc:
        if out is sys.stdout:
            raise OutputError(exc) from None
        raise


def flush_stdout() -> None:
    """Flush stdout now, so that a failure is reported here rather than at interpreter exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc) from None


class Printer:
    """Writes human output to stdout, warnings and errors to stderr."""

    def __init__(self, out: IO[str] | None = None, err: IO[str] | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.colour = use_colour(self.out)

    def style(self, text: str, *names: str) -> str:
        if not self.colour or not names:
            return text
        codes = ";".join(_COLOURS[n] for n in names)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def line(self, text: str = "") -> None:
        emit(text, self.out)

    def warn(self, message: str) -> None:
        # One line whatever the message holds: a file name may contain a newline.
        print(f"reliora: warning: {one_line(message)}", file=self.err)

    def skipped(self, errors: list[RelioraError]) -> None:
        for error in errors:
            self.warn(f"{error} (skipped)")

    # --- search ----------------------------------------------------------------------------

    def search(
        self, result: SearchResult, limit: int, freshness: Mapping[str, Freshness] | None = None
    ) -> None:
        hits = result.hits[:limit]
        if not hits:
            self.line(no_match_line(result))
        more = len(result.hits) - len(hits)
        terms = result.matched_terms(limit)
        for rank, hit in enumerate(hits, start=1):
            self._hit(rank, hit, terms=terms.get(hit.doc.id))
            fresh = (freshness or {}).get(hit.doc.id)
            stale = fresh.line() if fresh is not None else None
            if stale:
                self.line("    " + self.style(one_line(stale), "yellow"))
        if more > 0:
            self.line(self.style(f"… and {more} more (use --limit to see them)", "dim"))
        if result.retired_matches:
            self.line(self.style(retired_line(result.retired_matches), "dim"))
        for token, close in result.suggestions.items():
            self.line(f"did you mean: {one_line(token)} → {', '.join(map(one_line, close))}?")

    def org_search(self, result: OrgResult) -> None:
        """``org search``: as :meth:`search`, each result with its repository and commit."""
        if not result.hits:
            self.line(no_match_line(result))
        for rank, (hit, (repo, commit, _), terms) in enumerate(
            zip(result.hits, result.places, result.terms, strict=True), start=1
        ):
            self._hit(rank, hit, f"{one_line(repo)}@{commit[:12]}:", terms)
        more = result.total - len(result.hits)
        if more > 0:
            self.line(self.style(f"… and {more} more (use --limit to see them)", "dim"))
        if result.retired_matches:
            self.line(self.style(retired_line(result.retired_matches), "dim"))
        for token, close in result.suggestions.items():
            self.line(f"did you mean: {one_line(token)} → {', '.join(map(one_line, close))}?")

    def _hit(
        self, rank: int, hit: Hit, where: str = "", terms: Mapping[str, list[str]] | None = None
    ) -> None:
        doc = hit.doc
        level = self.style(hit.level, _LEVEL_COLOUR[hit.level])
        status = "" if doc.is_active else self.style(f" [{doc.status}]", "red")
        self.line(f"{rank:>2}. {self.style(one_line(doc.title), 'bold')}{status}")
        self.line(
            f"    {level}  score {hit.score:.2f}  {self.style(doc.id, 'cyan')}  "
            f"{where}{one_line(doc.locator)}"
        )
        self.line(f"    matched: {matched_words(hit.matched_tokens, terms)}  ·  {explain(hit)}")

    # --- records ---------------------------------------------------------------------------

    def record(
        self,
        record: Record,
        summary: FeedbackSummary,
        superseded_by: list[str] | None = None,
        freshness: Freshness | None = None,
        history: History | None = None,
        events: list[FeedbackEvent] | None = None,
    ) -> None:
        self.line(self.style(one_line(record.title), "bold"))
        meta = [record.id, one_line(record.locator), f"status {record.status}"]
        if record.confidence:
            meta.append(f"confidence {record.confidence}")
        if record.created:
            meta.append(f"created {one_line(record.created)}")
        self.line(self.style("  ·  ".join(meta), "dim"))
        if superseded_by:
            self.line("superseded by: " + ", ".join(one_line(i) for i in superseded_by))
        reason = record.extra_meta.get("retired_reason")
        if record.status != "active" and isinstance(reason, str) and reason.strip():
            self.line("retired: " + one_line(reason))
        stale = freshness.line() if freshness is not None else None
        if stale:
            self.line(self.style(one_line(stale), "yellow"))
        if history is not None:
            added, last = history.added.to_json(), history.last_changed.to_json()
            self.line(
                f"history: added {added['date'][:10]} by {one_line(added['author'])}; "
                f"last changed {last['date'][:10]} ({last['commit']}); "
                f"{history.commits} commit{'s' * (history.commits != 1)}"
            )
        if record.supersedes:
            self.line("supersedes: " + ", ".join(one_line(i) for i in record.supersedes))
        if record.tags:
            self.line("tags: " + ", ".join(one_line(t) for t in record.tags))
        if record.project_context:
            self.line("project context: " + one_line(record.project_context))
        for heading, value in _sections(record):
            self.line()
            self.line(self.style(one_line(heading), "bold"))
            if isinstance(value, list):
                for item in value:
                    self.line("  - " + clean(item).replace("\n", "\n    "))
            else:
                self.line(clean(value))
        self.line()
        self.line(f"feedback: {feedback_line(summary)}")
        self.feedback_events(events or [])

    def feedback_events(self, events: list[FeedbackEvent]) -> None:
        """The latest events, newest first: what happened is in the notes (at most 10)."""
        latest = sorted(events, key=lambda e: (e.at, e.locator), reverse=True)
        for event in latest[:MAX_EVENTS_SHOWN]:
            who = f" by {one_line(event.author)}" if event.author else ""
            note = f": {one_line(event.note)}" if event.note else ""
            self.line(f"  {event.at[:10]}  {one_line(event.outcome)}{who}{note}")
        if len(latest) > MAX_EVENTS_SHOWN:
            self.line(f"  ({len(latest) - MAX_EVENTS_SHOWN} more: --json)")

    def listing(self, records: list[dict[str, Any]]) -> None:
        """Records as JSON (``list --json`` items), one line each."""
        if not records:
            self.line("No experiences yet. Record one with `reliora record --help`.")
        for record in records:
            created = one_line(record["created"] or "") or "          "
            title = one_line(record["title"]) + status_mark(record)
            self.line(f"{created}  {self.style(record['id'], 'cyan')}  {title}")

    def similar(
        self, warnings: list[SimilarityWarning], new_id: str, show_all: bool = False
    ) -> None:
        """What ``record`` found like the record ``new_id`` it just saved, on stderr.

        Likely duplicates in full (related records too with ``show_all``, else one
        line), then how to undo the save: the record is already written by then.
        The machine code (SIMILAR_EXPERIENCE_FOUND) is for --json; people get words.
        """
        shown, related = shown_warnings(warnings, show_all)
        likely = [w for w in shown if w.likely]
        lines = [text for warning in likely for text in similar_lines(warning)]
        if likely:  # right below the duplicates it is about, before any related record
            lines += undo_lines(new_id, likely[0].id)
        lines += [text for w in shown if not w.likely for text in similar_lines(w)]
        if related:
            lines.append(related_line(related))
        for text in lines:
            print(text, file=self.err)

    def check(self, report: CheckReport, show_all: bool = False, details: str = "--all") -> None:
        """``check``'s report; ``details`` is how to see related records in full.

        Written at once: a whole-store report is tens of thousands of lines.
        """
        lines: list[str] = []
        for file in report.files:
            locator = one_line(file.locator)
            for problem in file.problems:
                where = locator + (f":{problem.line}" if problem.line else "")
                label = self.style(
                    problem.severity, "red" if problem.severity == "error" else "yellow"
                )
                lines.append(f"{where}: {label}: {one_line(problem.message)}")
            shown, related = shown_warnings(file.similar, show_all)
            for warning in shown:
                lines.append(f"{locator}: SIMILAR_EXPERIENCE_FOUND: {one_line(warning.message)}")
            if related:
                lines.append(f"{locator}: {related_line(related, details)}")
        errors = sum(f.has_errors for f in report.files)
        verdict = "ok" if report.ok else f"{errors} invalid"
        lines.append(f"checked {report.checked} record file(s): {verdict}")
        self.line("\n".join(lines))


def no_match_line(result: SearchResult | OrgResult) -> str:
    """ "No experiences match", with what exists just outside the filters (if any)."""
    text = f"No experiences match {one_line(result.query.text)!r}"
    outside = result.outside_filters
    if not outside:
        return text + "."
    counts = ", ".join(f"{outside[level]} {level}" for level in _LEVELS if outside.get(level))
    filters = []
    if result.context is not None:
        filters.append(f"in project context {one_line(result.context.text)!r}")
    if result.min_level is not None:
        filters.append(f"at --min-level {result.min_level}")
    drop = " and ".join(
        name
        for name, given in (
            ("--min-level", result.min_level),
            ("--project-context", result.context),
        )
        if given is not None
    )
    them = "them" if len(filters) > 1 else "it"
    return f"{text} {' '.join(filters)}; without {them}: {counts} (drop {drop})."


_LEVELS = ("strong", "moderate", "weak")


def retired_line(count: int) -> str:
    """What a search left out as retired or superseded (SPEC.md §12), for people."""
    if count == 1:
        return "1 retired or superseded record also matches: --include-retired"
    return f"{count} retired or superseded records also match: --include-retired"


def shown_warnings(
    warnings: list[SimilarityWarning], show_all: bool
) -> tuple[list[SimilarityWarning], list[SimilarityWarning]]:
    """The warnings people see in full, and the related ones summed up in one line (§6.1)."""
    if show_all:
        return warnings, []
    return [w for w in warnings if w.likely], [w for w in warnings if not w.likely]


def similar_lines(warning: SimilarityWarning) -> list[str]:
    """One similar record for people: what it is, where, and why it was found."""
    what = "likely duplicate" if warning.likely else "related"
    state = "" if warning.status == "active" else f" [{one_line(warning.status)}]"
    why = (
        "same title, solution and applicability"
        if warning.exact
        else f"overlap {warning.overlap:.2f}, the share of this record's title, tags and "
        "first problems that it holds (rare words weigh most)"
    )
    lines = [
        f"{what}: {one_line(warning.id)}{state} '{one_line(warning.title)}'",
        f"  in {one_line(warning.locator)} ({warning.match_level} match)",
        f"  why: {why}",
    ]
    if warning.shared_tokens:
        lines.append("  shared words: " + ", ".join(map(one_line, warning.shared_tokens)))
    return lines


def undo_lines(new_id: str, other_id: str) -> list[str]:
    """How to take back a save that repeats ``other_id``: retire it, or merge it first."""
    return [
        f"{new_id} is saved all the same. If it is the same lesson as {other_id}, undo the save:",
        f'  reliora retire {new_id} --reason "duplicate of {other_id}"',
        f"or, if it adds something, put that into {other_id} first and then retire this one:",
        f'  reliora update {other_id} --add-problem "…"    (or: reliora edit {other_id})',
        f'  reliora retire {new_id} --reason "merged into {other_id}"',
    ]


def related_line(related: list[SimilarityWarning], details: str = "--all") -> str:
    """``also related: a, b (--all for details)``; ``details`` says how to see them in full."""
    return (
        "also related: " + ", ".join(one_line(w.id) for w in related) + f" ({details} for details)"
    )


#: Record words shown for one query token; the JSON's matchedTerms has them all.
TERMS_SHOWN = 3


def matched_words(tokens: Sequence[str], terms: Mapping[str, list[str]] | None = None) -> str:
    """The matched query tokens, each with the record's words when they are not just itself:
    ``modulenotfounderror~module, python`` (SPEC.md §4: ``module`` is a prefix of the token).

    Without ``terms`` (rank.matched_terms), the tokens alone.
    """
    shown = []
    for token in tokens:
        found = (terms or {}).get(token) or [token]
        if found == [token]:
            shown.append(one_line(token))
            continue
        more = "/…" if len(found) > TERMS_SHOWN else ""
        shown.append(f"{one_line(token)}~{'/'.join(map(one_line, found[:TERMS_SHOWN]))}{more}")
    return ", ".join(shown)


def explain(hit: Hit) -> str:
    """The non-zero parts of the score, e.g. ``title 7.60 + tags 8.55 ×0.95 + feedback 1.00``."""
    from reliora_git.search.rank import FIELDS  # loaded already: the hit came from it

    parts = [f"{name} {hit.breakdown[name]:.2f}" for name in FIELDS if hit.breakdown[name]]
    if hit.breakdown["exactPhrase"]:
        parts.append(f"phrase {hit.breakdown['exactPhrase']:.2f}")
    text = " + ".join(parts) + f" (×{hit.breakdown['coverageMultiplier']:.2f} coverage)"
    if hit.breakdown["feedback"]:
        text += f" {hit.breakdown['feedback']:+.2f} feedback"
    return text


def feedback_line(summary: FeedbackSummary) -> str:
    counts = summary.to_json()
    adjustment = counts.pop("adjustment")
    shown = ", ".join(f"{n} {name}" for name, n in counts.items() if n)
    return f"{shown or 'none yet'} (adjustment {adjustment:+.2f})"


def _sections(record: Record) -> list[tuple[str, str | list[str]]]:
    pairs: list[tuple[str, str | list[str]]] = [
        ("Task", record.task),
        ("Problems", record.problems),
        ("Solution", record.solution),
        ("Why it worked", record.why_it_worked),
        ("Failed attempts", record.failed_attempts),
        ("Warnings", record.warnings),
        ("Applicability", record.applicability),
        ("Verification", record.verification),
        ("Asked as", record.asked_as),
        *record.extra_sections,
        ("Guards", [guard_line(g.to_json(), record.paths) for g in record.guards]),
    ]
    return [(heading, value) for heading, value in pairs if value]


def guard_line(guard: dict[str, Any], record_paths: list[str]) -> str:
    """One guard as people read it: what it looks for, where, and what it does (SPEC.md §15)."""
    from reliora_git.records.guards import shown_pattern

    paths = guard.get("paths") or record_paths
    where = ", ".join(paths) if paths else "every file outside .reliora/"
    if guard.get("exclude"):
        where += " except " + ", ".join(guard["exclude"])
    action = "blocks the commit" if guard.get("severity") == "block" else "warns"
    if guard.get("existing"):
        action += f"; existing: {guard['existing']}"
    message = f": {guard['message']}" if guard.get("message") else ""
    return f"`{shown_pattern(str(guard.get('pattern', '')), 200)}` in {where} ({action}){message}"


def print_json(document: Any, stream: IO[str] | None = None) -> None:
    """Exactly one JSON document and a newline."""
    emit(json.dumps(document, ensure_ascii=False, indent=2), stream)


def print_json_array(items: list[Any], stream: IO[str] | None = None) -> None:
    """One JSON array, one item per line: for documents of thousands of records.

    ``indent`` makes the json module use its pure-Python encoder, which took 0.5 s
    of a 10,000-record ``list --json``; items without it are encoded in C.
    """
    print_json_lines([json.dumps(item, ensure_ascii=False) for item in items], stream)


def print_json_lines(lines: list[str], stream: IO[str] | None = None) -> None:
    """:func:`print_json_array` of items already encoded, one a line.

    Written line by line rather than joined first: ``list --json`` of 10,000 records is
    20 MB, and each copy of it cost more than writing it (the stream encodes in chunks).
    """
    if not lines:
        emit("[]", stream)
        return
    out = stream or sys.stdout
    with _writing(out):
        out.write("[\n")
        last = len(lines) - 1
        for n, line in enumerate(lines):
            out.write(line)
            out.write(",\n" if n < last else "\n]\n")
