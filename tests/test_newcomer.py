"""What a new user tripped over (issue: review arguments, feedback notes, hand-written
records, empty filtered searches), as one tour on a real repository with two branches."""

from __future__ import annotations

import json
from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli, git


def test_the_newcomer_tour(repo: Path, store: Store, cli: Cli) -> None:
    # Record, give feedback with notes, and see the notes in `show`.
    done = cli(
        "record",
        "--title",
        "Flaky pytest timeouts on CI runners",
        "--tag",
        "pytest",
        "--problem",
        "pytest-timeout killed slow tests",
        "--solution",
        "Raise the timeout for slow tests only",
        "--project-context",
        "python",
    )
    assert done.returncode == 0, done.stderr
    record_id = done.stdout.split()[1]
    for n in range(12):
        outcome = "success" if n % 2 else "partial"
        assert cli("feedback", record_id, outcome, "-m", f"note {n}").returncode == 0
    shown = cli("show", record_id).stdout
    assert "feedback: 6 success, 6 partial" in shown
    notes = [line for line in shown.splitlines() if line.startswith("  20")]
    assert len(notes) == 10  # the latest ten, newest first
    events = cli.json("show", record_id)["feedbackEvents"]
    newest = sorted(events, key=lambda e: e["at"], reverse=True)
    assert [line.split()[0] for line in notes] == [e["at"][:10] for e in newest[:10]]
    assert all(" by " in line and ": note " in line for line in notes)
    assert "  (2 more: --json)" in shown

    # A search that its filters leave empty says what exists just outside them.
    strict = cli("search", "pytest", "--project-context", "rust")
    assert "No experiences match 'pytest' in project context 'rust'; without it: 1 strong" in (
        strict.stdout
    )
    assert cli.json("search", "pytest", "--project-context", "rust")["outsideFilters"] == {
        "strong": 1
    }
    weak = cli("search", "python nothing-else", "--min-level", "strong").stdout
    assert "at --min-level strong; without it: 1 weak (drop --min-level)." in weak

    # A hand-written record without an id is told the line to add.
    (store.experiences / "deploy-rollback.md").write_text(
        "---\ntitle: Deploy rollback\n---\n## Task\nt\n\n## Solution\ns\n\n## Links\nx\n"
    )
    checked = cli("check")
    assert "missing required field 'id'; add the line `id: deploy-rollback`" in checked.stdout
    assert "unknown section '## Links' (kept as is; known: Task, Problems," in checked.stdout
    (store.experiences / "deploy-rollback.md").unlink()

    # Review takes refs as git diff does.
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first lesson")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "feature")
    assert cli("update", record_id, "--add-warning", "not on windows").returncode == 0
    git(repo, "commit", "-qam", "refine")
    forms = (["main", "feature"], ["main..feature"], ["main...feature"], ["main"])

    def reviewed(*args: str) -> tuple[object, ...]:
        data = json.loads(cli("review", *args, "--format", "json").stdout)
        return (data["base"]["commit"], data["head"]["commit"], data["records"])

    reference = reviewed("--base", "main", "--head", "feature")
    for form in forms:  # the head is checked out, so `review main` reviews it too
        assert reviewed(*form) == reference, form
    assert reference[2][0]["kind"] == "modified"  # type: ignore[index]
    missing = cli("review", "mian", "feature")
    assert missing.returncode == 2
    assert "'mian' does not name a commit here (`git branch -a` lists the branches)" in (
        missing.stderr
    )
    both = cli("review", "main", "--base", "main")
    assert both.returncode == 2
    assert "not both" in both.stderr


def test_review_shows_what_a_modified_record_now_says(repo: Path, store: Store, cli: Cli) -> None:
    long_solution = " ".join(f"word{n}" for n in range(100))
    path = store.experiences / "lesson.md"
    path.write_text(
        "---\nid: lesson\ntitle: Deploy rollback\n---\n## Task\nRoll back a bad deploy\n\n"
        f"## Solution\n{long_solution}\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lesson")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "feature")
    changed = long_solution.replace("word50", "CHANGED ```")
    path.write_text(
        "---\nid: lesson\ntitle: Deploy rollback\n---\n## Task\nRoll back a bad deploy\n\n"
        f"## Solution\n{changed}\n\n## Warnings\n- check the migrations first\n"
    )
    git(repo, "commit", "-qam", "refine")
    data = json.loads(cli("review", "main", "--format", "json").stdout)
    (record,) = data["records"]
    assert [c["field"] for c in record["changes"]] == ["solution", "warnings"]
    assert record["changes"][1] == {
        "field": "warnings",
        "before": "",
        "after": "- check the migrations first",
    }
    markdown = cli("review", "main").stdout
    assert "- … word46 word47 word48 word49 word50 word51 word52 word53 word54 …" in markdown
    assert "+ … word46 word47 word48 word49 CHANGED ``` word51 word52 word53 word54 …" in markdown
    assert "````diff" in markdown  # a fence longer than any backtick run in the text
    assert "word10 " not in markdown  # unchanged text is not repeated
    text = cli("review", "main", "--format", "text").stdout
    assert "solution: - … word46" in text


def test_mcp_argument_errors_have_the_project_error_shape(repo: Path, store: Store) -> None:
    import pytest

    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import reliora_mcp, run

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            missing = await session.call_tool("search", {})
            assert missing.is_error
            error = missing.structured_content["error"]  # type: ignore[index]
            assert error["code"] == "bad_arguments"
            assert error["message"] == "search: the argument 'query' is required"
            wrong = await session.call_tool("search", {"query": "x", "limit": 0})
            error = wrong.structured_content["error"]  # type: ignore[index]
            assert error["code"] == "bad_arguments"
            assert error["message"].startswith("search: the argument 'limit' is wrong:")
            assert "http" not in wrong.content[0].text  # type: ignore[union-attr]
            typo = await session.call_tool("feedback", {"id": "x", "outcome": "great"})
            assert typo.structured_content["error"]["code"] == "bad_arguments"  # type: ignore[index]

    run(scenario)


def test_mcp_arguments_have_one_spelling_and_unknown_ones_are_refused(
    repo: Path, store: Store
) -> None:
    """Issue item 4: `why_it_worked` was dropped and `projectContext` ignored, silently."""
    import pytest

    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import FIRST, document, reliora_mcp, run

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            from reliora_git.interfaces.mcp_tools import UNLISTED

            for tool in tools.values():
                # A tool that takes arguments it does not list leaves the question open.
                closed = tool.input_schema.get("additionalProperties", "open")
                assert closed == ("open" if tool.name in UNLISTED else False), tool.name
                names = list(tool.input_schema["properties"])
                assert not [n for n in names if "_" in n], (tool.name, names)
            assert {"projectContext", "minLevel", "includeRetired"} <= set(
                tools["search"].input_schema["properties"]
            )

            # The snake_case spelling is an alias: the field is kept, not lost.
            snake = {k: v for k, v in FIRST.items() if k not in ("whyItWorked", "projectContext")}
            snake |= {"why_it_worked": "Slow disks only", "project_context": "python pytest"}
            saved = document(await session.call_tool("record", snake))
            shown = document(await session.call_tool("show", {"id": saved["id"]}))
            assert shown["whyItWorked"] == "Slow disks only"
            assert shown["projectContext"] == "python pytest"

            # Both spellings filter a search.
            for spelling in ("projectContext", "project_context"):
                filtered = document(
                    await session.call_tool("search", {"query": "pytest", spelling: "rust"})
                )
                assert filtered["projectContext"]["text"] == "rust", spelling
                assert filtered["total"] == 0
            retired = document(
                await session.call_tool("search", {"query": "pytest", "include_retired": True})
            )
            assert retired["total"] == 1
            # Item 8: each result says what the lesson is, so the agent can judge it.
            assert retired["results"][0]["summary"].startswith(
                "pytest-timeout killed slow git fixture tests on shared CI runners — Raise"
            )

            # An unknown argument is an error naming the known ones.
            typo = await session.call_tool("record", {**FIRST, "whyItWorkd": "x"})
            assert typo.is_error
            error = typo.structured_content["error"]  # type: ignore[index]
            assert error["code"] == "bad_arguments"
            assert error["message"].startswith(
                "record: unknown argument 'whyItWorkd' (did you mean 'whyItWorked'?); "
                "the arguments are title, solution, task, problems, whyItWorked,"
            )
            stray = await session.call_tool("search", {"query": "pytest", "repo": "x"})
            message = stray.structured_content["error"]["message"]  # type: ignore[index]
            assert message == (
                "search: unknown argument 'repo'; the arguments are "
                "query, projectContext, limit, minLevel, includeRetired"
            )
            twice = await session.call_tool(
                "search", {"query": "x", "projectContext": "a", "project_context": "b"}
            )
            assert twice.structured_content["error"]["code"] == "bad_arguments"  # type: ignore[index]

            # Results are compact JSON text: no indentation, no padding spaces.
            text = (await session.call_tool("show", {"id": saved["id"]})).content[0].text  # type: ignore[union-attr]
            assert "\n" not in text and '": ' not in text and json.loads(text) == shown

    run(scenario)


def test_the_docs_and_mcp_help_name_every_mcp_tool(repo: Path, cli: Cli) -> None:
    """Issue item 11: `mcp --help` and two pages listed 5 tools of the server's 7."""
    import re

    import pytest

    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import reliora_mcp, run

    tools: list[str] = []

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            tools.extend(tool.name for tool in (await session.list_tools()).tools)

    run(scenario)
    assert len(tools) >= 7
    docs = Path(__file__).resolve().parents[1] / "docs"

    def section(page: str, heading: str) -> str:
        text = (docs / page).read_text(encoding="utf-8")
        start = text.index(heading)
        end = text.find("\n#", start + len(heading))
        return text[start : end if end != -1 else None]

    table = section("agents.md", "### The tools")
    listed = set(re.findall(r"^\| `([a-z]+)` \|", table, re.MULTILINE))
    assert set(tools) == listed, "docs/agents.md, The tools: one row per tool"
    sentence = section("agents.md", "## On request: the MCP server")
    assert [t for t in tools if f"`{t}`" not in sentence] == [], "docs/agents.md, On request"
    commands = section("commands.md", "## reliora mcp")
    assert [t for t in tools if f"`{t}`" not in commands] == [], "docs/commands.md, reliora mcp"
    helped = cli("mcp", "--help")
    assert helped.returncode == 0, helped.stderr
    text = " ".join(helped.stdout.split())
    named = re.search(r"Its tools: ([a-z, ]+) \(", text)
    added = re.search(r"--all-tools adds ([a-z, ]+)\.", text)
    assert named is not None and added is not None, helped.stdout
    listed = named.group(1).split(", ") + added.group(1).split(", ")
    assert sorted(listed) == sorted(tools), "reliora mcp --help"


def test_search_results_carry_a_short_summary(store: Store, cli: Cli) -> None:
    """Issue item 8: results carried no part of the lesson; an agent had to `show` each."""
    solution = (
        "Mark the slow git fixture tests with a larger timeout. The shared runners are "
        "slow only on disk-heavy fixtures, so the global timeout can stay. "
        + " ".join(f"word{n}" for n in range(80))
    )
    done = cli(
        "record",
        "--title",
        "Flaky pytest timeouts on CI runners",
        "--problem",
        "pytest-timeout killed slow git fixture tests on shared CI runners",
        "--problem",
        "a second problem not in the summary",
        "--solution",
        solution,
    )
    assert done.returncode == 0, done.stderr
    [found] = cli.json("search", "flaky pytest timeouts")["results"]
    assert found["summary"] == (
        "pytest-timeout killed slow git fixture tests on shared CI runners — Mark the slow "
        "git fixture tests with a larger timeout. The shared runners are slow only on "
        "disk-heavy fixtures, so the global timeout can stay. …"
    )
    assert list(found)[:4] == ["rank", "id", "title", "summary"]

    # A hand-written record: a token and invisible characters never reach the summary,
    # and a long first sentence is cut between words.
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5b"
    from reliora_git.records.credentials import redact

    assert token not in redact(f"use {token}")  # a secret by the project's own scanner
    (store.experiences / "deploy-token.md").write_text(
        "---\nid: deploy-token\ntitle: Deploy with a token\n---\n## Task\nDeploy\u200b the "
        "app from CI\n\n## Solution\nExport GITHUB_TOKEN="
        f"{token} and postgres://admin:hunter2@db/app then run "
        + " ".join(f"step{n}" for n in range(100))
        + "\n",
        encoding="utf-8",
    )
    [hand] = cli.json("search", "deploy token")["results"]
    # The record's secret is masked when its file is parsed (its last four characters, as
    # check names it); the summary masks the credential-shaped URL on its own.
    steps = " ".join(f"step{n}" for n in range(31))
    assert token not in json.dumps(hand)
    assert hand["summary"] == (
        f"Deploy the app from CI — Export GITHUB_TOKEN=…{token[-4:]} and postgres://…@db/app "
        f"then run {steps}…"
    )


def test_search_says_how_many_retired_records_also_match(store: Store, cli: Cli) -> None:
    """Issue item 3 (search): retired and superseded matches were hidden without a word."""
    ids = []
    for title in ("Flaky pytest timeouts", "Flaky pytest timeouts again", "Pytest flaky hangs"):
        done = cli("record", "--title", title, "--problem", "pytest flaky", "--solution", "s")
        assert done.returncode == 0, done.stderr
        ids.append(done.stdout.split()[1])
    assert cli("retire", ids[1], "--reason", "wrong").returncode == 0
    newer = cli(
        "record", "--title", "Newer", "--problem", "p", "--solution", "s", "--supersedes", ids[2]
    )
    assert newer.returncode == 0, newer.stderr

    found = cli.json("search", "flaky pytest")
    assert found["retiredMatches"] == 2
    assert [r["id"] for r in found["results"]] == [ids[0]]
    assert found["total"] == 1
    text = cli("search", "flaky pytest").stdout
    assert "2 retired or superseded records also match: --include-retired" in text
    every = cli.json("search", "flaky pytest", "--include-retired")
    assert "retiredMatches" not in every  # like outsideFilters: only when some were left out
    assert every["total"] == 3
    # Said when nothing else matches too; the filters apply to what is counted.
    one = cli.json("search", "hangs")
    assert one["retiredMatches"] == 1 and one["total"] == 0
    assert "1 retired or superseded record also matches: --include-retired" in (
        cli("search", "hangs").stdout
    )
    assert "retiredMatches" not in cli.json("search", "hangs", "--project-context", "rust")


def test_a_summary_masks_every_kind_of_secret_the_scanner_knows() -> None:
    """The summary masks by shape (records/summary.py), not with detect-secrets: each
    kind of fake the secret tests use must come out masked all the same."""
    from reliora_git.records.credentials import redact
    from reliora_git.records.summary import SUMMARY_LIMIT, summarize
    from tests.test_secrets import FAKES

    key_body = "MIIEowIBAAKCAQEA7bq9x2c0Zf1kTqH3yW8d5nR4sL6pV0mJ2gX9uE1oC3iK7aB"
    for kind, fake in {**FAKES, "private-key": f"{FAKES['private-key']} {key_body}"}.items():
        line = f"Set it to {fake} before the deploy."
        assert redact(line) != line, kind  # a secret by the project's scanner
        summary = summarize([f"Deploy failed with {fake}"], "", line)
        secret = {"private-key": key_body, "basic-auth-credentials": "s3cr3tPassw0rd"}.get(
            kind, fake
        )
        assert secret not in summary and secret[-8:] not in summary, (kind, summary)
        assert len(summary) <= SUMMARY_LIMIT
    # Words that only look long are kept: prose, paths, ids, camelCase names, URLs.
    kept = (
        "see src/billing/retry_v2.py and flaky-pytest-timeouts-3f9a1c in "
        "https://docs.python.org/3/library/re.html with getElementsByClassName"
    )
    assert summarize([], "", kept) == kept
