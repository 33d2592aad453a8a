"""The search cache never changes a result: every cached run equals a cold, cache-free one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from reliora_git.interfaces.commands import searching
from reliora_git.operations.lessons import reads as api
from reliora_git.storage import cache, indexfile, load
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

QUERIES = (
    ("flaky timeouts",),
    ("cache invalidation rules", "--project-context", "python"),
    ("timeouts", "--include-retired", "--limit", "50"),
)
#: An mtime well outside the racy window, so that files written by a test are cached.
OLD = 1_700_000_000_000_000_000


def age(*paths: Path, mtime_ns: int = OLD) -> None:
    for path in paths:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def all_files(store: Store) -> list[Path]:
    return [p for p in store.path.rglob("*.md") if p.is_file()]


class Searcher:
    """Runs `reliora search … --json` in this process (the CLI's fast path), as text."""

    def __init__(
        self, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.repo, self.capsys, self.monkeypatch = repo, capsys, monkeypatch

    def __call__(self, *args: str, cached: bool = True) -> tuple[int | None, str, str]:
        with self.monkeypatch.context() as patch:
            if not cached:
                patch.setenv("RELIORA_NO_CACHE", "1")
            self.capsys.readouterr()
            code = searching.fast_main(["search", *args, "--json", "--repo", str(self.repo)])
            out, err = self.capsys.readouterr()
        assert code is not None
        return code, out, err

    def assert_same_as_cold(self) -> None:
        """Each query gives the same stdout, stderr and exit code with and without the cache."""
        for args in QUERIES:
            warm = self(*args)
            assert warm == self(*args), args  # a second cached run, too
            assert warm == self(*args, cached=False), args


@pytest.fixture
def search(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Searcher:
    return Searcher(repo, capsys, monkeypatch)


def body(problem: str, solution: str = "raise the timeout for git fixtures") -> str:
    return f"## Problems\n- {problem}\n\n## Solution\n{solution}\n"


@pytest.fixture
def populated(store: Store, write_record: RecordMaker) -> Store:
    write_record("flaky-a", "Flaky pytest timeouts", body("timeouts on ci"), tags=["pytest"])
    write_record(
        "cache-b",
        "Cache invalidation rules",
        body("stale cache after edits", "key by size and mtime"),
        project_context="python cli",
    )
    write_record("old-c", "Old timeouts advice", body("timeouts everywhere"), status="retired")
    events = store.feedback / "flaky-a"
    events.mkdir(parents=True)
    (events / "20261202T120000Z-aaaaaa.md").write_text(
        "---\nrecord: flaky-a\noutcome: success\nat: '2026-12-02T12:00:00Z'\n---\n"
    )
    age(*all_files(store))
    return store


def cache_files(repo: Path) -> list[Path]:
    return list((repo / ".git" / "reliora-cache").glob("*.index"))


def test_cache_is_written_under_the_git_dir_and_then_used(
    populated: Store, cli: Cli, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for args in QUERIES:  # the installed executable, as a user runs it
        warm = cli("search", *args, "--json")
        cold = cli("search", *args, "--json", env={"RELIORA_NO_CACHE": "1"})
        assert (warm.returncode, warm.stdout, warm.stderr) == (
            cold.returncode,
            cold.stdout,
            cold.stderr,
        )
    assert len(cache_files(repo)) == 1
    assert not any(
        p.name.endswith((".cache", ".index", ".seg"))
        for p in repo.rglob("*")
        if ".git" not in p.parts
    )

    reads: list[str] = []
    real = load.read_text
    monkeypatch.setattr(load, "read_text", lambda entry: reads.append(entry.locator) or real(entry))
    assert [h.doc.id for h in api.search(populated, "timeouts").hits] == ["flaky-a"]
    assert reads == []  # every file came from the cache


def test_edits_adds_deletes_and_renames_between_queries(
    populated: Store, search: Searcher, write_record: RecordMaker
) -> None:
    assert_same_as_cold = search.assert_same_as_cold
    assert_same_as_cold()
    experiences = populated.experiences

    # An edit that changes the size.
    path = experiences / "flaky-a.md"
    path.write_text(path.read_text().replace("timeouts on ci", "timeouts on shared ci runners"))
    age(path, mtime_ns=OLD + 1)
    assert_same_as_cold()

    # An edit that keeps the size: only the mtime tells.
    text = path.read_text()
    path.write_text(text.replace("Flaky pytest", "Flaky gotest"))
    assert len(path.read_text()) == len(text)
    age(path, mtime_ns=OLD + 2_000_000_000)
    assert_same_as_cold()
    assert "flaky-a" in search("gotest")[1]

    # Added, deleted, renamed (a rename keeps the mtime; the locator changes).
    write_record("new-d", "Cache timeouts", body("cache timeouts on ci"))
    age(experiences / "new-d.md")
    assert_same_as_cold()
    (experiences / "old-c.md").unlink()
    assert_same_as_cold()
    (experiences / "sub").mkdir()
    (experiences / "cache-b.md").rename(experiences / "sub" / "cache-b.md")
    assert_same_as_cold()

    # A record that becomes invalid, and one that clashes with an existing id.
    (experiences / "new-d.md").write_text("---\nid: [broken\n---\n")
    age(experiences / "new-d.md", mtime_ns=OLD + 3)
    shutil.copy2(experiences / "flaky-a.md", experiences / "zz-copy.md")
    assert_same_as_cold()
    assert "already used" in search("timeouts")[2]

    # Feedback events added and removed count at once.
    events = populated.feedback / "flaky-a"
    (events / "20261202T130000Z-bbbbbb.md").write_text(
        "---\nrecord: flaky-a\noutcome: failure\nat: '2026-12-02T13:00:00Z'\n---\n"
    )
    age(events / "20261202T130000Z-bbbbbb.md")
    assert_same_as_cold()
    (events / "20261202T120000Z-aaaaaa.md").unlink()
    assert_same_as_cold()


def test_same_size_rewrite_within_one_mtime_tick(populated: Store, search: Searcher) -> None:
    """The racy case: a rewrite that keeps size *and* mtime_ns (a second write in one tick)."""
    path = populated.experiences / "flaky-a.md"
    text = path.read_text()
    path.write_text(text.replace("Flaky pytest", "Flaky gotest"))
    tick = path.stat().st_mtime_ns  # now: younger than cache.RACY_NS
    search.assert_same_as_cold()
    assert "flaky-a" in search("gotest")[1]
    path.write_text(text.replace("Flaky pytest", "Flaky jstest"))
    os.utime(path, ns=(tick, tick))
    assert path.stat().st_mtime_ns == tick
    assert path.stat().st_size == len(text)
    search.assert_same_as_cold()
    assert "flaky-a" in search("jstest")[1]
    assert "flaky-a" not in search("gotest")[1]


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"garbage",
        lambda data: b"",
        lambda data: data[: len(data) // 2],
        lambda data: data[:-1] + bytes([data[-1] ^ 0xFF]),
        lambda data: cache.MAGIC + b"\0\0\0\0" + b"\xff" * 64,
    ],
    ids=["garbage", "empty", "truncated", "flipped-byte", "bad-marshal"],
)
def test_a_corrupted_cache_is_ignored_and_rebuilt(
    populated: Store, search: Searcher, repo: Path, damage: object
) -> None:
    search.assert_same_as_cold()
    (cache_path,) = cache_files(repo)
    assert callable(damage)
    cache_path.write_bytes(damage(cache_path.read_bytes()))
    search.assert_same_as_cold()
    assert indexfile.read_state(cache_path, repo.resolve())  # rebuilt: loads again


def test_a_cache_of_another_code_version_is_ignored(
    populated: Store, search: Searcher, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    search.assert_same_as_cold()
    (cache_path,) = cache_files(repo)
    assert indexfile.read_state(cache_path, repo.resolve())
    monkeypatch.setattr(cache, "CACHE_FORMAT", cache.CACHE_FORMAT + 1)
    assert indexfile.read_state(cache_path, repo.resolve()) is None


def test_cache_off_and_outside_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    found = cache.cache_file(root)
    assert found is not None and found.parent == tmp_path / "xdg" / "reliora"
    monkeypatch.setenv("RELIORA_NO_CACHE", "1")
    assert cache.cache_file(root) is None


def test_worktrees_share_the_common_git_dir(repo: Path, store: Store, tmp_path: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", str(other))
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=other,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert cache.git_common_dir(other / ".reliora") == Path(common).resolve()
    main_file, other_file = cache.cache_file(repo), cache.cache_file(other)
    assert main_file is not None and other_file is not None
    assert main_file.parent == other_file.parent == Path(common).resolve() / "reliora-cache"
    assert main_file != other_file  # one file per work tree: same locators, other files


def test_a_cache_that_cannot_be_written_only_costs_speed(
    populated: Store, search: Searcher, repo: Path
) -> None:
    # A file where the cache folder should be: every write fails (chmod would not stop root).
    (repo / ".git" / "reliora-cache").write_text("not a folder")
    search.assert_same_as_cold()
    assert (repo / ".git" / "reliora-cache").read_text() == "not a folder"


def _imported_modules(path: Path, package_root: Path) -> set[Path]:
    """The package's modules that ``path`` imports anywhere in its code (functions included),
    leaving out what it imports only for type checking."""
    import ast

    found: set[Path] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reliora_git."):
            parts = node.module.split(".")[1:] if node.module else []
            for alias in node.names:
                as_module = package_root.joinpath(*parts, alias.name).with_suffix(".py")
                found.add(
                    as_module
                    if as_module.exists()
                    else package_root.joinpath(*parts).with_suffix(".py")
                )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {module for module in found if module.exists()}


def test_every_module_the_cached_values_depend_on_is_in_the_code_stamp() -> None:
    """A cached value is what storage/values.py and storage/index.py make of a file: every
    module they reach must be one whose change resets the cache (cache.CODE_PACKAGES)."""
    package_root = Path(cache.__file__).resolve().parents[1]
    start = [package_root / "storage" / name for name in ("values.py", "index.py")]
    seen: set[Path] = set()
    while start:
        module = start.pop()
        if module not in seen:
            seen.add(module)
            start.extend(_imported_modules(module, package_root))
    packages = {module.relative_to(package_root).parts[0] for module in seen}
    assert len(seen) > 15  # the walk follows imports (records/parse.py, search/rank.py, …)
    assert packages <= set(cache.CODE_PACKAGES), sorted(packages - set(cache.CODE_PACKAGES))


def test_a_change_to_any_module_of_those_packages_changes_the_stamp(tmp_path: Path) -> None:
    before = cache.code_stamp(tmp_path)
    stamped = {entry[:2] for entry in before if isinstance(entry, tuple)}
    package_root = Path(cache.__file__).resolve().parents[1]
    for package in cache.CODE_PACKAGES:
        for module in (package_root / package).glob("*.py"):
            assert (package, module.name) in stamped
