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
