"""Off switches for every hook of every client (SPEC.md §14.3), and which one is in force.

* ``RELIORA_AGENT=off`` in the environment: this session (the client passes its
  environment to its hooks);
* ``git config reliora.agent off``: this clone, this person (``--global``: every clone);
* ``agent = "off"`` in ``.reliora/config.toml``: everyone;
* ``push = false`` / ``capture = false`` in config.toml: only the push, or only the
  end-of-turn ask.

The environment is read first (it costs nothing), then git's configuration (one ``git
config`` call), then the store's settings. An off switch turns the hook into a no-op that
prints nothing and exits 0, like a hook without a store.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENVIRONMENT = "RELIORA_AGENT"
GIT_KEY = "reliora.agent"
#: Values that switch the hooks off (case-insensitive).
OFF = frozenset({"off", "0", "false", "no", "disabled"})


@dataclass(frozen=True)
class Switch:
    """The switch that turned something off, and how a person turns it back on."""

    what: str  # "agent" (every hook), "push" or "capture"
    by: str  # "environment", "git config" or "config.toml"
    setting: str  # what was found: RELIORA_AGENT=off, reliora.agent=off, agent = "off"
    undo: str

    def to_json(self) -> dict[str, str]:
        return {"what": self.what, "by": self.by, "setting": self.setting, "undo": self.undo}

    def line(self) -> str:
        return f"{self.what} off by {self.setting} ({self.by}); on again: {self.undo}"


def is_off(value: str | None) -> bool:
    return value is not None and value.strip().lower() in OFF


def personal_switch(top: Path | None) -> Switch | None:
    """The switch of this session or this clone that turns every hook off, or None."""
    value = os.environ.get(ENVIRONMENT)
    if is_off(value):
        return Switch("agent", "environment", f"{ENVIRONMENT}={value}", f"unset {ENVIRONMENT}")
    if top is None:
        return None
    from reliora_git.gitrepo import git
    from reliora_git.records.errors import RelioraError

    try:
        out = git.run(["config", "--get", GIT_KEY], top, check=False)
    except RelioraError:
        return None
    found = out.decode("utf-8", "replace").strip()
    if is_off(found):
        return Switch("agent", "git config", f"{GIT_KEY}={found}", f"git config --unset {GIT_KEY}")
    return None


def store_switches(agent: str, push: bool, capture: bool) -> list[Switch]:
    """What the store's settings turn off (config.toml's ``agent``, ``push``, ``capture``)."""
    undo = "edit .reliora/config.toml"
    found = []
    if is_off(agent):
        found.append(Switch("agent", "config.toml", f'agent = "{agent}"', undo))
    if not push:
        found.append(Switch("push", "config.toml", "push = false", undo))
    if not capture:
        found.append(Switch("capture", "config.toml", "capture = false", undo))
    return found


def in_force(where: Path, repo: Path | None = None) -> list[Switch]:
    """Every off switch in force at ``where``: this session's, this clone's, then the store's,
    the store found as find_store finds it (``repo``, else RELIORA_REPO, else above ``where``).
    A missing store or unreadable settings add nothing."""
    from reliora_git.records.errors import RelioraError
    from reliora_git.storage.config import load_config
    from reliora_git.storage.store import find_store

    found = [switch] if (switch := personal_switch(where)) is not None else []
    try:
        settings = load_config(find_store(repo, cwd=where))
    except RelioraError:
        return found
    return found + store_switches(settings.agent, settings.push, settings.capture)
