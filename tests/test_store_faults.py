"""Faults in how a store is written and judged (issue 23, items 6, 7 and three of 10).

* supersedes cycles: one report per group of records that supersede one another;
* what a record saves is what it reads back, field by field (record, update);
* lock files: git-ignored, and a lock that is not a file is an error that says what to remove;
* an invalid record can be repaired with update and edit;
* ``record --supersedes PREFIX`` names the full id, and warns of no duplicate it replaces.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliora_git.records.errors import RelioraError
from reliora_git.records.model import Record
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

# --- 6. supersedes cycles ----------------------------------------------------------------------


def test_a_supersedes_clique_is_one_warning_not_one_per_cycle(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    # Seven records that each supersede all the others hold 2,365 simple cycles: listing
    # each one on each of its records was 11,000 lines (nine records: 800,000 lines).
    ids = [f"r{n}" for n in range(7)]
    for record_id in ids:
        write_record(record_id, f"Record {record_id}", supersedes=[i for i in ids])
    done = cli("check", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    messages = [
        (f["locator"].rsplit("/", 1)[1], p["message"])
        for f in report["files"]
        for p in f["problems"]
    ]
    cycles = [(name, m) for name, m in messages if "cycle" in m]
    assert cycles == [
        (
            "r0.md",
            "is part of a supersedes cycle: r0 → r1 → r0; 7 records supersede one another: "
            + ", ".join(repr(i) for i in ids),
        )
    ]
    # Self-supersede is still said, once per record.
    assert sum(m == "supersedes itself" for _, m in messages) == 7
    assert len(done.stdout) < 5_000


def test_components_are_found_without_recursion_and_reported_in_linear_output() -> None:
    from reliora_git.search.supersedes import strongly_connected, supersedes_problems

    # A ring of 20,000 records (far deeper than the recursion limit) and a path beside it.
    ring = [f"a{n:06d}" for n in range(20_000)]
    records = [(rid, f"{rid}.md", [ring[(n + 1) % len(ring)]]) for n, rid in enumerate(ring)]
    records += [(f"p{n:06d}", f"p{n:06d}.md", [f"p{n + 1:06d}"]) for n in range(10_000)]
    records.append(("p010000", "p010000.md", ["gone"]))
    found = supersedes_problems(records)
    assert list(found) == ["p010000.md", "a000000.md"]
    [unknown] = found["p010000.md"]
    assert unknown.message == "supersedes 'gone', which no record has"
    [cycle] = found["a000000.md"]
    assert cycle.message.startswith("is part of a supersedes cycle: a000000 → a000001 → ")
    assert len(cycle.message) < 500_000  # the cycle once: linear in the store
    edges = {"b": ["a"], "a": ["b", "c"], "c": ["d"], "d": ["c"], "e": ["e"]}
    assert strongly_connected(edges) == [["a", "b"], ["c", "d"]]


# --- 7. a record reads back as it was saved ----------------------------------------------------

#: Lines the reader could take for structure: headings, fences, bullets, markers, escapes.
TRICKY_LINES = [
    "## Warnings",
    "## Solution",
    "## Notes",
    "##\tVerification",
    "\\## Task",
    "\\\\## Problems",
    "###  deeper",
    "```",
    "```python",
    "~~~",
    "````",
    "- item",
    "* item",
    " - item",
    "-",
    "\\- escaped",
    "  - nested",
    "---",
    "> quote",
    "=======",
    "<<<<<<< HEAD",
    ">>>>>>> branch",
    "",
    "plain words",
    "  indented",
]


def _record_json(store: Store, cli: Cli, record_id: str) -> dict[str, Any]:
    done = cli("show", record_id, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_record_json_keeps_heading_lines_in_their_field(store: Store, cli: Cli) -> None:
    given_record = {
        "title": "Heading-like lines",
        "task": "Paste a log\n## Warnings\n- this is the task, not a warning",
        "solution": "Run:\n```\n## inside a fence\n```\n\\## escaped already",
        "warnings": ["Steps:\n- first\n* second", "```\ncode first\n```"],
        "verification": "It ran.",
    }
    done = cli("record", "--json", "-", input=json.dumps(given_record))
    assert done.returncode == 0, done.stderr
    shown = _record_json(store, cli, json.loads(done.stdout)["id"])
    for key, value in given_record.items():
        assert shown[key] == value, key


def test_record_refuses_an_open_fence_that_would_swallow_later_fields(
    store: Store, cli: Cli
) -> None:
    body = {"title": "Open fence", "task": "t", "solution": "```bash\nmake", "verification": "v"}
    done = cli("record", "--json", "-", input=json.dumps(body))
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_record"
    assert "the field solution opens a code fence (```)" in error["message"]
    assert not list(store.experiences.glob("*.md"))
    # By flags, in a list item: named with its item.
    done = cli(
        "record", "--title", "Open", "--task", "t", "--solution", "s",
        "--warning", "fine", "--warning", "~~~\nnever closed", "--verification", "v",
    )  # fmt: skip
    assert done.returncode == 2
    assert "the field warnings item 2 opens a code fence (~~~)" in done.stderr
    # Last in the file, an open fence swallows nothing: saved as given.
    saved = cli("record", "--title", "Last", "--task", "t", "--solution", "```\nmake")
    assert saved.returncode == 0, saved.stderr


def test_record_flags_keep_every_field(store: Store, cli: Cli) -> None:
    done = cli(
        "record", "--title", "Flags", "--task", "t\n## Solution\nnot the solution",
        "--solution", "the solution\n## Verification\nnot verified", "--problem", "a\n- b",
        "--verification", "verified",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record_id = done.stdout.split()[1]
    shown = _record_json(store, cli, record_id)
    assert shown["task"] == "t\n## Solution\nnot the solution"
    assert shown["solution"] == "the solution\n## Verification\nnot verified"
    assert shown["problems"] == ["a\n- b"]
    assert shown["verification"] == "verified"


def test_update_keeps_every_field(store: Store, cli: Cli) -> None:
    saved = cli("record", "--title", "Update me", "--task", "t", "--solution", "s")
    record_id = saved.stdout.split()[1]
    changes = {
        "solution": "new\n## Warnings\n- injected",
        "addWarnings": ["real\n- still the same warning"],
        "verification": "```\n## in code\n```",
    }
    done = cli("update", record_id, "--json", "-", input=json.dumps(changes))
    assert done.returncode == 0, done.stderr
    shown = _record_json(store, cli, record_id)
    assert shown["solution"] == changes["solution"]
    assert shown["warnings"] == changes["addWarnings"]
    assert shown["verification"] == changes["verification"]
    refused = cli("update", record_id, "--task", "```\nopen", "--add-problem", "p")
    assert refused.returncode == 2
    assert "the field task opens a code fence" in refused.stderr
    assert _record_json(store, cli, record_id)["task"] == "t"


FIELD_TEXT = st.lists(
    st.one_of(st.sampled_from(TRICKY_LINES), st.text(alphabet="ab #-*`~\\<>|=\t", max_size=12)),
    min_size=1,
    max_size=6,
).map("\n".join)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    task=FIELD_TEXT,
    solution=FIELD_TEXT,
    why=FIELD_TEXT,
    warnings=st.lists(FIELD_TEXT, max_size=3),
    verification=FIELD_TEXT,
)
def test_saved_fields_read_back_the_same_or_the_save_names_a_field(
    store: Store, task: str, solution: str, why: str, warnings: list[str], verification: str
) -> None:
    from reliora_git.operations.lessons import reads, writes

    new = Record(
        title="Property",
        task=task if task.strip() else "t",
        solution=solution if solution.strip() else "s",
        why_it_worked=why,
        warnings=warnings,
        verification=verification,
    )
    intended = {
        "task": new.task.strip(),
        "solution": new.solution.strip(),
        "whyItWorked": why.strip(),
        "warnings": [w.strip() for w in warnings if w.strip()],
        "verification": verification.strip(),
    }
    try:
        saved = writes.record(store, new)
    except RelioraError as exc:
        # Refused: it must say which field, never just fail.
        named = [name for name in intended if f"the field {name}" in exc.message]
        assert named, exc.message
        return
    shown = reads.show(store, saved.record.id).document()
    assert {key: shown[key] for key in intended} == intended


# --- 10. lock files ----------------------------------------------------------------------------


def test_lock_files_are_git_ignored_in_a_new_and_an_existing_store(repo: Path, cli: Cli) -> None:
    assert cli("init").returncode == 0
    lock = repo / ".reliora" / "experiences" / ".x.md.lock"
    lock.write_text("")
    assert git(repo, "check-ignore", str(lock.relative_to(repo))).strip()

    # A store made by an older version: its .gitignore lacks the lock line.
    ignore = repo / ".reliora" / ".gitignore"
    ignore.write_text("# mine\nlocal-notes/\n.drafts/\n.*.tmp")
    done = cli("init", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["updated"] == [".reliora/.gitignore: added .*.lock"]
    text = ignore.read_text()
    assert text.startswith("# mine\nlocal-notes/\n.drafts/\n.*.tmp\n")
    assert text.count(".*.lock") == 1
    assert git(repo, "check-ignore", str(lock.relative_to(repo))).strip()
    again = cli("init", "--json")
    assert json.loads(again.stdout)["updated"] == []
    assert ignore.read_text() == text


@pytest.mark.parametrize("kind", ["folder", "symlink"])
def test_a_lock_that_is_not_a_file_says_what_to_remove(
    store: Store, cli: Cli, tmp_path: Path, kind: str
) -> None:
    saved = cli("record", "--title", "Locked", "--task", "t", "--solution", "s")
    record_id = saved.stdout.split()[1]
    lock = store.experiences / f".{record_id}.md.lock"
    if kind == "folder":
        lock.mkdir()
        old = os.stat(lock).st_mtime - 3600
        os.utime(lock, (old, old))  # an old lock would be taken for a stale one
    else:
        lock.symlink_to(tmp_path / "elsewhere")
    commands = (["update", record_id, "--add-warning", "w"], ["retire", record_id, "--reason", "r"])
    for args in commands:
        done = cli(*args)
        assert done.returncode == 2
        assert "try again" not in done.stderr
        command = "rm -r" if kind == "folder" else "rm"
        assert f"{command} {lock}" in done.stderr, done.stderr
        assert f".reliora/experiences/.{record_id}.md.lock" in done.stderr
    assert lock.is_symlink() or lock.is_dir()  # never removed behind the user's back


# --- 10. an invalid record can be repaired -----------------------------------------------------


def test_update_repairs_an_invalid_record_and_refuses_a_still_invalid_result(
    store: Store, cli: Cli
) -> None:
    path = store.experiences / "half-done-lesson.md"
    path.write_text("---\nid: half-done-lesson\ntitle: Half done\n---\n\n## Task\nsomething\n")
    assert cli("check").returncode == 1
    still = cli("update", "half-done", "--title", "Still half done")
    assert still.returncode == 2
    assert "needs a '## Solution' section" in still.stderr
    assert "no experience" not in still.stderr
    assert "Half done" in path.read_text()
    fixed = cli("update", "half-done", "--solution", "finish it")
    assert fixed.returncode == 0, fixed.stderr
    assert cli("check").returncode == 0
    assert _record_json(store, cli, "half-done-lesson")["solution"] == "finish it"

    # No id in the front matter: the file name names it, and the repair adds it.
    nameless = store.experiences / "nameless-one.md"
    nameless.write_text("---\ntitle: Nameless\n---\n\n## Task\nt\n\n## Solution\ns\n")
    done = cli("update", "nameless-one", "--add-warning", "w")
    assert done.returncode == 0, done.stderr
    assert "id: nameless-one" in nameless.read_text()
    assert cli("check").returncode == 0

    # What the reader cannot read field by field is left to edit, which keeps it all.
    broken = store.experiences / "broken-yaml.md"
    broken.write_text("---\nid: broken-yaml\ntitle: [unclosed\n---\n\n## Solution\ns\n")
    refused = cli("update", "broken-yaml", "--title", "x")
    assert refused.returncode == 2
    assert "reliora edit broken-yaml" in refused.stderr


def _editor(tmp_path: Path, python: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n" + python)
    return f"{sys.executable} {script}"


def test_edit_repairs_an_invalid_record_and_keeps_an_invalid_draft(
    store: Store, cli: Cli, tmp_path: Path
) -> None:
    path = store.experiences / "needs-edit.md"
    original = "---\nid: needs-edit\ntitle: [broken\n---\n\n## Task\nt\n"
    path.write_text(original)
    keep_broken = "p.write_text(p.read_text() + '\\n## Solution\\ns\\n')\n"
    refused = cli("edit", "needs-edit", env={"EDITOR": _editor(tmp_path, keep_broken)})
    assert refused.returncode == 2
    assert "your draft is kept at .reliora/.drafts/edit-needs-edit-" in refused.stderr
    assert path.read_text() == original
    repair = (
        "p.write_text(p.read_text().replace('title: [broken', 'title: Fixed')"
        " + '\\n## Solution\\ns\\n')\n"
    )
    done = cli("edit", "needs-e", env={"EDITOR": _editor(tmp_path, repair)})
    assert done.returncode == 0, done.stderr
    assert cli("check").returncode == 0
    assert _record_json(store, cli, "needs-edit")["title"] == "Fixed"


# --- 10. record --supersedes PREFIX ------------------------------------------------------------


def test_record_supersedes_a_prefix_by_its_full_id(store: Store, cli: Cli) -> None:
    old = {"title": "Deploy rollback with kubectl", "task": "roll back", "solution": "kubectl undo"}
    first = json.loads(cli("record", "--json", "-", input=json.dumps(old)).stdout)["id"]
    other = cli("record", "--title", "Deploy canary", "--task", "t", "--solution", "s")
    assert other.returncode == 0

    # The same lesson again: a likely duplicate, unless it is meant to replace the old one.
    twin = {**old, "id": "rollback-twin"}
    again = json.loads(cli("record", "--json", "-", input=json.dumps(twin)).stdout)
    assert [w["id"] for w in again["warnings"]] == [first]
    (store.root / again["locator"]).unlink()

    newer = {**old, "supersedes": ["deploy-r"]}
    done = cli("record", "--json", "-", input=json.dumps(newer))
    assert done.returncode == 0, done.stderr
    saved = json.loads(done.stdout)
    assert saved["warnings"] == []
    assert f"supersedes: [{first}]" in (store.root / saved["locator"]).read_text()
    assert _record_json(store, cli, first)["supersededBy"] == [saved["id"]]

    flags = cli(
        "record", "--title", "Roll back by flags", "--task", "t", "--solution", "s",
        "--supersedes", "deploy-c",
    )  # fmt: skip
    assert flags.returncode == 0, flags.stderr
    assert _record_json(store, cli, flags.stdout.split()[1])["supersedes"][0].startswith(
        "deploy-canary-"
    )

    unknown = cli("record", "--title", "U", "--task", "t", "--solution", "s", "--supersedes", "zz")
    assert unknown.returncode == 2
    assert "no experience with id 'zz'" in unknown.stderr
    ambiguous = cli(
        "record", "--title", "A", "--task", "t", "--solution", "s", "--supersedes", "deploy",
    )  # fmt: skip
    assert ambiguous.returncode == 2
    assert "is ambiguous" in ambiguous.stderr and first in ambiguous.stderr
    itself = {
        "id": "self-made",
        "title": "S",
        "task": "t",
        "solution": "s",
        "supersedes": ["self-made"],
    }
    refused = cli("record", "--json", "-", input=json.dumps(itself))
    assert refused.returncode == 2
    assert "own id" in json.loads(refused.stdout)["error"]["message"]
    assert len(list(store.experiences.glob("*.md"))) == 4  # none by the refused ones


def test_mcp_record_supersedes_a_prefix(store: Store, repo: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    import anyio

    from reliora_git.operations.lessons import writes
    from tests.test_mcp import document, reliora_mcp

    old = writes.record(store, Record(title="Cache warmup order", task="t", solution="s"))
    # The server runs the code under test, whichever PYTHONPATH chose it.
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None

    async def scenario() -> None:
        async with reliora_mcp(repo, env=env) as session:
            result = await session.call_tool(
                "record",
                {
                    "title": "Cache warmup",
                    "task": "t",
                    "solution": "s2",
                    "supersedes": [old.record.id[:8]],
                },
            )
            assert not result.is_error, result
            saved = document(result)
            shown = document(await session.call_tool("show", {"id": saved["id"]}))
            assert shown["supersedes"] == [old.record.id]
            refused = await session.call_tool(
                "record", {"title": "Other", "task": "t", "solution": "s", "supersedes": ["nope"]}
            )
            assert refused.is_error

    anyio.run(scenario)
