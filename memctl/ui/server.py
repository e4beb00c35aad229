"""The viewer's server: 127.0.0.1 only, on a free port (or the one asked for), until ^C."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

from memctl.api.config import Context, Settings, write_private
from memctl.errors import UsageError
from memctl.ui.app import build_app
from memctl.ui.security import LOGIN_PATH, Keys, hosts_for

LOOPBACK = "127.0.0.1"
# ``--open``'s page: the browser opens this file, which sends it on to the sign-in URL, so
# the token is never on a command line (a browser's is readable by every local user for as
# long as it runs, as Jupyter found); 0600 in the data directory, gone when the viewer stops.
SIGN_IN_PAGE = Path("ui") / "sign-in.html"
BACKLOG = 128  # connections waiting to be accepted (the kernel's usual somaxconn)


def listen(port: int) -> socket.socket:
    """A listening socket on the loopback interface (``port`` 0: a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart within TIME_WAIT
    try:
        sock.bind((LOOPBACK, port))
    except OSError as error:
        sock.close()
        raise UsageError(
            f"cannot listen on {LOOPBACK}:{port}: {error.strerror}; give another port "
            "(0: a free one)",
            ["port"],
        ) from None
    sock.listen(BACKLOG)
    return sock


def sign_in_page(home: Path, url: str) -> Path:
    """The page that opens ``url`` (the sign-in URL), written 0600 under ``home``."""
    from html import escape

    path = home / SIGN_IN_PAGE  # its folder made 0700, as every one memctl makes
    link = escape(url, quote=True)
    write_private(
        path,
        f'<!doctype html><meta http-equiv="refresh" content="0;url={link}">'
        f'<title>memctl</title><p><a href="{link}">Open the memctl viewer</a></p>\n',
    )
    return path


def serve(settings: Settings, port: int, ready: Callable[[str], None]) -> None:
    """Serve the viewer; ``ready`` is told the one-time sign-in URL once it answers."""
    import uvicorn  # the MCP SDK's server, installed with it

    sock = listen(port)  # a port taken is said before the model loads
    try:
        with Context(settings) as loading:
            # opened and migrated before the URL shows: a damaged store (or one locked
            # through a migration) is said in one line here, not by every page after it
            _ = loading.db
            embedder = loading.embedder  # one model for every thread
    except BaseException:
        sock.close()
        raise
    bound = sock.getsockname()[1]
    keys = Keys(hosts_for(bound))
    app, viewer = build_app(settings, keys, embedder)
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    url = f"http://{LOOPBACK}:{bound}{LOGIN_PATH}?token={keys.token}"
    try:
        ready(url)
        server.run(sockets=[sock])
    finally:
        viewer.close()
        sock.close()
        (settings.home / SIGN_IN_PAGE).unlink(missing_ok=True)
