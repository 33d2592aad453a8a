"""Documentation that is checked: every command shows an example and has a section in docs/;
the docs stand alone and say what is (users have the docs, the help and the template, not the
team's specification or its history)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from reliora_git.interfaces.cli import app
from reliora_git.storage.config import Config
from tests.conftest import Cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parents[1]


def all_commands() -> list[str]:
    found = []
    for name, command in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        found += [f"{name} {sub}" for sub in subcommands] if subcommands else [name]
    return sorted(found)


@pytest.mark.parametrize("name", all_commands())
def test_every_command_has_an_example_and_a_documented_section(name: str, tmp_path: Path) -> None:
    done = Cli(tmp_path)(*name.split(), "--help")
    assert done.returncode == 0, done.stderr
    assert "Example" in done.stdout, f"`reliora {name} --help` shows no example"
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    top = name.split()[0]
    assert f"## reliora {top}" in docs, f"no '## reliora {top}' section in docs/"


# --- the docs stand alone ------------------------------------------------------------------

PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
#: A citation of the specification, which is not shipped: "SPEC.md §4", "SPEC §5", "(§6.1)".
CITES_SPEC = re.compile(r"\bSPEC(?:\.md)?\b|§\s*\d")


def _help_texts() -> Iterator[tuple[str, str]]:
    """(command path, its --help text) for every command and group of the CLI."""

    def walk(command: Any, parent: Any, name: str) -> Iterator[tuple[str, str]]:
        # Typer's own click: its Context and Group classes, reached through the command.
        context = command.context_class(command, info_name=name, parent=parent)
        yield context.command_path, command.get_help(context)
        for sub in getattr(command, "list_commands", lambda _: [])(context):
            yield from walk(command.get_command(context, sub), context, sub)

    yield from walk(typer.main.get_command(app), None, "reliora")


#: What users get besides the pages: the store template, the hook scripts, the Action and the
#: pre-commit framework's manifest.
SHIPPED = [
    *sorted((ROOT / ".reliora-template").iterdir()),
    *sorted((ROOT / "hooks").iterdir()),
    ROOT / "action.yml",
    ROOT / ".pre-commit-hooks.yaml",
]


def test_no_page_cites_the_specification() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in PAGES + SHIPPED
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if CITES_SPEC.search(line)
    ]
    assert found == []


def test_no_help_text_cites_the_specification() -> None:
    texts = dict(_help_texts())
    assert {"reliora", "reliora guard", "reliora org search", "reliora brief"} <= set(texts)
    assert [path for path, text in texts.items() if CITES_SPEC.search(text)] == []


def test_no_mcp_text_cites_the_specification(tmp_path: Path) -> None:
    """What an agent reads: the server's instructions, each tool's description and schema."""
    from reliora_git.interfaces.mcp_server import build_server  # the `mcp` extra (test extra)

    server = build_server(tmp_path)
    tools = asyncio.run(server.list_tools())
    assert {"show", "brief", "record"} <= {tool.name for tool in tools}
    shown = [server.instructions or ""] + [
        json.dumps(tool.model_dump(mode="json"), ensure_ascii=False) for tool in tools
    ]
    assert [text[:80] for text in shown if CITES_SPEC.search(text)] == []


# --- the file paths the docs name ----------------------------------------------------------

#: A path the docs name in backquotes, of the repository or of the installed package.
NAMED_PATH = re.compile(r"`((?:reliora_git|\.reliora-template|hooks|bench|tests)/[\w./-]*)`")
#: A module path given relative to the package, as architecture.md names them.
PACKAGE_PATH = re.compile(
    r"`((?:records|search|gitrepo|storage|operations|org|interfaces|commands)/[\w/]+\.py)`"
)


def _package_layout() -> tuple[set[str], dict[str, str], dict[str, list[str]]]:
    """pyproject.toml's packages, package-dir (package → folder) and package-data."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]
    return (
        set(setuptools["packages"]),
        dict(setuptools.get("package-dir", {})),
        dict(setuptools.get("package-data", {})),
    )


def _in_wheel(path: str) -> bool:
    """Whether ``path`` (as installed: ``reliora_git/…``) is in the wheel that pyproject.toml
    builds: a module of a listed package, or a package-data file of a mapped folder."""
    packages, folders, data = _package_layout()
    parts = path.rstrip("/").split("/")
    for cut in range(len(parts), 0, -1):
        package = ".".join(parts[:cut])
        if package not in packages:
            continue
        folder = ROOT / folders.get(package, "/".join(parts[:cut]))
        rest = "/".join(parts[cut:])
        target = folder / rest if rest else folder
        if not target.exists():
            return False
        if not rest or target.is_dir() or target.suffix == ".py":
            return True
        patterns = data.get(package, [])
        return any(Path(rest).match(pattern) for pattern in patterns)
    return False


def test_every_path_the_docs_name_exists() -> None:
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for path in NAMED_PATH.findall(text):
            exists = _in_wheel(path) if path.startswith("reliora_git/") else (ROOT / path).exists()
            if not exists:
                missing.append(f"{page.name}: {path}")
        for path in PACKAGE_PATH.findall(text):
            module = path.replace("commands/", "interfaces/commands/", 1)
            if path.startswith("interfaces/commands/"):
                module = path
            if not (ROOT / "reliora_git" / module).exists():
                missing.append(f"{page.name}: {path}")
    assert missing == []


def test_the_wheel_layout_check_sees_a_wrong_template_path() -> None:
    """The check above is only as good as this: the path git.md once named is not shipped."""
    assert _in_wheel("reliora_git/template/config.toml")
    assert _in_wheel("reliora_git/hook_scripts/pre-commit")
    assert not _in_wheel("reliora_git/storage/template/")
    assert not _in_wheel("reliora_git/template/nothing.toml")


# --- the config template -------------------------------------------------------------------


def _toml(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)


def test_the_config_template_names_every_key_with_its_default() -> None:
    text = (ROOT / ".reliora-template" / "config.toml").read_text(encoding="utf-8")
    assert tomllib.loads(text) == {}  # every key commented out: the defaults hold
    lines = text.splitlines()
    for key in dataclasses.fields(Config):
        default = getattr(Config(), key.name)
        line = f"# {key.name} = {_toml(default)}"
        assert line in lines, f"config.toml template lacks {line!r}"
        above = lines[lines.index(line) - 1]
        assert above.startswith("# ") and len(above) > 10, f"{key.name}: no line saying what"
    # Uncommented, the template is valid and gives exactly the defaults.
    uncommented = "\n".join(line.removeprefix("# ") for line in lines if " = " in line)
    assert tomllib.loads(uncommented) == dataclasses.asdict(Config())


# --- pages for users, not the builders' history --------------------------------------------

HISTORY = re.compile(
    r"\bissue \d+|\bthis session\b|\ban earlier session\b|\bround \d+|\bhelpers?\b|\bthe lead\b"
    r"|\bbefore this (?:table|commit|change)",
    re.IGNORECASE,
)


def test_architecture_and_benchmarks_say_what_is() -> None:
    found = [
        f"{name}:{number}: {line.strip()}"
        for name in ("architecture.md", "benchmarks.md")
        for number, line in enumerate(
            (ROOT / "docs" / name).read_text(encoding="utf-8").splitlines(), 1
        )
        if HISTORY.search(line)
    ]
    assert found == []
