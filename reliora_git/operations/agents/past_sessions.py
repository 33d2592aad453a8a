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

At most ``clients.base.PAST_FILES`` files a client, the newest first. Where each client keeps
them, and how a file reads, is the client's own (its module in clients/).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reliora_git.operations.agents.clients.base import Step


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


def past_troubles(top: Path, home: Path | None = None) -> list[PastTrouble]:
    """The troubled moments of this working tree's past sessions, newest session first:
    each client finds its own files and reads them (clients/: ``past_sessions``,
    ``past_lines``, ``read_transcript``)."""
    from reliora_git.operations.agents import clients

    home = home or Path.home()
    found: list[PastTrouble] = []
    for client in ("claude-code", "codex", "gemini"):
        module = clients.load(client)
        find, lines_of, parse = module.past_sessions, module.past_lines, module.read_transcript
        if find is None or lines_of is None or parse is None:
            continue
        for path in find(top, home):
            found += _troubles(client, path, list(parse(lines_of(path, top))), top)
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
