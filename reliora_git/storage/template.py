"""The store template shipped with the package, and ``reliora init``."""

from __future__ import annotations

import shutil
from pathlib import Path

from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import STORE_DIR, Store

#: Template file → name in a new store; the record template stays in the package (--edit).
#: (``gitignore`` has no dot in the package so that every packaging tool ships it.)
STORE_FILES = {"README.md": "README.md", "config.toml": "config.toml", "gitignore": ".gitignore"}
RECORD_TEMPLATE = "experience.md"


def template_dir() -> Path:
    """The template folder: inside an installed wheel, or at the top of a source checkout."""
    here = Path(__file__).resolve().parents[1]  # the package's folder
    for candidate in (here / "template", here.parent / ".reliora-template"):
        if (candidate / RECORD_TEMPLATE).is_file():
            return candidate
    raise RelioraError(
        "the .reliora template is missing from this installation", code="broken_install"
    )


def record_template() -> str:
    return (template_dir() / RECORD_TEMPLATE).read_text(encoding="utf-8")


def init_store(root: Path) -> tuple[Store, list[str]]:
    """Create (or complete) ``root/.reliora``; returns the store and the paths it created."""
    store = Store(root)
    if store.path.exists() and not store.path.is_dir():
        raise RelioraError(f"{STORE_DIR} exists and is not a folder", path=str(store.path))
    created = []
    source = template_dir()
    for folder in (store.path, store.experiences, store.feedback):
        if not folder.is_dir():
            folder.mkdir(parents=True)
            created.append(store.locator(folder) + "/")
    for name, target_name in STORE_FILES.items():
        target = store.path / target_name
        if not target.exists():
            shutil.copyfile(source / name, target)
            created.append(store.locator(target))
    for folder in (store.experiences, store.feedback):
        keep = folder / ".gitkeep"
        if not any(folder.iterdir()):
            keep.touch()
    return store, created
