"""Trouble in a session's steps: what the end-of-turn ask (capture.py, SPEC §16) is about.

:func:`find` reads the steps of a session's transcript (operations/agents/transcript.py)
once, and finds the trouble in them:

* a command that failed and later passed (the files changed in between are the fix);
* a command that failed, then files changed, with no passing run after (still a fix tried);
* the person correcting the agent (a later prompt opening with "no", "wrong", "that's not"…,
  or any prompt after an interruption).

Failures of commands that fail as a way of answering (``grep``, ``test``, ``git diff``…) are
not trouble. It also notes whether a record was saved or updated in the session, the
lessons that got feedback (``reliora feedback``), and every file the session changed. The
error line kept is the failure's own (errorline.py), never a summary count. Pure.

Reading is linear in the transcript: a command is read to its first :data:`COMMAND_READ`
characters, a failure keeps at most :data:`FILES_KEPT` files changed after it, and at most
:data:`MAX_FAILING` command families wait for a passing run at once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from reliora_git.operations.agents.clients.base import Step
from reliora_git.operations.agents.errorline import error_line

#: What opens every ask: also how a client's echo of it as a prompt is recognised.
OPENING = "Reliora, before you finish:"
#: Files kept per failure, and failing command families followed at once (linear reading).
FILES_KEPT = 20
MAX_FAILING = 50
#: Options of `reliora feedback` that take a value (the value is not the lesson's id).
_FEEDBACK_VALUED = frozenset({"--note", "-m", "--repo"})
#: Programs whose failure is an answer (no match, a difference, a missing file), not trouble.
PROBES = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "ls", "test", "[", "[[",
     "which", "command", "type", "diff", "cmp", "stat", "file", "cat", "head", "tail", "wc",
     "pgrep", "curl", "wget", "ping", "false", "reliora", "sleep"}
)  # fmt: skip
GIT_PROBES = frozenset(
    {"grep", "diff", "show", "log", "status", "rev-parse", "ls-files", "cat-file", "config",
     "branch", "remote", "describe", "merge-base", "symbolic-ref", "check-ignore", "blame"}
)  # fmt: skip
#: Words that set up a command rather than run one: `cd x && pytest` runs pytest.
_SETUP = frozenset(
    {"cd", "export", "source", ".", "set", "pushd", "popd", "unset", "echo", "printf", "true"}
)
_WRAPPERS = frozenset({"sudo", "time", "env", "nice", "nohup", "command", "exec"})
_SEGMENTS = re.compile(r"&&|\|\||;|\||\n")
_WORD = re.compile(r"""(?:'[^']*'|"(?:\\.|[^"\\])*"|[^\s'"])+""")
#: What of a command is read to tell what it runs (a heredoc's body is not needed).
COMMAND_READ = 1000
#: Setup segments (`cd x &&`, `export A=1;`) looked past before the command that runs.
SETUP_SEGMENTS = 8
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_CORRECTION = re.compile(
    r"^\W*(?:no\b|nope\b|wrong\b|stop\b|wait\b|undo\b|revert\b|don'?t\b|do not\b|never\b|"
    r"that'?s (?:not|wrong)|this is (?:not|wrong)|it'?s (?:not|wrong|still)|not (?:that|what|"
    r"quite|like)|you (?:broke|missed|forgot|didn'?t|did not|should(?:n'?t)? have)|"
    r"(?:it|this|that) (?:still )?(?:fails|doesn'?t|does not|didn'?t|did not|broke))",
    re.IGNORECASE,
)
_INTERRUPTED = "[Request interrupted by user"


@dataclass(frozen=True)
class Trouble:
    """One piece of evidence: a failing command (and whether it passed later) or a correction."""

    command: str = ""
    error: str = ""
    files: tuple[str, ...] = ()
    fixed: bool = False
    correction: str = ""


@dataclass
class Findings:
    troubles: list[Trouble] = field(default_factory=list)
    #: A record was saved or updated in the session (a lesson is already in).
    recorded: bool = False
    #: Lessons that got feedback in the session.
    feedback: set[str] = field(default_factory=set)
    #: Every file changed in the session, in order.
    edited: list[str] = field(default_factory=list)


# --- reading a command line ----------------------------------------------------------------


def _words(segment: str) -> list[str]:
    """The shell words of ``segment``, quotes removed (a regular expression, not ``shlex``:
    linear, and a long heredoc costs no more than its first :data:`COMMAND_READ` characters)."""
    return [word.replace("'", "").replace('"', "") for word in _WORD.findall(segment)]


def program(command: str) -> list[str]:
    """The words of the command that runs: past setup segments, assignments and wrappers."""
    for segment in _SEGMENTS.split(command, maxsplit=SETUP_SEGMENTS):
        words = _words(segment)
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
            words = words[1:]
        if words and words[0] not in _SETUP:
            return words
    return []


def is_probe(command: str) -> bool:
    """Whether a failure of ``command`` is an answer (a search found nothing), not trouble."""
    words = program(command)
    if not words:
        return True
    name = words[0].rsplit("/", 1)[-1]
    if name == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return sub in GIT_PROBES
    return name in PROBES


def _family(command: str) -> str:
    """The program and its first argument: `pytest tests/x.py -x` and `pytest tests/x.py` meet."""
    words = program(command)
    arguments = [w for w in words[1:] if not w.startswith("-")]
    return " ".join(words[:1] + arguments[:1])


def _reliora(command: str) -> tuple[str, list[str]] | None:
    """``("record"|"update"|"feedback", ids)`` for a reliora command among the segments."""
    if "reliora" not in command:
        return None
    for segment in _SEGMENTS.split(command):
        words = _words(segment)
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if len(words) >= 2 and words[0].rsplit("/", 1)[-1] == "reliora":
            verb = words[1]
            if verb in ("record", "update", "edit"):
                return "record", []
            if verb == "feedback":
                return "feedback", _positionals(words[2:])[:1]
    return None


def _positionals(words: list[str]) -> list[str]:
    """The arguments of ``words`` that are not options or the values of options."""
    found: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--":
            continue
        elif word.startswith("-"):
            skip = word in _FEEDBACK_VALUED  # `--note=x` carries its value
        else:
            found.append(word)
    return found


# --- finding trouble -----------------------------------------------------------------------


@dataclass
class _Failure:
    command: str
    error: str
    files: dict[str, None] = field(default_factory=dict)  # changed since, in order


def find(steps: Sequence[Step]) -> Findings:
    """The trouble, records and feedback of a session's steps (pure, one pass)."""
    found = Findings()
    failing: dict[str, _Failure] = {}  # by the command's family, oldest first
    edited: set[str] = set()
    prompts = 0
    interrupted = False
    for step in steps:
        if step.kind == "run":
            command = step.text[:COMMAND_READ]
            reliora = _reliora(command)
            if reliora is not None:
                if not step.failed:
                    if reliora[0] == "record":
                        found.recorded = True
                    else:
                        found.feedback.update(reliora[1])
                continue
            family = _family(command)
            if (
                step.failed
                and family not in failing
                and len(failing) < MAX_FAILING
                and not is_probe(command)
            ):
                failing[family] = _Failure(step.text, error_line(step.output))
            elif not step.failed and family in failing:
                failure = failing.pop(family)
                found.troubles.append(
                    Trouble(failure.command, failure.error, tuple(failure.files), fixed=True)
                )
        elif step.kind == "edit":
            for file in step.files:
                if file not in edited:
                    edited.add(file)
                    found.edited.append(file)
                for failure in failing.values():
                    if len(failure.files) < FILES_KEPT:
                        failure.files[file] = None
        elif step.kind == "prompt":
            text = step.text.strip()
            if text.startswith(OPENING):
                continue  # the client's echo of our own ask
            if text.startswith(_INTERRUPTED):
                interrupted = True
                continue
            if prompts and (interrupted or _CORRECTION.match(text)):
                found.troubles.append(Trouble(correction=text))
            prompts += 1
            interrupted = False
        elif step.kind == "record":
            found.recorded = True
        elif step.kind == "feedback":
            found.feedback.update(step.files)
    for failure in failing.values():
        if failure.files:  # a fix was tried even if the command was not run again
            found.troubles.append(Trouble(failure.command, failure.error, tuple(failure.files)))
    return found
