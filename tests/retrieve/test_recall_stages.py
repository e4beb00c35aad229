"""Each recall stage alone, on hand-made candidate lists (stages that read relations get a
real store)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.memories.provenance import DIGEST_TAG
from memctl.model import Kind, Memory, Relation, RelationType, State, Tier, format_time
from memctl.retrieve.pipeline import Recalled, possible_results, recall, start
from memctl.retrieve.run import DROPPED, KEPT, Candidate, Run, by_label, label_added
from memctl.retrieve.stages.bm25_floor import bm25_floor
from memctl.retrieve.stages.candidates import (
    TERMS_KNOWN_FROM,
    candidates,
    core_of,
    could_be_stranger,
    word_weights,
)
from memctl.retrieve.stages.cap import cap
from memctl.retrieve.stages.cutoff import cutoff
from memctl.retrieve.stages.decay import decay, recency
from memctl.retrieve.stages.fuse import CROWD_RANK, crowd_cosine, fuse
from memctl.retrieve.stages.importance import importance
from memctl.retrieve.stages.intent import INTENT_BOOST, asks_for, intent
from memctl.retrieve.stages.length import length
from memctl.retrieve.stages.mmr import mmr
from memctl.retrieve.stages.neighbours import neighbours
from memctl.retrieve.stages.pack import estimate_tokens, item_tokens, pack
from memctl.retrieve.stages.provenance import AGREE_BONUS, provenance
from memctl.retrieve.stages.rerank import rerank
from memctl.retrieve.stages.scope import scope
from memctl.retrieve.stages.spread import spread
from memctl.retrieve.stages.status import status
from memctl.retrieve.stages.time_boost import time_boost
from memctl.store.memories import insert_memory
from memctl.store.relations import add_relation
from tests.conftest import said_in_session
from tests.fakes import HashEmbedder
from tests.ollama_server import FakeOllama

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)
DAY = timedelta(days=1)


def make_run(ctx: Context, text: str = "query", limit: int = 10, **params: object) -> Run:
    run = start(ctx, text, limit, now=NOW)
    return replace(run, params=replace(run.params, **params))


def cand(content: str, score: float = 1.0, **fields: object) -> Candidate:
    fields.setdefault("created_at", format_time(NOW))
    return Candidate(Memory(content=content, **fields), score=score)  # type: ignore[arg-type]


def stored(ctx: Context, content: str, score: float = 1.0, **fields: object) -> Candidate:
    candidate = cand(content, score, **fields)
    insert_memory(ctx.db, candidate.memory, None)
    return candidate


def test_fuse_sums_each_legs_share_and_boosts_pinned(ctx: Context) -> None:
    run = make_run(ctx, relevance_floor=0.0)
    both = cand("both legs")
    both.ranks, both.raw = {"vector": 1, "bm25": 1}, {"vector": 0.2, "bm25": -4.0}
    weak = cand("weaker on both")
    weak.ranks, weak.raw = {"vector": 2, "bm25": 2}, {"vector": 0.6, "bm25": -1.0}
    pinned = cand("pinned, vector only", kind=Kind.PINNED)
    pinned.ranks, pinned.raw = {"vector": 3}, {"vector": 0.4}
    out = fuse(run, [weak, pinned, both])
    assert both.score == pytest.approx(1.0)  # best on both legs
    assert weak.score == pytest.approx(0.0)
    vector_weight = run.params.weight_vector
    assert pinned.score == pytest.approx(1.5 * vector_weight * 0.5)  # half way on the vector leg
    assert [c.memory.content for c in out] == ["both legs", "pinned, vector only", "weaker on both"]


def test_of_two_equal_hits_the_one_holding_more_of_the_querys_words_ranks_first(
    ctx: Context,
) -> None:
    run = make_run(ctx, "rotate the staging password", relevance_floor=0.0)
    run.word_weights = {"rotate": 1.0, "staging": 1.0, "password": 1.0}
    part = cand("the staging password is in the vault")
    whole = cand("we rotate the staging password monthly")
    for candidate in (part, whole):
        candidate.ranks, candidate.raw = {"vector": 1, "bm25": 1}, {"vector": 0.5, "bm25": -2.0}
    assert [c.memory.content for c in fuse(run, [part, whole])] == [
        whole.memory.content,
        part.memory.content,
    ]
    assert whole.score - part.score == pytest.approx(run.params.weight_words / 3)


def test_fuse_drops_candidates_without_evidence_of_their_own_and_says_why(ctx: Context) -> None:
    run = make_run(ctx, "rotate the staging password")
    run.word_weights = {"rotate": 2.0, "staging": 2.0, "password": 2.0}
    close = cand("the staging password rotates monthly")
    close.raw = {"vector": 0.3}  # cosine 0.7: shows the query is about something stored
    worded = cand("rotate the staging keys")
    worded.raw = {"bm25": -3.0, "similarity": 0.9}  # cosine 0.1, two words of three
    noise = cand("lunch is at noon")
    noise.raw = {"vector": 0.9}  # cosine 0.1, no word
    kept = fuse(run, [noise, worded, close])
    assert {c.memory.content for c in kept} == {close.memory.content, worded.memory.content}
    (step,) = [s for s in run.trace if s.memory_id == noise.id]
    assert step.action == DROPPED and "no evidence of relevance" in step.why


def test_fuse_returns_nothing_when_no_candidate_shows_the_query_is_about_the_store(
    ctx: Context,
) -> None:
    run = make_run(ctx, "who won the world cup final")
    run.word_weights = {"won": 1.0, "world": 1.0, "cup": 1.0, "final": 1.0}
    best_noise = cand("the final draft of the design doc")
    best_noise.raw = {"vector": 0.65, "bm25": -2.0}  # cosine 0.35, one word of four
    assert fuse(run, [best_noise]) == []
    (step,) = [s for s in run.trace if s.memory_id == best_noise.id]
    assert step.action == DROPPED and "no candidate shows" in step.why


def test_a_memory_inside_the_named_time_with_a_word_of_the_query_shows_it(
    ctx: Context,
) -> None:
    run = make_run(ctx, "who did I meet at lunch last week?")
    run.word_weights = {"meet": 1.0, "lunch": 1.0}
    inside = format_time(NOW - timedelta(days=8))
    before = format_time(NOW - timedelta(days=40))
    answer = cand("we had lunch with Rachel from marketing", created_at=inside)
    answer.raw = {"vector": 0.92}  # cosine 0.08: no meaning in common
    elsewhere = cand("lunch with the team was fun", created_at=before)
    elsewhere.raw = {"vector": 0.92}
    assert fuse(run, [elsewhere]) == []  # a shared word alone shows nothing
    found = fuse(run, [answer, elsewhere])  # the time and a word do; the other then joins
    assert {c.id for c in found} == {answer.id, elsewhere.id}
    assert any("inside the query's time: shows" in s.why for s in run.steps_of(answer.id))


def test_a_question_that_is_only_a_time_scores_its_memories_by_the_time_leg(
    ctx: Context,
) -> None:
    """ "What was I working on yesterday?" has no word to weigh: yesterday's memory furthest
    in meaning (a session in another language) still scores, by the time leg, beside
    closer ones from any time."""
    run = make_run(ctx, "what was I working on yesterday?")
    assert run.query.window is not None and not run.word_weights
    yesterday = format_time(NOW - DAY)
    theirs = cand("修复 TypeScript 项目根目录问题", created_at=yesterday)
    theirs.ranks, theirs.raw = {"time": 1, "vector": 3}, {"time": 0.95, "vector": 0.95}
    older = [
        cand(f"we were working on thing {n}", created_at=format_time(NOW - 9 * DAY)) for n in (1, 2)
    ]
    for n, memory in enumerate(older, start=1):
        memory.ranks, memory.raw = {"vector": n}, {"vector": 0.5 + n / 100}
    fused = {c.id: c for c in fuse(run, [*older, theirs])}
    assert fused[theirs.id].clear and fused[theirs.id].score > max(c.score for c in older)


def test_the_cap_keeps_a_plain_recalls_depth_whatever_the_limit(ctx: Context) -> None:
    """``-n 2`` and ``-n 12`` keep what a plain recall keeps (recall.depth x cap): their
    rows are the first of one ranking (Run.depth)."""
    for limit in (2, 12):
        run = make_run(ctx, limit=limit, cap=2)
        assert run.depth == 10
        assert len(cap(run, [cand(str(i), 1 - i / 100) for i in range(30)])) == 20


def test_the_depth_is_a_key_of_its_own_not_the_limit_a_person_sets(
    make_ctx: Callable[..., Context],
) -> None:
    """A person's recall.limit says how many rows recall shows, not how deep it searches:
    the legs, the cap and the possible pool count in recall.depth."""
    run = start(make_ctx(**{"recall.limit": 3, "recall.depth": 4}), "query", now=NOW)
    assert (run.limit, run.depth) == (3, 4)
    assert len(cap(run, [cand(str(i), 1 - i / 100) for i in range(30)])) == 8


class ScriptedJudge:
    def __init__(self, scores: list[float] | Exception) -> None:
        self.scores = scores

    def relevance(self, query: str, passages: list[str]) -> list[float]:
        if isinstance(self.scores, Exception):
            raise self.scores
        return self.scores


def test_rerank_blends_llm_scores_and_keeps_order_when_the_llm_fails(ctx: Context) -> None:
    run = make_run(ctx, rerank=True)
    a, b = cand("a", 1.0), cand("b", 0.5)
    out = rerank(run, [a, b], ScriptedJudge([0.0, 1.0]))
    assert a.score == pytest.approx(0.4) and b.score == pytest.approx(0.8)
    assert out == [b, a] and (a.pre_rerank, b.pre_rerank) == (1.0, 0.5)
    from memctl.errors import ModelError

    run = make_run(ctx, rerank=True)
    c, d = cand("c", 1.0), cand("d", 0.5)
    assert rerank(run, [c, d], ScriptedJudge(ModelError("down"))) == [c, d]
    assert (c.score, d.score) == (1.0, 0.5) and "rerank skipped" in run.notes[0]


def test_rerank_through_a_real_ollama_client(ollama_server: FakeOllama) -> None:
    ollama_server.script_chat({"scores": [{"id": 0, "score": 2}, {"id": 1, "score": 10}]})
    ctx = Context(load_settings(overrides={"ollama.host": ollama_server.url}), HashEmbedder())
    run = make_run(ctx, rerank=True)
    a, b = cand("deploys use make release", 1.0), cand("deploy with make release on main", 0.9)
    assert rerank(run, [a, b]) == [b, a]
    assert b.score == pytest.approx(0.6 * 1.0 + 0.4 * 0.9)
    (request,) = ollama_server.requests_to("/api/chat")
    assert "deploy with make release on main" in request["messages"][1]["content"]


def paraphrase_candidates() -> tuple[Candidate, Candidate]:
    """A memory in other words than the query (cosine 0.3, no shared word) and noise."""
    answer = cand("Our on-call handover happens every Monday at 10")
    answer.raw = {"vector": 0.7}
    noise = cand("lunch is at noon")
    noise.raw = {"vector": 0.85}
    return answer, noise


def test_the_memory_closest_in_meaning_shows_the_query_when_it_stands_out(ctx: Context) -> None:
    question = "when does the pager rotation change?"
    answer = cand("Our on-call handover happens every Monday at 10")
    answer.raw = {"vector": 0.6}  # cosine 0.4, no shared word
    others = [cand(f"unrelated note {i}") for i in range(3)]
    for other in others:
        other.raw = {"vector": 0.75}  # cosine 0.25: the rest of the store
    run = make_run(ctx, question)
    assert fuse(run, [*others, answer])[0] is answer
    (step,) = [s for s in run.trace if s.memory_id == answer.id]
    assert "closest in meaning, 0.150 ahead of the next" in step.why
    # the same cosine with another memory as close: nothing stands out, nothing is returned
    rival = cand("the pager app needs an update")
    rival.raw = {"vector": 0.62}
    assert fuse(make_run(ctx, question), [*others, answer, rival]) == []


def test_cosine_and_words_make_a_clear_match_only_with_a_second_signal(ctx: Context) -> None:
    question = "how do we rotate the staging password?"
    weights = {"rotate": 1.0, "staging": 1.0, "password": 1.0}
    # a chat turn sharing two of the three words: cosine 0.38 + 0.3 x 0.67 clears the floor,
    # but it is the third closest in meaning and the fifth by BM25
    turn = cand("we stayed at the staging area of the festival, no password needed")
    turn.raw = {"vector": 0.62, "bm25": -2.0}
    closer = [cand(f"deploy note {i}") for i in range(2)]
    for i, other in enumerate(closer):
        other.ranks, other.raw = {"vector": i + 1}, {"vector": 0.6 + i / 100}

    def judged(ranks: dict[str, int], anchors: frozenset[str] = frozenset(), **params: object):  # type: ignore[no-untyped-def]
        turn.ranks = ranks
        run = make_run(ctx, question, **params)
        run.word_weights, run.anchors = weights, anchors
        fuse(run, [*closer, turn])
        return turn.clear, turn.match_why

    third = {"vector": 3, "bm25": 5}
    assert judged(third)[0]  # by default (recall.agree_top 0) its strength stands alone
    clear, why = judged(third, agree_top=2)
    assert not clear and "not the closest in meaning, nor in both legs' top 2" in why
    # the same strength as the closest in meaning, or in both legs' top 2, shows relevance
    assert judged({"vector": 1, "bm25": 5}, agree_top=2)[0]
    assert judged({"vector": 2, "bm25": 1}, agree_top=2)[0]
    # not asked when the query names a name the store knows
    assert judged(third, frozenset({"Caroline"}), agree_top=2)[0]


def test_the_crowd_is_the_tenth_closest_memory_however_deep_the_vector_leg_searched(
    ctx: Context,
) -> None:
    """fuse's crowd cosine reads the vector leg's own search when it asked for as many rows
    (any limit: ``Run.depth``) and searches again when it did not (a search 3 rows deep):
    either way it is the cosine of the query's tenth closest memory."""
    texts = [f"the {word} service deploys on {day}" for word in "abcdefgh" for day in "xyz"]
    vectors = ctx.vectors(texts)
    with ctx.db.atomic():
        for text, vector in zip(texts, vectors, strict=True):
            insert_memory(ctx.db, Memory(content=text, scope="global"), vector)
    query = "when does the billing service deploy?"
    asked = np.frombuffer(ctx.vectors([query])[0], dtype=np.float32)
    cosines = sorted(
        (float(np.frombuffer(v, dtype=np.float32) @ asked) for v in vectors), reverse=True
    )
    for depth, reused in ((None, True), (3, False)):
        run = start(ctx, query, 3, depth=depth)  # the clock's now: the notes exist
        candidates(run, [])
        assert run.vector_leg is not None
        rows = max(CROWD_RANK, run.depth * run.params.candidates)
        assert (run.vector_leg[0] == rows) is reused
        assert crowd_cosine(run) == pytest.approx(cosines[CROWD_RANK - 1], abs=1e-5)


def test_a_closed_gate_labels_every_candidate_possible_best_fused_first(ctx: Context) -> None:
    question = "when does the pager rotation change?"
    answer = cand("Our on-call handover happens every Monday at 10")
    answer.raw = {"vector": 0.68}  # cosine 0.32: too far to show it, closest all the same
    rival = cand("the pager app needs an update")
    rival.raw = {"vector": 0.7}  # cosine 0.3: as close, so nothing stands out
    far = cand("lunch is at noon")
    far.raw = {"vector": 0.85}  # cosine 0.15: no evidence of its own, possible all the same
    run = make_run(ctx, question)
    assert fuse(run, [far, rival, answer]) == []
    assert run.possible[-1] is far and {c.id for c in run.possible} == {answer.id, rival.id, far.id}
    assert [c.score for c in run.possible] == sorted((c.score for c in run.possible), reverse=True)
    assert not any(c.clear for c in run.possible)
    assert run.possible[0].match_why.startswith("possible: cosine")
    assert far.match_why.startswith("possible: no evidence of relevance of its own")
    # an open gate: the answer is clear; the far one, with no evidence, stays possible
    answer.raw = {"vector": 0.4}
    run = make_run(ctx, question)
    kept = fuse(run, [far, rival, answer])
    assert kept[0] is answer and answer.clear and answer.match_why.startswith("clear: ")
    assert run.possible == [far]
    # the rival (cosine 0.3) supports it: kept beside it, labelled possible
    assert rival in kept and not rival.clear


def test_an_llm_second_opinion_lets_a_paraphrase_through_when_configured(
    ollama_server: FakeOllama,
) -> None:
    ollama_server.script_chat({"scores": [{"id": 0, "score": 9}, {"id": 1, "score": 1}]})
    ctx = Context(load_settings(overrides={"ollama.host": ollama_server.url}), HashEmbedder())
    question = "when does the pager rotation change?"
    answer, noise = paraphrase_candidates()
    assert fuse(make_run(ctx, question), [answer, noise]) == []  # off by default: no call
    assert ollama_server.requests_to("/api/chat") == []
    answer, noise = paraphrase_candidates()
    run = make_run(ctx, question, llm_gate=True)
    assert fuse(run, [answer, noise]) == [answer]
    (step,) = [s for s in run.trace if s.memory_id == answer.id]
    assert step.action == KEPT and "LLM relevance 0.90" in step.why
    (request,) = ollama_server.requests_to("/api/chat")
    prompt = request["messages"][1]["content"]
    assert question in prompt and "on-call handover" in prompt


def test_without_an_llm_answer_the_gate_keeps_its_own_verdict(ctx: Context) -> None:
    run = make_run(ctx, "when does the pager rotation change?", llm_gate=True)
    answer, noise = paraphrase_candidates()
    out = fuse(run, [answer, noise])
    assert out == [] and any("no LLM second opinion" in note for note in run.notes)


def test_bm25_floor_keeps_strong_lexical_matches(ctx: Context) -> None:
    run = make_run(ctx)
    exact, weak = cand("exact", 0.2), cand("weak", 0.2)
    exact.raw, weak.raw = {"bm25": -8.0}, {"bm25": -2.0}
    exact.pre_rerank = weak.pre_rerank = 0.9
    bm25_floor(run, [exact, weak])
    assert exact.score == pytest.approx(0.95 * 0.9) and weak.score == 0.2


def test_decay_follows_the_weibull_curve_with_tier_floors(ctx: Context) -> None:
    run = make_run(ctx)
    month_ago = format_time(NOW - timedelta(days=30))
    old = cand("old", 1.0, created_at=month_ago, importance=0.0, confidence=1.0, tier=Tier.WORKING)
    assert recency(old.memory, NOW, run.params) == pytest.approx(0.5)
    core = cand("core", 1.0, created_at=month_ago, importance=0.0, tier=Tier.CORE)
    peripheral = cand(
        "peripheral",
        1.0,
        created_at=format_time(NOW - timedelta(days=400)),
        importance=0.0,
        tier=Tier.PERIPHERAL,
    )
    fresh = cand("fresh", 1.0, importance=1.0, confidence=1.0, access_count=50)
    decay(run, [old, core, peripheral, fresh])
    # old: composite 0.4 x 0.5 = 0.2 < working floor 0.7
    assert old.score == pytest.approx(0.3 + 0.7 * 0.7)
    assert core.score == pytest.approx(0.3 + 0.7 * 0.9)
    assert peripheral.score == pytest.approx(0.3 + 0.7 * 0.5)
    frequency = 1 - math.exp(-10)
    assert fresh.score == pytest.approx(0.3 + 0.7 * (0.4 + 0.3 * frequency + 0.3))


def test_importance_length_and_scope_factors(ctx: Context) -> None:
    run = make_run(ctx, length_norm=500)
    (c,) = importance(run, [cand("x", 1.0, importance=0.5)])
    assert c.score == pytest.approx(0.85)
    short, wordy, meant = cand("s" * 400, 1.0), cand("l" * 2000, 1.0), cand("m" * 2000, 1.0)
    wordy.lexical, meant.lexical = 1.0, 0.0
    short.lexical = 1.0
    length(run, [short, wordy, meant])
    # a long text found by its words is damped; found by its meaning, it stands
    assert short.score == 1.0 and wordy.score == pytest.approx(1 / 3) and meant.score == 1.0
    half = cand("h" * 2000, 1.0)
    half.lexical = 0.5
    length(run, [half])
    assert half.score == pytest.approx(0.5 + 0.5 / 3)
    # off by default (recall.length_norm 0): a long text found by its words stands
    default = make_run(ctx)
    long = cand("l" * 8000, 1.0)
    long.lexical = 1.0
    length(default, [long])
    assert default.params.length_norm == 0 and long.score == 1.0
    here = cand("here", 1.0, scope=run.home_scope)
    everywhere = cand("global", 1.0, scope="global")
    elsewhere = cand("other", 1.0, scope="github.com/x/other")
    assert [c.score for c in scope(run, [here, everywhere, elsewhere])] == [1.0, 0.8, 0.4]


def test_time_window_boosts_without_filtering(ctx: Context) -> None:
    run = make_run(ctx, text="what broke last week?")
    inside = cand("inside", 1.0, created_at=format_time(NOW - timedelta(days=8)))
    outside = cand("outside", 1.2, created_at=format_time(NOW - timedelta(days=40)))
    out = time_boost(run, [outside, inside])
    assert out == [inside, outside] and inside.score == pytest.approx(1.5)


def test_a_memory_reached_only_through_the_graph_surfaces(ctx: Context) -> None:
    run = make_run(ctx)
    seed = stored(ctx, "deploys use make release", 0.8)
    key = stored(ctx, "the signing key lives in Vault", 0.0)
    far = stored(ctx, "Vault is run by the platform team", 0.0)
    too_far = stored(ctx, "the platform team meets on Mondays", 0.0)
    add_relation(ctx.db, Relation(seed.id, key.id, RelationType.DEPENDS_ON, 0.8))
    add_relation(ctx.db, Relation(far.id, key.id, RelationType.RELATED, 0.5))  # followed backwards
    add_relation(ctx.db, Relation(far.id, too_far.id, RelationType.RELATED, 1.0))
    out = spread(run, [seed])
    scores = {c.memory.content: c for c in out}
    assert scores[key.memory.content].score == pytest.approx(0.8 * 0.8 * 0.5)
    assert scores[far.memory.content].score == pytest.approx(0.8 * 0.8 * 0.5 * 0.5 * 0.5)
    assert too_far.memory.content not in scores  # three hops away
    assert scores[far.memory.content].via == (seed.id, "depends_on", key.id, "related", far.id)
    assert "reached only through the graph" in run.steps_of(far.id)[0].why
    focused = make_run(ctx, spread_hops=1)
    assert len(spread(focused, [stored(ctx, "copy", 0.8)])) == 1


def test_a_memory_reached_only_through_a_relation_is_a_possible_match(ctx: Context) -> None:
    run = make_run(ctx)
    seed = stored(ctx, "deploys use make release", 0.8)
    seed.clear, seed.match_why = True, "clear: words 0.60: shows relevance"
    key = stored(ctx, "the signing key lives in Vault", 0.0)
    add_relation(ctx.db, Relation(seed.id, key.id, RelationType.DEPENDS_ON, 1.0))
    got = {c.memory.content: c for c in label_added(spread(run, [seed]))}
    reached = got[key.memory.content]
    assert not reached.clear
    assert "related to it, not about the question itself" in reached.match_why
    # it ranks with the possible matches, under every clear one, whatever its score
    reached.score = 5.0
    assert by_label(list(got.values()))[-1] is reached


def test_superseded_is_left_out_unless_history_and_contradicted_sinks(ctx: Context) -> None:
    old = cand("deploys use Jenkins", 1.0, state=State.SUPERSEDED, superseded_by="f" * 32)
    doubted = cand("deploys happen on Fridays", 1.0, state=State.CONTRADICTED)
    run = make_run(ctx)
    assert status(run, [old, doubted]) == [doubted] and doubted.score == pytest.approx(0.3)
    assert "superseded by ffffffff; --history includes it" in run.steps_of(old.id)[0].why
    old.score = 1.0
    assert status(make_run(ctx), [old]) == []
    history = make_run(ctx)
    history.history = True
    assert status(history, [old])[0].score == pytest.approx(0.5)


def test_a_memory_superseded_after_the_as_of_date_counts_as_active(ctx: Context) -> None:
    later = format_time(NOW + timedelta(days=3))
    old = cand("deploys use Jenkins", 1.0, state=State.SUPERSEDED, invalidated_at=later)
    assert status(make_run(ctx), [old])[0].score == 1.0


def test_the_weaker_side_of_a_contradiction_sinks(ctx: Context) -> None:
    run = make_run(ctx)
    strong = stored(ctx, "the API limit is 100 requests", 1.0, strength=1.0, confidence=0.9)
    weak = stored(ctx, "the API limit is 50 requests", 1.0, strength=0.4, confidence=0.9)
    add_relation(ctx.db, Relation(weak.id, strong.id, RelationType.CONTRADICTS))
    out = status(run, [weak, strong])
    assert out == [strong, weak] and weak.score == pytest.approx(0.3) and strong.score == 1.0
    assert strong.id[:8] in run.steps_of(weak.id)[-1].why


def test_cutoff_drops_near_zero_scores(ctx: Context) -> None:
    assert len(cutoff(make_run(ctx), [cand("a", 0.006), cand("b", 0.004)])) == 1


def test_mmr_demotes_a_near_duplicate_then_truncates(ctx: Context) -> None:
    run = make_run(ctx, limit=2)
    first = cand("we deploy the billing service with helm every friday", 0.9)
    twin = cand("we deploy the billing service with helm every friday!", 0.8)
    other = cand("billing alerts go to the payments channel", 0.5)
    for clear in (first, twin, other):
        clear.clear, clear.match_why = True, "clear: cosine 0.6"
    out = mmr(run, [first, twin, other])
    assert out == [first, other] and twin.score == pytest.approx(0.4)
    assert "near duplicate of" in [s for s in run.steps_of(twin.id) if s.why][0].why
    assert run.steps_of(twin.id)[-1].action == DROPPED


def test_a_clear_match_is_never_cut_to_keep_possible_ones(ctx: Context) -> None:
    run = make_run(ctx, limit=2)
    loud = [cand(f"the deploy script {word} output", 0.9 - i / 10) for i, word in enumerate("ab")]
    answer = cand("ship to production with make ship from main", 0.2)
    answer.clear, answer.match_why = True, "clear: cosine 0.52"
    for other in loud:
        other.match_why = "possible: words 0.3: supports another's relevance"
    out = mmr(run, [*loud, answer])
    # the possible ones all go on, however many: recall ranks them (possible_results)
    assert out == [answer, *loud]
    assert all(s.action != DROPPED for c in loud for s in run.steps_of(c.id))


def test_the_limit_never_cuts_a_possible_match_before_recall_ranks_them(ctx: Context) -> None:
    question = "how do we ship to production?"
    answer = stored(ctx, "Deploy with make ship from main, behind the VPN")
    answer.ranks, answer.raw = {"vector": 1}, {"vector": 0.4}  # cosine 0.6: clear
    beside = [stored(ctx, f"production note {i}: ship it") for i in range(3)]
    for i, other in enumerate(beside):
        other.ranks, other.raw = {"vector": i + 2}, {"vector": 0.75 + i / 100}  # cosine ~0.25
    run = make_run(ctx, question, limit=1)
    kept = fuse(run, [answer, *beside])
    assert answer.clear and not any(c.clear for c in beside) and len(kept) == 4
    kept = mmr(run, kept)
    assert kept[0] == answer and len(kept) == 4  # the limit of 1 cut none of them
    # ... and recall offers the best of them after the clear one
    offered = possible_results(run, kept, 2)
    assert len(offered) == 2 and {c.id for c in offered} <= {c.id for c in beside}


def test_a_message_folded_into_its_memory_does_not_come_back_as_a_possible_match(
    ctx: Context,
) -> None:
    fact = stored(ctx, "Use pnpm in the web frontend", 0.5, source="session:s1#3:user")
    fact.clear = True
    said = message("s1#3", "from now on always use pnpm in the web frontend", 0.6)
    run = make_run(ctx, "pnpm frontend")
    run.sessions = True
    run.beside = [replace(said)]  # kept by the gate beside the clear fact, as fuse left it
    assert provenance(run, [said, fact]) == [fact]
    assert possible_results(run, [fact], 3) == []


def test_the_budget_holds_for_cjk_text(ctx: Context) -> None:
    run = make_run(ctx)
    run.budget = 60
    texts = ["部署使用发布脚本，必须在主分支上运行并通知值班人员。"] * 2 + [
        "short english line"
    ] * 3
    found = [cand(t + str(i), 1.0 - i / 10) for i, t in enumerate(texts)]
    kept = pack(run, found)
    used = sum(item_tokens(c, run.params) for c in kept)
    assert 0 < used <= 60 and kept == found[: len(kept)]
    assert estimate_tokens("部署使用发布脚本", run.params) == math.ceil(8 / 1.17)  # o200k_base
    assert estimate_tokens("abcdefgh", run.params) == 2
    dropped = [s for s in run.trace if s.action == DROPPED]
    assert dropped and "over the budget of 60 tokens" in dropped[0].why


def test_when_a_leg_failed_the_other_takes_both_weights(ctx: Context) -> None:
    run = make_run(ctx, weight_words=0.0)
    run.failed_legs.add("vector")
    run.word_weights = {"words": 1.0}
    alone = cand("found by words only")
    alone.ranks, alone.raw = {"bm25": 1}, {"bm25": -2.0}
    (fused,) = fuse(run, [alone])
    assert fused.score == pytest.approx(1.0)  # as a both-legs hit would be


def test_a_short_memory_inherits_from_its_session_neighbours(ctx: Context) -> None:
    run = make_run(ctx, context_share=0.3, reply_share=0.6)
    times = [format_time(NOW - timedelta(minutes=m)) for m in (4, 3, 2, 1)]
    opener = cand("we got a new pet last month", 0.0, session_id="s", created_at=times[0])
    insert_memory(ctx.db, opener.memory, None)
    question = stored(ctx, "how are your pets?", 1.0, session_id="s", created_at=times[1])
    answer = cand("yup, Oscar, my guinea pig", 0.0, session_id="s", created_at=times[2])
    insert_memory(ctx.db, answer.memory, None)
    far = cand("x" * 500, 0.0, session_id="s", created_at=times[3])
    insert_memory(ctx.db, far.memory, None)
    got = {c.memory.content: c for c in neighbours(run, [question])}
    # the reply to a question inherits more of its score than the memory before it
    assert got[answer.memory.content].score == pytest.approx(0.6)
    assert got[opener.memory.content].score == pytest.approx(0.3)
    assert got[answer.memory.content].via == (question.id, "replies to", answer.id)
    assert got[opener.memory.content].via == (question.id, "next to", opener.id)
    assert far.memory.content not in got  # not a neighbour of the question
    statement = stored(ctx, "Oscar loves carrots", 1.0, session_id="t", created_at=times[0])
    after = cand("so do I", 0.0, session_id="t", created_at=times[1])
    insert_memory(ctx.db, after.memory, None)
    got = {c.memory.content: c for c in neighbours(run, [statement])}
    assert got["so do I"].score == pytest.approx(0.3)  # no question, no reply share


def test_a_turn_next_to_a_clear_match_is_possible_and_the_reply_to_its_question_clear(
    ctx: Context,
) -> None:
    run = make_run(ctx, context_share=0.3, reply_share=0.6)
    times = [format_time(NOW - timedelta(minutes=m)) for m in (4, 3, 2, 1)]
    question = stored(ctx, "how are your pets?", 1.0, session_id="s", created_at=times[0])
    reply = stored(ctx, "yup, Oscar, my guinea pig", 0.0, session_id="s", created_at=times[1])
    # a fact distilled from a coding session, and the one distilled after it: no reply
    fact = stored(ctx, "lint runs with `ruff check src/`", 1.0, session_id="t", created_at=times[2])
    after = stored(ctx, "We support .tar archives too", 0.0, session_id="t", created_at=times[3])
    for seed in (question, fact):
        seed.clear, seed.match_why = True, "clear: words 0.60: shows relevance"
    got = {c.memory.content: c for c in label_added(neighbours(run, [question, fact]))}
    assert got[reply.memory.content].clear
    assert not got[after.memory.content].clear
    assert "next to it in its session, not its reply" in got[after.memory.content].match_why
    # it ranks with the possible matches, under every clear one, whatever its score
    got[after.memory.content].score = 5.0
    assert by_label(list(got.values()))[-1] is got[after.memory.content]


def test_a_question_gives_way_to_the_short_reply_that_inherits_from_it(ctx: Context) -> None:
    run = make_run(ctx, context_share=0.3, reply_share=0.6, question_factor=0.8)
    times = [format_time(NOW - timedelta(minutes=m)) for m in (4, 3, 2, 1)]
    question = stored(ctx, "how are your pets?", 1.0, session_id="s", created_at=times[0])
    answer = stored(ctx, "yup, Oscar, my guinea pig", 0.9, session_id="s", created_at=times[1])
    ranked = [c.memory.content for c in neighbours(run, [question, answer])]
    assert ranked == [answer.memory.content, question.memory.content]
    assert question.score == pytest.approx((1.0 + 0.3 * 0.9) * 0.8)  # its reply passes it 0.3
    (step,) = [s for s in run.trace if s.memory_id == question.id and s.stage == "neighbours"]
    assert "asks a question" in step.why
    # a long reply inherits nothing, so the question keeps its score
    asks_long = stored(ctx, "what did the survey say?", 1.0, session_id="t", created_at=times[2])
    stored(ctx, "x" * 500, 0.0, session_id="t", created_at=times[3])
    neighbours(run, [asks_long])
    assert asks_long.score == pytest.approx(1.0)


def test_a_digest_passes_nothing_to_its_neighbours_in_its_session(ctx: Context) -> None:
    run = make_run(ctx, context_share=0.3, reply_share=0.6, question_factor=0.8)
    times = [format_time(NOW - timedelta(minutes=m)) for m in (3, 2)]
    # a session's digest, long, with a "?" it quotes; a short pattern distilled after it
    digest = "Session of 2025-06-14 — can you add a GitHub Action to run the tests? " + "y" * 500
    long = stored(ctx, digest, 1.0, session_id="s", created_at=times[0])
    pattern = "formatting runs with `uv run ruff format`"
    after = cand(pattern, 0.0, session_id="s", created_at=times[1])
    insert_memory(ctx.db, after.memory, None)
    got = {c.memory.content: c for c in neighbours(run, [long])}
    assert list(got) == [digest] and long.score == pytest.approx(1.0)


def test_a_short_sessions_digest_is_no_turn_asking_its_question(ctx: Context) -> None:
    run = make_run(ctx, context_share=0.3, reply_share=0.6, question_factor=0.8)
    times = [format_time(NOW - timedelta(minutes=m)) for m in (3, 2)]
    # the digest of a four-turn session quotes its opening question; the rule distilled
    # after it answers another one
    digest = "Session of 2026-11-02 — How do we deploy? … Outcome: Run `make release`."
    short = stored(ctx, digest, 1.0, session_id="s", created_at=times[0], tags=[DIGEST_TAG])
    rule = stored(ctx, "We never deploy on Fridays.", 0.5, session_id="s", created_at=times[1])
    ranked = neighbours(run, [short, rule])
    assert [c.score for c in ranked] == [pytest.approx(1.0), pytest.approx(0.5)]
    # the same text, said as a turn, is a question its reply inherits from
    turn = stored(ctx, digest, 1.0, session_id="t", created_at=times[0])
    reply = stored(ctx, "We never deploy on Fridays.", 0.5, session_id="t", created_at=times[1])
    neighbours(run, [turn, reply])
    assert reply.score == pytest.approx(0.5 + 0.6 * 1.0)


def test_session_messages_are_candidates_when_the_store_has_them(home: Path) -> None:
    from memctl.config.settings import load_settings
    from memctl.model import Message, Role, Session
    from memctl.retrieve.pipeline import recall
    from memctl.store import sessions
    from tests.fakes import HashEmbedder

    ctx = Context(load_settings(), embedder=HashEmbedder())

    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session(id="s1", client="generic", scope="global"))
        sessions.insert_messages(
            ctx.db,
            [
                Message(
                    Role.USER,
                    "the staging database password rotates monthly",
                    session_id="s1",
                    seq=1,
                )
            ],
        )
    found = recall(ctx, "staging password rotation", touch=False, sessions=True, scopes=None)
    hit = next(r for r in found.results if r.is_message)
    assert hit.memory.id == "s1#1" and hit.memory.session_id == "s1"


def test_a_memory_from_the_time_the_query_names_is_boosted_before_the_cap(ctx: Context) -> None:
    from memctl.retrieve.pipeline import stages_for

    run = make_run(ctx, "what did we deploy last week", limit=1, cap=2, time_boost=2.0)
    run = replace(run, depth=1)  # the cap keeps 1 x 2
    long_ago = format_time(NOW - timedelta(days=60))
    older = [cand(f"deploy notes {n}", 0.9 - n / 100, created_at=long_ago) for n in range(3)]
    last_week = cand("shipped the billing service", 0.5, created_at=format_time(NOW - 4 * DAY))
    kept = [*older, last_week]
    for stage in [s for s in stages_for(run.params) if s in (time_boost, cap)]:
        kept = stage(run, kept)
    assert [c.memory.content for c in kept] == ["shipped the billing service", "deploy notes 0"]


@pytest.mark.parametrize(
    ("name", "stranger"),
    [("Ben", True), ("Louvre", True), ("New York", True), ("PR", False), ("Sundays", False)],
)
def test_a_name_no_memory_mentions_is_a_stranger_unless_a_time_or_capitals(
    name: str, stranger: bool
) -> None:
    assert could_be_stranger(name) is stranger


def test_a_name_the_store_knows_anchors_unless_written_in_capitals_only(ctx: Context) -> None:
    for i in range(3):
        stored(ctx, f"Caroline's API note {i}: the API answers in JSON")
    run = make_run(ctx, "Why did Caroline pick that API style?")
    weighed = word_weights(run)
    # "API" names a topic as often as a thing: a memory holding it is not clear for that
    assert weighed.anchors == frozenset({"Caroline"}) and not weighed.strangers


def test_a_name_with_an_all_capital_word_is_known_by_its_other_words(ctx: Context) -> None:
    # M-Gemini's sessions (benchmarks/sessions/fresh7, CC0 1.0) say Windows, never "Windows PC"
    stored(ctx, "install claude code cli for windows powershell")
    stored(ctx, "Switched RealTimeIsUniversal so that Windows keeps the right hour")
    assert not word_weights(make_run(ctx, "What is installed on the Windows PC?")).strangers
    strangers = word_weights(make_run(ctx, "What runs on the Nairobi PC?")).strangers
    assert strangers == frozenset({"Nairobi PC"})
    assert [core_of(n) for n in ("Windows PC", "US English", "Ben", "PR")] == [
        ("windows",),
        ("english",),
        (),
        (),
    ]


def test_a_software_term_a_large_store_never_names_is_a_stranger(ctx: Context) -> None:
    question = "how do we run load tests with k6?"
    for i in range(TERMS_KNOWN_FROM - 1):
        stored(ctx, f"note {i}: run the unit tests before pushing")
    make_weights = lambda: word_weights(make_run(ctx, question))  # noqa: E731
    assert not make_weights().strangers  # a small store names few of the terms it could
    stored(ctx, "the unit tests take a minute")
    assert "k6" in make_weights().strangers
    # nor is the word a question asks for a command by (answers.asking_words): notes give
    # commands in backticks and never call them one
    assert not word_weights(make_run(ctx, "command for the unit tests?")).strangers
    assert "k6" in word_weights(make_run(ctx, "which command runs k6?")).strangers
    stored(ctx, "the nightly benchmark hits staging for ten minutes")  # k6's group-mate
    assert not make_weights().strangers


def test_a_stranger_in_the_query_leaves_a_known_name_and_its_time_no_clear_match(
    ctx: Context,
) -> None:
    for i in range(3):
        stored(ctx, f"Oliver note {i}: he hides his bones under the sofa")
    inside = format_time(NOW - timedelta(days=8))
    knee = cand("Sam's knee is much better since the surgery", created_at=inside)
    knee.raw = {"vector": 0.9}  # cosine 0.1: only the word and the time
    oliver = cand("Oliver sees the vet every spring")
    oliver.raw = {"vector": 0.8}

    def labels(question: str, candidate: Candidate) -> tuple[bool, str]:
        run = make_run(ctx, question)
        run.word_weights, run.anchors, run.strangers = word_weights(run)[:3]
        fuse(run, [replace(candidate, raw=dict(candidate.raw), factors={})])
        (why,) = [s.why for s in run.trace if s.memory_id == candidate.id]
        return why.startswith("clear"), why

    assert labels("When is Oliver at the vet?", oliver)[0]  # a name the store knows
    assert labels("who had knee trouble last week?", knee)[0]  # a word inside the time
    flight, why = labels("When does Oliver's flight to Nairobi land?", oliver)
    assert not flight and "the query names Nairobi, which no memory mentions" in why
    said, why = labels("What did Dr. Okonkwo say about my knee last week?", knee)
    assert not said and "which no memory mentions" in why


def message(key: str, content: str, score: float, clear: bool = False) -> Candidate:
    said = cand(content, score, id=key, session_id=key.split("#")[0])
    said.is_message, said.clear = True, clear
    return said


def test_a_memory_and_the_message_it_was_distilled_from_count_once(ctx: Context) -> None:
    fact = cand("Use pnpm in the web frontend", 0.5, source="session:s1#3:user")
    fact.clear = True
    said = message("s1#3", "from now on always use pnpm in the web frontend", 0.6)
    other = message("s1#9", "pnpm install failed on CI", 0.4)
    run = make_run(ctx, "pnpm frontend")
    run.sessions = True
    kept = provenance(run, [said, fact, other])
    assert [c.id for c in kept] == [fact.id, "s1#9"]
    # the better of the two scores, with the bonus: both matched
    assert math.isclose(fact.score, 0.6 * AGREE_BONUS) and fact.members == ("s1#3",)
    assert any(s.memory_id == "s1#3" and s.action == DROPPED for s in run.trace)


def test_a_message_that_states_the_answer_better_than_its_memory_is_kept_in_its_place(
    ctx: Context,
) -> None:
    """A rule-distilled fact cut short of what the question asks: its message holds the
    whole answer, so the message is the one result (the memory folded into it)."""
    fact = cand("Use pnpm", 0.7, source="session:s1#3:user")
    fact.clear = True
    said = message("s1#3", "from now on use pnpm in the web frontend, never npm", 0.5)
    run = make_run(ctx, "pnpm in the frontend")
    run.sessions = True
    run.word_weights = {"pnpm": 1.0, "frontend": 1.0}
    kept = provenance(run, [fact, said])
    assert [c.id for c in kept] == ["s1#3"]
    assert said.clear and said.members == (fact.id,)
    assert math.isclose(said.score, 0.7 * AGREE_BONUS)  # the best score of the two, agreed
    (folded,) = [s for s in run.trace if s.memory_id == fact.id and s.action == DROPPED]
    assert "stated better" in folded.why
    shown = Recalled.of(said).to_dict()  # JSON names the memory folded into the message
    assert shown["distilled"] == [fact.id] and shown["messages"] == []


def test_a_message_saying_a_memory_of_its_session_word_for_word_counts_once(
    ctx: Context,
) -> None:
    """A fact whose source names only its session (what the tool calls showed) and the
    message that says it: one result. A short one ("run the tests") is said too often."""
    fact = cand(
        "The integration suite needs the docker daemon running first",
        0.4,
        source="session:s4",
        session_id="s4",
    )
    said = message(
        "s4#7", "OK so:  the integration suite needs the Docker daemon\nrunning first.", 0.6
    )
    elsewhere = message("s5#2", "the integration suite needs the docker daemon running first", 0.5)
    short = cand("run the tests", 0.3, source="session:s4", session_id="s4")
    also = message("s4#9", "now run the tests again", 0.2)
    run = make_run(ctx, "docker daemon for the integration suite")
    run.sessions = True
    kept = provenance(run, [said, fact, elsewhere, short, also])
    assert [c.id for c in kept] == [fact.id, "s5#2", short.id, "s4#9"]
    assert fact.members == ("s4#7",) and math.isclose(fact.score, 0.6 * AGREE_BONUS)


def test_a_possible_memory_whose_message_is_clear_is_kept_clear_in_its_place(
    ctx: Context,
) -> None:
    fact = cand("Deploys need a green staging run", 0.2, source="session:s2#4-5")
    said = message("s2#5", "we only deploy after staging passes", 0.7, clear=True)
    said.match_why = "clear: cosine 0.6"
    run = make_run(ctx, "when can we deploy?")
    run.sessions, run.possible = True, [fact]
    assert provenance(run, [said]) == [fact]
    assert fact.clear and run.possible == []
    assert fact.match_why == "clear: by s2#5, folded into it: cosine 0.6"  # the evidence's row


@pytest.mark.parametrize(
    ("source", "named"), [("session:s6#276:user", False), ("session:s6#1-400", True)]
)
def test_a_message_found_by_its_meaning_alone_lends_no_label(
    ctx: Context, source: str, named: bool
) -> None:
    """A long report of a fact's session, clear by a passage's words and found by its
    vector alone, lifts the fact's score; the fact, from another turn, stays possible.
    So does the session's digest, whose source holds the report: it names the report
    among its messages, and does not state its words."""
    memory = cand("Include every source of a session", 0.1, source=source)
    memory.memory.session_id = "s6"
    memory.raw = {"vector": 0.892}  # cosine 0.108, and one word of the query: some evidence
    memory.match_why = "possible: cosine 0.108, words 0.33: supports another's relevance"
    report = message("s6#11", "[subagent report] an overview of the codebase", 0.5, clear=True)
    report.ranks, report.match_why = {"session_vector": 23}, "clear: words 0.35"
    run = make_run(ctx, "where did the session path bug come from?")
    run.word_weights = {"session": 1.0, "path": 1.0, "bug": 1.0}
    run.sessions, run.possible = True, [memory]
    assert provenance(run, [report]) == [memory]
    assert math.isclose(memory.score, 0.5 * AGREE_BONUS) and not memory.clear
    assert memory.members == (("s6#11",) if named else ())
    assert memory.match_why.startswith("possible: cosine 0.108")


def test_a_digest_of_a_whole_session_does_not_swallow_its_messages(ctx: Context) -> None:
    digest = cand("Session digest: set up CI and fixed the flaky test", 0.5)
    digest.memory.source = "session:s3#1-40"
    said = message("s3#12", "the flaky test was a race in the fixture", 0.6)
    run = make_run(ctx, "flaky test")
    run.sessions = True
    assert {c.id for c in provenance(run, [digest, said])} == {digest.id, "s3#12"}
    assert digest.members == ()


@pytest.mark.parametrize(
    ("question", "leans_to"),
    [
        ("what broke last time?", {"cases", "events"}),
        ("why did the API go down in March?", {"cases", "events"}),
        ("how do we ship to production?", {"patterns", "entities"}),
        ("where is the staging config?", {"patterns", "entities"}),
        ("do I prefer tabs or spaces?", {"preferences"}),
        ("which package manager does the frontend use?", None),
    ],
)
def test_what_a_question_asks_for(question: str, leans_to: set[str] | None) -> None:
    asked = asks_for(question)
    assert (None if asked is None else {str(c) for c in asked[1]}) == leans_to


def test_intent_boosts_the_categories_asked_for_and_drops_nothing(ctx: Context) -> None:
    outage = cand("The API was down for an hour: an expired certificate", 0.5, category="cases")
    staging = cand("Staging is rebuilt every night", 0.52, category="entities")
    said = cand("it broke again", 0.51, id="s1#4")
    said.is_message = True
    run = make_run(ctx, "what broke last time?")
    ranked = intent(run, [staging, said, outage])
    assert ranked[0] is outage and math.isclose(outage.score, 0.5 * INTENT_BOOST)
    # a boost, never a filter; a session message has no category of its own
    assert len(ranked) == 3 and math.isclose(said.score, 0.51)
    assert intent(make_run(ctx, "the staging rebuild"), [staging]) == [staging]
    assert math.isclose(staging.score, 0.52)


def test_a_message_of_tool_notes_is_never_alone_a_clear_match(ctx: Context) -> None:
    run = make_run(ctx, "what did we change in tui.py?", relevance_floor=0.0)
    run.word_weights = {"change": 1.0, "tui": 1.0, "py": 0.5}
    notes = "[tool Read: /src/app/tui.py]\n[tool Edit: /src/app/tui.py]"
    said = "I changed tui.py so the export uses the cached HTML."
    found = []
    # a command's output its client wrapped in its own tag (a /compact's hook output) is
    # no one's words either, however many of the query's it holds
    wrapped = f"<local-command-stdout>Compacted\n{said}\n</local-command-stdout>"
    for text in (notes, said, wrapped):
        message = Candidate(Memory(content=text, created_at=format_time(NOW)), is_message=True)
        message.ranks, message.raw = {"sessions": 1}, {"sessions": -4.0, "similarity": 0.5}
        found.append(message)
    fuse(run, found)
    tool, prose, output = found
    assert (tool.clear, prose.clear, output.clear) == (False, True, False)
    assert tool.score < prose.score and output.score < prose.score
    pasted = Candidate(Memory(content=f"<div>{said}</div>"), is_message=True)
    assert not pasted.only_tool_notes  # HTML a person pastes: a tag of one word
    assert tool.only_tool_notes and not prose.only_tool_notes
    # a sub-agent's tool notes are marked [subagent] first, and are notes all the same
    for text, notes_only in ((f"[subagent] {notes}", True), (f"[subagent] {said}", False)):
        marked = Candidate(Memory(content=text, created_at=format_time(NOW)), is_message=True)
        assert marked.only_tool_notes is notes_only


# What Codex sends as the first user message of every session once `memctl init` wrote
# ~/.codex/AGENTS.md (its block, shortened)
CODEX_AGENTS_MD = (
    "# AGENTS.md instructions\n\n<INSTRUCTIONS>\n<!-- memctl:begin -->\n"
    "## Long-term memory (memctl)\n\nYou have a long-term memory through the `memctl` MCP "
    "server.\n- Store (`memory_store`) durable facts worth keeping across sessions: "
    "decisions and their reasons, conventions, preferences the user states.\n"
    "<!-- memctl:end -->\n</INSTRUCTIONS>"
)


def test_a_message_of_injected_text_only_is_never_recalled(ctx: Context) -> None:
    """Codex's AGENTS.md message held every word of "which facts should be stored across
    sessions?" and came back clear, in memory_search's answers too: nobody said it."""
    said = "We decided to store the session tokens in Redis across restarts."
    said_in_session(ctx, [CODEX_AGENTS_MD, said])
    found = recall(ctx, "which facts should be stored across sessions?", touch=False, sessions=True)
    contents = [r.memory.content for r in found.results]
    assert said in contents and CODEX_AGENTS_MD not in contents
    # the same block with the user's own words after it is a message of theirs
    said_in_session(ctx, [f"{CODEX_AGENTS_MD}\nwhich facts are stored across sessions?"], "s2")
    again = recall(ctx, "which facts should be stored across sessions?", touch=False, sessions=True)
    assert any(r.memory.session_id == "s2" for r in again.results)


def test_a_memory_of_a_session_whose_message_shows_the_query_is_clear_too(ctx: Context) -> None:
    run = make_run(ctx, "where are the theme colours defined?")
    run.word_weights = {"theme": 1.0, "colours": 1.0, "defined": 1.0}
    said = "The theme colours are defined as CSS variables, blue and red for now."
    message = Candidate(
        Memory(content=said, created_at=format_time(NOW), session_id="s1"), is_message=True
    )
    message.ranks, message.raw = {"sessions": 1}, {"sessions": -4.0}

    def memory(content: str, session: str, distance: float) -> Candidate:
        made = cand(content, session_id=session)
        made.raw = {"vector": distance}
        return made

    # each holds one word of three: cosine 0.3 + 0.3 x 0.33 is short of the floor
    digest = memory("Session: make the theme green and yellow in globals.css", "s1", 0.7)
    elsewhere = memory("the theme of the retro was speed", "s2", 0.7)
    far = memory("the theme file moved", "s1", 0.9)  # cosine 0.1: no meaning of its own
    lone = make_run(ctx, run.query.text)
    lone.word_weights = run.word_weights
    assert fuse(lone, [digest]) == [] and not digest.clear  # no clear message beside it
    fuse(run, [message, digest, elsewhere, far])
    assert (message.clear, digest.clear, elsewhere.clear, far.clear) == (True, True, False, False)
    assert digest.match_why.endswith("and a message of its session shows it: shows relevance")
