#!/usr/bin/env python3
"""Take the screenshots of docs/serve.md: ``reliora serve`` in headless Chromium.

Usage:

    python bench/serve_screenshots.py [--out docs/images]

The store is this repository's own ``.reliora/`` in a fresh clone (its lessons, guards
and git history), with two agent sessions pushed through the real hook so that the
sessions page has something to show. Debian's Chromium and ChromeDriver drive it
(``/usr/bin/chromium``, ``/usr/bin/chromedriver``); nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve_browser import Served, start_browser  # noqa: E402

SEARCH = "git hook imports the wrong module"
PROMPT = "the pre-commit hook imports a module from the script folder instead of the installed one"
LESSON = "a-git-hook-that-runs-python-m-imports-code-from-99733e"
SHOTS = {
    "serve-search.png": "/?q=" + urllib.parse.quote_plus(SEARCH),
    "serve-lesson.png": f"/lesson/{LESSON}",
    "serve-try.png": "/try?prompt=" + urllib.parse.quote_plus(PROMPT),
    "serve-why-not.png": "/try?prompt=" + urllib.parse.quote_plus(PROMPT) + "#why-not",
    "serve-list.png": "/?sort=newest&show=all",
    "serve-sessions.png": "/sessions/7d1c0e52-shots",
}


def reliora() -> str:
    found = Path(sys.executable).with_name("reliora")
    return str(found) if found.exists() else "reliora"


def push(repo: Path, client: str, event: dict[str, object]) -> None:
    subprocess.run([reliora(), "hook", "--client", client], cwd=repo, input=json.dumps(event),
                   capture_output=True, text=True, check=True)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reliora-shots-") as work:
        repo = Path(work) / "reliora-git"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
        prompts = (PROMPT, "the search cache re-reads every record after a rebase")
        for session, client in (("7d1c0e52-shots", "claude-code"), ("019a44f3-shots", "codex")):
            for prompt in prompts:
                event = {"session_id": session, "cwd": str(repo),
                         "hook_event_name": "UserPromptSubmit", "prompt": prompt}  # fmt: skip
                push(repo, client, event)
        served = Served(reliora(), repo, dict(os.environ))
        browser = start_browser(Path(work) / "profile")
        try:
            browser.set_window_size(1280, 1000)
            for name, path in SHOTS.items():
                browser.get(served.url + path)
                browser.save_screenshot(str(args.out / name))
                print(args.out / name)
        finally:
            browser.quit()
            served.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
