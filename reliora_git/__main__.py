"""Entry point of ``reliora`` and ``git-reliora`` (and ``python -m reliora_git``)."""

from __future__ import annotations

import sys


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
    from reliora_git.cli import app

    app(prog_name="reliora")


if __name__ == "__main__":
    main()
