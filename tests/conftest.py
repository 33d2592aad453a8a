"""Shared fixtures: real git repositories in temporary folders, and the installed `reliora`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reliora_git.storage.store import Store
from reliora_git.storage.template import init_store

#: A sample of the real-world til corpus that ships with the repository (332 of its 1,871
#: records, MIT: tests/data/til/README.md). Tests read a copy (``til_corpus``), never this.
TIL_CORPUS = Path(__file__).resolve().parent / "data" / "til"
#: Store-file mtime of the copy: old enough to be cached (reliora_git.storage.cache.RACY_NS),
#: as the files of a corpus that nobody edits are.
OLD_MTIME = 1_700_000_000


def copy_til_corpus(target: Path) -> Path:
    """Copy the sample to ``target`` (outside any git repository), read-only and old.

    Outside git, as the full corpus next to the checkout was: a store inside this
    clone would put its search cache into this clone's ``.git``.
    """
    shutil.copytree(TIL_CORPUS, target)
    paths = sorted(target.rglob("*"), key=lambda path: len(path.parts), reverse=True)
    for path in [*paths, target]:
        os.utime(path, (OLD_MTIME, OLD_MTIME))
        path.chmod(0o555 if path.is_dir() else 0o444)
    return target


def reliora_executable() -> str:
    """The installed console script next to this interpreter (falls back to PATH)."""
    candidate = Path(sys.executable).with_name("reliora")
    found = str(candidate) if candidate.exists() else shutil.which("reliora")
    if found is None:
        pytest.fail("the `reliora` executable is not installed; run `pip install -e '.[test]'`")
    return found


@pytest.fixture(autouse=True)
def _isolated_git(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Keep the user's git config, store settings and search cache out of every test."""
    home = tmp_path_factory.mktemp("home")
    # The cache goes to the user cache folder (under HOME) for stores outside git, such
    # as the read-only til corpus; never let a test write next to the shared corpus.
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("RELIORA_CACHE_DIR", raising=False)
    monkeypatch.delenv("RELIORA_NO_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")
    monkeypatch.delenv("RELIORA_REPO", raising=False)
    monkeypatch.delenv("GIT_INDEX_FILE", raising=False)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


@pytest.fixture(scope="session")
def empty_repo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real ``git init`` per session (per xdist worker), copied by ``repo``.

    A copy costs a millisecond where four git processes cost ten: most tests take a repo.
    """
    path = tmp_path_factory.mktemp("repo-template") / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main", "--template=")
    git(path, "config", "user.name", "Test Author")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "commit.gpgsign", "false")
    return path


@pytest.fixture
def repo(tmp_path: Path, empty_repo_template: Path) -> Path:
    """An empty git repository (no commits) with a user configured."""
    path = tmp_path / "repo"
    shutil.copytree(empty_repo_template, path, symlinks=True)
    return path


@pytest.fixture
def store(repo: Path) -> Store:
    """A fresh `.reliora/` store at the top of ``repo``."""
    created, _ = init_store(repo)
    return created


class Cli:
    """Runs the installed `reliora` executable in a subprocess, as a user would."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.exe = reliora_executable()

    def __call__(
        self,
        *args: str,
        input: str | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.exe, *args],
            cwd=cwd or self.cwd,
            input=input,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **(env or {})},
            timeout=120,
        )

    def json(self, *args: str, input: str | None = None) -> Any:
        flags = () if "--json" in args else ("--json",)
        done = self(*args, *flags, input=input)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture
def cli(repo: Path) -> Cli:
    return Cli(repo)


RecordMaker = Callable[..., Path]


@pytest.fixture
def write_record(store: Store) -> RecordMaker:
    """Write a record file by hand (not through the tool) and return its path."""

    def make(record_id: str, title: str, body: str = "", **meta: Any) -> Path:
        lines = [f"id: {record_id}", f"title: {json.dumps(title)}"]
        lines += [f"{key}: {json.dumps(value)}" for key, value in meta.items()]
        text = (
            "---\n"
            + "\n".join(lines)
            + "\n---\n"
            + (body or "## Problems\n- something broke\n\n## Solution\nfix it\n")
        )
        path = store.experiences / f"{record_id}.md"
        path.write_text(text, encoding="utf-8")
        return path

    return make


@pytest.fixture(scope="session")
def til_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A read-only copy of the til sample, shared by the session's tests (they only read it)."""
    return copy_til_corpus(tmp_path_factory.mktemp("til-sample") / "til")


# --- PostgreSQL (SPEC.md §13) -------------------------------------------------------------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A real PostgreSQL server on a Unix socket, for the session; skipped when none exists.

    ``RELIORA_REQUIRE_POSTGRES=1`` (set by .ci/run) turns the skip into a failure.
    """
    from tests.pgserver import INSTALL_HINT, PgServer

    required = os.environ.get("RELIORA_REQUIRE_POSTGRES", "") not in ("", "0")
    missing = None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing = "psycopg is not installed: pip install -e '.[org]'"
    try:
        server = PgServer() if missing is None else None
    except FileNotFoundError:
        missing = f"no PostgreSQL server found: {INSTALL_HINT}"
        server = None
    if server is None:
        if required:
            pytest.fail(f"{missing} (RELIORA_REQUIRE_POSTGRES is set)")
        pytest.skip(str(missing))
    server.start()
    try:
        yield server
    finally:
        server.stop()


_databases = iter(range(1, 1_000_000))


@pytest.fixture
def org_db(pg_server: Any) -> str:
    """The URL of a new, empty database on the test server."""
    import psycopg

    name = f"reliora_test_{next(_databases)}"
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # a name made here, never from input
    url: str = pg_server.url(name)
    return url
