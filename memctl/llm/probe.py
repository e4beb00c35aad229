"""Is an Ollama server listening? A quick GET /api/version, remembered for a while.

``llm: auto`` uses Ollama only when one answers. A refused connection on
loopback fails in well under a millisecond; a host that does not answer costs
up to ``ollama.connect_timeout``, so the answer is kept in a small JSON file
in the data directory for ``llm.probe_cache_seconds`` (a hook's worker and
the next ``--wait`` do not ask again), and in memory for the process. The file
names a host without its credentials (``http://user:***@host``).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import time
from pathlib import Path
from urllib.parse import urlsplit

from memctl.config.files import open_private
from memctl.config.urls import shown_url

PROBE_FILE = "ollama-probe.json"

_seen: dict[tuple[Path, str], tuple[bool, float]] = {}


def answers(host: str, timeout: float) -> bool:
    """True when an HTTP server at ``host`` answers GET /api/version with 200."""
    parts = urlsplit(host)
    https = parts.scheme == "https"
    kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
    try:
        connection = kind(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
        try:
            connection.request("GET", parts.path.rstrip("/") + "/api/version")
            return connection.getresponse().status == 200
        finally:
            connection.close()
    except (OSError, http.client.HTTPException, ValueError):
        return False


def _read(path: Path) -> dict[str, list[float]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, list[float]]) -> None:
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    with contextlib.suppress(OSError):
        descriptor = open_private(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump(data, out)
        partial.replace(path)


def reachable(host: str, timeout: float, cache_dir: Path, ttl: float) -> bool:
    """Whether Ollama answers at ``host``, from a check at most ``ttl`` seconds old."""
    now = time.time()
    seen = _seen.get((cache_dir, host))
    path = cache_dir / PROBE_FILE
    if seen is None and ttl > 0:
        entry = _read(path).get(shown_url(host))
        if isinstance(entry, list) and len(entry) == 2:
            seen = (bool(entry[0]), float(entry[1]))
    if seen is not None and 0 <= now - seen[1] < ttl:
        return seen[0]
    found = answers(host, timeout)
    _seen[(cache_dir, host)] = (found, now)
    if ttl > 0 and cache_dir.is_dir():
        data = {name: seen for name, seen in _read(path).items() if shown_url(name) == name}
        data[shown_url(host)] = [found, now]  # an older memctl's key with credentials goes
        _write(path, data)
    return found
