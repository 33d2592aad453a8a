"""``.reliora/eval.toml``: the cases ``reliora eval`` and ``review`` run (docs/eval.md).

Each ``[[case]]`` is a prompt (and the files the agent then reads) with the lessons that
must be pushed (``expect``, in full with ``full = true``) and those that must not
(``never``). The file comes in pull requests like the records, so it is read as data:
at most 1 MiB of UTF-8, every key and type checked, and every error one line naming the
file and the line (TOML syntax errors by tomllib's line, a case's own errors by the line
of its ``[[case]]`` header).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from reliora_git.records.errors import RelioraError
from reliora_git.records.tomltext import TomlError
from reliora_git.records.tomltext import loads as toml_loads
from reliora_git.storage.store import (
    MAX_RECORD_BYTES,
    STORE_DIR,
    Store,
    decode_utf8,
    read_regular_file,
)

EVAL_FILE = f"{STORE_DIR}/eval.toml"
#: Keys a case may have.
CASE_KEYS = ("name", "prompt", "files", "expect", "full", "never")
#: Files a case may name (as a brief: selection.MAX_FILES).
MAX_FILES = 100
_HEADER = re.compile(r"^\s*\[\[\s*case\s*\]\]")
_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)$")


@dataclass(frozen=True)
class Case:
    """One ``[[case]]``: its number (from 1), the line of its header, and what it checks."""

    number: int
    line: int | None
    prompt: str
    files: tuple[str, ...] = ()
    expect: tuple[str, ...] = ()
    full: bool = False
    never: tuple[str, ...] = ()
    name: str = ""

    @property
    def label(self) -> str:
        """How messages name it: its name, else ``case N``."""
        return self.name or f"case {self.number}"


def read_cases(store: Store) -> list[Case]:
    """The cases of the store's ``eval.toml`` in the working tree ([] when there is none)."""
    path = store.path / "eval.toml"
    if not path.exists() and not path.is_symlink():
        return []
    locator = store.locator(path)
    try:
        text = decode_utf8(read_regular_file(path, locator), locator)
    except RelioraError as exc:
        raise RelioraError(
            f"cannot read the eval cases: {exc.message}", path=locator, code="invalid_eval"
        ) from None
    return parse_cases(text, locator)


def parse_cases(text: str, locator: str = EVAL_FILE) -> list[Case]:
    """The cases in ``text`` (the file's content); a RelioraError naming the line otherwise."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_RECORD_BYTES:
        raise _error(locator, None, f"is larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
    try:
        data = toml_loads(text)
    except TomlError as exc:
        if exc.line is not None and "(at line" not in exc.message:  # refused before tomllib
            raise _error(locator, exc.line, f"not valid TOML: {exc.message}") from None
        message = exc.message
        found = _AT_LINE.search(message)
        line = int(found.group(1)) if found else None
        if found is None and message.endswith("(at end of document)"):
            line = max(len(text.splitlines()), 1)
        raise _error(
            locator, line, f"not valid TOML: {_AT_LINE.sub('', message).strip()}"
        ) from None
    headers = [n for n, raw in enumerate(text.splitlines(), 1) if _HEADER.match(raw)]
    for key in data:
        if key != "case":
            raise _error(
                locator, _key_line(text, key), f"unknown key {key!r} (only [[case]] tables)"
            )
    raw_cases = data.get("case", [])
    if not isinstance(raw_cases, list) or not all(isinstance(c, dict) for c in raw_cases):
        raise _error(locator, _key_line(text, "case"), "'case' must be [[case]] tables")
    cases = []
    for number, raw in enumerate(raw_cases, 1):
        line = headers[number - 1] if len(headers) == len(raw_cases) else None
        cases.append(_case(raw, number, line, locator))
    names = Counter(c.name for c in cases if c.name)  # counted once: not a scan per case
    for case in cases:
        if case.name and names[case.name] > 1:
            raise _error(locator, case.line, f"two cases are named {case.name!r}")
    return cases


def _case(raw: dict[str, Any], number: int, line: int | None, locator: str) -> Case:
    label = f"case {number}"
    for key in raw:
        if key not in CASE_KEYS:
            from reliora_git.search.near_ids import did_you_mean

            hint = did_you_mean(key, CASE_KEYS)
            raise _error(locator, line, f"{label}: unknown key {key!r}{hint}")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise _error(locator, line, f"{label}: 'name' must be a string")
    label = name or label
    prompt = raw.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise _error(locator, line, f"{label}: 'prompt' is required (the text an agent is given)")
    full = raw.get("full", False)
    if not isinstance(full, bool):
        raise _error(locator, line, f"{label}: 'full' must be true or false")
    lists = {key: _strings(raw, key, label, locator, line) for key in ("files", "expect", "never")}
    if len(lists["files"]) > MAX_FILES:
        raise _error(locator, line, f"{label}: at most {MAX_FILES} files")
    files = tuple(dict.fromkeys(_file(f, label, locator, line) for f in lists["files"]))
    both = set(lists["expect"]) & set(lists["never"])
    if both:
        raise _error(locator, line, f"{label}: {sorted(both)[0]!r} is in both expect and never")
    if full and not lists["expect"]:
        raise _error(locator, line, f"{label}: 'full = true' needs ids in 'expect'")
    return Case(
        number,
        line,
        prompt,
        files,
        tuple(dict.fromkeys(lists["expect"])),
        full,
        tuple(dict.fromkeys(lists["never"])),
        name,
    )


def _strings(
    raw: dict[str, Any], key: str, label: str, locator: str, line: int | None
) -> list[str]:
    value = raw.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _error(locator, line, f"{label}: {key!r} must be a list of non-empty strings")
    return [v.strip() for v in value]


def _file(raw: str, label: str, locator: str, line: int | None) -> str:
    """A path from the top of the repository, folded lexically (never outside it)."""
    text = raw.replace("\\", "/")
    folded = posixpath.normpath(text)
    if folded in (".", "..") or folded.startswith(("../", "/")):
        raise _error(locator, line, f"{label}: file {raw!r} is not a path inside the repository")
    return folded + ("/" if text.endswith("/") else "")


def check_ids(cases: Iterable[Case], known: Collection[str], locator: str = EVAL_FILE) -> None:
    """An id in ``expect`` or ``never`` that names no record is an error naming the case."""
    from reliora_git.search.near_ids import did_you_mean

    for case in cases:
        for key, ids in (("expect", case.expect), ("never", case.never)):
            for record_id in ids:
                if record_id not in known:
                    hint = did_you_mean(record_id, known)
                    raise _error(
                        locator,
                        case.line,
                        f"{case.label}: {key} names {record_id!r}, which is no record's id{hint}",
                    )


def _key_line(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*\[*\s*{re.escape(key)}\b")
    return next((n for n, raw in enumerate(text.splitlines(), 1) if pattern.match(raw)), None)


def _error(locator: str, line: int | None, message: str) -> RelioraError:
    return RelioraError(message, path=locator, line=line, code="invalid_eval")
