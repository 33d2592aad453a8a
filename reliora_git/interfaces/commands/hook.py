"""``reliora hook``: run by an agent client's hooks; prints context or nothing, exits 0.

It runs on every prompt and before every file read, so it starts without Typer
(``__main__`` hands ``reliora hook [--client NAME]`` straight to
:func:`fast_main`; ``--help`` and anything unusual go to Typer, whose ``hook``
command in commands/agent.py runs the same :func:`run_hook`): no Typer here.
The work runs in a thread with a deadline: past it the process leaves with
nothing printed and a line in the log, so a slow store never holds the agent
up. Whatever happens, the exit code is 0: a hook that fails must not break
the session (operations/agents/hook.py holds the rest).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

#: Seconds of work before the hook gives up (RELIORA_HOOK_DEADLINE overrides it).
DEADLINE = 2.0
#: The most stdin the hook reads: a prompt with pasted logs fits, a runaway stream does not.
MAX_INPUT = 1024 * 1024


def _deadline() -> float:
    try:
        value = float(os.environ.get("RELIORA_HOOK_DEADLINE", DEADLINE))
    except ValueError:
        return DEADLINE
    return value if value > 0 else DEADLINE


def _read_stdin() -> bytes:
    stream = sys.stdin
    if stream is None or stream.isatty():
        return b""  # run by hand: no client is writing to us
    return stream.buffer.read(MAX_INPUT + 1)


class _Work:
    """What the worker thread found, for the main thread to print or log."""

    def __init__(self) -> None:
        self.output = ""
        self.state: Path | None = None
        self.cwd: Path | None = None
        self.event = ""


def run_hook(client: str = "claude-code") -> int:
    """Answer one hook event on stdin; always 0."""
    from reliora_git.operations.agents import hook

    work = _Work()
    raw = b""
    try:
        raw = _read_stdin()
    except (OSError, ValueError) as error:
        state = hook.git_places(Path.cwd()).state
        hook.log(state, client, "", f"cannot read stdin: {error}")
        return 0

    def job() -> None:
        try:
            try:
                if len(raw) > MAX_INPUT:
                    raise hook.HookInputError(f"stdin is larger than {MAX_INPUT // 1024} KiB")
                event = hook.parse_event(raw, client)
            except hook.HookInputError:
                work.state = hook.git_places(Path.cwd()).state
                raise
            work.event, work.cwd = event.name, event.cwd
            places = hook.git_places(event.cwd)
            work.state = places.state
            text = hook.answer(event, places, client)
            if text:
                from reliora_git.operations.agents import clients

                work.output = clients.load(client).render_output(event, text)
        except BaseException as error:  # every failure is a log line, never a crash
            hook.log(work.state, client, work.event, hook.describe(error))

    thread = threading.Thread(target=job, name="reliora-hook", daemon=True)
    thread.start()
    limit = _deadline()
    thread.join(limit)
    if thread.is_alive():
        state = work.state or hook.git_places(Path.cwd()).state
        warming = hook.start_warming(state, work.cwd or Path.cwd())
        note = "; building the store index in the background" if warming else ""
        hook.log(state, client, work.event, f"gave up after {limit:g} s{note}")
        os._exit(0)  # the worker may be inside git or a file read: do not wait for it
    if work.output:
        try:
            sys.stdout.write(work.output + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 0


def fast_main(argv: list[str]) -> int | None:
    """``reliora hook``, ``--client NAME`` or ``--client=NAME``: its exit code; else None."""
    args = argv[1:]
    if len(args) == 2 and args[0] == "--warm":  # started by a hook that gave up (see above)
        from reliora_git.operations.agents.hook import warm

        warm(Path(args[1]))
        return 0
    if not args:
        return run_hook()
    if len(args) == 2 and args[0] == "--client" and not args[1].startswith("-"):
        return run_hook(args[1])
    if len(args) == 1 and args[0].startswith("--client=") and len(args[0]) > len("--client="):
        return run_hook(args[0].split("=", 1)[1])
    return None
