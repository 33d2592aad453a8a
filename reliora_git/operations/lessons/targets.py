"""Which record file an id on the command line means, for the commands that write.

Search and show see only the records that read well. The commands that change a
file must also reach a record that does not — that is how it gets repaired
(``update``/``edit`` on a record missing its solution) — and ``record
--supersedes`` must name the record the user means, not the prefix typed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reliora_git.records.errors import RelioraError
from reliora_git.records.validate import is_valid_id
from reliora_git.storage.index import StoreIndex
from reliora_git.storage.store import check_id


@dataclass(frozen=True)
class Target:
    """A record file a write command works on."""

    record_id: str
    locator: str
    #: False for a file that search skips (invalid, unreadable): it is being repaired.
    valid: bool


def find_target(index: StoreIndex, id_or_prefix: str) -> Target:
    """The record ``id_or_prefix`` names (an id or a unique prefix, as git takes hashes).

    Valid records come first, as in every other command. Only when none matches are
    the files that search skips looked at, by the id their front matter gives or,
    when it gives none, their file name (``experiences/<id>.md``).
    """
    try:
        slot = index.resolve(id_or_prefix)
    except RelioraError as exc:
        if exc.code != "unknown_id":
            raise
    else:
        record_id, locator = index.identity(slot)
        return Target(record_id, locator, True)
    exact: list[Target] = []
    prefixed: list[Target] = []
    for locator, record_id in _invalid_files(index):
        if record_id == id_or_prefix:
            exact.append(Target(record_id, locator, False))
        elif record_id.startswith(id_or_prefix):
            prefixed.append(Target(record_id, locator, False))
    found = exact or prefixed
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(sorted(f"{t.record_id} ({t.locator})" for t in found))
        raise RelioraError(
            f"id {id_or_prefix!r} names more than one record file: {names}", code="ambiguous_id"
        )
    raise index.unknown_id(id_or_prefix, [record_id for _, record_id in _invalid_files(index)])


def _invalid_files(index: StoreIndex) -> Iterable[tuple[str, str]]:
    """(locator, id) of each record file the index could not use."""
    for locator, value in zip(index.locators, index.values, strict=True):
        if isinstance(value, int):
            continue
        info = index.checks.get(locator)
        claimed = info[0] if info is not None else None
        stem = locator.rsplit("/", 1)[-1].removesuffix(".md")
        record_id = claimed if claimed and is_valid_id(claimed) else stem
        if is_valid_id(record_id):
            yield locator, record_id


def resolve_supersedes(index: StoreIndex, given: Iterable[str], own_id: str = "") -> list[str]:
    """The full ids of the records ``given`` names (ids or unique prefixes), in order, once.

    An unknown or ambiguous one is an error naming it: a prefix written literally into
    ``supersedes`` would supersede nothing, silently.
    """
    resolved: list[str] = []
    for value in given:
        check_id(value)
        if value == own_id:
            raise RelioraError(
                f"supersedes: {value!r} is this record's own id", code="invalid_record"
            )
        try:
            slot = index.resolve(value)
        except RelioraError as exc:
            raise RelioraError(f"supersedes: {exc.message}", code=exc.code) from None
        record_id, _ = index.identity(slot)
        if record_id not in resolved:
            resolved.append(record_id)
    return resolved
