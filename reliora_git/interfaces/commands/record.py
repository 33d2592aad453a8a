"""``record``: write a new experience from flags, a file, JSON on stdin, or an editor."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from reliora_git.interfaces.commands.common import (
    AllFlag,
    RepoOption,
    optional_value,
    reporting,
)
from reliora_git.interfaces.commands.guard import (
    AllowExistingFlag,
    BlockFlag,
    GuardExcludeOption,
    GuardMessageOption,
    GuardOption,
    GuardPathOption,
    guards_from_flags,
)
from reliora_git.interfaces.commands.recording import record_from_stdin, report_saved
from reliora_git.interfaces.commands.reporting import wrote
from reliora_git.interfaces.output import print_json
from reliora_git.records.errors import RelioraError
from reliora_git.records.model import Record
from reliora_git.storage.store import (
    MAX_RECORD_BYTES,
    Store,
    decode_utf8,
    find_store,
    store_folder,
)

#: What `--json` holds when given without its '-' (it then prints a --from-commit draft).
DRAFT_FLAG = "(print)"


class RecordCommand(TyperCommand):
    """``record``: ``--json`` takes '-' (JSON on stdin), or nothing with ``--from-commit``.

    Typer gives an option an optional value in no other way: a ``--json`` followed by no
    value (the end, another option) is given :data:`DRAFT_FLAG` before click parses it.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        given = optional_value(args, "--json", DRAFT_FLAG, _json_value)
        return list(super().parse_args(ctx, given))


def _json_value(arg: str) -> bool:
    """What ``--json`` takes as its value: '-', or anything that is not another option."""
    return arg == "-" or not arg.startswith("-")


def record(
    title: Annotated[str | None, typer.Option(help="One line naming the lesson.")] = None,
    task: Annotated[str | None, typer.Option(help="What you were trying to do.")] = None,
    problem: Annotated[
        list[str] | None, typer.Option(help="A problem you hit (repeatable).")
    ] = None,
    solution: Annotated[str | None, typer.Option(help="What worked.")] = None,
    why: Annotated[str | None, typer.Option(help="Why it worked.")] = None,
    failed: Annotated[list[str] | None, typer.Option(help="A failed attempt (repeatable).")] = None,
    warning: Annotated[list[str] | None, typer.Option(help="A warning (repeatable).")] = None,
    applicability: Annotated[str | None, typer.Option(help="Where this holds.")] = None,
    project_context: Annotated[
        str | None, typer.Option(help="Project words, e.g. 'python cli'.")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="A tag (repeatable).")] = None,
    verification: Annotated[str | None, typer.Option(help="How it was checked.")] = None,
    asked: Annotated[
        list[str] | None,
        typer.Option(
            "--asked",
            metavar="TEXT",
            help="How someone would ask an agent for a task where this lesson helps, in their "
            "words, not the lesson's (repeat, 2-5): how tasks that share no word with the "
            "title find it.",
        ),
    ] = None,
    confidence: Annotated[str | None, typer.Option(help="low, medium or high.")] = None,
    from_file: Annotated[
        Path | None,
        typer.Option("--from-file", help="A Markdown record file to add (id optional)."),
    ] = None,
    json_input: Annotated[
        str | None,
        typer.Option(
            "--json",
            metavar="-",
            help="Read one JSON object from stdin ('-'); print JSON. With --from-commit (no "
            "'-'): print the draft.",
        ),
    ] = None,
    from_commit: Annotated[
        str | None,
        typer.Option(
            "--from-commit",
            metavar="REV",
            help="Draft from a commit (title, problems, paths, provenance); the editor opens, "
            "or --json prints it.",
        ),
    ] = None,
    edit: Annotated[bool, typer.Option("--edit", help="Write the record in $EDITOR.")] = False,
    supersedes: Annotated[
        list[str] | None,
        typer.Option("--supersedes", metavar="ID", help="A record this one replaces (repeat)."),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="A repository path the lesson is about (repeat)."),
    ] = None,
    paths_from_staged: Annotated[
        bool,
        typer.Option(
            "--paths-from-staged", help="Add the files staged outside .reliora/ as paths."
        ),
    ] = False,
    stage: Annotated[bool, typer.Option("--stage", help="`git add` the new file.")] = False,
    guard: GuardOption = None,
    guard_path: GuardPathOption = None,
    guard_exclude: GuardExcludeOption = None,
    guard_message: GuardMessageOption = None,
    block: BlockFlag = False,
    allow_existing: AllowExistingFlag = False,
    repo: RepoOption = None,
    show_all: AllFlag = False,
    allow_secret: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-secret",
            metavar="KIND",
            help="Save although a secret of this kind was found (a false positive), e.g. "
            "basic-auth-credentials. Repeatable; the hook still reports it.",
        ),
    ] = None,
) -> None:
    """Save a new experience; warn about similar ones.

    A likely duplicate (an existing record that holds most of this one's title,
    tags and first problems, rare words weighing most) is shown in full with the
    words they share, and with how to undo the save (`reliora retire NEW
    --reason …`, or `reliora update OTHER …` and then retire NEW); records that
    are only related are named on one line (--all shows them in full).
    Warnings never stop the save; a secret does (a token, a key, a password in
    a URL: exit 2, the value masked).

    \b
    Examples:
      reliora record --title "Flaky pytest timeouts on CI" --tag pytest \\
        --problem "pytest-timeout killed slow git fixtures" \\
        --solution "Raise the timeout only for the git-fixture tests" \\
        --asked "the integration tests get killed at random on CI" \\
        --asked "make the nightly job stable on the shared runners"
      echo '{"title": "…", "task": "…", "solution": "…", "askedAs": ["…", "…"]}' \\
        | reliora record --json -
      reliora record --title "Use date-fns, not moment" --solution "…" --task "…" \\
        --guard "from 'moment'" --guard-path "src/**/*.ts" --block
      reliora record --title "SHA-1 only through legacy_digest()" --solution "…" --task "…" \\
        --guard 'hashlib[.]sha1[(]' --guard-exclude src/crypto/legacy.py \\
        --guard-message "use legacy_digest(), not hashlib.sha1"
      reliora record --from-commit a1b2c3d --json   # a draft to complete, then --json -
    """
    # Imported here: the CLI imports every command's module, and the other commands
    # need neither PyYAML (parse) nor the writers.
    from reliora_git.operations.lessons import writes

    if json_input == DRAFT_FLAG and from_commit is None:
        raise typer.BadParameter(
            "takes '-' (read the JSON object from stdin); alone it goes with --from-commit",
            param_hint="'--json'",
        )
    as_json = json_input is not None
    with reporting(as_json):
        if from_commit is not None and as_json:
            from reliora_git.interfaces.commands.common import store_or_repository

            store = store_or_repository(repo)  # a draft needs no store; saving does
        else:
            store = find_store(repo)
        sources = sum([as_json and from_commit is None, from_file is not None, edit])
        sources += from_commit is not None and from_file is not None
        flags = Record(
            title=title or "",
            task=task or "",
            problems=problem or [],
            solution=solution or "",
            why_it_worked=why or "",
            failed_attempts=failed or [],
            warnings=warning or [],
            applicability=applicability or "",
            project_context=project_context or "",
            tags=tag or [],
            verification=verification or "",
            asked_as=asked or [],
            confidence=confidence,
            supersedes=supersedes or [],
            paths=path or [],
        )
        if sources > 1:
            raise RelioraError(
                "use only one of --json -, --from-file, --edit and --from-commit",
                code="invalid_option",
            )
        draft = None
        if from_commit is not None:
            commit_draft, evidence = _commit_draft(store, from_commit)
            drafted = _with_flags(commit_draft, flags)
            if as_json:  # for an agent to complete, then `record --json -` (evidence dropped)
                from reliora_git.interfaces.history_document import cleaned
                from reliora_git.search.jsonio import EVIDENCE

                # Cleaned as history's drafts are: commit text is anyone's.
                print_json(cleaned({**_draft_json(drafted), EVIDENCE: evidence}))
                return
            new, draft = _from_editor(store, drafted)
        elif json_input is not None:
            new = record_from_stdin(json_input)
        elif from_file is not None:
            new = _from_file(from_file)
        elif edit:
            new, draft = _from_editor(store)
        else:
            if not flags.title:
                raise RelioraError(
                    "--title is required (or use --from-file, --json - or --edit)",
                    code="invalid_option",
                )
            new = flags
            _check_required(new)
        # --supersedes and --path add to what a file or JSON names (the flags above set them).
        if new is not flags and from_commit is None:
            new.supersedes = [*new.supersedes, *(supersedes or [])]
            new.paths = [*new.paths, *(path or [])]
        flagged = guards_from_flags(guard, guard_path, block, guard_exclude, guard_message)
        new.guards = [*new.guards, *flagged]
        if paths_from_staged:
            from reliora_git.operations.freshness import staged_code_paths

            staged = [p for p in staged_code_paths(store) if p not in new.paths]
            new.paths = [*new.paths, *staged]
        saved = writes.record(
            store,
            new,
            stage=stage,
            allow_secrets=allow_secret or (),
            allow_existing=allow_existing,
        )
        wrote(f"saved {saved.record.id} as {saved.record.locator}")
        if draft is not None:
            draft.unlink()
        report_saved(saved, as_json, show_all)


def _check_required(flags: Record) -> None:
    """Name the part missing from a record given as flags by its flag, not its Markdown.

    A file, the editor and ``--json -`` keep validation's own words ("needs a '## Task'
    or a '## Problems' section"): there the user wrote the sections.
    """
    missing = None
    if not flags.task.strip() and not any(problem.strip() for problem in flags.problems):
        missing = "--task or --problem (what you were doing, or what went wrong)"
    elif not flags.solution.strip():
        missing = "--solution (what worked)"
    if missing is not None:
        message = f"the experience is not valid: it needs {missing}"
        raise RelioraError(message, code="invalid_record")


def _from_file(path: Path) -> Record:
    try:
        with open(path, "rb") as handle:
            # Bounded like every record read: `--from-file /dev/zero` must not eat memory.
            data = handle.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise RelioraError(
            f"cannot read: {exc.strerror}", path=str(path), code="not_found"
        ) from None
    if len(data) > MAX_RECORD_BYTES:
        raise RelioraError(
            f"is larger than {MAX_RECORD_BYTES // 1024} KiB", path=str(path), code="invalid_input"
        )
    from reliora_git.records.parse import parse_record

    return parse_record(decode_utf8(data, str(path)), str(path)).record


def _commit_draft(store: Store, rev: str) -> tuple[Record, dict[str, object]]:
    """The draft of the commit ``rev`` names, and its evidence (as ``history --json`` gives
    them for the same commit: one builder, coldstart/drafts.py)."""
    from reliora_git.gitrepo.git import toplevel
    from reliora_git.operations.coldstart.drafts import draft
    from reliora_git.operations.coldstart.reading import entry_of_commit

    root = toplevel(store.root)
    if root is None:
        raise RelioraError("--from-commit needs a git repository", code="no_git")
    entry = entry_of_commit(root, rev)
    evidence = entry.evidence.to_json() if entry.evidence is not None else {}
    return draft(entry), evidence


#: List fields a flag adds to a draft (the text flags replace).
_DRAFT_LISTS = (
    "problems",
    "failed_attempts",
    "warnings",
    "asked_as",
    "tags",
    "supersedes",
    "paths",
)


def _with_flags(draft: Record, flags: Record) -> Record:
    """The draft with what the flags say: a text flag replaces, a list flag adds."""
    for name in ("title", "task", "solution", "why_it_worked", "applicability", "verification"):
        if getattr(flags, name):
            setattr(draft, name, getattr(flags, name))
    for name in _DRAFT_LISTS:
        added = [item for item in getattr(flags, name) if item not in getattr(draft, name)]
        setattr(draft, name, [*getattr(draft, name), *added])
    draft.project_context = flags.project_context or draft.project_context
    draft.confidence = flags.confidence or draft.confidence
    return draft


#: What a draft printed for an agent holds: every field `record --json -` reads, to fill in.
_DRAFT_FIELDS = (
    "title", "task", "problems", "solution", "whyItWorked", "failedAttempts", "warnings",
    "applicability", "verification", "askedAs", "tags", "paths", "supersedes", "projectContext",
    "confidence", "created", "author", "source",
)  # fmt: skip


def _draft_json(draft: Record) -> dict[str, object]:
    from reliora_git.search.jsonio import record_to_json

    data = record_to_json(draft)
    return {name: data[name] for name in _DRAFT_FIELDS if name in data}


def _from_editor(store: Store, start: Record | None = None) -> tuple[Record, Path]:
    """Open $EDITOR on a draft inside .reliora/; an invalid draft is kept, never lost.

    ``start``: what the draft already says (from a commit); the template's placeholders
    stay in the sections it leaves empty.
    """
    from reliora_git.operations.lessons import writes
    from reliora_git.records.parse import parse_record
    from reliora_git.storage.template import record_template

    # store_folder refuses a `.drafts` that a pull request committed as a symlink, and
    # unlinking first means a planted `draft-<pid>.md` link is replaced, never followed.
    drafts = store_folder(store, store.path / ".drafts")
    draft = drafts / f"draft-{os.getpid()}.md"
    draft.unlink(missing_ok=True)
    with open(draft, "x", encoding="utf-8") as handle:
        handle.write(record_template() if start is None else _filled_template(start))
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    if subprocess.run([*shlex.split(editor), str(draft)], check=False).returncode != 0:
        raise RelioraError(
            f"the editor failed; your draft is kept at {draft}", code="editor_failed"
        )
    try:
        new = parse_record(draft.read_text(encoding="utf-8"), store.locator(draft)).record
        new.locator = ""
        _drop_placeholders(new, parse_record(record_template(), "template").record)
        writes.prepare(store, new)
    except RelioraError as exc:
        raise RelioraError(
            f"{exc.message}; your draft is kept at {store.locator(draft)}", code=exc.code
        ) from None
    return new, draft


def _filled_template(start: Record) -> str:
    """The editor's template with ``start``'s fields in place of their placeholders."""
    from reliora_git.records.parse import parse_record, render_record
    from reliora_git.storage.template import record_template

    filled = parse_record(record_template(), "template").record
    for name in ("title", "created", "author", "confidence", "project_context"):
        if getattr(start, name):
            setattr(filled, name, getattr(start, name))
    for name in (*_TEMPLATE_TEXTS, *_TEMPLATE_LISTS, "tags", "paths", "supersedes"):
        if getattr(start, name):
            setattr(filled, name, getattr(start, name))
    filled.extra_meta = {**filled.extra_meta, **start.extra_meta}  # `source:` of a draft
    return render_record(filled)


#: Text fields and list fields of the editor's template that hold placeholder text.
_TEMPLATE_TEXTS = ("task", "solution", "why_it_worked", "applicability", "verification")
_TEMPLATE_LISTS = ("problems", "failed_attempts", "warnings", "asked_as")


def _drop_placeholders(new: Record, template: Record) -> None:
    """Leave out what is still the template's placeholder text ("What worked.").

    A section left as the template wrote it is dropped, and so is a placeholder bullet
    beside bullets of one's own: placeholder text saved as content would match searches.
    """
    for name in _TEMPLATE_TEXTS:
        if getattr(new, name).strip() == getattr(template, name).strip():
            setattr(new, name, "")
    for name in _TEMPLATE_LISTS:
        placeholders = {item.strip() for item in getattr(template, name)}
        setattr(new, name, [i for i in getattr(new, name) if i.strip() not in placeholders])


def register(app: typer.Typer) -> None:
    app.command(cls=RecordCommand)(record)
