"""Scope aliases: a project's old scope name, kept pointing at its new one.

A repository without a remote is scoped ``path:<hash>``; once it gets a remote,
its scope is the remote's. The first time memctl sees that, ``adopt`` moves
the memories (through the Writer: one event each), sessions and imported-file
records of the old scope to the new one and records ``scope_alias:<old>`` in
``meta``, so the move happens once and ``--scope <old>`` keeps finding them.
"""

from __future__ import annotations

from memctl.store.database import Database

PREFIX = "scope_alias:"


def alias_of(db: Database, scope: str) -> str | None:
    """The scope ``scope`` now goes by, if it is an alias."""
    return db.meta(PREFIX + scope)


def resolve(db: Database, scope: str) -> str:
    """``scope``, or the scope it is an alias of."""
    return alias_of(db, scope) or scope


def adopt(db: Database, old: str, new: str) -> int:
    """Make ``old`` an alias of ``new`` and move what ``old`` holds into ``new``, once.

    Returns how many memories moved (0 when the alias was already recorded)."""
    if old == new or alias_of(db, old) == new:
        return 0
    from memctl.store.writes import Writer  # here: every command opens a store, few adopt

    with db.atomic():
        if alias_of(db, old) == new:  # another process adopted it meanwhile
            return 0
        moved = Writer(db).rescope(old, new)
        db.execute("UPDATE sessions SET scope = ? WHERE scope = ?", (new, old))
        db.execute("UPDATE OR IGNORE imports SET scope = ? WHERE scope = ?", (new, old))
        db.set_meta(PREFIX + old, new)
    return len(moved)
