"""The code lines of a text, by its language: what :mod:`reliora_git.records.code_change`
compares to tell a code change from a change of blank lines, whitespace or comments. Pure.

A linear lexer for the file's language (by its name: :func:`syntax_of`) reduces a text to
its *code lines*: the lines with anything outside comments, each without the whitespace
that separates nothing (``a + b`` and ``a+b`` read alike, ``not x`` and ``notx`` do not).
Strings are kept as they are, whitespace and all: a string literal that changes is a code
change, and a comment marker inside a string is not a comment.

What counts as a comment line, and the choices made where in doubt (a mistake
must never hide a code change, so when the lexer cannot tell, it says so):

* only whole lines: a line with code and a comment after it is a code line,
  comment and all (``x = 1  # note`` is compared whole);
* a line inside a multi-line string, a heredoc (shell, Ruby, Perl, PHP,
  Dockerfile) or a YAML block scalar is a code line, blank or not;
* a block comment (``/* … */``, ``{- … -}``, ``--[[ … ]]``, ``#| … |#``) that is
  still open at the end of the file leaves the lines untold (None);
* where indentation is code (Python, YAML, Haskell, Makefile…), a line's leading
  whitespace is kept as is: moving a statement out of a block is a change;
* an unknown kind of file has no comments: only blank lines and whitespace outside
  quotes are ignored.

Everything is linear in the text: one pass with plain alternations (each token
found in one way), string closers found by position, and a quote that does not
close on its line searched for once a line.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class Syntax:
    """What the lexer needs to know about a language."""

    name: str
    #: Markers of a comment that runs to the end of the line.
    line: tuple[str, ...] = ()
    #: Block comments: (opener, closer).
    blocks: tuple[tuple[str, str], ...] = ()
    #: Strings that may span lines: (opener, closer).
    strings: tuple[tuple[str, str], ...] = ()
    #: Quotes of strings that end on their line; one that does not close there is code.
    one_line: tuple[str, ...] = ()
    #: Closers inside which a backslash escapes nothing (Go's raw strings, Lua's ``]]``).
    raw: tuple[str, ...] = ()
    #: A line marker starts a comment only at the start of a line or after whitespace.
    marker_after_space: bool = False
    #: ``<<WORD`` starts a heredoc (shell, Ruby, Perl, PHP, Dockerfile).
    heredoc: bool = False
    #: Leading whitespace is code.
    indented: bool = False
    #: YAML: block scalars (``key: |``), and quotes start strings only where a value starts.
    yaml: bool = False
    #: Python: docstrings are left out.
    docstrings: bool = False


_QUOTES = (("'", "'"), ('"', '"'))
PYTHON = Syntax(
    "python",
    line=("#",),
    strings=(('"""', '"""'), ("'''", "'''"), *_QUOTES),
    indented=True,
    docstrings=True,
)
HASH = Syntax("hash", line=("#",), strings=_QUOTES)
SHELL = Syntax("shell", line=("#",), strings=_QUOTES, marker_after_space=True, heredoc=True)
RUBY = Syntax("ruby", line=("#",), strings=(*_QUOTES, ("`", "`")), heredoc=True)
TOML = Syntax("toml", line=("#",), strings=(('"""', '"""'), ("'''", "'''"), *_QUOTES))
YAML = Syntax(
    "yaml", line=("#",), strings=_QUOTES, marker_after_space=True, indented=True, yaml=True
)
#: Make knows no quotes: a ``#`` anywhere (but ``\\#``) starts a comment.
MAKE = Syntax("make", line=("#",), indented=True)
SLASH = Syntax(
    "slash",
    line=("//",),
    blocks=(("/*", "*/"),),
    strings=(('"""', '"""'), ('"', '"'), ("`", "`")),
    one_line=("'",),
)
GO = dataclasses.replace(SLASH, name="go", raw=("`",))
PHP = dataclasses.replace(
    SLASH, name="php", line=("//", "#"), strings=(*_QUOTES, ("`", "`")), one_line=(), heredoc=True
)
CSS = Syntax("css", blocks=(("/*", "*/"),), strings=_QUOTES)
SQL = Syntax("sql", line=("--",), blocks=(("/*", "*/"),), strings=_QUOTES)
LUA = Syntax(
    "lua",
    line=("--",),
    blocks=(("--[[", "]]"),),
    strings=(("[[", "]]"), *_QUOTES),
    raw=("]]",),
)
HASKELL = Syntax(
    "haskell",
    line=("--",),
    blocks=(("{-", "-}"),),
    strings=(('"', '"'),),
    one_line=("'",),
    indented=True,
)
LISP = Syntax("lisp", line=(";",), blocks=(("#|", "|#"),), strings=(('"', '"'),))
INI = Syntax("ini", line=(";", "#"), marker_after_space=True)
ASM = Syntax("asm", line=(";",), strings=(('"', '"'),))
#: An unknown kind of file: no comments; quotes on one line keep their whitespace.
PLAIN = Syntax("plain", one_line=('"', "'"))

_BY_EXTENSION: dict[str, Syntax] = {
    **dict.fromkeys(("py", "pyi", "pyw"), PYTHON),
    **dict.fromkeys(("sh", "bash", "zsh", "ksh", "fish", "dockerfile", "containerfile"), SHELL),
    **dict.fromkeys(("rb", "rake", "gemspec", "pl", "pm", "t"), RUBY),
    **dict.fromkeys(("yaml", "yml"), YAML),
    "toml": TOML,
    **dict.fromkeys(("r", "tcl", "cmake", "nix", "ex", "exs", "jl", "cr", "bzl", "coffee"), HASH),
    **dict.fromkeys(("mk", "mak"), MAKE),
    **dict.fromkeys(
        (
            "c h cc cpp cxx c++ hh hpp hxx mm js mjs cjs jsx ts mts cts tsx rs java kt kts swift"
            " cs scala sc dart groovy gradle proto zig fs fsx v sv scss less vue svelte"
        ).split(),
        SLASH,
    ),
    "go": GO,
    "php": PHP,
    "css": CSS,
    "sql": SQL,
    "lua": LUA,
    **dict.fromkeys(("hs", "elm", "purs"), HASKELL),
    **dict.fromkeys(("lisp", "lsp", "cl", "el", "scm", "ss", "rkt", "clj", "cljs", "cljc"), LISP),
    **dict.fromkeys(("edn", "fnl"), LISP),
    **dict.fromkeys(("ini", "cfg", "conf", "properties"), INI),
    **dict.fromkeys(("asm", "s", "nasm"), ASM),
}
_BY_NAME: dict[str, Syntax] = {
    **dict.fromkeys(("makefile", "gnumakefile"), MAKE),
    **dict.fromkeys(("dockerfile", "containerfile"), SHELL),
    **dict.fromkeys(("gemfile", "rakefile", "vagrantfile", "podfile", "brewfile"), RUBY),
    **dict.fromkeys(("cmakelists.txt", "build", "workspace", "justfile"), HASH),
    **dict.fromkeys((".gitignore", ".dockerignore", ".gitattributes", ".env"), HASH),
    **dict.fromkeys((".bashrc", ".profile", ".zshrc", ".envrc"), SHELL),
}


def syntax_of(path: str) -> Syntax:
    """The language of ``path`` by its name (``Makefile``, ``Dockerfile.dev``) or extension."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    stem, dot, extension = name.rpartition(".")
    if dot and stem in ("dockerfile", "containerfile", "makefile"):
        return _BY_NAME[stem]
    return _BY_EXTENSION.get(extension, PLAIN) if dot and stem else PLAIN


def newlines(text: str) -> str:
    """``text`` with every line ending as ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")


def _is_word(char: str) -> bool:
    return char in _WORD_CHARS or (char > "\x7f" and char.isalnum())


def code_lines(syntax: Syntax, text: str, drop: Collection[int] = ()) -> tuple[str, ...] | None:
    """The code lines of ``text`` (see the module docstring), but those numbered in ``drop``
    (from 1); None when the lexer cannot tell (a block comment never closed)."""
    lexer = _Lexer(syntax, newlines(text), drop)
    return lexer.run()


@functools.cache
def _tokens(syntax: Syntax) -> re.Pattern[str]:
    """One token of code: whitespace, a newline, an escape, a marker or quote, a run of
    ordinary characters, or one character. Each alternative starts with its own characters."""
    specials = {*syntax.line, *(o for o, _ in syntax.blocks), *(o for o, _ in syntax.strings)}
    specials |= {*syntax.one_line, *(["<<"] if syntax.heredoc else [])}
    ordered = sorted(specials, key=len, reverse=True)
    firsts = "".join(sorted({s[0] for s in ordered} | {"\\"}))
    alternatives = [r"(?P<ws>[^\S\n]+)", r"(?P<nl>\n)", r"(?P<esc>\\[^\n])"]
    if ordered:
        alternatives.append("(?P<tok>" + "|".join(re.escape(s) for s in ordered) + ")")
    alternatives += ["(?P<run>[^" + re.escape(firsts) + r"\s]+)", "(?P<one>.)"]
    return re.compile("|".join(alternatives), re.S)


@functools.cache
def _closer(closer: str, raw: bool) -> re.Pattern[str]:
    """What ends or interrupts a string: an escape (unless raw), a newline, its closer."""
    return re.compile(("" if raw else r"\\[^\n]|") + r"\n|" + re.escape(closer))


_HEREDOC_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Lexer:
    """One pass over a text: the code lines, normalised (see :func:`code_lines`)."""

    def __init__(self, syntax: Syntax, text: str, drop: Collection[int]) -> None:
        self.syntax = syntax
        self.text = text if text.endswith("\n") else text + "\n"
        self.drop = drop
        self.lines: list[str] = []
        #: The current line: (text, verbatim) pieces; verbatim ones are strings.
        self.pieces: list[tuple[str, bool]] = []
        #: The line has code or a string, or lies inside a string.
        self.keep = False
        self.number = 1
        self.line_start = 0
        self.heredocs: list[tuple[str, bool]] = []
        self.yaml_block: int | None = None
        #: Quotes known not to close before this line end (searched once a line).
        self.unclosed: dict[str, int] = {}
        self.end_of_line = -1

    def run(self) -> tuple[str, ...] | None:
        text, syntax = self.text, self.syntax
        tokens = _tokens(syntax)
        blocks, strings = dict(syntax.blocks), dict(syntax.strings)
        pos, end = 0, len(text)
        pos = self.start_line(pos)
        while pos < end:
            match = tokens.match(text, pos)
            if match is None:  # pragma: no cover - the last alternative matches any character
                return None
            kind, token = match.lastgroup, match.group()
            if kind == "nl":
                self.end_line(False)
                pos = self.start_line(match.end())
                continue
            if kind == "ws":
                self.pieces.append((token, False))
            elif kind != "tok":
                self.code(token)
            elif token in syntax.line and self.marker_here(pos):
                stop = text.index("\n", pos)
                self.pieces.append((text[pos:stop], False))
                pos = stop
                continue
            elif token in blocks:
                stop = text.find(blocks[token], pos + len(token))
                if stop < 0:
                    return None  # open to the end: what it hides cannot be told
                pos = self.comment(pos, stop + len(blocks[token]))
                continue
            elif token in strings and self.value_starts():
                pos = self.string(pos, token, strings[token])
                continue
            elif token in syntax.one_line:
                pos = self.one_line_string(pos, token)
                continue
            elif token == "<<" and syntax.heredoc:
                self.heredoc(match.end())
                self.code(token)
            else:
                self.code(token)
            pos = match.end()
        return tuple(self.lines)

    # --- lines -------------------------------------------------------------------------------

    def code(self, token: str) -> None:
        self.pieces.append((token, False))
        self.keep = True

    def end_line(self, inside: bool) -> None:
        """End the current line; ``inside``: the next one starts inside a string."""
        if self.syntax.yaml and not inside and self.keep:
            self.yaml_block = self.block_scalar()
        if self.keep and self.number not in self.drop:
            self.lines.append(_squeezed(self.pieces))
        self.pieces = []
        self.keep = inside
        self.number += 1

    def start_line(self, pos: int) -> int:
        """Lines of heredocs and block scalars, then the new line's indentation."""
        text = self.text
        while pos < len(text) and (self.heredocs or self.yaml_block is not None):
            stop = text.index("\n", pos)
            line = text[pos:stop]
            if self.heredocs:
                word, loose = self.heredocs[0]
                if (line.lstrip(" \t") if loose else line) == word:
                    self.heredocs.pop(0)
                    self.pieces.append((line, False))
                else:
                    self.pieces.append((line, True))
            else:
                stripped = line.lstrip(" ")
                if stripped.strip() and len(line) - len(stripped) <= (self.yaml_block or 0):
                    self.yaml_block = None
                    break
                self.pieces.append((line, True))
            self.keep = True
            self.end_line(bool(self.heredocs))
            pos = stop + 1
        self.line_start = pos
        if self.syntax.indented:
            indent = pos
            while indent < len(text) and text[indent] in " \t":
                indent += 1
            if indent > pos and text[indent] != "\n":
                self.pieces.append((text[pos:indent], True))
            return indent
        return pos

    def line_end(self, pos: int) -> int:
        """Where the line of ``pos`` ends, found once a line (a line of a million quotes
        must not be searched a million times)."""
        if self.end_of_line < pos:
            self.end_of_line = self.text.index("\n", pos)
        return self.end_of_line

    def marker_here(self, pos: int) -> bool:
        return not self.syntax.marker_after_space or pos == 0 or self.text[pos - 1] in " \t\n"

    def value_starts(self) -> bool:
        """YAML: a quote opens a string only where a value starts (``it's`` is plain text)."""
        if not self.syntax.yaml:
            return True
        for piece, verbatim in reversed(self.pieces):
            if piece.strip():
                return not verbatim and piece.rstrip()[-1] in ":-[{,?"
        return True

    def block_scalar(self) -> int | None:
        """YAML: the indentation of a line that opens a block scalar (``key: |``), or None."""
        code = "".join(p for p, verbatim in self.pieces if not verbatim and not p.startswith("#"))
        code = code.rstrip().rstrip("-+0123456789")
        if not code.endswith(("|", ">")) or (len(code) > 1 and code[-2] not in " \t:-?"):
            return None
        line = self.text[self.line_start : self.text.index("\n", self.line_start)]
        return len(line) - len(line.lstrip(" "))

    # --- comments and strings ----------------------------------------------------------------

    def comment(self, pos: int, stop: int) -> int:
        """A block comment from ``pos`` to ``stop``, across lines."""
        first, *rest = self.text[pos:stop].split("\n")
        self.pieces.append((first, False))
        for line in rest:
            self.end_line(False)
            self.pieces.append((line, False))
        return stop

    def string(self, pos: int, opener: str, closer: str) -> int:
        """A string that may span lines; one never closed runs to the end (and is code)."""
        pattern = _closer(closer, closer in self.syntax.raw)
        start = pos
        search = pos + len(opener)
        while True:
            found = pattern.search(self.text, search)
            if found is None or found.group() == "\n":
                stop = len(self.text) - 1 if found is None else found.start()
                self.pieces.append((self.text[start:stop], True))
                self.keep = True
                if found is None:
                    return stop
                self.end_line(True)
                start = search = found.end()
            elif found.group() == closer:
                self.pieces.append((self.text[start : found.end()], True))
                self.keep = True
                return found.end()
            else:
                search = found.end()

    def one_line_string(self, pos: int, quote: str) -> int:
        """A string that ends on its line; a quote that does not close there is code."""
        stop = self.line_end(pos)
        if self.unclosed.get(quote) != stop:
            pattern = _closer(quote, False)
            search = pos + 1
            while (found := pattern.search(self.text, search, stop)) is not None:
                if found.group() == quote:
                    self.pieces.append((self.text[pos : found.end()], True))
                    self.keep = True
                    return found.end()
                search = found.end()
            self.unclosed[quote] = stop
        self.code(quote)
        return pos + 1

    def heredoc(self, pos: int) -> None:
        """``<<WORD``, ``<<-WORD``, ``<<~'WORD'``, ``<<<"WORD"``: lines from the next one on."""
        text = self.text
        pos += text[pos] == "<"
        loose = text[pos] in "-~"
        pos += loose
        while text[pos] in " \t":
            pos += 1
        quote = text[pos] if text[pos] in "'\"" else ""
        word = _HEREDOC_WORD.match(text, pos + len(quote))
        if word is not None and (not quote or text[word.end() : word.end() + 1] == quote):
            self.heredocs.append((word.group(), loose))


def _squeezed(pieces: list[tuple[str, bool]]) -> str:
    """A line without the whitespace that separates nothing; strings kept as they are."""
    out: list[str] = []
    last = ""
    gap = False  # whitespace since the last word
    for piece, verbatim in pieces:
        if verbatim:
            out.append(piece)
            last, gap = piece[-1:] or last, False
            continue
        if not piece.strip():
            gap = gap or bool(piece)
            continue
        gap = gap or piece[:1].isspace()
        for word in piece.split():
            if gap and _is_word(last) and _is_word(word[0]):
                out.append(" ")
            out.append(word)
            last, gap = word[-1], True
        gap = piece[-1:].isspace()
    return "".join(out)
