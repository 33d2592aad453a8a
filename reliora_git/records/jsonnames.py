"""What a JSON key that is not known was probably meant to be.

Records' front matter spells fields ``project_context``; their JSON (``record
--json -``, ``update --json -``, MCP) spells them ``projectContext``. A key in the
other spelling is refused all the same (one spelling per format), but the error
names the one meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection


def camel_case(name: str) -> str:
    """``project_context`` → ``projectContext`` (a name without ``_`` is kept)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_name_hint(key: str, known: Collection[str]) -> str:
    """`` (did you mean 'projectContext'?)`` for ``key``, or ``""`` when nothing is close.

    Tried in turn: the camelCase spelling, that spelling behind ``add`` (update's
    ``addFailedAttempts`` for ``failed_attempts``), then a close match.
    """
    camel = camel_case(key[:100])
    candidates = [camel, "add" + camel[:1].upper() + camel[1:]]
    meant = next((name for name in candidates if name in known), None)
    if meant is None:
        close = difflib.get_close_matches(camel, sorted(known), n=1, cutoff=0.75)
        meant = close[0] if close else None
    return f" (did you mean {meant!r}?)" if meant else ""
