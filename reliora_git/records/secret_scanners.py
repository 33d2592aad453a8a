"""detect-secrets' plugins, and ours for command lines, run over one line at a time.

Each expression runs so that a scan stays linear on hostile text
(:func:`line_hits`) and knows where each secret is; what the plugins find is
unchanged (tested against ``analyze_string``). A plugin is loaded only when a
text could hold what it finds (secret_gates.py): all of them compile about a
hundred expressions, 20 ms in every process that shows a record. Imported the
usual way they cost 0.11–0.14 s more: the package's ``__init__`` loads its
scanning engine, and every plugin imports ``requests`` (urllib3,
http.client…), only for checking a secret online, never done here.
:func:`_import_plugins` loads the plugin modules without the ``__init__`` and
with a stand-in for ``requests`` (``import requests`` itself touches a lazily
loaded module), then takes both away, so that the rest of the process imports
the real ones.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from reliora_git.records.secret_gates import (
    ENTROPY_PLUGINS,
    PLUGIN_NEEDLES,
    PLUGINS,
    Plugin,
    expression_needles,
    token_run,
)


@dataclass(frozen=True)
class Hit:
    """A secret in one line: where it is (to withhold it), what, and its value (to mask it)."""

    start: int
    end: int
    kind: str
    value: str


#: Plugins whose expression's (first) group is the secret however short: the
#: password of ``scheme://user:password@``. Elsewhere a short group is a prefix
#: (``ghp``) and the whole match is the secret.
_GROUP_IS_SECRET = frozenset({"BasicAuthDetector"})
#: Trimmed from a whole match: the separators some expressions match around a value.
_AROUND = " \t\"'=:"


def line_hits(scanners: Scanners, line: str) -> list[Hit]:
    """Every secret the plugins find in one line, each with its span.

    Linear in the line: the two plugins whose expressions backtrack (npm's
    ``//.+/:_authToken=``, quadratic over a line of slashes; JWT's
    ``eyJ[…]+\\.``, quadratic over ``eyJeyJeyJ…``) are matched by the equivalent
    linear code below instead (docs/security.md, bench/secrets.py).
    """
    folded = line.casefold()
    chosen = set(scanners.always)
    for needle, numbers in scanners.by_needle.items():
        if needle in folded:
            chosen.update(numbers)
    hits: list[Hit] = []
    for number in sorted(chosen):
        hits.extend(scanners.each[number].find(line))
    return hits


@dataclass(frozen=True)
class _Scanner:
    """One expression of one plugin (or a plugin's own check) and when to run it."""

    #: Text one of which every match holds, case-folded (empty: always run).
    #: Most expressions try every position of a line — the ``cloudant_api_key = …``
    #: family a dozen optional prefixes at each, 2 µs a character — and a line
    #: rarely holds the word they need; ``in`` finds it at memory speed.
    needles: frozenset[str]
    find: Callable[[str], Iterable[Hit]]


@dataclass(frozen=True)
class Scanners:
    each: tuple[_Scanner, ...]
    #: Needle → the scanners (their numbers in ``each``) it lets run: a line is
    #: searched once for each needle, and only the scanners it needs are called.
    by_needle: dict[str, tuple[int, ...]]
    #: The scanners without needles.
    always: tuple[int, ...]


# --- passwords on a command line (not a detect-secrets plugin) --------------------------------

COMMAND_LINE_KIND = "Command-line password"
HEADER_KIND = "Authorization header"
#: A value: quoted whole, or up to the next space; each alternative linear.
_VALUE = r"""('[^'\n]*'|"[^"\n]*"|[^\s'"]+)"""


class _Later:
    """An expression compiled when first used: those of command lines run only on a line
    holding one of their words (:data:`_COMMAND_LINE_NEEDLES`), and most records have none;
    compiling all at import cost 2 ms of every ``show``."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self.compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self.compiled is None:  # two threads at once compile it twice, the same
            self.compiled = re.compile(self.pattern, self.flags)
        return self.compiled


#: ``PGPASSWORD=…``, ``export db_password=…``, ``AWS_SECRET_ACCESS_KEY=…``, a libpq
#: ``password=…`` conninfo: a name ending in a secret's word, then ``=`` and the value.
_ASSIGNED_PASSWORD = _Later(
    r"\b(?:PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|[A-Za-z_]*(?:PASSWORD|PASSWD|PASSPHRASE)|"
    r"[A-Za-z_]*SECRET(?:_ACCESS)?_KEY|[A-Za-z_]*(?:API|AUTH|ACCESS)_(?:KEY|TOKEN)|"
    r"[A-Za-z_]+_SECRET|[A-Za-z_]+_TOKEN)=" + _VALUE,
    re.IGNORECASE,
)
_PASSWORD_OPTION = _Later(r"(?<![\w-])--pass(?:word|wd)(?:=|[ \t]+)" + _VALUE)
#: mysql's ``-pVALUE`` (its ``-p name`` asks for the password and names a database).
_MYSQL = _Later(r"\b(?:mysql\w*|mariadb\w*)\b", re.IGNORECASE)
_SHORT_P = _Later(r"(?<!\S)-p" + _VALUE)
#: Tools whose ``-p VALUE`` is a password: sshpass, and a registry ``login`` (docker,
#: podman, helm, nerdctl).
_P_TOOLS = _Later(r"\b(?:sshpass|login)\b", re.IGNORECASE)
_SPACED_P = _Later(r"(?<!\S)-p(?:[ \t]+)?" + _VALUE)
#: redis-cli's ``-a VALUE``.
_REDIS = _Later(r"\bredis-cli\b", re.IGNORECASE)
_SHORT_A = _Later(r"(?<!\S)-a[ \t]+" + _VALUE)
#: Keys and tokens with a fixed prefix that no detect-secrets plugin knows here: Anthropic's
#: and OpenAI's ``sk-…`` keys, npm's ``npm_…`` tokens outside an .npmrc line.
_PREFIXED_TOKEN = _Later(
    r"(?<![\w-])(sk-(?:ant-(?:api|admin)\d{2}-|proj-|svcacct-)?[A-Za-z0-9_-]{20,}|"
    r"(?<!_authToken=)npm_[A-Za-z0-9]{36})"  # in an .npmrc line it is the npm plugin's
)
TOKEN_KIND = "API key or token"
_AUTHORIZATION = _Later(
    r"\bAuthorization:[ \t]*(?:(?:Bearer|Basic|Token|Digest|Bot)[ \t]+)?"
    r"([A-Za-z0-9][\w+/=.~-]{3,})",
    re.IGNORECASE,
)
#: A value that names a secret rather than holds one: a variable, a placeholder, a prompt.
_NOT_A_VALUE = _Later(
    r"^(?:[$<{%*…\[]|\.\.\.|-|\w*stdin\b)|^(?:x+|(?:my|your|the|some)?_?(?:pass(?:word)?|pw|pwd|"
    r"secret|changeme|example|placeholder|redacted|dummy|test|foo|bar|postgres|root|admin|"
    r"user(?:name)?|guest)s?\d?)$",
    re.IGNORECASE,
)


def _command_line_hits(line: str) -> list[Hit]:
    """Passwords given on a command line (``PGPASSWORD=…``, ``--password …``, mysql's
    ``-p…``) and ``Authorization:`` header values: each expression a single pass."""
    found: list[tuple[re.Match[str], str]] = []
    found += [(m, COMMAND_LINE_KIND) for m in _ASSIGNED_PASSWORD.get().finditer(line)]
    found += [(m, COMMAND_LINE_KIND) for m in _PASSWORD_OPTION.get().finditer(line)]
    mysql = _MYSQL.get().search(line)
    if mysql is not None:  # -p is mysql's password only on a mysql command line
        found += [(m, COMMAND_LINE_KIND) for m in _SHORT_P.get().finditer(line, mysql.end())]
    tool = _P_TOOLS.get().search(line)
    if tool is not None:
        found += [(m, COMMAND_LINE_KIND) for m in _SPACED_P.get().finditer(line, tool.end())]
    redis = _REDIS.get().search(line)
    if redis is not None:
        found += [(m, COMMAND_LINE_KIND) for m in _SHORT_A.get().finditer(line, redis.end())]
    found += [(m, HEADER_KIND) for m in _AUTHORIZATION.get().finditer(line)]
    found += [(m, TOKEN_KIND) for m in _PREFIXED_TOKEN.get().finditer(line)]
    hits = []
    for match, kind in found:
        value = match.group(1).strip("'\"").rstrip(".,;:)]}")
        if (
            len(value) >= 3
            and any(c.isalnum() for c in value)
            and not _NOT_A_VALUE.get().match(value)
        ):
            hits.append(Hit(match.start(1), match.end(1), kind, value))
    return hits


_COMMAND_LINE_NEEDLES = frozenset({"password", "passwd", "passphrase", "mysql_pwd",
                                   "rediscli_auth", "-p", "-a", "authorization", "secret",
                                   "_key=", "_token=", "sk-", "npm_"})  # fmt: skip


def _plugin_scanners(plugin: Any) -> tuple[_Scanner, ...]:
    """One plugin's scanners: one an expression, or its own check."""
    name, kind = type(plugin).__name__, plugin.secret_type
    if name == "NpmDetector":
        find: Callable[[str], Iterable[Hit]] = functools.partial(_npm_hits, kind)
    elif name == "JwtTokenDetector":
        find = functools.partial(_jwt_hits, plugin)
    elif not hasattr(plugin, "denylist"):
        find = functools.partial(_entropy_hits, plugin)
    else:
        return tuple(
            _Scanner(
                frozenset(expression_needles(name, regex.pattern)), _regex_find(name, kind, regex)
            )
            for regex in plugin.denylist
        )
    return (_Scanner(frozenset(PLUGIN_NEEDLES.get(name, ())), find),)


def _combined(parts: Iterable[tuple[_Scanner, ...]]) -> Scanners:
    """The command-line scanner, then ``parts`` (plugins' scanners) in the order given."""
    each = [_Scanner(_COMMAND_LINE_NEEDLES, _command_line_hits)]
    each.extend(scanner for part in parts for scanner in part)
    by_needle: dict[str, list[int]] = {}
    for number, scanner in enumerate(each):
        for needle in scanner.needles:
            by_needle.setdefault(needle, []).append(number)
    always = tuple(number for number, scanner in enumerate(each) if not scanner.needles)
    return Scanners(
        tuple(each), {needle: tuple(numbers) for needle, numbers in by_needle.items()}, always
    )


def _regex_find(name: str, kind: str, regex: re.Pattern[str]) -> Callable[[str], Iterable[Hit]]:
    keyword = _keyword_part(regex)
    if keyword is None:
        return functools.partial(_regex_hits, name, kind, regex)
    return functools.partial(_assignment_hits, name, kind, regex, keyword)


def _regex_hits(name: str, kind: str, regex: re.Pattern[str], line: str) -> Iterable[Hit]:
    return [_match_hit(name, kind, match) for match in regex.finditer(line)]


#: Where the keyword starts in detect-secrets' ``build_assignment_regex`` expressions.
_KEYWORD_STARTS = ("(?:key|", "(?:secret[")
#: Characters before its keyword that such an expression can match: ``[``, a quote,
#: a prefix of at most 16 (``ibm_cloud_iam_api``), separators. With margin.
_KEYWORD_BEFORE = 32


def _keyword_part(regex: re.Pattern[str]) -> re.Pattern[str] | None:
    """The part of a ``KEYWORD = "VALUE"`` expression from its keyword on, or None.

    Those expressions (IBM Cloud IAM and COS, Cloudant, SoftLayer: ``[\\W^][ "]
    prefix? keyword "? ]? = "VALUE"``) start with a dozen optional parts, tried
    at every position of a line at 1–2 µs a character: a MiB of ``password =
    key=token: …`` took seconds. Their keyword part starts with a literal, which
    ``re`` finds fast; the whole expression is then tried only just before it.
    """
    pattern = regex.pattern
    if not pattern.startswith("(?:(?<=\\W)|(?<=^))"):
        return None
    starts = [pattern.find(start) for start in _KEYWORD_STARTS if start in pattern]
    if not starts:
        return None
    return re.compile(pattern[min(starts) :], regex.flags)


def _assignment_hits(
    name: str, kind: str, regex: re.Pattern[str], keyword: re.Pattern[str], line: str
) -> Iterable[Hit]:
    """What ``regex`` finds, searched only where its keyword part matches.

    Every match of ``regex`` holds a match of ``keyword`` (its tail) starting at
    most :data:`_KEYWORD_BEFORE` characters after it. So for each place the tail
    matches, ``regex`` is searched from that far back to just past the tail
    (one character more: its closing lookahead sees the real next character).
    Work per place is bounded, places are found by ``re``'s literal search, and
    a place where ``regex`` fails moves on by one character, not past the tail
    (an earlier keyword's value may hold the next keyword).
    """
    hits: list[Hit] = []
    position = 0
    while True:
        tail = keyword.search(line, position)
        if tail is None:
            return hits
        whole = regex.search(line, max(0, tail.start() - _KEYWORD_BEFORE), tail.end() + 1)
        if whole is None:
            position = tail.start() + 1
            continue
        hits.append(_match_hit(name, kind, whole))
        position = max(whole.end(), tail.start() + 1)


def _npm_hits(kind: str, line: str) -> Iterable[Hit]:
    return [Hit(start, end, kind, line[start:end]) for start, end in _npm_spans(line)]


def _jwt_hits(plugin: Any, line: str) -> Iterable[Hit]:
    return [
        Hit(start, end, plugin.secret_type, line[start:end])
        for start, end in _jwt_spans(line)
        if _may_be_jwt(line, start, end) and plugin.is_formally_valid(line[start:end])
    ]


def _may_be_jwt(line: str, start: int, end: int) -> bool:
    """False when the plugin's check must fail: a JWT's first part is a JSON object,
    ``{"":0}`` at least, 6 bytes, 8 characters of base64 — ``eyJa.eyJa.…`` would
    otherwise cost a decoding every 10 characters."""
    dot = line.find(".", start, end)
    return dot - start >= 8


def _entropy_hits(plugin: Any, line: str) -> Iterable[Hit]:
    """Quoted values over the plugin's entropy limit, found where they are."""
    hits: list[Hit] = []
    for value in dict.fromkeys(plugin.analyze_string(line)):
        if not value or plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
            continue
        start = line.find(value)
        while start != -1:
            hits.append(Hit(start, start + len(value), plugin.secret_type, value))
            start = line.find(value, start + len(value))
    return hits


def _match_hit(plugin_name: str, kind: str, match: re.Match[str]) -> Hit:
    groups = [n for n in range(1, (match.re.groups or 0) + 1) if match.group(n)]
    if groups:
        longest = max(groups, key=lambda n: len(match.group(n)))
        if plugin_name in _GROUP_IS_SECRET or len(match.group(longest)) >= 8:
            return Hit(match.start(longest), match.end(longest), kind, match.group(longest))
    start, end = match.span()
    text = match.string
    while start < end and text[start] in _AROUND:
        start += 1
    while end > start and text[end - 1] in _AROUND:
        end -= 1
    return Hit(start, end, kind, text[start:end])


#: npm's ``\/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*`` without its
#: leading ``//.+``: that part is checked by position (a ``//`` ending before the match).
_NPM_TOKEN = re.compile(r"/:_authToken=\s*(npm_.+|[A-Fa-f0-9-]{36})")
#: JWT's ``eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?…*?``, found run by run (below).
_JWT_RUN = re.compile(r"eyJ[A-Za-z0-9_=-]+(\.[A-Za-z0-9_=-]+\.?)?")


def _npm_spans(line: str) -> Iterable[tuple[int, int]]:
    """Where npm's expression finds a token, in linear time.

    ``//.+/:_authToken=`` holds where some ``//`` ends at least one character before
    the ``/`` of ``/:_authToken=``: the first ``//`` is the best candidate.
    """
    slashes = line.find("//")
    if slashes == -1:
        return
    for match in _NPM_TOKEN.finditer(line, slashes + 3):
        yield match.span(1)


def _jwt_spans(line: str) -> Iterable[tuple[int, int]]:
    """Where JWT's expression matches, in linear time.

    Its first ``[…]+`` runs to the end of a run of those characters (``.`` is not
    one of them), so only the first ``eyJ`` of a run can start a match — later
    ones fail the same way — and a match is: that ``eyJ`` with at least one
    character after it in its run, ``.``, the next run, and one more ``.`` if
    there is one (the expression's greedy ``\\.?``; its lazy tail takes nothing).
    :data:`_JWT_RUN` matches the run whether or not a ``.`` follows, so a failed
    start consumes its run once instead of once per ``eyJ`` in it.
    """
    for match in _JWT_RUN.finditer(line):
        if match.group(1):
            yield match.span()


# --- loading the plugins, each when a text first needs it -------------------------------------


@dataclass
class _Loaded:
    """The plugins of one setting of ``entropy``, loaded so far."""

    plugins: tuple[Plugin, ...]
    #: Each plugin's scanners once it is loaded (None: not yet), in the order of ``plugins``.
    parts: list[tuple[_Scanner, ...] | None]
    #: The loaded plugins' scanners: replaced whole when one more is loaded, never changed.
    scanners: Scanners
    #: Texts the plugins were chosen for so far (see :data:`_GATED_TEXTS`).
    gated: int = 0
    #: Every plugin is loaded: no text need be looked at any more.
    complete: bool = False


#: After this many texts a process loads every plugin: one that scans a whole store
#: (``check``, an index built anew) would spend more choosing them text by text
#: than the 20 ms loading them all costs, and a plugin more never changes a result.
_GATED_TEXTS = 64
#: By ``entropy``; filled under :data:`_LOADING`.
_LOADED: dict[bool, _Loaded] = {}
#: One thread loads plugins at a time: :func:`_import_plugins` places and removes
#: modules in ``sys.modules``, and two first scans at once (parallel MCP tool
#: calls) saw each other's half-imported package (``KeyError``).
_LOADING = threading.Lock()


def scanners_for(text: str, entropy: bool = False) -> Scanners:
    """Scanners that find in every line of ``text`` what all of them would find.

    The plugins whose gate (secret_gates.py) ``text`` opens are loaded first; a
    plugin it does not open could not match in any line of it, so leaving it out
    changes no result. Hits keep their order: scanners are numbered in the
    plugins' order whichever are loaded.
    """
    loaded = _loaded(entropy)
    if loaded.complete:
        return loaded.scanners
    missing = [number for number, part in enumerate(loaded.parts) if part is None]
    if missing and loaded.gated >= _GATED_TEXTS:
        _load(loaded, missing)
    elif missing:
        loaded.gated += 1
        folded, run = text.casefold(), token_run(text)
        wanted = [n for n in missing if loaded.plugins[n].may_match(text, folded, run)]
        if wanted:
            _load(loaded, wanted)
    return loaded.scanners


def ready(entropy: bool = False) -> Scanners | None:
    """Every plugin's scanners when all are loaded already, else None: then a caller
    need not gather the text to choose them for."""
    loaded = _LOADED.get(entropy)
    return loaded.scanners if loaded is not None and loaded.complete else None


def all_scanners(entropy: bool = False) -> Scanners:
    """Every plugin's scanners (for a test comparing them with the plugins)."""
    loaded = _loaded(entropy)
    _load(loaded, range(len(loaded.plugins)))
    return loaded.scanners


def _loaded(entropy: bool) -> _Loaded:
    loaded = _LOADED.get(entropy)
    if loaded is not None:
        return loaded
    with _LOADING:
        loaded = _LOADED.get(entropy)
        if loaded is None:
            plugins = PLUGINS + (ENTROPY_PLUGINS if entropy else ())
            loaded = _Loaded(plugins, [None] * len(plugins), _combined(()))
            _LOADED[entropy] = loaded
        return loaded


def _load(loaded: _Loaded, numbers: Iterable[int]) -> None:
    with _LOADING:
        todo = [n for n in numbers if loaded.parts[n] is None]
        if not todo:
            return
        modules = _import_plugins(sorted({loaded.plugins[n].module for n in todo}))
        for n in todo:
            plugin = loaded.plugins[n]
            loaded.parts[n] = _plugin_scanners(getattr(modules[plugin.module], plugin.name)())
        loaded.scanners = _combined(part for part in loaded.parts if part is not None)
        loaded.complete = all(part is not None for part in loaded.parts)


def _import_plugins(names: list[str]) -> dict[str, Any]:
    """The plugin modules, imported without what a scan never runs (see the module docstring)."""
    import importlib
    import importlib.util

    placed: list[str] = []
    if "detect_secrets" not in sys.modules:
        spec = importlib.util.find_spec("detect_secrets")
        if spec is not None:
            # The package itself, its __init__ not run: submodules import through __path__.
            sys.modules["detect_secrets"] = importlib.util.module_from_spec(spec)
            placed.append("detect_secrets")
    if "requests" not in sys.modules:
        sys.modules["requests"] = _requests_stand_in()
        placed.append("requests")
    try:
        return {name: importlib.import_module(f"detect_secrets.plugins.{name}") for name in names}
    finally:
        for name in placed:
            del sys.modules[name]


def _requests_stand_in() -> types.ModuleType:
    """What the plugins use of ``requests`` when they are defined: names, never calls."""

    class RequestException(Exception):
        pass

    module = types.ModuleType("requests", "a stand-in while detect-secrets' plugins import")
    module.exceptions = types.SimpleNamespace(RequestException=RequestException)  # type: ignore[attr-defined]
    module.Response = object  # type: ignore[attr-defined]
    return module
