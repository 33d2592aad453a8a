"""A detect-secrets plugin is loaded only when a text could hold what it finds
(records/secret_gates.py); what is found and masked is the same as when every
plugin's every expression is compiled and run.

Each gate's literals are checked against what re's own parse of the expression
says every match holds (:func:`_required`), and the masking and scanning with
gates are compared with a run of every plugin on the til records, the hostile
command lines of the other tests, and fakes of every kind the plugins know.
Fakes are assembled from pieces, as in test_secrets.py.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from reliora_git.records import credentials, secret_gates, secret_scanners
from reliora_git.records.parse import parse_record
from tests.test_secrets import FAKES

try:  # re's own parser: sre_parse until Python 3.11
    from re import _constants as sre  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants as sre
    import sre_parse

TIL = Path(__file__).parent / "data" / "til" / ".reliora"

# --- what every match of an expression holds, from re's parse ---------------------------------

#: The most strings a piece of an expression is spelled out to (more: it counts as unknown).
_CAP = 64
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT))


def _exact(items: Sequence[Any]) -> set[str] | None:
    """Every string a sequence of parsed items matches, if few; else None."""
    found = {""}
    for op, av in items:
        each = _node_exact(op, av)
        if each is None:
            return None
        found = {a + b for a in found for b in each}
        if len(found) > _CAP:
            return None
    return found


def _node_exact(op: Any, av: Any) -> set[str] | None:
    if op is sre.LITERAL:
        return {chr(av)}
    if op is sre.IN:
        chars: set[str] = set()
        for inner, value in av:
            if inner is sre.LITERAL:
                chars.add(chr(value))
            elif inner is sre.RANGE and value[1] - value[0] < _CAP:
                chars.update(chr(c) for c in range(value[0], value[1] + 1))
            else:  # a negation or a category (\d is any Unicode digit): unknown
                return None
        return chars if len(chars) <= _CAP else None
    if op is sre.SUBPATTERN:
        return _exact(av[3].data)
    if op is sre.BRANCH:
        found: set[str] = set()
        for alternative in av[1]:
            each = _exact(alternative.data)
            if each is None:
                return None
            found |= each
        return found if len(found) <= _CAP else None
    if op in _REPEATS and av[1] <= 4:
        each = _exact(av[2].data)
        if each is None:
            return None
        found, spelled = set(), {""}
        for count in range(av[1] + 1):
            if count >= av[0]:
                found |= spelled
            spelled = {a + b for a in spelled for b in each}
            if len(spelled) > _CAP:
                return None
        return found
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return {""}  # consumes nothing; what it looks at is not counted on
    return None


def _clauses(items: Sequence[Any]) -> list[frozenset[str]]:
    """Every match of the sequence holds one string of each clause (CNF)."""
    found: list[frozenset[str]] = []
    run = {""}  # the strings the items since the last unknown one spell, joined

    def close() -> None:
        nonlocal run
        if "" not in run:
            found.append(frozenset(run))
        run = {""}

    for op, av in items:
        each = _node_exact(op, av)
        if each is not None:
            joined = {a + b for a in run for b in each}
            if len(joined) <= _CAP:
                run = joined
                continue
            close()
            run = each
            continue
        close()
        if op is sre.SUBPATTERN:
            found += _clauses(av[3].data)
        elif op in _REPEATS and av[0] >= 1:
            found += _clauses(av[2].data)
        elif op is sre.BRANCH:
            # One clause: for each alternative, its smallest clause; the match holds one.
            per = [_clauses(alternative.data) for alternative in av[1]]
            if all(per):
                found.append(frozenset().union(*(min(c, key=len) for c in per)))
    close()
    return found


def _required(regex: re.Pattern[str]) -> list[frozenset[str]]:
    """What every match of ``regex`` holds; case-folded when it ignores case."""
    parsed = sre_parse.parse(regex.pattern, regex.flags)
    found = _clauses(parsed.data)
    if regex.flags & re.IGNORECASE:
        found = [frozenset(s.casefold() for s in clause) for clause in found]
    return found


#: Categories a token run may be of: re's \\d and \\w hold no space of any kind.
_TOKEN_CATEGORIES = {
    sre.CATEGORY_DIGIT,
    sre.CATEGORY_UNI_DIGIT,
    sre.CATEGORY_WORD,
    sre.CATEGORY_UNI_WORD,
}


def _token_char(code: int) -> bool:
    """Whether secret_gates.token_run counts the character in a run."""
    char = chr(code)
    return (char.isalnum() or char in "_-") if code < 128 else not char.isspace()


def _token_class(op: Any, av: Any) -> bool:
    """Whether every character the item matches is one token_run counts."""
    if op is sre.LITERAL:
        return _token_char(av)
    if op is not sre.IN:
        return False
    for inner, value in av:
        if inner is sre.LITERAL and _token_char(value):
            continue
        if inner is sre.RANGE and all(_token_char(c) for c in range(value[0], value[1] + 1)):
            continue
        if inner is sre.CATEGORY and value in _TOKEN_CATEGORIES:
            continue
        return False
    return True


def _run(items: Sequence[Any]) -> int:
    """The longest run of token characters every match of the sequence holds."""
    best = 0
    for op, av in items:
        if op in _REPEATS and av[0] >= 1:
            inner = av[2].data
            one = len(inner) == 1 and _token_class(*inner[0])
            best = max(best, av[0] if one else _run(inner))
        elif op is sre.SUBPATTERN:
            best = max(best, _run(av[3].data))
        elif op is sre.BRANCH:
            best = max(best, min(_run(alternative.data) for alternative in av[1]))
    return best


def _fold_i(text: str) -> str:
    """``casefold``, then ``İ`` and ``ı`` as ``i``: what IGNORECASE matches ``i`` with."""
    return text.casefold().replace("i\u0307", "i").replace("ı", "i")


# --- texts: real-looking secrets of every kind, hostile lines, the til records ----------------

_A = "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5bC7dE9fG1hJ3kL5mN7pQ9rS1tU3vW5xY7"
_HEX = "0123456789abcdef" * 8
_LOW = "qwertyuiopasdfghjklzxcvbnm" * 3
SECRETS = {
    **FAKES,
    "artifactory": "AK" + "C" + _A[:40],
    "artifactory-ap": "AP" + "6" + _A[:20],
    "aws-keyword": "aws_secret_key = '" + _A[:40].replace("_", "/") + "'",
    "azure": "AccountKey=" + (_A * 2)[:88],
    "cloudant-key": "cloudant_api_key = " + _HEX[:64],
    "cloudant-password": "cl_password: " + _LOW[:24],
    "cloudant-url": "https://acct:" + _HEX[:64] + "@acct.cloudant.com",
    "discord": "M" + _A[:23] + "." + _A[:6] + "." + _A[:27],
    "gitlab-others": " ".join(p + _A[:25] for p in ("gld" + "t-", "GR13" + "48941", "glim" + "t-")),
    "ibm-cloud-iam": "ibm_cloud_iam_api_key = " + _A[:44],
    "ibm-cos": "cos_hmac_secret_access_key = " + _HEX[:48],
    "mailchimp": _HEX[:32] + "-us" + "12",
    "openai": "sk" + "-" + _A[:20] + "T3Bl" + "bkFJ" + _A[:20],
    "pypi": "py" + "pi-AgEIcHlwaS5vcmc" + _A * 2,
    "sendgrid": "S" + "G." + _A[:22] + "." + _A[:43],
    "slack-webhook": "https://hooks.sl"
    + "ack.com/services/T"
    + _A[:9]
    + "/B"
    + _A[:9]
    + "/x"
    + _A[:20],
    "softlayer": "softlayer_api_key = " + _HEX[:64],
    "softlayer-url": "https://api.softlayer.com/soap/v3/" + _HEX[:64],
    "square": "sq0" + "csp-" + _A[:43],
    "telegram": "123456789" + ":" + _A[:35],
    "twilio-ac": "A" + "C" + _HEX[:32],
    "command-line": "PGPASSWORD='hunter2-pg-pass' psql; mysql -uroot -pS3cretMysqlPw app",
    "header": "curl -H 'Authorization: Bearer " + _A[:30] + "'",
    "anthropic": "sk-" + "ant-api03-" + _A[:40],
    "quoted-entropy": "key = '" + _A[:40] + "' and \"" + _HEX[:40] + '"',
}
HOSTILE = [
    "PGPASSWORD='hunter2-pg-pass' psql -h db -c 'select 1'",
    "mysql -uroot -pS3cretMysqlPw app -e 'select 1'",
    "deploy --password opensesame-42 --host h",
    "httpie-get -H 'Authorization: Bearer sk_live_abcdefghijklmnop' x",
    "git clone https://bob:tr0ub4dor@example.com/r.git",
    "/" * 5000 + " " + FAKES["github-token"],
    ("eyJ" * 3000) + " x",
    ("//x" * 2000) + "/:_authToken=" + "npm_" + _A[:36],
    "İ ı ſ K ß: ibm_cloud_İam_apİ_key = " + _A[:44],
    "٣٤٥٦٧٨٩١٢:" + _A[:35],  # a token of Unicode digits: \d matches them
]
_CONTEXT = ["x", " ", "'", '"', "=", ":", ".", "\n", "key", "token", "pass", "export X=", "- "]


def _texts() -> Iterator[str]:
    yield from (path.read_text(encoding="utf-8") for path in sorted(TIL.rglob("*.md")))
    yield from HOSTILE
    yield from SECRETS.values()
    rng = random.Random(41)
    values = list(SECRETS.values())
    for _ in range(300):
        pieces = rng.choices(values, k=rng.randint(1, 3)) + rng.choices(_CONTEXT, k=4)
        rng.shuffle(pieces)
        yield "".join(pieces)


def _every_plugin_run(entropy: bool = False) -> None:
    secret_scanners.all_scanners(entropy)


def _fresh() -> None:
    """Forget the plugins loaded (their modules stay imported): the next scan loads anew."""
    secret_scanners._LOADED.clear()


def _plugin(module: str, name: str) -> Any:
    return getattr(secret_scanners._import_plugins([module])[module], name)()


# --- the gates ---------------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", [p for p in secret_gates.PLUGINS if p.shape is None])
def test_each_clause_of_a_gate_is_held_by_every_match_of_its_expression(
    plugin: secret_gates.Plugin,
) -> None:
    expressions = _plugin(plugin.module, plugin.name).denylist
    assert len(plugin.expressions) == len(expressions)  # one gate an expression, in order
    for (fold, clauses), regex in zip(plugin.expressions, expressions, strict=True):
        assert fold or not regex.flags & re.IGNORECASE, regex.pattern
        required = _required(regex)
        for clause in clauses:
            assert all(needle and (not fold or "i" not in needle) for needle in clause)
            # Some clause the expression needs has, in each of its strings, a needle of ours.
            assert any(
                all(any(n in (s.casefold() if fold else s) for n in clause) for s in strings)
                for strings in required
            ), (regex.pattern, clause, required)


@pytest.mark.parametrize("plugin", [p for p in secret_gates.PLUGINS if p.run])
def test_each_run_a_gate_needs_is_in_every_match_of_its_expressions(
    plugin: secret_gates.Plugin,
) -> None:
    for regex in _plugin(plugin.module, plugin.name).denylist:
        assert plugin.run <= _run(sre_parse.parse(regex.pattern, regex.flags).data), regex.pattern


def test_no_character_of_a_token_run_class_is_a_space_even_ignoring_case() -> None:
    spaces = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    assert not re.findall(r"[a-zA-Z0-9_-]|\d|\w", spaces, re.IGNORECASE)
    assert secret_gates.token_run("a b-c+d/e=f_g1 ok.x:yz٣٤ b-c_d") == 5
    assert secret_gates.token_run("") == 0


def test_case_folding_finds_what_ignorecase_matches_except_dotted_and_dotless_i() -> None:
    every = "".join(chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000)
    for ascii_char in "abcdefghijklmnopqrstuvwxyz0123456789-_.:/@=\"' ":
        for other in re.findall(re.escape(ascii_char), every, re.IGNORECASE):
            if other not in "İı":
                assert other.casefold() == ascii_char, (ascii_char, other)


def test_what_an_expression_is_said_to_hold_every_match_of_it_holds() -> None:
    regexes = [
        (r, p.run)
        for p in secret_gates.PLUGINS
        for r in getattr(_plugin(p.module, p.name), "denylist", [])
    ]
    rng = random.Random(7)
    values = [*SECRETS.values(), *HOSTILE[:5], "İ", "ı", "K"]
    lines = [*values] + [
        "".join(rng.choices(values + _CONTEXT, k=rng.randint(1, 5))) for _ in range(2000)
    ]
    matched = 0
    for regex, run in regexes:
        required = _required(regex)
        for line in lines:
            for match in regex.finditer(line):
                matched += 1
                assert secret_gates.token_run(match.group()) >= run, (regex.pattern, match)
                text = _fold_i(match.group()) if regex.flags & re.IGNORECASE else match.group()
                for strings in required:
                    assert any(s in text for s in strings), (regex.pattern, match.group(), strings)
    assert matched > 1000


def test_the_shape_gates_pass_every_match_of_their_plugin() -> None:
    shaped = [p for p in secret_gates.PLUGINS if p.shape is not None]
    samples = {
        "DiscordBotTokenDetector": "discord",
        "TelegramBotTokenDetector": "telegram",
        "BasicAuthDetector": "basic-auth-credentials",
    }
    assert {p.name for p in shaped} == set(samples)
    rng = random.Random(11)
    pieces = ["M", "N", ".", ":", "1", "٣", "a", "_", "-", " ", "Z" * 6, "9" * 8, _A[:23], _A[:27]]
    pieces += ["://", "@", "/", "user", "pw", "\u2028", "!", "https://"]
    for plugin in shaped:
        (regex,) = _plugin(plugin.module, plugin.name).denylist
        shape = plugin.shape
        assert shape is not None
        for _ in range(20000):
            line = "".join(rng.choices(pieces, k=rng.randint(1, 12)))
            if regex.search(line):
                assert shape(line), line
        assert shape(SECRETS[samples[plugin.name]])
        assert not shape("words: 2 of them. And M. A.B. x.y at 2026-12-06T09:05:11Z git@h.com")
        assert not shape("https://x.org/@user ssh://git@host:22/r a://b:@c")


def test_the_entropy_plugins_gates_are_the_quotes_their_scanner_needs() -> None:
    for plugin in secret_gates.ENTROPY_PLUGINS:
        ((fold, clauses),) = plugin.expressions
        assert fold and clauses == (tuple(secret_gates.PLUGIN_NEEDLES[plugin.name]),)


# --- the same masks and findings as when every plugin runs -------------------------------------


def _outputs(text: str, entropy: bool) -> tuple[Any, ...]:
    return (
        credentials.redact(text, entropy=entropy),
        credentials.scan_fields([("x", text)], entropy=entropy),
        credentials.scan_store_file("experiences/x.md", text, entropy=entropy),
        credentials.scan_event_file("feedback/x/1.md", text, entropy=entropy),
        credentials.masked_record({"id": "x", "title": text, "problems": ["a", text], "task": ""}),
    )


@pytest.mark.parametrize("entropy", [False, True])
def test_masks_and_findings_are_those_of_every_plugin_run(entropy: bool) -> None:
    texts = list(_texts())
    try:
        alone = []  # each text in a process of its own: only the plugins it needs
        for text in texts:
            _fresh()
            alone.append(_outputs(text, entropy))
        _fresh()  # one process scanning them all: plugins added, then all loaded at once
        in_turn = [_outputs(text, entropy) for text in texts]
        assert secret_scanners.ready(entropy) is not None
        _every_plugin_run(entropy)
        for text, one, turn in zip(texts, alone, in_turn, strict=True):
            assert one == turn == _outputs(text, entropy), text[:200]
        assert sum(one[0] != text for text, one in zip(texts, alone, strict=True)) > 300
    finally:
        _fresh()


def test_a_shown_record_is_masked_as_by_every_plugin() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(TIL.rglob("experiences/**/*.md"))]
    for name, value in SECRETS.items():  # a record holding each kind, in every field
        texts.append(
            f"---\nid: x-{name}\ntitle: {json.dumps('t ' + value)}\ntags: [a]\n---\n\n"
            f"## Task\n{value}\n\n"
            f"## Problems\n- {value}\n\n## Solution\nrun\n{value}\n\n## Notes\n{value}\n"
        )
    try:
        masked = 0
        for text in texts:
            _fresh()
            gated, every = parse_record(text).record, parse_record(text).record
            credentials.mask_record(gated)
            _every_plugin_run()
            credentials.mask_record(every)
            assert gated == every
            masked += gated != parse_record(text).record
        assert masked >= len(SECRETS) - 1  # each kind but the quoted one (entropy only)
    finally:
        _fresh()


def test_a_plain_record_loads_no_plugin() -> None:
    text = "Run the migrations before the tests: make db && make test.\nSee docs/db.md\n"
    code = (
        "import sys\nfrom reliora_git.records import credentials\n"
        f"assert credentials.redact({text!r}) == {text!r}\n"
        "print(sorted(m for m in sys.modules if m.startswith('detect_secrets')))\n"
    )
    import subprocess

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
