"""Options and error handling shared by every command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# Error reporting needs no Typer, so the fast `search` path shares it; re-exported here.
from reliora_git.commands.reporting import fail, reporting

__all__ = ["JsonFlag", "RepoOption", "fail", "reporting"]

RepoOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="Folder holding .reliora/ (default: the nearest one above; env RELIORA_REPO).",
        show_default=False,
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of text.")]
