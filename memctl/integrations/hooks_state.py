"""What the hooks remember between runs, as small files under ``$MEMCTL_HOME/hooks/``.

- ``fired/<client>.<event>``: its modification time is when that hook last ran
  (``memctl install status`` shows it).
- ``pending/<hash>.json``: a transcript a capture hook read, with its size then.
  Hooks can fire before the client writes a session's last lines; the next capture
  hook (of any session) captures a pending transcript again when it has grown.
  Capture stores only messages it has not stored, so nothing is stored twice.
One file per entry: hooks of parallel sessions never write the same file.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from memctl.config.files import private_dir

DIR = "hooks"


def _fired_path(home: Path, client: str, event: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{client}.{event}")
    return home / DIR / "fired" / safe


def mark_fired(home: Path, client: str, event: str) -> None:
    path = _fired_path(home, client, event)
    private_dir(path.parent)
    path.touch()
    os.utime(path)


def last_fired(home: Path, client: str, event: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(_fired_path(home, client, event).stat().st_mtime, UTC)
    except OSError:
        return None


@dataclass(frozen=True)
class Pending:
    path: str  # the transcript
    client: str
    session_id: str | None
    cwd: str
    size: int  # when last captured
    seen: float  # time of the last capture (epoch seconds)


def _pending_dir(home: Path) -> Path:
    return home / DIR / "pending"


def _entry_path(home: Path, transcript: str) -> Path:
    return _pending_dir(home) / (hashlib.sha1(transcript.encode()).hexdigest()[:20] + ".json")


def remember(home: Path, entry: Pending) -> None:
    path = _entry_path(home, entry.path)
    private_dir(path.parent)
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    temp.write_text(json.dumps(asdict(entry)), encoding="utf-8")
    os.replace(temp, path)


def forget(home: Path, transcript: str) -> None:
    _entry_path(home, transcript).unlink(missing_ok=True)


def grown(home: Path, skip: str, max_age_hours: float, limit: int) -> list[Pending]:
    """Pending transcripts (other than ``skip``) that grew since their last capture,
    newest first; entries idle longer than ``max_age_hours`` are dropped."""
    folder = _pending_dir(home)
    if limit <= 0 or not folder.is_dir():
        return []
    found = []
    now = time.time()
    for path in folder.glob("*.json"):
        try:
            entry = Pending(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if entry.path == skip:
            continue
        if now - entry.seen > max_age_hours * 3600:
            path.unlink(missing_ok=True)
            continue
        try:
            size = Path(entry.path).stat().st_size
        except OSError:
            path.unlink(missing_ok=True)
            continue
        if size != entry.size:
            found.append(entry)
    found.sort(key=lambda e: e.seen, reverse=True)
    return found[:limit]
