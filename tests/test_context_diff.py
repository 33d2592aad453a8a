"""`review`'s context diff (SPEC.md §17): what a change does to what agents are told, from the
base and head trees, in markdown, text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git
from tests.test_eval import PROMPT, case, write_lessons

NEW = "invoice-retry-rate-limits"
CASE = case(
    name="billing retries",
    expect=["billing-retry-backoff", "provider-rate-limit-headers"],
    full=True,
)


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)


@pytest.fixture
def branch(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    """main: the lessons and one eval case (two lessons in full, one line); feature: a new
    lesson that ranks first for the case, and invoice-pdf-fonts retired."""
    write_lessons(write_record, repo)
    (store.path / "eval.toml").write_text(CASE, encoding="utf-8")
    _commit(repo, "lessons")
    git(repo, "checkout", "-q", "-b", "feature")
    write_record(
        NEW,
        "Invoice retries hit payment provider rate limits",
        "## Task\ninvoices fail because the payment provider rate limits retries\n\n"
        "## Problems\n- the payment provider rate limits our invoice retries; retries need "
        "backoff\n\n## Solution\nQueue invoice retries and back off exponentially.\n",
        tags=["billing", "invoices"],
    )
    pdf = store.experiences / "invoice-pdf-fonts.md"
    pdf.write_text(pdf.read_text().replace("title:", "status: retired\ntitle:"))
    _commit(repo, "a lesson takes the full slot")
    return store


def _state(repo: Path) -> tuple[str, str, bytes]:
    """What a checkout would change: HEAD, the status, the eval file's bytes."""
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "status", "--porcelain", "--ignored"),
        (repo / ".reliora" / "eval.toml").read_bytes(),
    )


def test_json_context_diff_has_each_prompt_at_base_and_head(branch: Store, cli: Cli) -> None:
    before = _state(branch.root)
    done = cli("review", "--base", "main", "--format", "json")
    assert done.returncode == 0, done.stderr
    diff = json.loads(done.stdout)["contextDiff"]
    assert _state(branch.root) == before  # nothing checked out, nothing written
    assert diff["compared"] == {"cases": 1, "records": 2}
    assert diff["casesError"] is None
    by_label = {p["label"]: p for p in diff["prompts"]}
    told = by_label["billing retries"]
    assert told["kind"] == "case" and told["prompt"] == PROMPT and told["differs"] is True
    assert [(p["id"], p["form"]) for p in told["base"]] == [
        ("billing-retry-backoff", "full"),
        ("provider-rate-limit-headers", "full"),
        ("invoice-pdf-fonts", "line"),
    ]
    assert [(p["id"], p["form"]) for p in told["head"]] == [
        (NEW, "full"),
        ("billing-retry-backoff", "full"),
        ("provider-rate-limit-headers", "line"),
    ]
    assert [(p["id"], p["form"]) for p in told["entering"]] == [(NEW, "full")]
    assert [(p["id"], p["form"]) for p in told["leaving"]] == [("invoice-pdf-fonts", "line")]
    assert told["formChanges"] == [
        {
            "id": "provider-rate-limit-headers",
            "title": "Payment provider rate limit headers tell when to retry",
            "base": "full",
            "head": "line",
        }
    ]
    # The added record's own task, and the modified (retired) one's first problem.
    assert by_label[NEW]["kind"] == "record" and by_label[NEW]["differs"] is True
    assert by_label["invoice-pdf-fonts"]["kind"] == "record"
    assert diff["changed"] == sum(p["differs"] for p in diff["prompts"])


def test_markdown_and_text_show_entering_leaving_and_full_to_line(branch: Store, cli: Cli) -> None:
    markdown = cli("review", "--base", "main", "--format", "markdown").stdout
    section = markdown[markdown.index("### What agents are told") :]
    assert "**case `billing retries`**:" in section
    assert f"- enters: `{NEW}` Invoice retries hit payment provider rate limits (full)" in section
    assert "- leaves: `invoice-pdf-fonts` Invoice PDFs lose their fonts (line)" in section
    assert (
        "- `provider-rate-limit-headers` Payment provider rate limit headers tell when to "
        "retry: full → line"
    ) in section
    text = cli("review", "--base", "main", "--format", "text").stdout
    assert "What agents are told: the push differs for " in text
    assert "  case billing retries: invoices fail" in text
    assert f"    enters: {NEW} Invoice retries hit payment provider rate limits (full)" in text
    assert "    leaves: invoice-pdf-fonts Invoice PDFs lose their fonts (line)" in text
    assert "retry: full -> line" in text


def test_the_case_as_head_has_it_fails_at_head_and_passed_at_base(
    branch: Store, cli: Cli, repo: Path
) -> None:
    # The same case, run by eval on each side: the diff says why it now fails.
    assert cli("eval").returncode == 1
    git(repo, "checkout", "-q", "main")
    assert cli("eval").returncode == 0


def test_nothing_differs_in_one_line(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli
) -> None:
    write_lessons(write_record, repo)
    (store.path / "eval.toml").write_text(CASE, encoding="utf-8")
    _commit(repo, "lessons")
    git(repo, "checkout", "-q", "-b", "feature")
    # A reworded solution: the same lessons are pushed, in the same forms.
    billing = store.experiences / "billing-retry-backoff.md"
    billing.write_text(billing.read_text().replace("cap at five", "stop after five"))
    _commit(repo, "reworded")
    text = cli("review", "--base", "main", "--format", "text").stdout
    assert "What agents are told: no push differs (1 eval case, 1 record task)." in text
    markdown = cli("review", "--base", "main", "--format", "markdown").stdout
    assert "What agents are told: no push differs (1 eval case, 1 record task)." in markdown
    assert "### What agents are told" not in markdown
    diff = json.loads(cli("review", "--base", "main", "--format", "json").stdout)["contextDiff"]
    assert diff["changed"] == 0 and len(diff["prompts"]) == 2


def test_a_bad_eval_file_at_head_is_reported_and_the_review_goes_on(
    branch: Store, cli: Cli, repo: Path
) -> None:
    (branch.path / "eval.toml").write_text('[[case]]\nprompt = "x" oops\n', encoding="utf-8")
    _commit(repo, "broken cases")
    done = cli("review", "--base", "main", "--format", "json")
    assert done.returncode == 0, done.stderr
    diff = json.loads(done.stdout)["contextDiff"]
    assert diff["casesError"].startswith(".reliora/eval.toml:2: not valid TOML")
    assert diff["compared"] == {"cases": 0, "records": 2}
    markdown = cli("review", "--base", "main", "--format", "markdown").stdout
    assert "`.reliora/eval.toml` at head was not used: " in markdown


def test_the_tasks_of_many_changed_records_are_capped(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli
) -> None:
    from reliora_git.operations.review.context_diff import MAX_RECORD_TASKS

    write_lessons(write_record, repo)
    _commit(repo, "lessons")
    git(repo, "checkout", "-q", "-b", "feature")
    for n in range(MAX_RECORD_TASKS + 3):
        write_record(
            f"imported-{n:03d}",
            f"Imported note {n}",
            f"## Task\nimported task number {n}\n\n## Problems\n- p\n\n## Solution\ns\n",
        )
    _commit(repo, "an import")
    diff = json.loads(cli("review", "--base", "main", "--format", "json").stdout)["contextDiff"]
    assert diff["compared"] == {"cases": 0, "records": MAX_RECORD_TASKS}
    assert diff["recordsLeftOut"] == 3
    text = cli("review", "--base", "main", "--format", "text").stdout
    assert "3 more changed records' tasks were not pushed." in text


def test_the_diff_names_the_eval_cases_whose_result_changes(branch: Store, cli: Cli) -> None:
    done = cli("review", "--base", "main", "--format", "json")
    diff = json.loads(done.stdout)["contextDiff"]
    assert diff["casesChanged"] == [
        {"label": "billing retries", "base": "passed", "head": "failed"}
    ]
    by_label = {p["label"]: p for p in diff["prompts"]}
    assert by_label["billing retries"]["passed"] == {"base": True, "head": False}
    assert by_label[NEW]["passed"] is None  # a record's task is no case: nothing to pass
    markdown = cli("review", "--base", "main", "--format", "markdown").stdout
    assert "**Eval cases that start failing: `billing retries`.**" in markdown
    text = cli("review", "--base", "main", "--format", "text").stdout
    assert "Eval cases that start failing: billing retries." in text
