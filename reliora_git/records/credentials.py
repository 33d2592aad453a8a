"""Secrets in store files, found with Yelp's detect-secrets (docs/security.md).

Agents paste what they saw — environment dumps, connection strings, tokens —
and the store is committed and pushed with the code. Everything a record or
feedback event holds (:func:`scan_store_file`: its fields, unknown keys at any
depth, unknown sections, preamble, id, file name, whole text) is scanned line
by line with detect-secrets' plugins for specific credentials (AWS, GitHub,
GitLab, Slack, Stripe, private keys, JWTs, URLs with a password…); its entropy
plugins, which also flag the hashes and ids real notes are full of, only when
``secrets_entropy = true``. Its keyword plugin (``password = …`` in prose) and
public-IP plugin are never used.

The plugins' expressions are run here, not through their ``analyze_string``,
so that a scan stays linear on hostile text (:func:`_line_hits`) and knows
where each secret is (:func:`redact`); what they find is unchanged (tested
against ``analyze_string``).

A line holding detect-secrets' own ``pragma: allowlist secret`` is skipped:
an allowed false positive stays visible in the file. Findings never carry the
value, only a masked form (``…2f1c``, :func:`mask`).

Imported only by the paths that write or judge records, and the plugins only
on the first scan. Imported the usual way they cost 0.11–0.14 s here: the
package's ``__init__`` loads its whole scanning engine, and every plugin
imports ``requests`` (with urllib3, http.client…), which is only for checking
a secret online — never done here. :func:`_import_plugins` therefore loads the
plugin modules without the package ``__init__`` and with a stand-in for
``requests`` while they import (0.05 s), then takes both away again, so that
anything else in the process imports the real ones. A lazily loaded
``requests`` does not help: ``import requests`` itself touches the module.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackEvent, Record

#: (module, class) of the plugins run by default: one per kind of real credential.
_PLUGINS = (
    ("artifactory", "ArtifactoryDetector"),
    ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"),
    ("cloudant", "CloudantDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("ibm_cloud_iam", "IbmCloudIamDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"),
    ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"),
    ("openai", "OpenAIDetector"),
    ("private_key", "PrivateKeyDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"),
    ("softlayer", "SoftlayerDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)
_ENTROPY_PLUGINS = (
    ("high_entropy_strings", "Base64HighEntropyString"),
    ("high_entropy_strings", "HexHighEntropyString"),
)
_PRAGMA = re.compile(r"pragma:\s*allowlist[ -]secret", re.IGNORECASE)
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Finding:
    #: The field's JSON name, with the item for a list (``problems[2]``, 1-based).
    field: str
    #: The line within the field (or item), 1-based.
    line: int
    #: What detect-secrets calls it (``GitHub Token``), and that as a slug (``github-token``).
    kind: str
    masked: str

    @property
    def slug(self) -> str:
        return kind_slug(self.kind)

    def __str__(self) -> str:
        return f"{self.field}, line {self.line}: {self.kind} ({self.masked})"

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "line": self.line,
            "kind": self.slug,
            "description": self.kind,
            "masked": self.masked,
        }


class SecretFound(RelioraError):
    """A record or note holds a credential: nothing is saved (exit 2)."""

    def __init__(self, findings: Sequence[Finding], what: str = "the experience") -> None:
        # One finding is named in the message itself; several are counted there and
        # listed one a line (details), so that none is reported twice.
        if len(findings) == 1:
            found, it, real, each = f"a secret: {findings[0]}", "it", "it was", "its line"
        else:
            found, it, real, each = f"{len(findings)} secrets", "them", "they were", "each line"
        super().__init__(
            f"{what} holds {found}; remove {it} (rotate {it} if {real} real), or mark a "
            f"false positive with `pragma: allowlist secret` on {each}",
            code="secret_found",
        )
        self.findings = list(findings)

    @property
    def details(self) -> list[str]:
        if len(self.findings) == 1:
            return []
        return [f"  {finding}" for finding in self.findings]

    def to_json(self) -> dict[str, object]:
        document = super().to_json()
        error = document["error"]
        assert isinstance(error, dict)
        error["findings"] = [finding.to_json() for finding in self.findings]
        return document


def kind_slug(kind: str) -> str:
    return _NOT_SLUG.sub("-", kind.lower()).strip("-")


def mask(value: str) -> str:
    """``…2f1c``: the last 4 characters of a value of 12 or more, nothing of a shorter one.

    Never more than 4 characters of a secret in total: with the kind beside it
    (``GitHub Token``) they are enough to tell which one to rotate, never enough
    to use or to guess it; a short password shows none.
    """
    value = value.strip()
    if len(value) < 12:
        return "…"
    return f"…{value[-4:]}"


def scan_fields(
    fields: Iterable[tuple[str, str]], *, entropy: bool = False, allowed: Iterable[str] = ()
) -> list[Finding]:
    """The findings in (field name, text) pairs, in field order, then line order.

    ``allowed`` are kinds (slugs, see :func:`kind_slug`) not to report.
    """
    return [finding for finding, _ in _scan(fields, entropy, allowed)]


def redact(text: str, *, entropy: bool = False) -> str:
    """``text`` with every secret found in it replaced by its mask (:func:`mask`).

    For what is shown rather than judged (``review``'s comment): a line marked
    ``pragma: allowlist secret`` is redacted too, and no kind is ever allowed —
    hiding a false positive costs a reader little, printing a real one costs a
    rotation. Line endings are kept; text without a secret comes back unchanged.
    """
    plugins = _plugins(entropy)
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029")
        hits = _line_hits(plugins, body) if body.strip() else []
        if not hits:
            out.append(line)
            continue
        cursor = 0
        for start, end, masked in _merged(hits):
            out.append(body[cursor:start])
            out.append(masked)
            cursor = end
        out.append(line[cursor:])
    return "".join(out)


#: Keys of a record's JSON that are not text a person wrote (never masked).
_UNMASKED = frozenset({"id", "locator", "status", "confidence", "created", "updated", "guards"})


def masked_record(data: dict[str, Any]) -> dict[str, Any]:
    """A record's JSON with every secret in its text masked (:func:`redact`): what every read
    of the store shows (show, list, the push, the view, MCP). ``check`` and the hook still
    report the file; this keeps a record that arrived holding a secret from being shown or
    pushed verbatim. ``data`` itself when nothing is masked."""
    changed: dict[str, Any] = {}
    for key, value in data.items():
        if key in _UNMASKED:
            continue
        if isinstance(value, str) and value:
            shown = redact(value)
            if shown != value:
                changed[key] = shown
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            items = [redact(v) for v in value]
            if items != value:
                changed[key] = items
    return {**data, **changed} if changed else data


def mask_record(record: Record) -> None:
    """``record`` (as parsed from its file) with every secret in its text masked, as
    :func:`masked_record` masks the JSON every other read gets (``show`` parses the file)."""
    for name in ("title", "project_context", "task", "solution", "why_it_worked",
                 "applicability", "verification"):  # fmt: skip
        value = getattr(record, name)
        if value:
            setattr(record, name, redact(value))
    for name in ("tags", "problems", "failed_attempts", "warnings", "asked_as"):
        setattr(record, name, [redact(item) for item in getattr(record, name)])
    record.extra_sections = [(heading, redact(text)) for heading, text in record.extra_sections]


@dataclass(frozen=True)
class _Hit:
    """A secret in one line: where it is (to withhold it), what, and its value (to mask it)."""

    start: int
    end: int
    kind: str
    value: str


def _merged(hits: Iterable[_Hit]) -> list[tuple[int, int, str]]:
    """Spans to withhold, overlapping ones joined (then masked as ``…``: whose 4 to show?)."""
    spans: list[tuple[int, int, str]] = []
    for hit in sorted(hits, key=lambda hit: (hit.start, -hit.end)):
        if spans and hit.start < spans[-1][1]:
            start, end, _ = spans[-1]
            if hit.end > end:
                spans[-1] = (start, hit.end, "…")
            continue
        spans.append((hit.start, hit.end, mask(hit.value)))
    return spans


#: Plugins whose expression's (first) group is the secret however short: the
#: password of ``scheme://user:password@``. Elsewhere a short group is a prefix
#: (``ghp``) and the whole match is the secret.
_GROUP_IS_SECRET = frozenset({"BasicAuthDetector"})
#: Trimmed from a whole match: the separators some expressions match around a value.
_AROUND = " \t\"'=:"


def _line_hits(scanners: _Scanners, line: str) -> list[_Hit]:
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
    hits: list[_Hit] = []
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
    find: Callable[[str], Iterable[_Hit]]


@dataclass(frozen=True)
class _Scanners:
    each: tuple[_Scanner, ...]
    #: Needle → the scanners (their numbers in ``each``) it lets run: a line is
    #: searched once for each needle, and only the scanners it needs are called.
    by_needle: dict[str, tuple[int, ...]]
    #: The scanners without needles.
    always: tuple[int, ...]


#: Needles by plugin (class name), for those whose expressions all need the same words.
_PLUGIN_NEEDLES = {
    "ArtifactoryDetector": ("akc", "ap"),
    "AzureStorageKeyDetector": ("accountkey=",),
    "BasicAuthDetector": ("://",),
    "DiscordBotTokenDetector": (".",),
    "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "IbmCloudIamDetector": ("key", "pwd", "pass", "token"),
    "IbmCosHmacDetector": ("secret",),
    "JwtTokenDetector": ("eyj",),
    "MailchimpDetector": ("-us",),
    "NpmDetector": ("/:_authtoken=",),
    "OpenAIDetector": ("t3blbkfj",),
    "PrivateKeyDetector": ("private key", "putty-user-key"),
    "PypiTokenDetector": ("pypi-",),
    "SendGridDetector": ("sg.",),
    "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": ("k_live_",),
    "TelegramBotTokenDetector": (":",),
    "TwilioKeyDetector": ("ac", "sk"),
    # the entropy plugins need quoted strings
    "Base64HighEntropyString": ("'", '"'),
    "HexHighEntropyString": ("'", '"'),
}
_GITLAB_PREFIX = re.compile(r"gl[a-z]+|gr1348941")


def _expression_needles(name: str, pattern: str) -> tuple[str, ...]:
    """The needles of one expression of a plugin whose expressions need different words."""
    if name == "AWSKeyDetector":
        return ("aws",) if "aws" in pattern else ("a3t", "abia", "acca", "akia", "asia")
    if name == "CloudantDetector":
        return ("cloudant.com",) if "cloudant" in pattern[-20:] else ("cl",)
    if name == "SoftlayerDetector":
        return ("softlayer",) if "soap" in pattern else ("softlayer", "sl")
    if name == "SlackDetector":
        return ("hooks",) if "hooks" in pattern else ("xox",)
    if name == "GitLabTokenDetector":
        return tuple(_GITLAB_PREFIX.findall(pattern.lower())) or ("gl",)
    return _PLUGIN_NEEDLES.get(name, ())


# --- passwords on a command line (not a detect-secrets plugin) --------------------------------

COMMAND_LINE_KIND = "Command-line password"
HEADER_KIND = "Authorization header"
#: A value: quoted whole, or up to the next space; each alternative linear.
_VALUE = r"""('[^'\n]*'|"[^"\n]*"|[^\s'"]+)"""
#: ``PGPASSWORD=…``, ``export db_password=…``, ``AWS_SECRET_ACCESS_KEY=…``, a libpq
#: ``password=…`` conninfo: a name ending in a secret's word, then ``=`` and the value.
_ASSIGNED_PASSWORD = re.compile(
    r"\b(?:PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|[A-Za-z_]*(?:PASSWORD|PASSWD|PASSPHRASE)|"
    r"[A-Za-z_]*SECRET(?:_ACCESS)?_KEY|[A-Za-z_]*(?:API|AUTH|ACCESS)_(?:KEY|TOKEN)|"
    r"[A-Za-z_]+_SECRET|[A-Za-z_]+_TOKEN)=" + _VALUE,
    re.IGNORECASE,
)
_PASSWORD_OPTION = re.compile(r"(?<![\w-])--pass(?:word|wd)(?:=|[ \t]+)" + _VALUE)
#: mysql's ``-pVALUE`` (its ``-p name`` asks for the password and names a database).
_MYSQL = re.compile(r"\b(?:mysql\w*|mariadb\w*)\b", re.IGNORECASE)
_SHORT_P = re.compile(r"(?<!\S)-p" + _VALUE)
#: Tools whose ``-p VALUE`` is a password: sshpass, and a registry ``login`` (docker,
#: podman, helm, nerdctl).
_P_TOOLS = re.compile(r"\b(?:sshpass|login)\b", re.IGNORECASE)
_SPACED_P = re.compile(r"(?<!\S)-p(?:[ \t]+)?" + _VALUE)
#: redis-cli's ``-a VALUE``.
_REDIS = re.compile(r"\bredis-cli\b", re.IGNORECASE)
_SHORT_A = re.compile(r"(?<!\S)-a[ \t]+" + _VALUE)
#: Keys and tokens with a fixed prefix that no detect-secrets plugin knows here: Anthropic's
#: and OpenAI's ``sk-…`` keys, npm's ``npm_…`` tokens outside an .npmrc line.
_PREFIXED_TOKEN = re.compile(
    r"(?<![\w-])(sk-(?:ant-(?:api|admin)\d{2}-|proj-|svcacct-)?[A-Za-z0-9_-]{20,}|"
    r"(?<!_authToken=)npm_[A-Za-z0-9]{36})"  # in an .npmrc line it is the npm plugin's
)
TOKEN_KIND = "API key or token"
_AUTHORIZATION = re.compile(
    r"\bAuthorization:[ \t]*(?:(?:Bearer|Basic|Token|Digest|Bot)[ \t]+)?"
    r"([A-Za-z0-9][\w+/=.~-]{3,})",
    re.IGNORECASE,
)
#: A value that names a secret rather than holds one: a variable, a placeholder, a prompt.
_NOT_A_VALUE = re.compile(
    r"^(?:[$<{%*…\[]|\.\.\.|-|\w*stdin\b)|^(?:x+|(?:my|your|the|some)?_?(?:pass(?:word)?|pw|pwd|"
    r"secret|changeme|example|placeholder|redacted|dummy|test|foo|bar|postgres|root|admin|"
    r"user(?:name)?|guest)s?\d?)$",
    re.IGNORECASE,
)


def _command_line_hits(line: str) -> list[_Hit]:
    """Passwords given on a command line (``PGPASSWORD=…``, ``--password …``, mysql's
    ``-p…``) and ``Authorization:`` header values: each expression a single pass."""
    found: list[tuple[re.Match[str], str]] = []
    found += [(m, COMMAND_LINE_KIND) for m in _ASSIGNED_PASSWORD.finditer(line)]
    found += [(m, COMMAND_LINE_KIND) for m in _PASSWORD_OPTION.finditer(line)]
    mysql = _MYSQL.search(line)
    if mysql is not None:  # -p is mysql's password only on a mysql command line
        found += [(m, COMMAND_LINE_KIND) for m in _SHORT_P.finditer(line, mysql.end())]
    tool = _P_TOOLS.search(line)
    if tool is not None:
        found += [(m, COMMAND_LINE_KIND) for m in _SPACED_P.finditer(line, tool.end())]
    redis = _REDIS.search(line)
    if redis is not None:
        found += [(m, COMMAND_LINE_KIND) for m in _SHORT_A.finditer(line, redis.end())]
    found += [(m, HEADER_KIND) for m in _AUTHORIZATION.finditer(line)]
    found += [(m, TOKEN_KIND) for m in _PREFIXED_TOKEN.finditer(line)]
    hits = []
    for match, kind in found:
        value = match.group(1).strip("'\"").rstrip(".,;:)]}")
        if len(value) >= 3 and any(c.isalnum() for c in value) and not _NOT_A_VALUE.match(value):
            hits.append(_Hit(match.start(1), match.end(1), kind, value))
    return hits


_COMMAND_LINE_NEEDLES = frozenset({"password", "passwd", "passphrase", "mysql_pwd",
                                   "rediscli_auth", "-p", "-a", "authorization", "secret",
                                   "_key=", "_token=", "sk-", "npm_"})  # fmt: skip


def _scanners_of(plugins: Sequence[Any]) -> _Scanners:
    each: list[_Scanner] = [_Scanner(_COMMAND_LINE_NEEDLES, _command_line_hits)]
    for plugin in plugins:
        name, kind = type(plugin).__name__, plugin.secret_type
        if name == "NpmDetector":
            find: Callable[[str], Iterable[_Hit]] = functools.partial(_npm_hits, kind)
        elif name == "JwtTokenDetector":
            find = functools.partial(_jwt_hits, plugin)
        elif not hasattr(plugin, "denylist"):
            find = functools.partial(_entropy_hits, plugin)
        else:
            each.extend(
                _Scanner(
                    frozenset(_expression_needles(name, regex.pattern)),
                    _regex_find(name, kind, regex),
                )
                for regex in plugin.denylist
            )
            continue
        each.append(_Scanner(frozenset(_PLUGIN_NEEDLES.get(name, ())), find))
    by_needle: dict[str, list[int]] = {}
    for number, scanner in enumerate(each):
        for needle in scanner.needles:
            by_needle.setdefault(needle, []).append(number)
    always = tuple(number for number, scanner in enumerate(each) if not scanner.needles)
    return _Scanners(
        tuple(each), {needle: tuple(numbers) for needle, numbers in by_needle.items()}, always
    )


def _regex_find(name: str, kind: str, regex: re.Pattern[str]) -> Callable[[str], Iterable[_Hit]]:
    keyword = _keyword_part(regex)
    if keyword is None:
        return functools.partial(_regex_hits, name, kind, regex)
    return functools.partial(_assignment_hits, name, kind, regex, keyword)


def _regex_hits(name: str, kind: str, regex: re.Pattern[str], line: str) -> Iterable[_Hit]:
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
) -> Iterable[_Hit]:
    """What ``regex`` finds, searched only where its keyword part matches.

    Every match of ``regex`` holds a match of ``keyword`` (its tail) starting at
    most :data:`_KEYWORD_BEFORE` characters after it. So for each place the tail
    matches, ``regex`` is searched from that far back to just past the tail
    (one character more: its closing lookahead sees the real next character).
    Work per place is bounded, places are found by ``re``'s literal search, and
    a place where ``regex`` fails moves on by one character, not past the tail
    (an earlier keyword's value may hold the next keyword).
    """
    hits: list[_Hit] = []
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


def _npm_hits(kind: str, line: str) -> Iterable[_Hit]:
    return [_Hit(start, end, kind, line[start:end]) for start, end in _npm_spans(line)]


def _jwt_hits(plugin: Any, line: str) -> Iterable[_Hit]:
    return [
        _Hit(start, end, plugin.secret_type, line[start:end])
        for start, end in _jwt_spans(line)
        if _may_be_jwt(line, start, end) and plugin.is_formally_valid(line[start:end])
    ]


def _may_be_jwt(line: str, start: int, end: int) -> bool:
    """False when the plugin's check must fail: a JWT's first part is a JSON object,
    ``{"":0}`` at least, 6 bytes, 8 characters of base64 — ``eyJa.eyJa.…`` would
    otherwise cost a decoding every 10 characters."""
    dot = line.find(".", start, end)
    return dot - start >= 8


def _entropy_hits(plugin: Any, line: str) -> Iterable[_Hit]:
    """Quoted values over the plugin's entropy limit, found where they are."""
    hits: list[_Hit] = []
    for value in dict.fromkeys(plugin.analyze_string(line)):
        if not value or plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
            continue
        start = line.find(value)
        while start != -1:
            hits.append(_Hit(start, start + len(value), plugin.secret_type, value))
            start = line.find(value, start + len(value))
    return hits


def _match_hit(plugin_name: str, kind: str, match: re.Match[str]) -> _Hit:
    groups = [n for n in range(1, (match.re.groups or 0) + 1) if match.group(n)]
    if groups:
        longest = max(groups, key=lambda n: len(match.group(n)))
        if plugin_name in _GROUP_IS_SECRET or len(match.group(longest)) >= 8:
            return _Hit(match.start(longest), match.end(longest), kind, match.group(longest))
    start, end = match.span()
    text = match.string
    while start < end and text[start] in _AROUND:
        start += 1
    while end > start and text[end - 1] in _AROUND:
        end -= 1
    return _Hit(start, end, kind, text[start:end])


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


def record_fields(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The text fields of a record as JSON (``record_to_json``), lists item by item."""
    fields: list[tuple[str, str]] = []
    for name, value in data.items():
        if name in ("locator", "id", "created", "updated", "status", "confidence"):
            continue
        if isinstance(value, str):
            fields.append((name, value))
        elif isinstance(value, list):
            fields.extend(
                (f"{name}[{n}]", item) for n, item in enumerate(value, 1) if isinstance(item, str)
            )
        elif isinstance(value, dict):
            fields.extend((f"{name}.{k}", str(v)) for k, v in value.items())
    return fields


def other_record_fields(record: Record) -> list[tuple[str, str]]:
    """What :func:`record_fields` leaves out: the id, the front-matter keys this
    version does not know (``retired_reason``…) with every string in them at any
    depth, keys too, the sections it does not know, and the text before the first
    heading. A secret in any of them is as pushed as one in the solution."""
    fields: list[tuple[str, str]] = [("id", record.id)] if record.id else []
    for key, value in record.extra_meta.items():
        fields.extend(_strings_of(str(key), value))
    fields.extend((f"section {heading}", text) for heading, text in record.extra_sections)
    if record.preamble:
        fields.append(("preamble", record.preamble))
    return fields


def scan_store_file(
    locator: str,
    text: str | None,
    fields: Iterable[tuple[str, str]] = (),
    *,
    entropy: bool = False,
    allowed: Iterable[str] = (),
) -> list[Finding]:
    """Every secret a store file (record or feedback event) holds, each reported once.

    First ``fields`` — the parsed fields, named as the user knows them
    (``solution, line 2``). Then what no field shows: the file name
    (``locator``), every line of ``text`` (named by its front-matter key or
    section, ``line`` then being the line of the file), and every string of its
    front matter as YAML reads it — escapes (``\\x67hp_…``) and continuation
    lines spell values no single line shows. ``text`` None: the file is not
    written yet, ``fields`` are all it will hold.
    """
    seen: set[tuple[str, str]] = set()
    found: list[Finding] = []

    def add(named: Iterable[tuple[str, str]], numbered_from: int = 1) -> None:
        for finding, value in _scan(named, entropy, allowed, numbered_from):
            if (finding.kind, value) not in seen:
                seen.add((finding.kind, value))
                found.append(finding)

    fields = list(fields)
    add(fields)
    if locator:
        add([("file name", locator)])
    if text is not None:
        # A line of the file that a field held as it is (or as a list item, ``- `` before
        # it: a non-word character and a space that no expression needs) found what it
        # holds already: scanning the file costs little more than the fields.
        scanned = {line.strip() for _, value in fields for line in value.splitlines()}
        hidden = False
        for label, number, line in _labelled_lines(text):
            bare = line.strip()
            if label.startswith("front matter") and _MAY_HIDE.match(line):
                hidden = True
            if bare in scanned or (bare.startswith("- ") and bare[2:].strip() in scanned):
                continue
            scanned.add(bare)
            add([(label, line)], numbered_from=number)
        if hidden:
            add(
                (name, value)
                for name, value in _front_matter_strings(text, locator)
                if any(line.strip() not in scanned for line in value.splitlines())
            )
    return found


#: A front-matter line whose value YAML may read otherwise than it is written: an
#: escape (``"\\x67hp_…"``) or a continued value (an indented line that is neither a
#: list item nor a nested key). Only then is the front matter read as YAML to scan
#: its strings — a millisecond a file, here where ``check`` scans every one.
_MAY_HIDE = re.compile(r".*\\|[ \t]+(?![ \t]*(?:-[ \t]|[\w.-]+:(?:[ \t]|$)))")


def event_fields(event: FeedbackEvent) -> list[tuple[str, str]]:
    """A feedback event's fields, as :func:`scan_store_file` names them."""
    fields = [("note", event.note), ("record", event.record), ("at", event.at)]
    if event.author:
        fields.append(("author", event.author))
    return fields


def scan_event_file(
    locator: str, text: str | None, event: FeedbackEvent | None = None, *, entropy: bool = False
) -> list[Finding]:
    """Every secret a feedback file holds: its name and every line of ``text``.

    Named as its fields are (``author, line 1``, ``note, line 2``: lines counted
    within the key's value and within the note), so that a note reads as it did
    when only notes were scanned. ``check`` scans every feedback file, so YAML,
    at about a millisecond an event here, is read only when a line could hide
    a value from a line scan: a backslash (an escape in a double-quoted string)
    or an indented line (a value continued). ``event`` (it as read) is scanned
    when there is no text.
    """
    seen: set[tuple[str, str]] = set()
    found: list[Finding] = []

    def add(named: Iterable[tuple[str, str]], numbered_from: int = 1) -> None:
        for finding, value in _scan(named, entropy, (), numbered_from):
            if (finding.kind, value) not in seen:
                seen.add((finding.kind, value))
                found.append(finding)

    if text is None:
        add(event_fields(event) if event is not None else [])
    else:
        hidden = False
        for label, _, lines in _labelled_parts(text):
            if label == "preamble":  # an event's body is its note, read stripped
                label = "note"
                while lines and not lines[0].strip():
                    lines = lines[1:]
            elif any(_MAY_HIDE.match(line) for line in lines):
                hidden = True
            add([(label.removeprefix("front matter "), "\n".join(lines))])
        if hidden:
            add(_front_matter_strings(text, locator))
    if locator:
        add([("file name", locator)])
    return found


def _scan(
    fields: Iterable[tuple[str, str]], entropy: bool, allowed: Iterable[str], first_line: int = 1
) -> list[tuple[Finding, str]]:
    """(finding, its value) in (field name, text) pairs; lines numbered from ``first_line``."""
    skip = {kind_slug(kind) for kind in allowed}
    scanners = _plugins(entropy)
    found: list[tuple[Finding, str]] = []
    for name, text in fields:
        for number, line in enumerate(text.splitlines(), start=first_line):
            if not line.strip() or _PRAGMA.search(line):
                continue
            seen: set[tuple[str, str]] = set()
            for hit in _line_hits(scanners, line):
                key = (hit.kind, hit.value)
                if key in seen or kind_slug(hit.kind) in skip:
                    continue
                seen.add(key)
                found.append((Finding(name, number, hit.kind, mask(hit.value)), hit.value))
    return found


def _strings_of(name: str, value: Any, depth: int = 0) -> list[tuple[str, str]]:
    """Every string in a YAML value, keys included, named by where it is (``key.sub[2]``)."""
    if depth > 64:  # parse.py refuses alias bombs; nesting this deep is no record
        return []
    if isinstance(value, dict):
        found: list[tuple[str, str]] = []
        for key, item in value.items():
            found.append((f"{name} (a key)", str(key)))
            found.extend(_strings_of(f"{name}.{key}", item, depth + 1))
        return found
    if isinstance(value, (list, tuple)):
        return [
            pair
            for n, item in enumerate(value, 1)
            for pair in _strings_of(f"{name}[{n}]", item, depth + 1)
        ]
    if value is None:
        return []
    return [(name, value if isinstance(value, str) else str(value))]


def _front_matter_strings(text: str, locator: str) -> list[tuple[str, str]]:
    """The strings of ``text``'s front matter as YAML reads them (none if it does not read)."""
    from reliora_git.records.parse import split_front_matter

    try:
        meta, _, _ = split_front_matter(text.removeprefix("\ufeff").replace("\r\n", "\n"), locator)
    except RecordError:
        return []
    return [pair for key, value in meta.items() for pair in _strings_of(str(key), value)]


#: The opening of a heading line; what follows is cut with str methods, not a lazy
#: group before a trailing run (``(.*?)[ \t#]*$`` backtracks quadratically on a long
#: run of spaces or ``#`` that does not end the line).
_SECTION_MARK = re.compile(r"#{1,6}[ \t]+")
_NOT_A_KEY_START = frozenset("#:'\"")


def _front_key(line: str) -> str | None:
    """``key`` of a ``key: value`` line of front matter, else None. Linear in the line."""
    head, colon, _ = line.partition(":")
    if not colon or not head or head[0].isspace() or head[0] in _NOT_A_KEY_START:
        return None
    return head.rstrip(" \t")


def _section_heading(line: str) -> str | None:
    """The heading of a ``## Heading`` line, else None. Linear in the line."""
    mark = _SECTION_MARK.match(line)
    return None if mark is None else line[mark.end() :].rstrip(" \t#")


def _labelled_parts(text: str) -> Iterable[tuple[str, int, list[str]]]:
    """(part, its first line number, its lines): :func:`_labelled_lines` grouped."""
    part: tuple[str, int, list[str]] | None = None
    for label, number, line in _labelled_lines(text):
        if part is None or part[0] != label:
            if part is not None:
                yield part
            part = (label, number, [])
        part[2].append(line)
    if part is not None:
        yield part


def _labelled_lines(text: str) -> Iterable[tuple[str, int, str]]:
    """(what part of the file, line number, line) for each line of a store file.

    The part is ``front matter KEY``, ``section HEADING``, or ``preamble`` (body
    text before the first heading): enough to find the line, which is what counts.
    """
    label = "preamble"
    in_front = False
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        if number == 1 and line.rstrip() == "---":
            in_front, label = True, "front matter"
            continue
        if in_front:
            if line.rstrip() == "---":
                in_front, label = False, "preamble"
                continue
            key = _front_key(line)
            if key is not None:
                label = f"front matter {key}"
        else:
            heading = _section_heading(line)
            if heading is not None:
                label = f"section {heading}"
        yield label, number, line


#: The plugin instances, by ``entropy``; filled under :data:`_LOADING`.
_LOADED: dict[bool, _Scanners] = {}
#: One thread loads the plugins at a time: :func:`_import_plugins` places and
#: removes modules in ``sys.modules``, and two first scans at once (parallel MCP
#: tool calls) saw each other's half-imported package (``KeyError``).
_LOADING = threading.Lock()


def _plugins(entropy: bool) -> _Scanners:
    loaded = _LOADED.get(entropy)
    if loaded is not None:
        return loaded
    with _LOADING:
        loaded = _LOADED.get(entropy)
        if loaded is None:
            chosen = _PLUGINS + (_ENTROPY_PLUGINS if entropy else ())
            modules = _import_plugins(sorted({module for module, _ in chosen}))
            loaded = _scanners_of([getattr(modules[module], name)() for module, name in chosen])
            _LOADED[entropy] = loaded
        return loaded


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
