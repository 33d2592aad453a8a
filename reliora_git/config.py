"""``.reliora/config.toml``: optional settings (SPEC.md §8)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from reliora_git.errors import RelioraError
from reliora_git.store import Store

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


@dataclass(frozen=True)
class Config:
    search_limit: int = 10
    block_on_invalid: bool = True
    hook_duplicates: bool = True


def load_config(store: Store) -> Config:
    path = store.path / "config.toml"
    if not path.is_file():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise RelioraError(
            f"cannot read settings: {exc}", path=store.locator(path), code="invalid_config"
        ) from None
    defaults = Config()
    values = {}
    for key, default in vars(defaults).items():
        value = data.get(key, default)
        if type(value) is not type(default) or (key == "search_limit" and value < 1):
            raise RelioraError(
                f"'{key}' must be a {type(default).__name__}",
                path=store.locator(path),
                code="invalid_config",
            )
        values[key] = value
    return Config(**values)
