"""The stdio wire of ``reliora mcp`` before and around the MCP SDK: standard library only.

Answering ``initialize`` early. Importing the ``mcp`` SDK takes most of a second (its
package imports its own client and the types of every protocol revision), and a client
waits for the answer to ``initialize`` before it lists the tools; every agent session
starts by paying that wait. So the fast start (commands/serving.py) reads the client's
first line and, when it is a plain ``initialize`` naming a revision listed here,
answers it from the constants below before the SDK is imported. The SDK, once loaded,
is handed that same request first, so its session is in the state it would have been
in; its own answer is dropped, after being compared with the one sent: an SDK release
that answers differently is reported on stderr rather than going unnoticed (and
tests/test_mcp_lifecycle.py compares the two answers for every revision). Anything
else as the first line (a newer revision, a malformed request, another method) is left
for the SDK to answer.

Taking the wire. While serving, fd 0 reads the null device and fd 1 writes to stderr,
as the SDK's own stdio transport arranges: a git command or a stray ``print`` must not
read the client's messages or write into the protocol stream. The client's pipes are
kept on private descriptors that child processes do not inherit.

Stopping. SIGINT and SIGTERM mean the client wants the server gone (Claude Code sends
SIGINT, then SIGTERM). Tool calls in flight are told to stop and get a moment to unwind
(lock files removed, temporary files deleted), then the process exits with code 0: a
stop that was asked for and carried out is not a failure, and clients report a server
that exits otherwise as failed. A closed stdin ends the server the same way
(mcp_server.serve).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, BinaryIO

from reliora_git import __version__
from reliora_git.interfaces.mcp_help import INSTRUCTIONS

SERVER_NAME = "reliora"
#: The revisions answered early: those the SDK negotiates by handshake
#: (mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS in mcp 2.3); a client naming one of
#: them gets it back, as from the SDK.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: What the SDK announces for this server's handlers (MCPServer registers the prompt and
#: resource lists too, empty; the tools never change while it runs).
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
#: The signals that stop the server.
STOP_SIGNALS = ("SIGINT", "SIGTERM")


def early_answer(line: bytes) -> dict[str, Any] | None:
    """The answer to the client's first line, if it is an ``initialize`` answered early.

    Only a request the SDK would accept as it is, for a revision listed here: for any
    other the SDK's answer (an error, another revision) is the right one, so None.
    """
    try:
        request = json.loads(line)
    except ValueError:
        return None
    if not isinstance(request, dict) or request.get("jsonrpc") != "2.0":
        return None
    ident = request.get("id")
    if request.get("method") != "initialize" or not _is_request_id(ident):
        return None
    params = request.get("params")
    if not isinstance(params, dict) or params.get("protocolVersion") not in HANDSHAKE_VERSIONS:
        return None
    client = params.get("clientInfo")
    if not isinstance(params.get("capabilities"), dict) or not isinstance(client, dict):
        return None
    if not (isinstance(client.get("name"), str) and isinstance(client.get("version"), str)):
        return None
    result: dict[str, Any] = {"capabilities": CAPABILITIES}
    if INSTRUCTIONS is not None:
        result["instructions"] = INSTRUCTIONS
    result["protocolVersion"] = params["protocolVersion"]
    result["serverInfo"] = {"name": SERVER_NAME, "version": __version__}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def encode(message: dict[str, Any]) -> bytes:
    """One message as the stdio transport frames it: compact JSON and a newline."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@dataclass
class Wire:
    """The client's pipes: what it sends (``reader``) and what it reads (``writer``)."""

    reader: BinaryIO
    writer: BinaryIO

    @classmethod
    def take(cls) -> Wire:
        """The pipes on fds 0 and 1, moved to private descriptors; 0 and 1 diverted."""
        if os.name != "posix":  # no descriptor juggling there: serve the streams in place
            return cls(sys.stdin.buffer, sys.stdout.buffer)
        import fcntl

        try:
            # Above 2 even when a standard descriptor is closed, and not inherited.
            reader = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
            writer = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        except OSError:
            return cls(sys.stdin.buffer, sys.stdout.buffer)
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.dup2(2, 1)
        return cls(os.fdopen(reader, "rb"), os.fdopen(writer, "wb"))


class Stopper:
    """SIGINT and SIGTERM: run ``before_exit`` (stop the calls, let them unwind), exit 0."""

    def __init__(self) -> None:
        #: Set by the server once it runs calls; until then there is nothing to wait for.
        self.before_exit: Callable[[], object] | None = None
        self._stopping = False

    def install(self) -> None:
        for name in STOP_SIGNALS:
            number = getattr(signal, name, None)
            if number is not None:
                signal.signal(number, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # Runs on the main thread, between two steps of whatever it was doing (the event
        # loop, an import): the calls run on worker threads and unwind without it. A
        # second signal (SIGTERM after SIGINT) lands here while the first waits: the
        # first's wait goes on, so a call is not cut off in the middle of a write.
        if self._stopping:
            return
        self._stopping = True
        if self.before_exit is not None:
            self.before_exit()
        # Not SystemExit: the event loop would wait for the thread blocked on stdin.
        exit_now()


def exit_now() -> None:
    """Exit 0 at once, once the calls have ended: what is written is flushed, nothing more.

    The interpreter's own exit would first tear down every module the SDK loaded,
    most of a second during which the client waits for the process to end.
    """
    for stream in (sys.stderr, sys.stdout):
        with contextlib.suppress(Exception):  # a write a signal interrupted: nothing to add
            stream.flush()
    os._exit(0)


@dataclass
class Start:
    """A server start: its wire, its signal handling, and the client's first line, if read."""

    wire: Wire
    stopper: Stopper
    #: The client's first line, read before the SDK was loaded (b"" if not read).
    first: bytes = b""
    #: The answer already sent to ``first``, when it was an ``initialize`` answered early.
    answered: dict[str, Any] | None = field(default=None)

    @classmethod
    def take(cls) -> Start:
        """Stop on signals from now on, and take the wire (see the module's docstring)."""
        stopper = Stopper()
        stopper.install()
        return cls(Wire.take(), stopper)

    def answer_first(self) -> bool:
        """Read the client's first line and answer it if it is an early ``initialize``.

        False when the client closed stdin without sending anything: nothing to serve.
        """
        self.first = self.wire.reader.readline()
        if not self.first:
            return False
        self.answered = early_answer(self.first)
        if self.answered is not None:
            self.wire.writer.write(encode(self.answered))
            self.wire.writer.flush()
        return True

    def is_early_answer(self, text: str) -> bool:
        """Whether ``text``, a message from the SDK, answers the request answered early.

        The SDK's answer is compared with the early one; a difference is reported on
        stderr, once, and the client keeps the early one.
        """
        if self.answered is None:
            return False
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("id") != self.answered["id"]:
            return False
        if "result" not in message and "error" not in message:
            return False
        if message != self.answered:
            difference = json.dumps(message, ensure_ascii=False)[:500]
            print(
                "reliora mcp: warning: the MCP SDK answers initialize otherwise than "
                f"reliora did before loading it; please report this. The SDK's answer: "
                f"{difference}",
                file=sys.stderr,
                flush=True,
            )
        self.answered = None
        return True
