"""Guards: lessons that check the lines a change adds (SPEC.md §15). Pure: data in, data out.

A guard is ``{pattern, paths, exclude, message, severity, existing}`` in a record's
front matter.
Patterns come from records, and records come from pull requests, so they are
untrusted: they run on RE2 (google-re2), whose matching is linear in the text
whatever the pattern, never on Python's backtracking ``re``. RE2 refuses what
it cannot match in linear time (backreferences, lookaround); such a pattern,
one longer than :data:`MAX_PATTERN_CHARS`, one over RE2's memory budget, one
whose program is over :data:`MAX_PROGRAM_SIZE` and one that leaves a ``\\Q``
literal open makes the record invalid, with the reason. Matching lines is in
records/guard_match.py.

RE2 is imported on first use only: a store without guards never loads it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from reliora_git.records.model import Guard, Problem
from reliora_git.records.text import escape_invisible

if TYPE_CHECKING:
    from reliora_git.records.model import Record

SEVERITIES = ("warn", "block")
#: Longer patterns are refused: a lesson names a mistake, it does not hold a grammar.
MAX_PATTERN_CHARS = 500
MAX_PATHS = 50
MAX_GUARDS = 20
#: What RE2 may spend compiling one pattern (its default); a pattern that needs more is refused.
RE2_MAX_MEM = 8 << 20
#: Instructions of a pattern's compiled program. Linear time is still time: what a byte of
#: text costs grows with the program (bench/guards.py); ordinary guards need under 200, a
#: Unicode class repeated (`[\p{L}\p{N}]{3,}`) about 4,000.
MAX_PROGRAM_SIZE = 5_000
#: A message shown in a finding is cut here (a default taken from a long warning, too).
MAX_MESSAGE_CHARS = 200
_KEYS = ("pattern", "paths", "exclude", "message", "severity", "existing")
#: The one value of ``existing``: the matches already in the code were accepted at save.
EXISTING_ALLOWED = "allowed"

__all__ = ["ActiveGuard", "Guard", "compiled", "guard_problems", "parse_guards", "resolve"]


class ActiveGuard(NamedTuple):
    """A guard with its defaults applied, as the store index keeps it (plain, marshal-able).

    ``scope`` says how ``paths`` match: ``glob`` (the guard's own globs), ``record`` (the
    record's paths: a file, or a folder ending in ``/``) or ``all`` (every file).
    """

    pattern: str
    scope: str
    paths: tuple[str, ...]
    message: str
    severity: str
    #: Position of the guard in its record (1-based), to name it in reports.
    number: int
    #: Globs of files it never looks at, whatever ``paths`` says.
    exclude: tuple[str, ...] = ()
    #: The record says the matches already in the code were accepted (``existing: allowed``).
    existing_allowed: bool = False


# --- reading the front matter ------------------------------------------------------------------


def parse_guards(value: Any, line: int | None) -> tuple[list[Guard], list[Problem]]:
    """The guards of a ``guards:`` front-matter value, and what is wrong with its shape."""
    problems: list[Problem] = []
    if value is None:
        return [], problems
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return [], [Problem("error", "'guards' must be a list of {pattern, paths, ...}", line)]
    guards: list[Guard] = []
    for number, item in enumerate(value, start=1):
        where = f"guard {number}"
        if isinstance(item, str):
            item = {"pattern": item}
        if not isinstance(item, dict):
            problems.append(Problem("error", f"{where} must be a mapping with a 'pattern'", line))
            continue
        unknown = sorted(str(key) for key in item if key not in _KEYS)
        if unknown:
            problems.append(
                Problem(
                    "warning",
                    f"{where} has unknown keys {', '.join(unknown)} (known: {', '.join(_KEYS)})",
                    line,
                )
            )
        pattern = item.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            problems.append(Problem("error", f"{where} needs a 'pattern' (text)", line))
            continue
        paths, exclude = _globs(item.get("paths")), _globs(item.get("exclude"))
        if paths is None or exclude is None:
            name = "paths" if paths is None else "exclude"
            problems.append(Problem("error", f"{where}: '{name}' must be a list of globs", line))
            continue
        message = item.get("message")
        if message is not None and not isinstance(message, str):
            problems.append(Problem("error", f"{where}: 'message' must be text", line))
            continue
        severity = item.get("severity", "warn")
        if not isinstance(severity, str):
            severity = repr(severity)
        existing = item.get("existing")
        if existing is None:
            existing = ""
        elif not isinstance(existing, str):
            existing = repr(existing)
        guards.append(
            Guard(
                pattern,
                paths,
                (message or "").strip(),
                severity.strip(),
                exclude,
                existing.strip(),
            )
        )
    return guards, problems


def _globs(value: Any) -> tuple[str, ...] | None:
    """A ``paths`` or ``exclude`` value as globs (one text or a list), None when neither."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return tuple(p.strip() for p in value if p.strip())
    return None


# --- validation --------------------------------------------------------------------------------


def shown_pattern(pattern: str, limit: int = 60) -> str:
    """A pattern as reports name it: invisible characters escaped, long ones cut."""
    text = escape_invisible(pattern).replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def guard_problems(guards: Sequence[Guard], line: int | None = None) -> list[Problem]:
    """Every error in ``guards``: a pattern RE2 refuses or too long, bad globs, bad severity."""
    problems: list[Problem] = []
    if len(guards) > MAX_GUARDS:
        problems.append(Problem("error", f"more than {MAX_GUARDS} guards in one record", line))
    for number, guard in enumerate(guards, start=1):
        where = f"guard {number} (`{shown_pattern(guard.pattern)}`)"
        for reason in guard_errors(guard):
            problems.append(Problem("error", f"{where}: {reason}", line))
    return problems


def guard_errors(guard: Guard) -> list[str]:
    """Why ``guard`` cannot run, if it cannot (several reasons at once)."""
    reasons: list[str] = []
    if guard.severity not in SEVERITIES:
        reasons.append(f"severity {guard.severity!r} must be one of {', '.join(SEVERITIES)}")
    if guard.existing and guard.existing != EXISTING_ALLOWED:
        reasons.append(f"existing {guard.existing!r} must be {EXISTING_ALLOWED!r} (or left out)")
    if len(guard.pattern) > MAX_PATTERN_CHARS:
        reasons.append(f"the pattern is longer than {MAX_PATTERN_CHARS} characters")
    else:
        refused = compile_error(guard.pattern)
        if refused:
            reasons.append(refused)
    for name, globs in (("paths", guard.paths), ("exclude", guard.exclude)):
        if len(globs) > MAX_PATHS:
            reasons.append(f"more than {MAX_PATHS} {name}")
        for glob in globs[:MAX_PATHS]:
            refused = glob_error(glob)
            if refused:
                reasons.append(f"{name} names {shown_pattern(glob)!r}, which {refused}")
    return reasons


def compile_error(pattern: str) -> str | None:
    """Why ``pattern`` cannot run as a guard (None when it can)."""
    if "\x00" in pattern:
        return "the pattern is refused: it holds a NUL character"
    try:
        compiled(pattern)
    except ValueError as exc:
        return str(exc)
    return None


def glob_error(glob: str) -> str | None:
    """Why ``glob`` is not a repo-relative glob (None when it is one)."""
    if not glob or "\x00" in glob or "\n" in glob:
        return "is empty or holds a control character"
    if glob.startswith("/") or "\\" in glob or (len(glob) >= 2 and glob[1] == ":"):
        return "is not relative to the repository (no leading '/', no backslash)"
    if ".." in glob.split("/"):
        return "climbs out of the repository ('..')"
    depth = 0
    for char in glob:
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
    if depth:
        return "opens a '[' that it never closes"
    return None


# --- defaults ----------------------------------------------------------------------------------


def default_message(record: Record) -> str:
    """A guard's message when it gives none: the record's title (SPEC.md §15).

    Not its first warning: a record's warnings are about the lesson at large, and a guard
    about sleeping must not tell the developer something about library versions.
    """
    return short_message(record.title)


def short_message(text: str) -> str:
    text = " ".join(escape_invisible(text).split())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"


def resolve(record: Record, guards: Iterable[Guard]) -> tuple[ActiveGuard, ...]:
    """The guards with their defaults applied (SPEC.md §15), ready for the store index."""
    found = []
    for number, guard in enumerate(guards, start=1):
        if guard.paths:
            scope, paths = "glob", guard.paths
        elif record.paths:
            scope, paths = "record", tuple(record.paths)
        else:
            scope, paths = "all", ()
        message = short_message(guard.message) if guard.message else default_message(record)
        found.append(
            ActiveGuard(
                guard.pattern,
                scope,
                paths,
                message,
                guard.severity,
                number,
                guard.exclude,
                guard.existing_allowed,
            )
        )
    return tuple(found)


# --- compiling --------------------------------------------------------------------------------


class RefusedPattern(ValueError):
    """A pattern that cannot run as a guard; the message says why (one sentence)."""


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str) -> Any:
    """``pattern`` compiled by RE2 to run on one line at a time; RefusedPattern when refused.

    ``never_nl``: a match never spans a newline, so a file's added lines can be searched
    as one text and every match still lies within one line; ``(?m)``: ``^`` and ``$`` are
    each line's start and end.
    """
    import re2  # google-re2; only when a guard is compiled

    options = re2.Options()
    options.log_errors = False  # RE2 prints refusals to stderr otherwise
    options.never_nl = True
    options.max_mem = RE2_MAX_MEM
    try:
        regex = re2.compile("(?m)" + pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise RefusedPattern(
            f"the pattern is refused: {reason} (guards run on RE2, in linear time: "
            "no backreferences, no lookaround)"
        ) from None
    if open_literal(pattern):
        # Alone, RE2 quotes up to the end; joined to other text it would quote that too.
        raise RefusedPattern(
            "the pattern opens a literal with \\Q and never closes it with \\E "
            "(add \\E where the literal ends)"
        )
    size = regex.programsize
    if size > MAX_PROGRAM_SIZE:
        raise RefusedPattern(
            f"the pattern compiles to {size:,} RE2 instructions, more than "
            f"{MAX_PROGRAM_SIZE:,}: each byte of code costs more the larger it is "
            "(shorten counted repeats such as {0,30} and large Unicode classes)"
        )
    return regex


def open_literal(pattern: str) -> bool:
    """Whether ``pattern`` (one RE2 compiles) ends inside a ``\\Q…`` literal.

    As RE2 reads it: ``\\Q`` quotes everything up to the next ``\\E``; elsewhere a
    backslash takes the next character with it (RE2 refuses ``\\Q`` inside ``[…]``, so a
    compiled pattern has none there).
    """
    i = 0
    while i < len(pattern):
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            if end < 0:
                return True
            i = end + 2
        elif pattern[i] == "\\":
            i += 2
        else:
            i += 1
    return False


# --- paths -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _glob_regex(glob: str) -> Any:
    """A glob as RE2 (linear too: globs come from records as well)."""
    import re2

    parts: list[str] = []
    i = 0
    anchored = "/" in glob.rstrip("/")
    folder = glob.endswith("/")
    body = glob.rstrip("/") if folder else glob
    while i < len(body):
        char = body[i]
        if body.startswith("**/", i):
            parts.append("(?:[^/]*/)*")
            i += 3
            continue
        if body.startswith("**", i):
            parts.append(".*")
            i += 2
            continue
        if char == "*":
            parts.append("[^/]*")
        elif char == "?":
            parts.append("[^/]")
        elif char == "[":
            end = body.find("]", i + 2)
            if end < 0:
                parts.append(r"\[")
            else:
                inner = body[i + 1 : end]
                negated = inner.startswith(("!", "^"))
                inner = inner[1:] if negated else inner
                escaped = "".join("\\" + c if c in "\\]^[" else c for c in inner)
                parts.append(("[^/" if negated else "[") + escaped + "]")
                i = end
        else:
            parts.append(char if char.isalnum() or ord(char) > 127 else "\\" + char)
        i += 1
    regex = "".join(parts)
    prefix = "" if anchored else "(?:.*/)?"
    suffix = "/.*" if folder else "(?:/.*)?"  # a glob naming a folder covers what is in it
    options = re2.Options()
    options.log_errors = False
    options.max_mem = RE2_MAX_MEM
    try:
        return re2.compile(prefix + regex + suffix, options)
    except re2.error:
        return None


def path_applies(guard: ActiveGuard, path: str) -> bool:
    """Whether ``guard`` looks at ``path`` (from the top of the work tree): within its
    paths and not excluded."""
    if guard.exclude and globs_match(guard.exclude, path):
        return False
    if guard.scope == "all":
        return True
    if guard.scope == "record":
        return any(path == p or (p.endswith("/") and path.startswith(p)) for p in guard.paths)
    return globs_match(guard.paths, path)


def globs_match(globs: Iterable[str], path: str) -> bool:
    """Whether one of ``globs`` matches ``path`` (RE2: globs are untrusted, as patterns are)."""
    for glob in globs:
        regex = _glob_regex(glob)
        if regex is not None and regex.fullmatch(path) is not None:
            return True
    return False
