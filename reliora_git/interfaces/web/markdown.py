"""Record text rendered as Markdown for the view, safely (markdown-it-py, CommonMark).

Records arrive in pull requests, so their Markdown is untrusted:

* raw HTML is off: ``<script>`` or ``<img onerror=…>`` in a record is shown as text;
* a link is a link only to ``http:``, ``https:``, ``mailto:`` or a relative address:
  ``javascript:``, ``data:``, ``vbscript:``, ``file:`` and every other scheme stay text;
* every link carries ``rel="noreferrer"`` (the page's Referrer-Policy says the same);
* images are not loaded (the CSP allows none from elsewhere): their Markdown is text.

Code spans and blocks come out as ``<code>`` and ``<pre>``, set in a monospace font by
the style sheet. Invisible and control characters are written out before rendering, as
everywhere in the view.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from markupsafe import Markup

#: Schemes a link may have; an address without one (``/lesson/x``, ``#part``) is relative.
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.\-]*):")


def safe_link(url: str) -> bool:
    """Whether ``url`` may be a link: a safe scheme, or none at all."""
    found = _SCHEME.match(url)
    return found is None or found.group(1).lower() in SAFE_SCHEMES


@functools.lru_cache(maxsize=1)
def _renderer() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False})
    md.disable("image")
    md.validateLink = safe_link  # type: ignore[method-assign]

    def link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tokens[idx].attrSet("rel", "noreferrer")
        return str(self.renderToken(tokens, idx, options, env))

    md.add_render_rule("link_open", link_open)
    return md


def render(text: str) -> Markup:
    """``text`` (record text) as safe HTML."""
    from reliora_git.records.text import escape_invisible

    return Markup(_renderer().render(escape_invisible(text)))
