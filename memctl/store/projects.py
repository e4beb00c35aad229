"""SQL for the projects memctl knows: every scope that holds sessions or memories.

A project has no table of its own: its scope names it (a git remote, or ``path:<hash>``),
its sessions say which directory they ran in (``sessions.cwd``), and the counts come
from the sessions and memories that carry its scope.
"""

from __future__ import annotations

from dataclasses import dataclass

from memctl.store.database import Database


@dataclass(frozen=True)
class ProjectRow:
    """One scope's totals, as ``memctl projects`` lists them."""

    scope: str
    sessions: int
    memories: int  # not archived or deleted
    last_activity: str  # the latest session's own time or memory's creation, ISO
    clients: tuple[str, ...]
    cwd: str  # the directory its latest session with one ran in; '' when none said


def project_rows(db: Database, hidden_states: tuple[str, ...]) -> list[ProjectRow]:
    """Every scope with a session or a memory (not in ``hidden_states``), latest first."""
    marks = ", ".join("?" * len(hidden_states))
    rows = db.rows(
        "WITH s AS (SELECT scope, count(*) AS n, "
        "max(coalesce(started_at, created_at)) AS at, group_concat(DISTINCT client) AS clients "
        # a forgotten session keeps its row (capture never stores it again) but is no
        # project's: its directory and time are what `sessions forget` took away
        "FROM sessions WHERE forgotten_at IS NULL GROUP BY scope), "
        # counts kept by triggers (m017); the latest of each state: one seek of its index
        "m AS (SELECT scope, sum(n) AS n, max((SELECT max(created_at) FROM memories AS o "
        "WHERE o.scope = k.scope AND o.state = k.state)) AS at FROM scope_counts AS k "
        f"WHERE n > 0 AND state NOT IN ({marks}) GROUP BY scope), "
        "c AS (SELECT scope, cwd, max(updated_at) FROM sessions "
        "WHERE cwd != '' AND forgotten_at IS NULL GROUP BY scope), "
        "scopes AS (SELECT scope FROM s UNION SELECT scope FROM m) "
        "SELECT scopes.scope AS scope, coalesce(s.n, 0) AS sessions, coalesce(m.n, 0) AS memories,"
        " max(coalesce(s.at, ''), coalesce(m.at, '')) AS last_activity, "
        "coalesce(s.clients, '') AS clients, coalesce(c.cwd, '') AS cwd FROM scopes "
        "LEFT JOIN s ON s.scope = scopes.scope LEFT JOIN m ON m.scope = scopes.scope "
        "LEFT JOIN c ON c.scope = scopes.scope ORDER BY last_activity DESC, scopes.scope",
        list(hidden_states),
    )
    return [
        ProjectRow(**{**row, "clients": tuple(sorted(c for c in row["clients"].split(",") if c))})
        for row in rows
    ]


def scope_known(db: Database, scope: str) -> bool:
    """Whether a session or a memory carries ``scope``."""
    return bool(
        db.value(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE scope = ?) "
            "OR EXISTS (SELECT 1 FROM memories WHERE scope = ?)",
            (scope, scope),
        )
    )


def project_dirs(db: Database, scopes: list[str]) -> dict[str, str]:
    """scope -> the directory its latest session with one ran in, for the given scopes."""
    if not scopes:
        return {}
    rows = db.tuples(
        "SELECT scope, cwd, max(updated_at) FROM sessions "
        f"WHERE scope IN ({', '.join('?' * len(scopes))}) AND cwd != '' "
        "AND forgotten_at IS NULL GROUP BY scope",
        scopes,
    )
    return {scope: cwd for scope, cwd, _ in rows}


def scope_dirs(db: Database, skip: str) -> dict[str, str]:
    """Every scope but ``skip`` (the global one: no question names it) that holds a session
    or a memory -> the directory its latest session with one ran in ('' when none said):
    one index seek a scope, not a scan of every session, as recall asks it for each
    question (``memories.projects.scopes_named_in``). The skipped scope's sessions are
    not read: they may be thousands, none with a directory, and each would be."""
    rows = db.tuples(
        # a loose scan of sessions_scope: each step seeks the next scope
        "WITH RECURSIVE s(scope) AS (SELECT min(scope) FROM sessions UNION ALL "
        "SELECT (SELECT min(scope) FROM sessions WHERE scope > s.scope) FROM s "
        "WHERE s.scope IS NOT NULL) "
        "SELECT scope, coalesce((SELECT cwd FROM sessions AS o WHERE o.scope = s.scope "
        "AND cwd != '' AND forgotten_at IS NULL ORDER BY updated_at DESC LIMIT 1), '') FROM s "
        "WHERE scope IS NOT NULL AND scope != :skip "
        "UNION SELECT DISTINCT scope, '' FROM scope_counts WHERE n > 0 AND scope != :skip",
        {"skip": skip},
    )
    found: dict[str, str] = {}
    for scope, cwd in rows:
        if cwd or scope not in found:
            found[scope] = cwd
    return found
