"""Entry point of ``reliora`` and ``git-reliora`` (and ``python -m reliora_git``)."""

from __future__ import annotations

import gc
import os
import sys
from types import TracebackType

#: What the pre-commit hook runs (see commands/check_staged.py); kept here, not imported,
#: so that other commands load nothing for it.
_HOOK_ARGV = [["check", "--staged"], ["check", "--staged", "--json"]]
#: Commands that keep running and answering: what they build in bulk is let go again.
_SERVERS = {"mcp", "serve"}


class _StartingUp:
    """The garbage collector paused while a command's modules are imported.

    Importing them allocates tens of thousands of objects (module bodies, classes, the
    functions dataclasses generate) and frees almost none, so the collections their
    allocations trigger find nothing and cost each process a few milliseconds. The
    collector runs again before the command does its work.
    """

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.enabled:
            # What the imports made lives as long as the process: moved out of the
            # generations the collector walks, else its next collection walks it all.
            gc.freeze()
            gc.enable()


def main() -> None:
    # A file name that is not UTF-8 reaches the output as lone surrogates; print an
    # escape for it rather than die with UnicodeEncodeError (JSON reads `\udcff` fine).
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    # Answer --version before importing the CLI framework: it is most of the start-up time.
    if sys.argv[1:] == ["--version"]:
        from reliora_git import __version__

        print(f"reliora {__version__}")
        return
    if not _SERVERS & set(sys.argv[1:]):  # a word anywhere: an option may come first
        from reliora_git.storage.cache import bulk_lives_on

        bulk_lives_on()
    # The same for the plain forms of `search`, run before every task by agents, and of
    # `show`, `list` and `feedback`; anything else (help, errors Typer reports) falls
    # through to Typer (see commands/searching.py and commands/plain.py).
    fast = os.environ.get("RELIORA_FAST_CLI", "1") != "0"
    if sys.argv[1:2] == ["search"] and fast:
        with _StartingUp():
            from reliora_git.interfaces.commands.searching import fast_main

        code = fast_main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if sys.argv[1:2] == ["brief"] and fast:
        with _StartingUp():
            from reliora_git.interfaces.commands.briefing import fast_main as brief_main

        code = brief_main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if sys.argv[1:2] in (["show"], ["list"], ["feedback"]) and fast:
        with _StartingUp():
            from reliora_git.interfaces.commands.plain import fast_main as plain_main

        code = plain_main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if sys.argv[1:2] == ["record"] and fast:
        # `record --json -`: how an agent saves a lesson (commands/recording.py).
        with _StartingUp():
            from reliora_git.interfaces.commands.recording import fast_main as record_main

        code = record_main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if sys.argv[1:3] == ["org", "search"] and fast:
        from reliora_git.interfaces.commands.org_search import fast_main as org_main

        code = org_main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if sys.argv[1:2] == ["hook"] and fast:
        # Run by agent clients' hooks on every prompt and file read (commands/hook.py).
        with _StartingUp():
            from reliora_git.interfaces.commands.hook import fast_main as agent_hook_main

        code = agent_hook_main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if sys.argv[1:2] == ["mcp"] and fast:
        # A client waits for the server's answer to `initialize` before anything else:
        # it is answered before Typer or the MCP SDK is imported (commands/serving.py).
        from reliora_git.interfaces.commands.serving import fast_main as mcp_main

        code = mcp_main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if sys.argv[1:] in _HOOK_ARGV and fast:
        with _StartingUp():
            from reliora_git.interfaces.commands.check_staged import run_check_staged

        sys.exit(run_check_staged(None, None, json_output="--json" in sys.argv))
    if sys.argv[1:2] == ["check"] and fast:
        # A whole-store check (commands/checking.py); files named, --staged… go to Typer.
        with _StartingUp():
            from reliora_git.interfaces.commands.checking import fast_main as check_main

        code = check_main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    with _StartingUp():
        from reliora_git.interfaces.cli import app_for

        app = app_for(sys.argv[1:])
    app(prog_name="reliora")


if __name__ == "__main__":
    main()
