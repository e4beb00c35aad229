"""URLs as memctl shows and keeps them: without the credentials they may carry."""

from __future__ import annotations


def shown_url(remote: str) -> str:
    """``remote`` (a sync remote, an Ollama host) as memctl prints and records it: a URL's
    password (``user:TOKEN@``), or an http(s) user name standing for a token (``TOKEN@``,
    as GitHub takes one), as ***. The setting keeps the credentials (the URL works as
    written); output, logs, runs and memctl's own files never hold them."""
    from urllib.parse import urlsplit

    if "://" not in remote:
        return remote  # a path, or scp-like ``git@host:path``: no password
    try:
        parts = urlsplit(remote)
        password, user = parts.password, parts.username
    except ValueError:
        return remote
    if password is None and not (user and parts.scheme in ("http", "https")):
        return remote
    shown_user = f"{user}:***" if password is not None else "***"
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{shown_user}@{host}").geturl()
