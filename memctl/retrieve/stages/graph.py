"""Stage 5, graph: the query's entities and their one- and two-hop neighbourhood.

The query's words and names are looked up among the stored entities' aliases
("postgres" finds PostgreSQL). Each live triple touching one of them (one hop)
or touching an entity such a triple leads to (two hops) is scored by the share
of the query's other content words (weighted by rarity) its predicate and far
end hold (both edges' words, for a two-hop path, whose first edge must hold some
of them and whose second edge too). A memory
stating a matching one-hop edge is lifted to ``recall.graph_share`` of the best score
times that share, or joins the results when it is not a candidate; a two-hop path
lifts its memories that are candidates, and when none is, becomes one synthetic
result ("Bob → moved to → Berlin; Bob → works as → nurse (from memories A, B)"),
which is never touched nor stored. ``--explain`` shows the path.
"""

from __future__ import annotations

import re

from memctl.memories.provenance import GRAPH_SOURCE
from memctl.model import Category, Kind, Memory
from memctl.retrieve.run import ADDED, KEPT, RESCORED, Candidate, Run, by_score
from memctl.retrieve.stages.fuse import stem
from memctl.store.graph import (
    GraphEntity,
    GraphTriple,
    attach_sources,
    entities_by_keys,
    triples_touching,
)
from memctl.store.memories import get_memories

STAGE = "graph"
# The stage's constants are settings: recall.graph_share (a fully matching edge's memory
# gets that share of the best candidate's score), recall.graph_min_match,
# recall.graph_entities, recall.graph_edges and recall.graph_synthetic, with their
# sources in memctl/config/sources.py.
# Query n-grams looked up as aliases: up to this many words.
MAX_NGRAM = 3
TOKEN = re.compile(r"[\w.+#-]*\w")
WORD = re.compile(r"[^\W_]+")
SYNTHETIC = GRAPH_SOURCE  # the source of a synthetic result

Path = tuple[GraphTriple, ...]


def query_entities(run: Run) -> list[GraphEntity]:
    """The stored entities the query names (its names, then its word n-grams)."""
    tokens = [t.casefold() for t in TOKEN.findall(run.query.text)]
    keys = [" ".join(n.casefold().split()) for n in run.query.names]
    for size in range(MAX_NGRAM, 0, -1):
        keys += [" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)]
    found = entities_by_keys(run.ctx.db, list(dict.fromkeys(keys)))
    unique = {e.id: e for e in (found[k] for k in keys if k in found)}
    return list(unique.values())[: run.params.graph_entities]


def _terms(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in WORD.findall(text.casefold()))


class Matcher:
    """The share of the query's content words, other than its entities' own, that a
    path's words hold (weighted by rarity); each edge's words are read once."""

    def __init__(self, weights: dict[str, float], named: set[str]) -> None:
        self.asked: dict[str, float] = {}
        for word, weight in weights.items():
            term = stem(word.casefold())
            if term not in named:
                self.asked[term] = weight
        self.total = sum(self.asked.values())
        self._terms: dict[int, frozenset[str]] = {}

    def terms(self, edge: GraphTriple) -> frozenset[str]:
        found = self._terms.get(edge.id)
        if found is None:
            found = self._terms[edge.id] = _terms(edge.text)
        return found

    def share(self, path: Path) -> float:
        if not self.total:
            return 0.0
        terms = frozenset().union(*(self.terms(edge) for edge in path))
        return sum(v for w, v in self.asked.items() if w in terms) / self.total


def paths(run: Run, seeds: list[GraphEntity]) -> list[tuple[float, Path]]:
    """Matching one- and two-hop paths from the query's entities, best first. A two-hop
    path goes through an edge holding some of the query's words, and counts the words of
    both its edges."""
    matcher = Matcher(run.word_weights, set().union(*(_terms(e.name) for e in seeds)))
    if not matcher.total:
        return []
    seed_ids = {e.id for e in seeds}
    least, most = run.params.graph_min_match, run.params.graph_edges
    found: list[tuple[float, Path]] = []
    bridges: dict[int, GraphTriple] = {}
    # only the edges the memories of this recall's scopes state: another project's many
    # edges of a shared name ("Alice") would otherwise use up ``most``
    db, scopes = run.ctx.db, run.where.scopes
    for edge in triples_touching(db, list(seed_ids), limit=most, scopes=scopes, sources=False):
        share = matcher.share((edge,))
        if share >= least:
            found.append((share, (edge,)))
        if share > 0:
            for end in (edge.subject, edge.object):
                if end.id not in seed_ids:
                    bridges.setdefault(end.id, edge)
    second = (
        triples_touching(db, list(bridges), limit=most, scopes=scopes, sources=False)
        if bridges
        else []
    )
    for edge in second:
        via = bridges.get(edge.subject.id) or bridges.get(edge.object.id)
        if via is None or edge.id == via.id or matcher.share((edge,)) <= 0:
            continue
        share = matcher.share((via, edge))
        if share >= least:
            found.append((share, (via, edge)))
    # only the matching paths' edges need their sources (a hub's edges have thousands)
    attach_sources(
        db, list({id(edge): edge for _, path in found for edge in path}.values()), scopes
    )
    return sorted(found, key=lambda item: -item[0])


def describe(path: Path) -> str:
    return "; ".join(edge.text for edge in path)


def _live_sources(edge: GraphTriple) -> list[str]:
    return [s.memory_id for s in edge.sources if s.state == "active"]


def synthetic(path: Path, score: float, seen: frozenset[str] | None = None) -> Candidate:
    """One result standing for a two-hop path that no candidate states, citing its sources
    (those of ``seen``, the memories this recall may show, when given)."""
    every = dict.fromkeys(m for edge in path for m in _live_sources(edge))
    sources = [m for m in every if seen is None or m in seen]
    text = f"{describe(path)} (from memories {', '.join(m[:8] for m in sources)})"
    memory = Memory(
        content=text,
        l0_abstract=text,
        kind=Kind.SEMANTIC,
        category=Category.ENTITIES,
        source=SYNTHETIC,
        id=f"{SYNTHETIC}:{'-'.join(str(e.id) for e in path)}",
    )
    return Candidate(memory, score=score, via=tuple(sources), factors={STAGE: score})


def graph(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    gain = run.params.graph_share
    if not candidates or not run.word_weights or gain <= 0 or run.params.graph_entities <= 0:
        return candidates
    seeds = query_entities(run)
    found = paths(run, seeds) if seeds else []
    if not found:
        return candidates
    top = max(c.score for c in candidates)
    by_id = {c.id: c for c in candidates}
    lifts: dict[str, tuple[float, Path]] = {}
    uncovered: list[tuple[float, Path]] = []
    for share, path in found:
        sources = {m for edge in path for m in _live_sources(edge)}
        if len(path) == 2 and not sources & by_id.keys():
            uncovered.append((share, path))
            continue
        for memory_id in sources if len(path) == 1 else sources & by_id.keys():
            if share * top * gain > lifts.get(memory_id, (0.0,))[0]:
                lifts[memory_id] = (share * top * gain, path)
    fresh = get_memories(run.ctx.db, [i for i in lifts if i not in by_id], run.where)
    for memory_id, memory in fresh.items():
        value, path = lifts[memory_id]
        added = Candidate(memory, score=value, factors={STAGE: value})
        run.record(STAGE, added, ADDED, value, f"states {describe(path)}")
        candidates.append(added)
    for candidate in candidates:
        value, path = lifts.get(candidate.id, (0.0, ()))
        if candidate.id in fresh:
            continue
        if value > candidate.score:
            factor = value / candidate.score if candidate.score else 1.0
            candidate.score, candidate.factors[STAGE] = value, factor
            run.record(STAGE, candidate, RESCORED, factor, f"states {describe(path)}")
        else:
            candidate.factors[STAGE] = 1.0
            run.record(STAGE, candidate, KEPT, 1.0)
    # A path is told only when each of its edges is stated by a memory this recall may
    # show: another project's memories never speak through the graph.
    cited = {m for _, path in uncovered for edge in path for m in _live_sources(edge)}
    seen = frozenset(get_memories(run.ctx.db, list(cited), run.where)) if cited else frozenset()
    told = [
        (share, path)
        for share, path in uncovered
        if all(seen.intersection(_live_sources(edge)) for edge in path)
    ]
    for share, path in told[: run.params.graph_synthetic]:
        added = synthetic(path, share * top * gain, seen)
        run.record(STAGE, added, ADDED, added.score, f"the graph path {describe(path)}")
        candidates.append(added)
    return by_score(candidates)


def is_synthetic(memory: Memory) -> bool:
    """Whether a result stands for a graph path rather than a stored memory."""
    return memory.source == SYNTHETIC and memory.id.startswith(f"{SYNTHETIC}:")
