"""``reliora history`` and ``reliora record --from-commit`` on real git histories made here, and
the rules under them (operations/lessons/commits.py, operations/lessons/commit_draft.py) on
hand-made commits."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from reliora_git.gitrepo.commits import Commit, parse_log
from reliora_git.operations.lessons.commit_draft import problems_of
from reliora_git.operations.lessons.commits import find, is_noise
from tests.conftest import Cli, git

DAY = 24 * 3600
START = 1_700_000_000


def commit(
    repo: Path,
    subject: str,
    files: dict[str, str],
    day: float,
    body: str = "",
    author: str = "Test Author",
) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
        git(repo, "add", name)
    when = f"@{int(START + day * DAY)} +0000"
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_NAME": author}
    message = subject + (f"\n\n{body}" if body else "")
    git(repo, "commit", "-q", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def history(repo: Path) -> dict[str, str]:
    """A small history holding each kind of lesson commit and each kind of noise."""
    shas = {
        "retry": commit(repo, "Add retries to billing", {"src/billing.py": "retry = 3\n"}, 0),
        "double": commit(
            repo,
            "Fix double charge when a retry repeats the charge",
            {"src/billing.py": "retry = 3\nkey = 'invoice'\n", "tests/test_billing.py": "x\n"},
            1.5,
        ),
        "page": commit(repo, "Add the invoices page", {"src/invoices.py": "page = 1\n"}, 3),
    }
    shas["revert"] = commit(
        repo,
        'Revert "Add the invoices page"',
        {"src/invoices.py": ""},
        4,
        body=f"This reverts commit {shas['page']}.",
    )
    shas["decimal"] = commit(
        repo,
        "Use Decimal for invoice totals",
        {"src/totals.py": "from decimal import Decimal\n"},
        20,
        body="Totals were wrong by a cent because floats cannot hold 0.1 exactly.\n\n"
        "Signed-off-by: Test Author <test@example.com>",
    )
    commit(repo, "Fix typo in the README", {"README.md": "Billing\n"}, 21)
    commit(repo, "Bump requests from 2.31 to 2.32", {"requirements.txt": "requests\n"}, 22)
    commit(repo, "Fix the retry wording", {"src/billing.py": "retry = 4\n"}, 23, author="bot[bot]")
    commit(repo, "Fix something", {"src/billing.py": "retry = 5\n"}, 40)  # says too little
    shas["late"] = commit(
        repo, "Fix totals rounding on refunds", {"src/totals.py": "x = 2\n"}, 60
    )  # a fix, but 40 days after the last change of its file: no follow-up
    return shas


def listed(cli: Cli, *args: str) -> dict[str, Any]:
    done = cli("history", "--json", *args)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_history_lists_reverts_follow_up_fixes_and_causes_newest_first(
    history: dict[str, str], cli: Cli
) -> None:
    document = listed(cli)
    assert document["scanned"] == 10 and document["total"] == 3
    decimal, revert, double = document["commits"]
    assert (decimal["sha"], revert["sha"], double["sha"]) == (
        history["decimal"],
        history["revert"],
        history["double"],
    )
    assert [r["kind"] for r in decimal["reasons"]] == ["cause"]
    assert "because floats cannot hold 0.1" in decimal["reasons"][0]["text"]
    (reverts,) = revert["reasons"]
    assert reverts["kind"] == "revert" and reverts["commit"] == history["page"][:12]
    assert "Add the invoices page" in reverts["text"]
    (follows,) = double["reasons"]
    assert follows["kind"] == "follow-up" and follows["commit"] == history["retry"][:12]
    assert "src/billing.py" in follows["text"] and "Add retries to billing" in follows["text"]
    assert double["files"] == ["src/billing.py", "tests/test_billing.py"]
    assert double["date"] == "2023-11-16" and double["recordedIn"] == []


def test_limit_and_since(history: dict[str, str], cli: Cli) -> None:
    first = listed(cli, "--limit", "1")
    assert first["total"] == 3 and [c["sha"] for c in first["commits"]] == [history["decimal"]]
    recent = listed(cli, "--since", "2023-11-17")
    assert [c["sha"] for c in recent["commits"]] == [history["decimal"], history["revert"]]
    assert cli("history", "--limit", "0").returncode == 2
    done = cli("history", "--since", "--limit")
    assert done.returncode == 2


def test_the_text_lists_why_files_and_the_draft_command(
    history: dict[str, str], cli: Cli, repo: Path
) -> None:
    body = "It crashed because the cart was empty."
    commit(repo, "Fix crash \x1b[31mred\x1b[0m on carts", {"src/billing.py": "y\n"}, 60.5, body)
    done = cli("history", "--limit", "2")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "<U+001B>[31mred" in done.stdout
    assert done.stdout.startswith("2 of 4 commits that look like lessons (11 scanned)")
    assert f"  draft: reliora record --from-commit {history['decimal'][:12]}" in done.stdout
    assert "  why: explains a cause:" in done.stdout and "  files: src/totals.py" in done.stdout
    assert done.stdout.rstrip().endswith("2 more: --limit 4")


def test_a_recorded_commit_says_so(history: dict[str, str], cli: Cli) -> None:
    assert cli("init").returncode == 0
    draft = cli("record", "--from-commit", history["double"][:10], "--json")
    assert draft.returncode == 0, draft.stderr
    fields = json.loads(draft.stdout)
    fields["solution"] = "Charge with an idempotency key per invoice."
    fields["task"] = "Stop retries from charging twice"
    saved = cli("record", "--json", "-", input=json.dumps(fields))
    assert saved.returncode == 0, saved.stderr
    record_id = json.loads(saved.stdout)["id"]
    recorded = {c["sha"]: c["recordedIn"] for c in listed(cli)["commits"]}
    assert recorded[history["double"]] == [record_id] and recorded[history["decimal"]] == []
    text = cli("history").stdout
    assert f"  recorded in: {record_id}" in text


def test_history_works_before_init_and_needs_git(history: dict[str, str], tmp_path: Path) -> None:
    repo = Path(git(tmp_path / "repo", "rev-parse", "--show-toplevel").strip())
    assert not (repo / ".reliora").exists()
    assert listed(Cli(repo))["total"] == 3
    outside = tmp_path / "outside"
    outside.mkdir()
    done = Cli(outside)("history", "--json")
    assert done.returncode == 2 and "no .reliora/ store" in done.stdout


def test_a_repository_without_commits(repo: Path, cli: Cli) -> None:
    assert cli("init").returncode == 0
    assert listed(cli) == {"since": None, "scanned": 0, "total": 0, "commits": []}
    assert cli("history").stdout == "No commit looks like a lesson (0 scanned).\n"


def test_init_points_to_history_when_the_repository_has_some(repo: Path, cli: Cli) -> None:
    for day in range(3):
        commit(repo, f"Change {day}", {"a.txt": str(day)}, day)
    done = cli("init", "--json")
    assert not any("reliora history" in s for s in json.loads(done.stdout)["nextSteps"])
    for day in range(3, 12):
        commit(repo, f"Change {day}", {"a.txt": str(day)}, day)
    again = cli("init")
    assert "Start from this repository's past (12 commits): `reliora history`" in again.stdout


# --- record --from-commit --------------------------------------------------------------------


def test_the_draft_takes_title_problems_paths_and_provenance(repo: Path, cli: Cli) -> None:
    assert cli("init").returncode == 0
    git(repo, "add", ".reliora")
    body = (
        "The retry charged the customer a second time\nwhen the provider timed out.\n\n"
        "- the charge had no idempotency key\n* the timeout was 2 s\n\n"
        "Closes #12\nCo-authored-by: Someone <s@example.com>"
    )
    sha = commit(repo, "Fix double charge on retry", {"src/billing.py": "x\n"}, 1, body=body)
    done = cli("record", "--from-commit", "HEAD", "--json")
    assert done.returncode == 0, done.stderr
    draft = json.loads(done.stdout)
    assert draft["title"] == "Fix double charge on retry"
    assert draft["problems"] == [
        "The retry charged the customer a second time when the provider timed out.",
        "the charge had no idempotency key",
        "the timeout was 2 s",
    ]
    assert draft["paths"] == ["src/billing.py"]  # the store's files are not what it is about
    assert (draft["created"], draft["author"]) == ("2023-11-15", "Test Author")
    assert draft["verification"] == f"From commit {sha[:12]} (2023-11-15, Test Author)."
    assert draft["solution"] == "" and draft["task"] == ""


def test_saving_a_draft_still_needs_a_solution(repo: Path, cli: Cli) -> None:
    assert cli("init").returncode == 0
    commit(repo, "Fix double charge on retry", {"src/billing.py": "x\n"}, 1, body="It paid twice.")
    draft = cli("record", "--from-commit", "HEAD", "--json").stdout
    refused = cli("record", "--json", "-", input=draft)
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
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "t = p.read_text()\n"
        "assert 'Fix double charge on retry' in t and 'src/billing.py' in t, t\n"
        "p.write_text(t.replace('What worked.', 'Charge with an idempotency key.'))\n",
        encoding="utf-8",
    )
    env = {"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""}
    done = cli("record", "--from-commit", sha, env=env)
    assert done.returncode == 0, done.stderr
    (saved,) = (repo / ".reliora" / "experiences").glob("*.md")
    text = saved.read_text(encoding="utf-8")
    assert "title: Fix double charge on retry" in text and "src/billing.py" in text
    assert "Charge with an idempotency key." in text and f"From commit {sha[:12]}" in text
    assert "What you were trying to do." not in text  # placeholders left are dropped


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


# --- the rules, on hand-made commits ---------------------------------------------------------


def made(
    sha: str, subject: str, files: tuple[str, ...], day: float, body: str = "", author: str = "a"
) -> Commit:
    return Commit(sha * 40, (), int(START + day * DAY), author, subject, body, files)


def test_a_fix_follows_only_a_recent_change_of_all_its_code_files() -> None:
    commits = [
        made("a", "Add retries", ("src/a.py", "src/b.py"), 0),
        made("b", "Fix retries when the provider fails", ("src/a.py", "CHANGES.md"), 2),
        made("c", "Fix retries when the provider times out", ("src/a.py", "src/c.py"), 3),
        made("d", "Fix retries once more, correctly", ("src/b.py", "tests/t.py"), 9),
    ]
    entries = find(list(reversed(commits)))
    assert [(e.commit.subject, e.reasons[0].commit[:1]) for e in entries] == [
        ("Fix retries when the provider fails", "a")
    ]


@pytest.mark.parametrize(
    ("subject", "files", "author", "noise"),
    [
        ("Fix typo in the guide", ("src/a.py",), "a", True),
        ("chore(deps): bump x", ("src/a.py",), "a", True),
        ("fix(deps): send@^1.1.0", ("package.json",), "a", True),
        ("Fix the parser", ("src/a.py",), "renovate[bot]", True),
        ("Fix the parser", ("docs/a.md", "README.rst"), "a", True),
        ("v1.2.3", ("src/a.py",), "a", True),
        ("Fix the parser on empty input", ("src/a.py",), "a", False),
    ],
)
def test_noise(subject: str, files: tuple[str, ...], author: str, noise: bool) -> None:
    assert is_noise(made("a", subject, files, 0, author=author)) is noise


def test_a_cause_needs_a_body_and_something_that_went_wrong() -> None:
    feature = made("a", "Add a cache", ("src/a.py",), 0, body="Faster because it caches.")
    subject_only = made("b", "Fail because of the cache", ("src/a.py",), 1)
    bug = made("c", "Clear the cache", ("src/a.py",), 2, body="Results were wrong because of it.")
    assert [e.commit.sha[0] for e in find([bug, subject_only, feature])] == ["c"]


def test_parse_log_skips_what_the_format_does_not_write() -> None:
    good = f"\x1e{'a' * 40}\x1f\x1f{START}\x1fAnn\x1fFix it\x1fBody\x1f\x00\nsrc/a.py\x00b c.py\x00"
    bad = [
        "\x1enot-a-sha\x1f\x1f1\x1fAnn\x1fx\x1f\x1f\x00",
        f"\x1e{'b' * 40}\x1f\x1fnot-a-time\x1fAnn\x1fx\x1f\x1f\x00",
        f"\x1e{'c' * 40}\x1ftoo few fields",
        "garbage before the first record",
    ]
    output = (bad[3] + good + "".join(bad[:3])).encode() + b"\xff\xfe"
    (parsed,) = parse_log(output)
    assert (parsed.sha, parsed.subject, parsed.body, parsed.files) == (
        "a" * 40,
        "Fix it",
        "Body",
        ("src/a.py", "b c.py"),
    )


def test_problems_of_a_body() -> None:
    body = (
        "First paragraph\nwrapped.\n\n1. one\n2) two\n\nThis reverts commit abcdef1.\n\n"
        + "Long. " * 200
        + "\n\nSigned-off-by: A <a@example.com>"
    )
    problems = problems_of(body)
    assert problems[:3] == ["First paragraph wrapped.", "one", "two"]
    assert len(problems) == 4 and len(problems[3]) <= 400 and problems[3].endswith(".")


def test_history_reads_a_thousand_commits_in_one_git_call(repo: Path, cli: Cli) -> None:
    """fast-import makes the history; the listing is one `git log` (no call per commit)."""
    lines = []
    for n in range(1000):
        subject = f"Fix retry {n} when the provider fails" if n % 10 == 0 else f"Change {n}"
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
    import subprocess

    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=git_input, check=True)
    git(repo, "reset", "-q", "--hard", "main")
    trace = repo.parent / "trace.txt"
    done = cli("history", "--json", env={"GIT_TRACE": str(trace)})
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["scanned"] == 1000 and document["total"] == 99  # every tenth but the first
    calls = [line for line in trace.read_text().splitlines() if "trace: built-in: git" in line]
    assert len(calls) <= 5, calls
    os.remove(trace)
