"""`reliora serve` as a view people read daily, in a real headless browser: why a lesson was
not pushed (the try page and search), Markdown rendered safely, the list sorted, filtered
and paged, the retire reason, guard severities, titles for ids, the stale page's words."""

from __future__ import annotations

import json
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TIL_CORPUS, git, reliora_executable
from tests.serve_browser import Served, serving, start_browser
from tests.test_serve_browser import by_css, record_text, run

#: In the til sample, search ranks this lesson first for the prompt, and the push's ranking
#: puts it under the relevance floor.
BELOW = "blank-lines-above-and-below-c6caef"
PROMPT = "Blank Lines Above And Below"
MARKDOWN_BODY = (
    "## Problems\n- `pytest -vv` output is cut\n\n"
    "## Solution\nRun it verbose:\n\n```\n$ pytest -vv\nE   assert [1, 2] == [1, 3]\n```\n\n"
    "See [the docs](https://docs.pytest.org/en/stable/) and "
    "[this](javascript:alert(document.domain)) or [that](data:text/html,hi).\n"
)
SHORT = "## Problems\n- diffs cut\n\n## Solution\n"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from tests.test_serve_browser import env as make_env

    return make_env.__wrapped__(tmp_path_factory)  # type: ignore[attr-defined,no-any-return]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """The til sample in a git repository, with a Markdown lesson, a retired one with its
    reason, a superseded one, a blocking guard and a file that does not read."""
    repo = tmp_path_factory.mktemp("view") / "repo"
    shutil.copytree(TIL_CORPUS, repo)
    for path in [repo, *repo.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    git(repo, "init", "-q", "-b", "main", "--template=", env=env)
    folder = repo / ".reliora" / "experiences" / "zz"
    folder.mkdir()
    (folder / "markdown-lesson.md").write_text(
        record_text("markdown-lesson", "Full pytest diffs in verbose mode", MARKDOWN_BODY,
                    tags=["pytest"], created="2030-01-02",
                    guards=[{"pattern": "breakpoint\\(", "severity": "block"}]),
        encoding="utf-8",
    )  # fmt: skip
    (folder / "old-way.md").write_text(
        record_text("old-way", "The old way to cut diffs", SHORT + "old\n",
                    status="retired", retired_reason="pytest 8 shows full diffs with -vv",
                    created="2030-01-01"),
        encoding="utf-8",
    )  # fmt: skip
    (folder / "older-way.md").write_text(
        record_text("older-way", "An older way", SHORT + "older\n", created="2029-12-31"),
        encoding="utf-8",
    )
    (folder / "newer-way.md").write_text(
        record_text("newer-way", "A newer way", SHORT + "newer\n",
                    supersedes=["older-way"], created="2030-01-03"),
        encoding="utf-8",
    )  # fmt: skip
    (folder / "broken.md").write_text("---\nid: [broken\n---\n", encoding="utf-8")
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "til and more", env=env)
    return repo


@pytest.fixture(scope="module")
def server(site: Path, env: dict[str, str]) -> Iterator[Served]:
    yield from serving(reliora_executable(), site, env)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = start_browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()


def test_the_try_page_says_why_the_lesson_search_ranks_first_was_not_pushed(
    server: Served, browser: Any, site: Path, env: dict[str, str]
) -> None:
    searched = json.loads(run(site, env, "search", PROMPT, "--json").stdout)
    assert searched["results"][0]["id"] == BELOW
    pushed = json.loads(run(site, env, "brief", "--push", PROMPT, "--json").stdout)
    assert BELOW not in {lesson["id"] for lesson in pushed["lessons"]}

    browser.get(server.url + "/try?" + urllib.parse.urlencode({"prompt": PROMPT}))
    row = by_css(browser, f"tr#why-{BELOW}")[0]
    text = row.text
    assert "left out" in text
    assert "under the relevance floor 0.70" in text
    assert "search rank 1" in text
    assert "push rank" in text and "without the floor" in text
    assert "blank (title" in text  # the words it shares, and the fields holding them
    explained = json.loads(
        run(site, env, "brief", "--push", "--explain", PROMPT, "--json").stdout
    )["explain"]
    item = next(e for e in explained if e["id"] == BELOW)
    assert item["reason"] in text  # the page and the CLI say the same


def test_the_try_page_folds_the_clients_and_orders_as_the_push(
    server: Served, browser: Any, site: Path, env: dict[str, str]
) -> None:
    prompt = "git rebase interactive squash commits into one"
    browser.get(server.url + "/try?" + urllib.parse.urlencode({"prompt": prompt}))
    push_text = by_css(browser, "#push-text")[0].text
    folded = by_css(browser, "details.client")
    assert len(folded) == 5 and all(d.get_attribute("open") is None for d in folded)
    assert "\\u" not in browser.page_source  # no escapes shown to people
    # The table lists the lessons in the order the push's text has them.
    ids = [a.get_attribute("href").rsplit("/", 1)[-1]
           for a in by_css(browser, "h2 + table.list tr td:first-child a")]  # fmt: skip
    assert ids
    positions = [push_text.index(f"({record_id})") for record_id in ids]
    assert positions == sorted(positions)
    # A line says which rule made it one.
    rows = by_css(browser, "table.why-not tr.why")
    assert any("a line, not in full" in r.text for r in rows)


def test_markdown_is_rendered_safely(server: Served, browser: Any) -> None:
    browser.get(server.url + "/lesson/markdown-lesson")
    block = by_css(browser, ".md pre code")[0]
    assert "$ pytest -vv\nE   assert [1, 2] == [1, 3]" in block.text
    assert "monospace" in block.value_of_css_property("font-family").lower() or (
        "mono" in block.value_of_css_property("font-family").lower()
    )
    links = {a.text: a for a in by_css(browser, ".md a")}
    assert set(links) == {"the docs"}  # javascript: and data: links stay text
    assert links["the docs"].get_attribute("rel") == "noreferrer"
    assert "[this](javascript:alert(document.domain))" in browser.page_source
    # The guard's severity is styled (the class the style sheet knows).
    sev = by_css(browser, ".sev.block")[0]
    assert sev.value_of_css_property("color") != by_css(browser, "p")[0].value_of_css_property(
        "color"
    )


def test_the_retire_reason_and_the_supersession_are_shown(server: Served, browser: Any) -> None:
    browser.get(server.url + "/lesson/old-way")
    assert by_css(browser, "#retired-reason")[0].text == (
        "Retired: pytest 8 shows full diffs with -vv"
    )
    browser.get(server.url + "/lesson/older-way")
    superseded = by_css(browser, "#superseded-by")[0]
    assert "A newer way" in superseded.text  # by its title


def test_the_list_sorts_filters_and_pages(server: Served, browser: Any) -> None:
    browser.get(server.url + "/")
    summary = by_css(browser, "#list-summary")[0].text
    assert "newest first" in summary and "page 1 of " in summary
    # The broken file is not listed, and counted (search leaves the secret's record in).
    assert "1 file could not be read" in by_css(browser, "#invalid-count")[0].text
    first = by_css(browser, "table.list tr td a.title")[0]
    assert first.text == "A newer way"  # created 2030-01-03: the newest
    assert by_css(browser, "nav.pager a")  # page numbers
    browser.get(server.url + "/?show=retired")
    titles = [a.text for a in by_css(browser, "table.list a.title")]
    assert set(titles) == {"The old way to cut diffs", "An older way"}
    browser.get(server.url + "/?show=guarded&tag=PYTEST")
    titles = [a.text for a in by_css(browser, "table.list a.title")]
    assert titles == ["Full pytest diffs in verbose mode"]
    browser.get(server.url + "/?sort=helpful&page=2")
    assert "most helpful" in by_css(browser, "#list-summary")[0].text
    assert by_css(browser, "nav.pager strong.current")[0].text == "2"


def test_a_search_result_says_whether_it_would_be_pushed(server: Served, browser: Any) -> None:
    browser.get(server.url + "/?" + urllib.parse.urlencode({"q": PROMPT}))
    first = by_css(browser, "li.result")[0]
    assert BELOW in first.get_attribute("innerHTML")
    check = first.find_element("css selector", ".push-check").text
    assert "not pushed" in check and "under the relevance floor" in check


def test_the_stale_page_says_when_nothing_can_go_stale(server: Served, browser: Any) -> None:
    browser.get(server.url + "/stale")
    assert "No lesson can go stale: none names the code it is about" in (
        by_css(browser, "#none-can-go-stale")[0].text
    )


def test_the_guards_page_names_lessons_by_title(server: Served, browser: Any) -> None:
    browser.get(server.url + "/guards")
    row = by_css(browser, "table.list tr")[1]
    assert "Full pytest diffs in verbose mode" in row.text
    assert by_css(row, ".sev.block")
