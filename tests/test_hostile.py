"""Hostile input: ids and paths, symlinked store folders, escape characters, alias bombs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from reliora_git.operations.lessons import reads, writes
from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import Record
from reliora_git.records.parse import parse_record
from reliora_git.storage.catalog import read_entry
from reliora_git.storage.store import Store, write_new
from tests.bad_corpus import BAD_RECORDS
from tests.conftest import Cli, RecordMaker

HOSTILE_IDS = ["../../etc/x", "a/b", "..", "UPPER", "x.md", "-leading", "a" * 81, "", " x"]


def _tree(folder: Path, skip: Path) -> dict[str, bytes | str]:
    """Every file under ``folder`` (except ``skip``) with its content or link target."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        if path == skip or skip in path.parents or ".git" in path.parts:
            continue
        if path.is_symlink():
            found[str(path)] = os.readlink(path)
        elif path.is_file():
            found[str(path)] = path.read_bytes()
        else:
            found[str(path)] = "<dir>"
    return found


# --- ids and paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["../../etc/x", "a/b", "UPPER", "etc-x/../../y"])
def test_show_and_feedback_reject_a_hostile_id_with_a_clear_error(
    store: Store, write_record: RecordMaker, cli: Cli, bad_id: str
) -> None:
    write_record("etc-x", "A record a prefix could reach")
    for command in (["show", bad_id], ["feedback", bad_id, "success"]):
        done = cli(*command)
        assert done.returncode == 2, (command, done.stdout)
        assert done.stderr.count("\n") == 1, done.stderr
        assert "is not a record id" in done.stderr
        assert "Traceback" not in done.stderr
    assert not store.feedback.exists() or not any(store.feedback.rglob("*.md"))


@pytest.mark.parametrize("bad_id", [*HOSTILE_IDS, "a\x00b", "ok\n", "ok\x1b[2J"])
def test_ids_are_rejected_before_the_store_is_read(tmp_path: Path, bad_id: str) -> None:
    # No .reliora/ here at all: an id that got as far as the file system would fail
    # differently (unknown id, no such folder), not as an invalid id.
    nowhere = Store(tmp_path / "no-store-here")
    for call in (
        lambda: reads.show(nowhere, bad_id),
        lambda: writes.feedback(nowhere, bad_id, "success"),
    ):
        with pytest.raises(RelioraError) as caught:
            call()
        assert caught.value.code == "invalid_id"
    assert not (tmp_path / "no-store-here").exists()


def test_the_error_for_a_hostile_id_is_one_clean_line(store: Store, cli: Cli) -> None:
    done = cli("show", "\x1b[31mred\u202eevil")
    assert done.returncode == 2
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr
    assert done.stderr.startswith("reliora: error: ") and done.stderr.count("\n") == 1


def test_a_record_whose_id_is_a_path_is_invalid_and_never_becomes_one(
    store: Store, cli: Cli, tmp_path: Path
) -> None:
    (store.experiences / "hostile.md").write_bytes((BAD_RECORDS / "hostile-id.md").read_bytes())
    before = _tree(tmp_path, skip=store.path)
    for command in (
        ["feedback", "../../outside", "success"],
        ["feedback", "hostile", "success"],  # the file name is not its id
        ["show", "outside"],
    ):
        done = cli(*command)
        assert done.returncode == 2, (command, done.stdout)
    assert _tree(tmp_path, skip=store.path) == before
    assert not any(store.feedback.rglob("*.md"))


def test_write_new_never_writes_outside_the_store(store: Store, tmp_path: Path) -> None:
    before = _tree(tmp_path, skip=store.path)
    for target in (
        store.root / "escaped.md",
        store.feedback / ".." / ".." / "escaped.md",
        store.feedback / "x" / ".." / ".." / ".." / "new-folder" / "escaped.md",
        tmp_path / "elsewhere" / "escaped.md",
    ):
        with pytest.raises(RelioraError, match="refusing to write outside"):
            write_new(target, "text", store)
    assert _tree(tmp_path, skip=store.path) == before


@pytest.mark.parametrize("linked", ["feedback", "feedback/the-record", ".reliora"])
def test_feedback_refuses_to_write_through_a_symlinked_folder(
    store: Store, write_record: RecordMaker, cli: Cli, tmp_path: Path, linked: str
) -> None:
    write_record("the-record", "A record")
    outside = tmp_path / "outside"
    outside.mkdir()
    if linked == ".reliora":
        # The whole store is a link (committed to point at, say, ~/.ssh).
        real = tmp_path / "real-store"
        store.path.rename(real)
        store.path.symlink_to(real, target_is_directory=True)
        outside = real
    else:
        link = store.path / linked
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.exists():
            shutil.rmtree(link)
        link.symlink_to(outside, target_is_directory=True)
    before = _tree(outside, skip=outside / "never")
    done = cli("feedback", "the-record", "success")
    assert done.returncode == 2, done.stdout
    # A linked store is refused before anything is read; a linked folder inside, at the write.
    refusal = (
        "is a symbolic link (not followed)"
        if linked == ".reliora"
        else ("refusing to write through a symbolic link")
    )
    assert refusal in done.stderr
    assert _tree(outside, skip=outside / "never") == before


def test_record_refuses_a_symlinked_experiences_folder(
    store: Store, cli: Cli, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(store.experiences)
    store.experiences.symlink_to(outside, target_is_directory=True)
    done = cli("record", "--title", "T", "--task", "t", "--solution", "s")
    assert done.returncode == 2, done.stdout
    assert "symbolic link" in done.stderr
    assert list(outside.iterdir()) == []


def test_record_never_overwrites_an_existing_record(
    store: Store, write_record: RecordMaker, cli: Cli
) -> None:
    path = write_record("taken-id", "The original")
    original = path.read_bytes()
    done = cli(
        "record",
        "--json",
        "-",
        input='{"id": "taken-id", "title": "An impostor", "task": "t", "solution": "s"}',
    )
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "exists"
    with pytest.raises(RelioraError, match="already exists"):
        write_new(path, "replacement", store)
    assert path.read_bytes() == original


def test_record_refuses_text_that_would_not_read_back(store: Store, cli: Cli) -> None:
    # A solution line that looks like a conflict marker would make the saved file
    # unreadable; saving it would silently lose the record from every search.
    done = cli("record", "--title", "Merge", "--task", "t", "--solution", "<<<<<<< HEAD")
    assert done.returncode == 2
    assert "would not read back" in done.stderr
    assert not any(store.experiences.glob("*.md"))


# --- hostile content -------------------------------------------------------------------------

ANSI_TITLE = "Deploy \x1b[31mred\x1b[0m \x1b]0;owned\x07 \u202egnp.exe\u202c \u2066iso\u2069 done"


def test_escape_characters_are_stripped_on_a_terminal_and_kept_in_json(
    store: Store, cli: Cli
) -> None:
    done = cli(
        "record",
        "--json",
        "-",
        input=json.dumps(
            {
                "title": ANSI_TITLE,
                "tags": ["deploy\x1b[2J"],
                "problems": ["deploy broke \x1b[1A\x1b[2K overwritten"],
                "solution": "fix \u202e it",
                "projectContext": "ci \x1b[5m",
            }
        ),
    )
    assert done.returncode == 0, done.stderr
    record_id = json.loads(done.stdout)["id"]
    human = [
        cli("search", "deploy"),
        cli("show", record_id),
        cli("list"),
    ]
    for done in human:
        assert done.returncode == 0, done.stderr
        for bad in ("\x1b", "\x07", "\u202e", "\u202c", "\u2066", "\u2069"):
            assert bad not in done.stdout, (done.args, bad)
        assert "Deploy [31mred[0m ]0;owned gnp.exe iso done" in done.stdout
    assert cli.json("show", record_id)["title"] == ANSI_TITLE
    assert cli.json("search", "deploy")["results"][0]["title"] == ANSI_TITLE
    assert [item["title"] for item in cli.json("list")] == [ANSI_TITLE]


def test_a_query_with_escape_characters_is_echoed_clean(store: Store, cli: Cli) -> None:
    done = cli("search", "nothing\x1b[2Jmatches")
    assert done.returncode == 0
    assert "\x1b" not in done.stdout and "No experiences match" in done.stdout


def test_alias_bomb_is_rejected_without_expanding() -> None:
    text = (BAD_RECORDS / "alias-bomb.md").read_text(encoding="utf-8")
    with pytest.raises(RecordError, match="aliases that expand") as caught:
        parse_record(text, "bomb.md")
    assert caught.value.line == 2
    # The same bomb under an unknown key (kept verbatim on rewrite) or in a list item.
    for key in ("extra", "paths", "supersedes", "author"):
        hidden = text.replace("tags: *i", f"{key}: *i")
        with pytest.raises(RecordError, match="aliases that expand"):
            parse_record(hidden, "bomb.md")


def test_a_few_small_aliases_are_still_fine() -> None:
    text = (
        "---\nid: aliases\ntitle: &t Small aliases\nproject_context: *t\n"
        "tags: &tags [a, b]\nextra: *tags\n---\n## Task\nt\n## Solution\ns\n"
    )
    parsed = parse_record(text, "aliases.md")
    assert parsed.record.project_context == "Small aliases"
    assert parsed.record.extra_meta == {"extra": ["a", "b"]}


@pytest.mark.parametrize(
    "front",
    [
        "title: !!python/object/apply:os.system ['touch pwned']",
        "title: !!python/object:os.system {}",
        "title: !!python/name:os.system ''",
        "extra: !!python/object/new:subprocess.Popen [['touch', 'pwned']]",
    ],
)
def test_python_tags_construct_nothing(
    front: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = f"---\nid: tagged\n{front}\n---\n## Task\nt\n## Solution\ns\n"
    with pytest.raises(RecordError, match="could not determine a constructor"):
        parse_record(text, "tagged.md")
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("front", "fragment"),
    [
        ("title: 42", "'title' must be text, not a number"),
        ("title: 4.2", "'title' must be text, not a number"),
        ("title: no", "'title' must be text, not a boolean"),
        ("title: 2026-12-02", "'title' must be text, not a date"),
        ("title: Fine\nauthor: 7", "'author' must be text, not a number"),
        ("title: Fine\nconfidence: 1", "'confidence' must be text"),
        ("title: Fine\ntags: {a: 1}", "'tags' must be a list of strings"),
        ("title: Fine\ntags: [[nested]]", "'tags' must be a list of strings"),
    ],
)
def test_wrongly_typed_fields_are_errors_on_their_line(front: str, fragment: str) -> None:
    text = f"---\nid: typed\n{front}\n---\n## Task\nt\n## Solution\ns\n"
    parsed = parse_record(text, "typed.md")
    errors = [p for p in parsed.problems if p.severity == "error"]
    assert [p.message for p in errors if fragment in p.message], parsed.problems
    assert errors[0].line == 2 + front.count("\n") + 1


def test_numbers_in_a_tag_list_are_kept_with_a_warning() -> None:
    text = "---\nid: typed\ntitle: T\ntags: [python, 3.10]\n---\n## Task\nt\n## Solution\ns\n"
    parsed = parse_record(text, "typed.md")
    assert parsed.record.tags == ["python", "3.1"]
    assert [p.severity for p in parsed.problems] == ["warning"]
    assert "quote it" in parsed.problems[0].message


def test_a_lone_equals_line_is_markdown_not_a_conflict() -> None:
    text = "---\nid: setext\ntitle: T\n---\n## Task\nHeading\n=======\n## Solution\ns\n"
    assert parse_record(text, "setext.md").record.task == "Heading\n======="


def test_ten_thousand_repeated_sections_merge_into_one_warning() -> None:
    body = "## Solution\nstep\n" * 10_000
    parsed = parse_record(f"---\nid: many\ntitle: T\n---\n## Task\nt\n{body}", "many.md")
    assert parsed.record.solution == "\n\n".join(["step"] * 10_000)
    assert len(parsed.problems) == 1


def test_a_long_heading_line_parses(tmp_path: Path) -> None:
    # 200,000 spaces inside a heading made the old regex backtrack for hours.
    body = "## Task" + " " * 200_000 + "#\nt\n## Solution\ns\n"
    parsed = parse_record(f"---\nid: long\ntitle: T\n---\n{body}", "long.md")
    assert parsed.record.task == "t"


def test_a_record_with_ten_thousand_tags_is_refused_quickly_and_the_rest_is_searchable(
    store: Store, cli: Cli
) -> None:
    tags = ", ".join(f"tag{n}" for n in range(10_000))
    path = store.experiences / "many.md"
    path.write_text(
        f"---\nid: many\ntitle: Many tags\ntags: [{tags}]\n---\n## Task\nt\n## Solution\ns\n",
        encoding="utf-8",
    )
    for n in range(30):
        (store.experiences / f"other-{n}.md").write_text(
            f"---\nid: other-{n}\ntitle: Other record tag{n}\ntags: [tag{n}]\n---\n"
            f"## Task\nt\n## Solution\ns {n}\n",
            encoding="utf-8",
        )
    # Ten thousand tags would fill every result and brief: over the field caps, the record is
    # invalid (named on one line), and reading it costs the others nothing.
    found = cli.json("search", "tag29")
    assert [r["id"] for r in found["results"]] == ["other-29"]
    done = cli("check", str(path), "--json")
    assert done.returncode == 1, done.stdout
    assert "10000 tags; at most 20" in done.stdout


def test_the_record_api_keeps_json_titles_verbatim(store: Store) -> None:
    saved = writes.record(store, Record(title=ANSI_TITLE, task="t", solution="s", tags=["x"]))
    shown = reads.show(store, saved.record.id).record
    assert shown.title == ANSI_TITLE


@pytest.mark.parametrize(
    "front",
    [
        "created: 2026-13-45",
        "id: !!timestamp q",
        "title: !!int abc",
        "title: !!float x",
        "title: !!binary '###'",
        "tags: !!set {a, b}\ntitle: !!timestamp 2026-02-30",
        "title: " + "[" * 5000 + "]" * 5000,
    ],
)
def test_scalars_the_safe_loader_chokes_on_are_record_errors(front: str) -> None:
    # Found by fuzzing: PyYAML's safe constructors raise ValueError or AttributeError.
    text = f"---\nid: scalar\n{front}\n---\n## Task\nt\n## Solution\ns\n"
    try:
        parsed = parse_record(text, "scalar.md")
    except RecordError as exc:
        assert exc.path == "scalar.md"
    else:
        assert any(p.severity == "error" for p in parsed.problems), parsed.problems


@pytest.mark.parametrize(
    "bad_path", ["../../etc/passwd", "/etc/passwd", "src/../../x", "C:/x", "a\\\\..\\\\b"]
)
def test_a_record_path_that_leaves_the_repository_is_invalid(bad_path: str) -> None:
    text = (
        f"---\nid: pathy\ntitle: T\npaths: [src/ok.py, {json.dumps(bad_path)}]\n---\n"
        "## Task\nt\n## Solution\ns\n"
    )
    entry = read_entry("pathy.md", text)
    assert not entry.usable
    error = entry.first_error()
    assert "not a relative path inside the repository" in error.message
    assert error.line == 4


def test_edit_refuses_a_symlinked_drafts_folder(store: Store, cli: Cli, tmp_path: Path) -> None:
    outside = tmp_path / "outside-drafts"
    outside.mkdir()
    (store.path / ".drafts").symlink_to(outside, target_is_directory=True)
    done = cli("record", "--edit", env={"EDITOR": "true", "VISUAL": ""})
    assert done.returncode == 2
    assert "symbolic link" in done.stderr
    assert list(outside.iterdir()) == []


def test_from_file_reads_at_most_one_mib(store: Store, cli: Cli, tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_text("---\nid: big\ntitle: Big\n---\n## Task\n" + "x" * 1_100_000, "utf-8")
    done = cli("record", "--from-file", str(big))
    assert done.returncode == 2
    assert "larger than 1024 KiB" in done.stderr


def test_a_symlinked_config_is_refused_not_followed(store: Store, cli: Cli, tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("search_limit = 1\n", encoding="utf-8")
    config = store.path / "config.toml"
    config.unlink()
    config.symlink_to(outside)
    done = cli("search", "anything")
    assert done.returncode == 2
    assert "config.toml: cannot read settings: is a symbolic link" in done.stderr


@pytest.mark.parametrize("swap", ["symlink", "fifo", "grown"])
def test_a_file_swapped_after_listing_is_refused_not_followed(
    store: Store, write_record: RecordMaker, tmp_path: Path, swap: str
) -> None:
    from reliora_git.storage.store import MAX_RECORD_BYTES, read_text, walk_markdown

    path = write_record("swapped", "Listed as a regular file")
    (listed,) = walk_markdown(store, store.experiences)
    outside = tmp_path / "outside-secret.md"
    outside.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    if swap == "grown":
        # Listed small, then grown past the limit before the read.
        path.write_bytes(path.read_bytes() + b"x" * MAX_RECORD_BYTES)
        expected = "larger than 1024 KiB"
    else:
        path.unlink()
        if swap == "symlink":
            path.symlink_to(outside)
            expected = "symbolic link"
        else:
            os.mkfifo(path)  # a naive open() would block here for ever
            expected = "not a regular file"
    with pytest.raises(RecordError, match=expected):
        read_text(listed)


def test_thousands_of_unknown_sections_give_a_bounded_list_of_warnings() -> None:
    body = "".join(f"## Heading {n}\ntext\n" for n in range(5_000))
    parsed = parse_record(
        f"---\nid: many\ntitle: T\n---\n## Task\nt\n## Solution\ns\n{body}", "many.md"
    )
    assert len(parsed.record.extra_sections) == 5_000  # kept for a rewrite
    assert len(parsed.problems) == 21
    assert parsed.problems[-1].message == "… and 4980 more unknown sections"


def test_check_refuses_a_path_outside_the_store(store: Store, cli: Cli, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nid: secret\ntitle: Do not read me\n---\n", encoding="utf-8")
    for given in (str(secret), ".reliora/../../secret.md", "../secret.md"):
        done = cli("check", given)
        assert done.returncode == 2, (given, done.stdout)
        assert "Do not read me" not in done.stdout + done.stderr
