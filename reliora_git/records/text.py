"""Characters a reader does not see (pure): find them, escape them, remove them.

Records arrive in pull requests and are read by people and by agents. Text can
carry characters that no screen shows but every program reads: Unicode tag
characters (U+E0000–U+E007F spell ASCII invisibly: "Fix flaky tests" followed
by an instruction to an agent reads as "Fix flaky tests"), zero-width spaces
and joiners, U+2060, U+FEFF, soft hyphens, bidirectional controls, variation
selectors (which can also carry bytes), private-use characters, and the
control characters that move a terminal's cursor. Here they are one set:

* every character of Unicode category Cf (format) and Co (private use),
* the other default-ignorable code points (U+034F, Hangul fillers, U+17B4–U+17B5,
  Mongolian variation selectors, U+FE00–U+FE0F, the whole U+E0000–U+E0FFF block:
  tags, variation selectors supplement, reserved),
* C0 and C1 control characters and DEL, except tab and newline.

The ranges are written out (not computed from :mod:`unicodedata` when the
module loads: that walks 1.1 million code points); tests/test_invisible.py
checks that they cover every Cf and Co character of the running Python.
Each function is one pass of one character class: linear in the text.
"""

from __future__ import annotations

import re

_RANGES = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # controls (tab and newline are text)
    "\u00ad"  # soft hyphen
    "\u034f"  # combining grapheme joiner
    "\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"  # Arabic, Syriac format characters
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f"  # Hangul fillers, Khmer, Mongolian selectors
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f"  # zero width, bidi, word joiner, invisible operators
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"  # filler, variation selectors, BOM, specials
    "\ue000-\uf8ff"  # private use
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"  # tags, variation selectors supplement
    "\U000f0000-\U000ffffd\U00100000-\U0010fffd"  # supplementary private use
)
_INVISIBLE = re.compile(f"[{_RANGES}]")
#: The characters of _RANGES that ``str.isprintable`` calls printable (a combining grapheme
#: joiner, fillers, variation selectors); the others it refuses already. tests/test_invisible.py
#: checks the list against every code point.
_PRINTABLE_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u3164\ufe00-\ufe0f\uffa0"
    "\U000e0100-\U000e01ef]"
)
#: Code points shown in a message about invisible text before "…".
SHOWN_CODE_POINTS = 3


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds any invisible or control character (tab and newline are fine)."""
    return _INVISIBLE.search(text) is not None


def is_plain(text: str) -> bool:
    """Whether ``text`` is all printable (``str.isprintable``: no control, format,
    private-use, surrogate or unassigned character, no line break) and holds no
    invisible character: nothing to remove, escape or replace.

    Several times faster than :func:`has_invisible` on such text, the usual kind: the
    large class of _RANGES makes the regex engine test each character at length.
    """
    return text.isprintable() and _PRINTABLE_INVISIBLE.search(text) is None


def invisible_characters(text: str) -> list[tuple[int, str]]:
    """(offset, character) of each invisible or control character in ``text``, in order."""
    return [(match.start(), match.group()) for match in _INVISIBLE.finditer(text)]


def code_point(char: str) -> str:
    """``U+E0049``: how a character is named in escapes and messages."""
    return f"U+{ord(char):04X}"


def escape_invisible(text: str) -> str:
    """``text`` with each invisible character written as ``<U+E0049>``, so that readers see it."""
    return _INVISIBLE.sub(lambda match: f"<{code_point(match.group())}>", text)


def remove_invisible(text: str) -> str:
    """``text`` without its invisible and control characters (tab and newline kept)."""
    return _INVISIBLE.sub("", text)


def describe_invisible(text: str) -> str:
    """``3 invisible characters (U+E0049, U+E0067, U+200B)``: what a warning says of ``text``.

    Each kind is named once, in the order first seen (a run of one zero-width
    space is ``(U+200B)``, not that name three times).
    """
    found = invisible_characters(text)
    kinds = list(dict.fromkeys(code_point(char) for _, char in found))
    names = kinds[:SHOWN_CODE_POINTS]
    more = ", …" if len(kinds) > SHOWN_CODE_POINTS else ""
    plural = "s" if len(found) != 1 else ""
    return f"{len(found)} invisible character{plural} ({', '.join(names)}{more})"


# --- text that goes into an agent's context ---------------------------------------------------

#: Role and wrapper words: a tag of one of these names, or of a name joined from them with
#: ``_`` (``user_instructions``, ``hook_context``, ``function_results``), is shaped like what
#: clients and models wrap turns and hook output in. HTML's own element names are left out
#: (``output``, ``source``, ``search``): a lesson quotes those as code.
WRAPPER_WORDS = frozenset(
    {
        "system",
        "user",
        "assistant",
        "human",
        "developer",
        "model",
        "ai",
        "tool",
        "tools",
        "function",
        "functions",
        "result",
        "results",
        "context",
        "prompt",
        "instruction",
        "instructions",
        "reminder",
        "hook",
        "command",
        "message",
        "messages",
        "turn",
        "thinking",
        "im",
        "endoftext",
    }
)
#: A ``<`` (``</``, spaces allowed after the slash) with the name after it, the rest of the
#: tag up to its ``>`` if any. Neither part crosses a ``<``, so every ``<`` of the text is
#: looked at once and no match backtracks: one pass, linear in the text.
_TAG = re.compile(r"<(/[ \t]*)?([^\s<>/]+)([^<>]*)(>?)")
#: Special tokens between bars, ASCII or fullwidth (``<|im_start|>``, ``<｜end▁of▁sentence｜>``).
_BARS = "|\uff5c"
#: A role word and a colon, as a transcript marks a turn ("Human:", "Assistant:", "System:").
_ROLE = re.compile(
    r"\b(human|assistant|user|system|developer|tool|model|ai)(\s*):", re.IGNORECASE | re.ASCII
)


def wrapper_name(name: str) -> bool:
    """Whether a tag named ``name`` could open or close a client's wrapper (see
    :func:`neutralize` for the rule)."""
    if name[0] in _BARS:
        return len(name) > 1 and name[-1] in _BARS
    if not (name.isascii() and (name.islower() or name.isupper())):
        return False  # JSX components are capitalised (`Button`), code is camelCase
    parts = name.replace("-", "_").split("_")
    if not all(part[:1].isalpha() and part.isalnum() for part in parts):
        return False  # `uint8_t` is fine, but `i-1`, `my_header.h`, `https:` are no names
    return "-" in name or any(part.lower() in WRAPPER_WORDS for part in parts)


def _tag(match: re.Match[str]) -> str:
    slash, name, rest, close = match.groups()
    if not rest and not close and match.end() < len(match.string):
        return match.group()  # `<name` right before another `<`: not a tag
    if not wrapper_name(name):
        return match.group()
    return f"‹{slash or ''}{name}{rest}{'›' if close else ''}"


def neutralize(text: str) -> str:
    """``text`` as data inside an agent's context: no wrapper tags, no turn markers.

    Clients wrap what a hook adds in tags of their own (``<system-reminder>``,
    ``<user-prompt-submit-hook>``, ``<user_instructions>``, ``<environment_context>``) and
    models read special tokens (``<|im_start|>``) and role markers as turns. So:

    * A **tag** is ``<`` or ``</`` (spaces allowed after the slash), a name, then ``>``,
      ``/``, white space or the end of the text (``<name …>``, ``</name>``, ``<name/>``).
      Its ``<`` and its own ``>`` become ‹ › when its name could be a wrapper's:
      a special token between bars (``<|im_start|>``); or ASCII words of letters and
      digits joined by ``-`` or ``_``, all lowercase or all capitals, that hold a hyphen
      (``system-reminder``, ``command-name``: the shape of clients' wrappers and of HTML
      custom elements alike) or a role/wrapper word of :data:`WRAPPER_WORDS`
      (``system``, ``</instructions>``, ``user_instructions``, ``hook_context``, ``USER``).
    * Everything else an agent may copy keeps every character: JSX components
      (``<Button onClick={() => save(a < b)}>``, ``</Button>``: capitalised), HTML elements
      (``<div>``, ``<br/>``, ``<output>``), generics (``x<y>``, ``std::vector<uint8_t>``,
      ``template <size_t N>``), ``#include <my_header.h>``, ``=>``, ``->``, ``<-``,
      ``a < b``, ``<<'EOF'``, ``<https://…>``.
    * A **role marker** ``Human:`` becomes ``“Human”:`` so that a record cannot imitate a
      conversation turn.

    The words stay readable for a person. Two passes of patterns that never backtrack: linear
    in the text.
    """
    return _ROLE.sub(r"“\1”\2:", _TAG.sub(_tag, text))
