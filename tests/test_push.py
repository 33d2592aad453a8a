"""The quiet push (SPEC.md §14.2): `brief --push`, and what the hooks push once a session."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from reliora_git.operations.brief.push import MAX_ENTRIES, MAX_FULL, Candidate, compose
from reliora_git.operations.brief.selection import Lesson
from reliora_git.search.confidence import Confidence
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git, reliora_executable

RETRY = "src/billing/retry.py"
PROMPT = "invoices fail: the payment provider rate limits our retries; add exponential backoff"


def event(repo: Path, name: str, session: str = "s1", **fields: Any) -> str:
    document = {"session_id": session, "cwd": str(repo), "hook_event_name": name}
    document.update(fields)
    return json.dumps(document)


def context(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    write_record(
        "billing-retry-backoff",
        "Billing retries need jittered exponential backoff",
        "## Problems\n- the payment provider rate limited our invoice retries\n\n"
        "## Solution\nUse exponential backoff with full jitter; cap at five attempts.\n\n"
        "## Warnings\n- never retry a charge without an idempotency key\n",
        paths=[RETRY],
        tags=["billing"],
    )
    write_record(
        "invoice-pdf-fonts",
        "Invoice PDFs lose their fonts",
        "## Problems\n- invoices from the payment provider rendered without the embedded font\n\n"
        "## Solution\nEmbed the font subset when the PDF is built.\n",
    )
    for number, topic in enumerate(
        ("vim macros", "tmux panes", "ssh agent", "css grid", "sql joins", "rust lifetimes")
    ):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual of {topic}.\n",
        )
    (repo / "src" / "billing").mkdir(parents=True)
    (repo / RETRY).write_text("def retry(): ...\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons and code")
    return store


def test_push_shows_the_confident_lesson_in_full_and_lean(lessons: Store, cli: Cli) -> None:
    document = cli.json("brief", "--push", PROMPT)
    forms = {lesson["id"]: lesson["form"] for lesson in document["lessons"]}
    assert forms["billing-retry-backoff"] == "full"
    assert set(forms.values()) <= {"full", "line"}
    done = cli("brief", "--push", PROMPT)
    text = done.stdout
    assert text.startswith("Lessons kept in this repository")
    assert "## Billing retries need jittered exponential backoff (billing-retry-backoff)" in text
    # The problem it solved as well as the solution; no field lists, no scores.
    assert "rate limited our invoice retries" in text and "full jitter" in text
    assert "idempotency key" in text
    assert "score" not in text and "why:" not in text and "(title" not in text
    assert "pull request" not in text


def test_a_lesson_that_only_shares_words_is_one_line(lessons: Store, cli: Cli) -> None:
    document = cli.json("brief", "--push", PROMPT)
    line = next(x for x in document["lessons"] if x["id"] == "invoice-pdf-fonts")
    assert line["form"] == "line"
    assert line["text"].startswith("- Invoice PDFs lose their fonts (invoice-pdf-fonts): shares ")
    assert "\n" not in line["text"]
    # --json keeps what the text leaves out: the fields, the scores, the confidence.
    assert line["reason"]["tokens"] and "confidence" in line["reason"]


def test_a_task_the_store_does_not_know_gets_nothing(lessons: Store, cli: Cli) -> None:
    done = cli("brief", "--push", "yes, go ahead and run the tests again")
    assert (done.returncode, done.stdout) == (0, "")


def test_the_plain_brief_marks_its_lessons_full(lessons: Store, cli: Cli) -> None:
    document = cli.json("brief", PROMPT)
    assert document["lessons"] and {x["form"] for x in document["lessons"]} == {"full"}


# --- compose: the pure part ----------------------------------------------------------------------


def candidate(number: int, confident: bool, paths: list[str] | None = None) -> Candidate:
    lesson = Lesson(f"id-{number}", f"Title {number}", f"x/{number}.md", paths or [], (), 1.0)
    confidence = Confidence(confident, 2.0 if confident else 1.0, 0.5, 1.0)
    return Candidate(lesson, confidence, full=f"## Title {number}\nbody", line=f"- line {number}")


def test_at_most_two_in_full_and_five_entries() -> None:
    found = [candidate(n, confident=True) for n in range(8)]
    entries, text = compose(found)
    assert [e.form for e in entries] == ["full"] * MAX_FULL + ["line"] * (MAX_ENTRIES - MAX_FULL)
    assert text.count("## ") == MAX_FULL and text.count("\n- line") == MAX_ENTRIES - MAX_FULL


def test_what_a_session_got_is_left_out_except_a_line_whose_file_is_read() -> None:
    found = [candidate(1, False, ["src/a.py"]), candidate(2, False), candidate(3, False)]
    entries, _ = compose(found, {"id-1": "line", "id-2": "line"}, read=["src/a.py"])
    assert [(e.candidate.lesson.id, e.form) for e in entries] == [
        ("id-1", "full"),
        ("id-3", "line"),
    ]
    entries, _ = compose(found, {"id-1": "full", "id-2": "line", "id-3": "line"}, read=["src/a.py"])
    assert entries == []


def test_a_limit_turns_full_lessons_into_lines_before_leaving_any_out() -> None:
    found = [candidate(1, True), candidate(2, False)]
    _, whole = compose(found)
    entries, text = compose(found, limit=len(whole) - 1)
    assert [e.form for e in entries] == ["line", "line"] and len(text) < len(whole)
    entries, text = compose(found, limit=10)
    assert (entries, text) == ([], "")


# --- once a session, through the hooks ------------------------------------------------------------


def test_session_start_prompt_and_read_push_a_lesson_once(
    lessons: Store, cli: Cli, repo: Path
) -> None:
    (repo / RETRY).write_text("def retry(): return 2\n")  # the branch changes the file
    seen = [
        context(cli("hook", input=event(repo, "SessionStart", source="startup"))),
        context(cli("hook", input=event(repo, "UserPromptSubmit", prompt=PROMPT))),
        context(
            cli(
                "hook",
                input=event(
                    repo,
                    "PreToolUse",
                    tool_name="Read",
                    tool_input={"file_path": str(repo / RETRY)},
                ),
            )
        ),
    ]
    assert "(billing-retry-backoff)" in seen[0]
    whole = "\n".join(seen)
    assert whole.count("(billing-retry-backoff)") == 1, seen


def test_a_line_comes_in_full_once_when_its_file_is_read(
    lessons: Store, cli: Cli, repo: Path, write_record: RecordMaker
) -> None:
    write_record(
        "retry-jitter-twin",
        "Retries and jitter for billing",
        "## Problems\n- invoice retries were slow\n\n## Solution\nSame backoff, shorter cap.\n",
        paths=["src/billing/other.py"],
    )
    (repo / "src/billing/other.py").write_text("x = 1\n")
    first = context(cli("hook", input=event(repo, "UserPromptSubmit", prompt=PROMPT)))
    assert "- Retries and jitter for billing (retry-jitter-twin)" in first
    read = event(
        repo, "PreToolUse", tool_name="Read", tool_input={"file_path": "src/billing/other.py"}
    )
    again = context(cli("hook", input=read))
    assert "## Retries and jitter for billing (retry-jitter-twin)" in again
    assert context(cli("hook", input=read.replace('"s1"', '"s1"'))) == ""
    edit = event(
        repo, "PreToolUse", "s1", tool_name="Edit", tool_input={"file_path": str(repo / RETRY)}
    )
    assert "billing-retry-backoff" not in context(cli("hook", input=edit))


def test_another_session_gets_the_lesson_again(lessons: Store, cli: Cli, repo: Path) -> None:
    one = context(cli("hook", input=event(repo, "UserPromptSubmit", "a", prompt=PROMPT)))
    again = context(cli("hook", input=event(repo, "UserPromptSubmit", "a", prompt=PROMPT)))
    other = context(cli("hook", input=event(repo, "UserPromptSubmit", "b", prompt=PROMPT)))
    assert "billing-retry-backoff" in one and again == "" and "billing-retry-backoff" in other


def test_the_session_budget_stops_pushes_with_one_line(
    lessons: Store, cli: Cli, repo: Path
) -> None:
    config = lessons.path / "config.toml"
    config.write_text(config.read_text() + "\npush_session_budget = 300\n")
    first = context(cli("hook", input=event(repo, "UserPromptSubmit", prompt="invoice pdf fonts")))
    assert first and len(first) <= 300
    said = context(cli("hook", input=event(repo, "UserPromptSubmit", prompt=PROMPT)))
    assert said.startswith("Reliora: this session's lessons reached their budget")
    assert "\n" not in said
    assert context(cli("hook", input=event(repo, "UserPromptSubmit", prompt="ssh agent"))) == ""


def test_concurrent_hooks_of_one_session_push_a_lesson_once(lessons: Store, repo: Path) -> None:
    prompts = [f"{PROMPT} (try {n})" for n in range(12)]
    reads = [
        event(repo, "PreToolUse", tool_name="Read", tool_input={"file_path": str(repo / RETRY)})
    ] * 6

    def run(stdin: str) -> str:
        done = subprocess.run(
            [reliora_executable(), "hook"],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=repo,
            env={"RELIORA_HOOK_DEADLINE": "60", "PATH": "/usr/bin:/bin"},
        )
        return context(done)

    inputs = [event(repo, "UserPromptSubmit", prompt=p) for p in prompts] + reads
    with ThreadPoolExecutor(max_workers=len(inputs)) as pool:
        outputs = list(pool.map(run, inputs))
    assert sum(o.count("(billing-retry-backoff)") for o in outputs) == 1
    assert sum(o.count("(invoice-pdf-fonts)") for o in outputs) <= 1


def test_a_brief_counted_as_json_fits_its_budget(lessons: Store) -> None:
    from reliora_git.operations.brief.full import brief, compact_size

    result = brief(lessons, PROMPT, budget=100)
    whole = result.to_json()
    assert compact_size(whole) > 400  # the text fits 100 tokens; its JSON does not
    fitted = result.json_within_budget()
    assert compact_size(fitted) <= 400 or fitted["lessons"] == []
    assert fitted["used"] * 4 >= compact_size(fitted) > (fitted["used"] - 1) * 4
    kept = [x["id"] for x in fitted["lessons"]] + [x["id"] for x in fitted["omitted"]]
    assert kept == [x["id"] for x in whole["lessons"]] + [x["id"] for x in whole["omitted"]]


@pytest.mark.parametrize("session", [".", "..", "", "../../etc"])
def test_a_session_id_that_names_a_folder_is_mapped_like_any_other(
    lessons: Store, cli: Cli, repo: Path, session: str
) -> None:
    from reliora_git.operations.agents.session import session_file

    first = context(cli("hook", input=event(repo, "UserPromptSubmit", session, prompt=PROMPT)))
    again = context(cli("hook", input=event(repo, "UserPromptSubmit", session, prompt=PROMPT)))
    assert "billing-retry-backoff" in first and again == ""  # remembered: a file, not a folder
    state = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "reliora"
    path = session_file(state, session)
    assert path.parent == state / "sessions" and path.is_file()
    assert cli.json("agent", "status")["hookLog"] == []


def test_a_brief_names_at_most_a_hundred_files(lessons: Store, cli: Cli) -> None:
    files = [arg for n in range(101) for arg in ("--file", f"src/f{n}.py")]
    done = cli("brief", *files, "--json")
    assert done.returncode == 2
    assert "at most 100 files" in json.loads(done.stdout)["error"]["message"]


def run_hook(repo: Path, stdin: str, deadline: str = "60") -> str:
    done = subprocess.run(
        [reliora_executable(), "hook"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=repo,
        env={"RELIORA_HOOK_DEADLINE": deadline, "PATH": "/usr/bin:/bin"},
    )
    return context(done)


def test_parallel_reads_of_one_file_brief_it_exactly_once(lessons: Store, repo: Path) -> None:
    read = event(repo, "PreToolUse", tool_name="Read", tool_input={"file_path": str(repo / RETRY)})
    with ThreadPoolExecutor(max_workers=30) as pool:
        outputs = list(pool.map(lambda _: run_hook(repo, read), range(30)))
    assert sum("## Billing retries need jittered" in o for o in outputs) == 1


def test_a_hook_that_gives_up_leaves_the_file_for_the_next_read(lessons: Store, repo: Path) -> None:
    read = event(repo, "PreToolUse", tool_name="Read", tool_input={"file_path": str(repo / RETRY)})
    assert run_hook(repo, read, deadline="0.000001") == ""
    assert "## Billing retries need jittered" in run_hook(repo, read)


def test_session_start_says_once_per_clone_that_the_git_hook_is_missing(
    lessons: Store, cli: Cli, repo: Path, write_record: RecordMaker
) -> None:
    start = event(repo, "SessionStart", "a", source="startup")
    assert context(cli("hook", input=start.replace('"a"', '"z"'))) == ""  # no guards: no notice
    write_record(
        "no-float-money",
        "Money is never a float",
        "## Problems\n- totals drifted\n\n## Solution\nUse Decimal.\n",
        guards=[{"pattern": "float\\(", "severity": "block"}],
    )
    first = context(cli("hook", input=start))
    assert first.startswith("Reliora: this clone has no Reliora git hook")
    assert "reliora hooks install" in first
    assert context(cli("hook", input=start.replace('"a"', '"b"'))) == ""  # once per clone
    assert cli("hooks", "install").returncode == 0
    (repo / ".git" / "reliora" / "hook-notice-given").unlink()
    assert context(cli("hook", input=start.replace('"a"', '"c"'))) == ""  # installed: silent
