"""`review` shows the guards a pull request brings, and fails when one already matches the code.

A record added with a `block` guard `^` matches every line: once merged it stops every
commit. Review names each guard a change adds, modifies or turns on (pattern, files,
severity) in every format, escaped and masked like other record text, runs it over all
of head's code, and exits 1 when it matches there. Real branches, the installed CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git
from tests.test_guards import lesson, write

#: A GitHub token assembled from pieces (never a real one), as test_review_withholding does.
TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5b"


def _branch_with(root: Path, files: dict[str, str]) -> None:
    """Commit ``files`` on main, then start branch ``feature`` from it."""
    for path, text in files.items():
        write(root, path, text)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base", "--no-verify")
    git(root, "checkout", "-q", "-b", "feature")


def _commit(root: Path) -> None:
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "change", "--no-verify")


def test_a_guard_that_matches_heads_code_is_shown_and_fails_the_review(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    _branch_with(store.root, {"README.md": "hello\n", "src/app.py": "x = 1\ny = 2\n"})
    write_record("match-all", "Harmless", guards=[{"pattern": "^", "severity": "block"}])
    _commit(store.root)

    done = cli("review", "main", "feature", "--format", "json")
    assert done.returncode == 1
    review = json.loads(done.stdout)
    assert review["ok"] is False
    (record,) = review["records"]
    (guard,) = record["guards"]
    assert {k: guard[k] for k in ("record", "guard", "change", "pattern", "paths")} == {
        "record": "match-all",
        "guard": 1,
        "change": "added",
        "pattern": "^",
        "paths": [],
    }
    assert (guard["severity"], guard["runs"], guard["moreMatches"]) == ("block", True, False)
    assert [(m["path"], m["line"], m["text"]) for m in guard["matchesHead"]] == [
        ("README.md", 1, "hello"),
        ("src/app.py", 1, "x = 1"),
        ("src/app.py", 2, "y = 2"),
    ]
    errors = [p["message"] for p in record["problems"] if p["severity"] == "error"]
    assert errors == [
        "guard 1 (`^`) already matches head's code (README.md:1, src/app.py:1, src/app.py:2): "
        "once merged it fires on every commit that touches those lines. A guard describes a "
        "mistake the code does not contain: fix those lines in this change, or narrow the "
        "guard's pattern or paths"
    ]

    markdown = cli("review", "main", "feature")
    assert markdown.returncode == 1
    assert "**1 guard(s) this change brings already match head's code**" in markdown.stdout
    assert (
        "- **guard 1 added, block:** pattern ^ in every file; **already matches head's "
        "code:** `README.md:1`, `src/app.py:1`, `src/app.py:2`"
    ) in markdown.stdout

    text = cli("review", "main", "feature", "--format", "text")
    assert text.returncode == 1
    assert "guard 1 added, block: pattern ^ in every file" in text.stdout
    assert "already matches head's code: README.md:1, src/app.py:1, src/app.py:2" in text.stdout

    github = cli("review", "main", "feature", "--format", "github")
    assert github.returncode == 1
    assert github.stdout.startswith(
        "::error file=.reliora/experiences/match-all.md,title=guard 1 already matches head's "
        "code::guard 1 (`^`) already matches head's code (README.md:1, "
    )

    assert "already matches head's code" in cli("review", "--help").stdout


def test_guards_added_modified_turned_on_or_off_are_listed_and_pass_when_they_match_nothing(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    root = store.root
    promoted = lesson(cli, "--guard", "moment")  # warn, then block on the branch
    write_record("revived", "Revived", status="retired", guards=["leftpad\\("])
    kept = lesson(cli, "--guard", "kept_call", title="Kept")  # its guard stays as it was
    _branch_with(root, {"src/app.js": "const a = 1\n"})
    assert cli("update", kept, "--title", "Kept, retitled").returncode == 0
    blocked = json.dumps({"guards": [{"pattern": "moment", "severity": "block"}]})
    assert cli("update", promoted, "--json", "-", input=blocked).returncode == 0
    revived = store.experiences / "revived.md"
    revived.write_text(
        revived.read_text(encoding="utf-8").replace('"retired"', '"active"'), encoding="utf-8"
    )
    write_record("fresh", "Fresh", guards=[{"pattern": "never_here", "paths": ["src/**"]}])
    write_record("asleep", "Asleep", status="retired", guards=["const"])
    _commit(root)

    done = cli("review", "main", "feature", "--format", "json")
    assert done.returncode == 0, done.stdout  # nothing they match is in head's code
    records = json.loads(done.stdout)["records"]
    assert {r["id"] for r in records} == {promoted, kept, "revived", "fresh", "asleep"}
    listed = {
        g["record"]: (g["change"], g["pattern"], g["paths"], g["severity"], g["runs"])
        for r in records
        for g in r["guards"]
    }
    assert listed == {
        promoted: ("modified", "moment", [], "block", True),
        "revived": ("turned on", "leftpad\\(", [], "warn", True),
        "fresh": ("added", "never_here", ["src/**"], "warn", True),
        "asleep": ("added", "const", [], "warn", False),  # retired: it never runs
    }
    markdown = cli("review", "main", "feature").stdout
    assert "- **guard 1 added, warn:** pattern const in every file _(does not run" in markdown
    assert "- **guard 1 turned on, warn:** pattern leftpad\\\\\\( in every file" in markdown


def test_a_guards_pattern_is_escaped_and_masked_in_every_format(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    _branch_with(store.root, {"README.md": "hello\n"})
    pattern = f"<img src=x onerror=alert(1)>|@someone|{TOKEN}"
    write_record("hostile", "Hostile", guards=[{"pattern": pattern, "paths": ["<b>/*.js"]}])
    _commit(store.root)
    middle = TOKEN[len(TOKEN) // 2 - 4 : len(TOKEN) // 2 + 4]
    outputs = {
        fmt: cli("review", "main", "feature", "--format", fmt).stdout
        for fmt in ("markdown", "text", "json")
    }
    for fmt, out in outputs.items():
        assert middle not in out, fmt
    markdown = outputs["markdown"]
    assert "pattern &lt;img src=x onerror=alert\\(1\\)&gt;\\|@&#8203;someone\\|" in markdown
    assert "<img" not in markdown and "@someone" not in markdown
    assert "in &lt;b&gt;/\\*\\.js" in markdown
    (guard,) = json.loads(outputs["json"])["records"][0]["guards"]
    assert guard["pattern"].startswith("<img src=x onerror=alert(1)>|@someone|")
    assert TOKEN not in guard["pattern"]
