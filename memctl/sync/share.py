"""promote and unpromote: which memories sync may publish.

Promoting makes a memory shared (and releases it if it was withheld);
unpromoting makes it private and withholds it, so that even
``sync.include: all`` leaves it out and the next sync removes this
machine's file of it. Each change is an ``update`` event of an edit run (undo takes it
back).
"""

from __future__ import annotations

from memctl.context import Context
from memctl.errors import UsageError
from memctl.memories.operations import edit, get, refuse_deleted, resolve_scope
from memctl.model import Memory, State, Visibility
from memctl.store import memories as store
from memctl.store.memories import MemoryFilter
from memctl.store.sync import withheld


def select(ctx: Context, ids: list[str], every: bool, scope: str | None) -> list[Memory]:
    """The memories named by id, or with ``every`` all but deleted ones (of one scope)."""
    if every == bool(ids):
        raise UsageError("give ids or every, not both and not neither", ["ids", "every"])
    if scope is not None and not every:
        raise UsageError("scope goes with every", ["scope", "every"])
    if not every:
        return [get(ctx, memory_id)[0] for memory_id in ids]
    states = tuple(s for s in State if s != State.DELETED)
    scopes = None if scope is None else (resolve_scope(ctx, scope),)
    return store.list_memories(ctx.db, MemoryFilter(scopes=scopes, states=states), None)


def set_shared(ctx: Context, memories: list[Memory], shared: bool) -> list[Memory]:
    """Promote (``shared``) or unpromote memories, as one run that undo reverts; the ones
    that changed (none: no run). A deleted memory is never promoted: nothing changes."""
    if shared:
        refuse_deleted(memories, "shared")
    target = Visibility.SHARED if shared else Visibility.PRIVATE
    ids = [m.id for m in memories]
    held = withheld(ctx.db, ids)
    changed = [m for m in memories if m.visibility != target or (m.id in held) == shared]
    verb = "promote" if shared else "unpromote"
    if changed:
        with edit(ctx, verb, changed) as writer:
            writer.set_shared(changed, shared, verb)
    return changed
