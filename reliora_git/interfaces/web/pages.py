"""What each page of ``reliora serve`` shows, as plain values for its template.

Every page reads the store through the index the server holds (storage/index.py
``LiveIndex``) and the same operations the commands call: a search is
``search --json``'s document, one lesson is ``show --json``'s, "try a prompt" is
``brief --push``, the guards are ``guard list``, the stale lessons ``stale``, the
cold-start list ``history`` (this repository's git history only: the server reads
nothing outside the repository, so no agent transcripts under HOME), the sessions
``agent log``. Nothing here writes: no draft, no session memory, no feedback.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliora_git.records.errors import RelioraError
from reliora_git.storage.index import StoreIndex
from reliora_git.storage.store import Store, check_id

#: Search results shown.
SEARCH_SHOWN = 20
#: Related lessons under one lesson.
RELATED_SHOWN = 5
#: Entries of the cold-start list.
HISTORY_SHOWN = 20
#: Seconds before a cold-start page that found its list still being made asks again.
HISTORY_RETRY = 1
MAX_PROMPT = 20_000
MAX_FILES_TEXT = 10_000


@dataclass
class Memo:
    """Answers that depend on the index and on HEAD (stale lessons, the cold-start list),
    kept until either changes: they read git history, too slow for every page. One
    computation of a name at a time: a second caller waits for the first one's answer."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    locks: dict[str, threading.Lock] = field(default_factory=dict)
    #: Name → the index and HEAD it was computed for (the index itself, not its id: an id
    #: may be reused by a later index), and the answer.
    values: dict[str, tuple[StoreIndex, str, Any]] = field(default_factory=dict)

    def making(self, name: str) -> threading.Lock:
        """The lock held while ``name`` is being made."""
        with self.lock:
            return self.locks.setdefault(name, threading.Lock())

    def busy(self, name: str) -> bool:
        """Whether ``name`` is being made now (by the warm-up or by another visit)."""
        return self.making(name).locked()

    def get(self, name: str, index: StoreIndex, head: str, make: Any) -> Any:
        with self.making(name):
            found = self.values.get(name)
            if found is not None and found[0] is index and found[1] == head:
                return found[2]
            value = make()
            self.values[name] = (index, head, value)
            return value


def start_warming(store: Store, index: StoreIndex, memo: Memo) -> Callable[[], None]:
    """Begin filling the memo (stale lessons, the cold-start list) so that no visit waits
    for git history; returns the rest of the work, for a background thread. Call it while
    this process runs one thread. A failure here is the page's to report.

    The cold-start list is most of the work (about 1.4 s at 10,000 records): it is made
    in a worker process forked now (storage/parallel.py), so that the pages answered
    meanwhile do not share the GIL with it. Its place in the memo is held until the
    answer comes, so a visit waits for it rather than making it a second time.
    """
    from reliora_git.interfaces.web.listing import created_of
    from reliora_git.storage.parallel import call_forked

    making = memo.making("history")
    making.acquire()
    _FORKED.append((store, index))
    try:
        future = call_forked(_history_elsewhere)
    finally:
        _FORKED.pop()  # the worker was forked with it

    def finish() -> None:
        try:
            with contextlib.suppress(RelioraError, OSError):  # the list's sort keys, first:
                memo.get("created", index, "", lambda: created_of(index))  # the first page
            with contextlib.suppress(RelioraError, OSError):
                stale_ids(store, index, memo)
            if future is not None:
                with contextlib.suppress(Exception):  # a failed worker: made here instead
                    head, value = future.result()
                    memo.values["history"] = (index, head, value)
        finally:
            making.release()
        with contextlib.suppress(RelioraError, OSError):
            history_page(store, index, memo)

    return finish


#: The store and index a forked worker makes the cold-start list of (set only while forking).
_FORKED: list[tuple[Store, StoreIndex]] = []


def _history_elsewhere() -> tuple[str, dict[str, Any]]:
    """(HEAD, the cold-start list), in the forked worker."""
    from reliora_git.interfaces.history_document import history_document

    store, _ = _FORKED[-1]
    head = head_of(store)
    return head, history_document(store, None, False, HISTORY_SHOWN, False)


def head_of(store: Store) -> str:
    """HEAD's commit ("" outside git or before the first commit)."""
    from reliora_git.gitrepo import git

    try:
        out = git.run(["rev-parse", "--verify", "-q", "HEAD"], store.root, check=False)
    except RelioraError:
        return ""
    return out.decode("ascii", "replace").strip()


def stale_ids(store: Store, index: StoreIndex, memo: Memo) -> dict[str, Any]:
    """Record id → its freshness JSON, for the stale ones (``reliora stale``)."""
    from reliora_git.operations.lessons.about import stale_records

    def make() -> dict[str, Any]:
        found = stale_records(store, include_retired=True, index=index)
        return {data["id"]: fresh.to_json() for data, fresh in found.stale}

    return memo.get("stale", index, head_of(store), make)  # type: ignore[no-any-return]


def _marks(index: StoreIndex, slot: int, stale: dict[str, Any]) -> dict[str, Any]:
    doc = index.inverted.docs[slot]
    assert doc is not None
    superseded_by = index.superseded_by.get(doc.id, [])
    return {
        "status": "superseded" if superseded_by else doc.status,
        "supersededBy": list(superseded_by),
        "retired": not doc.is_active or bool(superseded_by),
        "stale": doc.id in stale,
        "guarded": bool(doc.guards) and doc.is_active,
    }


def lessons_page(
    store: Store,
    index: StoreIndex,
    memo: Memo,
    query: str,
    page: int,
    retired: bool,
    *,
    state: Path | None = None,
    sort: str = "newest",
    show: str = "all",
    tag: str = "",
) -> dict[str, Any]:
    """The lessons: a search (``search --json``'s document, every score explained, and
    whether the push would bring each result for the same text), or the list a page at a
    time, sorted and filtered (listing.py), retired, stale and guarded ones marked."""
    from reliora_git.interfaces.web.listing import created_of, list_page

    stale = stale_ids(store, index, memo)
    if query.strip():
        from reliora_git.operations.lessons import reads

        result = reads.search(store, query, include_retired=retired, index=index)
        freshness = result.shown_freshness(store, SEARCH_SHOWN)
        document = result.document(SEARCH_SHOWN, freshness)
        pushed = push_check(store, index, query, [item["id"] for item in document["results"]])
        for item in document["results"]:
            slot = index.slot_of(item["id"])
            item["marks"] = _marks(index, slot, stale) if slot is not None else {}
            item["push"] = pushed.get(item["id"])
            item["scoreLine"] = score_line(item)
        return {"query": query, "retired": retired, "search": document}
    created = memo.get("created", index, "", lambda: created_of(index))
    listed = list_page(
        index,
        lambda slot: _marks(index, slot, stale),
        created,
        state,
        sort=sort,
        show=show,
        tag=tag,
        page=page,
    )
    return {"query": "", "retired": retired, "staleCount": len(stale), **listed}


def push_check(
    store: Store, index: StoreIndex, text: str, ids: list[str]
) -> dict[str, dict[str, Any]]:
    """Id → what the push for ``text`` (a prompt, fresh session) does with each of ``ids``:
    its form (None: left out) and the rule and reason (brief/explain.py)."""
    from reliora_git.operations.brief.explain import explain
    from reliora_git.operations.brief.push import push
    from reliora_git.operations.brief.selection import Situation

    if not ids:
        return {}
    result = push(store, text, index=index)
    found = explain(result, index, Situation(text), ids)
    return {item.id: item.to_json() for item in found}


def score_line(item: dict[str, Any]) -> str:
    """A result's score as the CLI's one line (``search``'s explain): the fields that gave
    it, then the coverage it is multiplied by, then feedback (``title 11.43 + problems
    10.00 (×0.71 coverage)``)."""
    from reliora_git.search.rank import FIELDS

    breakdown = item["scoreBreakdown"]
    parts = [f"{name} {breakdown[name]:.2f}" for name in FIELDS if breakdown.get(name)]
    if breakdown.get("exactPhrase"):
        parts.append(f"phrase {breakdown['exactPhrase']:.2f}")
    line = " + ".join(parts) + f" (×{breakdown['coverageMultiplier']:.2f} coverage)"
    if breakdown.get("feedback"):
        line += f" {breakdown['feedback']:+.2f} feedback"
    return line


def lesson_page(store: Store, index: StoreIndex, memo: Memo, record_id: str) -> dict[str, Any]:
    """One lesson as ``show --json`` gives it, its marks, guards and related lessons."""
    from reliora_git.operations.guards.listing import guard_json
    from reliora_git.operations.guards.scan import guards_of_index
    from reliora_git.operations.lessons import reads
    from reliora_git.search.rank import Query

    shown = reads.show(store, record_id, index)  # the CLI's check of ids: never a path
    record = shown.document()
    record["supersededTitles"] = {i: title_of(index, i) for i in record.get("supersededBy") or []}
    record["supersedesTitles"] = {i: title_of(index, i) for i in record.get("supersedes") or []}
    own_id = shown.record.id
    slot = index.slot_of(own_id)
    marks = _marks(index, slot, stale_ids(store, index, memo)) if slot is not None else {}
    guards = [guard_json(g) for g in guards_of_index(index, [own_id])]
    words = " ".join([shown.record.title, *shown.record.tags])
    related = []
    for hit in index.similar_hits(Query.parse(words), own_id)[:RELATED_SHOWN]:
        related.append({"id": hit.doc.id, "title": hit.doc.title, "level": hit.level,
                        "score": round(hit.score, 3)})  # fmt: skip
    events = sorted(record["feedbackEvents"], key=lambda e: str(e.get("at")), reverse=True)
    return {
        "record": record,
        "sections": _sections(record),
        "marks": marks,
        "guards": guards,
        "related": related,
        "events": events,
    }


#: Record fields shown as the lesson's body, in the order of a record file.
SECTIONS = (
    ("Task", "task"),
    ("Problems", "problems"),
    ("Solution", "solution"),
    ("Why it worked", "whyItWorked"),
    ("Failed attempts", "failedAttempts"),
    ("Warnings", "warnings"),
    ("Applicability", "applicability"),
    ("Verification", "verification"),
    ("Asked as", "askedAs"),
)


def _sections(record: dict[str, Any]) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for heading, key in SECTIONS:
        value = record.get(key)
        if isinstance(value, list):
            items = [v for v in value if isinstance(v, str) and v.strip()]
            if items:
                found.append((heading, items))
        elif isinstance(value, str) and value.strip():
            found.append((heading, value))
    return found


def files_of(text: str) -> list[str]:
    """The files read, one a line, as ``--file`` takes them."""
    if len(text) > MAX_FILES_TEXT:
        raise RelioraError("the list of files is too long", code="usage")
    return [line.strip() for line in text.splitlines() if line.strip()]


def try_page(store: Store, index: StoreIndex, prompt: str, files_text: str) -> dict[str, Any]:
    """What the hooks push for ``prompt`` and the files read: ``reliora brief --push PROMPT
    --file F…`` exactly (a fresh session), each client's hook output carrying it, and why
    the best candidates were not pushed, or only as a line (``brief --push --explain``)."""
    from reliora_git.operations.agents.clients import CLIENTS
    from reliora_git.operations.brief.explain import explain_push
    from reliora_git.operations.brief.selection import Situation

    files = files_of(files_text)
    page: dict[str, Any] = {"prompt": prompt, "filesText": files_text, "ran": False}
    if not (prompt.strip() or files):
        return page
    if len(prompt) > MAX_PROMPT:
        raise RelioraError(f"a prompt here is at most {MAX_PROMPT} characters", code="usage")
    result, explained = explain_push(store, Situation(prompt, files=tuple(files)), index=index)
    text = result.text()
    document = result.to_json()
    # In the order the push's text has them: the lessons in full, then the lines.
    document["lessons"].sort(key=lambda lesson: lesson["form"] != "full")
    page.update(
        ran=True,
        text=text,
        chars=len(text),
        document=document,
        explained=[item.to_json() for item in explained],
        clients=[_client_output(name, store.root, prompt, text) for name in CLIENTS],
    )
    return page


def _client_output(name: str, root: Path, prompt: str, text: str) -> dict[str, Any]:
    """What client ``name``'s prompt hook prints for ``text`` (None: it has no prompt hook)."""
    from reliora_git.operations.agents.clients import load
    from reliora_git.operations.agents.clients.base import HookEvent

    module = load(name)
    event_name = module.PROMPT_EVENT
    if event_name is None or not text:
        return {"client": name, "event": event_name, "output": None}
    event = HookEvent("prompt", event_name, "", root, prompt=prompt)
    output = module.render_output(event, text)
    return {"client": name, "event": event_name, "output": readable_json(output)}


def readable_json(output: str) -> str:
    """A client's JSON output as a person reads it: indented, every character as itself
    (no ``\\u2039`` escapes; the page escapes the text, and shows invisible ones)."""
    import json

    try:
        return json.dumps(json.loads(output), indent=2, ensure_ascii=False)
    except ValueError:
        return output


def guards_page(store: Store, index: StoreIndex) -> dict[str, Any]:
    from reliora_git.operations.guards.listing import list_guards

    document = list_guards(store, index).to_json()
    for guard in document["guards"]:
        guard["title"] = title_of(index, guard["record"])
    return document


def title_of(index: StoreIndex, record_id: str) -> str:
    """The title of the record ``record_id`` ('' when the store has no such record)."""
    slot = index.slot_of(record_id)
    doc = index.inverted.docs[slot] if slot is not None else None
    return doc.title if doc is not None else ""


def stale_page(store: Store, index: StoreIndex, memo: Memo) -> dict[str, Any]:
    stale = stale_ids(store, index, memo)
    rows = []
    for record_id, fresh in sorted(stale.items()):
        slot = index.slot_of(record_id)
        doc = index.inverted.docs[slot] if slot is not None else None
        rows.append({"id": record_id, "title": doc.title if doc else "", "freshness": fresh})
    # Only a lesson that names paths can go stale: say so when none does.
    docs = index.inverted.docs
    with_paths = sum(bool(docs[slot].paths) for slot in index.slots())  # type: ignore[union-attr]
    return {"stale": rows, "withPaths": with_paths}


def history_page(store: Store, index: StoreIndex, memo: Memo, wait: bool = True) -> dict[str, Any]:
    """``reliora history``'s list, from git only (never agent transcripts under HOME).

    ``wait=False``: while the list is being made (the warm-up at start, or another
    visit), answer at once with ``pending`` (seconds before the page asks again) rather
    than wait for it: a page answers in a moment, and the list takes seconds on a large
    store."""
    from reliora_git.interfaces.history_document import history_document

    def make() -> dict[str, Any]:
        return history_document(store, None, False, HISTORY_SHOWN, False)

    if not wait and memo.busy("history"):
        return {"pending": HISTORY_RETRY}
    return memo.get("history", index, head_of(store), make)  # type: ignore[no-any-return]


def sessions_page(state: Path | None, index: StoreIndex) -> dict[str, Any]:
    from reliora_git.operations.agents.ledger import recent_sessions

    sessions = []
    for log in recent_sessions(state):
        document = log.to_json()
        ids = list(dict.fromkeys(lesson for p in log.pushes for lesson, _ in p.lessons))
        document["lessons"] = [{"id": i, "title": title_of(index, i)} for i in ids]
        sessions.append(document)
    return {"sessions": sessions}


def session_page(state: Path | None, session: str, index: StoreIndex) -> dict[str, Any]:
    from reliora_git.operations.agents.ledger import session_log

    document = session_log(state, session).to_json()
    for push in document["pushes"]:
        for lesson in push["lessons"]:
            lesson["title"] = title_of(index, lesson["id"])
    return document


def checked_id(value: str) -> str:
    """An id as the CLI checks it (storage.store.check_id): a path is never an id."""
    return check_id(value)
