"""Secrets never enter the store (docs/security.md): every entry point, ten kinds of credential.

The credentials are fakes assembled at test time from pieces, so that no
live-looking literal sits in the repository for other scanners to trip on.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git


def _b64(data: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


_ALNUM = "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5bC7dE9"
#: kind (detect-secrets' name, as a slug) → a fake credential of that kind.
FAKES = {
    "github-token": "gh" + "p_" + _ALNUM[:36],
    "aws-access-key": "AK" + "IA" + "QWERTYUIOPASDFGH",
    "gitlab-token": "glp" + "at-" + _ALNUM[:20],
    "slack-token": "xo" + "xb-" + "1234567890-1234567890-" + "abcdefghijklmnop",
    "stripe-access-key": "sk_" + "live_" + _ALNUM[:24],
    "private-key": "-----BEGIN RSA " + "PRIVATE KEY-----",
    "json-web-token": _b64({"alg": "HS256", "typ": "JWT"})
    + "."
    + _b64({"sub": "1234567890", "name": "x"})
    + "."
    + _ALNUM[:43],
    "basic-auth-credentials": "postgres://admin:" + "s3cr3tPassw0rd" + "@db.example.com/app",
    "npm-tokens": "//registry.npmjs.org/:_authToken=" + "np" + "m_" + _ALNUM[:36],
    "twilio-api-key": "S" + "K" + "0123456789abcdef0123456789abcdef",
}
TOKEN = FAKES["github-token"]


def _secret_part(value: str) -> str:
    """A piece of the value that must never be printed (its middle)."""
    return value[len(value) // 2 - 4 : len(value) // 2 + 4]


@pytest.mark.parametrize("kind", sorted(FAKES))
def test_record_refuses_each_kind_with_the_value_masked(store: Store, cli: Cli, kind: str) -> None:
    value = FAKES[kind]
    done = cli("record", "--title", "Deploy", "--task", "t", "--solution", f"run it\nX={value}")
    assert done.returncode == 2
    assert "solution, line 2: " in done.stderr
    assert _secret_part(value) not in done.stdout + done.stderr
    assert list(store.experiences.glob("*.md")) == []
    body = json.dumps({"title": "D", "task": f"t {value}", "solution": "s"})
    refused = cli("record", "--json", "-", input=body)
    assert refused.returncode == 2
    as_json = json.loads(refused.stdout)
    (finding,) = as_json["error"]["findings"]
    assert (as_json["error"]["code"], finding["field"], finding["kind"]) == (
        "secret_found",
        "task",
        kind,
    )
    assert _secret_part(value) not in json.dumps(as_json)
    assert list(store.experiences.glob("*.md")) == []


def test_each_finding_is_one_line_naming_field_line_and_kind(store: Store, cli: Cli) -> None:
    done = cli(
        "record",
        "--title",
        "Env dump",
        "--task",
        "t",
        "--problem",
        "fine",
        "--problem",
        f"token {TOKEN}",
        "--solution",
        f"a\nb\nAWS={FAKES['aws-access-key']}",
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[1:] == [
        f"reliora: error: problems[2], line 1: GitHub Token (…{TOKEN[-4:]})",
        "reliora: error: solution, line 3: AWS Access Key (…DFGH)",
    ]


def test_a_pragma_allows_a_false_positive_and_allow_secret_saves_once(
    repo: Path, store: Store, cli: Cli
) -> None:
    url = FAKES["basic-auth-credentials"]
    allowed = cli(
        "record",
        "--title",
        "Pragma",
        "--task",
        "t",
        "--solution",
        f"{url}  # pragma: allowlist secret",
    )
    assert allowed.returncode == 0, allowed.stderr
    done = cli("record", "--title", "Example URL", "--task", "t", "--solution", url)
    assert done.returncode == 2
    saved = cli(
        "record",
        "--allow-secret",
        "basic-auth-credentials",
        "--title",
        "Example URL",
        "--task",
        "t",
        "--solution",
        url,
    )
    assert saved.returncode == 0, saved.stderr
    # Recorded nowhere else: check and the hook still report it.
    checked = cli("check")
    assert checked.returncode == 1
    assert "holds a secret: solution, line 1: Basic Auth Credentials" in checked.stdout
    assert "Pragma" not in checked.stdout and "pragma" not in checked.stdout


def test_feedback_refuses_a_note_with_a_secret(store: Store, cli: Cli) -> None:
    assert cli("record", "--title", "Target", "--task", "t", "--solution", "s").returncode == 0
    done = cli("feedback", "target", "success", "--note", f"used {TOKEN}")
    assert done.returncode == 2
    assert "note, line 1: GitHub Token" in done.stderr
    assert _secret_part(TOKEN) not in done.stderr
    assert not any(store.feedback.rglob("*.md"))


def test_the_hook_blocks_a_commit_with_a_secret_and_the_pragma_lets_it_through(
    repo: Path, store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    assert cli("hooks", "install").returncode == 0
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    before = git(repo, "rev-parse", "HEAD")
    write_record("leaky", "Leaky record", f"## Task\nt\n\n## Solution\nexport T={TOKEN}\n")
    git(repo, "add", "-A")
    done = subprocess.run(["git", "commit", "-m", "leak"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert "holds a secret: solution, line 1: GitHub Token" in output
    assert _secret_part(TOKEN) not in output
    assert git(repo, "rev-parse", "HEAD") == before
    write_record(
        "leaky",
        "Leaky record",
        f"## Task\nt\n\n## Solution\nT={TOKEN} # pragma: allowlist secret\n",
    )
    git(repo, "add", "-A")
    done = subprocess.run(["git", "commit", "-m", "ok"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # A staged feedback note with a secret blocks too (written by hand: feedback refuses it).
    event = store.feedback / "leaky" / "20261203T000000Z-abcdef.md"
    event.parent.mkdir()
    event.write_text(
        f"---\nrecord: leaky\noutcome: success\nat: '2026-12-03T00:00:00Z'\n---\nwith {TOKEN}\n"
    )
    git(repo, "add", "-A")
    done = subprocess.run(["git", "commit", "-m", "fb"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 1
    assert "note, line 1: GitHub Token" in done.stdout + done.stderr


def test_review_reports_secrets_masked_and_exits_1(
    repo: Path, store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("base", "Base record")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "feature")
    write_record(
        "leaky", "Leaky record", f"## Problems\n- saw {TOKEN} in the log\n\n## Solution\nfix\n"
    )
    event = store.feedback / "base" / "20261203T000000Z-abcdef.md"
    event.parent.mkdir()
    event.write_text(
        f"---\nrecord: base\noutcome: success\nat: '2026-12-03T00:00:00Z'\n---\nkey {TOKEN}\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "leak", "--no-verify")
    for fmt in ("markdown", "text", "json"):
        done = cli("review", "--base", "main", "--format", fmt)
        assert done.returncode == 1, done.stderr
        assert _secret_part(TOKEN) not in done.stdout
        assert "GitHub Token" in done.stdout
        assert "withheld" in done.stdout


def test_the_mcp_record_and_feedback_tools_refuse_secrets(store: Store, repo: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import reliora_mcp, run

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            refused = await session.call_tool(
                "record", {"title": "Leak", "task": "t", "solution": f"T={TOKEN}"}
            )
            assert refused.is_error
            error = refused.structured_content["error"]  # type: ignore[index]
            assert error["code"] == "secret_found"
            assert error["findings"][0]["kind"] == "github-token"
            assert _secret_part(TOKEN) not in refused.content[0].text  # type: ignore[union-attr]

    run(scenario)
    assert list(store.experiences.glob("*.md")) == []


def test_check_reports_a_secret_in_a_hand_written_record(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record(
        "hand", "Hand written", f"## Task\nt\n\n## Solution\nS={FAKES['stripe-access-key']}\n"
    )
    first = cli("check")
    assert first.returncode == 1
    assert "hand.md: error: holds a secret: solution, line 1: Stripe Access Key" in first.stdout
    again = cli("check")  # the scan is kept in the index with the file's identity
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)


def test_search_never_imports_the_scanner(store: Store, cli: Cli, repo: Path) -> None:
    # The scanner masks a record's secrets when its file is parsed (storage/values.py); a
    # search of a store whose files are all known (the index's cache) never loads it.
    assert cli("record", "--title", "Deploy", "--task", "t", "--solution", "s").returncode == 0
    for path in store.experiences.glob("*.md"):
        os.utime(path, (1_700_000_000, 1_700_000_000))  # old enough to be cached
    assert cli("search", "deploy").returncode == 0  # the file is parsed and cached
    code = (
        "import sys\n"
        "from reliora_git.interfaces.commands.searching import fast_main\n"
        f"fast_main(['search', 'deploy', '--json', '--repo', {str(repo)!r}])\n"
        "assert not [m for m in sys.modules if m.startswith('detect_secrets')], 'imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_scanner_leaves_the_real_packages_to_everyone_else() -> None:
    code = (
        "from reliora_git.records import credentials\n"
        f"assert credentials.scan_fields([('s', {TOKEN!r})], entropy=True)\n"
        "import detect_secrets, requests\n"
        "assert detect_secrets.SecretsCollection\n"
        "assert callable(requests.get)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_review_diff_never_shows_a_secret_even_one_being_removed(
    repo: Path, store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("leaky", "Leaky", f"## Task\nt\n\n## Solution\nuse T={TOKEN} here\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "leak", "--no-verify")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "fix")
    write_record("leaky", "Leaky", "## Task\nt\n\n## Solution\nuse the vault here\n")
    git(repo, "commit", "-qam", "remove the token")
    for fmt in ("markdown", "text", "json"):
        done = cli("review", "main", "--format", fmt)
        assert _secret_part(TOKEN) not in done.stdout
        assert "withheld" in done.stdout
