"""Stage 11, spread: spreading activation over relations from the top results.

The best ``spread_seeds`` candidates pass activation along relations in both
directions, for at most ``spread_hops`` hops: each hop multiplies it by the
edge's weight and by ``spread_decay``. The strongest path wins. A memory
reached only through the graph joins the results, and says through which path;
a candidate whose activation beats its own score is raised to it. A memory so
reached is a possible match (``run.label_added``): related to a match, it shows
nothing of its own about the question (docs/benchmarks.md, "A relation lends no
label").
"""

from __future__ import annotations

from memctl.retrieve.run import ADDED, KEPT, RESCORED, Candidate, Run, by_score
from memctl.store.memories import get_memories
from memctl.store.relations import relations_touching

STAGE = "spread"
# Memories passed on to the next hop, strongest first: bounds the work on dense graphs.
FRONTIER = 64

Reached = tuple[float, tuple[str, ...]]  # (activation, path: id, relation, id, ...)


def activate(run: Run, seeds: list[Candidate]) -> dict[str, Reached]:
    """The strongest activation (and its path) of every memory within reach of the seeds."""
    decay = run.params.spread_decay
    frontier: dict[str, Reached] = {c.id: (c.score, (c.id,)) for c in seeds}
    best: dict[str, Reached] = {}
    for _ in range(run.params.spread_hops):
        reached: dict[str, Reached] = {}
        for edge in relations_touching(run.ctx.db, list(frontier)):
            for src, dst in ((edge.src_id, edge.dst_id), (edge.dst_id, edge.src_id)):
                if src not in frontier or dst in frontier[src][1]:
                    continue
                value, path = frontier[src]
                value *= edge.weight * decay
                if value > reached.get(dst, (0.0,))[0]:
                    reached[dst] = (value, (*path, str(edge.type), dst))
        for memory_id, hit in reached.items():
            if hit[0] > best.get(memory_id, (0.0,))[0]:
                best[memory_id] = hit
        strongest = sorted(reached.items(), key=lambda item: -item[1][0])[:FRONTIER]
        frontier = dict(strongest)
        if not frontier:
            break
    return best


def describe(path: tuple[str, ...]) -> str:
    """``a --supports--> b --related--> c`` with short ids."""
    text = path[0][:8]
    for relation, memory_id in zip(path[1::2], path[2::2], strict=True):
        text += f" --{relation}--> {memory_id[:8]}"
    return text


def spread(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    p = run.params
    if p.spread_hops <= 0 or p.spread_seeds <= 0 or not candidates:
        return candidates
    seeds = [c for c in candidates[: p.spread_seeds] if not c.is_message]
    reached = activate(run, seeds)
    by_id = {c.id: c for c in candidates}
    fresh = get_memories(run.ctx.db, [i for i in reached if i not in by_id], run.where)
    for candidate in candidates:
        value, path = reached.get(candidate.id, (0.0, ()))
        if value > candidate.score:
            factor = value / candidate.score if candidate.score else 1.0
            candidate.score, candidate.via = value, path
            candidate.factors[STAGE] = factor
            run.record(STAGE, candidate, RESCORED, factor, f"raised by the graph: {describe(path)}")
        else:
            candidate.factors[STAGE] = 1.0
            run.record(STAGE, candidate, KEPT, 1.0)
    for memory_id, memory in fresh.items():
        value, path = reached[memory_id]
        added = Candidate(memory, score=value, via=path, factors={STAGE: value})
        run.record(STAGE, added, ADDED, value, f"reached only through the graph: {describe(path)}")
        candidates.append(added)
    return by_score(candidates)
