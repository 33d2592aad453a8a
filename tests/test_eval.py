"""`reliora eval` (SPEC.md §17): the cases of .reliora/eval.toml pushed as the hooks push them,
and every lesson's reach from its own task."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

RETRY = "src/billing/retry.py"
PROMPT = "invoices fail: the payment provider rate limits our retries; add exponential backoff"
TOPICS = ("vim macros", "tmux panes", "ssh agent", "css grid", "sql joins", "rust lifetimes")


def write_lessons(write_record: RecordMaker, repo: Path) -> None:
    """A store where PROMPT gets billing-retry-backoff and provider-rate-limit-headers in full
    and invoice-pdf-fonts as a line; filler notes so that the relevance floor applies."""
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
        "provider-rate-limit-headers",
        "Payment provider rate limit headers tell when to retry",
        "## Problems\n- the payment provider rate limits invoice calls and says when in "
        "Retry-After\n\n## Solution\nRead Retry-After and schedule the retry then.\n",
        tags=["payments", "rate-limits"],
    )
    write_record(
        "invoice-pdf-fonts",
        "Invoice PDFs lose their fonts",
        "## Problems\n- invoices from the payment provider rendered without the embedded font\n\n"
        "## Solution\nEmbed the font subset when the PDF is built.\n",
    )
    for number, topic in enumerate(TOPICS):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual of {topic}.\n",
        )
    (repo / "src" / "billing").mkdir(parents=True, exist_ok=True)
    (repo / RETRY).write_text("def retry(): ...\n")


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    write_lessons(write_record, repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "lessons and code")
    return store


def cases(store: Store, text: str) -> None:
    (store.path / "eval.toml").write_text(text, encoding="utf-8")


def case(prompt: str = PROMPT, **fields: object) -> str:
    lines = ["[[case]]", f"prompt = {json.dumps(prompt)}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"


def test_a_case_whose_lessons_are_pushed_passes(lessons: Store, cli: Cli) -> None:
    cases(
        lessons,
        case(
            name="billing",
            expect=["billing-retry-backoff", "invoice-pdf-fonts"],
            never=["note-1"],
        )
        + case(expect=["billing-retry-backoff"], full=True),
    )
    done = cli("eval")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Cases (2, 0 failed)" in done.stdout
    assert "ok   billing:" in done.stdout and "ok   case 2:" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("Passed in ")


def test_a_failing_case_names_what_was_pushed_instead(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(expect=["note-3"]))
    done = cli("eval")
    assert done.returncode == 1
    assert "FAIL case 1:" in done.stdout
    assert "expected note-3: not pushed" in done.stdout
    assert (
        "pushed instead: billing-retry-backoff (full), provider-rate-limit-headers (full), "
        "invoice-pdf-fonts (line)"
    ) in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("Failed in ")


def test_full_fails_when_the_lesson_comes_only_as_a_line(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(expect=["invoice-pdf-fonts"], full=True))
    done = cli("eval")
    assert done.returncode == 1
    assert "expected invoice-pdf-fonts: only as a line, not in full" in done.stdout


def test_never_fails_when_the_lesson_is_pushed(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(never=["provider-rate-limit-headers"]))
    done = cli("eval")
    assert done.returncode == 1
    assert "never provider-rate-limit-headers: pushed (full)" in done.stdout


def test_a_file_the_agent_reads_brings_its_lesson_in_full(lessons: Store, cli: Cli) -> None:
    # The prompt alone shares nothing with the lesson; the file push brings it.
    prompt = "tidy up the module and rename its helpers"
    cases(lessons, case(prompt, expect=["billing-retry-backoff"], full=True))
    assert cli("eval").returncode == 1
    cases(lessons, case(prompt, files=[RETRY], expect=["billing-retry-backoff"], full=True))
    done = cli("eval")
    assert done.returncode == 0, done.stdout


def test_json_is_one_document_with_each_case_and_the_reach(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(expect=["note-3"], never=["invoice-pdf-fonts"]))
    done = cli("eval", "--json")
    assert done.returncode == 1
    document = json.loads(done.stdout)  # one document, nothing else on stdout
    assert document["passed"] is False and document["failedCases"] == 1
    (result,) = document["cases"]
    # Why it was not pushed: the push's own rule (operations/brief/reasons.py).
    assert result["missing"] == [
        {
            "id": "note-3",
            "got": "missing",
            "rule": "no_shared_word",
            "why": "left out: it shares no word with the task that counts (words held by more "
            "than half the store, and stop words, are not counted)",
        }
    ]
    assert [p["id"] for p in result["unwanted"]] == ["invoice-pdf-fonts"]
    assert {p["id"]: p["form"] for p in result["pushed"]} == {
        "billing-retry-backoff": "full",
        "provider-rate-limit-headers": "full",
        "invoice-pdf-fonts": "line",
    }
    reach = document["reach"]
    assert set(reach) >= {"judged", "recallAt1", "recallAt5", "mrr", "unreachable", "crowding"}


def test_bad_toml_is_one_line_naming_the_file_and_line(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(expect=["note-1"]) + '[[case]]\nprompt = "x" oops\nexpect = []\n')
    done = cli("eval")
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("reliora: error: .reliora/eval.toml:5: not valid TOML")
    assert "Traceback" not in done.stderr
    # An error at the end of the file names its last line.
    cases(lessons, case(expect=["note-1"]) + '[[case]]\nprompt = "x"\nexpect = ["a",\n')
    done = cli("eval")
    assert done.stderr.startswith("reliora: error: .reliora/eval.toml:6: not valid TOML")


def test_a_case_without_a_prompt_is_named_by_its_line(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(expect=["note-1"]) + "\n[[case]]\nexpect = ['note-2']\n")
    done = cli("eval", "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert (error["path"], error["line"]) == (".reliora/eval.toml", 5)
    assert "case 2: 'prompt' is required" in error["message"]


def test_an_unknown_id_names_the_case_and_the_nearest_id(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(expect=["note-1"]) + case(name="retries", never=["billing-retry-backof"]))
    done = cli("eval")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "reliora: error: .reliora/eval.toml:4: retries: never names 'billing-retry-backof', "
        "which is no record's id (did you mean 'billing-retry-backoff'?)"
    ]


def test_reach_finds_the_lesson_its_own_task_cannot_bring(
    lessons: Store, cli: Cli, write_record: RecordMaker
) -> None:
    # Its task ranks it first, but no word it shares is in its title, tags or asked-as lines.
    write_record(
        "export-memory",
        "Misc",
        "## Task\nthe nightly export job runs out of memory\n\n"
        "## Problems\n- the nightly export job runs out of memory\n\n## Solution\nStream rows.\n",
    )
    write_record("retired-one", "A retired note about kafka", status="retired")
    reach = cli.json("eval")["reach"]
    assert reach["judged"] == 10  # the retired record is not judged
    # billing-retry-backoff's first problem ranks provider-rate-limit-headers first, itself 2nd.
    assert (reach["recallAt1"], reach["recallAt5"], reach["mrr"]) == (0.9, 1.0, 0.95)
    (unreachable,) = reach["unreachable"]
    assert unreachable["id"] == "export-memory" and unreachable["rank"] == 1
    assert unreachable["source"] == "task" and unreachable["form"] is None
    assert "no word it shares is in its title, tags or asked-as lines" in unreachable["reason"]
    text = cli("eval").stdout
    assert "1 lesson no prompt can reach" in text and "export-memory: ranked 1" in text


def test_fail_under_fails_on_a_low_recall(
    lessons: Store, cli: Cli, write_record: RecordMaker
) -> None:
    # A task of one word: under the two shared words the floor asks for, itself included.
    write_record(
        "lost-note",
        "Lost note",
        "## Task\nFlakiness.\n\n## Problems\n- qqz\n\n## Solution\nnothing.\n",
    )
    reach = cli.json("eval")["reach"]
    assert reach["recallAt5"] == 0.9
    assert [r["id"] for r in reach["unreachable"]] == ["lost-note"]
    assert reach["unreachable"][0]["reason"] == "below the relevance floor"
    assert cli("eval", "--fail-under", "0.9").returncode == 0
    done = cli("eval", "--fail-under", "0.95")
    assert done.returncode == 1
    assert "R@5 0.900 is under --fail-under 0.95." in done.stdout
    assert cli("eval", "--fail-under", "2").returncode == 2


def test_a_record_that_comes_first_for_other_tasks_is_named(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    topics = ("postgres vacuum", "redis eviction", "nginx buffering", "celery retries")
    # Each lesson holds its topic in its task only; one record holds every topic everywhere.
    for number, topic in enumerate(topics):
        write_record(
            f"weak-{number}",
            f"Note {number}",
            f"## Task\n{topic} trouble in production\n\n"
            "## Problems\n- it broke at night and paged the on-call engineer twice\n\n"
            "## Solution\nWe read the dashboards and the logs, and tuned it until it held.\n",
        )
    every = ", ".join(topics)
    write_record(
        "stuffed",
        f"Production trouble: {every}",
        f"## Problems\n- {every} trouble in production\n\n## Solution\nAll of it.\n",
        tags=[word for topic in topics for word in topic.split()],
    )
    reach = cli.json("eval")["reach"]
    assert reach["crowding"] == [
        {"id": "stuffed", "firstFor": 4, "examples": ["weak-0", "weak-1", "weak-2", "weak-3"]}
    ]
    assert "stuffed: first for 4 (weak-0, weak-1, weak-2, weak-3)" in cli("eval").stdout


def test_init_writes_a_commented_example_and_a_fresh_store_passes(repo: Path, cli: Cli) -> None:
    assert cli("init").returncode == 0
    example = (repo / ".reliora" / "eval.toml").read_text(encoding="utf-8")
    assert "[[case]]" in example and "expect = " in example
    assert all(not line or line.startswith("#") for line in example.splitlines())
    done = cli("eval")
    assert done.returncode == 0, done.stderr
    assert "No cases" in done.stdout
    assert json.loads(cli("eval", "--json").stdout)["passed"] is True


def _hook_forms(cli: Cli, repo: Path, prompt: str, files: list[str]) -> dict[str, str]:
    """{id: form} that `reliora hook` pushes in one Claude Code session (full wins)."""
    from tests.test_push import context, event

    outputs = [context(cli("hook", input=event(repo, "UserPromptSubmit", "e", prompt=prompt)))]
    for path in files:
        read = event(repo, "PreToolUse", "e", tool_name="Read", tool_input={"file_path": path})
        outputs.append(context(cli("hook", input=read)))
    forms: dict[str, str] = {}
    for text in outputs:
        for line in text.splitlines():
            full = re.match(r"^## .* \(([^()]+)\)$", line)
            short = re.match(r"^- .* \(([^()]+)\): ", line)
            if full:
                forms[full.group(1)] = "full"
            elif short and forms.get(short.group(1)) != "full":
                forms[short.group(1)] = "line"
    return forms


@pytest.mark.parametrize(
    "prompt",
    [
        PROMPT,
        "the payment provider sends invoices late",
        # billing-retry-backoff is a line for the prompt, then in full once its file is read.
        "billing retries fail when the provider rate limits us",
    ],
)
def test_a_case_gets_exactly_what_the_hooks_push_in_a_session(
    lessons: Store, cli: Cli, repo: Path, prompt: str
) -> None:
    cases(lessons, case(prompt, files=[RETRY]))
    pushed = cli.json("eval")["cases"][0]["pushed"]
    assert pushed, "the case pushes something"
    assert {p["id"]: p["form"] for p in pushed} == _hook_forms(cli, repo, prompt, [RETRY])
    assert {p["id"]: p["form"] for p in pushed}["billing-retry-backoff"] == "full"


def test_a_line_comes_once_in_full_when_its_file_is_read(lessons: Store, cli: Cli) -> None:
    prompt = "billing retries fail when the provider rate limits us"
    cases(lessons, case(prompt) + case(prompt, files=[RETRY]))
    alone, reading = (c["pushed"] for c in cli.json("eval")["cases"])
    assert {p["id"]: p["form"] for p in alone}["billing-retry-backoff"] == "line"
    assert {p["id"]: p["form"] for p in reading}["billing-retry-backoff"] == "full"


def test_reach_is_the_same_on_one_process_and_on_workers(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    # 120 lessons: enough rankings for worker processes on a machine with two cores or more.
    words = ["cache", "queue", "index", "shard", "token", "socket", "thread", "buffer"]
    for n in range(120):
        a, b, c = words[n % 8], words[(n // 8) % 8], words[(n * 3 + 1) % 8]
        write_record(
            f"lesson-{n:03d}",
            f"The {a} {b} lesson {n}",
            f"## Task\nfix the {a} and the {b} when {c} fails\n\n"
            f"## Problems\n- {c} broke the {a}\n\n## Solution\nRebuild the {b}.\n",
        )
    one = cli("eval", "--json", env={"RELIORA_JOBS": "1"})
    many = cli("eval", "--json")
    assert one.returncode == many.returncode
    first, second = json.loads(one.stdout)["reach"], json.loads(many.stdout)["reach"]
    assert first["judged"] == 120 and first == second
    assert first["unreachable"], "some of these look-alike lessons cannot be reached"


def test_a_failure_says_why_the_lesson_was_only_a_line(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(expect=["invoice-pdf-fonts"], full=True))
    done = cli("eval")
    assert done.returncode == 1
    line = next(x for x in done.stdout.splitlines() if "expected invoice-pdf-fonts" in x)
    # The push's own reason for the line, after what the case expected.
    assert "only as a line, not in full (a line, not in full: " in line
    document = json.loads(cli("eval", "--json").stdout)
    (missing,) = document["cases"][0]["missing"]
    assert missing["got"] == "line"
    assert missing["rule"] in ("not_confident", "no_own_word", "max_full")
    assert missing["why"].startswith("a line, not in full: ")


def test_cases_runs_the_cases_without_the_reach(lessons: Store, cli: Cli) -> None:
    cases(lessons, case(expect=["billing-retry-backoff"]))
    done = cli("eval", "--cases")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok   case 1:" in done.stdout
    assert "Reach not judged (--cases runs the cases only)." in done.stdout
    assert "R@5" not in done.stdout
    done = cli("eval", "--cases", "--json")
    document = json.loads(done.stdout)
    assert document["reach"] is None and document["passed"] is True
    cases(lessons, case(expect=["note-3"]))
    assert cli("eval", "--cases").returncode == 1
    done = cli("eval", "--cases", "--fail-under", "0.5")
    assert done.returncode == 2
    assert "--cases" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "reliora eval --cases" in cli("eval", "--help").stdout
