"""Whether a change of a file changed its code, or only blank lines, whitespace or
comment lines (SPEC.md §12: such a change does not make a lesson stale). Pure.

The two versions of the file are each reduced to their *code lines* by the lexer of the
file's language (:mod:`reliora_git.records.code_lines`, which says what counts as a
comment line); the change is *meaningful* when the two lists differ. Where in doubt the
change counts (a mistake must never hide a code change): a file too large to read, a
binary one, or one the lexer cannot tell (a block comment still open at the end).

In Python, a docstring (the string that is the first statement of a module, class or
function, alone on its lines) is left out as comments are; it is found with :mod:`ast`
(C, linear), only when a code line of either version starts with a string; a file that
does not parse keeps its docstrings.
"""

from __future__ import annotations

import ast
import warnings

from reliora_git.records.code_lines import Syntax, code_lines, newlines, syntax_of

#: Files larger than this are not read: a change to them always counts.
MAX_JUDGED_BYTES = 1024 * 1024


def meaningful(path: str, old: str, new: str) -> bool:
    """Whether changing ``path`` from ``old`` to ``new`` changed its code (SPEC.md §12)."""
    return Judge().meaningful(path, old, new)


class Judge:
    """:func:`meaningful` for many changes: each version of a file is read once (in a
    history, a version is the new side of one change and the old side of the next)."""

    def __init__(self) -> None:
        self.plain: dict[tuple[str, str], tuple[str, ...] | None] = {}
        self.documented: dict[tuple[str, str], tuple[str, ...] | None] = {}

    def meaningful(self, path: str, old: str, new: str) -> bool:
        if old == new:
            return False
        if max(len(old), len(new)) > MAX_JUDGED_BYTES or "\0" in old or "\0" in new:
            return True
        syntax = syntax_of(path)
        before, after = self.lines(syntax, old), self.lines(syntax, new)
        if before is None or after is None:
            return True
        if before == after:
            return False
        if not syntax.docstrings or not (_opens_string(before) or _opens_string(after)):
            return True
        before, after = self.lines(syntax, old, True), self.lines(syntax, new, True)
        return before is None or after is None or before != after

    def lines(self, syntax: Syntax, text: str, docstrings: bool = False) -> tuple[str, ...] | None:
        kept = self.documented if docstrings else self.plain
        key = (syntax.name, text)
        if key not in kept:
            drop = docstring_lines(text) if docstrings else ()
            kept[key] = code_lines(syntax, text, drop)
        return kept[key]


def _opens_string(lines: tuple[str, ...]) -> bool:
    """Whether a code line starts with a string (a docstring starts its line)."""
    for line in lines:
        start = line.lstrip(" \t")[:2]
        if start[:1] in ("'", '"') or (start[:1] in "rRuU" and start[1:] in ("'", '"')):
            return True
    return False


def docstring_lines(text: str) -> frozenset[int]:
    """The lines (from 1) of Python docstrings that stand alone on their lines; none when
    the text does not parse (the docstrings then count as code)."""
    text = newlines(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    lines = text.split("\n")
    found: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = node.body[0] if node.body else None
        if not (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and first.end_lineno is not None
            and first.end_col_offset is not None
        ):
            continue
        # Offsets are in UTF-8 bytes: only whitespace before it, nothing or a comment after.
        head = lines[first.lineno - 1].encode()[: first.col_offset]
        tail = lines[first.end_lineno - 1].encode()[first.end_col_offset :].strip()
        if head.strip() == b"" and (not tail or tail.startswith(b"#")):
            found.update(range(first.lineno, first.end_lineno + 1))
    return frozenset(found)
