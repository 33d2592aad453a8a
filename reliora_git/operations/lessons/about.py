"""``about`` and ``stale``: the records about code, and those whose code moved on (SPEC.md §12).

Both leave retired and superseded records out unless asked (an agent told to read
the lessons about a file before editing it must not follow withdrawn advice), and
mark them when shown: :func:`lifecycle_of` gives a record's JSON with its status as
the store makes it, :func:`lifecycle_mark` the word people see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliora_git.operations.freshness import freshness
from reliora_git.operations.lessons.reads import freshness_of
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import Store

if TYPE_CHECKING:
    from reliora_git.operations.freshness import Freshness, Judged


@dataclass
class About:
    #: The paths asked about, top-relative (folders end with ``/``).
    paths: list[str]
    #: Matching records as JSON, newest first, each with its freshness. Their ``status``
    #: is what the store makes of them ("superseded" whatever the file says), and
    #: ``supersededBy`` names the active records that replace them.
    records: list[tuple[dict[str, Any], Freshness]]
    #: By record id: its active guards that look at the paths (operations/guards/listing.py),
    #: a reason to list a record whose own ``paths`` do not name them (SPEC.md §15).
    guards: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def matched_by(self, data: dict[str, Any]) -> list[str]:
        """Why a record is listed: ``paths`` (its own paths name the files), ``guard``."""
        why = ["paths"] if self._by_paths(data) else []
        return why + (["guard"] if data["id"] in self.guards else [])

    def _by_paths(self, data: dict[str, Any]) -> bool:
        from reliora_git.operations.freshness import paths_match

        own = data.get("paths") or []
        return any(paths_match(p, w) for p in own for w in self.paths)

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
                    "matchedBy": self.matched_by(data),
                    "guards": self.guards.get(data["id"], []),
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
    """The records whose ``paths`` are about these files or folders (SPEC.md §12), and
    those whose active guards watch them (SPEC.md §15).

    Retired and superseded records are left out unless ``include_retired``: an agent told
    to read them before an edit must not follow advice that was withdrawn (their guards
    are off: they never watch a file).
    """
    from reliora_git.operations.freshness import paths_match
    from reliora_git.operations.guards.listing import guards_watching
    from reliora_git.operations.paths import repo_path

    wanted = [repo_path(store, raw) for raw in given]
    index = index or open_index(store)
    watched = guards_watching(store, index, wanted)
    matches = []
    docs = index.inverted.docs
    for slot in index.slots():
        doc = docs[slot]
        assert doc is not None
        if doc.id in watched:
            matches.append(lifecycle_of(index, slot))
            continue
        if not doc.paths or not (include_retired or doc.is_active):
            continue  # the index holds each record's paths: only matches are read
        if any(paths_match(p, w) for p in doc.paths for w in wanted):
            matches.append(lifecycle_of(index, slot))
    matches.sort(key=lambda d: (d.get("created") or "", d["id"]), reverse=True)
    found = freshness_of(store, index, [d["id"] for d in matches])
    return About(wanted, [(d, found[d["id"]]) for d in matches], watched)


@dataclass
class StaleList:
    """What ``reliora stale`` found."""

    #: How many records were measured (they name code paths or have ``outdated`` feedback).
    checked: int
    #: The stale ones: record JSON (status as the store makes it) and freshness.
    stale: list[tuple[dict[str, Any], Freshness]]
    #: Where it was judged: None at HEAD, else at the merge base with ``at.ref``.
    at: Judged | None = None
    #: The commits of HEAD that the base does not have (their code changes not counted).
    left_out: int = 0

    def where(self) -> str | None:
        """The line saying where it was judged, when not at HEAD."""
        if self.at is None or self.at.base is None:
            return None
        count = f"{self.left_out} commit{'s' * (self.left_out != 1)}"
        return (
            f"judged at the merge base with {self.at.ref} ({self.at.base[:10]}): {count} "
            "on this branch not counted against a lesson's code, being its own change "
            "(--base HEAD counts them)"
        )


def stale_base(store: Store, given: str | None) -> Judged | None:
    """Where ``stale`` judges: the merge base of HEAD with ``given`` (default: with the
    default branch, unless HEAD is on it), or None for HEAD itself.

    On a branch, what it changed is the change under review (SPEC.md §12): one commit
    to a file must not make every lesson about it stale before anyone reviewed it.
    """
    from reliora_git.gitrepo import git
    from reliora_git.operations.freshness import Judged
    from reliora_git.records.errors import RelioraError

    if git.toplevel(store.root) is None:
        if given is not None:
            raise RelioraError("--base needs a git repository", code="not_git")
        return None
    head = git.verify_ref(store.root, "HEAD")
    ref = given if given is not None else _default_branch_elsewhere(store)
    if ref is None or head is None:
        return None  # no default branch, HEAD on it, or no commit yet: judged at HEAD
    commit = git.verify_ref(store.root, ref)
    if commit is None:
        raise RelioraError(
            f"{ref!r} does not name a commit here (`git branch -a` lists the branches)",
            code="unknown_ref",
        )
    fork = git.merge_base(store.root, commit, head)
    if fork is None or fork == head:
        return None  # nothing on HEAD that the base lacks
    shown = ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")
    return Judged(head, fork, shown)


def _default_branch_elsewhere(store: Store) -> str | None:
    """The default branch, when HEAD is on another branch or detached (CI checks out a
    pull request's commit); None when HEAD is on the default branch or there is none."""
    from reliora_git.gitrepo import git

    default = git.default_branch(store.root)
    if default is None:
        return None
    out = git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], store.root, check=False)
    current = out.decode("utf-8", "surrogateescape").strip()
    name = default.removeprefix("refs/heads/").removeprefix("refs/remotes/origin/")
    # On main, unpushed commits are main's history, not a branch's change.
    return None if current == name else default


def stale_records(
    store: Store,
    *,
    include_retired: bool = False,
    base: str | None = None,
    index: StoreIndex | None = None,
) -> StaleList:
    """The records measured and the stale ones, judged where :func:`stale_base` says.

    Measured: those that name code paths or have ``outdated`` feedback (SPEC.md §12);
    retired and superseded ones only with ``include_retired``.
    """
    from reliora_git.gitrepo.file_history import change_commits
    from reliora_git.operations.freshness import Subject, freshness_events

    at = stale_base(store, base)
    index = index or open_index(store)
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
    subjects = []
    for slot in with_paths:
        doc = docs[slot]
        assert doc is not None
        subjects.append(Subject(doc.id, doc.locator, tuple(doc.paths), events.get(doc.id, ())))
    found = freshness(store, subjects, at)
    stale = [
        (lifecycle_of(index, slot), found[subject.id])
        for slot, subject in zip(with_paths, subjects, strict=True)
        if found[subject.id].state == "stale"
    ]
    left_out = (
        0 if at is None or at.base is None else len(change_commits(store.root, at.base, at.tip))
    )
    return StaleList(len(with_paths), stale, at, left_out)
