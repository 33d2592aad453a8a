"""The record format (SPEC.md §3): tolerant reading, strict validation, faithful rewriting."""

from __future__ import annotations

import pytest

from reliora_git.records.errors import RecordError
from reliora_git.records.parse import parse_record, render_record
from reliora_git.records.validate import validate

FULL = """---
id: flaky-pytest-timeouts-3f9a1c
title: Flaky pytest timeouts on CI runners
tags: [pytest, ci, timeouts]
project_context: reliora-git python cli
confidence: high
created: 2026-12-02
status: active
supersedes: []
paths: [tests/conftest.py]
reviewer: alice
---

## Task
Make the integration suite pass reliably on shared CI runners.

## PROBLEMS
- pytest-timeout killed tests at random
  on 2-core runners
* retries hid the failure

## Solution
Raise the per-test timeout only for the git-fixture tests:

```python
## this is a comment in code, not a heading
timeout = 60
```

## why it worked
The slow part was `git init` in each fixture.

## Failed attempts
pytest-rerunfailures masked the problem

## Warnings
- do not raise the global timeout

## Applicability
Python projects whose tests create real git repositories.

## Verification
Passed 50 times in a row.

## Links
- https://example.com
"""


def test_full_record_is_read_field_by_field() -> None:
    parsed = parse_record(FULL, ".reliora/experiences/x.md")
    record = parsed.record
    assert record.id == "flaky-pytest-timeouts-3f9a1c"
    assert record.tags == ["pytest", "ci", "timeouts"]
    assert record.created == "2026-12-02"  # a YAML date becomes ISO text
    assert record.confidence == "high"
    assert record.paths == ["tests/conftest.py"]
    assert record.problems == [
        "pytest-timeout killed tests at random\non 2-core runners",
        "retries hid the failure",
    ]
    assert "## this is a comment in code" in record.solution
    assert record.why_it_worked.startswith("The slow part")
    assert record.failed_attempts == ["pytest-rerunfailures masked the problem"]  # no bullets
    assert record.extra_meta == {"reviewer": "alice"}
    assert record.extra_sections == [("Links", "- https://example.com")]
    assert [p.message for p in parsed.problems] == [
        "unknown section '## Links' (kept as is; known: Task, Problems, Solution, "
        "Why it worked, Failed attempts, Warnings, Applicability, Verification, Asked as)"
    ]
    assert parsed.problems[0].severity == "warning"
    assert parsed.problems[0].line is not None
    assert FULL.splitlines()[parsed.problems[0].line - 1] == "## Links"
    assert validate(record) == []


def test_rewrite_keeps_unknown_keys_and_sections_and_round_trips() -> None:
    record = parse_record(FULL).record
    text = render_record(record)
    assert "reviewer: alice" in text
    assert "## Links\n- https://example.com" in text
    again = parse_record(text).record
    assert again == record
    assert render_record(again) == text


def test_comma_string_tags_are_split() -> None:
    record = parse_record("---\nid: a\ntitle: T\ntags: git, hooks ,ci\n---\n").record
    assert record.tags == ["git", "hooks", "ci"]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("no front matter here\n", "no YAML front matter", 1),
        ("---\ntitle: [unclosed\n---\n", "not valid YAML", 3),
        ("---\n- a\n- b\n---\n", "not a mapping", 2),
        ("---\nid: a\n<<<<<<< HEAD\ntitle: x\n=======\n", "conflict marker", 3),
    ],
)
def test_unreadable_records_raise_with_a_line(text: str, message: str, line: int) -> None:
    with pytest.raises(RecordError, match=message) as caught:
        parse_record(text, "x.md")
    assert caught.value.line == line
    assert caught.value.path == "x.md"


@pytest.mark.parametrize(
    ("front", "body", "message"),
    [
        ("id: a", "## Solution\ns\n## Task\nt\n", "missing required field 'title'"),
        ("id: a\ntitle: T", "## Solution\ns\n", "needs a '## Task' or a '## Problems' section"),
        ("id: a\ntitle: T", "## Task\nt\n", "needs a '## Solution' section"),
        ("title: T", "## Task\nt\n## Solution\ns\n", "missing required field 'id'"),
        ("id: Not-Valid\ntitle: T", "## Task\nt\n## Solution\ns\n", "must match"),
        ("id: a\ntitle: T\nconfidence: sure", "## Task\nt\n## Solution\ns\n", "confidence"),
        ("id: a\ntitle: T\nstatus: done", "## Task\nt\n## Solution\ns\n", "status"),
    ],
)
def test_validation_names_what_is_missing(front: str, body: str, message: str) -> None:
    record = parse_record(f"---\n{front}\n---\n{body}").record
    assert any(message in p.message for p in validate(record))


def test_wrongly_typed_fields_are_problems_not_crashes() -> None:
    parsed = parse_record("---\nid: a\ntitle: T\ntags: {a: 1}\nauthor: [x]\n---\n## Task\nt\n")
    messages = [p.message for p in parsed.problems]
    assert "'tags' must be a list of strings" in messages
    assert any("'author' must be a single value" in m for m in messages)
    assert parsed.record.tags == []


def test_bom_and_crlf_are_accepted() -> None:
    text = "\ufeff---\r\nid: a\r\ntitle: T\r\n---\r\n## Task\r\nt\r\n## Solution\r\ns\r\n"
    record = parse_record(text).record
    assert (record.id, record.task, record.solution) == ("a", "t", "s")
    assert validate(record) == []
