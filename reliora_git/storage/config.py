"""``.reliora/config.toml``: optional settings (docs/record-format.md; the template in
``.reliora-template/config.toml`` names every key, and tests/test_docs.py holds it to that)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from reliora_git.records.errors import RelioraError
from reliora_git.records.tomltext import TomlError
from reliora_git.records.tomltext import loads as toml_loads
from reliora_git.storage.store import Store, decode_utf8, read_regular_file


@dataclass(frozen=True)
class Config:
    search_limit: int = 10
    block_on_invalid: bool = True
    hook_duplicates: bool = True
    #: A similar record holding at least this share of a new record's duplicate query
    #: (idf-weighted, docs/ranking.md) is a likely duplicate.
    duplicate_overlap: float = 0.75
    #: Also run detect-secrets' entropy plugins (they flag hashes and ids: docs/security.md).
    secrets_entropy: bool = False
    #: Tokens (4 characters each) a brief may take at most (docs/commands.md).
    brief_budget: int = 1000
    #: Characters an agent session's hook pushes may add up to (SPEC.md §14.2); 0: no cap.
    push_session_budget: int = 20000
    #: At the end of an agent's turn that shows trouble, ask once for the lesson (SPEC.md §16).
    capture: bool = True
    #: "off" turns every agent hook off for everyone (SPEC.md §14.3; agents/switches.py).
    agent: str = "on"
    #: False turns the hooks' push off (the end-of-turn ask stays, unless ``capture``).
    push: bool = True


def load_config(store: Store) -> Config:
    path = store.path / "config.toml"
    if not path.is_file():
        return Config()
    try:
        # Same rules as a record: no symlink followed, at most 1 MiB, strict UTF-8.
        text = decode_utf8(read_regular_file(path, store.locator(path)), store.locator(path))
        data = toml_loads(text)
    except RelioraError as exc:
        raise RelioraError(
            f"cannot read settings: {exc.message}", path=store.locator(path), code="invalid_config"
        ) from None
    except TomlError as exc:
        raise RelioraError(
            f"cannot read settings: {exc.message}",
            path=store.locator(path),
            line=exc.line,
            code="invalid_config",
        ) from None
    defaults = Config()
    locator = store.locator(path)
    values = {}
    for key, default in vars(defaults).items():
        value = data.get(key, default)
        if isinstance(default, float) and type(value) is int:
            value = float(value)  # `duplicate_overlap = 1` means 1.0
        if type(value) is not type(default):
            raise _invalid(locator, text, key, f"'{key}' must be {_KIND[type(default)]}")
        if key == "search_limit" and value < 1:
            raise _invalid(locator, text, key, "'search_limit' must be at least 1")
        if key == "brief_budget" and value < 100:
            raise _invalid(locator, text, key, "'brief_budget' must be at least 100")
        if key == "push_session_budget" and value < 0:
            raise _invalid(locator, text, key, "'push_session_budget' must be 0 (no cap) or more")
        if key == "agent" and value.strip().lower() not in ("on", "off"):
            raise _invalid(locator, text, key, '\'agent\' must be "on" or "off"')
        if key == "duplicate_overlap" and not 0.0 <= value <= 1.0:
            raise _invalid(locator, text, key, "'duplicate_overlap' must be between 0 and 1")
        values[key] = value
    for key in data:
        if key not in values:
            _warn_once(unknown_setting(locator, text, key, list(values)))
    return Config(**values)


#: How an error names the type a setting must have ("must be an integer").
_KIND: dict[type, str] = {
    int: "an integer",
    bool: "true or false",
    float: "a number",
    str: "a string",
}

#: Warnings already printed by this process: each command may read the settings often.
_warned: set[str] = set()


def unknown_setting(locator: str, text: str, key: str, known: list[str]) -> str:
    """The warning for a key that no setting has: file, line, and the setting meant.

    A warning, not an error: the commands keep working with the defaults, as they did
    before the file named the key (SPEC.md §7: named in a warning, with the nearest key).
    """
    # Imported here: every command reads the config, only a misspelt key needs difflib.
    import difflib

    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    line = key_line(text, key)
    where = f"{locator}:{line}" if line else locator
    return f"{where}: unknown setting {key!r}{hint}; it is ignored"


def key_line(text: str, key: str) -> int | None:
    """The line (1-based) where ``key`` is set (``key =`` or a ``[key]`` table), if found."""
    wanted = re.compile(
        rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=|"""
        rf"""^\s*\[+\s*(?:{re.escape(key)}|"{re.escape(key)}")\s*[\].]"""
    )
    for number, line in enumerate(text.splitlines(), start=1):
        if wanted.match(line):
            return number
    return None


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        print(f"reliora: warning: {message}", file=sys.stderr)


def _invalid(locator: str, text: str, key: str, message: str) -> RelioraError:
    return RelioraError(message, path=locator, line=key_line(text, key), code="invalid_config")
