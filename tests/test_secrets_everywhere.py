"""Secrets everywhere a store file holds text (issue 23, docs/security.md "Secrets everywhere").

Each place a credential can hide — an unknown or nested front-matter key, a key
spelled with a YAML escape, an unknown section, the text before the first
heading, the id, the file name, ``retire --reason``, a feedback event's author,
record or unknown key — is refused at save where it can be, and an error in
``check``, the hook (a real ``git commit``) and ``review`` where it cannot.
Then the masks, the scan of hostile lines, and the first scans from threads.
Every test here fails on b6c7c9a (the commit before this work).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reliora_git.records import credentials, secret_gates, secret_scanners
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git
from tests.test_secrets import FAKES, TOKEN, _secret_part

SLACK_ID = FAKES["slack-token"]  # lower case, digits and dashes: a valid record id
EVENT = "20261203T000000Z-abcdef.md"
BODY = "## Problems\n- something broke\n\n## Solution\nfix it\n"

#: place → (front matter lines to add, body) of a hand-written record holding TOKEN.
PLACES = {
    "unknown key": (f"ticket_note: {json.dumps(TOKEN)}", BODY),
    "nested key": (f"meta:\n  deep:\n    - [x, {{token: {json.dumps(TOKEN)}}}]", BODY),
    "key name": (f"meta:\n  {TOKEN}: 1", BODY),
    "yaml escape": ('escaped: "\\x67' + TOKEN[1:] + '"', BODY),
    "unknown section": ("", BODY + f"\n## Deploy notes\nexport T={TOKEN}\n"),
    "preamble": ("", f"seen in the log: {TOKEN}\n\n" + BODY),
}


def _hand_record(store: Store, record_id: str, front: str, body: str, name: str = "") -> Path:
    lines = [f"id: {record_id}", 'title: "Deploy the app"', "tags: [deploy]"]
    text = "---\n" + "\n".join(lines + ([front] if front else [])) + "\n---\n" + body
    path = store.experiences / f"{name or record_id}.md"
    path.write_text(text, encoding="utf-8")
    return path


def _event(store: Store, record: str, front: str = "", note: str = "worked") -> Path:
    path = store.feedback / "target" / EVENT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrecord: {record}\noutcome: success\nat: '2026-12-03T00:00:00Z'\n"
        f"{front}---\n{note}\n",
        encoding="utf-8",
    )
    return path


def _commit(repo: Path, message: str) -> subprocess.CompletedProcess[str]:
    git(repo, "add", "-A")
    return subprocess.run(
        ["git", "commit", "-m", message], cwd=repo, capture_output=True, text=True, check=False
    )


def _never_shown(value: str, output: str) -> None:
    assert _secret_part(value) not in output
    assert value[-8:] not in output  # never more than the last 4 characters


# --- a record: check and the hook ----------------------------------------------------------


@pytest.mark.parametrize("place", sorted(PLACES))
def test_check_reports_a_secret_anywhere_in_a_record(store: Store, cli: Cli, place: str) -> None:
    front, body = PLACES[place]
    _hand_record(store, "deploy", front, body)
    done = cli("check")
    assert done.returncode == 1, done.stdout
    assert "deploy.md: error: holds a secret: " in done.stdout
    assert "GitHub Token" in done.stdout
    _never_shown(TOKEN, done.stdout + done.stderr)
    # Each finding names a line of the file (a field's line for known fields).
    as_json = cli("check", "--json")
    problems = json.loads(as_json.stdout)["files"][0]["problems"]
    assert any(re.search(r"line \d+: GitHub Token", p["message"]) for p in problems)


@pytest.mark.parametrize("place", ["unknown key", "nested key", "unknown section", "preamble"])
def test_the_hook_blocks_a_secret_anywhere_in_a_record(
    repo: Path, store: Store, cli: Cli, place: str
) -> None:
    assert cli("hooks", "install").returncode == 0
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    before = git(repo, "rev-parse", "HEAD")
    front, body = PLACES[place]
    _hand_record(store, "deploy", front, body)
    done = _commit(repo, "leak")
    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert "holds a secret: " in output and "GitHub Token" in output
    _never_shown(TOKEN, output)
    assert git(repo, "rev-parse", "HEAD") == before


def test_an_id_and_file_name_holding_a_token_are_errors_in_check_and_the_hook(
    repo: Path, store: Store, cli: Cli
) -> None:
    assert cli("hooks", "install").returncode == 0
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    _hand_record(store, SLACK_ID, "", BODY)
    checked = cli("check")
    assert checked.returncode == 1
    assert "Slack Token" in checked.stdout
    done = _commit(repo, "a token as an id")
    assert done.returncode == 1
    assert "Slack Token" in done.stdout + done.stderr


def test_a_file_name_holding_a_token_is_an_error_even_with_a_clean_id(
    store: Store, cli: Cli
) -> None:
    _hand_record(store, "deploy", "", BODY, name=SLACK_ID)
    done = cli("check")
    assert done.returncode == 1
    assert "file name, line 1: Slack Token" in done.stdout


# --- at save: edit, retire --------------------------------------------------------------------


@pytest.mark.parametrize("place", ["unknown key", "unknown section", "preamble", "yaml escape"])
def test_edit_refuses_a_secret_anywhere(store: Store, cli: Cli, tmp_path: Path, place: str) -> None:
    assert cli("record", "--title", "Deploy", "--task", "t", "--solution", "s").returncode == 0
    (saved,) = store.experiences.glob("*.md")
    before = saved.read_text()
    front, body = PLACES[place]
    edited = tmp_path / "edited.md"
    head, rest = before.split("\n---\n", 1)
    edited.write_text(
        head + ("\n" + front if front else "") + "\n---\n" + (body if body != BODY else rest)
    )
    done = cli("edit", saved.stem, env={"EDITOR": f"cp {edited}", "VISUAL": ""})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "GitHub Token" in done.stderr
    _never_shown(TOKEN, done.stdout + done.stderr)
    assert saved.read_text() == before


def test_retire_refuses_a_reason_holding_a_secret(store: Store, cli: Cli) -> None:
    assert cli("record", "--title", "Deploy", "--task", "t", "--solution", "s").returncode == 0
    (saved,) = store.experiences.glob("*.md")
    before = saved.read_text()
    done = cli("retire", saved.stem, "--reason", f"rotated {TOKEN}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "retired_reason, line 1: GitHub Token" in done.stderr
    _never_shown(TOKEN, done.stdout + done.stderr)
    assert saved.read_text() == before


# --- feedback --------------------------------------------------------------------------------


def test_feedback_refuses_an_author_holding_a_secret(repo: Path, store: Store, cli: Cli) -> None:
    assert cli("record", "--title", "Target", "--task", "t", "--solution", "s").returncode == 0
    git(repo, "config", "user.name", TOKEN)
    done = cli("feedback", "target", "success", "--note", "worked")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "author, line 1: GitHub Token" in done.stderr
    _never_shown(TOKEN, done.stdout + done.stderr)
    assert not any(store.feedback.rglob("*.md"))


@pytest.mark.parametrize(
    "where",
    ["note", "author", "unknown key", "record"],
)
def test_check_reports_a_secret_anywhere_in_a_feedback_event(
    store: Store, cli: Cli, write_record: RecordMaker, where: str
) -> None:
    write_record("target", "Target")
    value = SLACK_ID if where == "record" else TOKEN
    if where == "note":
        _event(store, "target", note=f"used {TOKEN}")
    elif where == "author":
        _event(store, "target", f"author: {json.dumps(TOKEN)}\n")
    elif where == "unknown key":
        _event(store, "target", f"session:\n  token: {json.dumps(TOKEN)}\n")
    else:
        _event(store, SLACK_ID)
    done = cli("check")
    assert done.returncode == 1, done.stdout
    assert f"{EVENT}: error: holds a secret: " in done.stdout
    assert ("Slack Token" if where == "record" else "GitHub Token") in done.stdout
    _never_shown(value, done.stdout + done.stderr)


def test_the_hook_blocks_a_feedback_event_with_a_secret_in_its_author(
    repo: Path, store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("target", "Target")
    assert cli("hooks", "install").returncode == 0
    assert _commit(repo, "base").returncode == 0
    _event(store, "target", f"author: {json.dumps(TOKEN)}\nextra: 1\n")
    done = _commit(repo, "feedback")
    assert done.returncode == 1
    assert "author, line 1: GitHub Token" in done.stdout + done.stderr


# --- review ----------------------------------------------------------------------------------


def test_review_reports_secrets_in_unknown_keys_and_feedback_authors(
    repo: Path, store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("target", "Target")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "feature")
    _hand_record(store, "deploy", PLACES["unknown key"][0], BODY)
    _event(store, "target", f"author: {json.dumps(SLACK_ID)}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "leak", "--no-verify")
    done = cli("review", "--base", "main", "--format", "json")
    assert done.returncode == 1, done.stderr
    assert "GitHub Token" in done.stdout
    assert "author, line 1: Slack Token" in done.stdout
    # Withholding what review prints (the author here) is tests/test_review_withholding.py's.
    _never_shown(TOKEN, done.stdout)


# --- masks and redact ------------------------------------------------------------------------


def test_masks_show_at_most_the_last_four_characters_and_nothing_of_a_short_value() -> None:
    assert credentials.mask(TOKEN) == "…" + TOKEN[-4:]
    assert credentials.mask("hunter2") == "…"
    assert credentials.mask("elevenchars") == "…"
    (finding,) = credentials.scan_fields([("solution", "postgres://admin:hunter2@db/app")])
    assert finding.masked == "…"
    (finding,) = credentials.scan_fields([("solution", FAKES["basic-auth-credentials"])])
    assert finding.masked == "…" + "s3cr3tPassw0rd"[-4:]
    for kind, value in FAKES.items():
        for found in credentials.scan_fields([("x", value)]):
            shown = found.masked.replace("…", "")
            assert len(shown) <= 4, (kind, found.masked)


def test_redact_replaces_every_secret_by_its_mask_and_keeps_the_rest() -> None:
    text = (
        f"token {TOKEN} here\r\n"
        "postgres://admin:hunter2@db/app\n"
        f"{FAKES['private-key']}\n"
        f"T={TOKEN} # pragma: allowlist secret\n"
        "nothing to see"
    )
    shown = credentials.redact(text)
    assert shown == (
        f"token …{TOKEN[-4:]} here\r\n"
        "postgres://admin:…@db/app\n"
        f"{credentials.redact(FAKES['private-key'])}\n"
        f"T=…{TOKEN[-4:]} # pragma: allowlist secret\n"
        "nothing to see"
    )
    assert "hunter2" not in shown and _secret_part(TOKEN) not in shown
    for kind, value in FAKES.items():
        assert _secret_part(value) not in credentials.redact(f"a {value} b"), kind
    assert credentials.redact("plain text\n") == "plain text\n"


def test_scan_store_file_names_the_part_of_the_file_and_its_line() -> None:
    text = "---\nid: deploy\nmeta:\n  deep: " + json.dumps(TOKEN) + "\n---\nintro\n## Odd\nx\n"
    (finding,) = credentials.scan_store_file(".reliora/experiences/deploy.md", text)
    assert (finding.field, finding.line, finding.kind) == ("front matter meta", 4, "GitHub Token")


# --- linear scanning -------------------------------------------------------------------------

MIB = 1 << 20


def test_a_hostile_mebibyte_line_is_scanned_and_a_token_after_it_still_found() -> None:
    # 64,000 slashes took 17 s (npm's expression backtracks); a MiB about an hour.
    for hostile in ("/" * MIB, ("eyJ" * MIB)[:MIB], ("//x" * MIB)[:MIB] + "/:_authToken="):
        assert credentials.scan_fields([("x", hostile)]) == []
        (finding,) = credentials.scan_fields([("x", hostile + " " + TOKEN)])
        assert finding.kind == "GitHub Token"
        assert credentials.redact(hostile) == hostile


def test_a_whole_file_scan_labels_hostile_keys_and_headings_in_linear_time() -> None:
    # A key or heading line with a long run of blanks that does not end it: the labels
    # were found with lazy groups before a trailing run, quadratic (minutes at a MiB).
    blanks = " " * MIB
    text = f"---\nid: x{blanks}y\ntitle: t\n---\n## {blanks}x\n{TOKEN}\n"
    (finding,) = credentials.scan_store_file("experiences/x.md", text)
    assert finding.kind == "GitHub Token"
    assert finding.line == 6


def test_the_linear_npm_and_jwt_matchers_find_what_their_expressions_find() -> None:
    npm = re.compile(r"\/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*")
    jwt = re.compile(r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?")
    rng = random.Random(23)
    npm_parts = ["/", "/:_authToken=", " ", "npm_", "a", "0123456789abcdef" * 2 + "0123", "x"]
    jwt_parts = ["eyJ", "a", ".", "=", " ", "-", "e", "J", "/", "+"]
    for _ in range(20000):
        line = "".join(rng.choice(npm_parts) for _ in range(rng.randint(0, 8)))
        assert bool(npm.search(line)) == bool(list(secret_scanners._npm_spans(line))), line
        line = "".join(rng.choice(jwt_parts) for _ in range(rng.randint(0, 14)))
        assert [m.span() for m in jwt.finditer(line)] == list(secret_scanners._jwt_spans(line)), (
            line
        )


def test_each_line_gets_the_kinds_the_plugins_themselves_find() -> None:
    """The needles, the keyword-anchored search and the linear npm/JWT code change
    how the plugins are run, never what they find: compared with each plugin's own
    ``analyze_string`` on random lines built from credentials and their context."""
    modules = secret_scanners._import_plugins(sorted({p.module for p in secret_gates.PLUGINS}))
    plugins = [getattr(modules[p.module], p.name)() for p in secret_gates.PLUGINS]
    pieces = [
        *FAKES.values(),
        *("ibm_cloud_iam_api_key = ", "cos_hmac_", "secret_access_key", "cloudant_password: "),
        *("sl_api_key=", "softlayer_token ", "aws_secret_key='", "password", "pass", "token"),
        *("'", '"', "[", "]", " ", "=", ":", "x", "-", "_", "ß", "İ", "ſ"),
        *("a" * 44, "0123456789abcdef" * 4, "A1b2" * 10, "abcdefghijklmnopqrstuvwx"),
        *("https://acct:", "@acct.cloudant.com", "AKC" + "a" * 12, "APB" + "a" * 10),
        *("AC" + "0" * 32, "12345678:" + "A" * 35, "-us12", "0" * 32),
    ]
    scanners = secret_scanners.all_scanners(False)
    rng = random.Random(23)
    for _ in range(5000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        expected = {p.secret_type for p in plugins if list(p.analyze_string(line))}
        # The command-line scanner is ours, not a plugin's: its kinds are compared elsewhere.
        ours = {
            secret_scanners.COMMAND_LINE_KIND,
            secret_scanners.HEADER_KIND,
            secret_scanners.TOKEN_KIND,
        }
        found = {hit.kind for hit in secret_scanners.line_hits(scanners, line)} - ours
        assert found == expected, line


# --- plugin loading --------------------------------------------------------------------------


def test_first_scans_from_many_threads_at_once_all_work() -> None:
    # A fresh process: the plugins load on its first scans, here 16 at once.
    code = f"""
import threading
from reliora_git.records import credentials
barrier = threading.Barrier(16)
results, errors = [], []
def scan(entropy):
    barrier.wait()
    try:
        results.append(credentials.scan_fields([("x", {TOKEN!r})], entropy=entropy))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=scan, args=(n % 2 == 0,)) for n in range(16)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert not errors, errors
assert len(results) == 16 and all(len(r) == 1 for r in results), results
"""
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
