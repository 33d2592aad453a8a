"""``check --suggest``: the lessons that lack what would get them found (SPEC.md §3).

A lesson reaches an agent only through words it shares with the task; its asked-as lines
are how tasks that share none with its title find it. A lesson without them is valid, and
this names them so that whoever knows the lesson can add them, most pushed first: those are
the lessons agents are handed, whose reach matters most.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reliora_git.search.rank import FIELD_SEPARATOR
from reliora_git.storage.index import StoreIndex


@dataclass(frozen=True)
class Unasked:
    """An active lesson without asked-as lines, and how often hooks pushed it."""

    id: str
    title: str
    locator: str
    pushes: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "locator": self.locator, "pushes": self.pushes}


def without_asked_as(index: StoreIndex, pushes: Mapping[str, int]) -> list[Unasked]:
    """The active lessons whose asked-as field is empty, most pushed first, then by id.

    ``pushes``: lesson id → pushes that named it (agents/ledger.py, read by the caller).
    """
    found = []
    for slot in index.slots():
        doc = index.inverted.docs[slot]
        if doc is None or not doc.is_active:
            continue
        asked = index.text_of(slot).rpartition(FIELD_SEPARATOR)[2]
        if not asked.strip():
            found.append(Unasked(doc.id, doc.title, doc.locator, pushes.get(doc.id, 0)))
    found.sort(key=lambda lesson: (-lesson.pushes, lesson.id))
    return found
