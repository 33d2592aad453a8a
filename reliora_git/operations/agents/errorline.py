"""The error line of a failed command's output: what the end-of-turn ask quotes (SPEC §16).

The line is the failing test's or command's own error, never a summary count: of pytest's
``1 failed, 20 passed in 0.3s`` and ``FAILED tests/test_x.py::test_y - SignatureExpired:
Signature age 2 > 1 seconds``, the second. Each line gets a rank, the best rank wins:

0. pytest's short summary of a failure with its message (``FAILED path::test - Error: msg``,
   ``ERROR path - …``);
1. an exception: the line after a Python traceback's frames, ``E   SomeError: msg``, a
   dotted or CamelCase exception name opening a line (``itsdangerous.exc.SignatureExpired:``),
   ``…Error``/``…Exception`` anywhere, a Rust or Go panic, jest's ``Expected:`` (with the
   ``Received:`` line after it);
2. an ``error``/``fatal`` line (compilers, tsc, cargo, git), pytest's first ``E`` line of a
   failure (``E   assert 2 == 1``), a ``FAILED`` test id without its message;
3. a ``file:line: message`` line (go test, linters);
4. generic failure lines: ``npm ERR!``, ``make: ***``, ``FAIL src/x.test.js``, a ``●`` test
   name alone.

An exception is the last of its rank (the final one of a chain); in the other ranks the first
line wins (the first test that failed, a compiler's first error before its ``could not
compile``). A line
ending in ``:`` (Rust's ``thread 'x' panicked at src/lib.rs:3:5:``) takes the next line with
it, and the test a runner named last before it (jest's ``●``, go's ``--- FAIL:``, pytest's
``____ test_y ____``) is put in front. Summary lines — every word a count, a duration or a
word such as failed, passed, total, exit, code (``Tests: 1 failed, 20 total``, ``FAIL``,
``exit code 1``) — are never the error line, nor the clients' own wrapper lines.

One pass over at most :data:`OUTPUT_READ` characters, regular expressions without nested
repetition: linear in the output, whatever it holds. The line is data: the ask masks, cuts
and quotes it (capture.py).
"""

from __future__ import annotations

import re

#: The end of an output read for its error line (the transcript keeps 4,000 characters).
OUTPUT_READ = 16_000
#: Lines looked at after a jest ``Expected:`` line for its ``Received:`` line.
RECEIVED_WITHIN = 3

#: Lines of the clients' own wrappers around an output, never its error line.
_NOISE = re.compile(
    r"^(?:Exit code:? -?\d+|Exit Code: -?\d+|Process Group PGID: \d+|</?untrusted_context>|"
    r"Chunk ID:.*|Wall time:.*|Process exited with code.*|Original token count:.*|Output:|"
    r"Error: Exit code \d+)\s*$"
)
_TRACEBACK = "Traceback (most recent call last)"
#: An exception's name opening a line: dotted (``a.b.Expired``) or of two humps or more.
_EXCEPTION = re.compile(r"(?:E\s+)?(?:[A-Za-z_]\w*\.)*[A-Z][a-z0-9]+[A-Z]\w*(?::|$)")
_NAMED_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|\bpanicked at\b|\bpanic:")
_ERROR_WORD = re.compile(r"\b(?:error|fatal)\b", re.IGNORECASE)
_FILE_LINE = re.compile(r"\.\w+:\d+(?::\d+)?: \S")
#: pytest's location of a failure, ``src/signer.py:40: SignatureExpired``: the name, no message.
_LOCATION = re.compile(r"\S+:\d+: [\w.]+$")
_FAILURE_WORD = re.compile(r"\b(?:FAILED|FAIL|failed|failure)\b", re.IGNORECASE)
_GENERIC = ("npm ERR!", "npm error", "make: ***", "make[", "error Command failed")
_WORD = re.compile(r"[a-z]+")
#: The words of summary lines: how many failed, how long it took, how it exited.
_SUMMARY_WORDS = frozenset(
    {"failed", "failures", "failure", "fail", "fails", "passed", "pass", "passes", "passing",
     "ok", "error", "errors", "errored", "skipped", "skip", "xfailed", "xpassed", "warnings",
     "warning", "deselected", "selected", "rerun", "reruns", "total", "tests", "test", "suites",
     "suite", "snapshots", "snapshot", "time", "in", "and", "of", "ran", "result", "ignored",
     "measured", "filtered", "out", "finished", "exit", "exited", "code", "status", "with",
     "command", "s", "ms", "m", "h", "sec", "seconds", "second", "todo", "pending",
     "collected", "items", "item", "interrupted", "during", "collection", "stopping", "after",
     "npm", "err", "elifecycle", "errno", "done", "found", "files", "file", "to", "lib",
     "short", "summary", "info", "returned", "process", "non", "zero", "see", "above", "for",
     "more", "details"}
)  # fmt: skip


def is_summary(line: str) -> bool:
    """Whether ``line`` only counts or times (``1 failed, 20 passed in 0.3s``, ``FAIL``,
    ``Tests: 1 failed``, ``exit code 1``), or holds no word at all (``=====``)."""
    return all(word in _SUMMARY_WORDS for word in _WORD.findall(line.lower()))


def _test_name(line: str) -> str:
    """The test a runner names in a header line (jest ``●``, go ``--- FAIL:``, pytest ``___``)."""
    if line.startswith(("● ", "--- FAIL: ")):
        return line
    if line.startswith("___") and line.endswith("___"):
        return line.strip("_ ")
    return ""


def _rank(line: str, after_traceback: bool, previous: str) -> int | None:
    """How well ``line`` says what went wrong (0 best), or None when it does not."""
    if after_traceback:
        return 1  # the exception line that ends a traceback, whatever its name
    if line.startswith(("FAILED ", "ERROR ")):
        return 0 if " - " in line else 2
    if line.startswith(_GENERIC):
        return 4
    if _LOCATION.match(line):
        return 3
    if _EXCEPTION.match(line) and not line.split(":", 1)[0].endswith("Warning"):
        return 1
    if _NAMED_ERROR.search(line) or (line.startswith("Expected") and ":" in line[:40]):
        return 1
    if line.startswith("E ") or line == "E":  # pytest: the first line of an assertion only
        return None if previous.startswith("E ") else 2
    if _ERROR_WORD.search(line):
        return 2
    if _FILE_LINE.search(line):
        return 3
    if line.startswith("● ") or _FAILURE_WORD.search(line):
        return 4
    return None


def error_line(output: str) -> str:
    """The line of a failed command's output that says what went wrong ("" for none)."""
    raw_lines = output[-OUTPUT_READ:].splitlines()
    lines = [raw.strip().removeprefix("Output: ") for raw in raw_lines]
    best: tuple[int, int, str] | None = None  # rank, index, the test named before it
    fallback = -1
    test = previous = ""
    in_traceback = False
    for index, line in enumerate(lines):
        if not line or _NOISE.match(line):
            continue
        if line.startswith(_TRACEBACK):
            in_traceback = True
            continue
        # A traceback's frames are indented; the first line that is not is its exception.
        after_traceback = in_traceback
        if in_traceback:
            if raw_lines[index][:1] in (" ", "\t"):
                continue
            in_traceback = False
        name = _test_name(line)  # `____ test_total ____` is no summary, whatever its words
        if not after_traceback and not name and is_summary(line):
            continue
        rank = _rank(line, after_traceback, previous)
        if rank is not None and (best is None or rank < best[0] or rank == best[0] == 1):
            best = (rank, index, test if rank else "")
        test = name or test
        previous, fallback = line, index
    if best is None:
        return lines[fallback] if fallback >= 0 else ""
    _, index, named = best
    text = _with_next(lines, index)
    return f"{named} — {text}" if named and named not in text else text


def _with_next(lines: list[str], index: int) -> str:
    """Line ``index``, with the line after it when it ends in ``:`` and with jest's
    ``Received:`` line after an ``Expected:`` one."""
    text = lines[index]
    after = [line for line in lines[index + 1 : index + 1 + RECEIVED_WITHIN] if line]
    if text.startswith("Expected"):
        received = next((line for line in after if line.startswith("Received")), "")
        return f"{text} / {received}" if received else text
    if text.endswith(":") and after and not _NOISE.match(after[0]):
        return f"{text} {after[0]}"
    return text
