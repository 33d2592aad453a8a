"""A mock model server for the real-client tests: it logs every request and answers from a script.

Each test starts its own server on an ephemeral port of 127.0.0.1, points the client at it,
and reads back what the client sent (the requests are what the model would have seen).
"""

from __future__ import annotations

import json
import os
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import pytest

NODE_BIN = Path(__file__).resolve().parent / "node_modules" / ".bin"
INSTALL_HINT = "npm install --prefix tests/real_clients"


@dataclass(frozen=True)
class LoggedRequest:
    """One request as it arrived; ``body`` is the parsed JSON (None when absent or not JSON)."""

    method: str
    path: str  # without the query string
    query: str
    headers: Mapping[str, str]  # names in lower case
    body: Any
    raw: bytes
    routed: bool  # False: no handler for this path, answered 404

    def text(self) -> str:
        """The body as text, for looking for a marker anywhere in it."""
        return self.raw.decode("utf-8", "replace")


#: (status, headers, body): a body given as an iterable of chunks is streamed (chunked
#: transfer encoding, flushed per chunk), as server-sent events are.
Reply = tuple[int, Mapping[str, str], "bytes | Iterable[bytes]"]
#: (the request, its index among the requests to the same route: 0 for the first) -> reply
Handler = Callable[[LoggedRequest, int], Reply]


def json_reply(status: int, payload: Any) -> Reply:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def sse_reply(events: Iterable[tuple[str | None, Any]]) -> Reply:
    """A text/event-stream reply of (event name or None, JSON data) pairs."""

    def chunks() -> Iterator[bytes]:
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            yield f"{head}data: {json.dumps(data)}\n\n".encode()

    return 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}, chunks()


class MockModel:
    """A threaded HTTP server on 127.0.0.1:<ephemeral port>; use it as a context manager.

    ``routes`` maps a path (query string ignored) to a handler; a key ending in ``*`` matches
    every path with that prefix (the first matching key wins, exact keys first). Any method is
    dispatched; a path without a route gets a 404 JSON answer and is logged all the same.
    """

    def __init__(self, routes: Mapping[str, Handler]) -> None:
        self.routes = dict(routes)
        self._lock = threading.Lock()
        self._log: list[LoggedRequest] = []
        self._counts: dict[str, int] = {}
        #: Tracebacks of handlers that raised (each answered 500): a test should assert none.
        self.errors: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._log)

    def requests_to(self, path: str) -> list[LoggedRequest]:
        return [request for request in self.requests if request.path == path]

    def __enter__(self) -> MockModel:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _route(self, path: str) -> tuple[str, Handler] | None:
        if path in self.routes:
            return path, self.routes[path]
        for key, handler in self.routes.items():
            if key.endswith("*") and path.startswith(key[:-1]):
                return key, handler
        return None

    def _answer(self, method: str, target: str, headers: Mapping[str, str], raw: bytes) -> Reply:
        parts = urlsplit(target)
        route = self._route(parts.path)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = LoggedRequest(
            method, parts.path, parts.query, headers, body, raw, routed=route is not None
        )
        with self._lock:
            self._log.append(request)
            key = route[0] if route else ""
            index = self._counts.get(key, 0)
            self._counts[key] = index + 1
        if route is None:
            return json_reply(404, {"error": {"type": "not_found", "message": parts.path}})
        try:
            return route[1](request, index)
        except Exception:
            with self._lock:
                self.errors.append(traceback.format_exc())
            return json_reply(500, {"error": {"type": "mock_error", "message": "handler raised"}})


def _handler_class(model: MockModel) -> type[BaseHTTPRequestHandler]:
    class RequestHandler(BaseHTTPRequestHandler):
        # HTTP/1.1: clients keep connections alive and read chunked event streams.
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, reply_headers, body = model._answer(self.command, self.path, headers, raw)
            self.send_response(status)
            for name, value in reply_headers.items():
                self.send_header(name, value)
            if isinstance(body, bytes):
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in body:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the request log is the record; stderr noise would hide test output

    return RequestHandler


def find_binary(name: str) -> Path:
    """The pinned client's executable; skip locally (fail on CI) when it is not installed."""
    binary = NODE_BIN / name
    if binary.exists():
        return binary
    message = f"{name} is not installed: {INSTALL_HINT}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
