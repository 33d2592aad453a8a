"""The files an agent's shell command reads, and the files a patch edits. Pure.

Codex (and other clients with a shell tool) reads a file by running ``cat``,
``sed -n``, ``head``… and edits through ``apply_patch``, so the file push
(SPEC.md §14.1) finds its paths in the command text. What is found is what a
person reading the command would point at: operands of the reading commands
below — flags and their values left out, ``cd DIR`` followed, ``bash -lc '…'``
opened, pipes and ``&&`` chains split — and the ``*** Update File:`` /
``*** Add File:`` lines of a patch.

The text comes from a model, so it is untrusted: at most ``MAX_COMMAND``
characters of a command are tokenised (:mod:`shlex`, a character-by-character
state machine), a patch is scanned line by line, no regular expression sees
either, and a word that the shell would expand (``$HOME``, ``*.py``, ``~``) or
that holds control characters is never returned. Missing a path is fine (no
lesson pushed); naming a file the command does not read is not.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

#: Characters of a command looked at (Codex's commands are a line or two).
MAX_COMMAND = 4096
#: Characters of a patch looked at for its file lines.
MAX_PATCH = 1024 * 1024
#: Paths returned at most, from one command or one patch.
MAX_PATHS = 16
#: `bash -c 'bash -c "…"'`: how deep shell scripts given with -c are opened.
MAX_NESTING = 2
#: The longest path kept (Linux PATH_MAX).
MAX_PATH_LENGTH = 4096

#: What the tokenizer splits off as operators: a run of these is one token.
OPERATOR_CHARS = ";&|()<>\n"
#: Characters of words the shell would expand: such a word names no one file we can know.
EXPANDED = frozenset("$`*?[{")
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
#: Commands that run the command after them (their own options skipped).
PREFIXES = frozenset({"command", "exec", "nohup", "time", "builtin", "stdbuf"})
PATCH_PREFIXES = ("*** Update File: ", "*** Add File: ")


@dataclass(frozen=True)
class Reader:
    """How a reading command's words split into options and files."""

    #: Options whose value is the next word when not attached (`-n 20`, `--lines 20`).
    takes_value: frozenset[str] = frozenset()
    #: The first operand is a pattern or script (`rg PATTERN PATH`, `sed -n 1,5p FILE`)…
    pattern_first: bool = False
    #: …unless one of these options gave it (`rg -e PATTERN PATH`).
    pattern_options: frozenset[str] = frozenset()
    #: Options that make the command list or describe rather than read (`rg --files`).
    not_reading: frozenset[str] = frozenset()


def _options(names: str) -> frozenset[str]:
    return frozenset(names.split())


_PATTERN_OPTIONS = _options("-e -f --regexp --file")
READERS: dict[str, Reader] = {
    "cat": Reader(),
    "bat": Reader(_options("-l -H -r --language --highlight-line --line-range")),
    "more": Reader(_options("-n --lines")),
    "nl": Reader(_options("-b -d -f -h -i -l -n -s -v -w")),
    "head": Reader(_options("-n -c --lines --bytes")),
    "tail": Reader(
        _options("-n -c -s --lines --bytes --pid --sleep-interval --max-unchanged-stats")
    ),
    "less": Reader(
        _options(
            "-b -h -j -k -o -O -p -P -t -T -x -y -z -# "
            "--log-file --pattern --prompt --tag --tag-file --tabs"
        )
    ),
    "sed": Reader(
        _options("-l --line-length"),
        pattern_first=True,
        pattern_options=_options("-e -f --expression --file"),
    ),
    "grep": Reader(
        _options(
            "-A -B -C -m -d -D --after-context --before-context --context --max-count "
            "--include --exclude --exclude-dir --exclude-from --label --directories "
            "--devices --binary-files --group-separator"
        ),
        pattern_first=True,
        pattern_options=_PATTERN_OPTIONS,
    ),
    "rg": Reader(
        _options(
            "-A -B -C -m -M -j -g -t -T -E -r -d --after-context --before-context --context "
            "--max-count --max-columns --threads --glob --iglob --type --type-not --type-add "
            "--type-clear --encoding --replace --max-depth --maxdepth --sort --sortr --color "
            "--colors --pre --pre-glob --context-separator --field-context-separator "
            "--field-match-separator --max-filesize --path-separator --dfa-size-limit "
            "--regex-size-limit --engine --ignore-file --hostname-bin --hyperlink-format "
            "--generate"
        ),
        pattern_first=True,
        pattern_options=_PATTERN_OPTIONS,
        not_reading=_options("--files --type-list --help -h --version -V"),
    ),
}


def read_paths(command: str) -> tuple[str, ...]:
    """The files the reading commands in a shell command read, in order, each once.

    Relative paths stay relative (to the command's working folder), joined to the folder
    of a ``cd`` before them; after a ``cd`` we cannot follow, relative paths are left out.
    """
    found = _unique(_read_paths(command, "", 0))
    return tuple(found[:MAX_PATHS])


def patch_paths(patch: str) -> tuple[str, ...]:
    """The files an ``apply_patch`` patch updates or adds, in order, each once."""
    found: list[str] = []
    start = 0
    text = patch[:MAX_PATCH]
    while start < len(text) and len(found) < MAX_PATHS * 4:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        start = end + 1
        for prefix in PATCH_PREFIXES:
            if line.startswith(prefix):
                path = line[len(prefix) :].strip()
                if _literal_path(path):
                    found.append(path)
    return tuple(_unique(found)[:MAX_PATHS])


def is_patch(text: str) -> bool:
    """Whether a shell command carries an apply_patch patch (`apply_patch <<'EOF' …`)."""
    return "*** Begin Patch" in text[:MAX_PATCH]


# --- the command's words ----------------------------------------------------------------------


def _tokens(command: str) -> list[str]:
    """The shell words and operators of ``command``, cut at MAX_COMMAND (where a quote left
    open by the cut ends the list); a quote the command itself leaves open gives no words:
    the shell would refuse to run it."""
    text = command[:MAX_COMMAND]
    cut = len(command) > MAX_COMMAND
    lexer = shlex.shlex(text.replace("\\\n", ""), posix=True, punctuation_chars=OPERATOR_CHARS)
    lexer.whitespace = " \t\r"  # a newline separates commands: it is an operator here
    lexer.whitespace_split = True
    lexer.commenters = ""  # `#` starts a comment only at a word's start: handled below
    words: list[str] = []
    try:
        for word in lexer:
            words.append(word)
    except ValueError:  # no closing quotation
        return words if cut else []
    if cut and words:
        words.pop()  # the last word may have been cut in two
    return words


def _is_operator(word: str) -> bool:
    return bool(word) and all(char in OPERATOR_CHARS for char in word)


def _segments(words: Sequence[str]) -> Iterator[tuple[list[str], list[str]]]:
    """Each simple command: (its words, the files redirected into it with ``<``)."""
    current: list[str] = []
    inputs: list[str] = []
    heredoc_ends: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "\n" and heredoc_ends:
            index = _skip_heredocs(words, index, heredoc_ends)
            heredoc_ends = []
        if word.startswith("#"):
            while index < len(words) and words[index] != "\n":
                index += 1  # a comment, up to the end of its line
            continue
        if not _is_operator(word):
            current.append(word)
            continue
        if any(char in word for char in ";|()\n") or word in ("&", "&&"):
            yield current, inputs
            current, inputs = [], []
            continue
        # A redirection: its fd number (`2>`) is not an operand, its target is a file.
        if current and current[-1].isdigit():
            current.pop()
        target = words[index] if index < len(words) else ""
        if target and not _is_operator(target):
            index += 1
            if word in ("<<", "<<-"):
                heredoc_ends.append(target)
            elif word == "<":
                inputs.append(target)
    yield current, inputs


def _skip_heredocs(words: Sequence[str], index: int, ends: Sequence[str]) -> int:
    """Past the bodies of here-documents, which start after the line that opened them."""
    for end in ends:
        while index < len(words):
            word = words[index]
            index += 1
            at_line_start = index >= 2 and words[index - 2] == "\n"
            if word == end and at_line_start and (index == len(words) or words[index] == "\n"):
                break
    return index


# --- which words are files --------------------------------------------------------------------


def _read_paths(command: str, cwd: str | None, depth: int) -> Iterator[str]:
    """``cwd``: the folder relative paths are in ("" for the command's own; None: unknown)."""
    for words, inputs in _segments(_tokens(command)):
        words = _command_words(words)
        if not words:
            yield from _joined(cwd, inputs)
            continue
        name = posixpath.basename(words[0])
        if name == "cd":
            cwd = _changed_folder(cwd, words[1:])
            continue
        if name in SHELLS:
            script = _shell_script(words[1:])
            if script is not None and depth < MAX_NESTING:
                yield from _read_paths(script, cwd, depth + 1)
            continue
        reader = READERS.get(name)
        if reader is not None:
            yield from _joined(cwd, _operands(words[1:], reader))
        yield from _joined(cwd, inputs)


def _command_words(words: list[str]) -> list[str]:
    """``words`` without leading variable assignments and commands that run the next one."""
    index = 0
    while index < len(words):
        word = words[index]
        name = posixpath.basename(word)
        if _is_assignment(word) or name in PREFIXES:
            index += 1
        elif name == "env":
            index += 1
            while index < len(words) and (
                words[index].startswith("-") or _is_assignment(words[index])
            ):
                index += 2 if words[index] in ("-u", "--unset", "-C", "--chdir") else 1
        elif name == "timeout":
            index += 1
            while index < len(words) and words[index].startswith("-"):
                index += 2 if words[index] in ("-s", "-k", "--signal", "--kill-after") else 1
            index += 1  # the duration
        else:
            break
    return words[index:]


def _is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def _changed_folder(cwd: str | None, args: Sequence[str]) -> str | None:
    operands = [arg for arg in args if not arg.startswith("-") or arg == "-"]
    if cwd is None or len(operands) != 1 or operands[0] == "-" or not _plain_word(operands[0]):
        return None  # `cd`, `cd -`, `cd "$DIR"`: from here on we do not know the folder
    folder = posixpath.normpath(posixpath.join(cwd, operands[0]))
    return "" if folder == "." else folder


def _shell_script(args: Sequence[str]) -> str | None:
    """The script of `bash -c SCRIPT` / `bash -lc SCRIPT`; None for a script file or stdin."""
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg in ("-o", "+o", "-O", "+O"):
            index += 1  # `bash -o pipefail -c …`
        elif arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            rest = [a for a in args[index:] if not a.startswith("-")]
            return rest[0] if rest else None
        elif not arg.startswith(("-", "+")):
            return None
    return None


def _operands(args: Sequence[str], reader: Reader) -> list[str]:
    """The operands of a reading command: its words without options and their values."""
    operands: list[str] = []
    pattern_given = False
    options_done = False
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if options_done or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
            continue
        if arg == "--":
            options_done = True
            continue
        if arg.startswith("--"):
            name, equals, _ = arg.partition("=")
            if name in reader.not_reading:
                return []
            pattern_given = pattern_given or name in reader.pattern_options
            valued = name in reader.takes_value or name in reader.pattern_options
            index += 1 if valued and not equals else 0
            continue
        for position in range(1, len(arg)):  # a cluster of short options: -n20, -ba, -A 3
            option = "-" + arg[position]
            if option in reader.not_reading:
                return []
            pattern_given = pattern_given or option in reader.pattern_options
            if option in reader.takes_value or option in reader.pattern_options:
                index += 1 if position == len(arg) - 1 else 0  # else the rest is its value
                break
    if reader.pattern_first and not pattern_given:
        operands = operands[1:]
    return [operand for operand in operands if not operand.startswith("+")]  # tail +5


def _joined(cwd: str | None, paths: Sequence[str]) -> Iterator[str]:
    for path in paths:
        if not _shell_path(path):
            continue
        if posixpath.isabs(path):
            yield path
        elif cwd is not None:
            yield posixpath.join(cwd, path) if cwd else path


def _shell_path(word: str) -> bool:
    """A word that names one file as it stands (the shell would not expand it)."""
    return _literal_path(word) and _plain_word(word) and word != "-"


def _plain_word(word: str) -> bool:
    """A word the shell passes on as it is (no expansion), printable, of a path's length."""
    return (
        0 < len(word) <= MAX_PATH_LENGTH
        and word.isprintable()
        and not any(char in EXPANDED for char in word)
        and not word.startswith(("~", "/dev/", "/proc/"))
    )


def _literal_path(path: str) -> bool:
    return (
        0 < len(path) <= MAX_PATH_LENGTH
        and path.isprintable()
        and path not in (".", "..")
        and not path.endswith("/..")
    )


def _unique(paths: Iterator[str] | Sequence[str]) -> list[str]:
    found: dict[str, None] = {}
    for path in paths:
        found.setdefault(path, None)
        if len(found) > MAX_PATHS:
            break
    return list(found)
