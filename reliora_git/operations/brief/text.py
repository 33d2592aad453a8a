"""Text as a brief or a push shows it: one line, clean of control and invisible characters,
neutralised for an agent's context, cut at a sentence end."""

from __future__ import annotations

from reliora_git.records.text import neutralize, remove_invisible


def clean(text: str) -> str:
    """``text`` without control, bidirectional or invisible characters, and neutralised for an
    agent's context (records/text.py: no tags, no turn markers)."""
    return neutralize(remove_invisible(text))


def one_line(text: str) -> str:
    return " ".join(clean(text).split())


def cut(text: str, limit: int, show: str) -> str:
    """``text`` whole when it fits in ``limit`` characters, else cut after its last sentence
    end within the limit (else at a space) and followed by ``… (reliora show ID)``."""
    if len(text) <= limit:
        return text
    window = text[:limit]
    end = max(window.rfind(mark) for mark in (". ", "! ", "? ", "; "))
    if end >= limit // 3:
        kept = window[: end + 1]
    else:
        space = window.rfind(" ")
        kept = window[:space] if space > 0 else window
    return f"{kept.rstrip()} … {show}"
