"""Organisation-wide search on a real PostgreSQL server (SPEC.md §13).

Every test here syncs real git repositories (clones and bare mirrors) into a
database of a server started by the ``pg_server`` fixture, and runs the
installed ``reliora`` executable; the local and database rankings are compared
document by document.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

pytestmark = pytest.mark.usefixtures("pg_server")

PROBLEMS = "## Problems\n- {problem}\n\n## Solution\n{solution}\n\n## Applicability\n{where}\n"


def commit_all(repo: Path, message: str = "records") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def org(
    cli: Cli, url: str, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return cli("org", *args, cwd=cwd, env={"RELIORA_DB_URL": url})


def org_json(cli: Cli, url: str, *args: str) -> Any:
    done = org(cli, url, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def local_document(cli: Cli, *args: str) -> dict[str, Any]:
    done = cli("search", *args, "--json")
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def without_place(document: dict[str, Any]) -> dict[str, Any]:
    """The document without what only org search has (repo, commit) or only local has."""
    for result in document["results"]:
        result.pop("repo", None)
        result.pop("commit", None)
        result.pop("freshness", None)
    return document


@pytest.fixture
def varied(store: Store, write_record: RecordMaker, repo: Path) -> Path:
    """A store with what ranking depends on: feedback, retired, superseded, clashes, bad files."""
    write_record(
        "pytest-timeouts",
        "Flaky pytest timeouts in CI",
        PROBLEMS.format(
            problem="pytest-timeout killed slow tests",
            solution="Raise the timeout for slow tests",
            where="python services",
        ),
        tags=["pytest", "ci"],
        project_context="python monorepo",
    )
    write_record(
        "timeout-config",
        "Configuring timeouts for the test runner",
        PROBLEMS.format(
            problem="timeouts configuration was ignored",
            solution="Set timeout in pytest.ini; flaky tests get a marker",
            where="pytest 7 and later",
        ),
        tags=["configuration"],
    )
    write_record(
        "old-timeouts",
        "Old advice on pytest timeouts",
        PROBLEMS.format(problem="slow tests", solution="disable the timeout", where="never"),
        tags=["pytest"],
        status="retired",
    )
    write_record(
        "new-timeouts",
        "Current advice on flaky pytest timeouts",
        PROBLEMS.format(problem="slow tests", solution="mark slow tests", where="python"),
        tags=["pytest"],
        supersedes=["pytest-timeouts-old"],
    )
    write_record(
        "pytest-timeouts-old",
        "Earlier advice on pytest timeouts",
        PROBLEMS.format(problem="slow tests", solution="retry them", where="python"),
        tags=["pytest"],
    )
    write_record("docker-cache", "Docker layer cache misses", tags=["docker"])
    # A second file claiming an id: the file named after the id keeps it.
    clash = store.experiences / "aaa-clash.md"
    clash.write_text(
        "---\nid: docker-cache\ntitle: Impostor docker cache\n---\n"
        "## Problems\n- x\n\n## Solution\ny\n",
        encoding="utf-8",
    )
    (store.experiences / "broken.md").write_text("---\nid: [unclosed\n---\n", encoding="utf-8")
    cli = Cli(repo)
    for outcome in ("success", "success", "partial"):
        assert cli("feedback", "pytest-timeouts", outcome).returncode == 0
    assert cli("feedback", "timeout-config", "failure").returncode == 0
    commit_all(repo)
    return repo


QUERIES: list[tuple[str, ...]] = [
    ("pytest timeouts",),
    ("flaky pytest timeouts",),
    ("timeout",),
    ("configuration",),
    ("pytest timeouts", "--include-retired"),
    ("pytest", "--project-context", "python"),
    ("pytest", "--min-level", "strong"),
    ("docker cache",),
    ("tiemouts",),
    ("slow tests", "--limit", "2"),
    ("nothing-like-this-anywhere",),
]


def test_org_search_gives_the_local_document(varied: Path, cli: Cli, org_db: str) -> None:
    # One store synced once, every query asked of it (a store and a sync per query
    # cost the suite seconds and tested nothing more).
    synced = org_json(cli, org_db, "sync", str(varied))
    assert synced["errors"] == []
    commit = git(varied, "rev-parse", "HEAD").strip()
    for query in QUERIES:
        local = local_document(cli, *query)
        remote = org_json(cli, org_db, "search", *query)
        assert all(r["repo"] == "repo" and r["commit"] == commit for r in remote["results"])
        assert without_place(remote) == without_place(local), query


def test_sync_reports_what_it_left_out_and_status_counts(
    varied: Path, cli: Cli, org_db: str
) -> None:
    done = org(cli, org_db, "sync", f"team-a={varied}")
    assert done.returncode == 0, done.stderr
    assert "team-a at" in done.stdout and "2 skipped" in done.stdout
    warnings = done.stderr.splitlines()
    assert any("broken.md" in line for line in warnings)
    assert any("aaa-clash.md" in line and "already used" in line for line in warnings)
    assert "Traceback" not in done.stderr
    status = org_json(cli, org_db, "status")["repos"]
    assert [(s["repo"], s["records"], s["feedbackEvents"], s["skipped"]) for s in status] == [
        ("team-a", 6, 4, 2)
    ]
    assert status[0]["commit"] == git(varied, "rev-parse", "HEAD").strip()


def test_resync_applies_additions_changes_removals_and_skips_unchanged_blobs(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli, org_db: str
) -> None:
    for n in range(5):
        write_record(f"note-{n}", f"Note number {n} about caching", tags=["cache"])
    commit_all(repo)
    first = org_json(cli, org_db, "sync", str(repo))["repos"][0]
    assert (first["added"], first["changed"], first["removed"]) == (5, 0, 0)
    again = org_json(cli, org_db, "sync", str(repo))["repos"][0]
    assert again["upToDate"] is True

    (store.experiences / "note-0.md").unlink()
    write_record("note-1", "Note number 1 about eviction now", tags=["cache"])
    write_record("note-9", "A new note about sharding", tags=["db"])
    assert cli("feedback", "note-2", "success").returncode == 0
    commit_all(repo)
    second = org_json(cli, org_db, "sync", str(repo))["repos"][0]
    assert (second["added"], second["changed"], second["removed"], second["unchanged"]) == (
        1,
        1,
        1,
        3,
    )
    assert second["records"] == 5 and second["feedbackEvents"] == 1
    for query in ("caching", "eviction", "sharding", "note"):
        assert without_place(org_json(cli, org_db, "search", query)) == without_place(
            local_document(cli, query)
        )


def test_bare_mirror_at_a_ref_and_repo_filter(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli, org_db: str, tmp_path: Path
) -> None:
    write_record("on-main", "Retry budget on main", tags=["retry"])
    commit_all(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    write_record("on-feature", "Retry budget on a feature branch", tags=["retry"])
    feature = commit_all(repo)
    git(repo, "checkout", "-q", "main")
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(repo), str(mirror))
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))

    assert org(cli, org_db, "sync", str(mirror)).returncode == 0  # default branch: main
    assert org(cli, org_db, "sync", "--ref", "origin/feature", str(other)).returncode == 0
    found = org_json(cli, org_db, "search", "retry budget")
    assert sorted((r["repo"], r["id"]) for r in found["results"]) == [
        ("mirror", "on-main"),
        ("other", "on-feature"),
        ("other", "on-main"),
    ]
    only = org_json(cli, org_db, "search", "retry budget", "--repo", "other")
    assert {r["repo"] for r in only["results"]} == {"other"}
    assert {r["commit"] for r in only["results"]} == {feature}
    unknown = org(cli, org_db, "search", "retry", "--repo", "nope")
    assert unknown.returncode == 2 and "no synced repository named 'nope'" in unknown.stderr


def test_record_text_is_data(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli, org_db: str
) -> None:
    hostile = "'); DROP TABLE records; --"
    write_record("hostile-title", hostile, tags=["sql"])
    write_record("quotes", 'Robert"); DELETE FROM terms; -- backslash \\ and %s', tags=["sql"])
    commit_all(repo)
    assert org(cli, org_db, "sync", f"x'); DROP TABLE repos; --={repo}").returncode == 2
    assert org(cli, org_db, "sync", str(repo)).returncode == 0
    found = org_json(cli, org_db, "search", "drop table records")
    assert [r["title"] for r in found["results"]][:1] == [hostile]
    assert org_json(cli, org_db, "search", "delete from terms %s")["results"][0]["id"] == "quotes"
    assert org_json(cli, org_db, "search", "'); DROP TABLE records; --")["total"] >= 1
    assert [s["repo"] for s in org_json(cli, org_db, "status")["repos"]] == ["repo"]


def test_database_down_or_login_refused_is_one_line_exit_2(
    store: Store, repo: Path, cli: Cli, org_db: str, tmp_path: Path
) -> None:
    commit_all(repo)
    nowhere = f"postgresql://postgres@/postgres?host={tmp_path}"
    refused = org_db.replace("postgres@", "nobody-here@")
    for url in (nowhere, refused, "postgresql://[bad"):
        for args in (("search", "x"), ("status",), ("sync", str(repo))):
            done = org(cli, url, *args)
            assert done.returncode == 2, (url, args, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("reliora: error:"), done.stderr
    missing = cli("org", "search", "x", env={"RELIORA_DB_URL": ""})
    assert missing.returncode == 2 and "--db URL or set RELIORA_DB_URL" in missing.stderr
    as_json = org(cli, nowhere, "search", "x", "--json")
    assert json.loads(as_json.stdout)["error"]["code"] == "database_error"


def test_search_before_any_sync_and_a_newer_schema_say_what_to_do(
    cli: Cli, org_db: str, repo: Path, store: Store
) -> None:
    import psycopg

    done = org(cli, org_db, "search", "x")
    assert done.returncode == 2 and "run `reliora org sync REPO` first" in done.stderr
    commit_all(repo)
    assert org(cli, org_db, "sync", str(repo)).returncode == 0
    with psycopg.connect(org_db, autocommit=True) as conn:
        conn.execute("UPDATE reliora_schema SET version = version + 1")
    for args in (("search", "x"), ("sync", str(repo))):
        newer = org(cli, org_db, *args)
        assert newer.returncode == 2 and "upgrade reliora-git" in newer.stderr


def test_bad_repositories_are_reported_and_the_others_sync(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli, org_db: str, tmp_path: Path
) -> None:
    write_record("fine", "A fine record about queues", tags=["queue"])
    commit_all(repo)
    plain = tmp_path / "not-git"
    plain.mkdir()
    done = org(cli, org_db, "sync", str(plain), str(tmp_path / "absent"), str(repo))
    assert done.returncode == 2
    assert "not a git repository" in done.stderr and "no such folder" in done.stderr
    assert org_json(cli, org_db, "search", "queues")["total"] == 1
    bad_ref = org(cli, org_db, "sync", "--ref", "no-such-branch", str(repo))
    assert bad_ref.returncode == 2 and "no commit named 'no-such-branch'" in bad_ref.stderr


def test_org_search_fast_path_matches_typer(varied: Path, cli: Cli, org_db: str) -> None:
    import typer.main

    from reliora_git.interfaces.commands.org import org_app
    from reliora_git.interfaces.commands.org_search import ORG_SEARCH_OPTIONS

    command = typer.main.get_command(org_app).commands["search"]  # type: ignore[attr-defined]
    declared = {
        opt: (param.name if param.name != "repo" else "repos", not param.is_flag)
        for param in command.params
        for opt in param.opts
        if opt.startswith("-")
    }
    assert declared == ORG_SEARCH_OPTIONS
    assert org(cli, org_db, "sync", str(varied)).returncode == 0
    for args in (("pytest", "-n", "2"), ("pytest timeouts", "--json")):
        fast = org(cli, org_db, "search", *args)
        slow = cli("org", "search", *args, env={"RELIORA_DB_URL": org_db, "RELIORA_FAST_CLI": "0"})
        assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout)
        assert fast.returncode == 0 and "pytest" in fast.stdout.lower()


def test_til_corpus_ranks_the_same_locally_and_in_the_database(
    til_corpus: Path, tmp_path: Path, org_db: str
) -> None:
    import shutil

    from reliora_git.operations.lessons import reads
    from reliora_git.org.db import connect
    from reliora_git.org.search import OrgSearcher
    from reliora_git.org.sync import sync_all
    from reliora_git.records.errors import RelioraError
    from tests.data.make_til_golden import QUERIES as GOLDEN

    repo = tmp_path / "til"
    shutil.copytree(til_corpus / ".reliora", repo / ".reliora")
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit_all(repo)
    run = sync_all(org_db, [str(repo)], None)
    assert run.synced[0].records == len(list((repo / ".reliora").rglob("*.md")))
    store = Store(repo)
    searcher = OrgSearcher(connect(org_db))
    compared = 0
    for query in (q for q in GOLDEN if q["store"] == "til"):
        options = {
            "project_context": query["projectContext"],
            "min_level": query["minLevel"],
            "include_retired": query["includeRetired"],
        }
        try:
            local = reads.search(store, query["text"], **options).document(10_000, {})
        except RelioraError as error:
            with pytest.raises(RelioraError, match=error.message[:20]):
                searcher.search(query["text"], **options)
            continue
        remote = searcher.search(query["text"], limit=10_000, **options).document()
        assert without_place(remote) == without_place(local), query
        compared += 1
    assert compared >= 35
    searcher.conn.close()


def test_without_psycopg_every_org_command_says_what_to_install(
    cli: Cli, repo: Path, store: Store, tmp_path: Path
) -> None:
    # A psycopg that cannot be imported, as on an install without the `org` extra.
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "psycopg.py").write_text("raise ImportError('no psycopg here')\n")
    commit_all(repo)
    env = {"PYTHONPATH": str(shadow), "RELIORA_DB_URL": "postgresql:///nowhere"}
    for args in (("search", "x"), ("status",), ("sync", str(repo))):
        done = cli("org", *args, env=env)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.strip().splitlines() == [
            "reliora: error: the org commands need psycopg 3, the org extra: install reliora "
            "again from your clone of reliora-git with it (pipx install --force '.[mcp,org,web]')"
        ], args


def test_org_search_with_a_thousand_distinct_words_gives_the_local_document(
    varied: Path, cli: Cli, org_db: str
) -> None:
    """Query tokens are capped as locally (Query.parse), so the statement stays small.

    Unbounded, 832 words made more columns than PostgreSQL allows in one select list.
    """
    synced = org_json(cli, org_db, "sync", str(varied))
    assert synced["errors"] == []
    words = "pytest timeouts " + " ".join(f"w{n}x" for n in range(1000))
    local = local_document(cli, words)
    remote = org_json(cli, org_db, "search", words)
    assert remote["results"], "the first words match records"
    assert remote["truncatedTokens"] == 1002 - 256  # pytest, timeouts and 1,000 more
    assert without_place(remote) == without_place(local)


# --- what a sync must say: a newer local branch, records only in the work tree, two names ---


def lessons(repo: Path, word: str, count: int) -> None:
    folder = repo / ".reliora" / "experiences"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"{word}-{n}.md").write_text(
            f'---\nid: {word}-{n}\ntitle: "{word.title()} lesson {n} about queues"\n---\n'
            "## Problems\n- the queue stalled\n\n## Solution\ndrain it first\n",
            encoding="utf-8",
        )


def warnings_of(document: dict[str, Any]) -> dict[str, list[str]]:
    return {report["repo"]: report["warnings"] for report in document["repos"]}


def test_a_clone_whose_local_main_is_ahead_of_origin_says_so_and_ref_main_syncs_them(
    repo: Path, cli: Cli, org_db: str, tmp_path: Path
) -> None:
    lessons(repo, "published", 1)
    commit_all(repo, "published")
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(origin))
    clone = tmp_path / "payments"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "config", "user.name", "Test Author")
    git(clone, "config", "user.email", "test@example.com")
    lessons(clone, "local", 12)
    commit_all(clone, "twelve lessons, not pushed")
    commit_all(clone, "and one more commit")

    done = org(cli, org_db, "sync", str(clone))
    assert done.returncode == 0, done.stderr
    assert "1 records" in done.stdout and "refs/remotes/origin/main" in done.stdout
    said = "local main is 2 commits ahead of origin/main; --ref main to sync them"
    assert f"reliora: warning: payments: {said}" in done.stderr.splitlines()
    again = org_json(cli, org_db, "sync", str(clone))
    assert warnings_of(again) == {"payments": [said]}  # said even when up to date

    synced = org_json(cli, org_db, "sync", "--ref", "main", str(clone))
    assert synced["repos"][0]["records"] == 13 and warnings_of(synced) == {"payments": []}
    # Pushed: nothing to say. A bare mirror has no local branch behind a remote one.
    git(clone, "push", "-q", "origin", "main")
    pushed = org(cli, org_db, "sync", str(clone))
    assert pushed.returncode == 0 and "ahead" not in pushed.stderr, pushed.stderr
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(clone), str(mirror))
    assert warnings_of(org_json(cli, org_db, "sync", str(mirror))) == {"mirror": []}


def test_no_records_at_the_ref_but_some_in_the_work_tree_is_said(
    repo: Path, cli: Cli, org_db: str
) -> None:
    commit_all(repo, "an empty start")
    lessons(repo, "uncommitted", 3)
    document = org_json(cli, org_db, "sync", f"app={repo}")
    assert document["repos"][0]["records"] == 0
    assert warnings_of(document) == {
        "app": [
            "no records at main, but the work tree has 3 record files in "
            ".reliora/experiences: commit them (and push, or sync with --ref)"
        ]
    }
    commit_all(repo, "committed")
    assert warnings_of(org_json(cli, org_db, "sync", f"app={repo}")) == {"app": []}


def test_one_repository_under_two_names_is_said_in_one_run_and_across_runs(
    repo: Path, cli: Cli, org_db: str, tmp_path: Path
) -> None:
    lessons(repo, "kept", 2)
    commit_all(repo)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main", "--template=")
    lessons(other, "else", 1)
    git(other, "add", "-A")
    git(other, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x")

    # One run: the same repository by its top and by a folder inside it.
    done = org(cli, org_db, "sync", f"payments={repo}", f"billing={repo}/.reliora", str(other))
    assert done.returncode == 0, done.stderr
    twice = f"{repo} is also synced in this run as 'payments'; two names index its records twice"
    assert done.stderr.splitlines() == [f"reliora: warning: billing: {twice}"]

    # Across runs: the database knows the repository as payments and billing already.
    later = org_json(cli, org_db, "sync", f"ledger={repo}", str(other))
    assert warnings_of(later) == {
        "ledger": [
            f"{repo} is already synced as 'billing'; two names index its records twice",
            f"{repo} is already synced as 'payments'; two names index its records twice",
        ],
        "other": [],
    }
    # The same name again says nothing: that is a re-sync, not a second name.
    assert warnings_of(org_json(cli, org_db, "sync", f"payments={repo}")) == {
        "payments": [
            f"{repo} is already synced as 'billing'; two names index its records twice",
            f"{repo} is already synced as 'ledger'; two names index its records twice",
        ]
    }


def test_org_search_says_how_many_retired_records_also_match(
    varied: Path, cli: Cli, org_db: str
) -> None:
    """As local search (issue item 3): the retired and superseded matches are counted."""
    assert org_json(cli, org_db, "sync", str(varied))["errors"] == []
    remote = org_json(cli, org_db, "search", "pytest timeouts")
    assert remote["retiredMatches"] == 2  # old-timeouts (retired), pytest-timeouts-old
    assert all(result["summary"] for result in remote["results"])
    assert "retiredMatches" not in org_json(
        cli, org_db, "search", "pytest timeouts", "--include-retired"
    )
    text = org(cli, org_db, "search", "pytest timeouts").stdout
    assert "2 retired or superseded records also match: --include-retired" in text
    only_old = org_json(cli, org_db, "search", "disable")  # only the retired record says it
    assert only_old["total"] == 0 and only_old["retiredMatches"] == 1


def test_asked_as_lines_sync_and_org_search_reads_what_local_search_reads(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli, org_db: str
) -> None:
    # Asked-as lines (SPEC.md §3) are the task ranking's: org search is §5 search, so a word
    # held only there finds nothing in either, and the lines change no score.
    write_record(
        "reflog-recovery",
        "Recover lost commits with the reflog",
        PROBLEMS.format(problem="a hard reset dropped commits", solution="git reflog", where="git")
        + "\n## Asked as\n- my work from this morning vanished after I moved the branch back\n",
    )
    write_record(
        "plain-reset",
        "Reset a branch to a commit",
        PROBLEMS.format(problem="the branch points too far", solution="git reset", where="git"),
    )
    commit_all(repo)
    synced = org_json(cli, org_db, "sync", str(repo))
    assert synced["errors"] == []
    for query in (("morning vanished",), ("reflog commits",), ("branch",)):
        local = local_document(cli, *query)
        remote = org_json(cli, org_db, "search", *query)
        assert without_place(remote) == without_place(local), query
    assert org_json(cli, org_db, "search", "morning vanished")["results"] == []
    assert [r["id"] for r in org_json(cli, org_db, "search", "reflog")["results"]] == [
        "reflog-recovery"
    ]
