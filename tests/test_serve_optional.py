"""The web extra is optional: the CLI never imports it, and `reliora serve` says how to get it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reliora_git.storage.store import Store


def python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_the_cli_imports_no_web_framework(repo: Path) -> None:
    done = python(
        "import sys; from reliora_git.interfaces.cli import app; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'uvicorn', 'jinja2')))",
        repo,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["jinja2", "starlette", "uvicorn", "markdown_it"])
def test_without_the_extra_serve_says_what_to_install(store: Store, module: str) -> None:
    # `None` in sys.modules makes the module look absent, as without the extra.
    done = python(
        f"import sys; sys.modules[{module!r}] = None; sys.argv = ['reliora', 'serve'];"
        "from reliora_git.__main__ import main; main()",
        store.root,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert module in done.stderr
    assert "pipx install --force '.[mcp,org,web]'" in done.stderr  # every extra installed
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
