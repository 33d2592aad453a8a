"""``about`` and ``stale``: the records about code, and those whose code moved on (SPEC.md §12).

Both leave retired and superseded records out unless asked (an agent told to read
the lessons about a file before editing it must not follow withdrawn advice), and
mark them when shown: :func:`lifecycle_of` gives a record's JSON with its status as
the store makes it, :func:`lifecycle_mark` the word people see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reliora_git.operations.api import freshness_of
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import Store

if TYPE_CHECKING:
    from reliora_git.operations.history import Freshness


@dataclass
class About:
    #: The paths asked about, top-relative (folders end with ``/``).
    paths: list[str]
    #: Matching records as JSON, newest first, each with its freshness. Their ``status``
    #: is what the store makes of them ("superseded" whatever the file says), and
    #: ``supersededBy`` names the active records that replace them.
    records: list[tuple[dict[str, Any], Freshness]]

    def to_json(self) -> dict[str, Any]:
        """The ``about --json`` document (and the MCP tool's)."""
        return {
            "paths": self.paths,
            "results": [
                {
                    "id": data["id"],
                    "title": data["title"],
                    "locator": data["locator"],
                    "created": data.get("created"),
                    "status": data.get("status"),
                    "supersededBy": data.get("supersededBy") or [],
                    "paths": data.get("paths") or [],
                    "freshness": fresh.to_json(),
                }
                for data, fresh in self.records
            ],
        }


def lifecycle_of(index: StoreIndex, slot: int) -> dict[str, Any]:
    """The record's JSON with its status as the store makes it (SPEC.md §11) and who
    supersedes it: what ``about``, ``stale`` and review mark retired records with."""
    doc = index.inverted.docs[slot]
    assert doc is not None
    data = dict(index.record_json(slot))
    data["status"] = doc.status
    data["supersededBy"] = list(index.superseded_by.get(doc.id, []))
    return data


def lifecycle_mark(data: dict[str, Any]) -> str | None:
    """``retired`` or ``superseded by X`` for a record that is not active, else None."""
    if data.get("supersededBy"):
        return "superseded by " + ", ".join(str(i) for i in data["supersededBy"])
    status = data.get("status")
    return None if status in (None, "active") else str(status)


def about(
    store: Store,
    given: list[str],
    index: StoreIndex | None = None,
    *,
    include_retired: bool = False,
) -> About:
    """The records whose ``paths`` are about these files or folders (SPEC.md §12).

    Retired and superseded records are left out unless ``include_retired``: an agent told
    to read them before an edit must not follow advice that was withdrawn.
    """
    from reliora_git.operations.history import paths_match
    from reliora_git.operations.paths import repo_path

    wanted = [repo_path(store, raw) for raw in given]
    index = index or open_index(store)
    matches = []
    docs = index.inverted.docs
    for slot in index.slots():
        doc = docs[slot]
        assert doc is not None
        if not doc.paths or not (include_retired or doc.is_active):
            continue  # the index holds each record's paths: only matches are read
        if any(paths_match(p, w) for p in doc.paths for w in wanted):
            matches.append(lifecycle_of(index, slot))
    matches.sort(key=lambda d: (d.get("created") or "", d["id"]), reverse=True)
    found = freshness_of(store, index, [d["id"] for d in matches])
    return About(wanted, [(d, found[d["id"]]) for d in matches])


def stale_records(
    store: Store, *, include_retired: bool = False
) -> tuple[int, list[tuple[dict[str, Any], Freshness]]]:
    """How many records are measured, and the stale ones (record JSON, freshness).

    Measured: those that name code paths or have ``outdated`` feedback (SPEC.md §12);
    retired and superseded ones only with ``include_retired``.
    """
    from reliora_git.operations.history import freshness_events

    index = open_index(store)
    docs = index.inverted.docs
    slots = [
        slot
        for slot in index.slots()
        if include_retired or docs[slot].is_active  # type: ignore[union-attr]
    ]
    ids = {docs[slot].id for slot in slots}  # type: ignore[union-attr]
    events = freshness_events(index.event_locators, index.event_values, ids)
    with_paths = [
        slot
        for slot in slots
        if docs[slot].paths  # type: ignore[union-attr]
        or any(o == "outdated" for _, o in events.get(docs[slot].id, ()))  # type: ignore[union-attr]
    ]
    ids_measured = [docs[slot].id for slot in with_paths]  # type: ignore[union-attr]
    found = freshness_of(store, index, ids_measured)
    stale = [
        (lifecycle_of(index, slot), found[record_id])
        for slot, record_id in zip(with_paths, ids_measured, strict=True)
        if found[record_id].state == "stale"
    ]
    return len(with_paths), stale
