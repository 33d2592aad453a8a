"""``serve``: a local, read-only web view of the store, for people (interfaces/web/)."""

from __future__ import annotations

import importlib.util
from typing import Annotated

import typer

from reliora_git.interfaces.commands.common import RepoOption, reporting
from reliora_git.records.errors import RelioraError


#: reliora-git is installed from a clone or a wheel (README), not by a package index name.
def install_hint() -> str:
    """How to install the web extra, keeping every extra installed already."""
    from reliora_git.extras import install_command

    return (
        "install reliora again from your clone of reliora-git with the web extra "
        f"({install_command('web')})"
    )


#: What the web view needs beyond the core (the `web` extra).
WEB_MODULES = ("starlette", "uvicorn", "jinja2", "markdown_it")


def missing_modules() -> list[str]:
    """The modules of the `web` extra that are not installed (found without importing them)."""
    missing = []
    for name in WEB_MODULES:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            missing.append(name)
    return missing


def serve(
    port: Annotated[
        int,
        typer.Option("--port", "-p", min=1, max=65535, help="Port on 127.0.0.1 (default 8765)."),
    ] = 8765,
    repo: RepoOption = None,
) -> None:
    """Serve a read-only web view of the lessons on 127.0.0.1.

    Pages: the lessons (search with every score explained; retired, stale and
    guarded ones marked), one lesson, "try a prompt" (exactly what each agent
    client's hook would push, as `reliora brief --push` prints it), guards,
    recent agent sessions (`reliora agent log`), the cold-start list
    (`reliora history`) and stale lessons. Bound to 127.0.0.1 only; anything
    but GET is refused and no page changes the store. Ctrl-C stops it. Needs
    the optional `web` extra. See docs/serve.md.

    \b
    Example:
      reliora serve --port 8765
    """
    with reporting():
        missing = missing_modules()
        if missing:
            raise RelioraError(
                f"`reliora serve` needs {', '.join(missing)}, not installed: {install_hint()}",
                code="missing_dependency",
            )
        from reliora_git.interfaces.web.app import serve as run
        from reliora_git.operations.agents.hook import git_places
        from reliora_git.storage.store import find_store

        store = find_store(repo)
        state = git_places(store.root).state

        def ready(url: str) -> None:
            print(f"Serving {store.path} at {url} (read-only; Ctrl-C stops)", flush=True)

        try:
            run(store, state, port, ready)
        except OSError as error:
            raise RelioraError(f"cannot listen on 127.0.0.1:{port}: {error.strerror}",
                               code="usage") from None  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command()(serve)
