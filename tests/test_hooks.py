"""`reliora hooks`, `init --hooks`, `git reliora` and the pre-commit framework, with real git."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from reliora_git.gitrepo import hooks
from reliora_git.storage.store import Store
from tests.conftest import Cli, git
from tests.test_staged import LIKELY, NEAR_DUPLICATE, ORIGINAL

REPOSITORY = Path(__file__).resolve().parents[1]
FOREIGN_HOOK = "#!/bin/sh\necho FOREIGN-HOOK-RAN\n"


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file in ``folder`` with its content, mode and modification time."""
    return {
        path.name: (path.read_bytes(), path.stat().st_mode, path.stat().st_mtime_ns)
        for path in sorted(folder.iterdir())
    }


def hooks_dir(repo: Path) -> Path:
    return repo / ".git" / "hooks"


@pytest.fixture
def foreign_hook(repo: Path) -> Path:
    folder = hooks_dir(repo)
    folder.mkdir(exist_ok=True)
    hook = folder / "pre-commit"
    hook.write_text(FOREIGN_HOOK, encoding="utf-8")
    hook.chmod(0o750)
    return hook


def commit_near_duplicate(
    store: Store, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    (store.experiences / "flaky-pytest-timeouts.md").write_text(ORIGINAL, encoding="utf-8")
    (store.experiences / "pytest-timeouts-again.md").write_text(NEAR_DUPLICATE, encoding="utf-8")
    git(store.root, "add", "-A")
    return subprocess.run(
        ["git", "commit", "-m", "records"],
        cwd=store.root,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_existing_hook_still_runs_and_comes_back(
    store: Store, cli: Cli, foreign_hook: Path
) -> None:
    original = (foreign_hook.read_bytes(), stat.S_IMODE(foreign_hook.stat().st_mode))
    done = cli("hooks", "install")
    assert done.returncode == 0, done.stderr
    assert "pre-commit.reliora-chained" in done.stdout
    assert hooks.is_ours(foreign_hook)

    committed = commit_near_duplicate(store)
    assert committed.returncode == 0, committed.stderr
    output = committed.stdout + committed.stderr
    assert "FOREIGN-HOOK-RAN" in output
    assert LIKELY in output
    assert output.index("FOREIGN-HOOK-RAN") < output.index(LIKELY)

    done = cli("hooks", "uninstall")
    assert done.returncode == 0, done.stderr
    assert (foreign_hook.read_bytes(), stat.S_IMODE(foreign_hook.stat().st_mode)) == original
    assert not (hooks_dir(store.root) / "pre-commit.reliora-chained").exists()


def test_a_failing_chained_hook_stops_the_commit(
    store: Store, cli: Cli, foreign_hook: Path
) -> None:
    foreign_hook.write_text("#!/bin/sh\necho NO >&2\nexit 3\n", encoding="utf-8")
    assert cli("hooks", "install").returncode == 0
    committed = commit_near_duplicate(store)
    assert committed.returncode != 0
    assert "NO" in committed.stderr


def test_installing_twice_changes_nothing(store: Store, cli: Cli, foreign_hook: Path) -> None:
    assert cli("hooks", "install").returncode == 0
    first = snapshot(hooks_dir(store.root))
    again = cli("hooks", "install")
    assert again.returncode == 0, again.stderr
    assert "already installed" in again.stdout
    assert snapshot(hooks_dir(store.root)) == first


def test_uninstall_without_our_hook_leaves_a_foreign_one(
    store: Store, cli: Cli, foreign_hook: Path
) -> None:
    before = snapshot(hooks_dir(store.root))
    done = cli("hooks", "uninstall")
    assert done.returncode == 0
    assert "not installed" in done.stdout
    assert snapshot(hooks_dir(store.root)) == before


def test_core_hooks_path_elsewhere_writes_nothing(store: Store, cli: Cli) -> None:
    git(store.root, "config", "core.hooksPath", ".husky")
    done = cli("hooks", "install")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "reliora check --staged"
    assert not (store.root / ".husky").exists()
    assert not (hooks_dir(store.root) / "pre-commit").exists()
    status = cli.json("hooks", "status")
    assert status["hooksPath"] == ".husky"
    assert status["installed"] is False


def test_status_reports_each_state(store: Store, cli: Cli, foreign_hook: Path) -> None:
    assert cli.json("hooks", "status")["foreignHook"] is True
    assert cli("hooks", "install").returncode == 0
    status = cli.json("hooks", "status")
    assert (status["installed"], status["chained"], status["foreignHook"]) == (True, True, False)
    assert "installed" in cli("hooks", "status").stdout


def test_init_hooks_installs_into_the_git_path_of_a_worktree(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    (repo / "README").write_text("x\n", encoding="utf-8")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    worktree = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    done = cli("init", "--hooks", cwd=worktree)
    assert done.returncode == 0, done.stderr
    where = git(worktree, "rev-parse", "--git-path", "hooks").strip()
    hook = (worktree / where).resolve() / "pre-commit"
    assert hooks.is_ours(hook)
    assert os.access(hook, os.X_OK)


def test_hook_runs_without_reliora_on_path(store: Store, cli: Cli) -> None:
    assert cli("hooks", "install").returncode == 0
    script = (hooks_dir(store.root) / "pre-commit").read_text(encoding="utf-8")
    assert "RELIORA_PYTHON=" in script
    # The installing interpreter is written into the hook, so PATH need not hold reliora.
    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent
    (store.experiences / "flaky-pytest-timeouts.md").write_text(ORIGINAL, encoding="utf-8")
    (store.experiences / "pytest-timeouts-again.md").write_text(NEAR_DUPLICATE, encoding="utf-8")
    git(store.root, "add", "-A")
    committed = subprocess.run(
        ["git", "commit", "-m", "records"],
        cwd=store.root,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{git_dir}:/usr/bin:/bin"},
    )
    assert committed.returncode == 0, committed.stderr
    assert LIKELY in committed.stdout + committed.stderr


def test_hook_falls_back_to_reliora_on_path(store: Store, cli: Cli) -> None:
    hooks.install(store.root, python="/nonexistent/python")
    path = f"{Path(cli.exe).parent}{os.pathsep}{os.environ['PATH']}"
    committed = commit_near_duplicate(store, {"PATH": path})
    assert committed.returncode == 0, committed.stderr
    assert LIKELY in committed.stdout + committed.stderr


def test_the_shipped_script_is_the_top_level_hooks_file() -> None:
    shipped = REPOSITORY / "hooks" / "pre-commit"
    assert hooks.script_template() == shipped.read_text(encoding="utf-8")
    assert hooks.MARKER in hooks.render_script(sys.executable)


def test_git_reliora_dash_h_prints_help(store: Store, cli: Cli) -> None:
    bin_dir = str(Path(cli.exe).parent)
    done = subprocess.run(
        ["git", "reliora", "-h"],
        cwd=store.root,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
    )
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout
    assert "hooks" in done.stdout and "review" in done.stdout


# Builds from this checkout (build/, *.egg-info): one such test at a time under xdist.
@pytest.mark.xdist_group("checkout-build")
def test_wheel_ships_the_template_and_the_hook(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-w",
            str(tmp_path),
            str(REPOSITORY),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    [wheel] = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "reliora_git/hook_scripts/pre-commit" in names
    assert "reliora_git/template/experience.md" in names
    assert "reliora_git/template/config.toml" in names


# Builds from this checkout (build/, *.egg-info): one such test at a time under xdist.
@pytest.mark.xdist_group("checkout-build")
def test_pre_commit_framework_runs_the_hook_from_this_repository(
    store: Store, tmp_path: Path
) -> None:
    if not (REPOSITORY / ".pre-commit-hooks.yaml").is_file() or shutil.which("git") is None:
        pytest.skip("not run from a checkout of this repository")
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not pre_commit.exists():
        pytest.skip("the pre-commit package is not installed (pip install -e '.[test]')")
    (store.experiences / "flaky-pytest-timeouts.md").write_text(ORIGINAL, encoding="utf-8")
    git(store.root, "add", "-A")
    git(store.root, "commit", "-q", "-m", "first")
    (store.experiences / "pytest-timeouts-again.md").write_text(NEAR_DUPLICATE, encoding="utf-8")
    git(store.root, "add", "-A")
    # try-repo builds the hook's own virtualenv from this checkout (`pip install .`).
    done = subprocess.run(
        [str(pre_commit), "try-repo", str(REPOSITORY), "reliora-check"],
        cwd=store.root,
        capture_output=True,
        text=True,
        env={**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")},
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reliora check --staged" in done.stdout
    assert "Passed" in done.stdout
    assert LIKELY in done.stdout


def test_install_refuses_when_it_would_lose_a_hook(
    store: Store, cli: Cli, foreign_hook: Path
) -> None:
    chained = foreign_hook.with_name("pre-commit.reliora-chained")
    chained.write_text("#!/bin/sh\necho older\n", encoding="utf-8")
    before = snapshot(foreign_hook.parent)
    done = cli("hooks", "install")
    assert done.returncode == 2
    assert done.stderr.startswith("reliora: error:") and "pre-commit.reliora-chained" in done.stderr
    assert snapshot(foreign_hook.parent) == before


def test_install_in_a_submodule_uses_its_own_hooks_folder(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q", "-b", "main", "--template=")
    (library / "README").write_text("lib\n", encoding="utf-8")
    git(library, "add", "README")
    git(library, "commit", "-q", "-m", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    done = cli("hooks", "install", cwd=repo / "lib")
    assert done.returncode == 0, done.stderr
    hook = repo / ".git" / "modules" / "lib" / "hooks" / "pre-commit"
    assert hooks.is_ours(hook)
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
