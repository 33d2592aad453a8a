"""`reliora serve` in a real headless browser: the installed executable serves a real git
repository's store on 127.0.0.1, and Debian's Chromium (through ChromeDriver) reads the pages.

What the pages show is compared to what the CLI prints for the same store (`search --json`,
`brief --push`); hostile record text must stay text in the DOM.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reliora_git.storage.template import init_store
from tests.conftest import git, reliora_executable
from tests.serve_browser import Served, listening_addresses, serving, start_browser

HOSTILE_ID = "hostile-markup-record"
HOSTILE_TITLE = "Export <script>alert('title')</script> fails"
HOSTILE_BODY = (
    "## Problems\n- the nightly export <img src=x onerror=\"document.title='pwned'\"> "
    "runs out of memory\n\n## Solution\nStream rows <script>alert(1)</script> in batches "
    "of 500 <b>bold</b>\n"
)
RETRY = "src/billing/retry.py"
PROMPT = "invoices fail: the payment provider rate limits our retries"


def record_text(record_id: str, title: str, body: str, **meta: Any) -> str:
    lines = [f"id: {record_id}", f"title: {json.dumps(title)}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in meta.items()]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The subprocesses' environment: a HOME and git config of their own, no user settings."""
    home = tmp_path_factory.mktemp("serve-home")
    found = {k: v for k, v in os.environ.items() if not k.startswith(("RELIORA_", "GIT_"))}
    found.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test Author",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test Author",
        GIT_COMMITTER_EMAIL="test@example.com",
        NO_COLOR="1",
    )
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """A git repository with a small store: a lesson about a file (with a guard), notes,
    a retired lesson and a hostile one; committed, and one agent session pushed."""
    repo = tmp_path_factory.mktemp("serve") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", "--template=", env=env)
    store, _ = init_store(repo)
    folder = store.experiences
    (folder / "billing-retry-backoff.md").write_text(
        record_text(
            "billing-retry-backoff",
            "Billing retries need jittered exponential backoff",
            "## Problems\n- the payment provider rate limited our invoice retries\n\n"
            "## Solution\nUse exponential backoff with full jitter; cap at five attempts.\n",
            paths=[RETRY],
            tags=["billing"],
            guards=[{"pattern": "time\\.sleep\\(", "severity": "warn"}],
        )
    )
    for number, topic in enumerate(("vim macros", "tmux panes", "ssh agent", "css grid")):
        (folder / f"note-{number}.md").write_text(
            record_text(
                f"note-{number}",
                f"A note about {topic}",
                f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual.\n",
            )
        )
    (folder / "old-retry-advice.md").write_text(
        record_text(
            "old-retry-advice",
            "Retry invoices immediately",
            "## Problems\n- invoice retries failed\n\n## Solution\nRetry at once.\n",
            status="retired",
        )
    )
    (folder / f"{HOSTILE_ID}.md").write_text(record_text(HOSTILE_ID, HOSTILE_TITLE, HOSTILE_BODY))
    (repo / "src" / "billing").mkdir(parents=True)
    (repo / RETRY).write_text("def retry(): ...\n")
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "lessons and code", env=env)
    (repo / RETRY).write_text("def retry(attempts=5): ...\n")  # the lesson's code moves on
    git(repo, "commit", "-q", "-am", "retry takes attempts", env=env)
    hook = {
        "session_id": "sess-web",
        "cwd": str(repo),
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
    }
    done = run(repo, env, "hook", input=json.dumps(hook))
    assert "billing-retry-backoff" in done.stdout
    return repo


def run(repo: Path, env: dict[str, str], *args: str, input: str | None = None) -> Any:
    return subprocess.run(
        [reliora_executable(), *args],
        cwd=repo,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


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


def by_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def main_text_with(driver: Any, expected: str, seconds: float = 10) -> str:
    """The page's <main> text once it holds ``expected`` (or as it is after ``seconds``): the
    cold-start page may be reloading itself while its list is being made."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    def text() -> str:
        found = by_css(driver, "main")
        try:
            return str(found[0].text) if found else ""
        except StaleElementReferenceException:  # the page reloaded under us
            return ""

    with contextlib.suppress(TimeoutException):
        WebDriverWait(driver, seconds, poll_frequency=0.1).until(lambda _: expected in text())
    return text()


def status_of(
    url: str, method: str = "GET", host: str | None = None, headers: dict[str, str] | None = None
) -> int:
    request = urllib.request.Request(url, method=method, data=b"x" if method == "POST" else None)
    if host is not None:
        request.add_header("Host", host)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_every_page_renders(server: Served, browser: Any) -> None:
    assert server.banner.startswith("Serving ") and server.url in server.banner
    pages = {
        "/": "billing-retry-backoff",
        "/lesson/billing-retry-backoff": "Billing retries need jittered exponential backoff",
        "/try": "Try a prompt",
        "/guards": "time\\.sleep\\(",
        "/sessions": "sess-web",
        "/history": "Cold start",
        "/stale": "billing-retry-backoff",
        "/sessions/sess-web": "UserPromptSubmit",
    }
    for path, expected in pages.items():
        browser.get(server.url + path)
        main = main_text_with(browser, expected)
        assert expected in main, path
        assert "Not here" not in main, path
        assert by_css(browser, "link[rel=stylesheet]")  # the shared CSS, served locally


def test_the_list_marks_retired_and_guarded_lessons(server: Served, browser: Any) -> None:
    browser.get(server.url + "/")
    rows = {row.find_element("css selector", "code").text: row for row in by_css(browser, "tr")[1:]}
    assert by_css(rows["billing-retry-backoff"], ".mark.guarded")
    assert by_css(rows["billing-retry-backoff"], ".mark.stale")
    assert by_css(rows["old-retry-advice"], ".mark.retired")
    assert not by_css(rows["note-0"], ".mark")


def test_a_session_page_lists_what_agent_log_gives(
    server: Served, browser: Any, site: Path, env: dict[str, str]
) -> None:
    expected = json.loads(run(site, env, "agent", "log", "sess-web", "--json").stdout)
    browser.get(server.url + "/sessions/sess-web")
    rows = by_css(browser, "table.list tr")[1:-1]
    assert len(rows) == len(expected["pushes"]) == 1
    cells = [td.text for td in rows[0].find_elements("css selector", "td")]
    push = expected["pushes"][0]
    assert cells[:3] == [push["time"], "claude-code", "UserPromptSubmit"]
    assert cells[4] == str(push["chars"]) == str(expected["totalChars"])
    # The lesson by its title, linked by its id.
    link = rows[0].find_element("css selector", "td a")
    assert link.text == "Billing retries need jittered exponential backoff"
    assert link.get_attribute("href").endswith("/lesson/billing-retry-backoff")


def test_search_shows_the_scores_search_json_gives(
    server: Served, browser: Any, site: Path, env: dict[str, str]
) -> None:
    browser.get(server.url + "/")
    box = by_css(browser, "form.search input[name=q]")[0]
    box.send_keys("invoice retries backoff")
    box.submit()
    expected = json.loads(run(site, env, "search", "invoice retries backoff", "--json").stdout)
    results = by_css(browser, "li.result")
    assert len(results) == len(expected["results"]) > 0
    text = run(site, env, "search", "invoice retries backoff").stdout
    for shown, wanted in zip(results, expected["results"], strict=True):
        assert shown.find_element("css selector", "a.title").text == wanted["title"]
        assert shown.find_element("css selector", ".score").text == f"{wanted['score']:.2f}"
        # The score as one sentence, the CLI's own line ("title 8.00 + … (×1.00 coverage)").
        line = shown.find_element("css selector", ".score-line").text
        sentence = line.split(" = ", 1)[1].split(" · matched")[0]
        assert f"·  {sentence}" in text
        # The breakdown folded: the non-zero fields as --json names them, then coverage.
        folded = shown.find_element("css selector", "details.breakdown")
        assert folded.get_attribute("open") is None
        folded.find_element("css selector", "summary").click()
        fields = [th.text for th in shown.find_elements("css selector", "table.breakdown th")]
        values = [td.text for td in shown.find_elements("css selector", "table.breakdown td")]
        nonzero = {k: v for k, v in wanted["scoreBreakdown"].items()
                   if v and k != "coverageMultiplier"}  # fmt: skip
        assert fields[: len(nonzero)] == list(nonzero)
        assert values[: len(nonzero)] == [f"{v:.3f}" for v in nonzero.values()]
        assert values[len(nonzero)] == f"{wanted['coverage']:.3f}"
        assert values[-1] == f"{wanted['score']:.3f}"
        # Whether the push would bring it for the same text, and why (or why not).
        check = shown.find_element("css selector", ".push-check").text
        assert check.startswith("Push for this text: ")
    assert "old-retry-advice" not in browser.page_source  # retired: left out unless asked
    browser.get(server.url + "/?q=invoice+retries&retired=1")
    assert by_css(browser, "li.result .mark.retired")


def test_try_a_prompt_shows_exactly_what_brief_push_prints(
    server: Served, browser: Any, site: Path, env: dict[str, str]
) -> None:
    sessions = Path(git(site, "rev-parse", "--absolute-git-dir", env=env).strip())
    sessions = sessions / "reliora" / "sessions"
    before = sorted((p.name, p.read_bytes()) for p in sessions.iterdir())
    browser.get(server.url + "/try")
    by_css(browser, "textarea[name=prompt]")[0].send_keys(PROMPT)
    by_css(browser, "textarea[name=files]")[0].send_keys(RETRY)
    by_css(browser, "form.try button")[0].click()

    cli = run(site, env, "brief", "--push", PROMPT, "--file", RETRY)
    assert cli.returncode == 0, cli.stderr
    shown = by_css(browser, "#push-text")[0].get_attribute("textContent")
    assert shown == cli.stdout.removesuffix("\n")
    assert by_css(browser, "#push-chars")[0].text == f"{len(shown)} characters"
    outputs = [pre.get_attribute("textContent") for pre in by_css(browser, "pre.json")]
    claude = json.loads(outputs[0])["hookSpecificOutput"]
    assert claude == {"hookEventName": "UserPromptSubmit", "additionalContext": shown}
    # A fresh session, and nothing written: the session memory is as it was.
    assert sorted((p.name, p.read_bytes()) for p in sessions.iterdir()) == before

    browser.get(server.url + "/try?prompt=quantum+chromodynamics+lattice")
    assert by_css(browser, "#push-empty")  # nothing clears the floor: nothing pushed
    assert run(site, env, "brief", "--push", "quantum chromodynamics lattice").stdout == ""


def test_hostile_record_text_stays_text(server: Served, browser: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    for path in (f"/lesson/{HOSTILE_ID}", "/?q=nightly+export+memory", "/"):
        browser.get(server.url + path)
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert.text  # noqa: B018 (reading it is the check)
        assert not by_css(browser, "main script, main img, main b")  # no injected element
        assert browser.title != "pwned"
        assert "<script>alert('title')</script>" in by_css(browser, "main")[0].text
    browser.get(server.url + f"/lesson/{HOSTILE_ID}")
    assert by_css(browser, "h1")[0].text == HOSTILE_TITLE
    body = by_css(browser, "main")[0].text
    assert "<img src=x onerror=\"document.title='pwned'\">" in body
    assert "<b>bold</b>" in body


def test_anything_but_get_is_refused(server: Served, browser: Any) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert status_of(server.url + "/", method) == 405
    assert status_of(server.url + "/lesson/billing-retry-backoff", "HEAD") == 200
    # A form posted from the page itself is refused too.
    browser.get(server.url + "/")
    browser.execute_script(
        "const f = document.createElement('form'); f.method = 'post'; f.action = '/try';"
        "document.body.appendChild(f); f.submit();"
    )
    assert "405 Method Not Allowed" in by_css(browser, "body")[0].text


def test_ids_and_paths_outside_the_store_are_refused(server: Served, browser: Any) -> None:
    for path in ("/lesson/..%2F..%2F.git%2Fconfig", "/lesson/../../etc/passwd", "/lesson/NOPE"):
        assert status_of(server.url + path) == 404, path
    browser.get(server.url + "/lesson/..%2F..%2F.git%2Fconfig")
    assert "not a record id" in by_css(browser, "#error")[0].text
    assert status_of(server.url + "/try?prompt=x&files=..%2F..%2Fetc%2Fpasswd") == 400
    assert status_of(server.url + "/sessions/..%2F..%2Fconfig") == 404


def test_requests_another_site_makes_are_refused(server: Served, browser: Any) -> None:
    # Any page the person visits could make their browser ask for /try (a ranking each time).
    url = server.url + "/try?prompt=billing+retries"
    assert status_of(url, headers={"Sec-Fetch-Site": "cross-site"}) == 403
    assert status_of(url, headers={"Origin": "http://evil.example"}) == 403
    assert status_of(url, headers={"Sec-Fetch-Site": "same-origin"}) == 200
    assert status_of(url, headers={"Origin": server.url}) == 200
    assert status_of(url) == 200  # typed, or followed from a bookmark
    # The browser itself, following the view's own links, is same-origin.
    browser.get(server.url + "/")
    browser.get(url)
    assert "403" not in by_css(browser, "body")[0].text
    assert status_of(server.url + "/?page=" + "9" * 5000) == 200  # not a 500


def test_it_listens_on_127_0_0_1_only(server: Served) -> None:
    assert listening_addresses(server.port) == ["0100007F"]  # 127.0.0.1, no IPv6, no 0.0.0.0
    assert status_of(server.url + "/", host="attacker.example") == 400  # DNS rebinding


def test_a_port_in_use_is_one_line_and_exit_2(
    server: Served, site: Path, env: dict[str, str]
) -> None:
    done = run(site, env, "serve", "--port", str(server.port))
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{server.port}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_the_cold_start_page_shows_the_list_once_it_is_made(server: Served, browser: Any) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server.url + "/history")
    # Right after start the list may still be in the making: the page says so and reloads
    # itself (a meta refresh: the pages run no script) until the list is there.
    WebDriverWait(browser, 30, poll_frequency=0.2).until(
        lambda driver: "commits scanned" in by_css(driver, "main")[0].text
    )
    assert "being made" not in by_css(browser, "main")[0].text


def test_a_cold_start_list_in_the_making_is_not_waited_for(site: Path) -> None:
    from reliora_git.interfaces.web import pages
    from reliora_git.storage.index import LiveIndex
    from reliora_git.storage.store import find_store

    store = find_store(site)
    memo = pages.Memo()
    with LiveIndex().open(store) as index:
        with memo.making("history"):  # as the warm-up holds it while its worker makes the list
            assert pages.history_page(store, index, memo, wait=False) == {
                "pending": pages.HISTORY_RETRY
            }
        made = pages.history_page(store, index, memo, wait=False)
    assert "pending" not in made and "scanned" in made
