"""Human output: colour only on a terminal and never with NO_COLOR; JSON is one document."""

from __future__ import annotations

import io
import json

import pytest

from reliora_git.interfaces.output import Printer, print_json


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert Printer(out=Terminal()).style("x", "bold") == "\x1b[1mx\x1b[0m"
    assert Printer(out=io.StringIO()).style("x", "bold") == "x"  # a pipe
    monkeypatch.setenv("NO_COLOR", "1")
    assert Printer(out=Terminal()).style("x", "bold") == "x"
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert Printer(out=Terminal()).style("x", "bold") == "x"


def test_print_json_writes_exactly_one_document() -> None:
    out = io.StringIO()
    print_json({"title": "naïve \x1b[31m", "n": 1}, out)
    assert json.loads(out.getvalue()) == {"title": "naïve \x1b[31m", "n": 1}
