"""Which detect-secrets plugins a text could hold a finding of, told without loading them.

Loading the plugins compiles about a hundred expressions (20 ms, more than the
rest of a ``show``); most records need a few of them or none. Each plugin here
comes with what every match of each of its expressions holds, read off the
expressions: literals (one of each clause, ``(("AKC",),)``), as written or in
the case-folded text for an expression that ignores case. A text holding none
of what any expression of a plugin needs cannot hold a match of it, nor can
any of its lines, so the plugin is neither loaded nor run on it, and what is
found does not change. tests/test_secret_gates.py derives every expression's
literals from re's own parse of it and checks each clause here against them,
so a new detect-secrets whose expressions differ fails the tests rather than
missing a secret.

Most expressions also need a long run of a token's characters (``[a-f0-9]{48}``):
a plugin comes with the shortest such run every match of each expression of it
holds (``run``), and a text without one as long (:func:`token_run`) does not
load it either. Three plugins need no literal worth looking for (a colon, two
dots, ``://`` and ``@``): a check of the text's shape that every match passes
stands for their literals (``shape``, tested against the expression).

Folded literals hold no ``i``: re's IGNORECASE matches ``i`` with ``İ`` and
``ı``, which ``str.casefold`` does not turn into ``i``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass

#: Every match holds one literal of each clause (as written, or case-folded).
Clauses = tuple[tuple[str, ...], ...]
_KEYWORDS = ("key", "pw", "pass", "token")  # key|pwd|pw|password|pass|token, as literals


def _digits_before_colon(text: str) -> bool:
    """Telegram's ``\\d{8,10}:[…]{35}``: a ``:`` right after eight digits (re's ``\\d``
    is ``str.isdecimal``), in one pass over the colons: a time (``09:05``) is not one."""
    colon = text.find(":", 8)
    while colon != -1:
        if text[colon - 8 : colon].isdecimal():
            return True
        colon = text.find(":", colon + 1)
    return False


def _dots_seven_apart(text: str) -> bool:
    """Discord's ``[MNO][…]{23,25}\\.[…]{6}\\.[…]{27}``: two dots with six characters of
    its class between (``[a-zA-Z\\d_-]``: no dot), in one pass over the dots."""
    dot = text.find(".")
    while dot != -1:
        if text.startswith(".", dot + 7) and all(
            c in _DISCORD_CHARS or c.isdecimal() for c in text[dot + 1 : dot + 7]
        ):
            return True
        dot = text.find(".", dot + 1)
    return False


_DISCORD_CHARS = frozenset(string.ascii_letters + string.digits + "_-")


#: Every ASCII character that is not a token's (letters, digits, ``_-``), as a space.
#: Other characters stay: re's ``\\d`` and IGNORECASE's ``ſ`` or ``K`` are not ASCII, and
#: the classes runs are counted of hold no space of any kind (tested).
_NOT_TOKEN = {c: " " for c in range(128) if not chr(c).isalnum() and chr(c) not in "_-"}


def token_run(text: str) -> int:
    """The length of the longest run of token characters in ``text`` (C speed: translate,
    split)."""
    return max(map(len, text.translate(_NOT_TOKEN).split()), default=0)


#: What BasicAuth's user and password may not hold (with spaces): ``[^:/?#\\[\\]@!$&'()*+,;=\\s]``.
_NOT_IN_USERINFO = frozenset(":/?#[]@!$&'()*+,;=")


def _password_in_url(text: str) -> bool:
    """BasicAuth's ``://USER:PASSWORD@``, neither part empty nor holding a space or any of
    :data:`_NOT_IN_USERINFO`: at each ``://``, what follows up to the first such character
    must be ``USER:``, then ``PASSWORD@``. Each character is looked at twice at most."""
    start = text.find("://")
    while start != -1:
        at = start + 3
        for stop in (":", "@"):
            end = at
            while end < len(text) and text[end] not in _NOT_IN_USERINFO and not text[end].isspace():
                end += 1
            if end == at or text[end : end + 1] != stop:
                break
            at = end + 1
        else:
            return True
        start = text.find("://", start + 1)
    return False


@dataclass(frozen=True)
class Plugin:
    module: str
    name: str
    #: One entry per expression of the plugin (``denylist``, in its order): whether
    #: its literals are looked for in the case-folded text, and its clauses.
    expressions: tuple[tuple[bool, Clauses], ...] = ()
    #: For a plugin whose expressions need no literal worth looking for: a check of the
    #: text's shape that every match passes (tested against the expression).
    shape: Callable[[str], bool] | None = None
    #: A run of token characters this long is in every match of every expression.
    run: int = 0

    def may_match(self, text: str, folded: str, run: int) -> bool:
        """False only when no expression of the plugin can match in ``text`` (``folded``:
        ``text.casefold()``; ``run``: its :func:`token_run`)."""
        if run < self.run:
            return False
        if self.shape is not None:
            return self.shape(text)
        for fold, clauses in self.expressions:  # loops, not all/any: run on every record shown
            seen = folded if fold else text
            for clause in clauses:
                for needle in clause:
                    if needle in seen:
                        break
                else:
                    break  # no needle of this clause: this expression cannot match
            else:
                return True
        return False


def _raw(*clauses: tuple[str, ...]) -> tuple[bool, Clauses]:
    return (False, clauses)


def _folded(*clauses: tuple[str, ...]) -> tuple[bool, Clauses]:
    return (True, clauses)


_CLOUDANT_KEY = _folded(("cl",), _KEYWORDS)
_CLOUDANT_URL = _folded(("http",), ("@",), (".cloudant.com",))

#: The plugins run by default, one per kind of real credential, in the order they run.
PLUGINS = (
    Plugin("artifactory", "ArtifactoryDetector", (_raw(("AKC",)), _raw(("AP",))), run=8),
    Plugin(
        "aws",
        "AWSKeyDetector",
        (_raw(("A3T", "ABIA", "ACCA", "AKIA", "ASIA")), _folded(("aws",), _KEYWORDS, ("'", '"'))),
    ),
    Plugin("azure_storage_key", "AzureStorageKeyDetector", (_raw(("AccountKey=",)),)),
    Plugin("basic_auth", "BasicAuthDetector", shape=_password_in_url),
    Plugin(
        "cloudant",
        "CloudantDetector",
        (_CLOUDANT_KEY, _CLOUDANT_KEY, _CLOUDANT_URL, _CLOUDANT_URL),
        run=24,
    ),
    Plugin("discord", "DiscordBotTokenDetector", shape=_dots_seven_apart, run=27),
    Plugin(
        "github_token", "GitHubTokenDetector", (_raw(("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),)
    ),
    Plugin(
        "gitlab_token",
        "GitLabTokenDetector",
        (
            _raw(("glpat-", "gldt-", "glft-", "glsoat-", "glrt-")),
            _raw(("GR1348941",)),
            _raw(("glcbt-",)),
            _raw(("glimt-",)),
            _raw(("glptt-",)),
            _raw(("glagent-",)),
            _raw(("gloas-",)),
        ),
    ),
    Plugin("ibm_cloud_iam", "IbmCloudIamDetector", (_folded(_KEYWORDS),), run=44),
    Plugin("ibm_cos_hmac", "IbmCosHmacDetector", (_folded(("secret",), ("key",)),), run=48),
    Plugin("jwt", "JwtTokenDetector", (_raw(("eyJ",), (".",)),)),
    Plugin("mailchimp", "MailchimpDetector", (_raw(("-us",)),), run=32),
    Plugin("npm", "NpmDetector", (_raw(("//",), ("/:_authToken=",)),)),
    Plugin("openai", "OpenAIDetector", (_raw(("sk-",), ("T3BlbkFJ",)),)),
    Plugin(
        "private_key",
        "PrivateKeyDetector",
        (
            _raw(("BEGIN DSA PRIVATE KEY",)),
            _raw(("BEGIN EC PRIVATE KEY",)),
            _raw(("BEGIN OPENSSH PRIVATE KEY",)),
            _raw(("BEGIN PGP PRIVATE KEY BLOCK",)),
            _raw(("BEGIN PRIVATE KEY",)),
            _raw(("BEGIN RSA PRIVATE KEY",)),
            _raw(("BEGIN SSH2 ENCRYPTED PRIVATE KEY",)),
            _raw(("PuTTY-User-Key-File-2",)),
        ),
    ),
    Plugin(
        "pypi_token",
        "PypiTokenDetector",
        (_raw(("pypi-AgEIcHlwaS5vcmc",)), _raw(("pypi-AgENdGVzdC5weXBpLm9yZw",))),
    ),
    Plugin("sendgrid", "SendGridDetector", (_raw(("SG.",)),)),
    Plugin(
        "slack",
        "SlackDetector",
        (_folded(("xox",)), _folded(("hooks.slack.com/serv",))),
    ),
    Plugin(
        "softlayer",
        "SoftlayerDetector",
        (_folded(("sl", "softlayer"), _KEYWORDS), _folded(("softlayer",), ("com/soap/v3",))),
        run=64,
    ),
    Plugin("square_oauth", "SquareOAuthDetector", (_raw(("sq0csp-",)),)),
    Plugin("stripe", "StripeDetector", (_raw(("rk_live_", "sk_live_")),)),
    Plugin("telegram_token", "TelegramBotTokenDetector", shape=_digits_before_colon, run=35),
    Plugin("twilio", "TwilioKeyDetector", (_raw(("AC",)), _raw(("SK",))), run=32),
)

#: The entropy plugins (``secrets_entropy = true``) look only at quoted strings: their
#: gate is the quote the scanner itself needs on a line (secret_scanners.py).
_QUOTED = (_folded(("'", '"')),)
ENTROPY_PLUGINS = (
    Plugin("high_entropy_strings", "Base64HighEntropyString", _QUOTED),
    Plugin("high_entropy_strings", "HexHighEntropyString", _QUOTED),
)


# --- what a line needs for a loaded plugin's expression to run on it ---------------------------

#: Needles by plugin (class name), for those whose expressions all need the same words
#: (case-folded; secret_scanners.py runs an expression on a line holding one of its own).
PLUGIN_NEEDLES = {
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


def expression_needles(name: str, pattern: str) -> tuple[str, ...]:
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
    return PLUGIN_NEEDLES.get(name, ())
