"""``agent install | uninstall | status | log`` and ``hook``: wiring agent clients to the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reliora_git.interfaces.commands.common import JsonFlag, reporting

if TYPE_CHECKING:
    from reliora_git.operations.agents.install import FileChange

ClientsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[CLIENT]...",
        help="claude-code, codex, gemini, copilot or cursor (default: see the description).",
        show_default=False,
    ),
]
PersonalFlag = Annotated[
    bool,
    typer.Option(
        "--personal",
        help="Only for you: the clients' local or user-level files, nothing to commit "
        "(git status stays as it is).",
    ),
]
RepoDirOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="A folder in the repository (default: the current folder).",
        show_default=False,
    ),
]

agent_app = typer.Typer(
    name="agent",
    help="Wire coding agents (Claude Code, Codex, …) to the lessons.\n\n"
    "Claude Code, Codex, Gemini CLI, Copilot and Cursor, to the lessons in .reliora/ (their "
    "own hooks and MCP server; git's pre-commit hook is `reliora hooks`).\n\n"
    "\b\nExample:\n  reliora agent install\n  reliora agent status",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _root(repo: Path | None) -> Path:
    from reliora_git.gitrepo import git

    start = repo.resolve() if repo else Path.cwd()
    return git.toplevel(start) or start


def _change_json(change: FileChange, personal: bool = False) -> dict[str, Any]:
    from reliora_git.operations.agents.personal import shown

    path = shown(change.file) if personal else change.file.path
    return {"client": change.file.client, "path": path, "action": change.action}


def _run(
    action: str,
    clients: list[str] | None,
    repo: Path | None,
    dry_run: bool,
    json_output: bool,
    personal: bool = False,
) -> None:
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.agents import install as agents
    from reliora_git.operations.agents import personal as own

    with reporting(json_output):
        root = _root(repo)
        if clients:
            chosen = agents.check_clients(clients)
        elif action == "install":
            chosen = agents.default_clients(root, personal)
        else:
            chosen = own.installed_clients(root) if personal else agents.installed_clients(root)
        changes = (own if personal else agents).plan(root, chosen, action)
        exclude = own.exclude_plan(root, changes, action) if personal else None
        removed: list[str] = []
        if not dry_run:
            if personal:
                own.apply(root, changes, action)
                removed = own.tidy(root) if action == "uninstall" else []
            else:
                agents.apply(root, changes)
        steps = (
            agents.next_steps(root, after="agent", clients=chosen, personal=personal)
            if action == "install" and not dry_run
            else []
        )
        notes = _personal_notes(root, action) if personal else []
        files = [_change_json(c, personal) for c in changes]
        if exclude is not None and exclude.path is not None:
            files.append({"client": None, "path": exclude.shown_as, "action": exclude.action})
        if json_output:
            print_json(
                {
                    "clients": chosen,
                    "personal": personal,
                    "dryRun": dry_run,
                    "files": files,
                    "removed": removed,
                    "notes": notes,
                    "nextSteps": steps,
                }
            )
            return
        printer = Printer()
        if not chosen:
            printer.line("Nothing to remove: no agent client has Reliora's entries.")
        verb = "would be " if dry_run else ""
        for change in changes:
            path = own.shown(change.file) if personal else change.file.path
            printer.line(f"{path} ({change.file.client}): {verb}{change.action}")
            if dry_run and change.action != "unchanged":
                _print_diff(printer, path, change.before or b"", change.after or b"")
        if exclude is not None and exclude.path is not None and exclude.action != "unchanged":
            printer.line(f"{exclude.shown_as}: {verb}{exclude.action}")
            if dry_run:
                _print_diff(
                    printer, exclude.shown_as, exclude.before.encode(), exclude.after.encode()
                )
        for folder in removed:
            printer.line(f"{folder}/: removed")
        for note in notes:
            printer.line(note)
        _print_steps(printer, steps)


def _print_diff(printer: Any, path: str, before: bytes, after: bytes) -> None:
    import difflib

    old = before.decode("utf-8").splitlines(keepends=True)
    new = after.decode("utf-8").splitlines(keepends=True)
    for line in difflib.unified_diff(old, new, path, path):
        printer.line(line.rstrip("\n"))


def _personal_notes(root: Path, action: str) -> list[str]:
    """What a personal install or uninstall says about the store: there is none yet (install),
    or it stays, and how to remove it (uninstall)."""
    from reliora_git.operations.agents import personal as own
    from reliora_git.storage.store import STORE_DIR

    if not (root / STORE_DIR).is_dir():
        if action == "install":
            return [
                f"Warning: there is no {STORE_DIR}/ store here, so the hooks stay silent: make "
                "one with `reliora init --personal` (kept out of git, yours alone), or "
                "`reliora init` (committed, for the team)"
            ]
        return []
    if action != "uninstall":
        return []
    if own.store_excluded(root):
        return [
            f"The store {STORE_DIR}/ stays, with its line in .git/info/exclude. To remove both: "
            f"rm -r {STORE_DIR}, then delete the lines `{own.STORE_MARK}` and `{own.STORE_LINE}` "
            "from .git/info/exclude"
        ]
    return [f"The store {STORE_DIR}/ stays; remove it with rm -r {STORE_DIR} if you want it gone"]


def _print_steps(printer: Any, steps: list[str]) -> None:
    if steps:
        printer.line("Next steps:")
        for number, step in enumerate(steps, start=1):
            printer.line(f"  {number}. {step}")


@agent_app.command()
def install(
    clients: ClientsArgument = None,
    personal: PersonalFlag = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change (a diff); write nothing.")
    ] = False,
    repo: RepoDirOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Add Reliora's agent hooks, MCP server and instructions.

    Project files, to commit for every clone (not git's hooks: `reliora hooks`):

    \b
      claude-code  .claude/settings.json (hooks), .mcp.json, CLAUDE.md
      codex        .codex/hooks.json, .codex/config.toml, AGENTS.md
      gemini       .gemini/settings.json (hooks, server, context.fileName), AGENTS.md
      copilot      .github/hooks/reliora.json, .mcp.json, .github/copilot-instructions.md
      cursor       .cursor/hooks.json, .cursor/rules/reliora.mdc, .cursor/mcp.json

    With --personal, files only you read (git status stays as it is):

    \b
      claude-code  .claude/settings.local.json (in .git/info/exclude), ~/.claude.json
      codex        $CODEX_HOME/hooks.json and config.toml (~/.codex)
      gemini       ~/.gemini/settings.json
      copilot      $COPILOT_HOME/mcp-config.json (~/.copilot; no user-level hooks)
      cursor       ~/.cursor/hooks.json, ~/.cursor/mcp.json

    What the files hold already is kept byte for byte; installing twice changes
    nothing. Without CLIENT: the clients whose files the repository has, else
    claude-code and codex.

    \b
    Examples:
      reliora agent install claude-code codex --dry-run
      reliora agent install --personal claude-code
    """
    _run("install", clients, repo, dry_run, json_output, personal)


@agent_app.command()
def uninstall(
    clients: ClientsArgument = None,
    personal: PersonalFlag = False,
    repo: RepoDirOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Remove exactly what install added.

    Files that install created are deleted; in files that were there already,
    only its entries go.

    Without CLIENT: every client whose files hold Reliora's entries. --personal
    removes a personal install (the project's files are left as they are).

    \b
    Examples:
      reliora agent uninstall cursor
      reliora agent uninstall --personal
    """
    _run("uninstall", clients, repo, False, json_output, personal)


@agent_app.command()
def status(repo: RepoDirOption = None, json_output: JsonFlag = False) -> None:
    """Say which clients are wired and what is left to do.

    And the last lines of the agent hooks' log.

    Per client, what a person must still do that no committed file can (trust
    the project in Codex, a trusted folder in Gemini, approve the server in
    Claude Code), and whether this clone has the git hook that runs guards.

    \b
    Example:
      reliora agent status --json
    """
    import shutil

    from reliora_git.extras import install_command
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.agents import hook as agent_hook
    from reliora_git.operations.agents import install as agents

    with reporting(json_output):
        root = _root(repo)
        found = agents.states_of_installed(root)
        on_path = shutil.which("reliora")
        log = agent_hook.log_tail(agent_hook.git_places(root).state)
        from reliora_git.operations.agents import personal as own

        todo = agents.todo(root) + own.todo(root)
        if own.store_excluded(root):  # a personal store: no commit of it goes through the hook
            todo = [(client, step) for client, step in todo if client != "git"]
        switches = _switches(root)

        mine = own.states(root)
        if json_output:
            print_json(
                {
                    "root": str(root),
                    "files": [
                        {"client": s.file.client, "path": s.file.path, "state": s.state}
                        for s in found
                    ],
                    "clients": agents.installed_clients(root),
                    "personal": {
                        "clients": own.installed_clients(root),
                        "files": [
                            {"client": s.file.client, "path": own.shown(s.file), "state": s.state}
                            for s in mine
                        ],
                    },
                    "relioraOnPath": on_path,
                    "todo": [{"client": client, "step": step} for client, step in todo],
                    "switches": [switch.to_json() for switch in switches],
                    "hookLog": log,
                }
            )
            return
        printer = Printer()
        printer.line("Project files (committed, for every clone):")
        for state in found:
            printer.line(f"  {state.file.client:<12} {state.file.path:<34} {state.state}")
        printer.line("Personal files (only yours: agent install --personal):")
        for state in mine:
            printer.line(f"  {state.file.client:<12} {own.shown(state.file):<34} {state.state}")
        printer.line(
            f"reliora on PATH: {on_path}"
            if on_path
            else "reliora is not on PATH: the hooks print nothing until it is "
            f"(in a clone of reliora-git: {install_command('mcp', force=False)})"
        )
        if switches:
            for switch in switches:
                printer.line(f"Switched off: {switch.line()}")
        else:
            printer.line("Agent hooks: on (RELIORA_AGENT=off, git config reliora.agent off or "
                         'agent = "off" in config.toml turn them off)')  # fmt: skip
        if todo:
            printer.line("Still to do by hand (no committed file can):")
            for client, step in todo:
                printer.line(f"  {client}: {step}")
        if log:
            printer.line("Hook log (newest last):")
            for line in log:
                printer.line(f"  {line}")
        else:
            printer.line("Hook log: empty")


@agent_app.command("log")
def log_(
    session: Annotated[
        str | None,
        typer.Argument(
            metavar="[SESSION]",
            help="A session id (as the client gave it, or as listed); default: recent sessions.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="Sessions listed (default 20).")
    ] = 20,
    repo: RepoDirOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Show what recent agent sessions were pushed.

    Read from the session memory the hooks keep under the git directory (one
    file per session, this clone only). Without SESSION: the recent sessions,
    newest first, with their clients, pushes and characters. With SESSION: each
    push's time, client, event, lessons (full or line) and characters, and the
    session's total, the exact cost of the push. Pushes recorded before this
    version have no time, client or event ("-").

    \b
    Examples:
      reliora agent log
      reliora agent log 5f0c2a9e-41b7 --json
    """
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.agents import hook as agent_hook
    from reliora_git.operations.agents import ledger

    with reporting(json_output):
        state = agent_hook.git_places(_root(repo)).state
        printer = Printer()
        if session is None:
            sessions = ledger.recent_sessions(state, limit)
            if json_output:
                print_json({"sessions": [log.to_json(with_pushes=False) for log in sessions]})
                return
            if not sessions:
                printer.line("No session was pushed in this clone yet (reliora agent install).")
            for log in sessions:
                clients = ", ".join(map(_masked, log.clients)) or "-"
                printer.line(
                    f"{log.modified}  {_masked(log.session)}  {clients}  "
                    f"{len(log.pushes)} push{'es' * (len(log.pushes) != 1)}  {log.total} chars"
                )
            return
        found = ledger.session_log(state, session)
        if json_output:
            print_json(found.to_json())
            return
        printer.line(f"Session {_masked(found.session)} (last change {found.modified})")
        for push in found.pushes:
            lessons = ", ".join(f"{_masked(i)} ({form})" for i, form in push.lessons)
            what = "the budget line" if push.spent and not lessons else lessons or "-"
            printer.line(
                f"  {_masked(push.time or '-')}  {_masked(push.client or '-')}  "
                f"{_masked(push.event or '-')}  "
                f"{push.chars} chars  {what}"
            )
        printer.line(f"Total: {found.total} characters in {len(found.pushes)} pushes")


def _masked(text: str) -> str:
    """Text from a session file on one line, control and invisible characters written out."""
    from reliora_git.records.text import escape_invisible

    return escape_invisible(" ".join(text.split()))


def _switches(root: Path) -> list[Any]:
    """The off switches in force here: this session's, this clone's, the store's."""
    from reliora_git.operations.agents.switches import in_force

    return in_force(root, root)


def hook(
    client: Annotated[
        str, typer.Option("--client", help="The agent client whose hook input is on stdin.")
    ] = "claude-code",
) -> None:
    """The agents' hook (not git's): lessons for a client's event.

    Answers an agent client's hook event (JSON on stdin) with the lessons that
    fit it. Git's pre-commit hook is `reliora hooks`.

    Run by the hooks `reliora agent install` writes, not by hand. SessionStart:
    a short brief from the branch's changes; UserPromptSubmit: a brief from the
    prompt; PreToolUse of Read, Edit, MultiEdit, Write or NotebookEdit: the
    lessons about that file, once per file per session. Prints the client's
    documented JSON (hookSpecificOutput.additionalContext) or nothing, and
    always exits 0: problems go to a log under the git directory, shown by
    `reliora agent status`.

    \b
    Example:
      echo '{"hook_event_name": "UserPromptSubmit", "session_id": "s1",
        "cwd": ".", "prompt": "fix the flaky CI timeouts"}' | reliora hook
    """
    from reliora_git.interfaces.commands.hook import run_hook

    raise SystemExit(run_hook(client))


def register(app: typer.Typer) -> None:
    app.add_typer(agent_app)
    app.command()(hook)
