"""``reliora org search``: SPEC.md §5 over every synced repository, ranked in PostgreSQL.

The database holds the local index's postings (term → record, with a bit per
scoring component), so one statement does what ``InvertedIndex.rank_slots``
does: the terms each query token matches by the rule of §4 (exact, the ones it
extends, the ones that extend it), each record's components per token, the
exact phrase confirmed on the few records that hold every token exactly in one
component, the score of §5 in float8 (the same IEEE operations, in the same
order, as rank.score_masks), the level, the filters, the order (rank.sort_key) and the limit.
Only the shown results leave the server, with their masks, and each is scored
again by :func:`reliora_git.search.rank.score_masks` — the one formula — for its JSON.

Why in SQL rather than candidates scored in Python: a common word matches tens
of thousands of records at 100,000; shipping each candidate's masks to the
client cost more than the whole query (measured in docs/benchmarks.md), and in
SQL the work stays where Citus can spread it over shards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliora_git.org.pgtext import shown, shown_all
from reliora_git.records.errors import RelioraError
from reliora_git.records.model import FeedbackSummary
from reliora_git.search.inverted import (
    MAX_SUGGESTIONS,
    MIN_SUGGESTED,
    within_distance,
    worth_suggesting,
)
from reliora_git.search.jsonio import hit_to_json, search_document
from reliora_git.search.rank import (
    CONTEXT_MASK,
    LEVELS,
    MASK_WEIGHTS,
    ORDER_SCALE,
    ContextFilter,
    Hit,
    IndexedRecord,
    Query,
    least_matches,
    matched_terms,
    score_masks,
)
from reliora_git.search.tokens import PREFIX_MIN

if TYPE_CHECKING:
    import psycopg

#: The terms each query token matches (SPEC.md §4): exact lookups (the token itself
#: and the shorter terms it extends) and ranges (the longer terms that extend it).
_MATCHED_TERMS = """
qt AS (
    SELECT x.tok, t.term_id, x.exact
    FROM unnest(%(x_tok)s::int[], %(x_term)s::text[], %(x_exact)s::bool[]) AS x(tok, term, exact)
    JOIN terms t ON t.term = x.term
    UNION ALL
    SELECT r.tok, t.term_id, false
    FROM unnest(%(r_tok)s::int[], %(r_term)s::text[]) AS r(tok, term)
    JOIN terms t ON t.term > r.term AND t.term < r.term || chr(1114111)
        AND starts_with(t.term, r.term)
)"""

_REPO_FILTER = "(%(all_repos)s OR {alias}.repo_id = ANY(%(repo_ids)s::int[]))"


def scored_sql(tokens: int, with_level: bool) -> str:
    """``WITH …`` ending in ``lv``: every result of a query of ``tokens`` tokens, scored.

    One aggregation over the postings of the matched terms gives each record the
    components of each token (``m0, m1, …``) and the components holding each token
    exactly (``e0, e1, …``). The text depends only on the token count and on
    whether a level is asked for; every value is a parameter.
    """
    each = range(tokens)
    per_token = ",\n        ".join(
        f"bit_or(p.mask) FILTER (WHERE qt.tok = {n}) AS m{n}, "
        f"bit_or(p.mask) FILTER (WHERE qt.tok = {n} AND qt.exact) AS e{n}"
        for n in each
    )
    masks = ", ".join(f"coalesce(m{n}, 0)" for n in each)
    matched = " + ".join(f"(m{n} IS NOT NULL)::int" for n in each)
    # rank.MASK_WEIGHTS as a parameter: SQL arrays start at 1, so mask m is at m + 1.
    raw = " + ".join(f"(%(weights)s::int[])[coalesce(m{n}, 0) + 1]" for n in each)
    common = " & ".join(f"coalesce(e{n}, 0)" for n in each)
    level = (
        """,
        CASE WHEN round(coverage::numeric, 9) >= 0.75 AND round(relevance::numeric, 9) >= 18
                THEN 'strong'
            WHEN round(coverage::numeric, 9) >= 0.40 AND round(relevance::numeric, 9) >= 8
                THEN 'moderate'
            ELSE 'weak' END AS level"""
        if with_level
        else ""
    )
    return f"""WITH {_MATCHED_TERMS},
s AS (
    SELECT p.repo_id, p.rec,
        {per_token}
    FROM qt JOIN postings p ON p.term_id = qt.term_id
    WHERE {_REPO_FILTER.format(alias="p")}
    GROUP BY p.repo_id, p.rec
),
c AS (
    SELECT repo_id, rec, ARRAY[{masks}]::int[] AS masks, {matched} AS matched,
        {raw} AS raw, {common} AS common
    FROM s
),
h AS (
    SELECT c.*, r.id, r.repo_name, r.feedback, r.active,
        CASE WHEN %(phrase)s::text IS NOT NULL AND c.common <> 0
            THEN EXISTS (
                SELECT 1 FROM records t WHERE t.repo_id = c.repo_id AND t.rec = c.rec
                    AND strpos(t.text, %(phrase)s::text) > 0)
            ELSE false END AS phrase
    FROM c JOIN records r ON r.repo_id = c.repo_id AND r.rec = c.rec
    WHERE c.matched >= %(least)s AND r.visible AND (%(retired)s OR r.active)
        AND (NOT %(has_context)s OR EXISTS (
            SELECT 1 FROM postings x
            WHERE x.repo_id = c.repo_id AND x.rec = c.rec
                AND x.term_id = ANY(%(context_ids)s::int[]) AND x.mask & %(context_mask)s <> 0))
),
sc AS (
    SELECT h.*, h.matched::float8 / %(n)s::float8 AS coverage,
        (h.raw::float8 + CASE WHEN h.phrase THEN 12::float8 ELSE 0::float8 END)
            * (0.6::float8 + 0.4::float8 * (h.matched::float8 / %(n)s::float8)) AS relevance
    FROM h
),
lv AS (
    SELECT sc.*, sc.relevance + sc.feedback AS score{level}
    FROM sc
)"""


def page_sql(tokens: int, with_level: bool) -> str:
    """The shown results, best first, with the wide columns and the count of all results.

    Scored with ``retired`` true: the retired and superseded results are left out here,
    unless ``include_retired``, and counted (``retiredMatches``).
    """
    level = "level = ANY(%(levels)s::text[]) AND " if with_level else ""
    return (
        scored_sql(tokens, with_level)
        + f""",
kept AS (SELECT * FROM lv WHERE {level}(%(include_retired)s OR active)),
page AS (
    SELECT repo_id, rec, round(score * %(scale)s::float8) AS score_key,
        round(relevance * %(scale)s::float8) AS relevance_key, id, repo_name, masks, phrase
    FROM kept
    ORDER BY round(score * %(scale)s::float8) DESC, round(relevance * %(scale)s::float8) DESC,
        id, repo_name
    LIMIT %(limit)s
)
SELECT r.id, r.title, r.locator, r.tags, r.shown_status, r.confidence, r.fingerprint,
    r.supersedes, r.superseded_by, r.feedback_counts, r.feedback, page.masks,
    page.phrase, repos.name, repos.commit, r.summary, r.text,
    (SELECT count(*) FROM lv WHERE {level}NOT active) AS retired,
    (SELECT count(*) FROM kept) AS total
FROM page JOIN records r ON r.repo_id = page.repo_id AND r.rec = page.rec
JOIN repos ON repos.repo_id = page.repo_id
ORDER BY page.score_key DESC, page.relevance_key DESC, page.id, page.repo_name
"""
    )


def level_counts_sql(tokens: int) -> str:
    return scored_sql(tokens, True) + " SELECT level, count(*) FROM lv GROUP BY level"


def retired_count_sql(tokens: int, with_level: bool) -> str:
    """How many retired or superseded records match (scored with ``retired`` true)."""
    level = "level = ANY(%(levels)s::text[]) AND " if with_level else ""
    return scored_sql(tokens, with_level) + f" SELECT count(*) FROM lv WHERE {level}NOT active"


#: Which query tokens match something in the records searched (for "did you mean").
_TOKENS_FOUND = (
    "WITH "
    + _MATCHED_TERMS
    + """
SELECT DISTINCT qt.tok FROM qt
WHERE EXISTS (
    SELECT 1 FROM postings p JOIN records r ON r.repo_id = p.repo_id AND r.rec = p.rec
    WHERE p.term_id = qt.term_id AND r.visible AND """
    + _REPO_FILTER.format(alias="p")
    + ")"
)
_DOCUMENT_FREQUENCY = (
    "WITH "
    + _MATCHED_TERMS
    + """
SELECT qt.tok, count(DISTINCT (p.repo_id, p.rec)) FROM qt
JOIN postings p ON p.term_id = qt.term_id
JOIN records r ON r.repo_id = p.repo_id AND r.rec = p.rec AND r.visible
WHERE """
    + _REPO_FILTER.format(alias="p")
    + " GROUP BY qt.tok"
)


def _term_params(tokens: Sequence[str]) -> dict[str, list[Any]]:
    """The lookups of :data:`_MATCHED_TERMS` for ``tokens`` (numbered in order)."""
    x_tok: list[int] = []
    x_term: list[str] = []
    x_exact: list[bool] = []
    r_tok: list[int] = []
    r_term: list[str] = []
    for n, token in enumerate(tokens):
        x_tok.append(n)
        x_term.append(token)
        x_exact.append(True)
        if len(token) >= PREFIX_MIN:
            for k in range(PREFIX_MIN, len(token)):
                x_tok.append(n)
                x_term.append(token[:k])
                x_exact.append(False)
            r_tok.append(n)
            r_term.append(token)
    return {"x_tok": x_tok, "x_term": x_term, "x_exact": x_exact, "r_tok": r_tok, "r_term": r_term}


@dataclass
class OrgResult:
    query: Query
    context: ContextFilter | None
    hits: list[Hit]
    #: (repository, commit, the record's active superseders) of each hit.
    places: list[tuple[str, str, list[str]]]
    total: int
    suggestions: dict[str, list[str]] = field(default_factory=dict)
    outside_filters: dict[str, int] = field(default_factory=dict)
    min_level: str | None = None
    #: Each hit's summary (records/summary.py, made by org sync).
    summaries: list[str] = field(default_factory=list)
    #: Retired or superseded records that also match, left out (without --include-retired).
    retired_matches: int = 0
    #: Each hit's matched tokens → the record's words they matched (rank.matched_terms).
    terms: list[dict[str, list[str]]] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        """The ``search --json`` document, each result with its ``repo`` and ``commit``."""
        document = search_document(
            self.query,
            self.context,
            [],
            None,
            self.suggestions,
            outside_filters=self.outside_filters,
            retired_matches=self.retired_matches,
        )
        document["total"] = self.total
        results = []
        for rank, (hit, (repo, commit, superseded_by), summary, terms) in enumerate(
            zip(self.hits, self.places, self.summaries, self.terms, strict=True), start=1
        ):
            # The database keeps no history: freshness is for `reliora stale` in the repo.
            found = hit_to_json(rank, hit, {hit.doc.id: superseded_by}, {}, summary, terms)
            results.append({"rank": rank, "repo": repo, "commit": commit, **found})
        document["results"] = results
        return document


class OrgSearcher:
    """Searches the organisation database; keep one for many queries (a long-running process).

    psycopg prepares a statement on the server once it has run a few times, so
    repeated queries skip planning.
    """

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def repo_ids(self, names: Sequence[str]) -> list[int]:
        found = dict(
            self.conn.execute(
                "SELECT name, repo_id FROM repos WHERE name = ANY(%s::text[])", (list(names),)
            ).fetchall()
        )
        unknown = [name for name in names if name not in found]
        if unknown:
            raise RelioraError(
                f"no synced repository named {', '.join(map(repr, unknown))} "
                "(see `reliora org status`)",
                code="unknown_repo",
            )
        return [found[name] for name in names]

    def search(
        self,
        text: str,
        *,
        repos: Sequence[str] = (),
        project_context: str | None = None,
        min_level: str | None = None,
        include_retired: bool = False,
        limit: int = 10,
    ) -> OrgResult:
        query = Query.parse(text)
        context = ContextFilter.parse(project_context) if project_context else None
        # Retired and superseded records are scored too, then left out and counted.
        params = self._params(query, context, repos, min_level, True)
        params.update(limit=limit, include_retired=include_retired)
        page = page_sql(len(query.tokens), min_level is not None)
        rows = self.conn.execute(page, params).fetchall()
        hits, places, summaries = [], [], []
        terms: list[dict[str, list[str]]] = []
        for row in rows:
            hit, place = _hit_of(query, row)
            hits.append(hit)
            places.append(place)
            summaries.append(shown(row[-4]) or "")
            # What each matched token matched (rank.matched_terms), as local search says it.
            terms.append(matched_terms(row[-3] or "", hit.matched_tokens))
        total = int(rows[0][-1]) if rows else 0
        retired = int(rows[0][-2]) if rows else 0
        if not rows and not include_retired:
            counted = retired_count_sql(len(query.tokens), min_level is not None)
            retired = int(self.conn.execute(counted, params).fetchone()[0])  # type: ignore[index]
        if include_retired:
            retired = 0
        outside: dict[str, int] = {}
        if not rows and (min_level is not None or context is not None):
            unfiltered = self._params(query, None, repos, None, include_retired)
            counts = level_counts_sql(len(query.tokens))
            outside = dict(self.conn.execute(counts, unfiltered).fetchall())
        suggestions = self._suggestions(query.token_texts, params)
        self.conn.rollback()  # read only: end the transaction psycopg opened
        return OrgResult(
            query,
            context,
            hits,
            places,
            total,
            suggestions,
            outside,
            min_level,
            summaries,
            retired,
            terms,
        )

    def _params(
        self,
        query: Query,
        context: ContextFilter | None,
        repos: Sequence[str],
        min_level: str | None,
        include_retired: bool,
    ) -> dict[str, Any]:
        allowed = LEVELS[: LEVELS.index(min_level) + 1] if min_level else LEVELS
        tokens = query.token_texts
        params: dict[str, Any] = _term_params(tokens)
        params.update(
            n=len(tokens),
            scale=ORDER_SCALE,
            weights=MASK_WEIGHTS,
            least=least_matches(len(tokens), allowed[-1]),
            phrase=query.phrase,
            retired=include_retired,
            levels=list(allowed),
            all_repos=not repos,
            repo_ids=self.repo_ids(repos) if repos else [],
            has_context=context is not None,
            context_ids=self._context_ids(context) if context is not None else [],
            context_mask=CONTEXT_MASK,
        )
        return params

    def _context_ids(self, context: ContextFilter) -> list[int]:
        """The terms that the --project-context tokens match (rule of §4)."""
        lookups = _term_params([t.text for t in context.tokens])
        rows = self.conn.execute("WITH " + _MATCHED_TERMS + " SELECT term_id FROM qt", lookups)
        return sorted({term_id for (term_id,) in rows})

    def _suggestions(self, tokens: list[str], params: dict[str, Any]) -> dict[str, list[str]]:
        """As inverted.suggest_for: close terms for each token that matches nothing here."""
        found = {n for (n,) in self.conn.execute(_TOKENS_FOUND, params)}
        suggestions: dict[str, list[str]] = {}
        for n, token in enumerate(tokens):
            if n in found:
                continue
            if len(token) < MIN_SUGGESTED:
                continue
            limit = 1 if len(token) <= 4 else 2
            near = self.conn.execute(
                "SELECT term FROM terms WHERE length(term) BETWEEN %s AND %s",
                (len(token) - limit, len(token) + limit),
            )
            close = [
                term
                for (term,) in near
                if worth_suggesting(token, term) and within_distance(token, term, limit)
            ]
            if not close:
                continue
            counts = dict(
                self.conn.execute(
                    _DOCUMENT_FREQUENCY,
                    {**params, **_term_params(close)},
                ).fetchall()
            )
            ranked = sorted((-counts.get(i, 0), term) for i, term in enumerate(close))
            chosen = [term for count, term in ranked if count < 0][:MAX_SUGGESTIONS]
            if chosen:
                suggestions[token] = chosen
        return suggestions


def _hit_of(query: Query, row: Sequence[Any]) -> tuple[Hit, tuple[str, str, list[str]]]:
    """A result row scored again by the one formula (rank.score_masks)."""
    (rid, title, locator, tags, status, confidence, fingerprint, supersedes, superseded_by,
     counts, adjustment, masks, phrase, repo, commit, _summary, _text, _retired,
     _total) = row  # fmt: skip
    # Title and tags as the record holds them (the database keeps U+0000 escaped: pgtext.py).
    doc = IndexedRecord(
        rid,
        shown(title),
        locator,
        tuple(shown_all(tags)),
        status,
        confidence,
        "",
        fingerprint,
        tuple(supersedes),
    )
    token_masks = list(masks)
    success, partial, failure, not_applicable, outdated = counts
    feedback = FeedbackSummary(success, partial, failure, not_applicable, outdated, adjustment)
    hit = score_masks(doc, query, token_masks, phrase, feedback)
    return hit, (repo, commit, list(superseded_by))
