"""The everyday operations on single memories, and the store's status."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from memctl.context import Context
from memctl.errors import UsageError
from memctl.memories import operations
from memctl.memories.operations import LINK_TYPES as LINK_TYPES  # link --type
from memctl.memories.operations import MAX_CONTENT_CHARS as MAX_CONTENT_CHARS  # remember
from memctl.memories.operations import Status
from memctl.memories.projects import scope_named
from memctl.memories.questions import Questions
from memctl.model import Event, Memory, Relation
from memctl.store import memories as store_memories
from memctl.store import sessions
from memctl.store.memories import SORTS as SORTS  # list --sort
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import is_message_id as is_message_id  # a SESSION#N id
from memctl.store.projects import scope_known
from memctl.store.sync import foreign_hosts

if TYPE_CHECKING:
    from memctl.api.sessions import Origin
    from memctl.maintain.everywhere import Forgotten

# Imported where used: the session listing (get's origins), the rules and the graph
# (remember), and forgetting everywhere (sessions, backups, the sync clone) took a command
# needing none of them from 180 to 320 ms of CPU (`memctl list`, `memctl status`).

AUTO = "auto"  # remember.category: classify each text by the extraction rules


@dataclass(frozen=True)
class RememberRequest:
    text: str
    category: str | None = None  # default: remember.category ("auto": by the rules)
    tags: tuple[str, ...] = ()
    importance: float | None = None  # default: remember.importance
    scope: str | None = None  # None or 'project': the current project
    source: str = "cli"
    questions: tuple[str, ...] = ()  # ways a person might ask for it (memories/questions.py)
    # Where an assistant stored it from (MCP memory_store): the client's session, when the
    # client names it (forgetting that session forgets the memory too), and the client
    session_id: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True)
class Remembered:
    memory: Memory
    existing: bool  # the text was already stored in the scope: this is that memory
    questions: Questions = field(default_factory=Questions)
    redacted: int = 0  # private or secret parts of the text given, stored as [REDACTED]
    # the memories it replaced ("my editor is helix" after "my editor is vim"), now superseded
    replaced: tuple[Memory, ...] = ()


def remember(ctx: Context, request: RememberRequest) -> Remembered:
    """Store a pinned memory exactly as given (no LLM, no reconciliation); a text already
    stored in the scope returns the memory that holds it. Without a category (and with
    ``remember.category: auto``) the extraction rules classify the text, so a profile or
    preference goes to the global scope and a project fact stays in its project. Its
    entities and triples enter the knowledge graph with it. A text that sets another value
    of a slot a memory of its scope sets (ingest/reconcile_rules.py) supersedes it."""
    from memctl.ingest import graph
    from memctl.ingest.asked import give_questions
    from memctl.ingest.meaning import give_names
    from memctl.ingest.reconcile_rules import replaces
    from memctl.ingest.rules_stated import classify
    from memctl.ingest.scrub import followed_hidden

    # stored from a session (MCP memory_store): no value its captures hid goes in bare
    text, tags, questions = followed_hidden(
        ctx, request.session_id, (request.text, request.tags, request.questions)
    )
    request = replace(request, text=text, tags=tags, questions=questions)
    category = request.category
    if category is None and ctx.settings.remember_category == AUTO:
        category = str(classify(request.text))
    memory, existing, questions, replaced = operations.remember_once(
        ctx,
        request.text,
        category,
        list(request.tags),
        request.importance,
        request.scope,
        request.source,
        request.questions,
        replaces,
        (request.session_id, request.agent_id),
    )
    if not existing:  # its entities and triples, at once (maintain would read it later)
        with ctx.db.atomic():
            graph.index(
                ctx.db,
                [graph.Written(memory.id, memory.content, memory.source, memory.content_hash)],
            )
        give_names(ctx.db, ctx.embedder, [(memory.id, memory.content)])
        floor = ctx.settings.remember_question_floor  # none given: those written by rule
        give_questions(ctx.db, ctx.embedder, [(memory.id, memory.content, memory.category)], floor)
    redacted = _redacted(request.text, memory.content)
    return Remembered(memory, existing, questions, redacted, tuple(replaced))


def _redacted(given: str, stored: str) -> int:
    """How many more ``[REDACTED]`` marks the stored text holds than the text given."""
    if "[REDACTED" not in stored:
        return 0
    from memctl.memories.privacy import MARK

    return max(0, len(MARK.findall(stored)) - len(MARK.findall(given)))


def source_times(ctx: Context, memories: list[Memory]) -> dict[str, str]:
    """When each memory's source was said (the session message it came from), by id."""
    return sessions.source_times(ctx.db, memories)


@dataclass(frozen=True)
class GetResult:
    memory: Memory
    relations: list[Relation]
    origins: list[Origin] = field(default_factory=list)  # every session range it came from
    # another machine's memory (its text came in by sync): that machine's id; None for this
    # machine's own (null in JSON, as recall's and memory_search's ``host`` say)
    host: str | None = None

    @property
    def origin(self) -> Origin | None:
        """The first of them: where its own ``source`` points."""
        return self.origins[0] if self.origins else None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.memory.to_dict(),
            "relations": [r.to_dict() for r in self.relations],
            "origin": self.origin.to_dict() if self.origin else None,
            "origins": [o.to_dict() for o in self.origins],
            "host": self.host,
        }


def get(ctx: Context, id_or_prefix: str) -> GetResult:
    """One memory by full id or unique prefix, with its relations and where it came from."""
    from memctl.api.sessions import origins

    memory, relations = operations.get(ctx, id_or_prefix)
    host = foreign_hosts(ctx.db, [memory.id]).get(memory.id)
    return GetResult(memory, relations, origins(ctx, [memory]).get(memory.id, []), host)


def by_ids(ctx: Context, ids: Iterable[str]) -> dict[str, Memory]:
    """The memories still stored of ``ids`` (full ids), by id, in one read: those a page
    names beside the one it shows."""
    return store_memories.get_memories(ctx.db, list(ids))


@dataclass(frozen=True)
class Filters:
    """Which memories a list or purge covers; no states means all but archived and deleted."""

    scope: str | None = None  # None: every scope; 'project': the current one
    kinds: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    tag: str | None = None
    since: str | None = None  # an ISO date or a span like 7d
    stored: bool = False  # since counts from when memctl stored it, not the memory's own date
    session: str | None = None  # a session's id or unique prefix: those distilled from it

    def any(self) -> bool:
        given = (self.scope, self.kinds, self.categories, self.states, self.tag, self.since)
        return any(given) or self.session is not None

    def build(self, ctx: Context) -> MemoryFilter:
        found = operations.make_filter(
            ctx,
            self.scope,
            list(self.kinds) or None,
            list(self.categories) or None,
            list(self.states) or None,
            self.tag,
            self.since,
        )
        return replace(found, stored=self.stored, session_id=self._session_id(ctx))

    def _session_id(self, ctx: Context) -> str | None:
        """The session's whole id (a prefix, a forgotten or unknown one: NotFoundError)."""
        if self.session is None:
            return None
        from memctl.api.sessions import find_session

        return find_session(ctx, self.session).id


@dataclass(frozen=True)
class ListRequest:
    filters: Filters = field(default_factory=Filters)
    limit: int | None = None  # default: list.limit
    sort: str = "created"
    after: tuple[str, str] | None = None  # keyset (sort created): after this (created_at, id)


def list_memories(ctx: Context, request: ListRequest) -> list[Memory]:
    """Memories matching the filters, newest first (or by ``sort``)."""
    if request.after is not None and request.sort != "created":
        raise UsageError("a page after a memory follows the sort 'created' only", ["sort"])
    where = replace(request.filters.build(ctx), after=request.after)
    return operations.list_memories(
        ctx, where, request.limit or ctx.settings.list_limit, request.sort
    )


# Memories counted for a hint at most.
COUNT_AT_MOST = 10_000


def count(ctx: Context, filters: Filters) -> int:
    """How many memories ``filters`` cover, as `list` pages them (counted up to
    ``COUNT_AT_MOST``)."""
    return store_memories.count_memories(ctx.db, filters.build(ctx), COUNT_AT_MOST)


def unknown_scope(ctx: Context, filters: Filters) -> str | None:
    """The scope ``filters`` name when it is no project's name or directory and nothing
    stored carries it (a typo lists nothing, and says so); None otherwise."""
    name = filters.scope
    if name in (None, "", "project", operations.GLOBAL_SCOPE):
        return None
    if scope_named(ctx, name) or scope_known(ctx.db, operations.resolve_scope(ctx, name)):
        return None
    return name


def stored_earlier(ctx: Context, filters: Filters) -> int:
    """How many memories ``filters.since`` leaves out that memctl stored since then (their
    own date is earlier: a backfill of old sessions, an import): 0 without ``since``."""
    if not filters.since or filters.stored:
        return 0
    return store_memories.count_stored_earlier(ctx.db, filters.build(ctx), COUNT_AT_MOST)


@dataclass(frozen=True)
class UpdateRequest:
    id: str
    text: str | None = None
    tags: tuple[str, ...] | None = None  # None: unchanged; () clears
    importance: float | None = None
    category: str | None = None


def update(ctx: Context, request: UpdateRequest) -> Memory:
    """Change a memory's content (re-embedded, with the names the vocabulary gives what it
    now mentions), tags, importance or category."""
    from memctl.ingest.meaning import give_names

    tags = None if request.tags is None else list(request.tags)
    memory = operations.update(
        ctx, request.id, request.text, tags, request.importance, request.category
    )
    if request.text is not None:
        give_names(ctx.db, ctx.embedder, [(memory.id, memory.content)])
    return memory


def forget(ctx: Context, id_or_prefix: str, noise: bool = False) -> Memory:
    """Archive a memory; with ``noise``, ingest learns to drop facts like it. A session
    message (``SESSION#N``) has nothing to archive: it is forgotten everywhere
    (``sessions forget``)."""
    if is_message_id(id_or_prefix):
        if noise:
            raise UsageError("noise takes a memory, not a session message", ["noise"])
        return forget_message(ctx, id_or_prefix)[0]
    return operations.forget(ctx, id_or_prefix, noise)


def forget_message(ctx: Context, message_id: str) -> tuple[Memory, Forgotten]:
    """Forget a session message (``SESSION#N``) everywhere (``sessions forget``): the
    message as it was, and what the forget took out (nothing when it was forgotten
    already)."""
    from memctl.maintain.forgetting import forget_session

    message = operations.get(ctx, message_id)[0]
    return message, forget_session(ctx, message.id, reads="message")


def pin(ctx: Context, id_or_prefix: str) -> Memory:
    """Pin a memory (kind pinned, tier core): it never fades; undo unpins it."""
    return operations.pin(ctx, id_or_prefix)


def delete(ctx: Context, id_or_prefix: str, permanent: bool = False) -> Memory:
    """Soft delete (state deleted), or remove the row, vector and relations for good, with
    every quote of its text (``maintain.forgetting``). A session message has no soft
    delete: ``--permanent`` forgets it everywhere (``sessions forget``)."""
    if is_message_id(id_or_prefix):
        if not permanent:
            raise UsageError(
                "a session message has no soft delete: a permanent delete, or "
                f"`memctl sessions forget {id_or_prefix}`, takes its text out everywhere",
                ["permanent"],
            )
        return forget_message(ctx, id_or_prefix)[0]
    if permanent:
        return delete_for_good(ctx, id_or_prefix)[0]
    return operations.delete(ctx, id_or_prefix, permanent)


def delete_for_good(ctx: Context, id_or_prefix: str) -> tuple[Memory, Forgotten]:
    """Remove a memory for good, with every quote of its text: the memory, and what the
    forget reached (``Forgotten.shared``: whether a sync had published it)."""
    from memctl.maintain.forgetting import forget_memories

    memory = operations.get(ctx, id_or_prefix)[0]
    return memory, forget_memories(ctx, [memory], "delete --permanent")


def redact(ctx: Context, text: str) -> Forgotten:
    """Replace one leaked value by [REDACTED] everywhere memctl keeps text."""
    from memctl.maintain.redaction import redact as redact_value

    return redact_value(ctx, text)


@dataclass(frozen=True)
class PurgeRequest:
    filters: Filters
    permanent: bool = False
    dry_run: bool = False


def purge(ctx: Context, request: PurgeRequest) -> list[Memory]:
    """Delete every memory the filters match (at least one filter); the ones it (would) delete."""
    if not request.filters.any():
        raise UsageError(
            "purge needs at least one filter (scope, kind, category, state, tag or since)",
            names=("scope", "kind", "category", "state", "tag", "since"),
        )
    where = request.filters.build(ctx)
    if request.dry_run:
        return operations.purge(ctx, where, dry_run=True)
    if request.permanent:  # for good: every quote of their text too
        from memctl.maintain.forgetting import forget_memories

        victims = operations.purge(ctx, where, dry_run=True)
        if victims:
            forget_memories(ctx, victims, "purge --permanent")
        return victims
    return operations.purge(ctx, where, permanent=request.permanent)


@dataclass(frozen=True)
class LinkRequest:
    source: str
    target: str
    type: str = "related"
    weight: float = 1.0


def link(ctx: Context, request: LinkRequest) -> Relation:
    """Relate two memories; recall's spreading activation follows relations both ways."""
    return operations.link(ctx, request.source, request.target, request.type, request.weight)


def unlink(ctx: Context, source: str, target: str, type: str | None = None) -> list[Relation]:
    """Remove the relations between two memories (either direction); the removed ones."""
    return operations.unlink(ctx, source, target, type)


def status(ctx: Context) -> Status:
    """Counts by kind, category, state, tier and scope; sizes; the embedding model."""
    return operations.status(ctx)


@dataclass(frozen=True)
class EventsRequest:
    memory_id: str | None = None
    limit: int | None = None  # default: list.limit
    page: int = 1


def events(ctx: Context, request: EventsRequest) -> list[Event]:
    """One page of the append-only event log, newest first."""
    size = request.limit or ctx.settings.list_limit
    return operations.events(ctx, request.memory_id, size, request.page)
