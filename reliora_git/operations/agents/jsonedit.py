"""Edit a JSON document as text: add or remove one member or item, leaving every other byte.

`agent install` writes into files people already keep by hand
(``.claude/settings.json``, ``.mcp.json``); re-serialising them would reorder
nothing but would still change their indentation, spacing and escapes. So the
document is parsed only to find where things are (the standard library's
``raw_decode`` gives the end of any value), and edits are text insertions and
deletions at those places. An insertion is shaped so that removing what it
added gives the original bytes back: install then uninstall is the identity.

Pure: text in, text out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reliora_git.records.errors import RelioraError

_WHITESPACE = " \t\n\r"
_decoder = json.JSONDecoder()
PathStep = str | int


@dataclass(frozen=True)
class Node:
    """One value of the document: its span, and for objects and arrays its direct children."""

    start: int
    end: int
    kind: str  # "object", "array" or "value"
    #: Object members' keys (None for arrays and values).
    keys: tuple[str, ...] | None = None
    #: Where each child begins: an object member's key, an array item's value.
    child_starts: tuple[int, ...] = ()
    children: tuple[Node, ...] = ()


class JsonEditError(RelioraError):
    pass


def parse(text: str, name: str) -> Any:
    """The document's value; a one-line error naming the file and line when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise JsonEditError(
            f"is not valid JSON ({error.msg}); fix it or remove it, then run again",
            path=name,
            line=error.lineno,
            code="invalid_input",
        ) from None
    except RecursionError:
        raise JsonEditError("is nested too deeply", path=name, code="invalid_input") from None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WHITESPACE:
        i += 1
    return i


def _value_end(text: str, i: int) -> int:
    _, end = _decoder.raw_decode(text, i)
    return int(end)


def node_at(text: str, start: int) -> Node:
    """The value starting at ``start`` (no leading whitespace), with one level of children."""
    opener = text[start]
    if opener not in "{[":
        return Node(start, _value_end(text, start), "value")
    closer = "}" if opener == "{" else "]"
    keys: list[str] = []
    starts: list[int] = []
    children: list[Node] = []
    i = _skip(text, start + 1)
    if text[i] == closer:
        return Node(
            start, i + 1, "object" if opener == "{" else "array", () if opener == "{" else None
        )
    while True:
        starts.append(i)
        if opener == "{":
            key, i = _decoder.raw_decode(text, i)
            keys.append(key)
            i = _skip(text, i)
            i = _skip(text, i + 1)  # the colon
        child_end = _value_end(text, i)
        children.append(Node(i, child_end, _kind(text[i])))
        i = _skip(text, child_end)
        if text[i] == closer:
            break
        i = _skip(text, i + 1)  # the comma
    kind = "object" if opener == "{" else "array"
    return Node(
        start,
        i + 1,
        kind,
        tuple(keys) if kind == "object" else None,
        tuple(starts),
        tuple(children),
    )


def _kind(char: str) -> str:
    return "object" if char == "{" else "array" if char == "[" else "value"


def root(text: str) -> Node:
    return node_at(text, _skip(text, 0))


def resolve(text: str, path: tuple[PathStep, ...]) -> Node | None:
    """The node at ``path`` (keys of objects, indexes of arrays), or None when absent."""
    node = root(text)
    for step in path:
        if isinstance(step, str):
            if node.kind != "object" or node.keys is None or step not in node.keys:
                return None
            # Duplicate keys: the last one counts, as json.loads reads it.
            index = len(node.keys) - 1 - node.keys[::-1].index(step)
        else:
            if node.kind != "array" or not 0 <= step < len(node.children):
                return None
            index = step
        node = node_at(text, node.children[index].start)
    return node


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _line_indent(text: str, i: int) -> str:
    start = _line_start(text, i)
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def indent_unit(text: str) -> str:
    """The document's indentation step: its smallest leading indentation, else two spaces."""
    best: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        lead = line[: len(line) - len(stripped)]
        if lead and stripped and (best is None or len(lead) < len(best)):
            best = lead
    return best or "  "


def render(value: Any, indent: str, unit: str) -> str:
    """``value`` as JSON laid out like the document: ``unit`` per level, from ``indent``."""
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", "\n" + indent)


def render_inline(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def append(text: str, container: Node, value: Any, key: str | None = None) -> str:
    """``text`` with ``value`` added as the last member (``key``) or item of ``container``."""
    unit = indent_unit(text)
    label = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
    if container.children:
        last_start = container.child_starts[-1]
        before = text[_line_start(text, last_start) : last_start]
        at = container.children[-1].end
        if before.strip(" \t") == "":
            inserted = ",\n" + before + label + render(value, before, unit)
        else:  # a one-line container stays on its line
            inserted = ", " + label + render_inline(value)
        return text[:at] + inserted + text[at:]
    outer = _line_indent(text, container.start)
    inner = outer + unit
    at = container.start + 1
    inserted = "\n" + inner + label + render(value, inner, unit)
    if "\n" not in text[at : container.end - 1]:
        # `{}` becomes a block; remove() takes the closing line away again.
        inserted += "\n" + outer
    return text[:at] + inserted + text[at:]


def remove(text: str, container: Node, index: int) -> str:
    """``text`` without child ``index`` of ``container``: the inverse of :func:`append`."""
    start = container.child_starts[index]
    end = container.children[index].end
    if index > 0:
        # From the end of the previous child: its comma and our line go together.
        return text[: container.children[index - 1].end] + text[end:]
    if len(container.children) > 1:
        # The first of several: up to where the next one begins.
        return text[:start] + text[container.child_starts[1] :]
    # The only child: the container goes back to what it was before append().
    at = container.start + 1
    rest = text[end : container.end - 1]
    closing = "\n" + _line_indent(text, container.start)
    if rest.startswith(closing) and "\n" not in rest[len(closing) :]:
        rest = rest[len(closing) :]
    return text[:at] + rest + text[container.end - 1 :]


def key_index(node: Node, key: str) -> int | None:
    if node.keys is None or key not in node.keys:
        return None
    return len(node.keys) - 1 - node.keys[::-1].index(key)
