"""Guards against each other and against the clock: patterns from pull requests are untrusted.

Through real git and the installed executable: a guard that leaves a ``\\Q`` literal open
can no longer switch another guard off; such a pattern, and one whose RE2 program is too
large, is refused by ``record``, ``update``, ``check`` and ``review``; the guards of a
commit, a review and a check have a time budget that, when spent, is said in one line
naming the slowest guard; an empty match reports a real line or nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git
from tests.test_guards import commit, hooked, lesson, with_lesson, write

__all__ = ["hooked"]  # the fixture: a repository with the hook and a first commit

OPEN_LITERAL = "the pattern opens a literal with \\Q and never closes it with \\E"


def test_a_guard_cannot_quote_away_the_guards_after_it(
    hooked: Path, cli: Cli, write_record: RecordMaker
) -> None:
    # Each harmless alone: `\Qa` quotes "a", `\Qb\E` quotes "b". Joined into one
    # alternation, the first quoted everything up to the second's \E, the trusted
    # `eval\(` guard between them included, and the expression still compiled.
    write_record("a-quote", "Quote a", guards=[{"pattern": "\\Qa"}])
    write_record("b-eval", "No eval", guards=[{"pattern": "eval\\(", "severity": "block"}])
    write_record("c-close", "Quote b", guards=[{"pattern": "\\Qb\\E"}])
    git(hooked, "add", ".reliora")
    assert commit(hooked, "--no-verify", "-m", "lessons").returncode == 0
    git(hooked, "checkout", "-q", "-b", "feature")
    write(hooked, "src/calc.py", "y = eval(z)\nb = 1\n")

    tested = cli.json("guard", "test")
    assert ("src/calc.py", 1, "b-eval") in {
        (f["path"], f["line"], f["record"]) for f in tested["guardFindings"]
    }

    git(hooked, "add", "src/calc.py")
    staged = cli("check", "--staged")
    assert staged.returncode == 1, staged.stdout + staged.stderr
    assert "src/calc.py:1: repeats lesson b-eval: No eval" in staged.stdout
    assert "commit stopped" in staged.stdout

    assert commit(hooked, "--no-verify", "-m", "calc").returncode == 0
    review = cli("review", "main", "feature", "--format", "json")
    assert review.returncode == 1  # the block guard fired
    found = json.loads(review.stdout)["guardFindings"]
    assert ("src/calc.py", 1, "b-eval", "block") in {
        (f["path"], f["line"], f["record"], f["severity"]) for f in found
    }


def test_a_pattern_that_leaves_a_literal_open_is_refused(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    flags = ("--title", "t", "--task", "t", "--solution", "s")
    refused = cli("record", *flags, "--guard", "\\Qabc")
    assert refused.returncode == 2
    assert f"guard 1 (`\\Qabc`): {OPEN_LITERAL}" in refused.stderr
    assert not list(store.experiences.glob("*.md"))

    closed = cli("record", *flags, "--guard", "\\Qabc\\E")  # a closed literal is fine
    assert closed.returncode == 0, closed.stderr
    record_id = closed.stdout.split()[1]
    updated = cli("update", record_id, "--guard", "x\\Q(")
    assert updated.returncode == 2
    assert f"guard 2 (`x\\Q(`): {OPEN_LITERAL}" in updated.stderr

    git(store.root, "add", ".")
    git(store.root, "commit", "-q", "-m", "lesson")
    git(store.root, "checkout", "-q", "-b", "feature")
    write_record("open-quote", "Open quote", guards=[{"pattern": "\\Qa"}])
    checked = cli("check")
    assert checked.returncode == 1
    line = next(x for x in checked.stdout.splitlines() if "open-quote" in x)
    assert line.startswith(".reliora/experiences/open-quote.md:4: error: guard 1 (`\\Qa`): ")
    assert OPEN_LITERAL in line

    git(store.root, "add", ".")
    git(store.root, "commit", "-q", "-m", "open quote", "--no-verify")
    review = json.loads(cli("review", "main", "feature", "--format", "json").stdout)
    problems = review["records"][0]["problems"]
    assert any(OPEN_LITERAL in p["message"] and p["line"] == 4 for p in problems)
    assert review["ok"] is False


def test_a_pattern_whose_program_is_too_large_is_refused(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    # Linear, yet 1.5-3 s a megabyte: 120 of them held a commit for 38 s.
    costly = "(?:.{0,30}e){1,32}@@"
    flags = ("--title", "t", "--task", "t", "--solution", "s")
    refused = cli("record", *flags, "--guard", costly)
    assert refused.returncode == 2
    assert "compiles to 8,709 RE2 instructions, more than 5,000" in refused.stderr
    write_record("costly", "Costly", guards=[{"pattern": costly}])
    checked = cli("check")
    assert checked.returncode == 1
    assert ".reliora/experiences/costly.md:4: error: guard 1 (`(?:.{0,30}e){1,32}@@`)" in (
        checked.stdout
    )
    # An ordinary Unicode class stays well within the limit.
    assert cli("record", *flags, "--guard", "[\\p{L}\\p{N}]{3,}x@@").returncode == 0


def test_the_commits_guards_stop_at_their_budget_and_say_which_was_slowest(
    hooked: Path, cli: Cli
) -> None:
    record_id = with_lesson(hooked, cli)  # one guard, `moment`, warn
    write(hooked, "a.js", "import moment from 'moment'\n")
    write(hooked, "b.js", "import moment from 'moment'\n")
    git(hooked, "add", "a.js", "b.js")
    both = cli.json("check", "--staged")
    assert [f["path"] for f in both["guardFindings"]] == ["a.js", "b.js"]
    assert both["guardBudget"] is None

    spent = {"RELIORA_GUARD_BUDGET": "0"}  # the first search spends it all
    done = cli("check", "--staged", env=spent)
    assert done.returncode == 0, done.stderr  # a warn guard; the budget never blocks
    assert f"a.js:1: repeats lesson {record_id}" in done.stdout
    assert "b.js:1" not in done.stdout
    stopped = [line for line in done.stdout.splitlines() if line.startswith("guards stopped")]
    assert len(stopped) == 1
    assert stopped[0].startswith("guards stopped: their 0 s for a commit ran out (")
    assert f"the slowest was guard 1 of lesson {record_id} (`moment`, " in stopped[0]
    assert "1 of 2 files not searched by every guard (RELIORA_GUARD_BUDGET sets" in stopped[0]

    as_json = json.loads(cli("check", "--staged", "--json", env=spent).stdout)
    assert [f["path"] for f in as_json["guardFindings"]] == ["a.js"]
    budget = as_json["guardBudget"]
    assert budget["slowest"]["record"] == record_id and budget["slowest"]["guard"] == 1
    assert (budget["filesNotSearchedByEveryGuard"], budget["files"], budget["guards"]) == (1, 2, 1)

    hook = subprocess.run(
        ["git", "commit", "-q", "-m", "code"],
        cwd=hooked,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **spent},
    )
    assert hook.returncode == 0
    assert "guards stopped: their 0 s for a commit ran out" in hook.stdout + hook.stderr


def test_review_and_check_stop_at_their_budget_and_review_fails(store: Store, cli: Cli) -> None:
    record_id = lesson(cli, "--guard", "moment")
    git(store.root, "add", ".")
    git(store.root, "commit", "-q", "-m", "lesson")
    git(store.root, "checkout", "-q", "-b", "feature")
    write(store.root, "a.js", "import moment from 'moment'\n")
    write(store.root, "b.js", "import moment from 'moment'\n")
    git(store.root, "add", ".")
    git(store.root, "commit", "-q", "-m", "code", "--no-verify")
    assert cli("review", "main", "feature").returncode == 0  # warn findings only

    spent = {"RELIORA_GUARD_BUDGET": "0"}
    review = cli("review", "main", "feature", "--format", "json", env=spent)
    assert review.returncode == 1  # a review that did not look is no pass
    budget = json.loads(review.stdout)["guardBudget"]
    assert budget["slowest"]["record"] == record_id
    assert budget["filesNotSearchedByEveryGuard"] == 1
    text = cli("review", "main", "feature", "--format", "text", env=spent)
    assert "error: guards stopped: their 0 s for a review ran out" in text.stdout
    markdown = cli("review", "main", "feature", env=spent)
    assert "**guards stopped: their 0 s for a review ran out" in markdown.stdout
    github = cli("review", "main", "feature", "--format", "github", env=spent).stdout
    assert "::error title=guards stopped::guards stopped: their 0 s for a review ran out" in github

    checked = cli("check", "--json", env=spent)
    assert checked.returncode == 0  # a warning
    problems = {f["id"]: f["problems"] for f in json.loads(checked.stdout)["files"]}
    assert any(
        p["severity"] == "warning"
        and p["message"].startswith("guards stopped: their 0 s for a check of HEAD's code")
        for p in problems[record_id]
    )


def test_an_empty_match_reports_a_real_line_or_nothing(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write(store.root, "src/one.py", "x = 1\n")
    flags = ("--title", "t", "--task", "t", "--solution", "s")
    refused = cli("record", *flags, "--guard", "$")
    assert refused.returncode == 2
    assert "src/one.py:1: x = 1" in refused.stderr
    assert "src/one.py:2" not in refused.stderr  # a one-line file has no line 2

    write(store.root, "src/two.py", "a\nb\n")
    write(store.root, "src/open.py", "a\nb")  # no newline at the end
    write(store.root, "src/empty.py", "")
    for n, pattern in enumerate(("^", "$", "x*")):
        path = write_record(f"every-line-{n}", "Every line", guards=[{"pattern": pattern}])
        found = cli.json("guard", "test", f"every-line-{n}")["guardFindings"]
        assert sorted((f["path"], f["line"]) for f in found) == [
            ("src/one.py", 1),
            ("src/open.py", 1),
            ("src/open.py", 2),
            ("src/two.py", 1),
            ("src/two.py", 2),
        ], pattern
        path.unlink()
