"""The viewer as an ASGI app: routes, the security checks, HTML or JSON of each page.

A flat list of routes, each naming a page of ``views`` (``/memories/ID`` and
``/memories/ID.json`` serve one data dict, as HTML through its template or as JSON) or
a change (POST only, then a redirect to a page that says what happened). apsw
connections are not shared between threads: each of Starlette's worker threads opens
its own Context (its own connections) on the same settings and embedder; changes take
one lock, so one is written at a time.
"""

from __future__ import annotations

import math
import secrets
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memctl.api.config import Context, Settings
from memctl.errors import DatabaseBusyError, MemctlError, NotFoundError
from memctl.ui import views
from memctl.ui.security import (
    COOKIE,
    CSRF_FIELD,
    HEADERS,
    LOGIN_PATH,
    SAFE_METHODS,
    SAME_SITE,
    Keys,
)

HERE = Path(__file__).parent
# The navigation bar, in order: (path, label). A new page adds its entry here.
NAV: list[tuple[str, str]] = [
    ("/projects", "Projects"),
    ("/sessions", "Sessions"),
    ("/memories", "Memories"),
    ("/recall", "Recall"),
    ("/profile", "Profile"),
    ("/graph", "Graph"),
    ("/runs", "Runs"),
    ("/health", "Health"),
]
READ_SECONDS = 5.0  # a page's reads at most (the slowest page takes ~0.1 s on 100,000 memories)
SAID_KEPT = 100  # messages of recent changes kept for the page each redirects to
# form fields a change reads besides its path's id (``memory``: the page an undo came from)
TEXT_FIELDS = ("text", "project", "memory")
# What a request no route takes is told (HTTP status: the line shown).
NO_ROUTE = {
    404: "no such page: the links above lead to every page",
    405: "this address takes a form's button, not a link: use the button on its page",
}


class Viewer:
    """The app's state: settings, secrets, one Context per thread, the write lock."""

    def __init__(self, settings: Settings, keys: Keys, embedder: Any = None) -> None:
        self.settings, self.keys, self.embedder = settings, keys, embedder
        self.local = threading.local()
        self.write_lock = threading.Lock()
        self.said: OrderedDict[str, str] = OrderedDict()
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
        )
        self.templates.filters["when"] = when
        self.templates.filters["split"] = views.split_text
        self.opened: list[Context] = []

    def context(self) -> Context:
        """This thread's Context (opened on first use)."""
        ctx = getattr(self.local, "ctx", None)
        if ctx is None:
            ctx = self.local.ctx = Context(self.settings, self.embedder, door="ui")
            self.opened.append(ctx)
        return ctx

    def close(self) -> None:
        for ctx in self.opened:
            ctx.close()

    def say(self, text: str) -> str:
        key = secrets.token_urlsafe(8)
        self.said[key] = text
        while len(self.said) > SAID_KEPT:
            self.said.popitem(last=False)
        return key

    def render(
        self, template: str, data: dict[str, Any], request: Request, status: int
    ) -> Response:
        page = self.templates.get_template(template).render(
            **data,
            nav=NAV,
            here=request.url.path if request.url.path != "/" else NAV[0][0],
            csrf=self.keys.csrf,
            csrf_field=CSRF_FIELD,
            said=self.said.get(request.query_params.get("said", "")),
            json_url=_json_url(request) if data.get("as_json", True) else None,
        )
        return HTMLResponse(page, status)


def when(at: str) -> Markup:
    """A stored time as a page shows it, to the minute: ``2026-11-30 09:19``, its date kept
    on one line (a squeezed column cut it after "2026-11-"), a break allowed before the time."""
    day, _, clock = at[:16].partition("T")
    return Markup('<span class="day">{}</span> {}').format(day, clock)


def _json_url(request: Request) -> str:
    """The page's address with ``.json``: its path as decoded, quoted again (a session id's
    "?" or "#" would end it; ``request.url.path`` leaves some of them quoted, some not)."""
    query = f"?{request.url.query}" if request.url.query else ""
    path: str = request.scope["path"]
    return f"{quote(path.rstrip('/') or '/projects')}.json{query}"


def _page(viewer: Viewer, name: str, as_json: bool) -> Callable[[Request], Response]:
    page = views.PAGES[name]

    def endpoint(request: Request) -> Response:
        values = {**request.query_params, **request.path_params}
        ctx = viewer.context()
        try:
            with ctx.db.time_limit(READ_SECONDS):
                data = page.view(ctx, values)
        except MemctlError as error:
            return _failed(viewer, error, request, as_json)
        if as_json:
            return JSONResponse(data)
        return viewer.render(page.template, data, request, 200)

    return endpoint


def _change(viewer: Viewer, name: str) -> Callable[[Request], Awaitable[Response]]:
    change = views.CHANGES[name]

    async def endpoint(request: Request) -> Response:
        form = await request.form()
        if not viewer.keys.good_form(_text(form.get(CSRF_FIELD))):
            return _refused("this form is stale or not the viewer's: reload the page", 403)
        values = {"id": request.path_params.get("id", "")}
        values.update({k: _text(form.get(k)) or "" for k in TEXT_FIELDS if k in form})
        return await _run_change(viewer, change, values, request)

    return endpoint


async def _run_change(
    viewer: Viewer,
    change: Callable[[Context, views.Values], tuple[str, str]],
    values: dict[str, str],
    request: Request,
) -> Response:
    def write() -> tuple[str, str]:
        with viewer.write_lock:
            return change(viewer.context(), values)

    try:
        target, said = await run_in_threadpool(write)
    except MemctlError as error:
        # nothing was written: the same form to send again (busy), or a refused text kept
        # to mend (too long, a read-only store): a page of its own, Back would reload empty
        retry = {"action": quote(request.scope["path"]), "fields": {**values, "id": None}}
        kept = isinstance(error, DatabaseBusyError) or (
            bool(values.get("text")) and not isinstance(error, NotFoundError)
        )
        return _failed(viewer, error, request, False, retry if kept else None)
    return RedirectResponse(f"{target}?{urlencode({'said': viewer.say(said)})}", 303)


def _failed(
    viewer: Viewer,
    error: MemctlError,
    request: Request,
    as_json: bool,
    retry: dict[str, Any] | None = None,
) -> Response:
    """What the core refused, in its one line: 404 for what is not there, 503 for a store
    another process holds, else 400 (``retry``: a change's form, its typed text kept, to
    send again). A change's page has no JSON of its own: its address is the form's (a
    POST), and with ``.json`` no page's."""
    status = 404 if isinstance(error, NotFoundError) else 400
    if isinstance(error, DatabaseBusyError):
        status = 503
    if as_json:
        response: Response = JSONResponse({"error": str(error)}, status)
    else:
        said = {
            "title": "Error",
            "error": str(error),
            "retry": retry,
            "as_json": request.method in SAFE_METHODS,
            "q": request.query_params.get("q"),  # a refused query stays in its box to mend
        }
        response = viewer.render("error.html", said, request, status)
    if status == 503:
        response.headers["Retry-After"] = retry_after(viewer.settings)
    return response


def retry_after(settings: Settings) -> str:
    """Seconds a 503 asks a client to wait before it sends again: the store's busy timeout
    (another process held the store that long already), whole, at least 1."""
    return str(max(1, math.ceil(settings.store_busy_timeout_ms / 1000)))


def _no_route(viewer: Viewer) -> Callable[[Request, Exception], Response]:
    """A path or method no route takes: said on a page of the viewer's, its links around."""

    def handler(request: Request, error: Exception) -> Response:
        status = getattr(error, "status_code", 404)
        said = {"title": "Error", "error": NO_ROUTE.get(status, NO_ROUTE[404]), "as_json": False}
        return viewer.render("error.html", said, request, status)

    return handler


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _refused(reason: str, status: int) -> Response:
    """A refusal, before any page can be rendered (no sign-in, a foreign host or origin)."""
    return HTMLResponse(f"<!doctype html><title>refused</title><p>{escape(reason)}</p>", status)


SIGNED_IN_PAGE = (
    '<!doctype html><meta http-equiv="refresh" content="0;url=/projects">'
    '<title>memctl</title><p><a href="/projects">Signed in: open the projects</a></p>\n'
)


def _login(viewer: Viewer) -> Callable[[Request], Response]:
    def endpoint(request: Request) -> Response:
        if viewer.keys.signed_in(request.cookies.get(COOKIE)):  # the link opened again
            return RedirectResponse("/projects", 303)
        if not viewer.keys.spend(request.query_params.get("token", "")):
            return _refused("this sign-in link was used already or is wrong: run `memctl ui`", 403)
        # opened from another site (the file `ui --open` hands the browser), a redirect
        # stays that site's navigation, along which the browser sends no SameSite=Strict
        # cookie: a page of the viewer's own goes on instead, a navigation of its own
        elsewhere = request.headers.get("sec-fetch-site") not in (None, *SAME_SITE)
        response: Response = (
            HTMLResponse(SIGNED_IN_PAGE) if elsewhere else RedirectResponse("/projects", 303)
        )
        response.set_cookie(COOKIE, viewer.keys.session, httponly=True, samesite="strict")
        return response

    return endpoint


def _guard(viewer: Viewer, app: Any) -> Any:
    """The checks every request passes before a route sees it (security.py)."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        request = Request(scope)
        headers = request.headers
        reason = viewer.keys.refusal(
            request.method,
            headers.get("host", ""),
            headers.get("origin"),
            headers.get("sec-fetch-site"),
        )
        response: Response | None = None
        if reason is not None:
            response = _refused(reason, 403)
        elif request.url.path != LOGIN_PATH and not viewer.keys.signed_in(
            request.cookies.get(COOKIE)
        ):
            response = _refused("sign in with the link `memctl ui` printed", 401)
        if response is not None:
            response.headers.update(HEADERS)
            await response(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                known = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.encode(), v.encode()) for k, v in HEADERS.items() if k not in known]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await app(scope, receive, send_with_headers)

    return guarded


def build_app(settings: Settings, keys: Keys, embedder: Any = None) -> tuple[Any, Viewer]:
    """The guarded ASGI app and its state (close ``Viewer`` when done)."""
    viewer = Viewer(settings, keys, embedder)
    # A session's id is the client's or the caller's (`ingest --session-id`) and may hold
    # "/": its routes take the rest of the path, the longer ones first.
    pages = [
        ("/", "projects"),
        ("/projects", "projects"),
        ("/sessions", "sessions"),
        ("/sessions/", "sessions"),  # an empty id (a link cut short): the list, not "no ''"
        ("/sessions/{id:path}/forget", "forget-session"),
        ("/sessions/{id:path}", "session"),
        ("/memories", "memories"),
        ("/memories/{id}", "memory"),
        ("/recall", "recall"),
        ("/profile", "profile"),
        ("/graph", "graph"),
        ("/runs", "runs"),
        ("/timeline", "timeline"),
        ("/health", "health"),
    ]
    routes: list[Any] = [
        Route(f"{path.rstrip('/') or '/projects'}.json", _page(viewer, name, True))
        for path, name in pages
        if not path.endswith("/")
    ]
    routes += [Route(path, _page(viewer, name, False)) for path, name in pages]
    routes += [
        Route(f"/memories/{{id}}/{name}", _change(viewer, name), methods=["POST"])
        for name in ("forget", "pin", "edit", "delete", "promote", "unpromote")
    ]
    routes += [
        Route("/memories", _change(viewer, "remember"), methods=["POST"]),
        Route("/sessions/{id:path}/forget", _change(viewer, "forget-session"), methods=["POST"]),
        Route("/runs/{id}/undo", _change(viewer, "undo"), methods=["POST"]),
        Route(LOGIN_PATH, _login(viewer)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    handlers = {status: _no_route(viewer) for status in NO_ROUTE}
    return _guard(viewer, Starlette(routes=routes, exception_handlers=handlers)), viewer
