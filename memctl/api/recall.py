"""Recall (the staged pipeline, its context block and ``why_not``) and the profile."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memctl.config import Settings
from memctl.config.scope import find_git_dir
from memctl.config.settings import asking_session as asking_session  # a door's session
from memctl.context import Context
from memctl.errors import UsageError
from memctl.memories.privacy import PRIVATE_ONLY as PRIVATE_ONLY  # the refusal's reason
from memctl.memories.privacy import asked_query as asked_query  # MCP's echo of a query
from memctl.memories.privacy import kept_path
from memctl.memories.provenance import forged, start_refusal, trusted_hosts, trusts
from memctl.memories.search_scopes import recall_scopes, resolve_scope
from memctl.memories.timeparse import parse_since
from memctl.model import parse_time
from memctl.retrieve.asking import searched_for
from memctl.retrieve.excerpt import excerpt as excerpt  # a long result's answering part
from memctl.retrieve.named_projects import projects_named_in
from memctl.retrieve.params import MODES
from memctl.retrieve.pipeline import Recalled as Recalled  # the CLI renders results
from memctl.retrieve.pipeline import RecallResult
from memctl.retrieve.pipeline import recall as run_recall
from memctl.store import scopes
from memctl.store.message_search import is_message_id as is_message_id  # a SESSION#N id
from memctl.store.message_search import message_speaker as message_speaker  # who said it
from memctl.store.projects import scope_known
from memctl.store.sync import foreign_hosts

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from memctl.retrieve.explain import WhyNot
    from memctl.retrieve.profile import Profile
    from memctl.retrieve.run import Step
    from memctl.retrieve.session_start import Layered


@dataclass(frozen=True)
class RecallRequest:
    """A question for ``recall``, with the options of `memctl recall`."""

    query: str
    limit: int | None = None  # default: recall.limit (by mode)
    scope: str | None = None  # None or 'project': the current project and global
    all_scopes: bool = False
    mode: str | None = None  # smart (default), focused, deep, working
    budget: int | None = None  # tokens; a context block defaults to recall.context_budget
    context: bool = False  # also render the block a session-start hook pastes
    as_of: str | None = None  # an ISO date or a span like 30d
    history: bool = False
    sessions: bool = True  # session messages ranked with the memories (--no-sessions: not)
    clear_only: bool = False  # no possible matches (--clear-only)
    touch: bool = True  # record the access on each clear match
    why_not: str | None = None  # a memory id: say which stage dropped it
    session: str | None = None  # the session asking ("last time": the one before it)


@dataclass(frozen=True)
class RecallResponse:
    """What ``recall`` answers: the results and what the request asked for besides."""

    result: RecallResult
    context: str | None = None  # the rendered block, when asked for
    why_not: WhyNot | None = None
    # Nothing found in the scopes searched: how many clear matches all_scopes would return
    # (else 0; not asked when possible matches were found here: it would cost a second recall)
    elsewhere: int = 0
    hosts: dict[str, str] = field(default_factory=dict)  # results another machine pushed
    # Of ``hosts``, the results whose machine is not in sync.trust: they follow the user's own
    following: frozenset[str] = frozenset()


# Said when a default search outside any project found nothing stored there.
WIDENED = "this directory is in no project and holds nothing: every project searched"


# What ``warm`` asks, so that the patterns compiled on first use are compiled before the
# resident process forks: a question asking for none of the intents (each is tried), one
# writing names (a possessive, a capitalised word, a compound), and one not in ASCII (the
# local model tokenizes it with ``tokenizers``, ASCII in plain Python: both are loaded).
WARM_QUESTIONS = (
    "a question asked once",
    "what runs the billing-service's Release?",
    "où tourne le déploiement ?",
)


def warm(settings: Settings) -> None:
    """Load what a recall loads before it reads the store: the embedder's model (and with
    it numpy and the tokenizers), and the patterns it compiles on first use. The resident
    recall process calls this once, so that each of its children starts with them (a
    child of its own pays each again: about 10 ms)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as recall: set before numpy loads
    import uuid  # noqa: F401 - names a vector index's new segment (vector_index imports it late)

    import memctl.ingest.calls_shown  # noqa: F401 - how a message row's turn call is shown
    import memctl.ingest.message_vectors  # noqa: F401 - how a row's answering part is cut
    import memctl.retrieve.density  # noqa: F401 - the possible matches' crowd discount
    import memctl.store.call_vectors  # noqa: F401 - a message row's turn call, looked up
    import memctl.store.message_bm25  # noqa: F401 - the messages' BM25, from their lengths
    import memctl.store.message_vectors  # noqa: F401 - the messages' vector leg
    import memctl.store.vector_query  # noqa: F401 - sqlite-vec, loaded by the vector leg
    from memctl.lazy_re import compile_loaded
    from memctl.memories.injected import all_injected, strip_injected
    from memctl.memories.privacy import ANCHORS, find_secrets
    from memctl.retrieve.named_projects import question_words, written_as_names
    from memctl.retrieve.query import analyse
    from memctl.retrieve.stages.intent import asks_for
    from memctl.retrieve.stages.sessions_cover import compares_events, counts_over_time

    for question in WARM_QUESTIONS:
        asks_for(question)
        question_words(question)
        written_as_names(question)
        analyse(question, datetime.now(UTC))  # the vocabulary, read once
        counts_over_time(question)
        compares_events(question)
        all_injected(question)  # every client's wrapper as one pattern (a message row)
    strip_injected("")  # each client's wrapper, compiled (a message opening with one)
    find_secrets(" ".join(ANCHORS))  # every secret's pattern, woken (a shown row is checked)
    Context(settings).embedder.embed(list(WARM_QUESTIONS))
    compile_loaded()  # the rules' patterns compile on first use: here, once, not per child


def check_choice(value: str, allowed: tuple[str, ...], option: str) -> str:
    if value not in allowed:
        raise UsageError(f"{option} takes one of {', '.join(allowed)}, not {value!r}", [option])
    return value


def _as_of(text: str | None) -> datetime | None:
    return parse_time(parse_since(text)) if text else None


def recall(ctx: Context, request: RecallRequest) -> RecallResponse:
    """The best memories for the query, through the staged pipeline."""
    # One query's matrices are small: BLAS threads cost more than they give, and far more
    # when other processes busy the cores. Set before numpy loads; the user's value wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if not request.query.strip():
        raise UsageError("recall needs a query: an empty one matches nothing")
    # from here on, the query without its private parts: no statement, vector, event, log
    # line or answer sees them
    request = replace(request, query=asked_query(request.query))
    if not request.query:
        raise UsageError(f"recall needs a query: {PRIVATE_ONLY}")
    if request.mode is not None:
        check_choice(request.mode, tuple(MODES), "mode")
    if request.budget is not None and request.budget < 1:
        raise UsageError(
            f"budget takes a number of tokens (1 or more), not {request.budget}", ["budget"]
        )
    moment = _as_of(request.as_of)
    target = request.why_not
    if target is not None:  # an unknown id fails before the search, not after
        from memctl.memories.operations import get

        target = get(ctx, target)[0].id
    budget = request.budget
    if request.context and budget is None and ctx.settings.recall_context_budget:
        budget = ctx.settings.recall_context_budget
    searched = recall_scopes(ctx, request.scope, request.all_scopes)
    named = _named_projects(ctx, request)
    widened = searched is not None and not named and _nothing_here(ctx, request)
    if widened:  # a directory in no project, holding nothing: the question is about one
        searched = None
    if searched is not None:  # the default scopes, and the projects the question names
        searched = (*searched, *(s for s in named if s not in searched))
    # how the slow path cut each message it embedded: a row's answering part is one of them
    from memctl.ingest.calls_shown import calls_shown
    from memctl.ingest.message_vectors import parts

    result = run_recall(
        ctx,
        searched_for(request.query),  # what it asks, without a log or key pasted beside it
        request.limit,
        searched,
        now=moment,
        mode=request.mode,
        touch=request.touch and target is None,
        history=request.history,
        sessions=request.sessions,
        budget=budget,
        possible=0 if request.clear_only or request.context else None,
        named=named,
        asking=request.session,
        answers=None if request.context else parts,  # a context block shows rows' own text
        calls=None if request.context else calls_shown,
    )
    if widened:
        result.warnings.append(WIDENED)
    hosts = foreign_hosts(ctx.db, [item.memory.id for item in result.results])
    following = _untrusted(hosts, ctx.settings.sync_trust, forged(ctx.db, hosts, ctx.settings.home))
    if following:  # an untrusted machine's memories never outrank the user's own of a label
        result.results.sort(key=lambda item: (not item.clear, item.memory.id in following))
    block = None
    if request.context and result.run is not None:
        from memctl.retrieve.context_block import render_context

        block = render_context(result.query, result.clear, result.run.now, hosts=hosts)
    report = None
    if target is not None:
        from memctl.retrieve.explain import why_not

        report = why_not(ctx, result, target)
    elsewhere = 0
    if not result.clear and searched is not None and target is None and not request.context:
        elsewhere = _found_elsewhere(ctx, request, moment, searched)
    return RecallResponse(result, block, report, elsewhere, hosts, following)


def host_fields(host: str | None, following: bool) -> dict[str, object]:
    """A result's ``host`` and ``trusted``, as recall's JSON and MCP ``memory_search``
    give them: ``trusted`` says why a synced result ranks where it does."""
    return {"host": host, "trusted": None if host is None else not following}


def _untrusted(hosts: dict[str, str], setting: str, unsigned: frozenset[str]) -> frozenset[str]:
    """The memory ids of ``hosts`` (memory id -> host) whose host ``sync.trust`` leaves out,
    or whose file that host's key did not sign (``unsigned``). A trusted host's memories
    rank among the user's own by their score: the user named that machine as theirs, as
    they do for it to open a session."""
    trust = trusted_hosts(setting)
    return unsigned | {m for m, host in hosts.items() if not trusts(trust, host)}


def explain(
    item: Recalled, steps: list[Step], labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Why ``item`` was recalled, stage by stage (``memctl.retrieve.explain``; loaded for
    --explain only, as the context block is for a block: a recall's table needs neither).
    With ``labels`` (``projects.project_labels``), each project is named as a person knows
    it: the scope stage's "another scope (path:6fec8fd004f623f2)" reads "another scope
    (~/shop)"; without, by its scope id, as the JSON answer keeps it for scripts."""
    from memctl.retrieve.explain import explain as explained

    found = explained(item, steps)
    named = {scope: label for scope, label in (labels or {}).items() if scope != label}
    for step in found["steps"] if named else ():
        for scope, label in named.items():
            step["why"] = step["why"].replace(f"({scope})", f"({label})")
    return found


def _nothing_here(ctx: Context, request: RecallRequest) -> bool:
    """Whether a search with no scope given is asked outside any project (no git work
    tree: a home directory, a scratch folder) where nothing is stored: its own scopes
    would answer an explicit question with nothing, however much the store holds. A
    project's directory stays the project's own, empty or not (a project's memories
    never reach another project's assistant), as do ``--scope project`` and a context
    block (the hooks)."""
    if request.context or request.scope is not None or find_git_dir(ctx.settings.cwd):
        return False
    return not scope_known(ctx.db, scopes.resolve(ctx.db, ctx.settings.project_scope))


def _named_projects(ctx: Context, request: RecallRequest) -> dict[str, str]:
    """The projects the question names (scope -> name), when the search is not narrowed to
    one by hand (``--scope``): what a context block pastes stays the current project's."""
    if request.context or request.scope not in (None, "", "project"):
        return {}
    return projects_named_in(ctx, request.query)


def _found_elsewhere(
    ctx: Context, request: RecallRequest, moment: datetime | None, searched: tuple[str, ...]
) -> int:
    """How many clear matches of other scopes than ``searched`` the same recall over every
    scope finds (none touched): a recall here with no clear match says where to look."""
    wider = run_recall(
        ctx,
        request.query,
        request.limit,
        None,
        now=moment,
        mode=request.mode,
        touch=False,
        history=request.history,
        asking=request.session,
    )
    return len([r for r in wider.clear if r.memory.scope not in searched])


def elsewhere_hint(elsewhere: int, how: str) -> str | None:
    """The line saying that other scopes have clear matches, when they do; ``how`` says
    how to search them (the CLI's flag, the MCP tool's argument)."""
    if not elsewhere:
        return None
    many = "clear match" if elsewhere == 1 else "clear matches"
    return f"{elsewhere} {many} in other scopes: {how} to see them"


@dataclass(frozen=True)
class ProfileRequest:
    """Whose profile ``profile`` gathers: the scopes, and how many memories a section."""

    scope: str | None = None
    all_scopes: bool = False
    limit: int = 20  # per section


def profile(ctx: Context, request: ProfileRequest) -> Profile:
    """The user's profile and preferences memories, most important first."""
    from memctl.retrieve.profile import build_profile  # not a recall's: ~2 ms

    scopes = recall_scopes(ctx, request.scope, request.all_scopes)
    return build_profile(ctx, scopes, request.limit)


# When recall.context_budget is 0 (no budget), a session still starts with a bounded block.
SESSION_START_TOKENS = 1500


@dataclass(frozen=True)
class SessionStartRequest:
    """The context a session starting here is given: its scope and budget."""

    scope: str | None = None  # None or 'project': the current project
    budget: int | None = None  # tokens in all; default: recall.context_budget
    compact: bool | None = None  # half L1, no L2; None: context.compact
    # the session starting, as its client names it: resumed (Claude Code --resume, Codex
    # resume), its own digest and facts are not given to it again as recent work
    session: str | None = None


def layered(ctx: Context, request: SessionStartRequest) -> Layered:
    """The layered context a new session here starts with, each item with why it is there
    and each memory left out with why (``memctl context --explain``). Nothing is touched."""
    from memctl.config.scope import project_root
    from memctl.memories.projects import labels
    from memctl.retrieve.session_start import layered_context

    if request.budget is not None and request.budget < 1:
        raise UsageError(
            f"budget takes a number of tokens (1 or more), not {request.budget}", ["budget"]
        )
    scope = resolve_scope(ctx, request.scope)
    budget = request.budget or ctx.settings.recall_context_budget or SESSION_START_TOKENS
    if request.scope in (None, "project"):
        # the folder's name goes to the assistant's model with the block: a folder named
        # after a token is shown as its session keeps it (``kept_path``)
        title = kept_path(project_root(ctx.settings.cwd).name)
    else:  # a project named by hand: as a person reads it, not its scope's hash
        title = labels(ctx, [scope])[scope]
    compact = ctx.settings.context_compact if request.compact is None else request.compact
    return layered_context(ctx, scope, title, budget, compact, session=request.session)


def session_start(ctx: Context, request: SessionStartRequest) -> str:
    """The block a new session starts with (identity files, profile, the project's key
    facts, its latest session digests and recent cases); '' when there is nothing."""
    return layered(ctx, request).text()


# Characters of what a prompt asks recalled for (``asking.asked``): a long question says no
# more in its tail.
PROMPT_CHARS = 2000
# Characters of a prompt read for what it asks: a question typed under a pasted log or file
# comes after its first PROMPT_CHARS (benchmarks real-prompts: "<log>\n\nWhy?"). asked()
# reads a real prompt of 66,000 characters, a terminal pasted whole, in ~10 ms of CPU.
ASKING_CHARS = 100_000


@dataclass(frozen=True)
class PromptRequest:
    """A prompt of a running session, for the memories its prompt hook adds."""

    prompt: str
    shown: frozenset[str] = frozenset()  # memories this session already has
    budget: int | None = None  # tokens; default: context.prompt_budget
    scope: str | None = None  # None or 'project': the current project (and global)
    now: datetime | None = None  # when the prompt is said (default: the clock)
    compact: bool | None = None  # at most 3 memories; None: context.compact
    session: str | None = None  # the session's id ("last time": the one before it)


@dataclass(frozen=True)
class PromptContext:
    """The block a prompt hook adds, and the memories in it."""

    block: str  # '' when nothing relevant and new was found
    ids: list[str]


def prompt_context(ctx: Context, request: PromptRequest) -> PromptContext:
    """L3: what memory knows about this prompt, when recall's relevance gate lets anything
    through and one memory weighs enough for a block nobody asked for (``prompt_items``),
    less what the session was already given, within the prompt budget (``within``: a long
    memory shortened to what is left; recall's own pack stage would drop it and every
    memory after it). Recalled for: what the prompt asks (``asking.asked``: each question,
    not the token, log or code pasted with it, nor its ``<private>`` parts)."""
    from memctl.memories.injected import strip_injected
    from memctl.memories.privacy import without_private
    from memctl.retrieve.asking import asked, cased
    from memctl.retrieve.context_block import (
        answers,
        prompt_items,
        render_context,
        said_once,
        within,
    )

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as recall: set before numpy loads
    # what a client wrapped into the prompt (an IDE's copy of a file) is nobody's question;
    # a private part is not asked: never searched for, never quoted back
    typed = without_private(strip_injected(request.prompt[:ASKING_CHARS]).text)
    questions = [q[:PROMPT_CHARS] for q in asked(typed)]
    if not questions[0] or not ctx.settings.db_path.exists():
        return PromptContext("", [])
    compact = ctx.settings.context_compact if request.compact is None else request.compact
    budget = request.budget or ctx.settings.context_prompt_budget
    found: dict[str, Recalled] = {}
    runs = []
    for question in questions:
        result = run_recall(  # recall's own limit: a smaller one would change its top results
            ctx,
            cased(ctx.db, question),
            None,
            recall_scopes(ctx, request.scope),
            now=request.now,
            touch=False,  # given unasked is not recalled, as at session start
            possible=0,  # a block nobody asked for holds clear matches only
            asking=request.session,
            deeper=False,  # the block is fitted to its budget below (``within``): as with one
            sessions=True,  # messages ranked and labelled as `memctl recall` does (prompt_items)
        )
        if result.run is not None:
            runs.append(result.run)
            for item in prompt_items(result, request.shown, compact, request.session):
                found.setdefault(item.memory.id, item)
    if not runs:
        return PromptContext("", [])
    run = runs[0]
    # each thing once (a message its digest in the block says) before the budget is spent,
    # and the ids are what the block shows: the session is not given them again
    weigh = answers(runs, " ".join(questions))
    fresh = within(said_once(list(found.values())), budget, compact, run.params, weigh)
    hosts = foreign_hosts(ctx.db, [r.memory.id for r in fresh])
    trust = trusted_hosts(ctx.settings.sync_trust)  # as at session start: unasked, so gated
    unsigned = forged(ctx.db, hosts, ctx.settings.home)
    fresh = [
        r
        for r in fresh
        if not start_refusal(r.memory, hosts.get(r.memory.id), trust, r.memory.id in unsigned)
    ]
    if not fresh:
        return PromptContext("", [])
    block = render_context(" ".join(questions), fresh, run.now, hosts=hosts)
    return PromptContext(block, [r.memory.id for r in fresh])
