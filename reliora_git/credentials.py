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
on the first scan: loading them costs 0.11–0.14 s here, most of it
``requests``, which a scan never calls (it only verifies secrets online).
Loading ``requests`` lazily does not help: the plugins' ``import requests``
and annotations touch it at import time (tried with ``importlib.util.LazyLoader``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reliora_git.errors import RelioraError

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
    import importlib

    chosen = _PLUGINS + (_ENTROPY_PLUGINS if entropy else ())
    return tuple(
        getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)()
        for module, name in chosen
    )
