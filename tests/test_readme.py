"""The README's "Use it in your repository" works as written, in a fresh project.

What runs, and what stands in for what:

* the wheel is built by the README's own line (``python3 -m pip wheel --no-deps
  -w dist .``), run by bash in a copy of this checkout's package files — once per
  test session (or worker), since a build takes a few seconds;
* the install line (``pipx install …[mcp]``) is replaced by ``pip install
  --no-deps`` of that wheel into a fresh virtual environment that sees this
  environment's site-packages for the dependencies (a real pipx install
  resolves them from the package index: a minute and the network, per run); the
  plain-pip lines run as written in tests/test_install.py;
* every later block of the section (``reliora init --hooks``, the commits,
  ``reliora agent install``, ``reliora brief``, ``reliora record``) runs verbatim
  in bash, in a new git repository, with that environment's ``bin`` first on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import git

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Use it in your repository"
#: What a wheel is built from (pyproject.toml's packages and package-dir).
PACKAGE_FILES = ("pyproject.toml", "README.md", "reliora_git", ".reliora-template", "hooks")


def section_blocks() -> list[str]:
    """The ``bash`` blocks of the README's "Use it in your repository", in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(SECTION) == 1 and text.index(SECTION) < text.index("## Develop")
    body = text[text.index(SECTION) + len(SECTION) :]
    body = body[: body.index("\n## ")]
    return re.findall(r"```bash\n(.*?)```", body, flags=re.S)


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.fixture(scope="session")
def wheel_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh environment holding the wheel the README builds."""
    install = section_blocks()[0]
    assert "pipx install '.[mcp]'" in install
    [build] = [block for block in section_blocks() if " wheel " in block]
    [build_line] = [line for line in build.splitlines() if " wheel " in line]
    top = tmp_path_factory.mktemp("readme-wheel")
    checkout = top / "reliora-git"
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            checkout.mkdir(exist_ok=True)
            shutil.copy2(source, checkout / name)
    # Nothing of the caller's PYTHONPATH: a checkout on it (with the *.egg-info a build
    # leaves) reads to pip as reliora-git already installed in the new environment.
    clean = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    built = bash(build_line, checkout, clean)
    assert built.returncode == 0, built.stderr
    [wheel] = (checkout / "dist").glob("reliora_git-*.whl")
    venv = top / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
        env=clean,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The dependencies (typer, mcp, …) from this environment, after the wheel's own files;
    # only now: pip would take this environment's reliora-git (editable) as installed.
    Path(site, "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    assert (venv / "bin" / "reliora").is_file(), done.stdout
    return venv / "bin"


def test_use_it_in_your_repository_works_as_written(wheel_bin: Path, tmp_path: Path) -> None:
    blocks = section_blocks()
    assert len(blocks) == 5, "pipx, plain pip, wheel, the project's set-up, brief and record"
    [set_up_block] = [block for block in blocks if "reliora init" in block]
    [use_block] = [block for block in blocks if "reliora brief" in block]
    project = tmp_path / "my-project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "app.py").write_text("print('hello')\n")
    git(project, "add", "app.py")
    git(project, "commit", "-q", "-m", "An app of my own")
    env = {**os.environ, "PATH": f"{wheel_bin}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    where = bash("command -v reliora && reliora --help >/dev/null", project, env)
    assert where.stdout.strip() == str(wheel_bin / "reliora"), where.stderr
    # The wheel's package, not this checkout's (an editable install would import that).
    origin = bash(f"{wheel_bin}/python -c 'import reliora_git; print(reliora_git.__file__)'",
                  project, env)  # fmt: skip
    assert str(ROOT) not in origin.stdout and "site-packages" in origin.stdout, origin.stdout

    set_up = bash(set_up_block, project, env)
    assert set_up.returncode == 0, set_up.stdout + set_up.stderr
    tracked = set(git(project, "ls-files").split())
    assert {".reliora/config.toml", ".mcp.json", ".claude/settings.json", "AGENTS.md"} <= tracked
    assert (project / ".git" / "hooks" / "pre-commit").is_file()
    assert git(project, "status", "--porcelain") == "", "everything the README creates is committed"

    use = bash(use_block, project, env)
    assert use.returncode == 0, use.stdout + use.stderr
    assert "saved flaky-pytest-timeouts-on-ci-" in use.stdout
    [record] = (project / ".reliora" / "experiences").glob("flaky-pytest-timeouts-on-ci-*.md")
    assert "Raise the timeout for the git-fixture tests only" in record.read_text()
    # The lesson just recorded is what the next brief about the same trouble brings.
    again = bash('reliora brief "pytest-timeout kills slow tests on CI"', project, env)
    assert again.returncode == 0 and "Flaky pytest timeouts on CI" in again.stdout, again.stderr


TRYING = "## Just trying it"


def test_just_trying_it_works_as_written_and_git_sees_nothing(
    wheel_bin: Path, tmp_path: Path
) -> None:
    """The four lines, in someone else's project: git status is what it was."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.index(TRYING) < text.index(SECTION)  # before the team's way
    body = text[text.index(TRYING) : text.index(SECTION)]
    [block] = re.findall(r"```bash\n(.*?)```", body, flags=re.S)
    lines = block.strip().splitlines()
    assert len(lines) == 4 and lines[0].startswith("pipx install")
    project = tmp_path / "their-project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "app.py").write_text("print('theirs')\n")
    git(project, "add", "app.py")
    git(project, "commit", "-q", "-m", "Their app")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "PATH": f"{wheel_bin}{os.pathsep}{os.environ['PATH']}"}
    env.update(HOME=str(home))
    for name in ("PYTHONPATH", "CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        env.pop(name, None)
    # The install line is stood in for by the wheel (see the module's docstring).
    script = "\n".join(lines[1:]).replace("path/to/their-project", str(project))
    done = bash(script, tmp_path, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
    assert (project / ".reliora" / "config.toml").is_file()
    assert (project / ".claude" / "settings.local.json").is_file()
    assert (home / ".codex" / "hooks.json").is_file()
