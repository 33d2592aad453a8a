"""Guards, round 4 (issue 39, SPEC.md §15): exclude globs, the title as the default message,
``existing: allowed`` judged alike by record, check, the hook and review, ``guard list``, and
``about`` naming the lessons whose guards watch a file. Real git, the installed ``reliora``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

SHA1 = r"hashlib\.sha1\b"
WRAPPER = "src/crypto/legacy.py"
SHA1_CODE = "import hashlib\n\ndef digest(b):\n    return hashlib.sha1(b).hexdigest()\n"


def commit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git commit` with the installed hook run."""
    return subprocess.run(
        ["git", "commit", "-q", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def lesson(cli: Cli, title: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return cli(
        "record",
        *("--title", title, "--task", "hash things", "--solution", "use the wrapper"),
        *("--warning", "library versions drift"),  # never a guard's message (issue 39)
        *flags,
    )


def front_matter(store: Store, record_id: str) -> dict[str, object]:
    text = (store.experiences / f"{record_id}.md").read_text(encoding="utf-8")
    loaded = yaml.safe_load(text.split("---\n")[1])
    assert isinstance(loaded, dict)
    return loaded


def saved_id(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.split()[1]  # "saved ID as LOCATOR"


def committed_base(store: Store) -> Path:
    """The repository with the hook and a first commit holding the one SHA-1 wrapper."""
    root = store.root
    write(root, WRAPPER, SHA1_CODE)
    write(root, "src/app.py", "import os\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


# --- exclude ------------------------------------------------------------------------------------


def test_an_excluded_wrapper_lets_the_guard_save_and_is_never_judged(
    store: Store, cli: Cli
) -> None:
    root = committed_base(store)
    refused = lesson(cli, "SHA-1 only through legacy.digest", "--guard", SHA1)
    assert refused.returncode == 2
    assert f"{WRAPPER}:4:" in refused.stderr and "--guard-exclude" in refused.stderr
    assert "Traceback" not in refused.stderr
    record_id = saved_id(
        lesson(
            cli,
            "SHA-1 only through legacy.digest",
            *("--guard", SHA1, "--guard-exclude", WRAPPER, "--block"),
        )
    )
    (guard,) = front_matter(store, record_id)["guards"]
    assert guard == {"pattern": SHA1, "exclude": [WRAPPER], "severity": "block"}
    assert cli("hooks", "install").returncode == 0
    git(root, "add", ".reliora")
    assert commit(root, "-m", "lesson").returncode == 0
    # The wrapper may grow another call; any other file may not.
    write(root, WRAPPER, SHA1_CODE + "def again(b):\n    return hashlib.sha1(b)\n")
    git(root, "add", WRAPPER)
    through = commit(root, "-m", "wrapper")
    assert through.returncode == 0, through.stderr
    assert "repeats lesson" not in through.stderr
    write(root, "src/app.py", "import os\nimport hashlib\nhashlib.sha1(b'')\n")
    git(root, "add", "src/app.py")
    blocked = commit(root, "-m", "app")
    assert blocked.returncode == 1
    assert f"src/app.py:3: repeats lesson {record_id}: SHA-1 only through legacy.digest" in (
        blocked.stderr
    )


def test_exclude_globs_are_checked_like_paths(store: Store, cli: Cli) -> None:
    root = store.root
    bad = {
        "title": "t",
        "task": "t",
        "solution": "s",
        "guards": [{"pattern": "x", "exclude": ["../outside.py"]}],
    }
    path = store.experiences / "bad.md"
    path.write_text(
        "---\nid: bad\ntitle: t\nguards:\n- pattern: x\n  exclude: ['../outside.py']\n---\n"
        "## Problems\n- p\n\n## Solution\ns\n",
        encoding="utf-8",
    )
    done = cli("check", str(path))
    assert done.returncode == 1
    assert "exclude names '../outside.py', which climbs out of the repository" in done.stdout
    path.unlink()
    refused = cli("record", "--json", "-", input=json.dumps(bad))
    assert refused.returncode == 2 and "climbs out" in refused.stdout + refused.stderr
    lonely = cli("record", "--title", "t", "--task", "t", "--solution", "s", "--guard-exclude", "x")
    assert lonely.returncode == 2
    assert "need a --guard" in lonely.stderr and "Traceback" not in lonely.stderr
    assert not list(store.experiences.glob("*.md"))
    assert root.exists()


# --- message ------------------------------------------------------------------------------------


def test_the_message_is_the_title_unless_given(store: Store, cli: Cli) -> None:
    root = committed_base(store)
    titled = saved_id(lesson(cli, "Never sleep in tests", "--guard", r"time\.sleep\("))
    told = saved_id(
        lesson(
            cli,
            "No print debugging",
            *("--guard", r"\bprint\(", "--guard-message", "use the logger, not print()"),
        )
    )
    assert cli("hooks", "install").returncode == 0
    git(root, "add", ".reliora")
    assert commit(root, "-m", "lessons").returncode == 0
    write(root, "src/t.py", "import time\ntime.sleep(1)\nprint('x')\n")
    git(root, "add", "src/t.py")
    done = commit(root, "-m", "code")
    assert done.returncode == 0, done.stderr
    assert f"src/t.py:2: repeats lesson {titled}: Never sleep in tests" in done.stderr
    assert f"src/t.py:3: repeats lesson {told}: use the logger, not print()" in done.stderr
    assert "library versions drift" not in done.stderr


# --- existing: allowed --------------------------------------------------------------------------


def test_allow_existing_is_kept_in_the_record_and_check_hook_and_review_agree(
    store: Store, cli: Cli
) -> None:
    root = committed_base(store)
    assert cli("hooks", "install").returncode == 0
    git(root, "checkout", "-q", "-b", "feature")
    done = lesson(cli, "Do not import os", "--guard", "^import os", "--allow-existing")
    record_id = saved_id(done)
    assert "guard 1 already matches the code (src/app.py:1)" in done.stderr
    assert "existing: allowed" in done.stderr
    (guard,) = front_matter(store, record_id)["guards"]
    assert guard["existing"] == "allowed"
    # The hook: the record is fine to commit.
    git(root, "add", ".reliora")
    hooked = commit(root, "-m", "lesson")
    assert hooked.returncode == 0, hooked.stderr
    # check: a warning, exit 0.
    checked = cli("check", "--json")
    assert checked.returncode == 0, checked.stdout
    problems = {f["id"]: f["problems"] for f in json.loads(checked.stdout)["files"]}
    assert [p["severity"] for p in problems[record_id]] == ["warning"]
    assert "existing: allowed" in problems[record_id][0]["message"]
    # review: a warning too, exit 0 (it failed the pull request's CI before).
    reviewed = cli("review", "--base", "main", "--format", "json")
    assert reviewed.returncode == 0, reviewed.stdout + reviewed.stderr
    (change,) = json.loads(reviewed.stdout)["records"]
    assert change["guards"][0]["existing"] == "allowed"
    assert change["guards"][0]["matchesHead"][0]["path"] == "src/app.py"
    assert {p["severity"] for p in change["problems"]} == {"warning"}
    github = cli("review", "--base", "main", "--format", "github").stdout
    assert github.startswith("::warning file=.reliora/experiences/") and "::error" not in github
    markdown = cli("review", "--base", "main", "--format", "markdown").stdout
    assert "accepted when saved" in markdown and "invalid" not in markdown


def test_a_guard_nobody_accepted_still_fails_the_review(store: Store, cli: Cli) -> None:
    root = committed_base(store)
    git(root, "checkout", "-q", "-b", "feature")
    path = store.experiences / "hand-written.md"
    path.write_text(
        "---\nid: hand-written\ntitle: No os\nguards:\n- pattern: '^import os'\n---\n"
        "## Problems\n- p\n\n## Solution\ns\n",
        encoding="utf-8",
    )
    git(root, "add", ".reliora")
    git(root, "commit", "-q", "-m", "lesson")
    reviewed = cli("review", "--base", "main", "--format", "json")
    assert reviewed.returncode == 1
    (change,) = json.loads(reviewed.stdout)["records"]
    assert change["guards"][0]["existing"] is None
    assert "error" in {p["severity"] for p in change["problems"]}
    # Accepting it in the record (what --allow-existing writes) turns it into a warning.
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "'^import os'\n", "'^import os'\n  existing: allowed\n"
        ),
        encoding="utf-8",
    )
    git(root, "commit", "-q", "-am", "accepted")
    assert cli("review", "--base", "main", "--format", "json").returncode == 0
    assert cli("check").returncode == 0


def test_existing_must_say_allowed(store: Store, cli: Cli) -> None:
    path = store.experiences / "odd.md"
    path.write_text(
        "---\nid: odd\ntitle: t\nguards:\n- pattern: x\n  existing: yes please\n---\n"
        "## Problems\n- p\n\n## Solution\ns\n",
        encoding="utf-8",
    )
    done = cli("check", str(path))
    assert done.returncode == 1
    assert "existing 'yes please' must be 'allowed'" in done.stdout


def test_update_and_json_input_write_existing_allowed(store: Store, cli: Cli) -> None:
    committed_base(store)
    given = {
        "title": "Hash through the wrapper",
        "task": "t",
        "solution": "s",
        "guards": [{"pattern": SHA1, "message": "call legacy.digest()"}],
    }
    refused = cli("record", "--json", "-", input=json.dumps(given))
    assert refused.returncode == 2
    assert json.loads(refused.stdout)["error"]["code"] == "guard_matches"
    assert f"{WRAPPER}:4:" in json.loads(refused.stdout)["error"]["message"]
    done = cli("record", "--json", "-", "--allow-existing", input=json.dumps(given))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)  # one document; the note goes to stderr
    record_id = answer["id"]
    (note,) = [w for w in answer["warnings"] if w["code"] == "GUARD_MATCHES_EXISTING_CODE"]
    assert note["guard"] == 1 and note["matches"] == [f"{WRAPPER}:4"]
    (guard,) = front_matter(store, record_id)["guards"]
    assert guard["existing"] == "allowed" and guard["message"] == "call legacy.digest()"
    # update: a new guard that matches nothing carries no acceptance; one that matches does.
    assert cli("update", record_id, "--guard", "never-in-code").returncode == 0
    assert cli("update", record_id, "--guard", "^import os").returncode == 2
    accepted = cli("update", record_id, "--guard", "^import os", "--allow-existing")
    assert accepted.returncode == 0, accepted.stderr
    guards = front_matter(store, record_id)["guards"]
    assert [g.get("existing") for g in guards] == ["allowed", None, "allowed"]
    shown = cli.json("show", record_id)
    assert [g["existing"] for g in shown["guards"]] == ["allowed", None, "allowed"]


def test_mcp_record_and_update_keep_the_acceptance(store: Store, repo: Path) -> None:
    from tests.test_mcp import document, reliora_mcp, run

    committed_base(store)
    fields = {
        "title": "Hash through the wrapper",
        "task": "t",
        "solution": "s",
        "guards": [{"pattern": SHA1, "exclude": ["src/app.py"]}],
    }

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            refused = await session.call_tool("record", fields)
            assert refused.is_error
            saved = document(await session.call_tool("record", {**fields, "allowExisting": True}))
            assert saved["warnings"][0]["code"] == "GUARD_MATCHES_EXISTING_CODE"
            updated = document(
                await session.call_tool(
                    "update",
                    {
                        "id": saved["id"],
                        "addGuards": [{"pattern": "^import"}],
                        "allowExisting": True,
                    },
                )
            )
            assert [w["guard"] for w in updated["warnings"]] == [2]
            shown = document(await session.call_tool("show", {"id": saved["id"]}))
            assert [(g["exclude"], g["existing"]) for g in shown["guards"]] == [
                (["src/app.py"], "allowed"),
                ([], "allowed"),
            ]

    run(scenario)


# --- guard list ---------------------------------------------------------------------------------


def test_guard_list_names_every_active_guard(store: Store, cli: Cli) -> None:
    committed_base(store)
    empty = cli("guard", "list", "--json")
    assert empty.returncode == 0 and json.loads(empty.stdout) == {
        "total": 0,
        "records": 0,
        "guards": [],
    }
    sha = saved_id(
        lesson(
            cli,
            "SHA-1 only through legacy.digest",
            *("--guard", SHA1, "--guard-exclude", WRAPPER, "--guard-path", "src/**/*.py"),
            "--block",
        )
    )
    old = saved_id(lesson(cli, "Old advice", "--guard", "moment"))
    assert cli("retire", old, "--reason", "moved on").returncode == 0
    done = cli("guard", "list", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # exactly one document
    assert document["total"] == 1 and document["records"] == 1
    assert document["guards"] == [
        {
            "record": sha,
            "locator": f".reliora/experiences/{sha}.md",
            "guard": 1,
            "pattern": SHA1,
            "scope": "glob",
            "paths": ["src/**/*.py"],
            "exclude": [WRAPPER],
            "severity": "block",
            "message": "SHA-1 only through legacy.digest",
            "existing": None,
        }
    ]
    text = cli("guard", "list")
    assert text.returncode == 0
    assert f"{sha}  guard 1  block" in text.stdout
    assert f"exclude: {WRAPPER}" in text.stdout and "message: SHA-1 only" in text.stdout
    assert old not in text.stdout  # a retired lesson's guards are off
    assert "1 active guard in 1 lesson" in text.stdout
    helped = cli("guard", "list", "--help")
    assert helped.returncode == 0 and "reliora guard list --json" in helped.stdout


# --- about --------------------------------------------------------------------------------------


def test_about_names_the_lessons_whose_guards_watch_a_file(store: Store, cli: Cli) -> None:
    committed_base(store)
    guarded = saved_id(
        lesson(cli, "SHA-1 only through legacy.digest", "--guard", SHA1, "--guard-exclude", WRAPPER)
    )
    about_app = saved_id(
        cli(
            "record",
            "--title",
            "App startup",
            "--task",
            "t",
            "--solution",
            "s",
            "--path",
            "src/app.py",
        )
    )
    document = cli.json("about", "src/app.py")
    results = {r["id"]: r for r in document["results"]}
    assert set(results) == {guarded, about_app}
    assert results[guarded]["matchedBy"] == ["guard"]
    assert results[guarded]["paths"] == []
    (guard,) = results[guarded]["guards"]
    assert (guard["pattern"], guard["watches"], guard["exclude"]) == (
        SHA1,
        ["src/app.py"],
        [WRAPPER],
    )
    assert results[about_app]["matchedBy"] == ["paths"] and results[about_app]["guards"] == []
    # The excluded wrapper is not watched by the guard; a folder is, through its files.
    wrapper = cli.json("about", WRAPPER)
    assert [r["id"] for r in wrapper["results"]] == []
    folder = cli.json("about", "src/")
    assert guarded in {r["id"] for r in folder["results"]}
    text = cli("about", "src/app.py").stdout
    assert f"{guarded}  SHA-1 only through legacy.digest" in text
    assert f"guard: {SHA1} (warn; watches src/app.py)" in text
    # A retired lesson's guard is off: it watches nothing.
    assert cli("retire", guarded, "--reason", "gone").returncode == 0
    assert guarded not in {r["id"] for r in cli.json("about", "src/app.py")["results"]}


def test_mcp_about_names_guard_watched_lessons(store: Store, repo: Path, cli: Cli) -> None:
    from tests.test_mcp import document, reliora_mcp, run

    committed_base(store)
    guarded = saved_id(lesson(cli, "No os imports", "--guard", "^import os", "--allow-existing"))

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            found = document(await session.call_tool("about", {"paths": ["src/app.py"]}))
            (result,) = found["results"]
            assert result["id"] == guarded and result["matchedBy"] == ["guard"]
            assert result["guards"][0]["existing"] == "allowed"

    run(scenario)


# --- the hook judges a guard the commit brings as review does ---------------------------------


def _hand_written_guard(repo: Path, write_record: RecordMaker, **guard: object) -> None:
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src" / "legacy.py").write_text("import hashlib\nhashlib.sha1(b'x')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    write_record(
        "no-sha1",
        "Do not use sha1 for new digests",
        "## Problems\n- sha1 digests were flagged\n\n## Solution\nUse hashlib.sha256.\n",
        guards=[{"pattern": r"hashlib\.sha1\b", **guard}],
    )
    git(repo, "add", "-A")


def test_the_hook_refuses_a_new_guard_that_matches_the_code_as_review_does(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli
) -> None:
    _hand_written_guard(repo, write_record)
    done = cli("check", "--staged")
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "already matches head's code (src/legacy.py:2)" in said
    assert "commit stopped" in said


def test_the_hook_warns_when_the_record_accepted_the_matches(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli
) -> None:
    _hand_written_guard(repo, write_record, existing="allowed")
    done = cli("check", "--staged")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matches accepted when it was saved (existing: allowed)" in done.stdout + done.stderr
