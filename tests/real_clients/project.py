"""The project every real-client test runs in: a committed repository with a store, two lessons
(one the invoice prompt needs, one about `src/billing.py`) and a client's project files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import Cli, git


@dataclass(frozen=True)
class Lesson:
    id: str
    marker: str  # a word only its solution holds: once per full copy of the lesson


def record(cli: Cli, fields: dict[str, Any], marker: str) -> Lesson:
    done = cli("record", "--json", "-", input=json.dumps(fields))
    assert done.returncode == 0, done.stderr
    return Lesson(json.loads(done.stdout)["id"], marker)


@dataclass(frozen=True)
class Project:
    root: Path
    invoice: Lesson  # matches the invoice prompt
    billing: Lesson  # about src/billing.py


def make_project(repo: Path, cli: Cli, clients: tuple[str, ...]) -> Project:
    """A committed repository with a store, two lessons and the project files of ``clients``."""
    (repo / "src").mkdir()
    (repo / "src" / "billing.py").write_text(
        "def total(items):\n    return sum(item.price for item in items)\n", encoding="utf-8"
    )
    git(repo, "add", "src/billing.py")
    git(repo, "commit", "-q", "-m", "billing")
    assert cli("init").returncode == 0
    invoice = record(
        cli,
        {
            "title": "Invoice totals drift by a cent when rounded per line",
            "task": "Fix the rounding of invoice totals",
            "problems": ["Invoice totals were off by a cent against the ledger"],
            "solution": "Round invoice totals once, at the end, with Decimal and "
            "ROUND_HALF_EVEN (ZEBRAFISH-7).",
        },
        "ZEBRAFISH-7",
    )
    billing = record(
        cli,
        {
            "title": "Billing amounts are integer cents",
            "task": "Change how the billing module adds up prices",
            "solution": "Keep every amount in the billing module in integer cents; "
            "never a float (OCELOT-3).",
            "paths": ["src/billing.py"],
        },
        "OCELOT-3",
    )
    if clients:  # none: a personal install is made by the test, with its own HOME
        install = cli("agent", "install", *clients)
        assert install.returncode == 0, install.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store and agent files")
    return Project(repo, invoice, billing)
