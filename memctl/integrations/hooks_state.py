"""What the hooks remember between runs, as small files under ``$MEMCTL_HOME/hooks/``.

- ``fired/<client>.<event>``: its modification time is when that hook last ran
  (``memctl install status`` shows it).
- ``timings/<client>.<event>``: the hook's last durations in milliseconds, one a line
  (``install status`` shows the last and the 95th percentile).
- ``missed/<client>.<event>``: why that hook's last run could capture nothing (a
  Cursor stop without a transcript), until a later run captures.
- ``injected/session.<session id>``: the memories a session was given (at its start and by
  the per-prompt hook), one id a line, so that no memory is given twice; files of
  sessions idle for ``INJECTED_DAYS`` are removed, a forgotten session's at once (resumed,
  it is named by its keyed id: ``hooks.kept_as``).
- ``started/<pid>``: the sessions a client process (its pid, as the client names it to
  its hooks: ``settings.PROCESS_VARIABLES``) started, one a line, in order: its MCP
  server, started with the first session's id, answers for the latest (Claude Code's
  ``/clear`` starts a new session in the same process); removed, like ``injected/``,
  once idle for ``INJECTED_DAYS``; a forgotten session's id is taken out at once.
- ``installed/<client>``: made when ``memctl install`` wrote the client's hooks (user
  level), its modification time then: the client's first capture hook after it also
  captures the transcripts that changed since and that no hook saw (a session already
  running, Codex's in which the person trusted the hooks), and removes it.
- ``pending/<hash>.json``: a transcript a capture hook read, with its size then
  (``memctl.ingest.pending``: the next hook, the worker or maintain captures it again
  when it grew or was never captured whole).
One file per entry: hooks of parallel sessions never write the same file (timings
are appended a line at a time, which the system keeps whole). Everything here is
private to the user: directories 0700, files 0600.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memctl.config.files import DIR_MODE, open_private, write_private
from memctl.home import HOOKS, hook_file, injected_file

TIMINGS_KEPT = 200  # durations kept per hook: enough for a stable 95th percentile
INJECTED_DAYS = 7  # a session idle this long will not prompt again
SLOW_MS = 300  # a hook the client waits on longer than this is flagged (issue 23's budget)


def _hook_path(home: Path, kind: str, client: str, event: str) -> Path:
    return hook_file(home, kind, f"{client}.{event}")


def _fired_path(home: Path, client: str, event: str) -> Path:
    return _hook_path(home, "fired", client, event)


def mark_fired(home: Path, client: str, event: str) -> None:
    path = _fired_path(home, client, event)
    os.close(open_private(path, os.O_WRONLY | os.O_CREAT))
    os.utime(path)
    os.chmod(home / HOOKS, DIR_MODE)  # made 0755 by versions before 0700 was enforced


def last_fired(home: Path, client: str, event: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(_fired_path(home, client, event).stat().st_mtime, UTC)
    except OSError:
        return None


def mark_installed(home: Path, client: str) -> None:
    path = hook_file(home, "installed", client)
    os.close(open_private(path, os.O_WRONLY | os.O_CREAT))
    os.utime(path)


def installed_at(home: Path, client: str) -> float | None:
    """When ``memctl install`` last wrote the client's hooks, if no capture hook of it has
    run since (epoch seconds; None: none to catch up on)."""
    try:
        return hook_file(home, "installed", client).stat().st_mtime
    except OSError:
        return None


def clear_installed(home: Path, client: str) -> None:
    hook_file(home, "installed", client).unlink(missing_ok=True)


def record_duration(home: Path, client: str, event: str, ms: float) -> None:
    """Append one run's duration; keep the last ``TIMINGS_KEPT``."""
    path = _hook_path(home, "timings", client, event)
    descriptor = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(descriptor, "a", encoding="utf-8") as out:
        out.write(f"{ms:.0f}\n")
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) > 2 * TIMINGS_KEPT:
        write_private(path, "\n".join(lines[-TIMINGS_KEPT:]) + "\n")


@dataclass(frozen=True)
class Timing:
    last_ms: int
    p95_ms: int
    runs: int

    @property
    def slow(self) -> bool:
        return max(self.last_ms, self.p95_ms) > SLOW_MS


def timing(home: Path, client: str, event: str) -> Timing | None:
    """The last duration and the 95th percentile (nearest rank) of the kept ones."""
    try:
        text = _hook_path(home, "timings", client, event).read_text(encoding="utf-8")
    except OSError:
        return None
    values = [int(v) for v in text.split() if v.isdigit()][-TIMINGS_KEPT:]
    if not values:
        return None
    ranked = sorted(values)
    return Timing(values[-1], ranked[max(0, -(-95 * len(ranked) // 100) - 1)], len(values))


def mark_missed(home: Path, client: str, event: str, reason: str) -> None:
    write_private(_hook_path(home, "missed", client, event), reason)


def clear_missed(home: Path, client: str, event: str) -> None:
    _hook_path(home, "missed", client, event).unlink(missing_ok=True)


def missed(home: Path, client: str, event: str) -> str | None:
    """Why this hook's last run captured nothing (None: it captured, or never missed)."""
    try:
        return _hook_path(home, "missed", client, event).read_text(encoding="utf-8")
    except OSError:
        return None


def injected(home: Path, session_id: str) -> set[str]:
    """The ids of the memories this session was given."""
    try:
        return set(injected_file(home, session_id).read_text("utf-8").split())
    except OSError:
        return set()


def add_injected(home: Path, session_id: str, ids: list[str]) -> None:
    """Record memories given to this session; drop the records of long-idle sessions."""
    if not ids or not session_id:
        return
    _append(injected_file(home, session_id), ids)


def _append(path: Path, lines: list[str]) -> None:
    """Add ``lines`` to ``path``; drop the files beside it idle for ``INJECTED_DAYS``."""
    descriptor = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(descriptor, "a", encoding="utf-8") as out:
        out.write("".join(f"{line}\n" for line in lines))
    stale = time.time() - INJECTED_DAYS * 86400
    for other in path.parent.iterdir():
        if other.stat().st_mtime < stale:
            other.unlink(missing_ok=True)


def add_started(home: Path, process: str, session_id: str) -> None:
    """Record that client process ``process`` (a pid) has started ``session_id``."""
    if process.isdigit() and session_id:
        _append(hook_file(home, "started", process), [session_id])


def running_session(
    home: Path, process: int, named: str | None, kept: str | None = None
) -> str | None:
    """The latest session client process ``process`` started, when its record holds
    ``named`` (the session it ran when the caller, its child, started) or ``kept`` (the
    keyed id the record names it by when it was a forgotten session, resumed:
    ``hooks.kept_as``); else ``named`` (a record without either is of an earlier process
    of the same pid, or of none)."""
    if not named:
        return None
    try:
        started = hook_file(home, "started", str(process)).read_text("utf-8").split()
    except OSError:
        return named
    return started[-1] if named in started or (kept and kept in started) else named
