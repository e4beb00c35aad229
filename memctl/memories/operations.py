"""The everyday memory operations behind remember, get, list, update, forget, delete, purge
and status. Each changes the store in one transaction and logs an event per change.

Each direct edit (remember, update, pin, forget, delete, link, unlink, purge: from the CLI,
the viewer or through MCP) is a small run of kind ``edit``: `memctl runs` lists it and `memctl undo`
reverts it (without a run id, the newest edit not undone yet). A permanent delete is an
edit too, which undo refuses by name (nothing can put it back) rather than pass over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.memories.search_scopes import recall_scopes as recall_scopes
from memctl.memories.search_scopes import resolve_scope as resolve_scope
from memctl.memories.timeparse import parse_since
from memctl.model import (
    HIDDEN_STATES,
    Category,
    Event,
    Kind,
    Memory,
    Relation,
    RelationType,
    State,
    Tier,
    content_hash,
    new_id,
    now_iso,
    parse_choice,
)
from memctl.store import memories as store
from memctl.store.events import count_events, list_events
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import get_message, is_message_id
from memctl.store.noise import add_noise_vector
from memctl.store.relations import relations_of
from memctl.store.sessions import count_sessions, keeps_message_vectors, message_vector_count
from memctl.store.writes import Writer

if TYPE_CHECKING:
    from memctl.memories.questions import Questions

# Imported where used: the edits' runs, remember's questions, and status's job and import
# counts (a recall, which imports this module for its scopes, needs none of them: ~5 ms).

MAX_CONTENT_CHARS = 100_000


# An edit's run names at most this many of the memories it changed (a purge can be large).
EDIT_NOTES = 10


@contextmanager
def edit(ctx: Context, verb: str, memories: list[Memory], detail: str = "") -> Iterator[Writer]:
    """One direct edit in one transaction: a writer whose changes are the run of kind
    ``edit`` that `memctl undo` reverts; its notes say what ``verb`` did to which memories
    (by id, and ``detail``: never their words, which a permanent delete must take away)."""
    from memctl.store.runs import EDIT_KIND, RunRecord, save_run

    notes = [f"{verb} {m.id[:8]}{' ' + detail if detail else ''}" for m in memories]
    notes = notes[:EDIT_NOTES] or ([f"{verb} {detail}"] if detail else [])
    if len(memories) > EDIT_NOTES:
        notes.append(f"and {len(memories) - EDIT_NOTES} more")
    run = RunRecord(
        id=new_id(),
        kind=EDIT_KIND,
        status="done",
        counts={verb: len(memories)},
        notes=notes,
        door=ctx.door,
    )
    with ctx.db.atomic():
        yield Writer(ctx.db, run.id, run.started_at)
        run.finished_at = now_iso()
        save_run(ctx.db, run)


def clean_content(text: str) -> str:
    """Content as a memory may hold it: stripped, non-empty, printable, bounded."""
    text = text.strip()
    if not text:
        raise UsageError("a memory needs some text")
    if "\x00" in text:
        raise UsageError("memory text contains NUL bytes; is this binary data?")
    if len(text) > MAX_CONTENT_CHARS:
        raise UsageError(
            f"memory text is {len(text):,} characters; the limit is {MAX_CONTENT_CHARS:,} "
            "(use `memctl import` for documents)"
        )
    return text


def kept_content(text: str) -> str:
    """Content as stored (remember, update, import): clean, and with private text and
    secrets taken out."""
    # Imported here: compiling the secret patterns is ~20 ms that a recall never needs.
    from memctl.memories.privacy import nothing_left, scrub

    kept, _ = scrub(clean_content(text))
    if nothing_left(kept):
        raise UsageError("nothing is left of this text once private text and secrets are removed")
    return kept.strip()


def clean_tags(tags: list[str]) -> list[str]:
    """Tags split on commas, trimmed, de-duplicated, order kept."""
    cleaned: dict[str, None] = {}
    for tag in tags:
        for part in tag.split(","):
            if part.strip():
                cleaned.setdefault(part.strip(), None)
    return list(cleaned)


def kept_tags(tags: list[str]) -> list[str]:
    """Tags as stored: clean, secrets taken out, those left with nothing dropped."""
    from memctl.memories.privacy import nothing_left, scrub

    return clean_tags([t for t in (scrub(t)[0] for t in clean_tags(tags)) if not nothing_left(t)])


# Facts about the person, not the project: global unless a scope is given.
PERSONAL = frozenset({Category.PROFILE, Category.PREFERENCES})


def personal_scope(ctx: Context) -> str | None:
    """The scope of profile and preferences memories made without a scope (None: as others)."""
    return GLOBAL_SCOPE if ctx.settings.scope_personal_global else None


def default_scope(ctx: Context, scope: str | None, category: str | None) -> str:
    """The scope given; else global for a profile or preferences memory; else the project."""
    personal = personal_scope(ctx)
    if scope in (None, "") and personal and category in PERSONAL:
        return personal
    return resolve_scope(ctx, scope)


# remember.category "auto" asks the api layer to classify the text by the extraction rules;
# a core call that comes without a category (none classified it) files it as before.
UNCLASSIFIED = Category.PREFERENCES


def _configured_category(ctx: Context) -> str:
    configured = ctx.settings.remember_category
    return str(UNCLASSIFIED) if configured == "auto" else configured


def check_unit(name: str, value: float | None) -> None:
    if value is not None and not 0.0 <= value <= 1.0:
        raise UsageError(f"{name} must be between 0 and 1, not {value}")


def remember(
    ctx: Context,
    content: str,
    category: str | None = None,
    tags: list[str] | None = None,
    importance: float | None = None,
    scope: str | None = None,
    source: str = "cli",
) -> Memory:
    """Store a pinned memory as given: no LLM, no reconciliation."""
    return remember_once(ctx, content, category, tags, importance, scope, source)[0]


def remember_once(
    ctx: Context,
    content: str,
    category: str | None = None,
    tags: list[str] | None = None,
    importance: float | None = None,
    scope: str | None = None,
    source: str = "cli",
    questions: Sequence[str] = (),
    replaces: Callable[[str, str], bool] | None = None,
    stored_from: tuple[str | None, str | None] = (None, None),
) -> tuple[Memory, bool, Questions, list[Memory]]:
    """(memory, already stored, its questions, the memories it superseded): a text already
    stored in the scope is not stored twice (the questions given are added to it); questions
    not about the memory are dropped (memories/questions.py); the active memories of its
    scope near it that ``replaces(text, theirs)`` says it replaces are superseded by it.
    ``stored_from``: the session and the agent a new memory records (an assistant's)."""
    from memctl.memories.questions import Questions, clean_questions, on_topic

    check_unit("importance", importance)
    memory = Memory(
        content=kept_content(content),
        kind=Kind.PINNED,
        category=parse_choice(Category, category or _configured_category(ctx), "category"),
        tier=Tier.CORE,
        importance=ctx.settings.remember_importance if importance is None else importance,
        scope=default_scope(ctx, scope, category),
        tags=kept_tags(tags or []),
        source=source,
        session_id=stored_from[0],
        agent_id=stored_from[1],
    )
    asked = clean_questions(questions)
    existing = store.same_content(ctx.db, memory.content_hash, memory.scope)
    if existing is not None and not asked:
        return existing, True, Questions(), []
    target = existing or memory
    vector, *question_vectors = ctx.vectors([target.content, *asked])
    found = on_topic(asked, question_vectors, vector, ctx.settings.remember_question_floor)
    model = ctx.embedder.name
    if existing is not None:
        if found.kept:
            with ctx.db.atomic():
                Writer(ctx.db).add_questions(existing.id, found.kept, model)
        return existing, True, found, []
    stale = _replaced(ctx, memory, vector, replaces) if replaces is not None else []
    with edit(ctx, "remember", [memory]) as writer:
        writer.create(memory, vector, questions=len(found.kept))
        writer.add_questions(memory.id, found.kept, model)
        for old in stale:
            writer.supersede(old, memory.id, "supersede", superseded_by=memory.id)
            writer.link(Relation(memory.id, old.id, RelationType.SUPERSEDES))
    return memory, False, found, stale


def _replaced(
    ctx: Context, memory: Memory, blob: bytes, replaces: Callable[[str, str], bool]
) -> list[Memory]:
    """The active memories of ``memory``'s scope nearest it (as reconcile gathers them) that
    ``replaces`` says the new text replaces; never an event, a case or a session's digest:
    records of what happened stay as they were."""
    import numpy as np

    from memctl.memories.provenance import DIGEST_TAG
    from memctl.store.vector_query import nearest_in_store

    vector = np.frombuffer(blob, dtype=np.float32)
    s = ctx.settings
    where = MemoryFilter(scopes=(memory.scope,), states=(State.ACTIVE,))
    near = [
        memory_id
        for memory_id, distance in nearest_in_store(ctx.db, vector, s.reconcile_vector_top, where)
        if 1.0 - distance >= s.reconcile_min_similarity
    ]
    found = store.get_memories(ctx.db, near)
    return [
        m
        for m in found.values()
        if m.category not in (Category.EVENTS, Category.CASES)
        and DIGEST_TAG not in m.tags
        and replaces(memory.content, m.content)
    ]


def get(ctx: Context, id_or_prefix: str) -> tuple[Memory, list[Relation]]:
    """A memory by id or unique prefix, or a session message by ``<session id>#<number>``."""
    if is_message_id(id_or_prefix):
        return get_message(ctx.db, id_or_prefix).as_memory(), []
    memory_id = store.resolve_id(ctx.db, id_or_prefix)
    memory = store.get_memory(ctx.db, memory_id)
    if memory is None:
        raise NotFoundError(f"no memory with id {id_or_prefix}")
    return memory, relations_of(ctx.db, memory_id)


def event_target(ctx: Context, id_or_prefix: str) -> str:
    """The id whose events to show: a live memory's prefix, or a full id of a removed one."""
    try:
        return store.resolve_id(ctx.db, id_or_prefix)
    except NotFoundError:
        if len(id_or_prefix) == 32:
            return id_or_prefix.lower()
        raise


def events(ctx: Context, id_or_prefix: str | None, limit: int, page: int = 1) -> list[Event]:
    """One page of the event log, newest first, optionally of one memory."""
    target = event_target(ctx, id_or_prefix) if id_or_prefix else None
    return list_events(ctx.db, target, limit, (page - 1) * limit)


def list_memories(
    ctx: Context, where: MemoryFilter, limit: int | None = None, sort: str = "created"
) -> list[Memory]:
    return store.list_memories(ctx.db, where, limit, sort)


def refuse_deleted(memories: Sequence[Memory], doing: str) -> None:
    """UsageError naming the first deleted one: a deleted memory is not edited or shared
    (``doing``: "updated", "shared"), since the edit would show it again, or share it."""
    deleted = [m for m in memories if m.state == State.DELETED]
    if deleted:
        raise UsageError(
            f"memory {deleted[0].id[:8]} is deleted: a deleted memory is not {doing} "
            "(undo the run that deleted it to bring it back)"
        )


def update(
    ctx: Context,
    id_or_prefix: str,
    content: str | None = None,
    tags: list[str] | None = None,
    importance: float | None = None,
    category: str | None = None,
) -> Memory:
    """Change a memory; new content is re-embedded. Logs what changed, old and new."""
    memory, _ = get(ctx, id_or_prefix)
    refuse_deleted([memory], "updated")
    check_unit("importance", importance)
    changes: dict[str, Any] = {}
    kept = kept_content(content) if content is not None else memory.content
    if kept != memory.content:
        changes["content"], changes["content_hash"] = kept, content_hash(kept)
    if tags is not None:
        changes["tags"] = kept_tags(tags)
    if importance is not None:
        changes["importance"] = importance
    if category is not None:
        changes["category"] = parse_choice(Category, category, "category")
    if not changes:
        raise UsageError(
            "nothing to update: give text, tags, importance or category",
            ["text", "tags", "importance", "category"],
        )
    vector = ctx.vectors([changes["content"]])[0] if "content" in changes else None
    with edit(ctx, "update", [memory]) as writer:
        writer.update(memory, changes, vector)
    return get(ctx, memory.id)[0]


def forget(ctx: Context, id_or_prefix: str, noise: bool = False) -> Memory:
    """Archive a memory: recall stops returning it, nothing is deleted.

    With ``noise``, its vector also joins the learned noise vectors, so that
    ingest drops facts like it from now on.
    """
    memory, _ = get(ctx, id_or_prefix)
    if memory.state == State.DELETED:
        raise UsageError(
            f"memory {memory.id[:8]} is deleted, which forgetting would undo: it stays deleted "
            "(undo the delete to bring it back)"
        )
    if memory.state == State.ARCHIVED:
        return memory
    if not noise:
        with edit(ctx, "forget", [memory]) as writer:
            writer.set_state(memory, State.ARCHIVED, "forget")
        return get(ctx, memory.id)[0]
    vector = store.vectors_for(ctx.db, [memory.id]).get(memory.id)
    if vector is None:
        (vector,) = ctx.vectors([memory.content])
    model = ctx.db.vector_model()
    with edit(ctx, "forget", [memory]) as writer:
        writer.set_state(memory, State.ARCHIVED, "forget --noise", noise=True)
        add_noise_vector(
            ctx.db,
            memory.id,
            memory.content,
            model[0] if model else ctx.embedder.name,
            vector,
            ctx.settings.noise_learned_max,
        )
    return get(ctx, memory.id)[0]


def pin(ctx: Context, id_or_prefix: str) -> Memory:
    """Make a memory pinned (kind pinned, tier core): it never fades and is kept by maintain.
    Undo (of this edit) gives it its kind and tier back."""
    memory, _ = get(ctx, id_or_prefix)
    if memory.state in HIDDEN_STATES:
        raise UsageError(f"memory {memory.id[:8]} is {memory.state}: bring it back before pinning")
    if memory.kind == Kind.PINNED and memory.tier == Tier.CORE:
        return memory
    with edit(ctx, "pin", [memory]) as writer:
        writer.update(memory, {"kind": Kind.PINNED, "tier": Tier.CORE})
    return get(ctx, memory.id)[0]


def delete(ctx: Context, id_or_prefix: str, permanent: bool = False) -> Memory:
    """Soft delete (state deleted) or, with ``permanent``, remove every trace but the events."""
    memory, _ = get(ctx, id_or_prefix)
    if not permanent:
        if memory.state != State.DELETED:
            with edit(ctx, "delete", [memory]) as writer:
                writer.set_state(memory, State.DELETED, "delete")
        return get(ctx, memory.id)[0]
    with edit(ctx, "delete --permanent", [memory]) as writer:
        writer.delete(memory)
    return memory


def purge(
    ctx: Context, where: MemoryFilter, permanent: bool = False, dry_run: bool = False
) -> list[Memory]:
    """Delete every memory the filter selects (soft unless ``permanent``); all or nothing."""
    victims = store.list_memories(ctx.db, where, None)
    if dry_run:
        return victims
    if permanent:
        if victims:
            with edit(ctx, "purge --permanent", victims) as writer:
                for memory in victims:
                    writer.delete(memory, reason="purge")
        return victims
    live = [m for m in victims if m.state != State.DELETED]
    if live:
        with edit(ctx, "purge", live) as writer:
            for memory in live:
                writer.set_state(memory, State.DELETED, "purge")
    return victims


@dataclass(frozen=True)
class Status:
    """What `memctl status` reports."""

    database: str
    size_bytes: int
    total: int
    by_kind: dict[str, int]
    by_category: dict[str, int]
    by_state: dict[str, int]
    by_tier: dict[str, int]
    by_scope: dict[str, int]
    embed_model: str | None
    embed_dim: int | None
    current_scope: str
    events: int
    sessions: int
    messages: int
    jobs: dict[str, int]
    imports: dict[str, int]  # imported files by status
    message_vectors: int  # the messages' parts with a stored vector
    message_vectors_kept: bool  # whether this store keeps them (recall.message_vectors)
    message_vectors_setting: str  # auto, on or off
    message_vectors_up_to: int  # auto's limit: the most messages a store with them holds


def status(ctx: Context) -> Status:
    from memctl.store.imports import count_imports
    from memctl.store.jobs import job_counts

    db = ctx.db
    by_state = store.counts_by(db, "state")
    sessions, messages = count_sessions(db)
    model = db.vector_model()
    size = sum(p.stat().st_size for p in db.path.parent.glob(db.path.name + "*") if p.is_file())
    return Status(
        database=str(db.path),
        size_bytes=size,
        total=sum(by_state.values()),
        by_kind=store.counts_by(db, "kind"),
        by_category=store.counts_by(db, "category"),
        by_state=by_state,
        by_tier=store.counts_by(db, "tier"),
        by_scope=store.counts_by(db, "scope"),
        embed_model=model[0] if model else None,
        embed_dim=model[1] if model else None,
        current_scope=ctx.settings.project_scope,
        events=count_events(db),
        sessions=sessions,
        messages=messages,
        jobs=job_counts(db),
        imports=count_imports(db),
        message_vectors=message_vector_count(db),
        message_vectors_kept=keeps_message_vectors(db, ctx.settings),
        message_vectors_setting=ctx.settings.recall_message_vectors,
        message_vectors_up_to=ctx.settings.recall_message_vectors_up_to,
    )


def make_filter(
    ctx: Context,
    scope: str | None = None,
    kinds: list[str] | None = None,
    categories: list[str] | None = None,
    states: list[str] | None = None,
    tag: str | None = None,
    since: str | None = None,
) -> MemoryFilter:
    """A filter from command-line values, each checked; no states means all but hidden ones."""
    return MemoryFilter(
        scopes=None if scope is None else (resolve_scope(ctx, scope),),
        kinds=tuple(parse_choice(Kind, k, "kind") for k in kinds) if kinds else None,
        categories=(
            tuple(parse_choice(Category, c, "category") for c in categories) if categories else None
        ),
        states=(
            tuple(parse_choice(State, s, "state") for s in states)
            if states
            else tuple(s for s in State if s not in HIDDEN_STATES)
        ),
        tag=tag,
        since=parse_since(since) if since else None,
    )


# The relation types people set by hand; `supersedes` is set by ingest's reconciliation.
LINK_TYPES = tuple(t for t in RelationType if t != RelationType.SUPERSEDES)


def link(ctx: Context, a: str, b: str, type: str, weight: float = 1.0) -> Relation:
    """Add (or re-weight) the edge a --type--> b, so that recall's graph stage can follow it."""
    relation_type = parse_choice(RelationType, type, "relation type")
    if relation_type not in LINK_TYPES:
        allowed = ", ".join(t.value for t in LINK_TYPES)
        raise UsageError(f"relation type {type!r} cannot be set by hand: use one of {allowed}")
    if not 0.0 < weight <= 1.0:
        raise UsageError(f"weight must be above 0 and at most 1, not {weight}")
    src, dst = get(ctx, a)[0], get(ctx, b)[0]
    if src.id == dst.id:
        raise UsageError("a memory cannot be linked to itself")
    relation = Relation(src.id, dst.id, relation_type, weight)
    with edit(ctx, "link", [src], f"--{relation_type}--> {dst.id[:8]}") as writer:
        writer.link(relation)
    return relation


def unlink(ctx: Context, a: str, b: str, type: str | None = None) -> list[Relation]:
    """Remove the edges between two memories (either direction; one type or all)."""
    relation_type = parse_choice(RelationType, type, "relation type") if type else None
    src, dst = get(ctx, a)[0], get(ctx, b)[0]
    with edit(ctx, "unlink", [src], f"from {dst.id[:8]}") as writer:
        removed = writer.unlink(src.id, dst.id, relation_type)
        if not removed:
            raise _no_relation(src, dst, type)
    return removed


def _no_relation(src: Memory, dst: Memory, type: str | None) -> NotFoundError:
    what = f"{type} relation" if type else "relation"
    return NotFoundError(f"no {what} between {src.id[:8]} and {dst.id[:8]}")
