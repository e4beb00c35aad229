"""The MCP server's two searches, without the MCP SDK: ``memory_search`` and
``session_search`` as the server's tools answer them, and the server's ``Context``.

``mcp_server`` registers these as its tools; ``mcp_front`` answers a search that comes
before the SDK has loaded (issue 37: the first search of a session waited 1.4-4 s for
the SDK's import on a loaded machine) with the same functions, so both answer alike.
``early_call`` says which calls the front may answer: an exact match of a search's
arguments (right names, plain JSON types, within ``mcp_server.LIMITS``); any other call
waits for the SDK, which answers it or names what is wrong, as before.
"""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from memctl.api import recall as recall_api
from memctl.config import Settings
from memctl.config.files import known_forget_key
from memctl.config.settings import SESSION_ARGUMENT, asking_session
from memctl.context import Context
from memctl.integrations.hooks_state import running_session
from memctl.memories.provenance import origin
from memctl.model import ROLES, Memory
from memctl.retrieve.pipeline import Recalled
from memctl.store.sessions import keyed_session_id

SERVER_NAME = "memctl"  # the server's name, as mcp_server.Door gives it to the SDK
MODES = ("smart", "focused", "deep", "working")
FORMATS = ("json", "context")
QUERY_CHARS = 4000  # mcp_server.LIMITS["query"]
WORD_CHARS = 1000  # mcp_server.MAX_CHARS: any other string argument
MAX_NUMBER = 1_000_000_000  # mcp_server.MAX_NUMBER
WARM_QUERY = "a question asked once, to load what a search loads"


def brief(memory: Memory) -> dict[str, Any]:
    """The fields a model needs of a memory."""
    return {
        "id": memory.id,
        "content": memory.content,
        "category": str(memory.category),
        "kind": str(memory.kind),
        "state": str(memory.state),
        "scope": memory.scope,
        "tags": list(memory.tags),
        "importance": memory.importance,
        "created_at": memory.created_at,
    }


def hit(item: Recalled, host: str | None = None, following: bool = False) -> dict[str, Any]:
    """A search result; ``said_by``: who said it (``you``, ``assistant``, ``host ...``);
    ``match_reason``: why it is clear or possible, in a word (``replaced_by``: the memory
    that superseded or contradicts what it says);
    ``host``: the id of the machine a synced memory came from (null for the user's own and
    for session messages), ``trusted`` whether it is in sync.trust: one that is not is why
    the result follows the user's own of its label whatever its score; ``from``: the
    message folded into it whose sentences answer (its id SESSION#N, text, cosine)."""
    said_by = "session message" if item.is_message else origin(item.memory, host)
    return {
        **brief(item.memory),
        "said_by": said_by,
        "score": round(item.score, 4),
        "is_message": item.is_message,
        "match": item.match,
        "match_reason": item.match_reason,
        "replaced_by": item.replaced_by,
        **recall_api.host_fields(host, following),
        # a message folded into it that answers (answering.py): session_expand opens it
        **({"from": item.answering.to_dict()} if item.answering else {}),
    }


# Where a tools/call's ``_meta`` names the client's session: Codex sends its thread's id
# (0.171.0: threadId, and sessionId the same); Claude Code and OpenCode send none
# (memctl's OpenCode plugin names it in the arguments: settings.SESSION_ARGUMENT).
META_SESSION_KEYS = ("threadId", "sessionId")
# The session the SDK's call being answered names (set by the server for the call)
CALL_SESSION: ContextVar[str | None] = ContextVar("memctl_call_session", default=None)


def meta_session(meta: Any) -> str | None:
    """The session a tools/call's ``_meta`` names (``META_SESSION_KEYS``), if any."""
    if not isinstance(meta, dict):
        return None
    named = (meta.get(key) for key in META_SESSION_KEYS)
    return next((value for value in named if isinstance(value, str) and value), None)


def call_session(arguments: Any, meta: Any) -> tuple[Any, str | None]:
    """A tools/call's ``arguments`` without ``SESSION_ARGUMENT``, and the session asking:
    the one the arguments name (memctl's OpenCode plugin), else the ``_meta``'s (Codex)."""
    if not isinstance(arguments, dict) or SESSION_ARGUMENT not in arguments:
        return arguments, meta_session(meta)
    rest = {k: v for k, v in arguments.items() if k != SESSION_ARGUMENT}
    named = arguments[SESSION_ARGUMENT]
    return rest, named if isinstance(named, str) and named else meta_session(meta)


def asking(ctx: Context) -> str | None:
    """The session a tool call comes from: the one the call names (Codex, memctl's
    OpenCode plugin), else the one the server's client runs now."""
    return CALL_SESSION.get() or _running(ctx)


def _running(ctx: Context) -> str | None:
    """The session the server's client runs now (``hooks_state.running_session``), the
    one its environment names known by its keyed id too (a forgotten one, resumed)."""
    named = asking_session(os.environ)
    key = known_forget_key(ctx.settings.home) if named else None
    kept = keyed_session_id(key, named) if key and named else None
    return running_session(ctx.settings.home, os.getppid(), named, kept)


def memory_search(
    ctx: Context,
    query: str,
    limit: int | None = None,
    scope: str | None = None,
    all_scopes: bool = False,
    mode: str | None = None,
    budget: int | None = None,
    format: str = "json",
    session: str | None = None,
) -> dict[str, Any]:
    """The ``memory_search`` tool's answer (its description is the server's), asked from
    ``session`` (else the one the call or the server's environment names)."""
    request = recall_api.RecallRequest(
        query=query,
        limit=limit or ctx.settings.mcp_search_limit,
        scope=scope,
        all_scopes=all_scopes,
        mode=mode,
        budget=budget,
        context=format == "context",
        # the session asking: named by the call (Codex, memctl's OpenCode plugin), else by
        # the server's environment (Claude Code's, which names the session that started
        # the server) or the later one its client started since (after a /clear)
        session=session or asking(ctx),
    )
    response = recall_api.recall(ctx, request)
    result = response.result
    hint = recall_api.elsewhere_hint(response.elsewhere, "call again with all_scopes true")
    answer: dict[str, Any] = {
        "query": recall_api.asked_query(query),  # its private part is not said back
        "warnings": [*result.warnings, *([hint] if hint else [])],
    }
    if format == "context":
        answer["context"] = response.context or ""
    else:
        answer["results"] = [
            hit(item, response.hosts.get(item.memory.id), item.memory.id in response.following)
            for item in result.results
        ]
    return answer


def session_search(
    ctx: Context,
    query: str,
    limit: int = 10,
    all_scopes: bool = False,
    client: str | None = None,
    since: str | None = None,
    role: str | None = None,
) -> dict[str, Any]:
    """The ``session_search`` tool's answer."""
    from memctl.api import sessions as sessions_api  # 0.4 s of imports on a busy machine

    where = sessions_api.Where(None, all_scopes, client, since, None, role)
    found = sessions_api.grep(ctx, query, where, limit)
    # its private part is not said back
    return {"query": recall_api.asked_query(query), "matches": [m.to_dict() for m in found]}


def _number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_NUMBER


def _word(value: Any, choices: tuple[str, ...] | None = None) -> bool:
    return isinstance(value, str) and len(value) <= WORD_CHARS and (not choices or value in choices)


# Each search's arguments and what a value must be for the front to answer the call.
CHECKS: dict[str, dict[str, Any]] = {
    "memory_search": {
        "limit": _number,
        "scope": _word,
        "all_scopes": lambda v: isinstance(v, bool),
        "mode": lambda v: _word(v, MODES),
        "budget": _number,
        "format": lambda v: _word(v, FORMATS),
    },
    "session_search": {
        "limit": _number,
        "all_scopes": lambda v: isinstance(v, bool),
        "client": _word,
        "since": _word,
        "role": lambda v: _word(v, ROLES),
    },
}
SEARCHES: dict[str, Callable[..., dict[str, Any]]] = {
    "memory_search": memory_search,
    "session_search": session_search,
}


def early_call(name: Any, arguments: Any) -> dict[str, Any] | None:
    """``arguments`` when the front may answer this call of ``name`` itself: a search
    with a query of at most QUERY_CHARS and every other argument of its exact type
    (None: as left out); else None (the SDK answers)."""
    checks = CHECKS.get(name) if isinstance(name, str) else None
    if checks is None or not isinstance(arguments, dict):
        return None
    query = arguments.get("query")
    if not isinstance(query, str) or len(query) > QUERY_CHARS:
        return None
    rest = {k: v for k, v in arguments.items() if k != "query" and v is not None}
    if not all(k in checks and checks[k](v) for k, v in rest.items()):
        return None
    return {"query": query, **rest}


def open_context(settings: Settings) -> Context:
    """The server's context. With ``recall.resident`` on, vectors come from the resident
    recall process (``ResidentEmbedder``), started here when none runs so that it has
    loaded the model by the first search (issue 37: 4.7-5.3 s on a loaded machine when
    the server loaded it). Ollama's models stay loaded in Ollama: asked directly."""
    if not settings.recall_resident or settings.embedder == "ollama":
        return Context(settings, door="mcp")
    from memctl.embed import get_embedder
    from memctl.integrations.resident import ResidentEmbedder, start, tell

    launched = tell(settings.home, "status") is None and start(settings.home)
    embedder = ResidentEmbedder(settings.home, get_embedder(settings), launched)
    return Context(settings, embedder, door="mcp")


# The newest event each server's context has seen (``purge_if_forgotten``).
_SEEN: weakref.WeakKeyDictionary[Context, int] = weakref.WeakKeyDictionary()


def purge_if_forgotten(ctx: Context) -> bool:
    """Before and after each tool call (one at a time on ``ctx``): when a memory or a
    message left recall since the server last looked (archived, deleted, forgotten or
    redacted, by this server or any other process: ``store.events.hidden_since``), drop
    what this long-lived process keeps of earlier answers: recall's caches of words
    (``retrieve.caches``), the last query's vectors and the store's connection, whose page
    cache holds the rows it read. memctl cannot end a server its client owns, as it ends
    the resident process; freed memory still holds the bytes of earlier answers until it
    is reused (Python does not wipe it). The first call only notes where the events
    stand. Whether it purged."""
    from memctl.store.events import hidden_since, last_event

    newest = last_event(ctx.db)
    seen, _SEEN[ctx] = _SEEN.get(ctx), newest
    if seen is None or not hidden_since(ctx.db, seen):
        return False
    from memctl.retrieve import caches

    caches.clear()
    ctx.forget_query()
    ctx.close()  # opened again by the next read
    gc.collect()  # what only a cycle still held
    return True


def warm(ctx: Context) -> None:
    """Load what the first search loads (numpy, the vector index, the query's vector from
    the resident process: 0.3 s of CPU and more on a busy machine) before it comes;
    nothing is written (no access recorded). With the model in this process (no resident
    process) only the modules: a session that never searches does not load the model."""
    from memctl.integrations.resident import ResidentEmbedder

    purge_if_forgotten(ctx)  # where the events stand, before anything is read
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as recall: before numpy loads
    import memctl.store.vector_index
    import memctl.store.vector_query  # noqa: F401 - sqlite-vec, loaded by the vector leg

    if isinstance(ctx.embedder, ResidentEmbedder):
        recall_api.recall(ctx, recall_api.RecallRequest(WARM_QUERY, limit=1, touch=False))
