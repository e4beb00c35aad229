"""The recall pipeline: a list of stages run in order over the candidate list.

    candidates -> fuse -> provenance -> stale -> copies -> time -> intent -> speakers ->
    scope -> cap -> neighbours -> outcome -> graph -> rerank -> bm25_floor -> decay ->
    importance -> length -> spread -> status -> cutoff -> sessions -> mmr -> pack

The candidates the relevance gate labels clear (fuse), and those with a path
from one (the graph's, a reply to a clear question: not a turn only next to one, nor
a memory spread reached along a relation, ``run.label_added``), go through every
stage: they are the clear matches. The
others are possible matches: the best of them by the same fused
score, rescored by the stages that weigh a memory on its own (POSSIBLE_STAGES),
follow the clear ones (``recall.possible``); the best of them takes a row among
them when it is a message of a session with more than CLEAR_TURNS_FIRST clear
messages (``with_room``); among the first rows, one session's possible messages take the
rows they hold by the query's rarer words (``rarer_words_first``). An unrelated query gets
possible matches at most.

``recall()`` is the one entry point (the CLI, hooks and benchmarks call it);
its result carries the trace that ``--explain`` and ``--why-not`` read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.errors import MemctlError
from memctl.model import Memory, Role, State, format_time, now_iso, parse_time
from memctl.retrieve.answering import (
    Answering,
    Parts,
    announces,
    answering,
    past_shown,
    said_already,
)
from memctl.retrieve.params import Params, recall_params
from memctl.retrieve.query import Analysed, analyse
from memctl.retrieve.run import (
    DROPPED,
    RESCORED,
    Candidate,
    Reason,
    Run,
    Stage,
    Step,
    by_score,
    tie_key,
)
from memctl.retrieve.stages.bm25_floor import bm25_floor
from memctl.retrieve.stages.candidates import candidates
from memctl.retrieve.stages.cap import cap
from memctl.retrieve.stages.copies import copies, folded_ids
from memctl.retrieve.stages.cutoff import cutoff
from memctl.retrieve.stages.decay import decay
from memctl.retrieve.stages.fuse import (
    TOOL_NOTES_FACTOR,
    coverage,
    far_message,
    fuse,
    relevance_strength,
    strength_of,
    strength_parts,
    strength_why,
    unnamed,
)
from memctl.retrieve.stages.graph import graph, is_synthetic
from memctl.retrieve.stages.importance import importance
from memctl.retrieve.stages.intent import STAGE as INTENT
from memctl.retrieve.stages.intent import intent
from memctl.retrieve.stages.length import length
from memctl.retrieve.stages.mmr import mmr
from memctl.retrieve.stages.neighbours import neighbours
from memctl.retrieve.stages.outcome import outcome
from memctl.retrieve.stages.pack import item_tokens, pack
from memctl.retrieve.stages.provenance import provenance
from memctl.retrieve.stages.rerank import rerank
from memctl.retrieve.stages.scope import scope
from memctl.retrieve.stages.sessions_cover import sessions_cover
from memctl.retrieve.stages.speakers import STAGE as SPEAKERS
from memctl.retrieve.stages.speakers import speakers
from memctl.retrieve.stages.spread import describe, spread
from memctl.retrieve.stages.stale import stale
from memctl.retrieve.stages.status import status
from memctl.retrieve.stages.time_boost import time_boost
from memctl.retrieve.turns import Shown, turns
from memctl.retrieve.when import since_latest
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import is_message_id, message_role
from memctl.store.sessions import get_session, source_times
from memctl.store.touches import APPLY_BYTES, apply_unsynced, spool
from memctl.store.transcripts import SessionFilter, latest_session_start

# Recall never returns archived or deleted memories; superseded ones reach the status
# stage, which leaves them out unless --history (so --why-not can say so).
RECALLABLE_STATES = (State.ACTIVE, State.SUPERSEDED, State.CONTRADICTED)


def stages_for(params: Params) -> list[Stage]:
    """The pipeline for these constants: rerank and its BM25 floor only when reranking."""
    reranking: list[Stage] = [rerank, bm25_floor] if params.rerank else []
    return [
        candidates,
        fuse,
        provenance,
        stale,
        copies,
        time_boost,
        intent,
        speakers,
        scope,
        cap,
        neighbours,
        outcome,
        graph,
        *reranking,
        decay,
        importance,
        length,
        spread,
        status,
        cutoff,
        sessions_cover,
        mmr,
        pack,
    ]


# The stages a possible match goes through after fuse: those that weigh one candidate on its
# own. The others cut or add by rank among the clear ones (cap, neighbours, spread, cutoff,
# mmr, pack), or ask a model (rerank).
POSSIBLE_STAGES: list[Stage] = [
    time_boost,
    intent,
    speakers,
    decay,
    importance,
    length,
    scope,
    status,
]

CLEAR, POSSIBLE = "clear", "possible"


@dataclass
class Recalled:
    """One recalled memory (or raw session message), its score and how it got there."""

    memory: Memory
    score: float
    ranks: dict[str, int]
    raw: dict[str, float]
    factors: dict[str, float]
    via: tuple[str, ...] = ()
    is_message: bool = False
    source_time: str | None = None  # when its source message was said, if known
    clear: bool = True  # the relevance gate's label; False: a possible match
    match_why: str = ""  # why it is clear or possible (the gate's evidence)
    match_reason: str = ""  # the same in one word (run.Reason)
    replaced_by: str | None = None  # what replaced or contradicts what it says
    # what provenance folded into it: session messages, and the memory distilled from a
    # message that states the query's words better than it does
    members: tuple[str, ...] = ()
    answering: Answering | None = None  # its member message's part that answers (answering.py)

    @property
    def match(self) -> str:
        return CLEAR if self.clear else POSSIBLE

    @property
    def no_longer_true(self) -> bool:
        """Superseded or contradicted: what it says, or the fact it was distilled into."""
        return self.match_reason in (Reason.SUPERSEDED, Reason.CONTRADICTED)

    @property
    def dated_at(self) -> str:
        """The time its age is counted from: its source's, else its creation's."""
        return self.source_time or self.memory.created_at

    @classmethod
    def of(cls, candidate: Candidate) -> Recalled:
        return cls(
            candidate.memory,
            candidate.score,
            candidate.ranks,
            candidate.raw,
            candidate.factors,
            candidate.via,
            candidate.is_message,
            clear=candidate.clear,
            match_why=candidate.match_why,
            match_reason=candidate.match_reason,
            replaced_by=candidate.replaced_by,
            members=candidate.members,
        )

    @property
    def graph_path(self) -> str | None:
        """The relations spread followed to it (a graph path's result names its sources
        in ``via`` and says its path in its text)."""
        return describe(self.via) if self.via and not is_synthetic(self.memory) else None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.memory.to_dict(),
            "score": self.score,
            "ranks": self.ranks,
            "raw": self.raw,
            "factors": self.factors,
            "graph_path": self.graph_path,
            "from_session_messages": self.is_message,
            "source_time": self.source_time,
            "match": self.match,
            "match_reason": self.match_reason,
            "match_why": self.match_why,
            "replaced_by": self.replaced_by,
            "messages": [m for m in self.members if is_message_id(m)],
            "distilled": [m for m in self.members if not is_message_id(m)],
            "from": self.answering.to_dict() if self.answering else None,
        }


@dataclass
class RecallResult:
    """What one recall found, the warnings to show with it, and its run (for --explain)."""

    query: str
    results: list[Recalled]  # the clear matches, then the possible ones (``ranked``)
    warnings: list[str] = field(default_factory=list)
    run: Run | None = None

    @property
    def clear(self) -> list[Recalled]:
        """The clear matches alone: what a context block is made of."""
        return [r for r in self.results if r.clear]

    def steps_of(self, memory_id: str) -> list[Step]:
        return self.run.steps_of(memory_id) if self.run else []


def home_scope_of(ctx: Context, scopes: tuple[str, ...] | None) -> str | None:
    """The scope that counts as "this project" for the scope stage."""
    project = ctx.settings.project_scope
    if scopes is None or project in scopes:
        return project
    return next((s for s in scopes if s != GLOBAL_SCOPE), None)


def start(
    ctx: Context,
    text: str,
    limit: int | None = None,
    scopes: tuple[str, ...] | None = None,
    now: datetime | None = None,
    mode: str | None = None,
    depth: int | None = None,
    asking: str | None = None,
) -> Run:
    """A run ready for the stages: the query analysed against ``now`` (default: the clock),
    searching ``depth`` rows (default ``recall.depth``: ``Run.depth``), asked from the
    session ``asking`` (its id, when the client names it)."""
    params = recall_params(ctx.settings, mode)
    moment = now or datetime.now(UTC)
    # memories created up to and including "now"; timestamps have millisecond resolution
    as_of = format_time(moment + timedelta(milliseconds=1)) if now is not None else None
    return Run(
        ctx=ctx,
        query=with_latest(ctx, analyse(text, moment), scopes, moment, asking),
        params=params,
        limit=limit or params.limit,
        now=moment,
        depth=depth or params.depth,
        where=MemoryFilter(scopes=scopes, states=RECALLABLE_STATES, before=as_of),
        home_scope=home_scope_of(ctx, scopes),
    )


def with_latest(
    ctx: Context,
    query: Analysed,
    scopes: tuple[str, ...] | None,
    now: datetime,
    asking: str | None = None,
) -> Analysed:
    """``query`` with the window its words asking for the latest work name: from the day
    the latest session of ``scopes`` began before ``now`` (no session: no window). Asked
    from a session memctl holds already (``asking``: the clients capture a session at each
    turn's end), "last time" is the one before it, and the window ends where it began:
    the question's own session is not what it asks for."""
    if query.latest is None:
        return query
    until, end = now + timedelta(milliseconds=1), now + timedelta(seconds=1)
    current = get_session(ctx.db, asking) if asking else None
    if current is not None:
        until = end = min(end, parse_time(current.started_at or current.created_at))
    latest = SessionFilter(scopes=scopes, until=format_time(until))
    started = latest_session_start(ctx.db, latest)
    if started is None:
        return query
    return replace(query, window=since_latest(parse_time(started), end, query.latest))


def run_stages(run: Run, stages: list[Stage]) -> list[Candidate]:
    return run_stages_over(run, stages, [])


def recall(
    ctx: Context,
    text: str,
    limit: int | None = None,
    scopes: tuple[str, ...] | None = None,
    *,
    now: datetime | None = None,
    mode: str | None = None,
    touch: bool = True,
    history: bool = False,
    sessions: bool = False,
    budget: int | None = None,
    possible: int | None = None,
    named: dict[str, str] | None = None,
    asking: str | None = None,
    answers: Parts | None = None,
    deeper: bool = True,
    calls: Shown | None = None,
) -> RecallResult:
    """The best ``limit`` memories for ``text``: the clear matches, then possible ones in the
    rows they leave, at most ``possible`` (default ``recall.possible``; one may take a
    crowded session's row among the clear ones: ``ranked``; a session's possible messages
    among the first ``Run.depth`` rows, in the rows they hold, by the query's rarer words:
    ``rarer_words_first``).

    ``scopes``: None searches every scope. ``now`` (``--as-of``) moves the clock
    back: memories created after it do not exist yet. ``touch`` records the access
    on each clear match (count, time, strength, an event) in one transaction: a possible
    one was offered, not confirmed. ``named``: the projects the question names (scope ->
    name), weighed as the current project's. ``asking``: the session the question comes
    from (``with_latest``). ``answers``: each row standing for messages names its member's
    part that answers (``answering.py``: only for rows read); ``calls``: a message row names
    its turn's call that answers (``turns.py``), likewise. ``deeper``: a limit the search
    cannot fill is filled from a deeper one (``deeper_rows``; not with a ``budget``, nor for
    a block fitted to one afterwards: it is not a page).
    """
    run = start(ctx, text, limit, scopes, now, mode, asking=asking)
    run.history, run.sessions, run.budget = history, sessions, budget
    run.named_projects = named or {}
    if run.params.translate and not run.query.english:
        run.translation = translation_of(run)
    wanted = run.params.possible if possible is None else possible
    asked = run.limit
    if budget is None:  # the depth's rows are ordered whatever the limit, then cut
        run.limit = max(asked, run.depth)
    rows = ranked(run, wanted)
    if len(rows) < run.limit and not run.searched_out and budget is None and deeper:
        rows += deeper_rows(run, rows, wanted)
    if budget is None:
        rows = [*rarer_words_first(run, rows[: run.depth]), *rows[run.depth :]]
        for rank, candidate in enumerate(rows[asked:], start=asked + 1):
            run.record(MOVED, candidate, DROPPED, why=f"rank {rank} beyond the limit of {asked}")
        rows, run.limit = rows[:asked], asked
    if touch:
        touch_results(run, [Recalled.of(c) for c in rows if c.clear])
    results = [Recalled.of(c) for c in rows]
    times = source_times(ctx.db, [r.memory for r in results if not r.is_message])
    members = {
        r.memory.id: [m for m in r.members if is_message_id(m)] for r in results if not r.is_message
    }
    # a user's message row, and an announcement's, stands for the reply it had
    # (answering.answering_member): that reply says more than a call of its turn
    members |= {r.memory.id: [r.memory.id] for r in results if asks_or_announces(r.memory)}
    texts = {r.memory.id: r.memory.content for r in results}
    answered = turns(run, [r.memory for r in results], calls) if calls else {}
    answered |= answering(run, members, answers, texts) if answers else {}
    above: list[str] = []  # what the rows above show: their text, their ``from``
    for item in results:
        item.source_time = times.get(item.memory.id)
        found = answered.get(item.memory.id)
        # a fact that is its message's sentence, a digest quoting it, say it already: not twice
        if found is not None and not said_already(found.text, item.memory.content):
            # nor what a row above shows: the higher-ranked row keeps it
            item.answering = past_shown(ctx.db, found, above)
        above += [item.memory.content, *([item.answering.text] if item.answering else [])]
    return RecallResult(query=text, results=results, warnings=run.notes, run=run)


def asks_or_announces(memory: Memory) -> bool:
    """Whether a row is a user's message or an assistant's that announces its next step
    (``answering.announces``): each stands for the reply it had (``recall``)."""
    role = message_role(memory)
    return role == Role.USER or announces(role, memory.content, row=True)


def ranked(run: Run, wanted: int) -> list[Candidate]:
    """The pipeline's rows for ``run``: its clear matches, then at most ``wanted`` possible
    ones; but the best possible match, when it is a message of a session with more than
    ``CLEAR_TURNS_FIRST`` clear messages, takes the row of the first of them past that
    (``with_room``; not for a token budget: a context block holds clear matches only).
    Nothing before the last cut depends on the limit (``Run.depth``), so the first rows of
    a larger limit are a smaller one's rows."""
    found = run_stages(run, stages_for(run.params))
    clear = [c for c in found if c.clear]
    # the limit counts every row, clear ones first (`-n 2` shows two): possible matches
    # fill the rows the clear ones leave, at most ``wanted``
    room = min(wanted, max(0, run.limit - len(clear)))
    if run.budget is not None or wanted <= 0 or crowded_at(clear) is None:
        return [*clear, *possible_results(run, found, room)]
    # the best possible match is wanted even when the clear rows fill the limit
    offered = possible_results(run, found, max(room, 1))
    rows = with_room(clear, offered[0]) if offered else clear
    shown = {c.id for c in rows}
    rest = [c for c in offered if c.id not in shown]
    rows = rows[: max(run.limit, len(clear))]  # the limit counts the row it took
    return [*rows, *rest[: min(wanted, max(0, run.limit - len(rows)))]]


# A session's clear messages that go before its best message the gate did not label clear
# (reasoned: a session showing two of its turns is found, and its third turn adds less
# than the one that answers in other words; the answer is most often a short turn holding a
# fifth to two fifths of the question's words, under longer turns holding more of them:
# docs/benchmarks.md, "An answer said in one sentence of a long turn"). Measured 2 and 3,
# and over every clear row of the session (memories too): docs/benchmarks.md, "The
# answering turn beside its session's clear turns".
CLEAR_TURNS_FIRST = 2


def crowded_at(clear: list[Candidate]) -> int | None:
    """The row of the first session message that has ``CLEAR_TURNS_FIRST`` clear
    messages of its session above it, if any."""
    seen: dict[str, int] = {}
    for row, candidate in enumerate(clear):
        session = candidate.memory.session_id
        if candidate.is_message and session:
            seen[session] = seen.get(session, 0) + 1
            if seen[session] > CLEAR_TURNS_FIRST:
                return row
    return None


def with_room(clear: list[Candidate], best: Candidate) -> list[Candidate]:
    """``clear`` with the best possible match ``best`` in the row of its session's first
    clear message past ``CLEAR_TURNS_FIRST`` when ``best`` is a message of that session: it
    says what its session's long turns do not (``ranked``). Else ``clear`` as it is: a
    possible match of any other session, or a memory, waits for the rows the clear ones
    leave."""
    session = best.memory.session_id
    if not best.is_message or not session:
        return clear
    own = [c for c in clear if c.memory.session_id == session]
    at = crowded_at(own)
    if at is None:
        return clear
    row = clear.index(own[at])
    return [*clear[:row], best, *clear[row:]]


# How much deeper than ``recall.depth`` the search for the rows past all a plain recall
# ranks goes (reasoned: the same for every limit up to twice the default, so that `-n 5`
# and `-n 20` agree on those rows too; a larger limit searches as deep as it asks).
DEEPER = 2


def deeper_rows(run: Run, shown: list[Candidate], wanted: int) -> list[Candidate]:
    """Rows past all that ``run``'s search ranks, for a limit it cannot fill: a search
    DEEPER x ``recall.depth`` rows deep (or the limit's, when larger), its rows not shown
    yet, after those shown, whatever their label (a deeper search ranks otherwise; the first
    rows stay a smaller limit's). Their steps join ``run``'s trace, for --explain."""
    depth = max(run.limit, DEEPER * run.params.depth)
    deeper = replace(run, depth=depth, trace=[], notes=[], failed_legs=set(), shares={})
    deeper.possible, deeper.beside = [], []
    # nor a session message ``run`` folded into a memory it shows: that memory stands for it
    seen = {c.id for c in shown} | {m for c in shown for m in c.members} | folded_ids(run)
    more = [c for c in ranked(deeper, wanted) if c.id not in seen][: run.limit - len(shown)]
    filled = {c.id for c in more}
    run.trace += [step for step in deeper.trace if step.memory_id in filled]
    run.notes += [note for note in deeper.notes if note not in run.notes]
    return more


def possible_results(run: Run, kept: list[Candidate], wanted: int) -> list[Candidate]:
    """The best ``wanted`` possible matches: those the pipeline kept beside the clear ones,
    and those the gate set aside after POSSIBLE_STAGES (superseded ones left out, as for
    clear ones), ranked by ``rank_possible``."""
    if wanted <= 0:
        return []
    beside = [c for c in kept if not c.clear]
    shown = {c.id for c in kept}
    # those fuse set aside, and those it kept beside the clear ones that a later stage cut;
    # a few more than wanted, best by what rank_possible weighs: the stages may drop some
    # (not a session message provenance folded into a memory, nor a copy: it counts once)
    left_out = shown | folded_ids(run)
    pool = [c for c in (*run.possible, *run.beside) if c.id not in left_out]
    pool.sort(
        key=lambda c: (-(strength_of(run, c) + POSSIBLE_SCORE_WEIGHT * c.score), *tie_key(c.memory))
    )
    aside = pool[: run.depth * POSSIBLE_DEPTH]
    found = [*beside, *run_stages_over(run, POSSIBLE_STAGES, aside)]
    for candidate in found:
        rank_possible(run, candidate)
    # a row whose relevance and score come to nothing or less has no evidence at all (a
    # vector pointing away from the question's, no word in common): no possible match
    for candidate in found:
        if candidate.score <= 0:
            run.record(POSSIBLE, candidate, DROPPED, why=NO_EVIDENCE)
    found = [c for c in found if c.score > 0]
    best = few_tool_notes(distinct_texts(sessions_cover(run, by_score(found), clear=False)))
    best = best[:wanted]
    if run.budget is None:
        return best
    left = run.budget - sum(item_tokens(c, run.params) for c in kept if c.clear)
    fits = []
    for candidate in best:  # within what the clear matches left of the token budget
        left -= item_tokens(candidate, run.params)
        if left < 0:
            break
        fits.append(candidate)
    return fits


# The trace's name for the step that orders a session's possible messages (``rarer_words_first``).
MOVED = "rarer words"


def rarer_words_first(run: Run, rows: list[Candidate]) -> list[Candidate]:
    """``rows`` with each session's possible messages in the rows they hold, the one holding
    the most of the question's words by rarity (``coverage``) first, the first of equals; a
    message far in meaning (``far_message``) holds none: its words are in another sense;
    nor does a tool's output (``Candidate.only_tool_output``): a web search's results
    describe the topic in the question's words, the turn after says what came of it.
    One session's messages share its topic, so their closeness in meaning mostly says the
    topic, and the rarer words which one answers; the gate's clear ones hold most of the
    question's words (docs/benchmarks.md, "A session's possible messages by the question's
    rarer words"). The rows a session holds, and every other row, stay as they are. The
    caller orders the first ``Run.depth`` rows whatever the limit, then cuts: the first k
    rows of any limit stay the rows of limit k."""
    held: dict[str, list[int]] = {}
    for row, candidate in enumerate(rows):
        if candidate.is_message and candidate.memory.session_id and not candidate.clear:
            held.setdefault(candidate.memory.session_id, []).append(row)
    moved = list(rows)
    for places in held.values():
        shares = [0.0 if holds_none(run, rows[row]) else coverage(run, rows[row]) for row in places]
        order = sorted(range(len(places)), key=lambda i: -shares[i])
        for row, i in zip(places, order, strict=True):
            moved[row] = rows[places[i]]
            if places[i] != row:
                why = f"row {row + 1}: it holds {shares[i]:.2f} of the query's words by rarity"
                run.record(MOVED, rows[places[i]], RESCORED, why=why)
    return moved


def holds_none(run: Run, candidate: Candidate) -> bool:
    """Whether a possible message counts as holding none of the question's words for
    ``rarer_words_first``: one far in meaning, or a tool's output only (docs/benchmarks.md,
    "A tool's output holds none of the rarer words")."""
    return bool(far_message(run, candidate)) or candidate.only_tool_output


# Messages of tool notes only one session offers among the possible matches (reasoned:
# the files one session wrote, each matching the question by its name, filled all ten
# possible rows under that session's clear digest, which lists them).
TOOL_NOTES_PER_SESSION = 2


def few_tool_notes(ranked: list[Candidate]) -> list[Candidate]:
    """``ranked`` without each session's messages of tool notes only past its first
    ``TOOL_NOTES_PER_SESSION``."""
    seen: dict[str, int] = {}
    kept = []
    for candidate in ranked:
        if candidate.only_tool_notes:
            session = candidate.memory.session_id or ""
            seen[session] = seen.get(session, 0) + 1
            if seen[session] > TOOL_NOTES_PER_SESSION:
                continue
        kept.append(candidate)
    return kept


def distinct_texts(ranked: list[Candidate]) -> list[Candidate]:
    """The best of each text: a session that read the same file three times, or failed
    the same check twice, offers it once."""
    seen: set[str] = set()
    kept = []
    for candidate in ranked:
        text = " ".join(candidate.memory.content.split()).lower()
        if text not in seen:
            seen.add(text)
            kept.append(candidate)
    return kept


NO_EVIDENCE = "no evidence at all (relevance and score 0 or less): not offered"
# The weight of the pipeline's score in a possible match's rank, beside its own relevance
# strength (cosine + words): the pipeline's score alone ranks a shared word above the
# meaning (docs/benchmarks.md, "Clear and possible matches"); at 0.25 BM25's voice was too
# faint. The paraphrase check half at 1,000 memories gains from 0.28 to 0.5, a real
# question of fresh9's check half is lost from 0.35 (docs/benchmarks.md, "Possible
# matches weigh the pipeline's score a little more").
POSSIBLE_SCORE_WEIGHT = 0.3


def rank_possible(run: Run, candidate: Candidate) -> None:
    """A possible match's score becomes (its relevance strength (cosine + words, as the gate
    weighs it; x TOOL_NOTES_FACTOR for a message of tool notes, narration or a question only) +
    POSSIBLE_SCORE_WEIGHT x its pipeline score) x what the question asks for (the intent
    and speakers stages' factors, which the strength alone would not carry) x
    ``scope_other`` when it is of another project than the one the question names (the
    order service's own test command before five other projects' alike)."""
    parts = strength_parts(run, candidate)
    strength = relevance_strength(run, parts.cosine, parts.share)
    made_of = strength_why(run, parts)
    if candidate.says_nothing:  # as fuse weighs them
        strength *= TOOL_NOTES_FACTOR
        made_of = f"{made_of}, x {TOOL_NOTES_FACTOR:g} (tool notes, narration or a question only)"
    asked = candidate.factors.get(INTENT, 1.0) * candidate.factors.get(SPEAKERS, 1.0)
    away = run.params.scope_other if unnamed(run, candidate) else 1.0
    score = candidate.score
    candidate.score = (strength + POSSIBLE_SCORE_WEIGHT * score) * asked * away
    candidate.factors[POSSIBLE] = candidate.score
    why = (
        f"relevance {strength:.3f} ({made_of}) + {POSSIBLE_SCORE_WEIGHT} x its score {score:.3f}"
        + (f", x {asked:g} (what the question asks for)" if asked != 1.0 else "")
        + (f", x {away:g} (not the project the question names)" if away != 1.0 else "")
    )
    run.record(POSSIBLE, candidate, RESCORED, why=why)


# How many possible matches, per row of ``Run.depth``, the rescoring stages see: as many
# whatever the limit, so that a larger limit ranks its first possible rows alike.
POSSIBLE_DEPTH = 3


def run_stages_over(run: Run, stages: list[Stage], found: list[Candidate]) -> list[Candidate]:
    for stage in stages:
        found = stage(run, found)
    return found


def translation_of(run: Run) -> Analysed | None:
    """The query's English translation for the dual pass, or None (with a note) without one."""
    from memctl.llm.recall_judge import recall_judge

    judge = recall_judge(run.ctx.settings, run.params.llm_model)
    try:
        return analyse(judge.translate(run.query.text), run.now)
    except MemctlError as exc:
        run.notes.append(f"no English pass: {exc}")
        return None


def touch_results(run: Run, results: list[Recalled]) -> None:
    """Count the access of every recalled memory: spooled (``store.touches``: no write, no
    fsync for a question), applied at once when the spool has grown past its bound; a store
    that cannot take them only warns."""
    ids = [r.memory.id for r in results if not r.is_message and not is_synthetic(r.memory)]
    db = run.ctx.db
    if not ids or db.frozen:
        return
    try:
        if spool(db, ids, now_iso(), run.params.strength_step) >= APPLY_BYTES:
            apply_unsynced(db)
    except OSError as exc:
        run.notes.append(f"access not recorded: {exc.strerror}")
    except MemctlError as exc:
        run.notes.append(f"access not recorded: {exc}")
