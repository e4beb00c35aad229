"""SQL for the written profile: lines per scope and section, each citing its memories."""

from __future__ import annotations

import json
from dataclasses import dataclass

from memctl.store.database import Database


@dataclass(frozen=True)
class ProfileLine:
    scope: str
    section: str
    text: str
    sources: tuple[str, ...]  # memory ids
    written_by: str  # rules, llm or host
    written_at: str

    def to_dict(self) -> dict[str, object]:
        return {**self.__dict__, "sources": list(self.sources)}


def replace_profile(db: Database, scope: str, lines: list[ProfileLine]) -> None:
    """Write ``scope``'s profile anew: its old lines go, ``lines`` come."""
    db.execute("DELETE FROM profile_lines WHERE scope = ?", (scope,))
    db.executemany(
        "INSERT INTO profile_lines(scope, section, text, sources, written_by, written_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (scope, x.section, x.text, json.dumps(list(x.sources)), x.written_by, x.written_at)
            for x in lines
        ],
    )


def profile_lines(db: Database, scopes: tuple[str, ...] | None) -> list[ProfileLine]:
    """The written lines of ``scopes`` (None: every scope) whose sources are all still
    active and all of ``scopes``: a line whose source was forgotten, deleted or superseded
    is not shown, nor one resting on another project's memory."""
    condition, outside, params = "1", "0", []
    if scopes is not None:
        wanted = json.dumps(scopes)
        condition = "p.scope IN (SELECT value FROM json_each(?))"
        outside = "m.scope NOT IN (SELECT value FROM json_each(?))"
        params = [wanted, wanted]
    rows = db.tuples(
        "SELECT p.scope, p.section, p.text, p.sources, p.written_by, p.written_at "
        f"FROM profile_lines p WHERE {condition} AND NOT EXISTS (SELECT 1 FROM "
        "json_each(p.sources) s LEFT JOIN memories m ON m.id = s.value "
        f"WHERE m.id IS NULL OR m.state != 'active' OR {outside}) ORDER BY p.id",
        params,
    )
    return [
        ProfileLine(str(a), str(b), str(c), tuple(json.loads(d)), str(e), str(f))
        for a, b, c, d, e, f in rows
    ]


def stored_lines(db: Database, scope: str) -> int:
    """How many lines ``scope``'s profile holds, shown or not."""
    return int(db.value("SELECT count(*) FROM profile_lines WHERE scope = ?", (scope,)))


def profile_scopes(db: Database) -> list[str]:
    """Every scope holding an active memory (each gets a profile)."""
    return [
        str(r[0]) for r in db.tuples("SELECT DISTINCT scope FROM memories WHERE state = 'active'")
    ]


def stack_mentions(
    db: Database,
    scopes: tuple[str, ...] | None,
    kinds: tuple[str, ...],
    limit: int,
    code_kinds: tuple[str, ...] = (),
) -> list[tuple[str, list[str], list[str]]]:
    """The entities of ``kinds`` the active memories of ``scopes`` (None: every scope)
    mention most: (name, the ids of those memories, most important first, and of those
    the ones that also name an entity of ``code_kinds``: a file, a command, ...)."""
    condition, params = "1", []
    if scopes is not None:
        condition, params = "m.scope IN (SELECT value FROM json_each(?))", [json.dumps(scopes)]
    coded = (
        "CASE WHEN EXISTS (SELECT 1 FROM entity_mentions y JOIN entities c ON c.id = "
        "y.entity_id WHERE y.memory_id = m.id AND c.kind IN (SELECT value FROM json_each(?))) "
        "THEN m.id END"
    )
    rows = db.tuples(
        f"SELECT e.name, json_group_array(m.id), json_group_array({coded}) FROM entities e "
        "JOIN entity_mentions x ON x.entity_id = e.id "
        "JOIN (SELECT * FROM memories ORDER BY importance DESC) m ON m.id = x.memory_id "
        f"WHERE m.state = 'active' AND {condition} "
        "AND e.kind IN (SELECT value FROM json_each(?)) "
        "GROUP BY e.id ORDER BY count(*) DESC, e.name LIMIT ?",
        [json.dumps(code_kinds), *params, json.dumps(kinds), limit],
    )
    return [
        (str(name), list(json.loads(ids)), [i for i in json.loads(code) if i])
        for name, ids, code in rows
    ]


def stack_spread(db: Database, kinds: tuple[str, ...]) -> tuple[dict[str, int], int]:
    """How many scopes' active memories name each entity of ``kinds``, by name, and how
    many scopes name any."""
    rows = db.tuples(
        "SELECT e.name, count(DISTINCT m.scope) FROM entities e "
        "JOIN entity_mentions x ON x.entity_id = e.id JOIN memories m ON m.id = x.memory_id "
        "WHERE m.state = 'active' AND e.kind IN (SELECT value FROM json_each(?)) GROUP BY e.id",
        [json.dumps(kinds)],
    )
    scopes = db.value(
        "SELECT count(DISTINCT m.scope) FROM memories m JOIN entity_mentions x ON x.memory_id "
        "= m.id JOIN entities e ON e.id = x.entity_id WHERE m.state = 'active' "
        "AND e.kind IN (SELECT value FROM json_each(?))",
        [json.dumps(kinds)],
    )
    return {str(name): int(n) for name, n in rows}, int(scopes or 0)
