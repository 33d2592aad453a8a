"""A query is searched for its first 256 unique tokens, and says how many it left out.

A pasted log of 10,000 words used to score every word against the store (30 s and
1 GB). The cap lives in Query.parse and the document's ``truncatedTokens`` in the
one search document builder (jsonio), so local search, MCP search and org search
all cut the same tokens and say so the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from reliora_git.search.rank import QUERY_TOKEN_CAP, Query
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

#: 10,000 distinct words of one length (none is a prefix of another, SPEC.md §4).
WORDS = [f"zq{n:05d}" for n in range(10_000)]
KEPT = WORDS[:QUERY_TOKEN_CAP]
DROPPED = len(WORDS) - QUERY_TOKEN_CAP


def long_query() -> str:
    """The 10,000 words with stop words between and the first 50 said again at the end.

    Repeats and stop words are not tokens: what is kept is the first 256 unique
    content tokens in the order they first appear. (About 80 KB: one argument of a
    command line may hold 128 KiB.)
    """
    spaced = [f"{word} the" if n % 100 == 0 else word for n, word in enumerate(WORDS)]
    return " ".join([*spaced, *WORDS[:50]])


@pytest.fixture
def two_records(store: Store, write_record: RecordMaker) -> Store:
    """One record about a word the query keeps, one about a word it drops."""
    write_record("kept-word", f"Retries of {KEPT[-1]} jobs")
    write_record("dropped-word", f"Retries of {WORDS[QUERY_TOKEN_CAP]} jobs")
    return store


def test_the_parsed_query_keeps_the_first_unique_tokens() -> None:
    query = Query.parse(long_query())
    assert query.token_texts == KEPT
    assert query.truncated_tokens == DROPPED
    # At the cap exactly nothing is dropped; the key is absent then (see below).
    assert Query.parse(" ".join(KEPT + KEPT)).truncated_tokens == 0


def test_search_says_how_many_tokens_it_left_out(two_records: Store, cli: Cli) -> None:
    found = cli.json("search", long_query())
    assert found["tokens"] == KEPT
    assert found["truncatedTokens"] == DROPPED
    assert [r["id"] for r in found["results"]] == ["kept-word"]
    assert found["query"] == long_query()

    plain = cli("search", long_query())
    assert plain.returncode == 0, plain.stderr
    assert "kept-word" in plain.stdout and "dropped-word" not in plain.stdout
    assert (
        f"reliora: warning: the query has {len(WORDS)} distinct words; "
        f"only the first {QUERY_TOKEN_CAP} were searched"
    ) in plain.stderr.splitlines()


def test_a_usual_query_has_no_truncated_key(two_records: Store, cli: Cli) -> None:
    found = cli.json("search", f"retries {KEPT[-1]}")
    assert "truncatedTokens" not in found
    assert "warning" not in cli("search", "retries").stderr


def test_mcp_search_says_the_same(two_records: Store, repo: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import document, reliora_mcp

    async def scenario() -> dict[str, Any]:
        async with reliora_mcp(repo) as session:
            found: dict[str, Any] = document(
                await session.call_tool("search", {"query": long_query()})
            )
            return found

    found = anyio.run(scenario)
    assert found["tokens"] == KEPT
    assert found["truncatedTokens"] == DROPPED
    assert [r["id"] for r in found["results"]] == ["kept-word"]


@pytest.mark.usefixtures("pg_server")
def test_org_search_cuts_the_same_tokens(
    two_records: Store, repo: Path, cli: Cli, org_db: str
) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "records")
    env = {"RELIORA_DB_URL": org_db}
    synced = cli("org", "sync", str(repo), env=env)
    assert synced.returncode == 0, synced.stderr
    done = cli("org", "search", long_query(), "--json", env=env)
    assert done.returncode == 0, done.stderr
    remote = json.loads(done.stdout)
    local = cli.json("search", long_query())
    assert remote["tokens"] == local["tokens"] == KEPT
    assert remote["truncatedTokens"] == local["truncatedTokens"] == DROPPED
    assert [r["id"] for r in remote["results"]] == ["kept-word"]
    plain = cli("org", "search", long_query(), env=env)
    assert f"the query has {len(WORDS)} distinct words" in plain.stderr
