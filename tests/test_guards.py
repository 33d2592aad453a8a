"""Guards (SPEC.md §15): lessons that check the code, through real `git commit`, review and CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

MOMENT = "import moment from 'moment'\n"


def commit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git commit` with the hooks folder's hook run (not the helper, which fails on error)."""
    return subprocess.run(
        ["git", "commit", "-q", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def lesson(cli: Cli, *flags: str, title: str = "Use date-fns, not moment") -> str:
    done = cli(
        "record",
        "--title",
        title,
        "--task",
        "format dates in the web app",
        "--solution",
        "date-fns: tree-shaken, immutable",
        "--warning",
        "bundle bloat, use date-fns",
        *flags,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.split()[1]  # "saved ID as LOCATOR"


@pytest.fixture
def hooked(store: Store, cli: Cli) -> Path:
    """A repository with the reliora hook and a first commit holding a README."""
    assert cli("hooks", "install").returncode == 0
    (store.root / "README.md").write_text("hello\n", encoding="utf-8")
    git(store.root, "add", "README.md")
    assert commit(store.root, "-m", "readme").returncode == 0
    return store.root


def with_lesson(root: Path, cli: Cli, *flags: str) -> str:
    record_id = lesson(cli, "--guard", "moment", *flags)
    git(root, "add", ".reliora")
    done = commit(root, "-m", "lesson")
    assert done.returncode == 0, done.stdout + done.stderr
    return record_id


def write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def test_a_warn_guard_reports_the_line_and_lets_the_commit_through(hooked: Path, cli: Cli) -> None:
    record_id = with_lesson(hooked, cli)
    write(hooked, "src/dates.js", "const a = 1\n" + MOMENT)
    git(hooked, "add", "src/dates.js")
    done = commit(hooked, "-m", "dates")
    assert done.returncode == 0, done.stderr
    expected = (
        f"src/dates.js:2: repeats lesson {record_id}: Use date-fns, not moment "
        f"(reliora show {record_id})"
    )
    assert expected in done.stdout + done.stderr
    assert "src/dates.js" in git(hooked, "ls-tree", "-r", "--name-only", "HEAD")


def test_a_block_guard_stops_the_commit_and_says_how_to_go_on(hooked: Path, cli: Cli) -> None:
    record_id = with_lesson(hooked, cli, "--block")
    write(hooked, "src/dates.js", MOMENT)
    git(hooked, "add", "src/dates.js")
    done = commit(hooked, "-m", "dates")
    assert done.returncode != 0
    out = done.stdout + done.stderr
    assert f"src/dates.js:1: repeats lesson {record_id}" in out
    assert "git commit --no-verify" in out and f"reliora retire {record_id}" in out
    assert "src/dates.js" not in git(hooked, "ls-tree", "-r", "--name-only", "HEAD")
    assert commit(hooked, "--no-verify", "-m", "anyway").returncode == 0


def test_check_staged_exit_codes_and_json(hooked: Path, cli: Cli) -> None:
    record_id = with_lesson(hooked, cli, "--block")
    write(hooked, "a.py", "moment\nok\nmoment again\n")
    git(hooked, "add", "a.py")
    done = cli("check", "--staged", "--json")
    assert done.returncode == 1
    findings = json.loads(done.stdout)["guardFindings"]
    assert [(f["path"], f["line"], f["record"], f["severity"]) for f in findings] == [
        ("a.py", 1, record_id, "block"),
        ("a.py", 3, record_id, "block"),
    ]
    assert findings[0]["message"] == "Use date-fns, not moment"  # the title, not a warning
    assert findings[0]["stale"] is False


def test_commit_a_judges_the_temporary_index(hooked: Path, cli: Cli) -> None:
    with_lesson(hooked, cli, "--block")
    write(hooked, "README.md", "hello\n" + MOMENT)  # tracked, changed, not staged
    done = commit(hooked, "-a", "-m", "all")
    assert done.returncode != 0
    assert "README.md:2: repeats lesson" in done.stdout + done.stderr


def test_commit_paths_judges_only_those_paths(hooked: Path, cli: Cli) -> None:
    with_lesson(hooked, cli, "--block")
    write(hooked, "bad.js", MOMENT)
    write(hooked, "good.js", "ok\n")
    git(hooked, "add", "bad.js", "good.js")
    done = commit(hooked, "-m", "only good", "--", "good.js")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bad.js" not in done.stdout + done.stderr
    done = commit(hooked, "-m", "bad", "--", "bad.js")
    assert done.returncode != 0
    assert "bad.js:1: repeats lesson" in done.stdout + done.stderr


def test_partial_staging_judges_the_staged_blob_not_the_work_tree(hooked: Path, cli: Cli) -> None:
    with_lesson(hooked, cli, "--block")
    write(hooked, "src/app.js", "one\n")
    git(hooked, "add", "src/app.js")
    write(hooked, "src/app.js", "one\n" + MOMENT)  # the mistake is only in the work tree
    done = commit(hooked, "-m", "clean part")
    assert done.returncode == 0, done.stdout + done.stderr
    write(hooked, "src/app.js", "one\ntwo\n" + MOMENT)
    git(hooked, "add", "src/app.js")
    write(hooked, "src/app.js", "one\ntwo\n")  # fixed in the work tree, not in the index
    done = commit(hooked, "-m", "staged mistake")
    assert done.returncode != 0
    assert "src/app.js:3: repeats lesson" in done.stdout + done.stderr


def test_the_first_commit_with_its_lesson_and_code(store: Store, cli: Cli) -> None:
    assert cli("hooks", "install").returncode == 0
    record_id = lesson(cli, "--guard", "moment", "--block")
    write(store.root, "web/dates.js", MOMENT)
    git(store.root, "add", ".")
    done = commit(store.root, "-m", "first")
    assert done.returncode != 0
    out = done.stdout + done.stderr
    assert f"web/dates.js:1: repeats lesson {record_id}" in out
    assert ".reliora/" not in out.split("commit stopped")[0].replace("reliora show", "")


def test_retired_records_guards_are_off(hooked: Path, cli: Cli) -> None:
    record_id = with_lesson(hooked, cli, "--block")
    assert cli("retire", record_id, "--reason", "we use moment again").returncode == 0
    git(hooked, "add", ".reliora")
    assert commit(hooked, "-m", "retire").returncode == 0
    write(hooked, "a.js", MOMENT)
    git(hooked, "add", "a.js")
    done = commit(hooked, "-m", "moment is fine now")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "repeats lesson" not in done.stdout + done.stderr


def test_guard_paths_binary_and_large_files(hooked: Path, cli: Cli) -> None:
    lesson(cli, "--guard", "moment", "--guard-path", "src/**/*.js", "--block")
    git(hooked, "add", ".reliora")
    assert commit(hooked, "-m", "lesson").returncode == 0
    write(hooked, "docs/why.md", "we dropped moment\n")  # outside the guard's paths
    (hooked / "src").mkdir()
    (hooked / "src" / "blob.js").write_bytes(b"\0moment\n")  # binary
    write(hooked, "src/huge.js", MOMENT * 60_000)  # over the size limit
    git(hooked, "add", ".")
    done = cli("check", "--staged", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["guardFindings"] == []
    write(hooked, "src/deep/x/ok.js", MOMENT)
    git(hooked, "add", ".")
    found = json.loads(cli("check", "--staged", "--json").stdout)["guardFindings"]
    assert [f["path"] for f in found] == ["src/deep/x/ok.js"]


def test_a_hostile_pattern_runs_in_linear_time(hooked: Path, cli: Cli) -> None:
    record_id = lesson(cli, "--guard", "(a+)+$", title="No runs of a")
    git(hooked, "add", ".reliora")
    assert commit(hooked, "-m", "lesson").returncode == 0
    write(hooked, "long.txt", "a" * 60_000 + "b\n" + "aaa\n")
    git(hooked, "add", "long.txt")
    done = cli("check", "--staged", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["guardFindings"]
    assert [(f["line"], f["record"]) for f in found] == [(2, record_id)]
    assert len(found[0]["text"]) <= 120


def test_an_invalid_pattern_in_a_hand_written_record(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    path = write_record("backref", "Backreference", guards=[{"pattern": "(a)\\1"}])
    done = cli("check")
    assert done.returncode == 1
    assert ".reliora/experiences/backref.md:4" in done.stdout + done.stderr
    assert "guard 1 (`(a)\\1`)" in done.stdout and "no backreferences" in done.stdout
    path.write_text(
        path.read_text(encoding="utf-8").replace('"(a)\\\\1"', '"x(?=y)"'), encoding="utf-8"
    )
    done = cli("check")
    assert done.returncode == 1 and "lookaround" in done.stdout
    git(store.root, "add", ".reliora")
    staged = cli("check", "--staged")
    assert "guard 1 (`x(?=y)`)" in staged.stdout + staged.stderr
    bad_severity = write_record("sev", "Severity", guards=[{"pattern": "x", "severity": "fatal"}])
    assert "severity 'fatal' must be one of warn, block" in cli("check", str(bad_severity)).stdout


def test_a_guard_that_already_matches_is_refused_unless_allowed(store: Store, cli: Cli) -> None:
    write(store.root, "src/db.py", "import os\nquery = 'SELECT *'  # moment\n")
    done = cli("record", "--title", "t", "--task", "t", "--solution", "s", "--guard", "moment")
    assert done.returncode == 2
    assert (
        "guard 1 already matches the code: src/db.py:2: query = 'SELECT *' # moment" in done.stderr
    )
    assert "--allow-existing" in done.stderr
    assert not list(store.experiences.glob("*.md"))
    done = cli(
        "record",
        *("--title", "t", "--task", "t", "--solution", "s"),
        *("--guard", "moment", "--allow-existing"),
    )
    assert done.returncode == 0, done.stderr
    record_id = done.stdout.split()[1]
    # update: a guard it already had is not judged again; a new one is.
    assert cli("update", record_id, "--title", "t2").returncode == 0
    refused = cli("update", record_id, "--guard", "import os")
    assert refused.returncode == 2 and "src/db.py:1: import os" in refused.stderr
    assert cli("update", record_id, "--guard", "import sys").returncode == 0
    shown = cli.json("show", record_id)
    assert [g["pattern"] for g in shown["guards"]] == ["moment", "import sys"]


def test_guard_test_on_the_work_tree_and_one_commit(hooked: Path, cli: Cli) -> None:
    record_id = with_lesson(hooked, cli)
    write(hooked, "a.js", MOMENT)
    git(hooked, "add", "a.js")
    assert commit(hooked, "-m", "a").returncode == 0
    write(hooked, "b.js", "x\n" + MOMENT)
    git(hooked, "add", "b.js")
    assert commit(hooked, "-m", "b").returncode == 0
    tree = cli.json("guard", "test")
    assert [(f["path"], f["line"]) for f in tree["guardFindings"]] == [("a.js", 1), ("b.js", 2)]
    one = cli.json("guard", "test", "--rev", "HEAD~1")
    assert [(f["path"], f["line"], f["record"]) for f in one["guardFindings"]] == [
        ("a.js", 1, record_id)
    ]
    text = cli("guard", "test", record_id[:8], "--rev", "HEAD")
    assert text.returncode == 0
    assert f"b.js:2: repeats lesson {record_id}" in text.stdout
    assert cli("guard", "test", "--rev", "no-such-rev").returncode == 2


def test_no_guard_in_the_store_loads_no_regex_engine(hooked: Path, cli: Cli) -> None:
    lesson(cli)  # a lesson without a guard
    git(hooked, "add", ".reliora")
    assert commit(hooked, "-m", "lesson").returncode == 0
    write(hooked, "a.js", MOMENT)
    git(hooked, "add", "a.js")
    script = (
        "import sys\n"
        "from reliora_git.interfaces.commands.check_staged import run_check_staged\n"
        "code = run_check_staged(None, None, False)\n"
        "print(code, 're2' in sys.modules)\n"
    )
    for _ in range(2):  # the first run learns HEAD's guards, the second reads them
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=hooked, capture_output=True, text=True
        )
        assert done.stdout.split()[-2:] == ["0", "False"], done.stderr


def test_json_input_and_show(store: Store, cli: Cli) -> None:
    given = {
        "title": "Never log card numbers",
        "task": "payments logging",
        "solution": "log the last four digits",
        "guards": [
            {"pattern": r"log\w*\(.*card", "paths": ["pay/"], "severity": "block", "message": "m"}
        ],
    }
    done = cli("record", "--json", "-", input=json.dumps(given))
    assert done.returncode == 0, done.stderr
    record_id = json.loads(done.stdout)["id"]
    shown = cli.json("show", record_id)
    assert shown["guards"] == [
        {
            "pattern": r"log\w*\(.*card",
            "paths": ["pay/"],
            "exclude": [],
            "message": "m",
            "severity": "block",
            "existing": None,
        }
    ]
    text = cli("show", record_id).stdout
    assert "pay/ (blocks the commit): m" in text
    bad = cli("record", "--json", "-", input=json.dumps({**given, "guards": [{"paths": []}]}))
    assert bad.returncode == 2 and "needs a 'pattern'" in bad.stdout


def test_review_between_two_branches(store: Store, cli: Cli) -> None:
    root = store.root
    warn_id = lesson(cli, "--guard", "moment")
    block_id = lesson(cli, "--guard", r"console\.log", "--block", title="No console.log")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "lessons")
    git(root, "checkout", "-q", "-b", "feature")
    write(root, "src/a.js", "x\n" + MOMENT + "console.log('%0A::error::x, y')\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "feature", "--no-verify")
    done = cli("review", "main", "feature", "--format", "json")
    assert done.returncode == 1  # a block guard fired
    findings = json.loads(done.stdout)["guardFindings"]
    assert [(f["path"], f["line"], f["record"], f["severity"]) for f in findings] == [
        ("src/a.js", 2, warn_id, "warn"),
        ("src/a.js", 3, block_id, "block"),
    ]
    markdown = cli("review", "main", "feature").stdout
    assert "### Code that repeats a lesson" in markdown
    assert f"- `src/a.js:2` repeats `{warn_id}`, warn: Use date\\-fns, not moment" in markdown
    text = cli("review", "main", "feature", "--format", "text").stdout
    assert f"src/a.js:3: repeats lesson {block_id}: No console.log" in text
    annotations = cli("review", "main", "feature", "--format", "github").stdout.splitlines()
    assert annotations[0].startswith("::warning file=src/a.js,line=2,title=repeats lesson ")
    assert annotations[1].startswith("::error file=src/a.js,line=3,")
    assert len(annotations) == 2
    # warn only: review passes
    git(root, "checkout", "-q", "main")
    git(root, "checkout", "-q", "-b", "warn-only")
    write(root, "b.js", MOMENT)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "warn only", "--no-verify")
    assert cli("review", "main", "warn-only", "--format", "json").returncode == 0


def test_the_action_annotates_guard_findings_and_fails_on_block(
    store: Store, cli: Cli, tmp_path: Path
) -> None:
    from tests.test_action import _run_step

    root = store.root
    block_id = lesson(cli, "--guard", "moment", "--block")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "lesson")
    git(root, "checkout", "-q", "-b", "feature")
    write(root, "web/x,y.js", MOMENT)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "feature", "--no-verify")
    done = _run_step(root, tmp_path, "main")
    assert done.returncode == 1
    assert done.stdout.startswith(
        f"::error file=web/x%2Cy.js,line=1,title=repeats lesson {block_id}::Use date-fns"
    )
    assert "Code that repeats a lesson" in (tmp_path / "reliora-review.md").read_text()


def test_check_warns_when_heads_code_already_repeats_a_lesson(hooked: Path, cli: Cli) -> None:
    record_id = with_lesson(hooked, cli, "--block")
    assert cli("check").returncode == 0
    write(hooked, "lib/old.js", "a\n" + MOMENT)
    git(hooked, "add", "lib/old.js")
    assert commit(hooked, "--no-verify", "-m", "sneaked in").returncode == 0
    done = cli("check", "--json")
    assert done.returncode == 0, done.stdout  # a warning, not an error
    files = {f["id"]: f for f in json.loads(done.stdout)["files"]}
    messages = [p["message"] for p in files[record_id]["problems"]]
    assert any("a guard matches HEAD's code already (lib/old.js:2)" in m for m in messages)


def test_mcp_record_and_update_take_guards(store: Store, repo: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import document, reliora_mcp, run

    write(repo, "src/db.py", "cursor.execute(f'SELECT {x}')\n")
    lesson_fields = {
        "title": "Never format SQL strings",
        "task": "queries",
        "solution": "use parameters",
        "guards": [{"pattern": r"execute\(f['\"]", "severity": "block"}],
    }

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            # Taken, though not listed: an agent seldom needs it, and listing costs every turn.
            assert "guards" not in tools["record"].input_schema["properties"]
            refused = await session.call_tool("record", lesson_fields)
            assert refused.is_error
            assert "src/db.py:1:" in refused.content[0].text  # type: ignore[union-attr]
            saved = document(
                await session.call_tool("record", {**lesson_fields, "allowExisting": True})
            )
            updated = await session.call_tool(
                "update", {"id": saved["id"], "addGuards": [{"pattern": "SELECT \\*"}]}
            )
            assert not updated.is_error
            shown = document(await session.call_tool("show", {"id": saved["id"]}))
            assert [g["pattern"] for g in shown["guards"]] == [r"execute\(f['\"]", "SELECT \\*"]

    run(scenario)


# Builds from this checkout (build/, *.egg-info): one such test at a time under xdist.
@pytest.mark.xdist_group("checkout-build")
def test_the_pre_commit_framework_runs_guards_when_only_code_is_staged(
    hooked: Path, cli: Cli, tmp_path: Path
) -> None:
    import os
    import shutil

    repository = Path(__file__).resolve().parents[1]
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not (repository / ".pre-commit-hooks.yaml").is_file() or shutil.which("git") is None:
        pytest.skip("not run from a checkout of this repository")
    if not pre_commit.exists():
        pytest.skip("the pre-commit package is not installed (pip install -e '.[test]')")
    record_id = with_lesson(hooked, cli, "--block")
    write(hooked, "src/dates.js", MOMENT)
    git(hooked, "add", "src/dates.js")  # nothing under .reliora/ staged
    done = subprocess.run(
        [str(pre_commit), "try-repo", str(repository), "reliora-check"],
        cwd=hooked,
        capture_output=True,
        text=True,
        env={**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")},
        timeout=900,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout
    assert f"src/dates.js:1: repeats lesson {record_id}" in done.stdout


def test_a_store_in_a_subfolder_guards_the_whole_repository(repo: Path, tmp_path: Path) -> None:
    from reliora_git.storage.template import init_store

    init_store(repo / "app")
    cli = Cli(repo / "app")
    assert cli("hooks", "install").returncode == 0
    record_id = lesson(cli, "--guard", "moment", "--block")
    git(repo, "add", ".")
    assert commit(repo, "-m", "lesson").returncode == 0
    write(repo, "lib/top.js", MOMENT)
    write(repo, "app/src/in.js", "ok\n" + MOMENT)
    git(repo, "add", ".")
    for _ in range(2):  # HEAD's guards learned, then read back
        found = json.loads(cli("check", "--staged", "--json").stdout)["guardFindings"]
        assert [(f["path"], f["line"], f["record"]) for f in found] == [
            ("app/src/in.js", 2, record_id),
            ("lib/top.js", 1, record_id),
        ]


def test_a_stale_lessons_finding_says_so(hooked: Path, cli: Cli) -> None:
    write(hooked, "web/dates.js", "one\n")
    git(hooked, "add", "web/dates.js")
    assert commit(hooked, "-m", "code").returncode == 0
    record_id = lesson(cli, "--guard", "moment", "--path", "web/dates.js")
    git(hooked, "add", ".reliora")
    assert commit(hooked, "-m", "lesson").returncode == 0
    write(hooked, "web/dates.js", "one\ntwo\n")
    git(hooked, "add", "web/dates.js")
    assert commit(hooked, "-m", "the code moves on").returncode == 0
    write(hooked, "web/dates.js", "one\ntwo\n" + MOMENT)
    git(hooked, "add", "web/dates.js")
    done = commit(hooked, "-m", "moment again")
    assert done.returncode == 0
    assert (
        f"web/dates.js:3: repeats lesson {record_id} (stale: its code changed since it was "
        "recorded)" in done.stdout + done.stderr
    )
