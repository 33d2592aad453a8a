"""The JSON documents of SPEC.md §7. Pure: data in, JSON-ready dicts out (and back)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reliora_git.records.errors import RelioraError
from reliora_git.records.model import FeedbackEvent, FeedbackSummary, Guard, Problem, Record
from reliora_git.search.rank import ContextFilter, Hit, Query

#: JSON name → (Record attribute, kind), kind being 'text', 'list' or 'optional'.
RECORD_FIELDS: dict[str, tuple[str, str]] = {
    "id": ("id", "text"),
    "title": ("title", "text"),
    "tags": ("tags", "list"),
    "projectContext": ("project_context", "text"),
    "confidence": ("confidence", "optional"),
    "status": ("status", "text"),
    "created": ("created", "optional"),
    "updated": ("updated", "optional"),
    "author": ("author", "optional"),
    "supersedes": ("supersedes", "list"),
    "paths": ("paths", "list"),
    "task": ("task", "text"),
    "problems": ("problems", "list"),
    "solution": ("solution", "text"),
    "whyItWorked": ("why_it_worked", "text"),
    "failedAttempts": ("failed_attempts", "list"),
    "warnings": ("warnings", "list"),
    "applicability": ("applicability", "text"),
    "verification": ("verification", "text"),
    "askedAs": ("asked_as", "list"),
}


#: Where a record came from (``commit SHA (pull request #N), by NAME, DATE``): front matter
#: kept as written, taken from and given in JSON when present (SPEC.md §16).
SOURCE = "source"
#: What a drafted record was written from (SPEC.md §16): accepted in input, never saved.
EVIDENCE = "evidence"


def r4(value: float) -> float:
    return round(value, 4)


def record_to_json(record: Record) -> dict[str, Any]:
    data: dict[str, Any] = {
        name: getattr(record, attr) for name, (attr, _) in RECORD_FIELDS.items()
    }
    data["guards"] = [guard.to_json() for guard in record.guards]
    data["locator"] = record.locator
    source = record.extra_meta.get(SOURCE)
    if isinstance(source, str):
        data[SOURCE] = source
    return data


def record_from_json(data: Any) -> Record:
    """A Record from the input of ``record --json -``; unknown names are a usage error."""
    if not isinstance(data, dict):
        raise RelioraError("the JSON input must be one object", code="invalid_input")
    # A draft (``record --from-commit --json``, ``history --json``) carries its evidence: what
    # the lesson is written from, not part of it; taken back with the draft and dropped.
    unknown = sorted(set(data) - set(RECORD_FIELDS) - {"locator", "guards", SOURCE, EVIDENCE})
    if unknown:
        from reliora_git.records.jsonnames import json_name_hint

        hint = json_name_hint(unknown[0], RECORD_FIELDS)
        raise RelioraError(
            f"unknown field(s) in JSON input: {', '.join(unknown)}{hint}", code="invalid_input"
        )
    record = Record()
    for name, (attr, kind) in RECORD_FIELDS.items():
        value = data.get(name)
        if value is None:
            continue
        if kind == "list":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise RelioraError(f"'{name}' must be a list of strings", code="invalid_input")
            setattr(record, attr, [v.strip() for v in value if v.strip()])
        else:
            if not isinstance(value, str):
                raise RelioraError(f"'{name}' must be a string", code="invalid_input")
            setattr(record, attr, value.strip())
    if data.get("guards") is not None:
        record.guards = guards_from_json(data["guards"])
    if data.get(SOURCE) is not None:
        if not isinstance(data[SOURCE], str):
            raise RelioraError(f"'{SOURCE}' must be a string", code="invalid_input")
        if data[SOURCE].strip():
            record.extra_meta[SOURCE] = " ".join(data[SOURCE].split())
    return record


def guards_from_json(value: Any) -> list[Guard]:
    """``guards`` of JSON input: objects ``{pattern, paths, message, severity}`` (or patterns)."""
    from reliora_git.records.guards import parse_guards

    if not isinstance(value, list):
        raise RelioraError("'guards' must be a list of objects", code="invalid_input")
    guards, problems = parse_guards(value, None)
    errors = [p.message for p in problems if p.severity == "error"]
    if errors:
        raise RelioraError(f"'guards': {errors[0]}", code="invalid_input")
    return guards


#: SPEC.md §12's freshness of a record that git history says nothing about.
UNKNOWN_FRESHNESS: dict[str, Any] = {
    "state": "unknown",
    "changedPaths": [],
    "missingPaths": [],
    "commitsSince": 0,
}


def hit_to_json(
    rank: int,
    hit: Hit,
    superseded_by: Mapping[str, list[str]] | None = None,
    freshness: Mapping[str, Any] | None = None,
    summary: str | None = None,
    terms: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    """One search result; ``summary`` (records/summary.py) right after the title, and
    ``matchedTerms`` (each matched token → the record's words it matched) after
    ``matchedTokens``, when given."""
    doc = hit.doc
    found: dict[str, Any] = {
        "rank": rank,
        "id": doc.id,
        "title": doc.title,
    }
    if summary is not None:
        found["summary"] = summary
    found |= {
        "locator": doc.locator,
        "tags": list(doc.tags),
        "score": r4(hit.score),
        "relevance": r4(hit.relevance),
        "coverage": r4(hit.coverage),
        "matchLevel": hit.level,
        "matchedTokens": list(hit.matched_tokens),
    }
    if terms is not None:
        # matchedTokens stays as it was (programs read it); this says what each one matched.
        found["matchedTerms"] = {token: list(terms.get(token, [])) for token in hit.matched_tokens}
    found |= {
        "confidence": doc.confidence,
        "status": doc.status,
        "supersededBy": list((superseded_by or {}).get(doc.id, [])),
        "feedback": hit.feedback.to_json(),
        "scoreBreakdown": {name: r4(value) for name, value in hit.breakdown.items()},
    }
    if freshness is not None:
        fresh = freshness.get(doc.id)
        found["freshness"] = fresh.to_json() if fresh is not None else dict(UNKNOWN_FRESHNESS)
    return found


def search_document(
    query: Query,
    context: ContextFilter | None,
    hits: list[Hit],
    limit: int | None,
    suggestions: dict[str, list[str]] | None = None,
    warnings: list[RelioraError] | None = None,
    superseded_by: Mapping[str, list[str]] | None = None,
    freshness: Mapping[str, Any] | None = None,
    outside_filters: Mapping[str, int] | None = None,
    summaries: Mapping[str, str] | None = None,
    retired_matches: int = 0,
    matched_terms: Mapping[str, Mapping[str, list[str]]] | None = None,
) -> dict[str, Any]:
    """The ``search --json`` document; ``suggestions`` only when a query token matched nothing.

    ``warnings`` (a store folder that is a symbolic link, not read) only when there are any;
    ``truncatedTokens`` only when the query had more unique tokens than are searched;
    ``retiredMatches`` only when retired or superseded records matched and were left out.
    ``summaries``: record id → summary of the shown results. ``matched_terms``: record id →
    what its matched tokens matched (rank.matched_terms), for the shown results.
    """
    shown = hits if limit is None else hits[:limit]
    document: dict[str, Any] = {
        "query": query.text,
        "tokens": query.token_texts,
        "projectContext": None
        if context is None
        else {"text": context.text, "tokens": [t.text for t in context.tokens]},
        "total": len(hits),
        "results": [
            hit_to_json(
                i,
                hit,
                superseded_by,
                freshness,
                None if summaries is None else summaries.get(hit.doc.id, ""),
                None if matched_terms is None else matched_terms.get(hit.doc.id, {}),
            )
            for i, hit in enumerate(shown, start=1)
        ],
    }
    if query.truncated_tokens:
        # Only when the query was cut (Query.parse): documents of usual queries keep their keys.
        document["truncatedTokens"] = query.truncated_tokens
    if suggestions:
        document["suggestions"] = suggestions
    if warnings:
        document["warnings"] = [error.to_json()["error"] for error in warnings]
    if outside_filters:
        # No result passed --min-level or --project-context: how many each level has without.
        document["outsideFilters"] = dict(outside_filters)
    if retired_matches:
        # Like outsideFilters: what exists just outside what was asked (--include-retired).
        document["retiredMatches"] = retired_matches
    return document


def event_to_json(event: FeedbackEvent) -> dict[str, Any]:
    """One feedback event (``show --json`` ``feedbackEvents``, review, MCP)."""
    return {
        "record": event.record,
        "outcome": event.outcome,
        "at": event.at,
        "author": event.author,
        "note": event.note,
        "locator": event.locator,
    }


def show_document(
    record: Record,
    summary: FeedbackSummary,
    events: list[Any],
    superseded_by: list[str] | None = None,
) -> dict[str, Any]:
    data = record_to_json(record)
    data["supersededBy"] = list(superseded_by or [])
    data["feedback"] = summary.to_json()
    data["feedbackEvents"] = events
    return data


def problem_to_json(problem: Problem) -> dict[str, Any]:
    return {"severity": problem.severity, "message": problem.message, "line": problem.line}
