"""Stage 1, candidates: the retrieval legs, each ``Run.depth`` x recall.candidates deep.

- vector: cosine nearest neighbours (store/vector_index.py, store/vector_query.py);
- bm25: FTS5 over content, abstract and tags, with the query's alternatives;
- time: when the query names a time, the nearest neighbours created inside it
  (so "what did we decide last week?" reaches last week's memories even when
  older ones are closer in meaning);
- sessions: unless ``--no-sessions``, raw session messages by BM25 and, through
  the vectors the slow path stored for them (store/message_vectors.py), by cosine
  (``session_vector``), so that they compete with memories on both legs; the best
  ``session_vectors`` of those no stored vector measures are embedded now.

It also weighs the query's content words by their rarity in the store (the
fuse stage asks how much of the query a candidate contains).

The full-text searches run in threads, each on a connection of its own to the
store (``Database.reader``): the messages' (started first: at a million messages it
is the longest) while the query's word weights are read, then the memories' (the
weights' counts spare it the memories that hold only a common word), while the
query is embedded and compared and the vector legs are searched, so that all three
overlap: none waits for another's connection. A leg that fails leaves a
warning and the others still answer. The vector modules bring numpy, so they
are imported where they are used: loading the CLI stays light
(tests/test_architecture.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Generic, NamedTuple, TypeVar

from memctl.errors import MemctlError, ModelError
from memctl.memories.injected import all_injected
from memctl.memories.told_back import TURN_SPAN, tells_back
from memctl.model import Memory, Role, format_time
from memctl.retrieve.answers import asking_words
from memctl.retrieve.named_projects import named_words
from memctl.retrieve.query import Analysed, Phrase, without_names
from memctl.retrieve.run import ADDED, Candidate, Run
from memctl.retrieve.stages.fuse import (
    RANKED_VECTOR_LEGS,
    VECTOR_LEGS,
    idf,
    memory_coverage,
    similarity,
)
from memctl.retrieve.stages.provenance import message_key
from memctl.retrieve.when import MONTHS, WEEKDAYS
from memctl.store.database import Database
from memctl.store.meaning import plain_vectors_for
from memctl.store.memories import (
    WordCounts,
    fts_rank,
    get_memories,
    holds_any,
    phrase_document_counts,
    word_document_counts,
)
from memctl.store.message_search import MessageHit, message_role, phrases_said, search_messages
from memctl.store.questions import question_fts, question_owners, question_word_counts
from memctl.store.transcripts import turns_before

STAGE = "candidates"
T = TypeVar("T")


def _bm25(
    run: Run, reader: Database, size: int, words: list[Phrase], counts: WordCounts
) -> list[tuple[str, float]]:
    """The query's own ``words`` (their ``counts`` spare scoring the memories that hold
    only a common one: store/pruned_bm25.py), and its vocabulary's at ``vocabulary_weight``
    (vocabulary.py): synonyms as ``with_synonyms``, a kind's instances as
    ``with_instances``."""
    own = fts_rank(reader, words, size, run.where, counts) if words else []
    weight = run.params.vocabulary_weight
    if weight <= 0:
        return own
    if run.query.expansions:
        own = with_synonyms(own, fts_rank(reader, run.query.expansions, size, run.where), weight)
    if run.query.instances:
        own = with_instances(own, fts_rank(reader, run.query.instances, size, run.where), weight)
    return own


def with_synonyms(
    own: list[tuple[str, float]], synonyms: list[tuple[str, float]], weight: float
) -> list[tuple[str, float]]:
    """(id, bm25) of both searches' hits, best first (FTS5's BM25 is negative, lower is
    better): a memory the query's own words find keeps their BM25; one only the synonyms
    find gets ``weight`` x its BM25 for them, and at least the weakest own hit's, so that
    it does not stretch the leg's range (fuse maps BM25 onto [0, 1] over the hits: a
    weaker bottom would lift every own hit above the weakest). Synonyms find what the
    words miss; they do not add to what the words found (the word share counts a synonym
    for a word the memory lacks, fuse.coverage)."""
    scores = dict(own)
    weakest = max(scores.values(), default=0.0)
    for memory_id, score in synonyms:
        scores.setdefault(memory_id, min(weight * score, weakest) if own else weight * score)
    return sorted(scores.items(), key=lambda hit: hit[1])  # stable: ties keep the search's order


def with_instances(
    own: list[tuple[str, float]], instances: list[tuple[str, float]], weight: float
) -> list[tuple[str, float]]:
    """(id, bm25) of both searches' hits, best first: a memory holding an instance of a
    kind the query names ("pets": "dog") adds ``weight`` x its BM25 for the instances to
    its own: it holds what the kind's word stands for, beside the query's other words
    ("Nate"), as a synonym stands for a word the memory lacks."""
    scores = dict(own)
    for memory_id, score in instances:
        scores[memory_id] = scores.get(memory_id, 0.0) + weight * score
    return sorted(scores.items(), key=lambda hit: hit[1])  # stable: ties keep the search's order


class _Background(Generic[T]):
    """Run one function in a thread (or at once, when ``inline``); ``join()`` returns its
    result or raises its error."""

    def __init__(self, work: Callable[[], T], inline: bool = False) -> None:
        self._result: T
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        if inline:
            self._run(work)
        else:
            self._thread.start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._result = work()
        except BaseException as exc:  # handed to the caller's thread by join()
            self._error = exc

    def join(self) -> T:
        if self._thread.is_alive():
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


def _embed_query(run: Run, size: int) -> None:
    """The query vector, its similarity to every stored vector and the vector leg's first
    ``size``-deep search (no SQL: runs beside FTS)."""
    index = run.index
    assert index is not None
    model = index.manifest
    if model is None:  # no memory has a vector yet: nothing to compare with
        return
    embedder = run.ctx.embedder
    ranked = without_names(run.query.text, run.common_names)
    texts = [ranked] if ranked == run.query.text else [ranked, run.query.text]
    vector, *asked = run.ctx.query_vectors(texts)
    if (embedder.name, len(vector)) != (model.model, model.dim):
        raise ModelError(
            f"this store's vectors were made by {model.model} ({model.dim}-d), not the "
            f"configured {embedder.name}; run `memctl reembed`"
        )
    from memctl.store.vector_query import Scores

    run.scores = Scores(index, vector).prepare(size)
    run.asked = Scores(index, asked[0]) if asked else None


def _vector_legs(run: Run, size: int) -> dict[str, list[tuple[str, float]]]:
    """The vector leg and, when the query names a time, the time leg."""
    if run.scores is None or run.index is None:
        return {}
    from memctl.store.vector_query import nearest

    index, scores = run.index, run.scores
    legs = {"vector": nearest(index, scores, size, run.where)}
    run.vector_leg = (size, legs["vector"])
    window = run.query.window
    if window is not None:
        end = format_time(window.end)
        before = min(end, run.where.before) if run.where.before else end
        inside = replace(run.where, since=format_time(window.start), before=before)
        legs["time"] = nearest(index, scores, size, inside)
    return legs


def gather(run: Run, size: int) -> tuple[dict[str, list[tuple[str, float]]], dict[str, Memory]]:
    """Every leg's ranked (id, raw score) hits, the memories the BM25 leg found, and the
    query's word weights; failures become notes."""
    legs: dict[str, list[tuple[str, float]]] = {}
    # inside a transaction the reader is the store's own connection, which serves one
    # thread at a time (apsw raises ThreadingViolationError): search before, not beside.
    # Chosen here, not in the thread: even asking the connection whether it is in a
    # transaction is a use of it, and this thread goes on using it at once.
    reader = run.ctx.db.reader()

    # the words are counted first: a query naming a name the store mentions everywhere may
    # search without it (Weighed), and the counts spare BM25 scoring what a common word alone
    # matches
    weighed = word_weights(run)
    run.word_weights, run.anchors, run.strangers, run.common_names = weighed[:4]
    run.held = weighed.counts[1]
    fts = _Background(lambda: _bm25_found(run, reader, size, weighed), inline=reader is run.ctx.db)
    # numpy, imported by the vector legs, loads while the full-text searches run (a
    # process of its own: ~50 ms of CPU)
    from memctl.store.vector_index import vector_index

    run.index = vector_index(run.ctx.db)
    try:
        _embed_query(run, size)
    except MemctlError as exc:
        run.failed_legs.add("vector")
        run.notes.append(f"vector search unavailable, results from BM25 alone: {exc}")
    vector_legs = _vector_legs(run, size)
    found: dict[str, Memory] = {}
    try:
        legs["bm25"], found = fts.join()
    except MemctlError as exc:
        run.failed_legs.add("bm25")
        run.notes.append(f"full-text search unavailable, results from vectors alone: {exc}")
    legs.update(vector_legs)
    legs.update(_question_legs(run, size))
    if run.translation is not None:
        legs.update(_translated_legs(run, run.translation, size))
    return legs, found


def _bm25_found(
    run: Run, reader: Database, size: int, weighed: Weighed
) -> tuple[list[tuple[str, float]], dict[str, Memory]]:
    """The BM25 leg's hits and their memories, each measured for the query's words it holds
    (fuse.memory_coverage): work done in the search's thread, beside the query's
    embedding, not after it."""
    hits = _bm25(run, reader, size, weighed.bm25_words, weighed.counts)
    memories = get_memories(reader, [memory_id for memory_id, _ in hits])
    for memory in memories.values():
        memory_coverage(run, memory)
    return hits, memories


def _question_legs(run: Run, size: int) -> dict[str, list[tuple[str, float]]]:
    """The questions stored with memories (store/questions.py), as hits of their memories:
    by BM25 (the query's words, sparing the questions that hold only a common one, its
    vocabulary at ``vocabulary_weight``) and by cosine
    (the best of each memory's questions, searched in their own vector index as the
    memories' own vectors are: store/vector_index.py QUESTION_VECTORS)."""
    legs: dict[str, list[tuple[str, float]]] = {}
    db, where = run.ctx.db, run.where
    counts = question_word_counts(db, run.query.words)
    own = question_fts(db, run.query.alternatives, size, where, counts)
    weight = run.params.vocabulary_weight
    if run.query.expansions and weight > 0:
        own = with_synonyms(own, question_fts(db, run.query.expansions, size, where), weight)
    if own:
        legs["questions"] = own
    if run.scores is not None and run.index is not None:
        from memctl.store.vector_index import QUESTION_VECTORS, vector_index
        from memctl.store.vector_query import Scores, nearest

        index = vector_index(db, QUESTION_VECTORS)
        hits = nearest(index, Scores(index, run.scores.query), size, where, question_owners)
        if hits:  # a stable sort: ties keep the index's (rowid) order, never a random id's
            legs["question_vector"] = sorted(hits, key=lambda hit: hit[1])
    return legs


def _translated_legs(run: Run, english: Analysed, size: int) -> dict[str, list[tuple[str, float]]]:
    """The dual pass: BM25 and vectors again with the query's English translation."""
    legs = {"bm25_en": fts_rank(run.ctx.db, english.alternatives, size, run.where)}
    if run.scores is not None and run.index is not None:
        from memctl.store.vector_query import Scores, nearest

        vector = run.ctx.embedder.embed([english.text])[0]
        legs["vector_en"] = nearest(run.index, Scores(run.index, vector), size, run.where)
    return legs


def candidates(run: Run, _: list[Candidate]) -> list[Candidate]:
    """Stage 1: the union of the legs' hits, with each leg's rank and raw score."""
    size = run.depth * run.params.candidates
    words = _message_words(run, size) if run.sessions else None
    legs, memories = gather(run, size)
    by_id: dict[str, Candidate] = {}
    rest = {i for hits in legs.values() for i, _ in hits if i not in memories}
    memories = {**memories, **get_memories(run.ctx.db, list(rest))}
    for leg, hits in legs.items():
        for rank, (memory_id, raw) in enumerate(hits, start=1):
            if memory_id not in memories:
                continue  # removed since the search
            candidate = by_id.setdefault(memory_id, Candidate(memories[memory_id]))
            candidate.ranks[leg] = rank
            candidate.raw[leg] = raw
    found = list(by_id.values())
    _add_similarities(run, [c for c in found if not any(leg in c.raw for leg in VECTOR_LEGS)])
    _as_asked(run, found)
    _own_meaning(run, found)
    if words is not None:
        found += _session_candidates(run, size, words)
    # every leg found fewer rows than it asked for: a deeper search would find no more
    run.searched_out = max((r for c in found for r in c.ranks.values()), default=0) < size
    for candidate in found:
        legs_found = ", ".join(f"{leg} #{rank}" for leg, rank in candidate.ranks.items())
        run.record(STAGE, candidate, ADDED, why=f"found by {legs_found}")
    return found


def _add_similarities(run: Run, unmeasured: list[Candidate]) -> None:
    """The cosine similarity of candidates no vector leg found, so every candidate's
    relevance can be judged on its meaning too."""
    if run.scores is None or run.index is None or not unmeasured:
        return
    from memctl.store.vector_query import similarities_of

    found = similarities_of(run.index, run.scores, [c.id for c in unmeasured])
    for candidate in unmeasured:
        if candidate.id in found:
            candidate.raw["similarity"] = 1.0 - found[candidate.id]


def _own_meaning(run: Run, found: list[Candidate]) -> None:
    """The cosine of each memory whose searched vector also names what it mentions to its
    content alone (store/meaning.py), the better of the query as ranked and as asked, as
    ``_as_asked`` weighs them: the names find and rank it; whether it is what the query is
    about is read from what it says."""
    if run.scores is None or not found:
        return
    import numpy as np

    plain = plain_vectors_for(run.ctx.db, [c.id for c in found])
    queries = [run.scores.query, *([run.asked.query] if run.asked is not None else [])]
    for candidate in found:
        if candidate.id in plain:
            vector = np.frombuffer(plain[candidate.id], dtype=np.float32)
            candidate.own = max(float(vector @ query) for query in queries)


class Weighed(NamedTuple):
    """What the store says of the query's words and names (``word_weights``)."""

    weights: dict[str, float]
    anchors: frozenset[str]
    strangers: frozenset[str]
    common_names: frozenset[str]
    bm25_words: list[Phrase]  # what the BM25 leg searches
    counts: WordCounts  # how many memories hold each word (every word of the query)


def _as_asked(run: Run, found: list[Candidate]) -> None:
    """With the query's common names left out of the vector that searched and ranks
    (``common_name_share``), each memory's cosine to that vector ranks it (``centred``, as
    fuse.ranking_similarity reads it); its evidence (the raw vector legs, which the
    relevance gate and the per-prompt block's floor weigh) is the better of that cosine
    and its cosine to the query as asked: the name makes the memories holding it
    relevant, not one of them the answer (by that cosine alone, the per-prompt block
    lost a sixth of its evidence on LoCoMo: docs/benchmarks.md)."""
    if run.asked is None or run.index is None:
        return
    from memctl.store.vector_query import similarities_of

    measured = [c for c in found if not c.is_message and similarity(c) is not None]
    asked = similarities_of(run.index, run.asked, [c.id for c in measured])
    for candidate in measured:
        if candidate.id not in asked:
            continue
        candidate.centred = similarity(candidate, RANKED_VECTOR_LEGS)
        for leg in (*VECTOR_LEGS, "similarity"):
            if leg in candidate.raw:
                candidate.raw[leg] = min(candidate.raw[leg], 1.0 - asked[candidate.id])


def word_weights(run: Run) -> Weighed:
    """The query's content words, each weighted by its rarity among the memories; the
    names it holds that at least ``anchor_memories`` memories mention (anchors: not
    all-capital ones, days or months, as for strangers below); those no
    memory (nor, with session messages in the ranking, any message) mentions
    (strangers), but for all-capital ones ("OK", "PR", "API" are as often words), those
    whose other words it mentions (``core_of``) and days and months, which name a time,
    not a subject (and, in a large store, the software terms it never names:
    ``_unknown_terms``); and the anchors
    at least ``common_name_share`` of the memories mention (common names). The BM25 leg
    searches the query's words without its common names when no memory holds any other
    of them: a name alone ranks the memories holding it by their length, not their
    meaning (the names rule and the vector leg find them)."""
    words = run.query.words
    documents, containing = word_document_counts(run.ctx.db, words)
    weights = {w: idf(documents, containing.get(w, 0)) for w in words}
    held = (documents, {w: containing.get(w, 0) for w in words})
    terms = _unknown_terms(run, documents, containing)
    if not run.query.names:
        return Weighed(weights, frozenset(), terms, frozenset(), run.query.alternatives, held)
    phrases = {name: tuple(w.lower() for w in name.split()) for name in run.query.names}
    synonyms = {name: _synonyms_of(run, phrase) for name, phrase in phrases.items()}
    cores = {name: core_of(name) for name in phrases}
    wanted = [
        *phrases.values(),
        *(p for found in synonyms.values() for p in found),
        *(core for core in cores.values() if core),
    ]
    counts = phrase_document_counts(run.ctx.db, wanted)
    least = run.params.anchor_memories
    mentions = {name: counts.get(" ".join(phrase), 0) for name, phrase in phrases.items()}
    # a name the store writes in other words ("PRs": pull requests) is no stranger, nor one
    # whose words other than its all-capital ones it mentions ("Windows PC": Windows)
    known = {n for n, found in synonyms.items() if any(counts.get(" ".join(p)) for p in found)}
    known |= {n for n, core in cores.items() if core and counts.get(" ".join(core))}
    unknown = {
        name
        for name, n in mentions.items()
        if n == 0 and name not in known and could_be_stranger(name)
    }
    if unknown and run.named_projects:  # the name of a project the question names
        known_names = named_words(run.named_projects)
        unknown = {name for name in unknown if not set(phrases[name]) <= known_names}
    if unknown and run.sessions:  # a name the session messages say is no stranger to them
        asked = [p for name in sorted(unknown) for p in (phrases[name], cores[name]) if p]
        said = phrases_said(run.ctx.db, asked)
        unknown = {
            name for name in unknown if not said & {" ".join(phrases[name]), " ".join(cores[name])}
        }
    unknown |= terms
    anchors = frozenset(
        name for name, n in mentions.items() if least and n >= least and could_be_stranger(name)
    )
    share = run.params.common_name_share
    common = frozenset(
        name for name in anchors if share and mentions[name] >= share * max(documents, 1)
    )
    alone = {w.lower() for name in common for w in name.split()}
    if alone and not any(containing.get(w) for w in words if w not in alone):
        searched = [p for p in run.query.alternatives if not set(p) <= alone]
    else:
        searched = run.query.alternatives
    return Weighed(weights, anchors, frozenset(unknown), common, searched, held)


def _unknown_terms(run: Run, documents: int, containing: dict[str, int]) -> frozenset[str]:
    """The query's software terms (words of the vocabulary: "k6", "gdpr", "helm") that no
    memory holds in any of their spellings, in a store of at least ``TERMS_KNOWN_FROM``
    memories (nor, with session messages in the ranking, any message): a term a large store
    of a developer's notes never names says the question is about something it does not
    keep, as a stranger's name does. A small store names few of the terms it could. A
    word naming a kind ("pets") is no such term, nor is a verb ("drive"): a store without
    pets is not about something else. Nor is the word by which the question asks for its
    kind of answer ("command for the unit tests?": answers.asking_words): notes write a
    command in backticks and never call it one."""
    if documents < TERMS_KNOWN_FROM or not run.params.strangers_veto:
        return frozenset()
    unknown = set()
    told = run.query.kinds | run.query.verbs | asking_words(run.query.text)
    for word, found in run.query.synonyms.items():
        spellings = [(word,), *found]
        if not found or word in told or containing.get(word):
            continue
        if holds_any(run.ctx.db, spellings):
            continue
        if not (run.sessions and phrases_said(run.ctx.db, spellings)):
            unknown.add(word)
    return frozenset(unknown)


def _synonyms_of(run: Run, name: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The vocabulary's synonyms of a name's words (none when the weight is 0)."""
    if run.params.vocabulary_weight <= 0:
        return ()
    return tuple(p for word in name for p in run.query.synonyms.get(word, ()))


CALENDAR = frozenset((*MONTHS, *WEEKDAYS))
# Memories from which a software term the store never names is a stranger (_unknown_terms):
# in a store of 30 developer notes, most of the vocabulary's terms are missing and a
# reworded question uses them ("timestamps", "permissions"); density.LOCAL_ROWS's size
# (docs/benchmarks.md, "Software terms the store never names").
TERMS_KNOWN_FROM = 200


def core_of(name: str) -> tuple[str, ...]:
    """A name's words but its all-capital ones, lower-cased, when it has both kinds (else
    none): "Windows PC" is Windows's PC, as "US English" is English. An all-capital word
    is as often a word ("PC", "VM", "US") as a name, and alone is never a stranger
    (``could_be_stranger``): beside a name the store knows, it makes none of the name
    either (fresh7's "the Windows PC", in sessions saying Windows and never "Windows PC",
    vetoed every answer: docs/benchmarks.md, "fresh7 read and repaired")."""
    words = name.split()
    kept = tuple(w.lower() for w in words if w != w.upper())
    return kept if 0 < len(kept) < len(words) else ()


def could_be_stranger(name: str) -> bool:
    """Whether a name the store never mentions says the query is about something else: not
    when written in capitals only, nor when it is days or months ("Sundays", "May")."""
    words = [w.lower().removesuffix("s") for w in name.split()]
    return name != name.upper() and not all(w in CALENDAR for w in words)


def _message_distances(run: Run, texts: list[str]) -> list[float]:
    """Cosine distances of the first ``session_vectors`` texts to the query (none without a
    query vector)."""
    if run.scores is None or not texts:
        return []
    vectors = run.ctx.embedder.embed(texts[: run.params.session_vectors])
    return [1.0 - float(v @ run.scores.query) for v in vectors]


class _StoredMessageVectors:
    """The session messages' stored vectors (store/message_vectors.py) against the query."""

    def __init__(self, run: Run) -> None:
        from memctl.store.message_vectors import message_vector_index
        from memctl.store.vector_query import Scores

        self.index = message_vector_index(run.ctx.db)
        assert run.scores is not None
        self.scores = Scores(self.index, run.scores.query)

    def nearest(self, run: Run, size: int) -> list[tuple[MessageHit, float]]:
        from memctl.store.message_vectors import nearest_messages

        return nearest_messages(self.index, self.scores, size, run.where)

    def distances(self, keys: list[str]) -> dict[str, float]:
        from memctl.store.message_vectors import message_distances

        return message_distances(self.index, self.scores, keys)


def _stored_vectors(run: Run) -> _StoredMessageVectors | None:
    """The stored vectors, when the query has a vector and some message has one (and
    ``message_vectors`` is not off: auto searches what the slow path kept)."""
    if run.params.message_vectors == "off" or run.scores is None or run.index is None:
        return None
    if run.index.manifest is None:
        return None
    stored = _StoredMessageVectors(run)
    return stored if stored.scores.total else None


# The connection of the messages' full-text search (Database.reader): the memories' one
# runs at the same time on the first.
MESSAGES_LANE = 1


def _message_words(run: Run, size: int) -> _Background[list[MessageHit]]:
    """The messages' BM25 search, started in a thread of its own (at once, inside a
    transaction)."""
    reader = run.ctx.db.reader(MESSAGES_LANE)
    return _Background(lambda: _search_messages(run, reader, size), inline=reader is run.ctx.db)


def _search_messages(run: Run, reader: Database, size: int) -> list[MessageHit]:
    """The messages the query's words find and, as for the memories (``with_instances``),
    those holding an instance of a kind it names ("pets": "this is Max, my dog")."""
    hits = search_messages(reader, run.query.alternatives, size, run.where)
    weight = run.params.vocabulary_weight
    if weight > 0 and run.query.instances:
        named = search_messages(reader, run.query.instances, size, run.where)
        by_key = {h.key: h for h in (*named, *hits)}
        scores = with_instances(
            [(h.key, h.score) for h in hits], [(h.key, h.score) for h in named], weight
        )
        hits = [replace(by_key[key], score=score) for key, score in scores[:size]]
    for hit in hits:  # as for the memories' (_bm25_found), when the words are weighed by now
        memory_coverage(run, hit.as_memory())
    return hits


def _session_candidates(
    run: Run, size: int, words: _Background[list[MessageHit]]
) -> list[Candidate]:
    """Raw session messages as candidates (episodic, peripheral, importance 0.5): those
    their ``words`` find (BM25, searched since the stage began) and those their stored
    vectors find (the closest part of each message), each with its rank on its leg; a
    message the words found has its stored vectors' distance too (or, with
    ``session_vectors``, one embedded now). Not a message of injected text only."""
    try:
        stored = _stored_vectors(run)
        close = stored.nearest(run, size) if stored else []
    except MemctlError as exc:
        run.notes.append(f"session messages not compared by meaning: {exc}")
        stored, close = None, []
    try:
        hits = words.join()
    except MemctlError as exc:
        run.notes.append(f"session search unavailable: {exc}")
        hits = []
    try:
        measured = stored.distances([h.key for h in hits]) if stored else {}
    except MemctlError as exc:
        run.notes.append(f"session messages not compared by meaning: {exc}")
        measured = {}
    found: dict[str, Candidate] = {}
    for rank, hit in enumerate(hits, start=1):
        raw = {"sessions": hit.score}
        if hit.key in measured:
            raw["similarity"] = measured[hit.key]
        found[hit.key] = Candidate(hit.as_memory(), {"sessions": rank}, raw, is_message=True)
    for rank, (hit, distance) in enumerate(close, start=1):
        candidate = found.setdefault(hit.key, Candidate(hit.as_memory(), {}, {}, is_message=True))
        candidate.ranks["session_vector"] = rank
        candidate.raw["session_vector"] = distance
    # a message that is only what its client injected (Codex sends AGENTS.md, memctl's own
    # instructions, as a user message in every session) answers nothing: it goes, and the
    # others keep their ranks
    kept = [c for c in found.values() if not all_injected(c.memory.content)]
    _embed_now(run, [c for c in kept if not _measured(c)])
    _mark_told_back(run, kept)
    return kept


def _mark_told_back(run: Run, messages: list[Candidate]) -> None:
    """Mark each assistant's reply that tells memctl's own answer back, by the turn before
    it (memories/told_back.py): one query for them all. A message of tool notes only is
    second-hand already (``Candidate.says_nothing``): its turn is not read."""
    keys = {
        c.id: key
        for c in messages
        if message_role(c.memory) == Role.ASSISTANT
        and not c.only_tool_notes
        and (key := message_key(c)) is not None
    }
    turns = turns_before(run.ctx.db, list(keys.values()), TURN_SPAN)
    for candidate in messages:
        key = keys.get(candidate.id)
        candidate.told_back = key is not None and tells_back(turns.get(key, []))


def _measured(candidate: Candidate) -> bool:
    return "session_vector" in candidate.raw or "similarity" in candidate.raw


def _embed_now(run: Run, unmeasured: list[Candidate]) -> None:
    """The first ``session_vectors`` of the messages no stored vector measured, embedded
    now and compared with the query."""
    try:
        distances = _message_distances(run, [c.memory.content for c in unmeasured])
    except MemctlError as exc:
        run.notes.append(f"session messages not compared by meaning: {exc}")
        return
    for candidate, distance in zip(unmeasured, distances, strict=False):
        candidate.raw["session_vector"] = distance
