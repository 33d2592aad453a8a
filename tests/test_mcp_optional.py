"""The `mcp` SDK is optional: the CLI never imports it, and `reliora mcp` says how to get it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_the_cli_does_not_import_the_sdk(repo: Path) -> None:
    done = python(
        "import sys; from reliora_git.interfaces.cli import app; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))",
        repo,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_without_the_sdk_the_command_says_what_to_install(repo: Path) -> None:
    # `None` in sys.modules makes `import mcp` fail as if the package were absent.
    done = python(
        "import sys; sys.modules['mcp'] = None; sys.argv = ['reliora', 'mcp'];"
        "from reliora_git.__main__ import main; main()",
        repo,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "pipx install --force '.[mcp,org,web]'" in done.stderr  # every extra, no index name
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
