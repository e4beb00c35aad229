"""Who may use the viewer: the person who started it, from this machine, in its own pages.

- The server binds 127.0.0.1 and answers only requests whose ``Host`` is on its allowlist
  (``127.0.0.1:PORT``, ``localhost:PORT``): a web page elsewhere cannot reach it through a
  DNS name rebound to loopback (the MCP SDK's transport security checks the same).
- ``memctl ui`` prints a URL holding a one-time token. Opening it sets an HttpOnly,
  SameSite=Strict cookie holding the session key, and the token is spent: the URL in a
  terminal's scrollback opens nothing later. Every other request needs the cookie.
- A change is a POST from one of the viewer's own forms: its ``Origin`` (and
  ``Sec-Fetch-Site``, where the browser sends it) must be the viewer's, and the form
  carries the CSRF token the page was rendered with. A GET changes nothing.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

COOKIE = "memctl_ui"
LOGIN_PATH = "/login"
CSRF_FIELD = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD"})
SAME_SITE = frozenset({"same-origin", "none"})  # Sec-Fetch-Site of a request of its own
# Sent with every answer: nothing is loaded from elsewhere, framed, or remembered by a cache.
HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    # not no-referrer: under it a browser sends its own forms with "Origin: null"
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


@dataclass
class Keys:
    """This run's secrets: the login token (spent once), the session key, the CSRF token."""

    hosts: frozenset[str]
    token: str | None = field(default_factory=lambda: secrets.token_urlsafe(24))
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def spend(self, offered: str) -> bool:
        """Whether ``offered`` is the login token; a good one is spent."""
        if self.token is None or not secrets.compare_digest(offered, self.token):
            return False
        self.token = None
        return True

    def signed_in(self, cookie: str | None) -> bool:
        return cookie is not None and secrets.compare_digest(cookie, self.session)

    def refusal(
        self, method: str, host: str, origin: str | None, fetch_site: str | None
    ) -> str | None:
        """Why a request is refused before anything else is read ('' is never returned);
        None when its host and, for a change, its origin are the viewer's own."""
        if host not in self.hosts:
            return f"this viewer answers at {' or '.join(sorted(self.hosts))}, not {host!r}"
        if method in SAFE_METHODS:
            return None
        if fetch_site is not None and fetch_site not in SAME_SITE:
            return f"a change must come from the viewer's own pages (Sec-Fetch-Site {fetch_site})"
        if origin is not None and origin.removeprefix("http://") not in self.hosts:
            return f"a change must come from the viewer's own pages, not {origin!r}"
        return None

    def good_form(self, offered: str | None) -> bool:
        return offered is not None and secrets.compare_digest(offered, self.csrf)


def hosts_for(port: int) -> frozenset[str]:
    """The Host values a browser sends to the viewer on ``port``."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})
