"""`reliora mcp` as an agent meets it: a subprocess driven by the MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, get_args

import anyio
import pytest

pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from reliora_git.storage.store import Store
from tests.conftest import git, reliora_executable

FIRST = {
    "title": "Flaky pytest timeouts on CI runners",
    "tags": ["pytest", "ci"],
    "task": "Make the test suite pass reliably on CI",
    "problems": ["pytest-timeout killed slow git fixture tests on shared CI runners"],
    "solution": "Raise the timeout only for the git fixture tests with a marker",
    "whyItWorked": "The shared runners are slow only on disk-heavy fixtures",
    "failedAttempts": ["Raising the global timeout hid a real hang"],
    "applicability": "pytest suites with pytest-timeout on shared CI runners",
    "projectContext": "python pytest ci",
    "verification": "20 CI runs green",
    "confidence": "medium",
}

#: Nearly the same lesson, worded a little differently: must come back as a duplicate warning.
SECOND = {
    **FIRST,
    "title": "Flaky pytest timeouts on shared CI runners",
    "solution": "Mark the slow git fixture tests with a larger timeout",
}


def test_the_schemas_allow_exactly_the_model_values() -> None:
    from reliora_git.interfaces import mcp_tools
    from reliora_git.records.model import CONFIDENCES, OUTCOMES

    assert get_args(mcp_tools.Outcome) == OUTCOMES
    assert get_args(mcp_tools.Confidence) == CONFIDENCES
    assert get_args(mcp_tools.Level) == ("strong", "moderate", "weak")


def server_environment() -> dict[str, str]:
    """What the server needs from the test's environment.

    The SDK's stdio client passes the child only a short list of "safe" variables
    (PATH, HOME…), so the isolated git settings of conftest must be named here.
    """
    wanted = ("HOME", "PATH", "NO_COLOR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
    env = {key: os.environ[key] for key in wanted if key in os.environ}
    identity = ("GIT_AUTHOR", "GIT_COMMITTER")
    env.update({k: v for k, v in os.environ.items() if k.startswith(identity)})
    return env


@asynccontextmanager
async def reliora_mcp(
    cwd: Path, *args: str, env: dict[str, str] | None = None, all_tools: bool = True
) -> AsyncIterator[ClientSession]:
    """`reliora mcp` with every tool (``all_tools``: the tests call search, about, retire…)."""
    params = StdioServerParameters(
        command=reliora_executable(),
        args=["mcp", *(["--all-tools"] if all_tools else []), *args],
        cwd=cwd,
        env={**server_environment(), **(env or {})},
    )
    # A generous bound, not a timing assertion: a hung server fails the test instead of CI.
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, read_timeout_seconds=120) as session,
    ):
        await session.initialize()
        yield session


def document(result: CallToolResult) -> Any:
    """The tool's JSON document; text and structured content must agree."""
    assert result.content, result
    text = result.content[0]
    assert text.type == "text"
    from_text = json.loads(text.text) if not result.is_error else None
    if from_text is not None:
        assert from_text == result.structured_content
    return result.structured_content


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def test_an_agent_lists_records_searches_and_gives_feedback(store: Store, repo: Path) -> None:
    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(tools) == {
                "brief",
                "search",
                "show",
                "about",
                "record",
                "update",
                "retire",
                "feedback",
                "check",
                "history",
            }
            # The descriptions carry the seed's warning: a match level is evidence, not truth.
            assert "not truth" in (tools["search"].description or "")
            assert "strong" in (tools["search"].description or "")
            assert "whyItWorked" in tools["record"].input_schema["properties"]

            first = document(await session.call_tool("record", FIRST))
            assert first["locator"] == f".reliora/experiences/{first['id']}.md"
            assert first["warnings"] == []
            assert (repo / first["locator"]).is_file()

            second_result = await session.call_tool("record", SECOND)
            assert not second_result.is_error
            second = document(second_result)
            [warning] = second["warnings"]
            assert warning["code"] == "SIMILAR_EXPERIENCE_FOUND"
            assert warning["id"] == first["id"]
            assert warning["matchLevel"] in ("strong", "moderate")

            found = document(
                await session.call_tool(
                    "search",
                    {"query": "flaky pytest timeouts", "projectContext": "python", "limit": 1},
                )
            )
            assert set(found) == {"query", "tokens", "projectContext", "total", "results"}
            assert found["projectContext"] == {"text": "python", "tokens": ["python"]}
            assert found["total"] == 2
            [top] = found["results"]
            assert top["rank"] == 1
            assert top["matchLevel"] == "strong"
            assert set(top["scoreBreakdown"]) >= {"tags", "title", "exactPhrase", "feedback"}
            before = {
                r["id"]: r["score"]
                for r in document(
                    await session.call_tool("search", {"query": "flaky pytest timeouts"})
                )["results"]
            }

            event = document(
                await session.call_tool(
                    "feedback", {"id": first["id"], "outcome": "success", "note": "fixed CI"}
                )
            )
            assert event["record"] == first["id"]
            after = {
                r["id"]: r
                for r in document(
                    await session.call_tool("search", {"query": "flaky pytest timeouts"})
                )["results"]
            }
            assert after[first["id"]]["score"] == pytest.approx(before[first["id"]] + 1.0)
            assert after[first["id"]]["feedback"]["success"] == 1
            assert after[second["id"]]["score"] == before[second["id"]]

            shown = document(await session.call_tool("show", {"id": first["id"]}))
            assert shown["feedback"]["success"] == 1
            assert shown["feedbackEvents"][0]["note"] == "fixed CI"

            report = document(await session.call_tool("check", {"paths": [second["locator"]]}))
            assert report["ok"] is True

    run(scenario)


def test_update_adds_tags_paths_and_superseded_records(store: Store, repo: Path) -> None:
    """Every key `update --json -` takes is an argument of the tool, not dropped on the way:
    listed in its schema or, for those an agent seldom needs, accepted unlisted."""
    from reliora_git.interfaces.mcp_tools import UNLISTED

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            properties = tools["update"].input_schema["properties"]
            assert {"addTags", "addPaths", "addSupersedes"} <= set(properties) | UNLISTED["update"]
            old = document(await session.call_tool("record", FIRST))
            new = document(await session.call_tool("record", {**SECOND, "title": "Newer"}))
            updated = await session.call_tool(
                "update",
                {
                    "id": new["id"],
                    "addTags": ["flaky"],
                    "addPaths": ["tests/conftest.py"],
                    "addSupersedes": [old["id"][:-3]],  # a unique prefix
                },
            )
            assert not updated.is_error, updated.content
            shown = document(await session.call_tool("show", {"id": new["id"]}))
            assert shown["tags"] == ["pytest", "ci", "flaky"]
            assert shown["paths"] == ["tests/conftest.py"]
            assert shown["supersedes"] == [old["id"]]

    run(scenario)


def test_asked_as_lines_go_in_through_record_and_update(store: Store, repo: Path) -> None:
    """The tools take asked-as lines (SPEC.md §3) and say what they are for."""

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert "askedAs" in tools["record"].input_schema["properties"]
            assert "in their words" in (tools["record"].description or "")
            assert "addAskedAs" in tools["update"].input_schema["properties"]
            asked = ["the suite dies at random on the shared runners"]
            saved = document(await session.call_tool("record", {**FIRST, "askedAs": asked}))
            more = ["make the nightly job stop timing out"]
            updated = await session.call_tool("update", {"id": saved["id"], "addAskedAs": more})
            assert not updated.is_error, updated.content
            shown = document(await session.call_tool("show", {"id": saved["id"]}))
            assert shown["askedAs"] == [*asked, *more]

    run(scenario)


def test_unknown_ids_and_bad_input_are_tool_errors_not_crashes(store: Store, repo: Path) -> None:
    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            unknown = await session.call_tool("show", {"id": "no-such-record"})
            assert unknown.is_error
            assert "no experience with id 'no-such-record'" in unknown.content[0].text
            assert unknown.structured_content["error"]["code"] == "unknown_id"

            stop_words = await session.call_tool("search", {"query": "the and of"})
            assert stop_words.is_error
            assert stop_words.structured_content["error"]["code"] == "empty_query"

            invalid = await session.call_tool("record", {"title": "No solution", "solution": " "})
            assert invalid.is_error
            assert invalid.structured_content["error"]["code"] == "invalid_record"

            zero = await session.call_tool("search", {"query": "pytest", "limit": 0})
            assert zero.is_error
            assert "limit" in zero.content[0].text

            wrong_outcome = await session.call_tool(
                "feedback", {"id": "no-such-record", "outcome": "great"}
            )
            assert wrong_outcome.is_error
            assert "outcome" in wrong_outcome.content[0].text

            # The server is still up and answering after every error above.
            assert document(await session.call_tool("check", {}))["ok"] is True

    run(scenario)


def test_the_store_is_found_per_call(repo: Path) -> None:
    """A server started before `reliora init` finds the store once it exists."""

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            missing = await session.call_tool("search", {"query": "anything"})
            assert missing.is_error
            assert missing.structured_content["error"]["code"] == "no_store"

            done = subprocess.run(
                [reliora_executable(), "init"], cwd=repo, capture_output=True, check=False
            )
            assert done.returncode == 0, done.stderr
            found = document(await session.call_tool("search", {"query": "anything"}))
            assert found["total"] == 0

            # A record file search cannot read is named in a note after the document.
            (repo / ".reliora" / "experiences" / "broken.md").write_text("no front matter\n")
            skipped = await session.call_tool("search", {"query": "anything"})
            assert not skipped.is_error
            assert json.loads(skipped.content[0].text) == skipped.structured_content
            assert "broken.md" in skipped.content[1].text

    run(scenario)


@pytest.mark.parametrize("how", ["--repo", "--repo=", "RELIORA_REPO"])
def test_the_store_can_be_named_from_anywhere(store: Store, tmp_path: Path, how: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args: tuple[str, ...] = ()
    if how == "--repo":
        args = ("--repo", str(store.root))
    elif how == "--repo=":
        args = (f"--repo={store.root}",)
    env = {"RELIORA_REPO": str(store.root)} if how == "RELIORA_REPO" else {}

    async def scenario() -> None:
        async with reliora_mcp(elsewhere, *args, env=env) as session:
            saved = document(await session.call_tool("record", FIRST))
            assert (store.root / saved["locator"]).is_file()

    run(scenario)


def test_mcp_brief_counts_its_json_against_the_budget(
    store: Store, repo: Path, write_record: Any
) -> None:
    for number in range(6):
        write_record(
            f"retry-note-{number}",
            f"Invoice retries and backoff, note {number}",
            "## Problems\n- the payment provider rate limited our invoice retries\n\n"
            "## Solution\nUse exponential backoff with full jitter; cap at five attempts. "
            + "Keep the idempotency key the same for every attempt. " * 6
            + "\n",
        )
    (store.path / "config.toml").write_text("brief_budget = 400\n")

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            result = await session.call_tool(
                "brief", {"task": "invoice retries are rate limited by the payment provider"}
            )
            found = document(result)
            text = result.content[0]
            assert text.type == "text"
            size = len(text.text)
            assert found["budget"] == 400 and found["lessons"] and found["omitted"]
            assert size <= 400 * 4 and found["used"] == -(-size // 4)

    run(scenario)


def test_history_lists_the_repositorys_lessons_with_drafts(store: Store, repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "tests").mkdir()
    (repo / "src" / "pay.py").write_text("def pay():\n    return 1\n", encoding="utf-8")
    (repo / "tests" / "test_pay.py").write_text("def test(): ...\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(
        repo, "commit", "-qm", "Fix double payment on retry",
        "-m", "The provider timed out after charging, because retries had no key.",
    )  # fmt: skip

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            found = document(await session.call_tool("history", {"limit": 5, "sessions": False}))
            (entry,) = found["entries"]
            assert entry["title"] == "Fix double payment on retry"
            assert {p["part"] for p in entry["why"]} >= {"fix", "cause", "test"}
            assert entry["draft"]["paths"] == ["src/pay.py"]
            assert any("because retries had no key" in p for p in entry["draft"]["problems"])
            # The tool hands the agent a task: write each lesson from its evidence, or skip it.
            assert found["task"].startswith("Reliora: write this repository's lessons")
            assert "## 1. Fix double payment on retry" in found["task"]
            assert "+    return 1" in entry["evidence"]["diff"]  # the fix, as a diff
            refused = await session.call_tool("history", {"since": "--all"})
            assert refused.is_error

    run(scenario)



@pytest.mark.parametrize("switch", ["environment", "git config", "config.toml"])
def test_with_an_off_switch_the_server_offers_no_tools(
    store: Store, repo: Path, switch: str
) -> None:
    """Off means off: a session pays nothing for a server it switched off (SPEC §14.3)."""
    env: dict[str, str] = {}
    if switch == "environment":
        env["RELIORA_AGENT"] = "off"
    elif switch == "git config":
        git(repo, "config", "reliora.agent", "off")
    else:
        config = store.path / "config.toml"
        config.write_text(config.read_text(encoding="utf-8") + '\nagent = "off"\n')
    names: list[list[str]] = []

    async def scenario() -> None:
        async with reliora_mcp(repo, env=env, all_tools=False) as session:
            names.append([tool.name for tool in (await session.list_tools()).tools])

    run(scenario)
    assert names == [[]]


def test_the_default_server_offers_the_four_tools_of_an_agent_s_loop(
    store: Store, repo: Path
) -> None:
    from reliora_git.interfaces.mcp_help import LEAN_TOOLS

    names: list[str] = []

    async def scenario() -> None:
        async with reliora_mcp(repo, all_tools=False) as session:
            names.extend(tool.name for tool in (await session.list_tools()).tools)
            # An unlisted argument is still taken: the lesson keeps its tags.
            saved = document(await session.call_tool("record", {**FIRST, "tags": ["lean"]}))
            assert document(await session.call_tool("show", {"id": saved["id"]}))["tags"] == [
                "lean"
            ]

    run(scenario)
    assert sorted(names) == sorted(LEAN_TOOLS)
