"""``reliora serve``: a local, read-only web view of the store (Starlette, Jinja2).

Safety, all in this module:

* bound to 127.0.0.1 only, and a request naming another host is refused (a web page
  elsewhere cannot reach the server through a name that resolves to this machine);
* read-only: any method but GET and HEAD is answered 405 before any page runs, and no
  page writes (pages.py);
* every piece of record text goes through Jinja2's autoescape, and the pages carry a
  Content-Security-Policy that allows no script at all;
* ids and paths are checked as the CLI checks them: a ``../`` id or a file outside the
  repository is a 404 or a 400, never a read.

The store's index is opened once at start (storage/index.py ``LiveIndex``) and each page
takes the index as it is now, walked again only when the store's folders changed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from reliora_git.interfaces.web import pages
from reliora_git.records.errors import RelioraError
from reliora_git.storage.index import LiveIndex, StoreIndex
from reliora_git.storage.store import Store

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
HERE = Path(__file__).resolve().parent
ALLOWED_METHODS = ("GET", "HEAD")
#: No script, no frame, nothing from elsewhere: record text can only ever be text.
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
#: Error codes of RelioraError that mean "no such thing" (404); the rest are 400.
NOT_FOUND_CODES = ("not_found", "unknown_id", "invalid_id", "ambiguous_id")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ReadOnlyLocal:
    """ASGI middleware: GET and HEAD only (405 otherwise), from a local Host name only,
    and the security headers on every answer."""

    def __init__(self, app: ASGIApp, port: int) -> None:
        self.app = app
        self.hosts = {f"{HOST}:{port}", f"localhost:{port}", HOST, "localhost"}
        self.origins = {f"http://{host}" for host in self.hosts}

    def cross_site(self, headers: dict[bytes, bytes]) -> bool:
        """A browser's request made by another site: Fetch Metadata says ``cross-site``, or an
        ``Origin`` that is not this view's (a request typed or followed here has neither)."""
        site = headers.get(b"sec-fetch-site", b"").decode("latin-1").lower()
        origin = headers.get(b"origin", b"").decode("latin-1").lower()
        return site == "cross-site" or (bool(origin) and origin not in self.origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1").lower()
        refused: Response | None = None
        if scope["method"] not in ALLOWED_METHODS:
            refused = PlainTextResponse(
                "405 Method Not Allowed: this view is read-only",
                status_code=405,
                headers={"allow": ", ".join(ALLOWED_METHODS)},
            )
        elif host not in self.hosts:
            refused = PlainTextResponse("400 Bad Request: unknown host", status_code=400)
        elif self.cross_site(headers):
            # Any page the person visits can make the browser ask for /try?prompt=…: each such
            # request costs a ranking. The browser says where a request comes from.
            refused = PlainTextResponse(
                "403 Forbidden: a request from another site", status_code=403
            )
        if refused is not None:
            refused.headers.update(SECURITY_HEADERS)
            await refused(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers") or [])
                raw += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message["headers"] = raw
            await send(message)

        await self.app(scope, receive, send_with_headers)


class View:
    """The store, its live index, the templates and the memo the pages share."""

    def __init__(self, store: Store, state: Path | None) -> None:
        self.store = store
        self.state = state
        self.live = LiveIndex()
        self.memo = pages.Memo()
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,  # every value is escaped unless a template says otherwise
        )
        self.templates.filters["visible"] = _visible
        self.templates.filters["markdown"] = _markdown
        with self.index() as index:  # loaded once, now: the first page needs no walk
            index.acquire()  # held by the warming thread, which gives it back
        warming = pages.start_warming(store, index, self.memo)  # forks: one thread runs yet
        threading.Thread(target=self._warm, args=(index, warming), name="warm", daemon=True).start()

    @staticmethod
    def _warm(index: StoreIndex, warming: Callable[[], None]) -> None:
        try:
            warming()
        finally:
            index.close()

    @contextlib.contextmanager
    def index(self) -> Iterator[StoreIndex]:
        with self.live.open(self.store) as index:
            yield index

    def render(self, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        template = self.templates.get_template(name)
        html = template.render(store_root=str(self.store.root), **values)
        return HTMLResponse(html, status_code=status)


def _markdown(value: Any) -> Any:
    """Record text as Markdown, rendered safely (markdown.py)."""
    from reliora_git.interfaces.web.markdown import render

    return render(str(value))


def _visible(value: Any) -> str:
    """Record text for a page: invisible and control characters written out (the page then
    escapes it), as the CLI's ``clean`` shows them."""
    from reliora_git.records.text import escape_invisible

    return escape_invisible(str(value))


#: The largest page number taken (a 5,000-digit number is not a page).
MAX_PAGE = 1_000_000


def _int(value: str | None, default: int) -> int:
    if value is None or not value.isascii() or not value.isdigit() or len(value) > 7:
        return default
    return min(int(value), MAX_PAGE)


def build_app(store: Store, state: Path | None, port: int) -> ASGIApp:
    """The web application over ``store`` (``state``: the git directory's reliora folder)."""
    view = View(store, state)

    def page(
        name: str, make: Callable[[Request, StoreIndex], dict[str, Any]]
    ) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            try:
                with view.index() as index:
                    values = make(request, index)
            except RelioraError as error:
                status = 404 if error.code in NOT_FOUND_CODES else 400
                return view.render("error.html", status, page=name, error=str(error))
            return view.render(f"{name}.html", page=name, **values)

        return endpoint

    def lessons(request: Request, index: StoreIndex) -> dict[str, Any]:
        params = request.query_params
        query = params.get("q", "")[: pages.MAX_PROMPT]
        retired = params.get("retired") == "1"
        return pages.lessons_page(
            store,
            index,
            view.memo,
            query,
            _int(params.get("page"), 1),
            retired,
            state=view.state,
            sort=params.get("sort", "newest"),
            show=params.get("show", "all"),
            tag=params.get("tag", "")[:200],
        )

    def lesson(request: Request, index: StoreIndex) -> dict[str, Any]:
        record_id = pages.checked_id(request.path_params["record_id"])
        return pages.lesson_page(store, index, view.memo, record_id)

    def try_prompt(request: Request, index: StoreIndex) -> dict[str, Any]:
        params = request.query_params
        return pages.try_page(store, index, params.get("prompt", ""), params.get("files", ""))

    def guards(request: Request, index: StoreIndex) -> dict[str, Any]:
        return pages.guards_page(store, index)

    def sessions(request: Request, index: StoreIndex) -> dict[str, Any]:
        return pages.sessions_page(view.state, index)

    def session(request: Request, index: StoreIndex) -> dict[str, Any]:
        return pages.session_page(view.state, request.path_params["session"], index)

    def history(request: Request, index: StoreIndex) -> dict[str, Any]:
        return pages.history_page(store, index, view.memo, wait=False)

    def stale(request: Request, index: StoreIndex) -> dict[str, Any]:
        return pages.stale_page(store, index, view.memo)

    def not_found(request: Request, exc: Exception) -> Response:
        return view.render("error.html", 404, page="", error="no such page")

    routes = [
        Route("/", page("lessons", lessons), methods=["GET"]),
        Route("/lesson/{record_id:path}", page("lesson", lesson), methods=["GET"]),
        Route("/try", page("try", try_prompt), methods=["GET"]),
        Route("/guards", page("guards", guards), methods=["GET"]),
        Route("/sessions", page("sessions", sessions), methods=["GET"]),
        Route("/sessions/{session:path}", page("session", session), methods=["GET"]),
        Route("/history", page("history", history), methods=["GET"]),
        Route("/stale", page("stale", stale), methods=["GET"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found})
    return ReadOnlyLocal(app, port)


def listening_socket(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:``port`` (OSError when the port is taken)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    return sock


def serve(store: Store, state: Path | None, port: int, ready: Callable[[str], None]) -> None:
    """Serve until interrupted; ``ready`` is told the address once the server answers.

    The socket is bound here, before the server starts, so that a port in use is the
    caller's OSError (one line), not the server's own log and exit.
    """
    import uvicorn

    sock = listening_socket(port)
    app = build_app(store, state, port)
    config = uvicorn.Config(
        app, host=HOST, port=port, log_level="warning", access_log=False, lifespan="off"
    )

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                ready(f"http://{HOST}:{port}/")

    Announcing(config).run(sockets=[sock])
