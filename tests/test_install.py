"""Installing Reliora as the README says, and what a release publishes (issue 32, items 1–2).

* The README's plain-pip lines run as written by bash, in a copy of this checkout's package
  files, with a fresh HOME that has no ``~/.local/bin``. Two things stand in for the
  network: ``PIP_NO_DEPS=1`` (pip reads its options from the environment too), and, once
  installed, a ``.pth`` file that lets the new environment import the dependencies of this
  one (as tests/test_readme.py does).
* The source archive and the wheel are built by the release workflow's own command
  (``python -m build``, the wheel from the archive), once per session, and their metadata
  checked against pyproject.toml.
* Nothing promises a package that no index holds: install lines name a clone or a wheel.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import yaml

from reliora_git import __version__
from tests.test_readme import PACKAGE_FILES, bash, section_blocks

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def copy_clone(target: Path) -> Path:
    """What a clone holds that a build reads (pyproject.toml's packages and package-dir)."""
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def clean_environment(**extra: str) -> dict[str, str]:
    # Nothing of the caller's PYTHONPATH: a checkout on it reads to pip as reliora-git
    # already installed.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return {**env, **extra}


def workflow() -> dict[str, object]:
    document = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def steps(job: str) -> list[dict[str, object]]:
    found = workflow()["jobs"][job]["steps"]  # type: ignore[index]
    assert isinstance(found, list)
    return found


# --- item 1: the plain-pip lines of the README ------------------------------------------------


# Builds from a copy of this checkout: one such test at a time under xdist.
@pytest.mark.xdist_group("checkout-build")
def test_the_plain_pip_lines_work_as_written_in_a_fresh_home(tmp_path: Path) -> None:
    [block] = [b for b in section_blocks() if "python3 -m venv" in b]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [path_line] = re.findall(r'`(export PATH="\$HOME/\.local/bin:\$PATH")`', readme)
    clone = copy_clone(tmp_path / "reliora-git")
    home = tmp_path / "home"
    home.mkdir()  # a new user's: no ~/.local/bin yet
    # No reliora of this environment (or any other) on PATH: only what the lines install.
    path = [d for d in os.environ["PATH"].split(os.pathsep) if not Path(d, "reliora").exists()]
    env = clean_environment(HOME=str(home), PIP_NO_DEPS="1", PATH=os.pathsep.join(path))
    env.pop("VIRTUAL_ENV", None)
    done = bash(block, clone, env)
    assert done.returncode == 0, done.stdout + done.stderr
    links = home / ".local" / "bin"
    assert sorted(p.name for p in links.iterdir()) == ["git-reliora", "reliora"]
    venv = home / ".local" / "reliora"
    assert all((links / name).resolve() == (venv / "bin" / name).resolve() for name in
               ("reliora", "git-reliora"))  # fmt: skip
    # The dependencies this environment has stand in for the ones pip would download.
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", where], capture_output=True, text=True, check=True
    ).stdout.strip()
    Path(site, "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # Pasted twice (a second clone, an upgrade), the lines still work: the links are replaced.
    again = bash(block.splitlines()[-1], clone, env)
    assert again.returncode == 0, again.stderr

    # Without the PATH line the commands are not found, as the README warns; with it, both are.
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    without = bash("reliora --version", project, env)
    assert without.returncode == 127 and "command not found" in without.stderr
    found = bash(f"{path_line}; command -v reliora; reliora --version; git reliora -h", project,
                 env)  # fmt: skip
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[:2] == [str(links / "reliora"), f"reliora {__version__}"]
    assert "Usage: reliora" in found.stdout and "supersede" in found.stdout


# --- item 2: a release -----------------------------------------------------------------------


@pytest.fixture(scope="session")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``dist/`` of a copy of this checkout, built by the release workflow's build step."""
    [command] = [str(s["run"]) for s in steps("build") if "python -m build" in str(s.get("run"))]
    clone = copy_clone(tmp_path_factory.mktemp("release") / "reliora-git")
    # `python` is this interpreter, which has `build` (the test extra), as the workflow's has.
    env = clean_environment(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = bash(command, clone, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return clone / "dist"


# Builds from a copy of this checkout: one such test at a time under xdist.
@pytest.mark.xdist_group("checkout-build")
def test_a_release_builds_an_sdist_and_a_wheel_with_the_right_metadata(released: Path) -> None:
    name, version = PROJECT["name"], PROJECT["version"]
    assert version == __version__  # `reliora --version` says what the files say
    stem = f"{name.replace('-', '_')}-{version}"
    assert sorted(p.name for p in released.iterdir()) == [
        f"{stem}-py3-none-any.whl",
        f"{stem}.tar.gz",
    ]
    wheel = zipfile.ZipFile(released / f"{stem}-py3-none-any.whl")
    metadata = Parser().parsestr(wheel.read(f"{stem}.dist-info/METADATA").decode())
    assert (metadata["Name"], metadata["Version"]) == (name, version)
    assert metadata["Requires-Python"] == PROJECT["requires-python"]
    extras = PROJECT["optional-dependencies"]
    assert sorted(metadata.get_all("Provides-Extra") or []) == sorted(extras)
    requires = metadata.get_all("Requires-Dist") or []
    for extra, wanted in extras.items():
        given = [r for r in requires if r.endswith(f'extra == "{extra}"')]
        assert len(given) == len(wanted), (extra, given)
    assert any(r.startswith("mcp") and r.endswith('extra == "mcp"') for r in requires)
    assert any(r.startswith("psycopg[binary]") and r.endswith('extra == "org"') for r in requires)
    points = configparser.ConfigParser()
    points.read_string(wheel.read(f"{stem}.dist-info/entry_points.txt").decode())
    assert dict(points["console_scripts"]) == {
        "reliora": "reliora_git.__main__:main",
        "git-reliora": "reliora_git.__main__:main",
    }
    # The store template and the hook scripts, byte for byte (init and hooks install read them).
    shipped = {
        "reliora_git/template": ROOT / ".reliora-template",
        "reliora_git/hook_scripts": ROOT / "hooks",
    }
    for inside, folder in shipped.items():
        for source in sorted(folder.iterdir()):
            assert wheel.read(f"{inside}/{source.name}") == source.read_bytes(), source
    assert metadata["License-Expression"] == "MIT"

    with tarfile.open(released / f"{stem}.tar.gz") as sdist:
        names = set(sdist.getnames())
        info = sdist.extractfile(f"{stem}/PKG-INFO")
        assert info is not None
        pkg_info = Parser().parsestr(info.read().decode())
    assert (pkg_info["Name"], pkg_info["Version"]) == (name, version)
    for folder in (".reliora-template", "hooks"):
        for source in (ROOT / folder).iterdir():
            assert f"{stem}/{folder}/{source.name}" in names


def test_the_release_workflow_publishes_a_version_tag_with_trusted_publishing(
    tmp_path: Path,
) -> None:
    document = workflow()
    # PyYAML reads the key `on` as the boolean true (YAML 1.1).
    triggers = document.get("on", document.get(True))
    assert triggers == {"push": {"tags": ["v*"]}}
    assert document["permissions"] == {"contents": "read"}
    build = steps("build")
    assert any(str(s.get("uses", "")).startswith("actions/upload-artifact@") for s in build)
    publish = workflow()["jobs"]["publish"]  # type: ignore[index]
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    [upload] = [s for s in publish["steps"] if "uses" in s and "publish" in s["uses"]]
    assert upload["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    assert "with" not in upload, "trusted publishing: no password or token is passed"
    if sys.version_info < (3, 11):
        return  # the check below runs on the workflow's Python, which has tomllib
    [check] = [str(s["run"]) for s in build if "GITHUB_REF_NAME" in str(s.get("run"))]
    clone = copy_clone(tmp_path / "reliora-git")
    python = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    right = bash(check, clone, clean_environment(PATH=python, GITHUB_REF_NAME=f"v{__version__}"))
    assert right.returncode == 0, right.stdout + right.stderr
    wrong = bash(check, clone, clean_environment(PATH=python, GITHUB_REF_NAME="v9.9.9"))
    assert wrong.returncode == 1 and "pyproject.toml says version" in wrong.stdout


# --- item 2: say what works today ------------------------------------------------------------

#: An install line for a package that no index holds yet.
UNPUBLISHED = re.compile(r"pipx? install '?reliora-git|reliora-git\[|uv tool install '?reliora-git")


def test_no_page_or_message_promises_an_unpublished_package() -> None:
    files = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / ".reliora-template").iterdir()),
        ROOT / ".reliora" / "README.md",
        *sorted((ROOT / "reliora_git").rglob("*.py")),
    ]
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if UNPUBLISHED.search(line)
    ]
    assert found == []
    # What `init` writes into every repository links to no web page at all.
    assert "://" not in (ROOT / ".reliora-template" / "README.md").read_text(encoding="utf-8")


def test_the_hints_name_what_works_today(repo: Path) -> None:
    """The messages that say what to install: the `mcp` and `org` extras, reliora on PATH.

    Each names every extra installed already (the test extras bring all three): a hint that
    named one extra alone made the person's next `pipx install --force` drop the others."""
    from reliora_git.interfaces.commands.serving import install_hint

    hint = install_hint()
    assert "pipx install --force '.[mcp,org,web]'" in hint and "clone" in hint
    env = {**os.environ, "PATH": "/usr/bin:/bin"}  # git, but no reliora on it
    done = subprocess.run(
        [str(Path(sys.executable).with_name("reliora")), "agent", "status"],
        cwd=repo, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "in a clone of reliora-git: pipx install '.[mcp,org,web]'" in done.stdout
    steps = subprocess.run(
        [str(Path(sys.executable).with_name("reliora")), "agent", "install", "codex"],
        cwd=repo, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert "Put `reliora` on PATH for the agent (in a clone of reliora-git" in steps.stdout


def test_a_hint_keeps_the_extras_installed_and_adds_the_one_needed() -> None:
    """Without the org extra (its module hidden), the web hint names mcp and web only."""
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from reliora_git.extras import install_command\n"
        "print(install_command('web')); print(install_command('org', force=False))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        "pipx install --force '.[mcp,web]'",
        "pipx install '.[mcp,org,web]'",
    ]
