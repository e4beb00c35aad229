"""Other programs' SQLite databases, read only: the sessions OpenCode keeps in its own.

OpenCode (1.18) keeps every session in ``$XDG_DATA_HOME/opencode/opencode.db``:
tables ``session`` (id, title, directory, version, times), ``message`` (one JSON
``data`` a message: role, time, ...) and ``part`` (one JSON ``data`` a part: text,
tool, step-start, ...), each row's id beside its data. A session is read as the
document ``opencode export`` prints (``{"info", "messages": [{"info", "parts"}]}``),
which memctl's OpenCode parser reads. The database is opened read-only; a file that
is not such a database is an InputError naming it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from memctl.errors import InputError

BUSY_MS = 2000  # OpenCode may be writing: wait this long for its lock


@dataclass(frozen=True)
class ForeignSession:
    id: str
    updated: float  # epoch seconds


def _connect(path: Path) -> apsw.Connection:
    try:
        flags = apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY
        connection = apsw.Connection(f"file:{path}?mode=ro", flags=flags)
        connection.setbusytimeout(BUSY_MS)
        connection.execute("SELECT id, time_updated FROM session LIMIT 0").fetchall()
    except apsw.Error as exc:
        raise InputError(f"{path} is not an OpenCode database memctl can read: {exc}") from None
    return connection


def opencode_sessions(path: Path, since: float | None = None) -> list[ForeignSession]:
    """The sessions of an OpenCode database updated at or after ``since``, oldest first."""
    connection = _connect(path)
    try:
        rows = connection.execute(
            "SELECT id, time_updated FROM session WHERE time_updated >= ? "
            "ORDER BY time_updated, id",
            (int((since or 0) * 1000),),
        ).fetchall()
    except apsw.Error as exc:
        raise InputError(f"cannot read the sessions of {path}: {exc}") from None
    finally:
        connection.close()
    return [ForeignSession(str(i), int(t or 0) / 1000) for i, t in rows]


def _data(row_id: Any, data: Any) -> dict[str, Any]:
    try:
        value = json.loads(data) if isinstance(data, str) else {}
    except ValueError:
        value = {}
    return {"id": row_id, **value} if isinstance(value, dict) else {"id": row_id}


def opencode_export(path: Path, session_id: str) -> dict[str, Any]:
    """One session of an OpenCode database as ``opencode export`` prints it."""
    connection = _connect(path)
    try:
        found = connection.execute(
            "SELECT id, title, directory, version, parent_id, time_created, time_updated "
            "FROM session WHERE id = ?",
            (session_id,),
        ).fetchall()
        if not found:
            raise InputError(f"no session {session_id} in {path}")
        sid, title, directory, version, parent, created, updated = found[0]
        info = {
            "id": sid,
            "title": title,
            "directory": directory,
            "version": version,
            "parentID": parent,
            "time": {"created": created, "updated": updated},
        }
        parts: dict[str, list[dict[str, Any]]] = {}
        for part_id, message_id, data in connection.execute(
            "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY time_created, id",
            (session_id,),
        ):
            parts.setdefault(str(message_id), []).append(_data(part_id, data))
        messages = [
            {"info": _data(message_id, data), "parts": parts.get(str(message_id), [])}
            for message_id, data in connection.execute(
                "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                (session_id,),
            )
        ]
    except apsw.Error as exc:
        raise InputError(f"cannot read session {session_id} of {path}: {exc}") from None
    finally:
        connection.close()
    return {"info": info, "messages": messages}
