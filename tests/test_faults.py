"""Fault injection, driving the installed CLI in subprocesses (docs/security.md, "Faults").

Kills at random moments, a full disk (``RLIMIT_FSIZE``; ``/dev/full`` as stdout),
records too large to read back, store folders swapped for links, a read-only
store. After each: no torn file, no lost record, no traceback, one line that
names what the user can act on.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from reliora_git.operations.lessons import writes
from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import Store
from tests.conftest import Cli, git

SEED = 20261203
KILLED_RECORDS = 12
KILLED_FEEDBACK = 12


def _run(cli: Cli, *args: str, stdin: str | None = None, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [cli.exe, *args],
        cwd=cli.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,  # type: ignore[call-overload]
    )


def _assert_store_clean(cli: Cli, store: Store) -> None:
    report = cli.json("check")
    assert report["ok"], report
    temps = [p for p in store.path.rglob(".*.tmp")]
    # A killed writer may leave its hidden temporary file; the next write removes stale ones,
    # and no command ever reads one as a record.
    assert all(p.name.startswith(".") for p in temps)


def test_records_and_feedback_killed_at_random_moments_leave_no_torn_file(
    store: Store, cli: Cli
) -> None:
    rng = random.Random(SEED)
    base = cli("record", "--title", "Target of feedback", "--task", "t", "--solution", "s")
    assert base.returncode == 0, base.stderr
    target = cli.json("list")[0]["id"]
    saved: list[str] = []
    trials = [("record", n) for n in range(KILLED_RECORDS)]
    trials += [("feedback", n) for n in range(KILLED_FEEDBACK)]
    rng.shuffle(trials)
    for kind, n in trials:
        if kind == "record":
            body = {"title": f"Killed record {n}", "task": "t", "solution": "s " * 2000}
            proc = _run(cli, "record", "--json", "-")
            stdin = json.dumps(body)
        else:
            proc = _run(cli, "feedback", target, "success", "--note", f"n{n}", "--json")
            stdin = ""
        # Start-up takes about 0.3 s: spread the kills over start-up and the write itself.
        delay = rng.uniform(0.05, 0.9)
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.stdout is not None and proc.stderr is not None
        out = proc.stdout.read()
        assert "Traceback" not in proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
        if proc.returncode == 0 and kind == "record":
            saved.append(json.loads(out)["id"])
    _assert_store_clean(cli, store)
    listed = {r["id"] for r in cli.json("list")}
    assert set(saved) <= listed  # every record reported saved is there
    # Every record file on disk is whole: check read each one (above) and found no error.
    assert len(listed) == 1 + len(list(store.experiences.glob("killed-record-*.md")))


def _limit_file_size(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_full_disk_refuses_the_record_and_writes_nothing(store: Store, cli: Cli) -> None:
    body = json.dumps({"title": "Too big for the disk", "task": "t", "solution": "x " * 4000})
    done = subprocess.run(
        [cli.exe, "record", "--json", "-"],
        cwd=cli.cwd,
        input=body,
        capture_output=True,
        text=True,
        preexec_fn=lambda: _limit_file_size(2048),
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["path"] == ".reliora/experiences"  # the folder, not a temporary file
    assert ".tmp" not in error["message"]
    assert list(store.experiences.glob("*.md")) == []
    _assert_store_clean(cli, store)


@pytest.mark.parametrize(
    "args",
    [["search", "deploy", "--json"], ["list", "--json"], ["check", "--json"], ["list"]],
)
def test_a_failed_stdout_is_one_line_and_exit_2(store: Store, cli: Cli, args: list[str]) -> None:
    cli("record", "--title", "Deploy rollback", "--task", "t", "--solution", "s")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [cli.exe, *args], cwd=cli.cwd, stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "reliora: error: could not print the result: No space left on device"
    ]


def test_a_record_saved_before_stdout_failed_says_what_it_saved(store: Store, cli: Cli) -> None:
    body = json.dumps({"title": "Saved but not printed", "task": "t", "solution": "s"})
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [cli.exe, "record", "--json", "-"],
            cwd=cli.cwd,
            input=body,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    (path,) = store.experiences.glob("saved-but-not-printed-*.md")
    saved = f".reliora/experiences/{path.name}"
    assert line.startswith(f"reliora: error: saved {path.stem} as {saved}, but could not print")


def test_a_closed_pipe_is_quiet(store: Store, cli: Cli) -> None:
    for n in range(300):
        (store.experiences / f"r{n}.md").write_text(
            f"---\nid: r{n}\ntitle: Record {n}\n---\n## Task\nt\n\n## Solution\ns\n"
        )
    done = subprocess.run(
        f"'{cli.exe}' list | head -1", shell=True, cwd=cli.cwd, capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stderr == ""
    assert len(done.stdout.splitlines()) == 1


def test_a_record_too_large_to_read_back_is_not_saved(store: Store, cli: Cli) -> None:
    body = json.dumps({"title": "A pasted log", "task": "t", "solution": "x " * 1_200_000})
    done = cli("record", "--json", "-", input=body)
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "too_large"
    assert "1024 KiB" in error["message"]
    assert list(store.experiences.glob("*.md")) == []
    # A feedback note is held to the same limit (the CLI cannot pass one that long: the API).
    cli("record", "--title", "Small", "--task", "t", "--solution", "s")
    with pytest.raises(RelioraError, match="over the 1024 KiB"):
        writes.feedback(store, "small", "success", "n" * 1_100_000)
    assert not any(store.feedback.rglob("*.md"))


def test_a_record_that_would_not_parse_back_is_not_saved(store: Store, cli: Cli) -> None:
    body = json.dumps({"title": "Conflict", "task": "t", "solution": "<<<<<<< ours\nx"})
    done = cli("record", "--json", "-", input=body)
    assert done.returncode == 2, done.stdout
    assert list(store.experiences.glob("*.md")) == []


@pytest.mark.parametrize("folder", ["experiences", "feedback"])
def test_a_store_folder_swapped_for_a_link_is_an_error(
    repo: Path, store: Store, cli: Cli, tmp_path: Path, folder: str
) -> None:
    cli("record", "--title", "Deploy rollback", "--task", "t", "--solution", "s")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "swap")
    real = store.path / folder
    outside = tmp_path / "outside"
    shutil.move(str(real), str(outside)) if real.exists() else outside.mkdir()
    real.symlink_to(outside)
    message = "is a symbolic link (not followed)"

    checked = cli("check")
    assert checked.returncode == 1
    assert f".reliora/{folder}: error: {message}" in checked.stdout
    found = cli.json("search", "deploy")
    assert found["warnings"][0]["path"] == f".reliora/{folder}"
    assert message in cli("list").stderr

    git(repo, "add", "-A")
    staged = cli("check", "--staged")
    assert staged.returncode == 1
    assert message in staged.stdout
    git(repo, "commit", "-qm", "swap", "--no-verify")
    reviewed = cli("review", "--base", "main", "--format", "text")
    assert reviewed.returncode == 1
    assert message in reviewed.stdout


def _as_nobody() -> list[str] | None:
    """The command prefix that runs as an unprivileged user, or None if there is none."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def test_a_read_only_store_refuses_the_write_and_names_the_folder(cli: Cli) -> None:
    prefix = _as_nobody()
    if prefix is None:
        pytest.skip("running as root without setpriv: cannot make a store read-only")
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"reliora-ro-{os.getpid()}"
    folder.mkdir()
    try:
        folder.chmod(0o755)
        store_root = folder / "project"
        assert subprocess.run([cli.exe, "init", "--repo", str(store_root)]).returncode == 0
        for path in [store_root, *store_root.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        probe = subprocess.run([*prefix, cli.exe, "--version"], capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"the unprivileged user cannot run {cli.exe}: {probe.stderr.strip()}")
        done = subprocess.run(
            [*prefix, cli.exe, "record", "--title", "x", "--task", "t", "--solution", "s"],
            cwd=store_root,
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": str(folder)},
        )
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.splitlines()
        assert ".reliora/experiences" in line and "Permission denied" in line
        assert ".tmp" not in line
    finally:
        for path in [folder, *folder.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(folder)
