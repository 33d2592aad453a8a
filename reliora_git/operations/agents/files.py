"""Pure editors of the files agent clients read: text in, text out, every other byte kept.

`agent install` writes into files people keep by hand (SPEC.md §14.1). Each
editor here is a triple of pure functions ``(install, uninstall, state)``,
each taking the file's current text (None when the file does not exist) and
its name for error messages:

* ``install(text, name) -> text``: our entries added (nothing when present);
* ``uninstall(text, name) -> text | None``: exactly what install added removed
  (None: the file is left empty, delete it);
* ``state(text, name) -> str``: ``absent``, ``not installed``, ``partial``,
  ``installed`` or ``outdated``.

Our entries are recognised by what they are — a hook command that runs
``reliora hook``, an MCP server that runs ``reliora mcp``, marker lines — so
nothing is kept outside the files. JSON is edited through :mod:`jsonedit`
(insertions and deletions at parsed positions, never a re-serialisation);
Markdown and TOML through a block between two marker lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from reliora_git.operations.agents import jsonedit
from reliora_git.operations.agents.jsonedit import PathStep
from reliora_git.records.errors import RelioraError

Install = Callable[[str | None, str], str]
Uninstall = Callable[[str | None, str], str | None]
State = Callable[[str | None, str], str]


class Editor(NamedTuple):
    install: Install
    uninstall: Uninstall
    state: State


#: The state of a part that says nothing of an install either way (an item a person may have
#: put there too): a combined editor's state is its other parts'.
NEUTRAL = "neither"


#: What marks a hook entry as ours: the command runs `reliora hook`.
HOOK_MARK = "reliora hook"


def is_our_hook(value: Any) -> bool:
    """A hook entry whose command (any string field: `command`, `bash`) runs `reliora hook`."""
    return isinstance(value, dict) and any(
        isinstance(field, str) and HOOK_MARK in field for field in value.values()
    )


def combined(*editors: Editor) -> Editor:
    """Several editors of one file as one (a client with several entries in one file):
    installed in order, uninstalled in reverse (each removal undoes the insertion made last),
    its state theirs when they agree, else the odd one out or "partial"."""

    def install(text: str | None, name: str) -> str:
        for editor in editors:
            text = editor.install(text, name)
        assert text is not None
        return text

    def uninstall(text: str | None, name: str) -> str | None:
        for editor in reversed(editors):
            text = editor.uninstall(text, name)
        return text

    def state(text: str | None, name: str) -> str:
        found = [editor.state(text, name) for editor in editors]
        found = [state for state in found if state != NEUTRAL] or found
        if len(set(found)) == 1:
            return found[0]
        odd = [s for s in found if s not in ("installed", "not installed", "partial")]
        return odd[0] if odd else "partial"

    return Editor(install, uninstall, state)


# --- JSON helpers -------------------------------------------------------------------------------


def value_of(text: str, node: jsonedit.Node) -> Any:
    return json.loads(text[node.start : node.end])


def root_object(text: str, name: str) -> jsonedit.Node:
    jsonedit.parse(text, name)
    node = jsonedit.root(text)
    if node.kind != "object":
        raise RelioraError(
            "is not a JSON object; fix it, then run again", path=name, code="invalid_input"
        )
    return node


def object_at(text: str, path: tuple[PathStep, ...], name: str) -> jsonedit.Node | None:
    node = jsonedit.resolve(text, path)
    if node is not None and node.kind != "object":
        where = ".".join(str(step) for step in path)
        raise RelioraError(
            f"'{where}' is not a JSON object; fix it, then run again",
            path=name,
            code="invalid_input",
        )
    return node


def array_at(text: str, path: tuple[PathStep, ...], name: str) -> jsonedit.Node | None:
    node = jsonedit.resolve(text, path)
    if node is not None and node.kind != "array":
        where = ".".join(str(step) for step in path)
        raise RelioraError(
            f"'{where}' is not a JSON array; fix it, then run again",
            path=name,
            code="invalid_input",
        )
    return node


def remove_cascading(text: str, path: tuple[PathStep, ...], keep: int) -> str:
    """Remove the node at ``path``, then each container it leaves empty, down to depth ``keep``."""
    while len(path) > keep:
        parent = jsonedit.resolve(text, path[:-1])
        assert parent is not None
        step = path[-1]
        index = jsonedit.key_index(parent, step) if isinstance(step, str) else step
        assert index is not None
        text = jsonedit.remove(text, parent, index)
        parent = jsonedit.resolve(text, path[:-1])
        if parent is None or parent.children:
            break
        path = path[:-1]
    return text


def emptied(text: str, leftover: dict[str, Any] | None = None) -> str | None:
    """None (remove the file) when nothing is left but an empty object, or ``leftover``
    (top-level members install itself created, such as ``"version": 1``)."""
    value = json.loads(text)
    if value == {} or (leftover is not None and value == leftover):
        return None
    return text


def _ensure_object(
    text: str, path: tuple[str, ...], name: str, value: dict[str, Any]
) -> tuple[str, bool]:
    """``text`` with ``value`` at ``path`` when nothing is there (True), else unchanged (False).

    The missing part of ``path`` is created with ``value`` nested inside it in one insertion,
    so that uninstall can remove it in one go.
    """
    for depth in range(len(path)):
        if object_at(text, path[: depth + 1], name) is None:
            nested: Any = value
            for step in reversed(path[depth + 1 :]):
                nested = {step: nested}
            parent = jsonedit.resolve(text, path[:depth]) if depth else root_object(text, name)
            assert parent is not None
            return jsonedit.append(text, parent, nested, key=path[depth]), True
    return text, False


# --- Claude-shaped hooks: {"hooks": {Event: [{"matcher": m, "hooks": [entry]}]}} -------------


def _group(matcher: str | None, entry: dict[str, Any]) -> dict[str, Any]:
    group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
    group["hooks"] = [entry]
    return group


def _group_is_ours(value: Any) -> bool:
    hooks = value.get("hooks") if isinstance(value, dict) else None
    return isinstance(hooks, list) and any(is_our_hook(h) for h in hooks)


Found = tuple[PathStep, ...]


def _hook_lists(
    wanted: dict[str, Any],
    holds_ours: Callable[[Any], bool],
    find: Callable[[str], Found | None],
    remove: Callable[[str, Found], str],
    top: dict[str, Any] | None,
) -> Editor:
    """The editor of ``{"hooks": {event: [item, …]}}`` files: ``wanted`` maps each event to the
    item install appends to its list; ``holds_ours`` says whether a list item runs our hook;
    ``find`` gives the path of our next hook entry and ``remove`` takes it out."""

    def install(text: str | None, name: str) -> str:
        if text is None:
            document = {**(top or {}), "hooks": {e: [item] for e, item in wanted.items()}}
            return json.dumps(document, indent=2) + "\n"
        root = root_object(text, name)
        if object_at(text, ("hooks",), name) is None:
            return jsonedit.append(text, root, {e: [i] for e, i in wanted.items()}, key="hooks")
        for event, item in wanted.items():
            hooks = object_at(text, ("hooks",), name)
            assert hooks is not None
            items = array_at(text, ("hooks", event), name)
            if items is None:
                text = jsonedit.append(text, hooks, [item], key=event)
            elif not any(holds_ours(value_of(text, i)) for i in items.children):
                text = jsonedit.append(text, items, item)
        return text

    def uninstall(text: str | None, name: str) -> str | None:
        if text is None:
            return None
        root_object(text, name)
        while (found := find(text)) is not None:
            text = remove(text, found)
        return emptied(text, top)

    def state(text: str | None, name: str) -> str:
        if text is None:
            return "absent"
        root_object(text, name)
        present = 0
        for event in wanted:
            items = jsonedit.resolve(text, ("hooks", event))
            if items is not None and items.kind == "array":
                present += any(holds_ours(value_of(text, i)) for i in items.children)
        if present == len(wanted):
            return "installed"
        return "partial" if present or find(text) else "not installed"

    return Editor(install, uninstall, state)


def grouped_hooks(
    events: Sequence[tuple[str, str | None]],
    entry: dict[str, Any],
    top: dict[str, Any] | None = None,
) -> Editor:
    """Hooks as Claude Code, Codex and Gemini CLI lay them out: under ``hooks``, each event a
    list of groups of a ``matcher`` (None: no matcher) and ``hooks`` entries; ``top`` are
    members a new file starts with."""
    wanted = {event: _group(matcher, entry) for event, matcher in events}
    return _hook_lists(wanted, _group_is_ours, _find_grouped, _remove_grouped, top)


def _remove_grouped(text: str, found: Found) -> str:
    entries = jsonedit.resolve(text, found[:-1])
    assert entries is not None
    if len(entries.children) == 1:  # the group runs only our hook: the group goes
        return remove_cascading(text, found[:-2], keep=0)
    # Someone added their hook to our group: only ours goes.
    return remove_cascading(text, found, keep=len(found) - 1)


def _find_grouped(text: str) -> Found | None:
    hooks = jsonedit.resolve(text, ("hooks",))
    if hooks is None or hooks.keys is None:
        return None
    for event in dict.fromkeys(hooks.keys):
        groups = jsonedit.resolve(text, ("hooks", event))
        if groups is None or groups.kind != "array":
            continue
        for g in range(len(groups.children)):
            entries = jsonedit.resolve(text, ("hooks", event, g, "hooks"))
            if entries is None or entries.kind != "array":
                continue
            for h, item in enumerate(entries.children):
                if is_our_hook(value_of(text, item)):
                    return ("hooks", event, g, "hooks", h)
    return None


# --- flat hooks: {"version": 1, "hooks": {event: [entry]}} (Copilot, Cursor) -----------------


def flat_hooks(
    events: Sequence[str], entry: dict[str, Any], top: dict[str, Any] | None = None
) -> Editor:
    """Hooks as a list of entries per event under ``hooks``; ``top`` are the members a new
    file starts with (e.g. ``{"version": 1}``), removed with the file when nothing else is left."""
    return _hook_lists(
        dict.fromkeys(events, entry),
        is_our_hook,
        _find_flat,
        lambda text, found: remove_cascading(text, found, keep=0),
        top,
    )


def _find_flat(text: str) -> Found | None:
    hooks = jsonedit.resolve(text, ("hooks",))
    if hooks is None or hooks.keys is None:
        return None
    for event in dict.fromkeys(hooks.keys):
        entries = jsonedit.resolve(text, ("hooks", event))
        if entries is None or entries.kind != "array":
            continue
        for h, item in enumerate(entries.children):
            if is_our_hook(value_of(text, item)):
                return ("hooks", event, h)
    return None


# --- MCP servers ------------------------------------------------------------------------------

MCP_NAME = "reliora"
#: What the server entry runs: `reliora mcp` where reliora is installed; elsewhere (a
#: contributor's clone without it) a few lines of POSIX sh that answer the MCP handshake, so
#: that no client shows a failed server at session start (SPEC.md §14.3). Its one tool,
#: `not_installed`, says why there are no lessons (Gemini CLI reports a server without tools
#: as an issue); it echoes each request's id and protocol version.
MCP_FALLBACK = r"""command -v reliora >/dev/null 2>&1 && exec reliora mcp
# reliora is not installed here: answer the MCP handshake with one tool that says so.
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n -E 's/.*"id"[[:space:]]*:[[:space:]]*([0-9]+|"[^"]*").*/\1/p')
  [ -n "$id" ] || continue
  case $line in
    *'"initialize"'*)
      v=$(printf '%s\n' "$line" | sed -n -E 's/.*"protocolVersion"[[:space:]]*:[[:space:]]*"([^"]*)".*/\1/p')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"reliora","version":"0"},"instructions":"reliora is not installed on this machine."}}\n' "$id" "${v:-2025-06-18}" ;;
    *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"not_installed","description":"Reliora is not installed on this machine, so the lessons of this repository are not available here. Nothing to call.","inputSchema":{"type":"object","properties":{}}}]}}\n' "$id" ;;
    *'"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"reliora is not installed on this machine"}],"isError":true}}\n' "$id" ;;
    *'"ping"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"reliora is not installed"}}\n' "$id" ;;
  esac
done
"""  # noqa: E501
MCP_SERVER: dict[str, Any] = {"command": "sh", "args": ["-c", MCP_FALLBACK]}


def is_our_server(value: Any) -> bool:
    """Our entry: `sh -c` with the fallback (any version of it), or `reliora mcp` as earlier
    releases wrote it (kept, and still ours to remove)."""
    if not isinstance(value, dict):
        return False
    command = str(value.get("command", ""))
    args = value.get("args")
    if not isinstance(args, list):
        return False
    if Path(command).name in ("sh", "bash") and len(args) == 2 and args[0] == "-c":
        return isinstance(args[1], str) and args[1].startswith(
            "command -v reliora >/dev/null 2>&1 && exec reliora mcp"
        )
    return Path(command).name.startswith("reliora") and args[:1] == ["mcp"]


def mcp_servers(
    key: tuple[str, ...] = ("mcpServers",), server: dict[str, Any] | None = None
) -> Editor:
    """Our server as member ``reliora`` of the object at ``key`` (most clients: mcpServers)."""
    server = server or MCP_SERVER
    where = (*key, MCP_NAME)

    def install(text: str | None, name: str) -> str:
        if text is None:
            nested: Any = {MCP_NAME: server}
            for step in reversed(key):
                nested = {step: nested}
            return json.dumps(nested, indent=2) + "\n"
        root_object(text, name)
        text, created = _ensure_object(text, key, name, {MCP_NAME: server})
        if created:
            return text
        servers = object_at(text, key, name)
        assert servers is not None
        if jsonedit.key_index(servers, MCP_NAME) is None:
            return jsonedit.append(text, servers, server, key=MCP_NAME)
        return text  # a `reliora` server is there already (perhaps with --repo): kept as it is

    def uninstall(text: str | None, name: str) -> str | None:
        if text is None:
            return None
        root_object(text, name)
        found = jsonedit.resolve(text, where)
        if found is None or not is_our_server(value_of(text, found)):
            return text
        return emptied(remove_cascading(text, where, keep=0))

    def state(text: str | None, name: str) -> str:
        if text is None:
            return "absent"
        root_object(text, name)
        found = jsonedit.resolve(text, where)
        if found is None:
            return "not installed"
        return "installed" if is_our_server(value_of(text, found)) else "another 'reliora' server"

    return Editor(install, uninstall, state)


# --- a block between two marker lines (Markdown, TOML) -----------------------------------------

MD_BEGIN = "<!-- reliora:begin -->"
MD_END = "<!-- reliora:end -->"


def block_span(
    text: str, name: str, begin: str, end: str, syntax: str = "markdown"
) -> tuple[int, int] | None:
    """Where the block is: from its begin line to after its end line; None when absent.

    Marker lines that the file's own syntax makes text are not markers: in Markdown, those
    inside a fenced code block (``` or ~~~; a file may show them as an example); in TOML
    (``syntax="toml"``), those inside a multi-line string. A fence left open to the end of
    the file hides nothing: the file is read again with fences ignored from that line on, so
    a second install still finds the first block. A second begin line before the end, or a
    second block, is refused: removing either could take the person's text with it.
    """
    lines = text.splitlines(keepends=True)
    quoted, open_at = _quoted_lines(lines, syntax)
    if open_at is not None:  # an unclosed fence: what follows it is the file's, not a fence's
        quoted = quoted[:open_at] + [False] * (len(lines) - open_at)
    start: int | None = None
    stop: int | None = None
    start_kept = 0
    offset = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if quoted[number - 1]:
            pass
        elif stripped == begin:
            if start is not None or stop is not None:
                raise _marker_error(name, number, f"has a second `{begin}` line")
            start = offset
        elif stripped == end:
            if start is None:
                raise _marker_error(name, number, f"has a `{end}` line without `{begin}`")
            if stop is not None:
                raise _marker_error(name, number, f"has a second `{end}` line")
            stop = offset + len(line)
            start_kept, start = start, None
        offset += len(line)
    if start is not None:
        raise _marker_error(
            name, text.count("\n", 0, start) + 1, f"has a `{begin}` line without `{end}` after it"
        )
    if stop is None:
        return None
    return start_kept, stop


_TOML_QUOTES = re.compile(r'"""|\'\'\'')


def _quoted_lines(lines: list[str], syntax: str) -> tuple[list[bool], int | None]:
    """For each line, whether the syntax makes it text (inside a fence or a multi-line
    string, or the fence line itself); and the line a Markdown fence opened at and never
    closed (None when every fence closes). One pass."""
    quoted: list[bool] = []
    fence = ""
    opened = 0
    for number, line in enumerate(lines):
        stripped = line.strip()
        if syntax == "toml":
            inside = bool(fence)
            for match in _TOML_QUOTES.finditer(line):
                if not fence:
                    fence = match.group()
                elif match.group() == fence:
                    fence = ""
            quoted.append(inside or bool(fence))
        elif fence:
            quoted.append(True)
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                fence = ""
        elif stripped.startswith(("```", "~~~")):
            quoted.append(True)
            fence = stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]
            opened = number
        else:
            quoted.append(False)
    return quoted, (opened if fence and syntax != "toml" else None)


def _marker_error(name: str, line: int, what: str) -> RelioraError:
    return RelioraError(
        f"{what}; fix it by hand, then run again (nothing was written)",
        path=name,
        line=line,
        code="invalid_input",
    )


def marked_block(block: str, begin: str = MD_BEGIN, end: str = MD_END, empty: str = "") -> Editor:
    """``block`` (which starts with the ``begin`` line and ends with the ``end`` line) kept in a
    file; ``empty`` is what a file install created holds around it (a rule's front matter)."""

    def install(text: str | None, name: str) -> str:
        if text is None or text == "":
            return empty + "\n" + block if empty else block
        span = block_span(text, name, begin, end)
        if span is not None:
            return text[: span[0]] + block + text[span[1] :]  # updated in place
        # One newline before the block: a blank line after text that ends with one
        # (uninstall takes exactly that newline away again).
        return text + "\n" + block

    def uninstall(text: str | None, name: str) -> str | None:
        if text is None:
            return None
        span = block_span(text, name, begin, end)
        if span is None:
            return text
        before, after = text[: span[0]], text[span[1] :]
        if before.endswith("\n\n") or (after == "" and before.endswith("\n")):
            before = before[:-1]  # the newline install put before the block
        rest = before + after
        return None if rest in ("", empty) else rest

    def state(text: str | None, name: str) -> str:
        if text is None:
            return "absent"
        span = block_span(text, name, begin, end)
        if span is None:
            return "not installed"
        held = text[span[0] : span[1]].rstrip("\n")
        return "installed" if held == block.rstrip("\n") else "outdated"

    return Editor(install, uninstall, state)


TOML_BEGIN = "# reliora:begin"
TOML_END = "# reliora:end"
