"""Why not (SPEC.md §17): `brief --push --explain` says why a lesson was left out or made a
line, from the push's own decisions."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliora_git.operations.brief import reasons
from reliora_git.operations.brief.explain import Floor, explain_push, under_floor
from reliora_git.operations.brief.selection import Situation
from reliora_git.search.taskrank import Settings, rank_task, task_words
from reliora_git.storage.index import open_index
from reliora_git.storage.store import Store, find_store
from tests.conftest import Cli, RecordMaker, git

#: In the til sample, search ranks this lesson first for its own title; the push's ranking
#: scores it under the relevance floor (its words are common there).
BELOW = "blank-lines-above-and-below-c6caef"
BELOW_PROMPT = "Blank Lines Above And Below"
FILLER = ("vim macros", "tmux panes", "ssh agent", "css grid", "sql joins", "rust lifetimes",
          "go modules", "bash traps", "nginx caching", "redis keys", "kafka offsets",
          "terraform state", "helm charts", "jest mocks", "gradle daemons", "webpack chunks",
          "celery beats", "django admin", "flask blueprints", "react hooks")  # fmt: skip


def test_explain_names_the_lesson_search_ranks_first_and_the_floor_that_kept_it_out(
    til_corpus: Path,
) -> None:
    cli = Cli(til_corpus)
    document = cli.json("brief", "--push", "--explain", BELOW_PROMPT)
    assert BELOW not in {lesson["id"] for lesson in document["lessons"]}
    explained = {item["id"]: item for item in document["explain"]}
    item = explained[BELOW]
    assert item["form"] is None
    assert item["rule"] == reasons.BELOW_FLOOR
    assert item["searchRank"] == 1
    assert item["rank"] is None and item["rankWithoutFloor"] >= 1
    assert item["score"] < item["floor"] == 0.7
    assert any(w["word"] == "blank" and "title" in w["fields"] for w in item["words"])
    done = cli("brief", "--push", "--explain", BELOW_PROMPT)
    assert done.returncode == 0, done.stderr
    assert f"({BELOW}): left out: it scores" in done.stdout
    assert "under the relevance floor 0.70" in done.stdout
    assert "rank 1 in search" in done.stdout


def test_every_reason_agrees_with_the_push(til_corpus: Path) -> None:
    """The reasons are the decisions: a lesson's form in the explanation is its form in the
    push, each rule goes with its form, and the floor's test for the lessons under it is the
    ranking's own (the same lessons clear it as rank_task's floor lets through)."""
    store = find_store(til_corpus)
    index = open_index(store)
    docs = [doc for doc in index.inverted.docs if doc is not None]
    line_rules = {reasons.NOT_CONFIDENT, reasons.NO_OWN_WORD, reasons.MAX_FULL, reasons.BUDGET}
    full_rules = {reasons.FULL, reasons.ABOUT_FILE}
    seen: set[str] = set()
    for doc in docs[::7]:
        prompt = f"{doc.title} {doc.tags[0] if doc.tags else ''}"
        result, explained = explain_push(store, Situation(prompt), index=index)
        forms = {entry.candidate.lesson.id: entry.form for entry in result.entries}
        assert set(result.decisions) == {c.lesson.id for c in result.candidates}
        for item in explained:
            seen.add(item.reason.rule)
            assert item.form == forms.get(item.id)
            if item.form == "line":
                assert item.reason.rule in line_rules, item
            elif item.form is None:
                assert item.reason.text.startswith("left out:"), item
            else:
                assert item.reason.rule in full_rules
        settings = Settings()
        words = task_words(prompt, "", settings)
        floored = rank_task(index.inverted, words, settings, admit=lambda d: True,
                            text_of=index.text_of)  # fmt: skip
        everything = rank_task(index.inverted, words, settings, admit=lambda d: True,
                               floor=False, text_of=index.text_of)  # fmt: skip
        floor = Floor.of(sum(d is not None for d in index.inverted.docs), settings)
        assert [h.doc.id for h in floored] == [
            h.doc.id for h in everything if under_floor(h, floor) is None
        ]
    assert {reasons.NOT_CONFIDENT, reasons.BELOW_FLOOR} <= seen


def _filler(write_record: RecordMaker) -> None:
    for number, topic in enumerate(FILLER):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual of {topic}.\n",
        )


@pytest.fixture
def signer(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    write_record(
        "body-only",
        "Keep fixtures small",
        "## Problems\n- the signer rejected tokens after a key rotation\n\n"
        "## Solution\nRegenerate the fixture tokens with the rotated signer key.\n",
    )
    write_record(
        "asked-only",
        "Keep fixtures tidy",
        "## Problems\n- the signer rejected tokens after a key rotation\n\n"
        "## Solution\nRegenerate the fixture tokens with the rotated signer key.\n\n"
        "## Asked as\n- tokens stopped verifying after the signer key rotation\n",
    )
    write_record(
        "retired-signer",
        "Signer key rotation (old)",
        "## Problems\n- tokens fail after the signer key rotation\n\n## Solution\nold\n",
        status="retired",
        retired_reason="the signer was replaced",
    )
    _filler(write_record)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons")
    return store


PROMPT = "tokens fail after the signer key rotation, why?"


def test_why_names_the_fields_and_the_line_rule(signer: Store, cli: Cli) -> None:
    document = cli.json(
        "brief", "--push", PROMPT, "--why", "body-only", "--why", "asked-only", "--why",
        "retired-signer",
    )  # fmt: skip
    explained = {item["id"]: item for item in document["explain"]}
    assert list(explained) == ["body-only", "asked-only", "retired-signer"]
    body = explained["body-only"]
    assert body["form"] is None and body["rule"] == reasons.NO_LINE_WORD
    assert "no word it shares is in its title, tags or asked-as lines" in body["reason"]
    assert all("title" not in w["fields"] and "asked" not in w["fields"] for w in body["words"])
    asked = explained["asked-only"]
    assert asked["form"] in ("line", "full")
    assert any("asked" in w["fields"] for w in asked["words"])
    assert explained["retired-signer"]["rule"] == reasons.RETIRED
    done = cli("brief", "--push", PROMPT, "--why", "body-only")
    assert "(body-only): left out: no word it shares is in its title" in done.stdout
    assert "signer (problems, solution)" in done.stdout


def test_explain_needs_push_and_a_known_id(signer: Store, cli: Cli) -> None:
    done = cli("brief", "--explain", PROMPT)
    assert done.returncode == 2
    assert "add --push" in done.stderr and "Traceback" not in done.stderr
    done = cli("brief", "--push", PROMPT, "--why", "no-such-lesson")
    assert done.returncode != 0
    assert "no-such-lesson" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_help_shows_the_options_with_examples(cli: Cli) -> None:
    done = cli("brief", "--help")
    assert "--explain" in done.stdout and "--why" in done.stdout
    assert "reliora brief --push --explain" in done.stdout


def test_the_mcp_brief_tool_explains_a_lesson_the_push_leaves_out(til_corpus: Path) -> None:
    """`brief` with `why` (accepted, not listed: it is for a person or an agent debugging a
    push) answers with the brief and the same explanation as `brief --push --why`."""
    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import document, reliora_mcp, run

    found: list[dict[str, object]] = []

    async def scenario() -> None:
        async with reliora_mcp(til_corpus, all_tools=False) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert "why" not in tools["brief"].input_schema["properties"]
            reply = await session.call_tool("brief", {"task": BELOW_PROMPT, "why": [BELOW]})
            found.append(document(reply))

    run(scenario)
    [answer] = found
    assert "lessons" in answer
    [item] = answer["explain"]  # type: ignore[misc]
    assert item["id"] == BELOW and item["rule"] == reasons.BELOW_FLOOR
    cli = Cli(til_corpus)
    same = cli.json("brief", "--push", "--why", BELOW, BELOW_PROMPT)["explain"]
    assert same == [item]
