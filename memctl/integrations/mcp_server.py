"""``memctl mcp``: memctl as an MCP server over stdio, on the official SDK's ``MCPServer``.

Every tool is a thin call of the core API (``memctl.api``), the same functions the
CLI calls. A ``MemctlError`` becomes an error result carrying its one-line
message (the CLI's message for the same mistake); the server keeps running.
One ``Context`` lives as long as the server, so the embedding model loads once, and
only when the resident recall process does not answer (``mcp_search.open_context``);
the SDK runs tools in worker threads, so one call at a time uses it (``call``).
Every argument is checked against ``LIMITS`` before any work: past one, the call
is refused with one line. ``memory_ingest`` reads only transcripts: files under
a client's transcript folders or ``mcp.ingest_paths``.
Only ``memctl mcp`` imports this module (and so the SDK, about a second of imports);
``mcp_front`` answers the handshake and the searches (``mcp_search``) meanwhile.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import os
import threading
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from memctl import __version__
from memctl.api import distil as distil_api
from memctl.api import ingest as ingest_api
from memctl.api import memory as memory_api
from memctl.api import recall as recall_api
from memctl.api import sessions as sessions_api
from memctl.clients import REGISTRY
from memctl.config import Settings
from memctl.context import Context
from memctl.errors import MemctlError, UsageError, did_you_mean
from memctl.integrations import mcp_search
from memctl.integrations.mcp_search import SERVER_NAME, brief
from memctl.memories.privacy import scrub, secret_in_id
from memctl.memories.provenance import ASSISTANT_SOURCE
from memctl.model import Memory

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "memctl is the user's long-term memory. Search it before answering questions about "
    "past work, project conventions, decisions or the user's preferences; store durable "
    "facts (one per memory, a full sentence) when the user states them or a decision is "
    "made. Never store secrets or text marked `<private>`."
)


# What a tool accepts (issue 22: a 10 MB memory_search query took 43 s and 1.3 GB).
# Characters of a string argument by name (a whole conversation for memory_ingest's
# text, one memory's worth for memory_store's), else MAX_CHARS.
MAX_CHARS = mcp_search.WORD_CHARS
LIMITS = {
    "query": mcp_search.QUERY_CHARS,
    "text": 100_000,  # memories/operations.py MAX_CONTENT_CHARS
    # a whole conversation: an assistant's 200,000-token context at ~4 characters a token
    # is ~800 KB (10 MB was 380,000 messages, a worker still busy 3 minutes later)
    "memory_ingest.text": 1 << 20,
    "transcript_path": 4096,
}
MAX_ITEMS = 50  # tags
MAX_NUMBER = mcp_search.MAX_NUMBER  # limit, budget, context, through_seq, weight...
MAX_ANSWER_CHARS = 1 << 20  # memory_distill_apply's answer, as JSON


def too_big(tool: str, name: str, value: Any) -> str | None:
    """Why an argument is refused, or None."""
    if isinstance(value, str):
        limit = LIMITS.get(f"{tool}.{name}", LIMITS.get(name, MAX_CHARS))
        return (
            f"{name} is {len(value):,} characters: at most {limit:,}"
            if len(value) > limit
            else None
        )
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        fine = math.isfinite(value) and abs(value) <= MAX_NUMBER
        return None if fine else f"{name} is out of range (at most {MAX_NUMBER:,})"
    if isinstance(value, list):
        if len(value) > MAX_ITEMS:
            return f"{name} has {len(value):,} items: at most {MAX_ITEMS}"
        return next((p for v in value if (p := too_big(tool, name, v))), None)
    if isinstance(value, dict) and len(json.dumps(value)) > MAX_ANSWER_CHARS:
        return f"{name} is over {MAX_ANSWER_CHARS:,} characters of JSON"
    return None


def limited(fn: F) -> F:
    """``fn`` refusing, with one line, any argument past the limits."""

    @functools.wraps(fn)
    def checked(**arguments: Any) -> Any:
        for name, value in arguments.items():
            problem = too_big(fn.__name__, name, value)
            if problem:
                raise ToolError(f"{fn.__name__}: {problem}")
        return fn(**arguments)

    return cast(F, checked)


def transcript_roots(settings: Settings) -> list[Path]:
    """Where memory_ingest may read: the clients' transcript folders, and mcp.ingest_paths."""
    roots = [folder for client in REGISTRY.values() for folder in client.transcript_dirs()]
    roots += [Path(p).expanduser() for p in settings.mcp_ingest_paths.split(os.pathsep) if p]
    return [r.resolve() for r in roots]


def allowed_transcript(settings: Settings, path: str) -> str:
    """``path`` when it is a file under ``transcript_roots``; else a ToolError."""
    real = Path(path).expanduser().resolve()
    if any(real.is_relative_to(root) for root in transcript_roots(settings)):
        return str(real)
    raise ToolError(
        f"memory_ingest reads transcripts only: {path} is not under a client's transcript "
        "folder (add folders to mcp.ingest_paths)"
    )


# The API's names the tools spell otherwise (an error names the argument the model gave).
TOOL_WORDS = {"around": "context", "transcript": "transcript_path"}


def tool_word(name: str) -> str:
    return TOOL_WORDS.get(name, name)


def arguments_error(tool: str, parameters: dict[str, bool], given: dict[str, Any]) -> str | None:
    """One line naming what is wrong with a call's argument names (``parameters``: each
    name and whether it is required), or None when they are right."""
    for name in given:
        if name not in parameters:
            return (
                f"{tool}: unknown argument {name!r}{did_you_mean(name, parameters)}; "
                f"it takes {', '.join(parameters)}"
            )
    missing = [name for name, required in parameters.items() if required and name not in given]
    return f"{tool}: missing argument {missing[0]!r}" if missing else None


# The client of the call being answered (set by the server for the call: call_client)
CALL_CLIENT: ContextVar[str | None] = ContextVar("memctl_call_client", default=None)
CLIENT_NAME_CHARS = 64  # of a name a client gives itself that memctl does not know


def call_meta(context: Any) -> Any:
    """A tool call's ``_meta`` (None outside a request)."""
    try:
        return context.request_context.meta
    except (AttributeError, ValueError):  # no context, or none of a request
        return None


def call_client(context: Any) -> str | None:
    """The client a tool call comes from, by memctl's name for it (``clients.REGISTRY``:
    Codex calls itself "codex-mcp-client") or else as it names itself in the handshake
    (``clientInfo``); None when it gave none."""
    try:
        named = context.request_context.session.client_params.client_info.name
    except (AttributeError, ValueError):  # no request, or no handshake seen
        return None
    if not isinstance(named, str) or not named.strip():
        return None
    known = next((name for name in REGISTRY if name in named.lower()), None)
    given = " ".join(named.split())[:CLIENT_NAME_CHARS]
    # a name holding a secret or private text would be kept as the memories' agent
    return known or (None if secret_in_id(given) else given)


class Server(MCPServer):
    """The SDK's server; a call's mistakes (an unknown or missing argument, a value of the
    wrong type) answer one line, not pydantic's report."""

    parameters: dict[str, dict[str, bool]]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        arguments, session = mcp_search.call_session(arguments, call_meta(context))
        problem = arguments_error(name, self.parameters.get(name, {}), arguments)
        if name in self.parameters and problem:
            raise ToolError(problem)
        mcp_search.CALL_SESSION.set(session)
        CALL_CLIENT.set(call_client(context))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            first = exc.__cause__.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ToolError(f"{name}: argument {where!r}: {first['msg']}") from None


def stored_in(ctx: Context, session_id: str | None) -> str | None:
    """The id a memory stored from ``session_id`` names it by: the keyed id the store
    keeps a forgotten session under when it is resumed (``hooks.kept_as``), so the id
    forgotten is not written again; None for an id holding a secret or private text (a
    call's ``memctl_session`` is the model's to write, and would be kept as it is)."""
    if not session_id or secret_in_id(session_id):
        return None
    from memctl.integrations.hooks import kept_as

    return str(kept_as(ctx, session_id))


class Door:
    """What every tool shares: the server it is registered on, the store's context, and
    one call at a time on the store's connection (not for two threads at once)."""

    def __init__(self, ctx: Context, lock: threading.Lock | None = None) -> None:
        self.ctx = ctx
        self.server = Server(
            name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
        )
        self.server.parameters = {}
        self._one_at_a_time = lock or threading.Lock()  # shared with mcp_front's searches

    def tool(self, fn: F) -> F:
        """Register ``fn`` as a tool, its docstring (dedented) its description."""
        self.server.add_tool(limited(fn), description=inspect.cleandoc(fn.__doc__ or ""))
        self.server.parameters[fn.__name__] = {
            name: parameter.default is inspect.Parameter.empty
            for name, parameter in inspect.signature(fn).parameters.items()
        }
        return fn

    def call(self, work: Callable[[], T]) -> T:
        """``work`` alone on the store; a memctl error becomes the tool's one-line error."""
        try:
            with self._one_at_a_time:
                mcp_search.purge_if_forgotten(self.ctx)  # a forget by another process
                try:
                    return work()
                finally:
                    mcp_search.purge_if_forgotten(self.ctx)  # this call's own
        except MemctlError as exc:  # it may quote a value given: the host keeps its words
            said = " ".join(exc.worded(tool_word).split())
            raise ToolError(scrub(said)[0]) from exc


def _recall_tools(door: Door) -> None:
    """Reading: search, get, list, the profile and the figures."""
    ctx = door.ctx
    call = door.call
    tool = door.tool

    @tool
    def memory_search(
        query: str,
        limit: int | None = None,
        scope: str | None = None,
        all_scopes: bool = False,
        mode: Literal["smart", "focused", "deep", "working"] | None = None,
        budget: int | None = None,
        format: Literal["json", "context"] = "json",
    ) -> dict[str, Any]:
        """Search long-term memory: the memories and the verbatim session messages, one
        ranking. Call this before answering questions about this project's history,
        conventions or decisions, or the user's preferences, and when a task looks like
        earlier work. Returns the best results, most relevant first (id, content, category,
        score, match...), or with format "context" one text block of the clear matches.
        Each result's "match" is "clear" (its own evidence shows it is about the question)
        or "possible" (the best of the rest: it may answer a question asked in other words,
        or be unrelated; use one only if it answers the question, else say nothing is
        stored). "match_reason" says why in a word; "superseded" or "contradicted": no
        longer true, "replaced_by" naming the memory that says what holds now. No clear
        result means nothing clearly relevant is stored. A result with
        is_message true is a session message (id SESSION#N; session_expand opens it).
        A result standing for session messages (a digest, a fact) may carry "from": the
        message among them closest to the question ("message", SESSION#N, which
        session_expand opens) and its sentences that may answer ("text", up to 240
        characters); a user's ask, or a step announced, gives way to the reply saying
        what came of it (a row may carry "from" too). scope: "project" (default: this
        project and global; every project from a directory outside any project that holds
        nothing), "global" or a scope name."""
        return call(
            lambda: mcp_search.memory_search(
                ctx, query, limit, scope, all_scopes, mode, budget, format
            )
        )

    @tool
    def memory_get(id: str) -> dict[str, Any]:
        """One memory by id (or a unique prefix of at least 4 characters), with its
        relations to other memories and its origin (the session and messages it was
        distilled from; session_expand opens them)."""
        return call(lambda: memory_api.get(ctx, id)).to_dict()

    @tool
    def memory_list(
        scope: str | None = None,
        category: str | None = None,
        kind: str | None = None,
        state: str | None = None,
        tag: str | None = None,
        since: str | None = None,
        limit: int = 20,
        sort: Literal["created", "updated", "importance", "accessed", "oldest"] = "created",
    ) -> dict[str, Any]:
        """List memories, newest first, filtered (no search): to review what is stored.
        since: an ISO date or a span like 7d. Use memory_search to find by meaning."""
        filters = memory_api.Filters(
            scope,
            (kind,) if kind else (),
            (category,) if category else (),
            (state,) if state else (),
            tag,
            since,
        )
        request = memory_api.ListRequest(filters, limit, sort)
        return {
            "memories": [brief(m) for m in call(lambda: memory_api.list_memories(ctx, request))]
        }

    @tool
    def memory_profile(scope: str | None = None) -> dict[str, Any]:
        """What is known about the user: the written profile (role, stack, conventions,
        current focus, open problems, last decisions; each line with the memory ids it
        rests on, under `written`), then profile facts and preferences, most important
        first. Read it when a task depends on how the user likes things done."""
        request = recall_api.ProfileRequest(scope=scope)
        found = call(lambda: recall_api.profile(ctx, request)).to_dict()
        found.pop("elsewhere")  # other projects' names: not for a session in this one
        return found

    @tool
    def memory_stats() -> dict[str, Any]:
        """How much is stored: memories by kind, category, state and scope; sessions;
        queued ingest jobs; the current project's scope."""
        from dataclasses import asdict

        return asdict(call(lambda: memory_api.status(ctx)))


def _curation_tools(door: Door) -> None:
    """Writing: store, update, forget, link."""
    ctx = door.ctx
    call = door.call
    tool = door.tool

    @tool
    def memory_store(
        text: str,
        tags: list[str] | None = None,
        category: Literal["profile", "preferences", "entities", "events", "cases", "patterns"]
        | None = None,
        importance: float | None = None,
        scope: str | None = None,
        questions: list[str] | None = None,
    ) -> dict[str, Any]:
        """Store one durable fact in long-term memory, exactly as given: a decision and its
        reason, a convention, a preference the user stated, the fix to a hard problem.
        One fact per call, a full sentence that makes sense on its own later. Never store
        secrets or text marked <private>. Please also give `questions`: 2-3 short questions
        a person might ask later that this fact answers, in other words than the fact
        ("how big should a PR be?" for "Sam prefers small pull requests"); they make it
        findable and are never shown. Returns the memory (with its id); "existing" is true
        when the same text was already stored and no copy was made; "questions" says which
        were kept and which were dropped as not about the fact."""
        asking, client = mcp_search.asking(ctx), CALL_CLIENT.get()

        def store() -> memory_api.Remembered:
            request = memory_api.RememberRequest(
                text,
                category,
                tuple(tags or ()),
                importance,
                scope,
                source=ASSISTANT_SOURCE,
                questions=tuple(questions or ()),
                session_id=stored_in(ctx, asking),
                agent_id=client,
            )
            return memory_api.remember(ctx, request)

        stored = call(store)
        return {
            **brief(stored.memory),
            "existing": stored.existing,
            "questions": stored.questions.to_dict(),
        }

    @tool
    def memory_update(
        id: str,
        text: str | None = None,
        tags: list[str] | None = None,
        importance: float | None = None,
        category: str | None = None,
    ) -> dict[str, Any]:
        """Correct a memory that is wrong or outdated: new text, tags, importance (0-1) or
        category. Prefer this to storing a contradicting memory. Returns the memory."""
        request = memory_api.UpdateRequest(
            id, text, None if tags is None else tuple(tags), importance, category
        )
        return brief(call(lambda: memory_api.update(ctx, request)))

    @tool
    def memory_forget(id: str, noise: bool = False) -> dict[str, Any]:
        """Archive a memory that should no longer be recalled (nothing is deleted).
        noise=true when it was never worth keeping: ingest learns to drop facts like it."""

        def archive() -> Memory:
            if memory_api.is_message_id(id):  # for good, everywhere: the user's call alone
                raise UsageError(
                    f"{id} is a session message: only the user forgets one "
                    f"(`memctl sessions forget {id}`); nothing was changed"
                )
            return memory_api.forget(ctx, id, noise)

        return brief(call(archive))

    @tool
    def memory_link(
        source: str,
        target: str,
        type: Literal[
            "supports", "contradicts", "contextualizes", "depends_on", "related"
        ] = "related",
        weight: float = 1.0,
    ) -> dict[str, Any]:
        """Relate two memories (ids), so recalling one brings up the other."""
        request = memory_api.LinkRequest(source, target, type, weight)
        return call(lambda: memory_api.link(ctx, request)).to_dict()


def _capture_tools(door: Door) -> None:
    """Capture: a transcript in, and the distillation tasks a host model answers."""
    ctx = door.ctx
    call = door.call
    tool = door.tool

    @tool
    def memory_ingest(
        transcript_path: str | None = None,
        text: str | None = None,
        client: Literal["claude-code", "opencode", "codex", "generic"] | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Capture a whole conversation (a transcript file path, or the text itself as
        `user: ...` / `assistant: ...` lines); memories are distilled from it in the
        background. Sessions are captured by hooks when they end: call this only for a
        conversation that would otherwise be lost. Returns what was stored."""
        import io

        if (transcript_path is None) == (text is None):
            raise ToolError("give either transcript_path or text")
        if transcript_path is not None:
            transcript_path = allowed_transcript(ctx.settings, transcript_path)
        request = ingest_api.IngestRequest(
            transcript=transcript_path,
            stdin=None if text is None else io.BytesIO(text.encode()),
            client=client,
            session_id=session_id,
        )
        result = call(lambda: ingest_api.ingest(ctx, request))
        return result.report.to_dict()

    @tool
    def memory_distill_tasks(limit: int = 3) -> dict[str, Any]:
        """Captured sessions waiting to be distilled into memories, for you to do the
        extraction (memctl has no local LLM and `ingest.host_distil` is on). Returns the
        instructions and the JSON schema of an answer once, and the tasks: each is part
        of one session (its project, title, and numbered lines: what the user and the
        assistant said, and each command, file change or sub-agent report with its
        outcome), with session_id, through_seq and stamp to give back; up to `limit` tasks, a
        session's consecutive tasks together. Answer each task with memory_distill_apply,
        a session's tasks in order. An empty list means nothing is waiting."""
        request = distil_api.PendingRequest(limit=limit)
        result = call(lambda: distil_api.pending(ctx, request))
        return {
            "instructions": result.instructions,
            "schema": result.schema,
            "tasks": [batch.to_dict() for batch in result.batches],
        }

    @tool
    def memory_distill_apply(
        session_id: str, through_seq: int, stamp: str, answer: dict[str, Any]
    ) -> dict[str, Any]:
        """Apply your extraction for a task of memory_distill_tasks: its session_id,
        through_seq and stamp, and your answer {"facts": [...]}. The facts go through memctl's usual
        noise filter, admission and reconciliation (duplicates merge, updates supersede);
        returns the run (its id, decisions and counts; `memctl undo RUN_ID` reverts it).
        An answer with an unusable fact is an error naming each problem, and nothing of
        it is written: fix it and send it again. A task whose messages changed since it
        was given (forgotten or redacted) is refused: ask memory_distill_tasks again."""
        request = distil_api.DistilRequest(session_id, through_seq, answer, stamp)
        record = call(lambda: distil_api.distil(ctx, request)).run
        return {
            "run_id": record.id,
            "status": record.status,
            "facts": record.facts,
            "decisions": record.decisions,
            "notes": record.notes,
        }

    @tool
    def memory_profile_task(scope: str | None = None) -> dict[str, Any]:
        """Write the user's profile yourself: returns the instructions, the JSON schema of
        an answer and the notes memctl's rules found for the scope (null: this project;
        "global": the user's across projects), each with the ids of the memories it rests
        on, and who wrote the profile it has now. Answer with memory_profile_write."""
        request = distil_api.ProfileTaskRequest(scope=scope)
        return call(lambda: distil_api.profile_task(ctx, request)).to_dict()

    @tool
    def memory_profile_write(answer: dict[str, Any], scope: str | None = None) -> dict[str, Any]:
        """Replace a scope's written profile with your lines (answer {"lines": [{"section",
        "text", "sources": [memory ids]}]}, as memory_profile_task describes). A line citing
        no active memory of that scope is an error naming each problem, and nothing is
        written. Returns the lines kept (at most 5 a section)."""
        request = distil_api.ProfileWriteRequest(answer=answer, scope=scope)
        lines = call(lambda: distil_api.write_profile(ctx, request))
        return {"lines": [line.to_dict() for line in lines]}


def _session_tools(door: Door) -> None:
    """The verbatim sessions: search and expand."""
    ctx = door.ctx
    call = door.call
    tool = door.tool

    @tool
    def session_search(
        query: str,
        limit: int = 10,
        all_scopes: bool = False,
        client: str | None = None,
        since: str | None = None,
        role: Literal["user", "assistant", "tool", "system"] | None = None,
    ) -> dict[str, Any]:
        """Search the verbatim transcripts of earlier sessions (every message is stored).
        Use when you need the exact command, error or wording from an earlier session,
        which distilled memories do not keep. Words only (no operators); messages with
        every word come first. Returns matches, each with its ref (SESSION#N), the matching
        lines and the messages around it; open one with session_expand. since: an ISO date
        or a span like 7d. Searches this project unless all_scopes."""
        return call(
            lambda: mcp_search.session_search(ctx, query, limit, all_scopes, client, since, role)
        )

    @tool
    def session_expand(ref: str, context: int = 2) -> dict[str, Any]:
        """The raw messages of an earlier session behind a reference, with `context` turns
        either side: a ref from session_search (SESSION#N), a range SESSION#A-B, or a
        memory id (a fact or a session digest: the messages it was distilled from, every
        session's when it was merged from several). Use when you need the exact command,
        error or wording behind a memory. Returns the passages as readable text (the
        asked-for messages marked >); session_id, first, last, total are the first's."""
        passages = call(lambda: sessions_api.expand(ctx, ref, context))
        spans = [
            {"session_id": p.session.id, "first": p.first, "last": p.last, "total": p.total}
            for p in passages
        ]
        return {**spans[0], "passages": spans, "text": "\n\n".join(p.text() for p in passages)}


def _resources(door: Door) -> None:
    """The resources: the profile and the session-start block."""
    ctx = door.ctx
    call = door.call
    server = door.server

    @server.resource("memctl://profile", mime_type="text/plain")
    def profile_resource() -> str:
        """The user's profile and preferences, as text."""
        return call(lambda: recall_api.profile(ctx, recall_api.ProfileRequest()).text())

    @server.resource("memctl://context", mime_type="text/plain")
    def context_resource() -> str:
        """The block a session starts with: memories for this project."""
        # the server's own connection, not a second Context opened for every read
        request = recall_api.SessionStartRequest()
        return call(lambda: recall_api.layered(ctx, request).text()) or "(no memories yet)"


def build(ctx: Context, lock: threading.Lock | None = None) -> MCPServer:
    """The server, with its tools and resources bound to ``ctx`` (``lock``: held by
    every call on it)."""
    door = Door(ctx, lock)
    for add in (_recall_tools, _curation_tools, _capture_tools, _session_tools, _resources):
        add(door)
    return door.server


def serve(ctx: Context, wire: Any = None, lock: threading.Lock | None = None) -> None:
    """Serve over stdio until the client closes the connection; with ``wire`` (the
    front of ``mcp_front``: text lines in and out), over it instead."""
    server = build(ctx, lock)
    if wire is None:
        server.run("stdio")
        return

    async def run() -> None:
        async with stdio_server(anyio.wrap_file(wire), anyio.wrap_file(wire)) as (read, write):
            # MCPServer.run_stdio_async, over the front's streams
            lowlevel = server._lowlevel_server
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(run)
