"""The view's list of lessons: sorted (newest, most pushed, most helpful), filtered (a tag,
stale, guarded, retired), a page at a time with page numbers, and the count of files that
could not be read.

What every record's sort keys need (its creation date from its cached JSON) is read once
per index (the view's memo), so a page of a 10,000-lesson store costs a sort, not a read
of every record.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from reliora_git.storage.index import StoreIndex

#: Lessons a page of the list shows.
PAGE_SIZE = 50
#: How the list may be sorted: value → label.
SORTS = {"newest": "newest first", "pushed": "most pushed", "helpful": "most helpful"}
#: What the list may be filtered to: value → label.
SHOWS = {
    "all": "all lessons",
    "active": "active only",
    "stale": "stale",
    "guarded": "guarded",
    "retired": "retired or superseded",
}
#: Sessions read for "most pushed" (the session memory of this clone).
SESSIONS_COUNTED = 1000
#: Page numbers shown on each side of the current page (the first and last always are).
PAGES_AROUND = 3


def created_of(index: StoreIndex) -> dict[int, str]:
    """Slot → its ``created`` date ('' without one), for every record: read once an index."""
    found = {}
    for slot in index.slots():
        created = index.record_json(slot).get("created")
        found[slot] = created if isinstance(created, str) else ""
    return found


def pushed_counts(state: Path | None) -> Counter[str]:
    """How many times each lesson was pushed in this clone's recent sessions."""
    from reliora_git.operations.agents.ledger import recent_sessions

    counts: Counter[str] = Counter()
    for log in recent_sessions(state, SESSIONS_COUNTED):
        for push in log.pushes:
            counts.update(lesson for lesson, _ in push.lessons)
    return counts


def page_numbers(page: int, pages: int) -> list[int | None]:
    """The page numbers to link: the first, the last, and those around ``page``; None where
    numbers are left out (shown as an ellipsis)."""
    wanted = {1, pages, *range(page - PAGES_AROUND, page + PAGES_AROUND + 1)}
    found: list[int | None] = []
    for number in sorted(n for n in wanted if 1 <= n <= pages):
        if found and found[-1] is not None and number > found[-1] + 1:
            found.append(None)
        found.append(number)
    return found


def list_page(
    index: StoreIndex,
    marks_of: Any,
    created: dict[int, str],
    state: Path | None,
    *,
    sort: str,
    show: str,
    tag: str,
    page: int,
) -> dict[str, Any]:
    """One page of the list. ``marks_of(slot)`` gives a record's marks (retired, stale,
    guarded); ``created``: :func:`created_of`."""
    sort = sort if sort in SORTS else "newest"
    show = show if show in SHOWS else "all"
    docs = index.inverted.docs
    slots = list(index.slots())  # sorted here: never the index's own list
    wanted_tag = tag.strip().casefold()
    if wanted_tag:
        slots = [s for s in slots if any(t.casefold() == wanted_tag for t in docs[s].tags)]  # type: ignore[union-attr]
    marks = {slot: marks_of(slot) for slot in slots} if show != "all" else {}
    if show == "active":
        slots = [s for s in slots if not marks[s]["retired"]]
    elif show in ("stale", "guarded", "retired"):
        slots = [s for s in slots if marks[s][show]]
    pushed: Counter[str] = Counter()

    def id_of(slot: int) -> str:
        doc = docs[slot]
        assert doc is not None
        return doc.id

    # Each sort ends on the newest, then the id: the order is total, so pages never overlap.
    slots.sort(key=id_of)
    slots.sort(key=lambda s: created.get(s, ""), reverse=True)
    if sort == "pushed":
        pushed = pushed_counts(state)
        slots.sort(key=lambda s: pushed.get(id_of(s), 0), reverse=True)
    elif sort == "helpful":
        feedback = index.feedback

        def helpful(slot: int) -> tuple[float, int]:
            summary = feedback.get(id_of(slot))
            return (summary.adjustment, summary.success) if summary else (0.0, 0)

        slots.sort(key=helpful, reverse=True)
    pages = max(1, -(-len(slots) // PAGE_SIZE))
    page = min(max(page, 1), pages)
    rows = []
    for slot in slots[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]:
        doc = docs[slot]
        assert doc is not None
        summary = index.feedback.get(doc.id)
        rows.append(
            {
                "id": doc.id,
                "title": doc.title,
                "tags": list(doc.tags),
                "created": (created.get(slot) or "")[:10],
                "marks": marks.get(slot) or marks_of(slot),
                "pushed": pushed.get(doc.id, 0),
                "helpful": summary.success if summary else 0,
            }
        )
    return {
        "rows": rows,
        "pageNumber": page,
        "pages": pages,
        "pageNumbers": page_numbers(page, pages),
        "total": len(slots),
        "sort": sort,
        "show": show,
        "tag": tag.strip(),
        "sorts": SORTS,
        "shows": SHOWS,
        "invalid": len(index.skipped),
    }
