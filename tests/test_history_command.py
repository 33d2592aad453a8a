"""``reliora history`` and ``reliora record --from-commit`` on real git histories made here
(pull-request merges, squash merges, a changelog, a blame-linked fix, reverts, noise), and the
rules under them (operations/coldstart/: sources.py, ranking.py, drafts.py) on hand-made text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reliora_git.operations.coldstart.drafts import clean_title, paragraphs
from reliora_git.operations.coldstart.signals import message_body
from reliora_git.operations.coldstart.sources import changelog_headings
from tests.conftest import Cli, git

DAY = 24 * 3600
#: The histories start 300 days ago: inside the default two-year window.
START = int(time.time()) - 300 * DAY


def commit(
    repo: Path,
    subject: str,
    files: dict[str, str | None],
    day: float,
    body: str = "",
    author: str = "Test Author",
) -> str:
    for name, text in files.items():
        if text is None:
            git(repo, "rm", "-q", name)
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
        git(repo, "add", name)
    when = f"@{int(START + day * DAY)} +0000"
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_NAME": author}
    message = subject + (f"\n\n{body}" if body else "")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def merge(repo: Path, branch: str, subject: str, body: str, day: float) -> str:
    when = f"@{int(START + day * DAY)} +0000"
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    git(repo, "merge", "-q", "--no-ff", branch, "-m", subject, "-m", body, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


BILLING = (
    "def charge(invoice, retries):\n    for attempt in range(retries):\n        pay(invoice)\n"
)
BILLING_FIXED = (
    "def charge(invoice, retries):\n    key = invoice.key\n"
    "    for attempt in range(retries):\n        pay(invoice, idempotency_key=key)\n"
)


@pytest.fixture
def history(repo: Path) -> dict[str, str]:
    """Each source of lessons, and each kind of noise, in one small history."""
    shas: dict[str, str] = {}
    shas["base"] = commit(repo, "Add billing", {"src/billing.py": BILLING}, 0)
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    # A pull request: a test, then the fix, merged with its title and body.
    git(repo, "checkout", "-q", "-b", "fix-double")
    shas["pr-test"] = commit(
        repo, "Add a test for charging twice", {"tests/test_billing.py": "def test(): ...\n"}, 2
    )
    shas["pr-fix"] = commit(
        repo,
        "Charge with an idempotency key",
        {"src/billing.py": BILLING_FIXED},
        2.5,
        body="A retry after a timeout charged the card twice, because the provider had\n"
        "already taken the first payment when it timed out.\n\nFixes #11",
    )
    git(repo, "checkout", "-q", main)
    shas["pr"] = merge(
        repo,
        "fix-double",
        "Merge pull request #12 from someone/fix-double",
        "Fix double charge on retry\n\nRetries charged twice when the provider timed out.",
        3,
    )
    # A squash merge whose changelog line is under a Fixed heading.
    shas["squash"] = commit(
        repo,
        "fix(totals): round refunds half up (#15)",
        {
            "src/totals.py": "def refund(total):\n    return round_half_up(total)\n",
            "CHANGES.md": "# 1.1\n\n## Fixed\n\n- Refund totals were a cent short on half cents\n"
            "  when rounding to even. (#15)\n",
        },
        20,
        body="Python's round() rounds half to even, so 2.675 became 2.67.",
    )
    # A changelog line with no pull request or fix commit of its own.
    shas["release"] = commit(
        repo,
        "Release 1.2",
        {
            "CHANGES.md": "# 1.2\n\n## Fixed\n\n- The export crashed on an empty cart.\n\n"
            "# 1.1\n\n## Fixed\n\n- Refund totals were a cent short on half cents\n"
            "  when rounding to even. (#15)\n"
        },
        30,
    )
    # A fix of lines another author's commit wrote (blame), with no other evidence.
    shas["loop"] = commit(
        repo,
        "Add the export loop",
        {"src/export.py": "def export(rows):\n    for position in range(len(rows) - 1):\n"},
        40,
        author="Early Author",
    )
    shas["blamed"] = commit(
        repo,
        "Fix the last row missing from the export",
        {"src/export.py": "def export(rows):\n    for position in range(len(rows)):\n"},
        45,
        author="Later Author",
    )
    shas["bare-revert"] = commit(
        repo, 'Revert "Add the export loop"', {"src/export.py": "def export(rows): ...\n"}, 50
    )
    # Noise: a bump, docs only, a bot, a typo.
    commit(repo, "Bump requests from 2.31 to 2.32", {"requirements.txt": "requests\n"}, 51)
    commit(repo, "Fix broken link in the docs", {"docs/index.md": "x\n"}, 52)
    commit(repo, "Fix lint", {"src/billing.py": BILLING_FIXED + "\n"}, 53, author="ci[bot]")
    # A fix of a file that is gone today.
    shas["gone"] = commit(
        repo,
        "Fix crash in the legacy importer because of a None row",
        {"src/legacy.py": "x = 1\n", "tests/test_legacy.py": "y\n"},
        60,
    )
    commit(repo, "Remove the legacy importer", {"src/legacy.py": None}, 61)
    return shas


def listed(cli: Cli, *args: str) -> dict[str, Any]:
    done = cli("history", "--json", "--no-sessions", *args)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def by_sha(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["sha"]: entry for entry in document["entries"] if entry["sha"]}


def test_each_source_is_listed_and_names_itself(history: dict[str, str], cli: Cli) -> None:
    document = listed(cli)
    entries = by_sha(document)
    pr = entries[history["pr"]]
    assert pr["source"] == "pull-request" and pr["pullRequest"] == 12
    assert pr["title"] == "Fix double charge on retry"
    assert set(pr["commits"]) == {history["pr"], history["pr-test"], history["pr-fix"]}
    assert {p["part"] for p in pr["why"]} >= {"fix", "cause", "test", "issue", "pull request"}
    squash = entries[history["squash"]]
    assert squash["source"] == "pull-request" and squash["pullRequest"] == 15
    changelog = next(p for p in squash["why"] if p["part"] == "changelog")
    assert "a cent short on half cents when rounding to even" in changelog["text"]
    release = entries[history["release"]]
    assert release["source"] == "changelog"
    assert release["title"] == "The export crashed on an empty cart."
    blamed = entries[history["blamed"]]
    blame = next(p for p in blamed["why"] if p["part"] == "blame")
    assert history["loop"][:12] in blame["text"] and "Add the export loop" in blame["text"]
    # Noise is never listed; no commit is listed twice (the request stands for its own).
    titles = [e["title"] for e in document["entries"]]
    assert not any(t.startswith(("Bump", "Fix broken link", "Fix lint")) for t in titles)
    assert history["pr-fix"] not in entries and history["pr-test"] not in entries


def test_ranked_by_explained_evidence_not_by_date(history: dict[str, str], cli: Cli) -> None:
    entries = listed(cli)["entries"]
    scores = [e["score"] for e in entries]
    assert scores == sorted(scores, reverse=True)
    for entry in entries:
        assert abs(sum(p["score"] for p in entry["why"]) - entry["score"]) < 0.01
    order = [e["sha"] for e in entries]
    # The pull request (a cause, a test, an issue) outranks the newer bare revert.
    assert order.index(history["pr"]) < order.index(history["bare-revert"])
    revert = next(e for e in entries if e["sha"] == history["bare-revert"])
    assert any(p["part"] == "revert without a reason" and p["score"] < 0 for p in revert["why"])


def test_the_window_the_limit_and_files_that_are_gone(
    history: dict[str, str], cli: Cli, repo: Path
) -> None:
    default = by_sha(listed(cli))
    assert history["gone"] not in default  # its only code file is gone from HEAD
    everything = listed(cli, "--all")
    assert everything["since"] is None
    gone = by_sha(everything)[history["gone"]]
    assert gone["gone"] is True
    assert len(listed(cli, "--limit", "2")["entries"]) == 2
    recent = by_sha(listed(cli, "--since", f"@{START + 35 * DAY}"))
    assert history["blamed"] in recent and history["pr"] not in recent
    # A commit older than two years is outside the default window, inside --all.
    old = START - 800 * DAY
    when = f"@{old} +0000"
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    (repo / "src" / "billing.py").write_text(BILLING_FIXED + "# old\n", encoding="utf-8")
    git(repo, "commit", "-qam", "Fix an old crash because of a race", env=env)
    sha = git(repo, "rev-parse", "HEAD").strip()
    assert sha not in by_sha(listed(cli)) and sha in by_sha(listed(cli, "--all"))


def test_the_text_says_why_and_how_to_draft(history: dict[str, str], cli: Cli, repo: Path) -> None:
    commit(repo, "Fix crash \x1b[31mred\x1b[0m on carts", {"src/billing.py": "y\n"}, 62,
           body="It crashed because the cart was empty.")  # fmt: skip
    done = cli("history", "--no-sessions", "--limit", "2")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert done.stdout.startswith("2 of ")
    assert "  why: fix +1.00" in done.stdout and "cause +2.00" in done.stdout
    assert "  draft: reliora record --from-commit " in done.stdout
    last = done.stdout.rstrip().splitlines()[-1]
    total, since = listed(cli)["total"], listed(cli)["since"]
    # What is past the list: more entries, and the history before the window.
    past = f"history before {since}: --since DATE, or --all"
    assert last == f"{total - 2} more: --limit {total}; {past}"


def test_drafts_hold_the_problem_the_fix_and_provenance(
    history: dict[str, str], cli: Cli, repo: Path
) -> None:
    draft = by_sha(listed(cli))[history["pr"]]["draft"]
    assert draft["title"] == "Fix double charge on retry"
    assert any("because the provider had already taken" in p for p in draft["problems"])
    # The solution is what the messages say of the fix, else a placeholder: never a file list
    # (the change itself is the evidence's diff).
    assert "src/billing.py" not in draft["solution"]
    evidence = by_sha(listed(cli))[history["pr"]]["evidence"]
    assert "+    key = invoice.key" in evidence["diff"] and evidence["diff"].startswith("```diff")
    assert draft["paths"] == ["src/billing.py"]
    assert draft["source"].startswith(f"commit {history['pr'][:12]} (pull request #12)")
    squash = by_sha(listed(cli))[history["squash"]]["draft"]
    assert squash["title"] == "Round refunds half up"  # no `fix(totals):`, no `(#15)`
    assert "CHANGES.md" not in squash["paths"]
    # The draft is what `record --json -` takes: with a solution of one's own, it saves.
    assert cli("init").returncode == 0
    git(repo, "config", "user.name", "Person Saving")
    fields = {**draft, "solution": "Send one idempotency key per invoice."}
    saved = cli("record", "--json", "-", input=json.dumps(fields))
    assert saved.returncode == 0, saved.stderr
    record = json.loads(saved.stdout)
    text = (repo / record["locator"]).read_text(encoding="utf-8")
    source = next(line for line in text.splitlines() if line.startswith("source: "))
    assert f"commit {history['pr'][:12]} (pull request #12)" in source
    assert "author: Person Saving" in text
    assert by_sha(listed(cli))[history["pr"]]["recordedIn"] == [record["id"]]


def test_from_commit_drafts_a_pull_request_without_a_store(
    history: dict[str, str], cli: Cli, repo: Path
) -> None:
    assert not (repo / ".reliora").exists()
    done = cli("record", "--from-commit", history["pr"][:10], "--json")
    assert done.returncode == 0, done.stderr
    draft = json.loads(done.stdout)
    assert draft["title"] == "Fix double charge on retry"
    assert draft["author"] is None and "Test Author" in draft["source"]
    saving = cli("record", "--json", "-", input=json.dumps({**draft, "solution": "Use a key."}))
    assert saving.returncode == 2 and "reliora init" in saving.stdout


def test_wrapped_lines_and_words_with_colons_stay_text() -> None:
    body = (
        "Note: the first paragraph is wrapped\nover two lines.\n\n"
        "- a bullet that is wrapped\n  onto a second line\n- another\n\n"
        "Signed-off-by: A <a@example.com>\nFixes: #3"
    )
    assert paragraphs(body) == [
        "Note: the first paragraph is wrapped over two lines.",
        "a bullet that is wrapped onto a second line",
        "another",
    ]
    assert message_body("Cause: x broke.\nMore text.\n\nSigned-off-by: A") == (
        "Cause: x broke.\nMore text."
    )


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("fix: handle empty carts", "Handle empty carts"),
        ("fix(api)!: reject bad ids (#12)", "Reject bad ids"),
        ("[core] Fix the retry loop.", "Fix the retry loop"),
        ("Fix rounding :issue:`3`", "Fix rounding"),
    ],
)
def test_titles_are_cleaned(raw: str, clean: str) -> None:
    assert clean_title(raw) == clean


def test_changelog_headings_of_markdown_and_restructuredtext() -> None:
    markdown = "# 1.0\n\n## Fixed\n\n- A crash\n  on start.\n\n## Added\n\n- A flag.\n"
    assert changelog_headings(markdown) == {"A crash on start.": "Fixed", "A flag.": "Added"}
    rst = "Version 2.0\n-----------\n\n-   Don't read sha1 at import.\n    :issue:`3`\n"
    assert changelog_headings(rst) == {"Don't read sha1 at import. :issue:`3`": "Version 2.0"}


def test_history_works_before_init_and_needs_git(history: dict[str, str], tmp_path: Path) -> None:
    repo = Path(git(tmp_path / "repo", "rev-parse", "--show-toplevel").strip())
    assert not (repo / ".reliora").exists()
    assert listed(Cli(repo))["total"] >= 4
    outside = tmp_path / "outside"
    outside.mkdir()
    done = Cli(outside)("history", "--json")
    assert done.returncode == 2 and "no .reliora/ store" in done.stdout


def test_a_repository_without_commits(repo: Path, cli: Cli) -> None:
    assert cli("init").returncode == 0
    assert listed(cli) == {"since": None, "scanned": 0, "total": 0, "entries": []}
    assert cli("history").stdout.startswith("Nothing looks like a lesson (0 commits scanned")


def test_init_points_to_history_when_the_repository_has_some(repo: Path, cli: Cli) -> None:
    for day in range(3):
        commit(repo, f"Change {day}", {"a.txt": str(day)}, day)
    done = cli("init", "--json")
    assert not any("reliora history" in s for s in json.loads(done.stdout)["nextSteps"])
    for day in range(3, 12):
        commit(repo, f"Change {day}", {"a.txt": str(day)}, day)
    again = cli("init")
    assert "Start from this repository's past (12 commits): ask your coding agent" in again.stdout
    assert "`reliora history --ask`" in again.stdout


def test_saving_a_draft_still_needs_a_solution(repo: Path, cli: Cli) -> None:
    assert cli("init").returncode == 0
    commit(repo, "Fix double charge on retry", {"src/billing.py": "x\n"}, 1, body="It paid twice.")
    draft = json.loads(cli("record", "--from-commit", "HEAD", "--json").stdout)
    draft["solution"] = ""
    refused = cli("record", "--json", "-", input=json.dumps(draft))
    assert refused.returncode == 2 and "needs a '## Solution' section" in refused.stdout
    flagged = cli(
        "record", "--from-commit", "HEAD", "--json", "--solution", "Use a key.", "--tag", "pay"
    )
    data = json.loads(flagged.stdout)
    assert (data["solution"], data["tags"]) == ("Use a key.", ["pay"])
    assert cli("record", "--json", "-", input=flagged.stdout).returncode == 0


def test_without_json_the_editor_opens_on_the_draft(repo: Path, cli: Cli, tmp_path: Path) -> None:
    assert cli("init").returncode == 0
    sha = commit(repo, "Fix double charge on retry", {"src/billing.py": "x\n"}, 1, body="Why.")
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import re, sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "t = p.read_text()\n"
        "assert 'Fix double charge on retry' in t and 'src/billing.py' in t, t\n"
        # The draft's placeholder is where the person writes the fix.
        "t = re.sub(r'… what the change does[^\\n]*', 'Charge with an idempotency key.', t)\n"
        "p.write_text(t)\n",
        encoding="utf-8",
    )
    env = {"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""}
    done = cli("record", "--from-commit", sha, env=env)
    assert done.returncode == 0, done.stderr
    (saved,) = (repo / ".reliora" / "experiences").glob("*.md")
    text = saved.read_text(encoding="utf-8")
    assert "title: Fix double charge on retry" in text and "src/billing.py" in text
    assert f"source: commit {sha[:12]}" in text or f"source: 'commit {sha[:12]}" in text


@pytest.mark.parametrize("rev", ["no-such-branch", "--help", "-n1", "HEAD~5", "HEAD:src"])
def test_a_revision_that_names_no_commit(repo: Path, cli: Cli, rev: str) -> None:
    assert cli("init").returncode == 0
    commit(repo, "Fix double charge on retry", {"src/billing.py": "x\n"}, 1)
    done = cli("record", f"--from-commit={rev}", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "not_found"


def test_from_commit_with_from_file_is_refused_and_json_alone_needs_its_dash(
    repo: Path, cli: Cli
) -> None:
    assert cli("init").returncode == 0
    commit(repo, "Fix double charge on retry", {"src/billing.py": "x\n"}, 1)
    both = cli("record", "--from-commit", "HEAD", "--from-file", "x.md")
    assert both.returncode == 2 and "only one of" in both.stderr
    alone = cli("record", "--json", "--title", "x")
    assert alone.returncode == 2 and "alone it goes with --from-commit" in alone.stdout


def test_history_reads_a_thousand_commits_in_few_git_calls(repo: Path, cli: Cli) -> None:
    """fast-import makes the history; the listing is one `git log -p` (no call per commit)."""
    lines = []
    for n in range(1000):
        subject = f"Fix retry {n} because the provider fails" if n % 10 == 0 else f"Change {n}"
        lines += [
            "commit refs/heads/main",
            f"committer A <a@example.com> {START + n * 3600} +0000",
            f"data {len(subject)}",
            subject,
            f"M 644 inline src/f{n % 7}.py",
            f"data {len(str(n))}",
            str(n),
            "",
        ]
    git_input = ("\n".join(lines) + "\n").encode()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=git_input, check=True)
    git(repo, "reset", "-q", "--hard", "main")
    trace = repo.parent / "trace.txt"
    done = cli("history", "--json", "--no-sessions", env={"GIT_TRACE": str(trace)})
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["scanned"] == 1000 and document["total"] == 100
    calls = [line for line in trace.read_text().splitlines() if "trace: built-in: git" in line]
    assert len(calls) <= 8, calls
    os.remove(trace)


# --- past agent sessions on this machine ------------------------------------------------------

SECRET = "hunter2-pg-password"
COMMAND = f"PGPASSWORD={SECRET} psql -c 'select charge()'"


def _jsonl(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")


def claude_session(home: Path, repo: Path) -> None:
    def call(tool_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}
        return {"type": "assistant", "message": {"content": [block]}}

    def result(tool_id: str, content: str, error: bool = False) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
        return {"type": "user", "message": {"content": [{**block, "is_error": error}]}}

    folder = home / ".claude" / "projects" / "".join(
        c if c.isalnum() else "-" for c in str(repo)
    )
    lines = [
        {"type": "user", "message": {"content": "charges fail"}},
        call("t1", "Bash", {"command": COMMAND}),
        result("t1", "ERROR:  function charge() does not exist", error=True),
        call("t2", "Edit", {"file_path": str(repo / "src/billing.py")}),
        result("t2", "The file has been updated successfully."),
        call("t3", "Bash", {"command": COMMAND}),
        result("t3", "1 row"),
    ]
    # Claude Code writes the working folder on every line of a session (it is what tells two
    # projects whose folder names map to one session folder apart).
    _jsonl(folder / "session-1.jsonl", [{**line, "cwd": str(repo)} for line in lines])


def codex_session(home: Path, repo: Path) -> None:
    def completed(item: dict[str, Any]) -> dict[str, Any]:
        return {"type": "event_msg", "payload": {"type": "item_completed", "item": item}}

    run = {"type": "CommandExecution", "id": "c1", "command": ["bash", "-lc", "make check"],
           "status": "failed", "aggregated_output": "TypeError: totals is None\n", "exit_code": 1}
    _jsonl(
        home / ".codex" / "sessions" / "2026" / "11" / "02" / "rollout-1.jsonl",
        [
            {"type": "session_meta", "payload": {"cwd": str(repo)}},
            completed(run),
            completed({"type": "FileChange", "id": "c2", "status": "completed",
                       "changes": {str(repo / "src/totals.py"): {"type": "update"}}}),
            completed({**run, "id": "c3", "status": "completed", "exit_code": 0}),
        ],
    )  # fmt: skip
    # Another repository's session is not read.
    _jsonl(
        home / ".codex" / "sessions" / "2026" / "11" / "03" / "rollout-2.jsonl",
        [{"type": "session_meta", "payload": {"cwd": "/elsewhere"}}, completed(run)],
    )


def gemini_session(home: Path, repo: Path) -> None:
    import hashlib

    def shell(call_id: str, output: str) -> dict[str, Any]:
        response = {"functionResponse": {"id": call_id, "response": {"output": output}}}
        return {"id": call_id, "name": "run_shell_command", "args": {"command": "npm test"},
                "result": [response], "status": "success"}  # fmt: skip

    edit = {"id": "r1", "name": "replace", "args": {"file_path": str(repo / "src/export.py")},
            "status": "success"}  # fmt: skip
    chats = home / ".gemini" / "tmp" / hashlib.sha256(str(repo).encode()).hexdigest() / "chats"
    _jsonl(
        chats / "session-1.jsonl",
        [
            {"id": "m1", "type": "gemini", "toolCalls": [shell("s1", "Error: boom\nExit Code: 1")]},
            {"id": "m2", "type": "gemini", "toolCalls": [edit]},
            {"id": "m3", "type": "gemini", "toolCalls": [shell("s2", "ok\nExit Code: 0")]},
        ],
    )


def test_past_sessions_of_each_client_are_listed_masked(
    history: dict[str, str], cli: Cli, repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    claude_session(home, repo)
    codex_session(home, repo)
    gemini_session(home, repo)
    env = {"HOME": str(home), "CODEX_HOME": "", "CLAUDE_CONFIG_DIR": ""}
    done = cli("history", "--json", "--limit", "100", env=env)
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout
    sessions = [e for e in json.loads(done.stdout)["entries"] if e["source"] == "session"]
    titles = sorted(e["title"] for e in sessions)
    assert titles == [
        "PGPASSWORD=…word psql -c 'select charge()' failed, then passed after a change",
        "make check failed, then passed after a change",
        "npm test failed, then passed after a change",
    ]
    by_title = {e["title"]: e for e in sessions}
    codex = by_title["make check failed, then passed after a change"]
    assert codex["files"] == ["src/totals.py"] and codex["sha"] is None
    assert any("codex session" in p["text"] for p in codex["why"])
    assert "TypeError: totals is None" in json.dumps(codex["draft"])
    skipped = cli("history", "--json", "--limit", "100", "--no-sessions", env=env)
    assert not any(e["source"] == "session" for e in json.loads(skipped.stdout)["entries"])


def test_history_in_a_shallow_clone_does_not_take_its_boundary_for_a_change(
    history: dict[str, str], repo: Path, tmp_path: Path
) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True
    )
    document = listed(Cli(shallow), "--all")
    assert document["scanned"] == 1
    for entry in document["entries"]:
        assert entry["files"] == []
