"""The store template shipped with the package, and ``reliora init``."""

from __future__ import annotations

import shutil
from pathlib import Path

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.storage.store import STORE_DIR, Store, read_regular_file, replace_file

#: Template file → name in a new store; the record template stays in the package (--edit).
#: (``gitignore`` has no dot in the package so that every packaging tool ships it.)
STORE_FILES = {
    "README.md": "README.md",
    "config.toml": "config.toml",
    "eval.toml": "eval.toml",
    "gitignore": ".gitignore",
}
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


def init_store(root: Path, updated: list[str] | None = None) -> tuple[Store, list[str]]:
    """Create (or complete) ``root/.reliora``; returns the store and the paths it created.

    An existing store's ``.gitignore`` gets the template's lines it lacks (a newer
    version ignores more, such as lock files); what was done is added to ``updated``.
    """
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
        if not target.exists() and not target.is_symlink():
            shutil.copyfile(source / name, target)
            created.append(store.locator(target))
    note = complete_gitignore(store, (source / "gitignore").read_text(encoding="utf-8"))
    if note is not None and updated is not None:
        updated.append(note)
    for folder in (store.experiences, store.feedback):
        keep = folder / ".gitkeep"
        if not any(folder.iterdir()):
            keep.touch()
    return store, created


def complete_gitignore(store: Store, template: str) -> str | None:
    """Add to the store's ``.gitignore`` the template's patterns it lacks; what was done.

    The user's own lines stay as they are; the missing patterns are appended (with
    the template's comment). A ``.gitignore`` that is not a regular file (a link a pull
    request committed, say) is not written through: the note says what to add.
    """
    path = store.path / ".gitignore"
    patterns = [line for line in template.splitlines() if line.strip() and not line.startswith("#")]
    try:
        original = read_regular_file(path, store.locator(path))
    except RecordError as exc:
        if not path.exists() and not path.is_symlink():
            return None
        return f"{store.locator(path)} {exc.message}: not changed; add {' '.join(patterns)}"
    try:
        text = original.decode("utf-8")
    except UnicodeDecodeError:
        return f"{store.locator(path)} is not UTF-8: not changed; add {' '.join(patterns)}"
    present = {line.strip() for line in text.splitlines()}
    missing = [pattern for pattern in patterns if pattern not in present]
    if not missing:
        return None
    if text and not text.endswith("\n"):
        text += "\n"
    text += "# Added by `reliora init`: files reliora writes while it works.\n"
    text += "".join(f"{pattern}\n" for pattern in missing)
    replace_file(path, original, text, store)
    return f"{store.locator(path)}: added {', '.join(missing)}"
