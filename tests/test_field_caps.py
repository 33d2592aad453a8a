"""Caps on the fields briefs show: a record cannot fill an agent's context with one title."""

from __future__ import annotations

import json

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker


def test_record_refuses_a_huge_title(store: Store, cli: Cli) -> None:
    document = {"title": "x" * 9600, "problems": ["p"], "solution": "s"}
    done = cli("record", "--json", "-", input=json.dumps(document))
    assert done.returncode == 2
    assert "title is 9600 characters; at most 200" in json.loads(done.stdout)["error"]["message"]


def test_check_and_the_brief_leave_out_a_record_over_the_caps(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record(
        "huge-title",
        "Invoice retries " + "very " * 2000 + "long",
        "## Problems\n- invoice retries are rate limited\n\n## Solution\nBack off.\n",
    )
    write_record(
        "fine",
        "Invoice retries need backoff",
        "## Problems\n- invoice retries are rate limited\n\n## Solution\nBack off with jitter.\n",
    )
    report = cli("check", "--json")
    assert report.returncode == 1
    errors = [
        f for f in json.loads(report.stdout)["files"] if f["locator"].endswith("huge-title.md")
    ]
    assert errors and "at most 200" in json.dumps(errors)
    brief = cli.json("brief", "invoice retries are rate limited")
    assert [x["id"] for x in brief["lessons"]] == ["fine"]
