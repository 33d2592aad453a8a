"""The composite GitHub Action (action.yml): its review step run locally, without a network."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from tests.conftest import Cli, RecordMaker, git, reliora_executable

ROOT = Path(__file__).resolve().parents[1]


def test_the_action_installs_this_checkout_and_runs_the_review_script() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    runs = [step.get("run", "") for step in action["runs"]["steps"]]
    assert any('pip install --quiet "${{ github.action_path }}"' in run for run in runs)
    assert any("hooks/github-review.sh" in run for run in runs)
    assert action["outputs"]["review"]["value"] == "${{ steps.review.outputs.review }}"


def _run_step(repo: Path, tmp_path: Path, base: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{Path(reliora_executable()).parent}{os.pathsep}{os.environ['PATH']}",
        "RELIORA_BASE": base,
        "RELIORA_HEAD": "HEAD",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
    }
    return subprocess.run(
        ["bash", str(ROOT / "hooks" / "github-review.sh")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_review_step_writes_the_comment_the_summary_and_the_output(
    repo: Path, cli: Cli, write_record: RecordMaker, tmp_path: Path
) -> None:
    write_record("base", "Base record")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "feature")
    write_record("added", "An added record")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add")
    done = _run_step(repo, tmp_path, "main")
    assert done.returncode == 0, done.stderr
    review = (tmp_path / "reliora-review.md").read_text()
    assert review.startswith("<!-- reliora-review -->")
    assert "An added record" in review
    assert (tmp_path / "summary.md").read_text() == review
    assert (tmp_path / "output.txt").read_text() == f"review={tmp_path}/reliora-review.md\n"


def test_the_review_step_fails_the_job_on_a_secret_after_writing_the_review(
    repo: Path, cli: Cli, write_record: RecordMaker, tmp_path: Path
) -> None:
    write_record("base", "Base record")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "feature")
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5b"
    write_record("leak", "Leak", f"## Task\nt\n\n## Solution\nT={token}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "leak", "--no-verify")
    done = _run_step(repo, tmp_path, "main")
    assert done.returncode == 1
    review = (tmp_path / "reliora-review.md").read_text()
    assert "GitHub Token" in review and token[8:20] not in review


# --- the eval step (hooks/github-eval.sh) -------------------------------------------------------


def test_the_action_runs_eval_after_the_review_even_when_the_review_failed() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    steps = action["runs"]["steps"]
    names = [step.get("id") for step in steps]
    assert names.index("eval") > names.index("review")
    step = steps[names.index("eval")]
    assert "hooks/github-eval.sh" in step["run"] and step["if"] == "${{ !cancelled() }}"
    assert step["env"]["RELIORA_FAIL_UNDER"] == "${{ inputs.fail-under }}"
    assert action["outputs"]["eval"]["value"] == "${{ steps.eval.outputs.eval }}"


def _run_eval_step(repo: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ROOT / "hooks" / "github-eval.sh")],
        cwd=repo,
        env={
            **os.environ,
            "PATH": f"{Path(reliora_executable()).parent}{os.pathsep}{os.environ['PATH']}",
            "RUNNER_TEMP": str(tmp_path),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            **env,
        },
        capture_output=True,
        text=True,
    )


def test_the_eval_step_reports_and_fails_the_job_on_a_failing_case(
    repo: Path, cli: Cli, write_record: RecordMaker, tmp_path: Path
) -> None:
    write_record(
        "fence",
        "Titles with ``` fences stay inside the summary's block",
        "## Task\nfence titles in the summary\n\n## Problems\n- fences\n\n## Solution\nok\n",
    )
    store = repo / ".reliora"
    (store / "eval.toml").write_text('[[case]]\nprompt = "fence titles"\nexpect = ["fence"]\n')
    done = _run_eval_step(repo, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "reliora-eval.txt").read_text()
    assert "ok   case 1: fence titles" in report and report in done.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### Reliora eval: what agents are told\n\n~~~text\n")
    assert summary.rstrip().endswith("~~~") and "```" not in summary
    assert (tmp_path / "output.txt").read_text() == f"eval={tmp_path}/reliora-eval.txt\n"

    (store / "eval.toml").write_text('[[case]]\nprompt = "fence titles"\nnever = ["fence"]\n')
    done = _run_eval_step(repo, tmp_path)
    assert done.returncode == 1
    assert "never fence: pushed" in (tmp_path / "reliora-eval.txt").read_text()
    # A threshold from the action's input fails it too: a one-word task is under the floor.
    (store / "eval.toml").write_text("")
    write_record("lost", "Lost", "## Task\nFlakiness\n\n## Problems\n- q\n\n## Solution\nx\n")
    assert _run_eval_step(repo, tmp_path).returncode == 0
    assert _run_eval_step(repo, tmp_path, RELIORA_FAIL_UNDER="0.5").returncode == 0
    done = _run_eval_step(repo, tmp_path, RELIORA_FAIL_UNDER="0.9")
    assert done.returncode == 1 and "R@5 0.500 is under --fail-under 0.9." in done.stdout
