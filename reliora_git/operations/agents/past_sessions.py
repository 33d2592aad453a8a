"""This repository's past agent sessions on this machine, read for ``history`` (SPEC.md §16).

Claude Code, Codex and Gemini CLI keep each session's transcript locally; the troubled turns
the end-of-turn ask looks for (a command that failed and later passed after a change, the
person correcting the agent) are in them. Read-only and local: the files are found where
each client keeps them for this working tree, read with the client's own transcript reader
and the ask's detector (trouble.py), and what comes out is masked (the store's secret
scanner) and neutralised before it is shown.

* Claude Code: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, ``projects/<the path, every other
  character than a letter or digit written ->/*.jsonl``;
* Codex: ``$CODEX_HOME`` or ``~/.codex``, ``sessions/**/rollout-*.jsonl`` whose first line
  (``session_meta``) names this working tree as its ``cwd``;
* Gemini CLI: ``~/.gemini/tmp/<sha256 of the path>/chats/*``.

At most :data:`MAX_FILES` files a client, the newest first.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from reliora_git.operations.agents.clients.base import Step

MAX_FILES = 200
#: Bytes of a Codex rollout's start read to find its working tree.
HEAD_BYTES = 64 * 1024
#: A Gemini chat kept as one JSON document is read whole up to this size.
MAX_JSON_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class PastTrouble:
    """One troubled moment of a past session, masked and on one line each."""

    client: str
    session: str
    time: int
    command: str = ""
    error: str = ""
    files: tuple[str, ...] = ()
    fixed: bool = False
    correction: str = ""


def _newest(paths: Iterable[Path]) -> list[Path]:
    found = []
    for path in paths:
        try:
            found.append((path.stat().st_mtime, path))
        except OSError:
            continue
    found.sort(key=lambda item: (item[0], str(item[1])), reverse=True)
    return [path for _, path in found[:MAX_FILES]]


def claude_files(top: Path, home: Path) -> list[Path]:
    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    folder = base / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(top))
    return _newest(folder.glob("*.jsonl")) if folder.is_dir() else []


def codex_files(top: Path, home: Path) -> list[Path]:
    base = Path(os.environ.get("CODEX_HOME") or home / ".codex") / "sessions"
    if not base.is_dir():
        return []
    return [path for path in _newest(base.rglob("rollout-*.jsonl")) if _codex_cwd(path) == top]


def _codex_cwd(path: Path) -> Path | None:
    try:
        with path.open("rb") as handle:
            first = handle.read(HEAD_BYTES).split(b"\n", 1)[0]
        payload = json.loads(first).get("payload")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return Path(cwd) if isinstance(cwd, str) and cwd else None


def gemini_files(top: Path, home: Path) -> list[Path]:
    folder = home / ".gemini" / "tmp" / hashlib.sha256(str(top).encode()).hexdigest() / "chats"
    return _newest(p for p in folder.glob("*") if p.suffix in (".json", ".jsonl"))


def _gemini_lines(path: Path) -> Iterator[bytes]:
    """A chat kept as one JSON document, as the lines the Gemini reader takes."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            return
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return
    messages = data.get("messages") if isinstance(data, dict) else None
    for message in messages if isinstance(messages, list) else []:
        yield json.dumps(message).encode()


def past_troubles(top: Path, home: Path | None = None) -> list[PastTrouble]:
    """The troubled moments of this working tree's past sessions, newest session first."""
    from reliora_git.operations.agents import clients, transcript

    home = home or Path.home()
    found: list[PastTrouble] = []
    for client, files in (
        ("claude-code", claude_files(top, home)),
        ("codex", codex_files(top, home)),
        ("gemini", gemini_files(top, home)),
    ):
        parse = clients.load(client).read_transcript
        if parse is None:
            continue
        for path in files:
            if path.suffix == ".json":
                lines: Iterable[bytes] = _gemini_lines(path)
            else:
                lines = transcript.read_lines(path)
            found += _troubles(client, path, list(parse(lines)), top)
    return found


def _troubles(client: str, path: Path, steps: list[Step], top: Path) -> list[PastTrouble]:
    from reliora_git.operations.agents.trouble import find
    from reliora_git.operations.paths import repo_relative
    from reliora_git.records.credentials import redact
    from reliora_git.records.text import neutralize, remove_invisible

    def shown(text: str, limit: int) -> str:
        flat = " ".join(neutralize(remove_invisible(redact(text[: limit * 4]))).split())
        return flat if len(flat) <= limit else flat[: limit - 1] + "…"

    try:
        when = int(path.stat().st_mtime)
    except OSError:
        return []
    found = []
    for trouble in find(steps).troubles:
        relative = [repo_relative(f, top, top) for f in trouble.files]
        found.append(
            PastTrouble(
                client,
                path.name,
                when,
                shown(trouble.command, 160),
                shown(trouble.error, 200),
                tuple(dict.fromkeys(r for r in relative if r and not r.startswith(".reliora"))),
                trouble.fixed,
                shown(trouble.correction, 200),
            )
        )
    return found
