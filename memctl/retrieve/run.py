"""What flows through the recall pipeline: candidates, the run they belong to, and the trace.

A stage is ``stage(run, candidates) -> candidates``. It may rescore, drop or
add candidates, and records what it did to each one in ``run.trace``: that
record is what ``--explain`` and ``--why-not`` show.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from memctl.lazy_re import lazy
from memctl.memories.narration import without_filler
from memctl.model import Memory, RelationType
from memctl.retrieve.echo import only_asks
from memctl.retrieve.params import Params
from memctl.retrieve.query import Analysed
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import message_role

if TYPE_CHECKING:
    from memctl.context import Context
    from memctl.store.vector_index import VectorIndex
    from memctl.store.vector_query import Scores

KEPT, RESCORED, DROPPED, ADDED = "kept", "rescored", "dropped", "added"
# The legs that search the questions stored with memories (store/questions.py)
QUESTION_LEGS = ("questions", "question_vector")
TOOL_NOTE = "[tool "  # how the parsers write a tool call or result (ingest/parse/common.py)
TOOL_OUTPUT = "[tool result"  # how they write a tool's output (ingest/parse/common.py)
SUBAGENT = "[subagent] "  # how they mark a sub-agent's message (ingest/parse/common.py)
SUBAGENT_REPORT = "[subagent report]"  # how they open its report (ingest/tools.py)
# How the neighbours stage names the path to a memory it added beside its seed in their
# session (``Candidate.via``): the reply to a question the seed asks, or the turn before or
# after it (``label_added`` labels them apart)
REPLIES_TO, NEXT_TO = "replies to", "next to"
# How the spread stage names a step of its path: the relation's type (``related``)
RELATIONS = frozenset(str(t) for t in RelationType)
CODE_SPAN = lazy(r"`[^`\n]+`")  # code an assistant names in Markdown: `tui.py`
# A client's own wrapper around a message it wrote into the conversation: a tag of two
# words or more, as clients name theirs (``<local-command-stdout>``, ``<system-reminder>``,
# ``<task-notification>``, ``<environment_context>``: memories/injected.py lists them); one a
# person pastes (``<div>``) is a single word
CLIENT_TAG = lazy(r"<([a-z]+[-_][a-z_-]+)\b[^>]*>", re.I)


class Reason(StrEnum):
    """Why a row is clear or possible, in one word for scripts (``match_reason`` in recall's
    JSON and MCP answers; ``match_why`` says it in words)."""

    EVIDENCE = "evidence"  # its own evidence shows it is about the query: clear
    SUPPORTS = "supports"  # supports another's relevance, shows none of its own
    NO_EVIDENCE = "no_evidence"  # no evidence of relevance of its own
    NOTHING_SHOWN = "nothing_shown"  # no candidate shows the query is about anything stored
    REACHED = "reached"  # the graph or a session neighbour reached it from a match
    STAND_IN = "stand_in"  # a session's digest standing for its messages close in meaning
    SUPERSEDED = "superseded"  # what it says was replaced by a later fact (``replaced_by``)
    CONTRADICTED = "contradicted"  # a stronger memory contradicts what it says


@dataclass
class Candidate:
    """A memory (or a raw session message) on its way through the stages."""

    memory: Memory
    ranks: dict[str, int] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    is_message: bool = False
    score: float = 0.0
    factors: dict[str, float] = field(default_factory=dict)
    via: tuple[str, ...] = ()
    pre_rerank: float | None = None
    lexical: float = 0.0  # the part of its fused score its words (BM25) earned, 0 to 1
    clear: bool = False  # the relevance gate's label: a clear match, else a possible one
    match_why: str = ""  # the evidence the label rests on, for --explain
    match_reason: str = ""  # the same in one word (``Reason``)
    # the memory that replaced or contradicts what it says (``Reason.SUPERSEDED``,
    # ``Reason.CONTRADICTED``)
    replaced_by: str | None = None
    members: tuple[str, ...] = ()  # session messages folded into it (provenance)
    centred: float | None = None  # its cosine after centring, which ranks it (centre.py)
    # its cosine less its neighbourhood's density, which ranks it as a possible match
    # (density.py)
    discounted: float | None = None
    # its cosine to its content alone, when its searched vector also names what it mentions
    # (store/meaning.py): what the relevance gate weighs
    own: float | None = None
    # a reply telling memctl's own answer back (memories/told_back.py; the candidates stage
    # reads its turn): second-hand, as a message of tool notes
    told_back: bool = False

    @property
    def id(self) -> str:
        return self.memory.id

    @functools.cached_property
    def only_tool_notes(self) -> bool:
        """A session message that only records tool calls and their results (``[tool Edit:
        path]``), or a command's or hook's output its client wrapped in its own tag
        (``client_wrapped``): what the agent and the tools did, which the session's digest
        and facts say better. A sub-agent's message is marked ``[subagent]`` first: its tool
        notes are notes too."""
        text = self.memory.content.lstrip().removeprefix(SUBAGENT)
        return self.is_message and (tool_notes_only(text) or client_wrapped(text))

    @functools.cached_property
    def only_tool_output(self) -> bool:
        """A session message that only holds what tools returned (every line a ``[tool
        result …]`` note, no call of its own): a search's results or a file read, material on
        the topic that repeats the question's words, not what the session made of it."""
        text = self.memory.content.lstrip().removeprefix(SUBAGENT)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        said = [line for line in lines if not line.startswith(TOOL_OUTPUT)]
        return self.is_message and bool(lines) and not said

    @functools.cached_property
    def only_narration(self) -> bool:
        """A session message that only opens or narrates a step ("Now let me run the
        tests:"): it holds the question's words and answers nothing, like tool notes. Not
        one naming code in backticks ("the `action_export_selected` method"): it says where
        the work is."""
        text = self.memory.content.lstrip().removeprefix(SUBAGENT)
        return self.is_message and not without_filler(text) and not CODE_SPAN.search(text)

    @functools.cached_property
    def only_asks(self) -> bool:
        """A user's session message that only asks a question: asked again, it finds itself
        and answers nothing (echo.py)."""
        return self.is_message and only_asks(message_role(self.memory), self.memory.content)

    @property
    def says_nothing(self) -> bool:
        """A session message of tool notes, narration or a question only, or one telling
        memctl's answer back: it weighs TOOL_NOTES_FACTOR of its score (fuse), and never
        alone makes a clear match."""
        return self.only_tool_notes or self.only_narration or self.only_asks or self.told_back

    @property
    def only_by_questions(self) -> bool:
        """Found only through the questions stored with it, by no leg of its own: they
        boost it, and never alone make it a clear match."""
        return bool(self.ranks) and all(leg in QUESTION_LEGS for leg in self.ranks)


def tool_notes_only(text: str) -> bool:
    """Whether every line of ``text`` (a sub-agent's mark left out) is a tool call's or
    result's note."""
    lines = [line.strip() for line in text.lstrip().removeprefix(SUBAGENT).splitlines()]
    lines = [line for line in lines if line]
    return bool(lines) and all(line.startswith(TOOL_NOTE) for line in lines)


def client_wrapped(text: str) -> bool:
    """Whether ``text`` is one block a client wrapped in its own tag, opening to closing
    (``<local-command-stdout>...</local-command-stdout>``): a command's output, a hook's,
    a reminder, none of it anyone's words. Long, such a block holds every word of many
    questions (a /compact's hook output of 6 KB was a clear match for "which files did we
    create?")."""
    opening = CLIENT_TAG.match(text.strip())
    return opening is not None and text.rstrip().endswith(f"</{opening.group(1)}>")


class Step(NamedTuple):
    """What one stage did to one candidate (a named tuple: a recall records hundreds, and a
    frozen dataclass takes four times as long to make)."""

    stage: str
    memory_id: str
    action: str
    score: float
    factor: float | None = None
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "action": self.action,
            "score": self.score,
            "factor": self.factor,
            "why": self.why,
        }


@dataclass
class Run:
    """One recall: the query, its constants, and everything the stages share."""

    ctx: Context
    query: Analysed
    params: Params
    limit: int
    now: datetime
    # the rows the legs' depth and the cap are counted in: ``recall.depth``, whatever the
    # limit asked for, so that every limit ranks the same candidates and shows the first
    # rows of one ranking (pipeline.recall); deeper only for the rows past what that
    # ranking holds. The legs' depth sets the range fuse maps each leg's scores over: a
    # deeper search ranks its first rows otherwise.
    depth: int
    where: MemoryFilter
    home_scope: str | None = None
    # the projects the question names (named_projects): scope -> the name it is called by
    named_projects: dict[str, str] = field(default_factory=dict)
    history: bool = False
    sessions: bool = False
    budget: int | None = None
    trace: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed_legs: set[str] = field(default_factory=set)
    translation: Analysed | None = None
    word_weights: dict[str, float] = field(default_factory=dict)  # query word -> rarity
    held: dict[str, int] = field(default_factory=dict)  # query word -> memories holding it
    # why the query's cosine is no evidence, "" when it is (content.meaningless)
    meaningless: str = ""
    # each text's share of the query's words, as fuse.coverage measured it (the possible
    # matches and provenance ask again for candidates fuse measured)
    shares: dict[str, float] = field(default_factory=dict)
    anchors: frozenset[str] = frozenset()  # the query's names the store knows well
    # the query without some of its names (fuse.name_alone): its vector's scores, each
    # embedded once a run (None: nothing left out, or no vector)
    unnamed: dict[frozenset[str], Scores | None] = field(default_factory=dict)
    # the query's well-known names no candidate says more of the query about (fuse.unasked_names)
    unasked: frozenset[str] = frozenset()
    strangers: frozenset[str] = frozenset()  # the query's names no memory mentions
    # the query's names most memories mention: the vector legs embed the query without them
    common_names: frozenset[str] = frozenset()
    index: VectorIndex | None = None
    scores: Scores | None = None
    # the query as asked, when ``scores`` is of it without its common names (candidates)
    asked: Scores | None = None
    # the vector leg's search: how many rows it asked for, and its (id, distance) hits
    # (fuse.crowd_cosine reads the same search's rows instead of running it again)
    vector_leg: tuple[int, list[tuple[str, float]]] | None = None
    searched_out: bool = False  # every leg found fewer rows than ``depth`` asked of it
    # the candidates the relevance gate did not label clear, best fused score first: a
    # recall offers the best of them as possible matches (pipeline.possible_results)
    possible: list[Candidate] = field(default_factory=list)
    # the possible matches the gate kept beside the clear ones, as fuse scored them: one a
    # later stage cuts (cap, cutoff, mmr, pack) goes back to the possible pool
    beside: list[Candidate] = field(default_factory=list)
    # the session messages provenance folded into another candidate, by id: what each
    # result says as said (stages/copies.py reads their texts)
    folded: dict[str, Candidate] = field(default_factory=dict)

    def record(
        self,
        stage: str,
        candidate: Candidate,
        action: str,
        factor: float | None = None,
        why: str = "",
    ) -> None:
        self.trace.append(Step(stage, candidate.id, action, candidate.score, factor, why))

    def steps_of(self, memory_id: str) -> list[Step]:
        return [step for step in self.trace if step.memory_id == memory_id]


Stage = Callable[[Run, list[Candidate]], list[Candidate]]


TieKey = tuple[str, str, str]


def tie_key(memory: Memory) -> TieKey:
    """What orders two results whose scores tie exactly (the neighbours stage's inherited
    scores often do): the older first (a session's earlier message), then by text, then by
    id. A memory's id is random (uuid4), so by id alone two identical runs could rank the
    same memories apart."""
    return (memory.created_at, memory.content_hash, memory.id)


def by_score(candidates: list[Candidate]) -> list[Candidate]:
    """Best first; ties broken by ``tie_key`` so that results are stable."""
    return sorted(candidates, key=lambda c: (-c.score, *tie_key(c.memory)))


def by_label(candidates: list[Candidate]) -> list[Candidate]:
    """Clear matches first, then possible ones, each best first (``label_key``): the order
    recall shows them in, so a stage that cuts by rank never cuts a clear match to keep a
    possible one."""
    clear = clear_ids(candidates)
    return sorted(candidates, key=lambda c: label_key(c, clear))


def clear_ids(candidates: list[Candidate]) -> frozenset[str]:
    return frozenset(c.id for c in candidates if c.clear)


def related(via: tuple[str, ...]) -> bool:
    """Whether ``via`` is a path the spread stage followed along relations (``seed,
    relation, id, ...``), not a session neighbour's (``REPLIES_TO``, ``NEXT_TO``) nor the
    graph stage's sources."""
    return via[1:2] != () and via[1] in RELATIONS


def takes_label(via: tuple[str, ...]) -> bool:
    """Whether a row added along ``via`` takes its seed's clear label: not a turn only next
    to it in its session, nor a memory only related to it."""
    return via[1:2] != (NEXT_TO,) and not related(via)


def label_added(found: list[Candidate]) -> list[Candidate]:
    """A candidate the graph or a session neighbour added (not judged by fuse) takes the label
    of the candidate fuse judged that it was reached from; one reached from another added
    one (a neighbour of a graph result) is a possible match, and so is a turn added only for
    lying next to its seed in their session (``NEXT_TO``, not the reply to the question the
    seed asks: ``REPLIES_TO``), and so is a memory the spread stage reached along a
    relation (``related``): it is related to the match, and shows nothing of its own about
    the question. The reply is the answer to a matching question ("5 years already!"); the
    turn before or after a clear fact is its context. Over the real sessions, the 44 such
    rows clear in the top 5 of six sets stated no gold answer, and a "load tests with k6"
    ask took two; the 3 spread rows clear there none either (docs/benchmarks.md, "A clear
    row states what was asked", "A relation lends no label"). Run before the mmr stage cuts
    by label, so that the cut counts the clear rows recall shows (a seed cut there would
    take its label with it)."""
    judged = {c.id: c for c in found if c.match_why}
    for candidate in found:
        if candidate.match_why or not candidate.via:
            continue
        seed = judged.get(candidate.via[0])
        candidate.clear = seed is not None and seed.clear and takes_label(candidate.via)
        what = "clear" if candidate.clear else "possible"
        how = f"a {'clear' if seed and seed.clear else 'possible'} match" if seed else "a result"
        if seed is not None and candidate.via[1:2] == (NEXT_TO,):
            how = f"{how}; the turn next to it in its session, not its reply"
        elif seed is not None and related(candidate.via):
            how = f"{how}; related to it, not about the question itself"
        candidate.match_why = f"{what}: reached from {candidate.via[0][:8]}, {how}"
        candidate.match_reason = Reason.REACHED
    return found


LabelKey = tuple[bool, float, str, str, str]


def label_key(candidate: Candidate, clear: frozenset[str]) -> LabelKey:
    """(possible?, -score, *tie_key): a candidate a later stage added (neighbours, graph, spread;
    fuse has not judged it) counts as clear when it was reached from a clear one, as
    ``label_added`` labels it (not a turn only next to it, nor a memory only related to it)."""
    reached = (
        not candidate.match_why
        and bool(candidate.via)
        and candidate.via[0] in clear
        and takes_label(candidate.via)
    )
    return (not (candidate.clear or reached), -candidate.score, *tie_key(candidate.memory))


def rescore(
    run: Run,
    stage: str,
    candidates: list[Candidate],
    factor_of: Callable[[Candidate], tuple[float, str]],
) -> list[Candidate]:
    """Multiply each score by ``factor_of(candidate)`` (factor, why) and record it."""
    for candidate in candidates:
        factor, why = factor_of(candidate)
        candidate.score *= factor
        candidate.factors[stage] = factor
        run.record(stage, candidate, RESCORED if factor != 1.0 else KEPT, factor, why)
    return by_score(candidates)


def drop_below(
    run: Run, stage: str, candidates: list[Candidate], threshold: float, what: str
) -> list[Candidate]:
    """Keep candidates scoring at least ``threshold``; record the others as dropped."""
    kept = []
    for candidate in candidates:
        if candidate.score >= threshold:
            kept.append(candidate)
            run.record(stage, candidate, KEPT)
        else:
            run.record(
                stage, candidate, DROPPED, why=f"{what} {candidate.score:.4f} < {threshold:g}"
            )
    return kept
