"""Secrets in records and feedback notes, found with Yelp's detect-secrets (docs/security.md).

Agents paste what they saw — environment dumps, connection strings, tokens —
and the store is committed and pushed with the code. Every field of a record
(and a feedback note) is scanned line by line with detect-secrets' plugins for
specific credentials (AWS, GitHub, GitLab, Slack, Stripe, private keys, JWTs,
URLs with a password…); its entropy plugins, which also flag the hashes and
ids real notes are full of, only when ``secrets_entropy = true``. Its keyword
plugin (``password = …`` in prose) and public-IP plugin are never used.

A line holding detect-secrets' own ``pragma: allowlist secret`` is skipped:
an allowed false positive stays visible in the file. Findings never carry the
value, only a masked form (``ghp_…2f1c``).

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
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reliora_git.records.errors import RelioraError

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
        first = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        super().__init__(
            f"{what} holds a secret: {first}{more}; remove it (rotate it if it was real), or "
            "mark a false positive with `pragma: allowlist secret` on its line",
            code="secret_found",
        )
        self.findings = list(findings)

    @property
    def details(self) -> list[str]:
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
    """``ghp_…2f1c``: enough to recognise the value, never enough to use it."""
    value = value.strip()
    if len(value) < 12:
        return "…"
    return f"{value[:4]}…{value[-4:]}"


def scan_fields(
    fields: Iterable[tuple[str, str]], *, entropy: bool = False, allowed: Iterable[str] = ()
) -> list[Finding]:
    """The findings in (field name, text) pairs, in field order, then line order.

    ``allowed`` are kinds (slugs, see :func:`kind_slug`) not to report.
    """
    skip = {kind_slug(kind) for kind in allowed}
    plugins = _plugins(entropy)
    found: list[Finding] = []
    for name, text in fields:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or _PRAGMA.search(line):
                continue
            seen: set[tuple[str, str]] = set()
            for plugin in plugins:
                for value in _values(plugin, line):
                    key = (plugin.secret_type, value)
                    if key in seen or kind_slug(plugin.secret_type) in skip:
                        continue
                    seen.add(key)
                    found.append(Finding(name, number, plugin.secret_type, mask(value)))
    return found


def _values(plugin: Any, line: str) -> Iterable[str]:
    """What ``plugin`` finds in ``line`` (its own checks applied), as the whole matched text.

    A regex plugin's ``analyze_string`` yields the regex's first group, which for
    some is only the prefix (``ghp``): too little to mask recognisably.
    """
    for value in plugin.analyze_string(line):
        whole = next(
            (
                match.group(0)
                for regex in getattr(plugin, "denylist", ())
                for match in regex.finditer(line)
                if value in match.group(0)
            ),
            value,
        )
        yield whole


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


@functools.lru_cache(maxsize=2)
def _plugins(entropy: bool) -> tuple[Any, ...]:
    chosen = _PLUGINS + (_ENTROPY_PLUGINS if entropy else ())
    modules = _import_plugins(sorted({module for module, _ in chosen}))
    return tuple(getattr(modules[module], name)() for module, name in chosen)


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
