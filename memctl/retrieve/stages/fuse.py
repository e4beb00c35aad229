"""Stage 2, fuse: one score from the legs' scores, and only candidates with evidence of
their own go on.

Ranking: a weighted sum of each leg's scores mapped linearly onto [0, 1] over
its hits (cosine similarity for the vector legs, BM25 for the full-text legs):
a leg's confident first hit keeps its weight, however long the other leg's
tail. (Measured against reciprocal rank fusion in docs/benchmarks.md.) Plus
``weight_words`` x the share of the query's content words the candidate holds:
BM25 sums its words' weights, so one rare word can outweigh all the others;
the share rewards a candidate that holds all of them.

Relevance is read from each candidate's own evidence, never from how it
compares with the others: its cosine similarity to the query (to its content
alone, when its searched vector also names what it mentions: ``own_similarity``),
the share of the query's content words it contains (each word weighted by its
rarity in the store; a word the query writes as a word counts only where the candidate
writes it as one, not inside a path or a JSON key: ``plain_words``), and whether it was
created inside a time the query names.

- A candidate *shows* the query is about something stored when cosine +
  ``words_weight`` x word share >= ``relevance_floor`` (the share counts only
  from a cosine of ``words_cosine``: a shared topic is not an answer; with
  ``agree_top`` above 0, off by default, only when a second signal backs it:
  ``legs_agree``), or when it holds
  ``words_floor`` of the query's words (an exact identifier, a name; from a cosine of
  ``words_alone_cosine``: all its words in another sense are a coincidence), or when
  it lies inside a time the query names and holds one of its words ("lunch
  last Tuesday"), or, for a query that is only a time, when it lies inside
  that time. In a store crowded around the query, that floor rises with the
  crowd: cosine + ``words_weight`` x word share must also reach the cosine of
  the query's ``CROWD_RANK``th closest memory (in its scope) + ``crowd_margin``.
  A near miss by meaning ("best time of year to visit patagonia?" beside a
  thousand chat turns about holidays) has many memories about as close; an
  answer stands above them (docs/benchmarks.md, "Near misses in a crowd"). Not for
  a query naming a name the store knows: its memories are clear by the names rule.
- So does the candidate closest to the query in meaning when its cosine reaches
  ``lead_floor`` and leads the next closest by ``lead_margin``: a question in
  other words than its memory shares no word with it and may score only 0.3 to 0.45,
  but it stands out from the rest of the store, where an unrelated question scores
  about the same against everything (docs/benchmarks.md, "Paraphrases"). This rule
  weighs the meaning alone: a word the memory shares with the query ("do we shard
  the database by tenant?" beside the database note) is weighed by the rule above.
- Neither of these two (evidence by meaning alone) counts when the query writes
  capitalised a name that no memory mentions, or, in a store of 200 memories or more,
  a software term none names (``strangers_veto``): "When is
  Ben's birthday?" is close in meaning to the user's own birthday, but about
  someone the store does not know. Nor, then, do a name the store knows ("When
  does Oliver's flight to Nairobi land?" beside every memory of Oliver) or one of
  the query's words said inside its time ("What did Dr. Okonkwo say in November?"
  beside any November memory saying "say"): they are about the store's subjects,
  not the one asked about.
- A name the query writes capitalised (a person, a project, a tool; not an
  all-capital word such as "API", as often a topic) that at
  least ``anchor_memories`` memories mention shows it too, in each memory
  holding it: the store knows what the query names, however the question is
  phrased ("What is Caroline's identity?" shares no other word with the answer).
- None of these rules counts for a memory whose only part of the query is a name it
  writes capitalised (one fewer than ``anchor_memories`` mention), when the query asks
  about more and the memory,
  far in meaning from the rest of it, holds none of its other words (``name_alone``):
  "What is Nadia Okafor's phone number?" beside "Nadia Okafor owns the billing service".
  The store knows the name, not what is asked of it. Nor for one whose name the store
  knows well, when no candidate holding that name says more of the query
  (``unasked_names``): "what is Tidepool's logo colour?".
- So does an identifier the query spells out in words ("the math utils
  project" names ``math_utils``; "parse user id" names ``parseUserId``).
- Without a vector (no embedder, a message not embedded, an untranslated query
  in a script the embedding model does not read: ``query.in_unread_script``; a query
  whose text, as the model read it, says nothing the store or a language knows:
  ``content.meaningless``), the word share stands in for the cosine. A session message's
  cosine never labels it (the narration is close to any question about the work), but
  one below ``support_floor`` takes the word share's voice away: words a message far in
  meaning shares with the query are a coincidence (``far_message``). Across all
  projects, asked from inside one, a message of another project weighs its word share
  x ``ABROAD_WORDS``: among many projects, many messages hold a third of a question's
  words, and a clear label put them above the asked project's own answer.
- So does a memory (a session's digest, a fact) with a word of the query and a cosine of
  ``support_floor``, when a message of its own session shows it (``corroborated``).
- When at least one candidate shows it, the others that have some evidence
  of their own join it: cosine >= ``support_floor``, at least one content word
  of the query, or the query's time.
- When none does, the query is about nothing stored: no candidate is clear.

The gate decides a label, not what is shown. A candidate that shows the query
is about it is a clear match; every other one is a possible match. Those the
gate keeps (clear ones and, beside them, those with some evidence) go on
through the pipeline; the others (all of them, when no candidate shows the
query is about the store) are kept aside by the same fused score for a recall
to offer after its clear ones (``recall.possible``): a question in other words
than its memory, too far in cosine to show it, still finds it, labelled for what
it is. Only clear matches are ever injected into a context block.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from memctl.config.scope import GLOBAL_SCOPE
from memctl.memories.privacy import quoted_word
from memctl.model import Kind, Memory, parse_time
from memctl.retrieve.content import meaningless
from memctl.retrieve.echo import echo_why
from memctl.retrieve.letters import letters_between
from memctl.retrieve.named_projects import names_project, question_words
from memctl.retrieve.passages import PASSAGE_CHARS, measured, passages
from memctl.retrieve.query import IDENTIFIER, STOPWORDS, split_identifier, without_names
from memctl.retrieve.run import (
    DROPPED,
    KEPT,
    SUBAGENT,
    SUBAGENT_REPORT,
    Candidate,
    Reason,
    Run,
    by_score,
    tie_key,
)
from memctl.retrieve.stages.pack import latin_widths
from memctl.store import cjk

if TYPE_CHECKING:
    from memctl.retrieve.stages.rerank import Judge

STAGE = "fuse"
VECTOR_LEGS = ("vector", "vector_en", "time", "session_vector")
BM25_LEGS = ("bm25", "bm25_en", "sessions", "questions")
# A query that is only a time ("what was I working on yesterday?"): no word to weigh, so its
# words' part goes to the nearest in meaning inside the time (the time leg), or the weakest
# of its own memories would score nothing beside closer ones from any time.
TIME_LEGS = ("time",)
# ranking counts a memory's stored questions' closeness; its relevance, its own (similarity)
RANKED_VECTOR_LEGS = (*VECTOR_LEGS, "question_vector")
# The share of a stored question's closeness above its memory's own that ranks the possible
# matches (paraphrase at 1,000, docs/benchmarks.md "Questions written by rule": 1 lost
# LoCoMo's check half 2 questions, 0.5 gained it 1).
QUESTIONS_SHARE = 0.5
# A session message of tool notes only ("[tool Read: src/app.py]") weighs this share of
# its fused score (measured: benchmarks.md § Tool notes; they filled the top 5 of real
# questions with "[tool Edit: …]" lines once message vectors made them clear).
TOOL_NOTES_FACTOR = 0.5


def similarity(
    candidate: Candidate, legs: tuple[str, ...] = (*VECTOR_LEGS, "similarity")
) -> float | None:
    """The candidate's cosine similarity to the query, from any vector leg or measured for a
    candidate they did not find (None: unknown)."""
    distances = [candidate.raw[leg] for leg in legs if leg in candidate.raw]
    return 1.0 - min(distances) if distances else None


def own_similarity(candidate: Candidate) -> float | None:
    """What the relevance gate weighs: the candidate's cosine to its content alone when its
    searched vector also names what it mentions (store/meaning.py), else ``similarity``."""
    return candidate.own if candidate.own is not None else similarity(candidate)


def ranking_similarity(candidate: Candidate) -> float | None:
    """What ranks a candidate by meaning: its centred cosine when ``centre`` measured one,
    else its best cosine on the ranked vector legs (its stored questions' too)."""
    if candidate.centred is not None:
        return candidate.centred
    return similarity(candidate, RANKED_VECTOR_LEGS)


def centre(run: Run, candidates: list[Candidate]) -> None:
    """Each candidate's cosine once the store's mean is taken out (retrieve/centre.py), to
    rank by; none in a run where a candidate's cosine has no stored vector of its own to
    centre (a session message, a memory's stored questions): one ranking never mixes the
    two scales. Only with ``recall.centred`` (off: docs/benchmarks.md, "Centred cosine")."""
    if not run.params.centred or run.scores is None or run.index is None:
        return
    measured = [c for c in candidates if similarity(c) is not None]
    if not measured or any(c.is_message or "question_vector" in c.raw for c in measured):
        return
    import numpy as np

    from memctl.retrieve.centre import centred_cosines, on_raw_scale, store_mean
    from memctl.store.memories import vectors_for

    mean = store_mean(run.index)
    stored = vectors_for(run.ctx.db, [c.id for c in measured]) if mean is not None else {}
    if mean is None or len(stored) < len(measured):
        return
    vectors = {i: np.frombuffer(blob, dtype=np.float32) for i, blob in stored.items()}
    raw = {c.id: similarity(c) or 0.0 for c in measured}
    cosines = on_raw_scale(centred_cosines(run.scores.query, vectors, mean), raw)
    for candidate in measured:
        candidate.centred = cosines[candidate.id]


def discount(run: Run, candidates: list[Candidate]) -> None:
    """Each memory candidate's cosine (with its stored questions' share: ``asked_similarity``)
    less ``density_weight`` x how crowded its neighbourhood is (retrieve/density.py), to
    rank the possible matches by; a candidate with no stored
    vector of its own (a session message) keeps its cosine. Not with ``recall.centred``,
    which ranks on its own."""
    weight = run.params.density_weight
    if weight <= 0 or run.params.centred or run.scores is None or run.index is None:
        return
    from memctl.retrieve.density import crowded, densities, discounted
    from memctl.store.vector_query import vectors_of

    if not crowded(run.index):
        return
    raw = {c.id: cosine for c in candidates if (cosine := asked_similarity(c)) is not None}
    vectors = vectors_of(run.index, [c.id for c in candidates if c.id in raw and not c.is_message])
    cosines = discounted(raw, densities(run.index, vectors), weight)
    for candidate in candidates:
        if candidate.id in cosines:
            candidate.discounted = cosines[candidate.id]


def asked_similarity(candidate: Candidate) -> float | None:
    """The cosine that ranks a memory among the possible matches: its own, raised by
    ``QUESTIONS_SHARE`` of how much closer one of its stored questions is (a question is
    nearer a question than a statement is: at the full gap, memories with questions pass
    their siblings without, and LoCoMo's check half fell)."""
    own, best = similarity(candidate), similarity(candidate, RANKED_VECTOR_LEGS)
    if own is None or best is None:
        return best
    return own + QUESTIONS_SHARE * (best - own)


def leg_share(candidates: list[Candidate], legs: tuple[str, ...]) -> dict[str, float]:
    """Each candidate's best strength on these legs, mapped onto [0, 1] over the hits."""
    values: dict[str, float] = {}
    for candidate in candidates:
        if legs is VECTOR_LEGS:
            found = ranking_similarity(candidate)
        else:
            found = max((-candidate.raw[leg] for leg in legs if leg in candidate.raw), default=None)
        if found is not None:
            values[candidate.id] = found
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    span = high - low
    return {i: (v - low) / span if span > 0 else 1.0 for i, v in values.items()}


def session_recency(run: Run, candidates: list[Candidate]) -> dict[str, float]:
    """A question that asks only for the latest work ("what did we do last time?") ranks
    what each session said and left by when the session began: the latest 1, the one
    before it 1/2, and so on (a memory of no session: 0), so that the later stages'
    factors (intent, decay) do not put a session minutes older first. Its window holds every
    session of the latest one's day, and its words none to weigh: by closeness in meaning
    and the function words' BM25, the first-hour walk's "what did we do last time?" put
    the session of that morning first and the one just before fourth. By the session's
    start, not the memory's: a fact distilled in the background is made after the next
    session began."""
    from memctl.store.sessions import get_session

    began: dict[str, float] = {}
    for session_id in {c.memory.session_id for c in candidates if c.memory.session_id}:
        session = get_session(run.ctx.db, session_id)
        if session is not None and (start := session.started_at or session.created_at):
            began[session_id] = parse_time(start).timestamp()
    order = {sid: n for n, sid in enumerate(sorted(began, key=began.__getitem__, reverse=True))}
    return {
        c.id: 1 / (1 + order[c.memory.session_id])
        for c in candidates
        if c.memory.session_id in order
    }


def leg_weights(run: Run) -> tuple[float, float]:
    """(vector, bm25) weights; a failed leg's weight goes to the other."""
    vector, bm25 = run.params.weight_vector, run.params.weight_bm25
    if "vector" in run.failed_legs:
        return 0.0, vector + bm25
    if "bm25" in run.failed_legs:
        return vector + bm25, 0.0
    return vector, bm25


def coverage(run: Run, candidate: Candidate) -> float:
    """The share of the query's content words (weighted by rarity) the candidate contains."""
    return memory_coverage(run, candidate.memory)


def memory_coverage(run: Run, memory: Memory) -> float:
    """``coverage`` of one memory (or session message), kept by its text in ``run.shares``:
    the searches' threads measure what they find while the query is embedded (candidates),
    and fuse reads it there. 0 while the query's words are not weighed yet (not kept)."""
    weights = run.word_weights
    total = sum(weights.values())
    if not total:
        return 0.0
    text = f"{own_words(memory.content)} {memory.l0_abstract or ''}"
    share = run.shares.get(text)
    if share is None:
        share = run.shares[text] = _share(run, text.lower(), total)
    return share


def text_share(run: Run, text: str) -> float:
    """``coverage`` of any text (a sentence of a row): the share of the query's words, by
    rarity, it holds, as the gate counts them (stems, the vocabulary's words for less)."""
    total = sum(run.word_weights.values())
    return _share(run, text.lower(), total) if total else 0.0


def gate_share(run: Run, candidate: Candidate, share: float) -> float:
    """The share of the query's words by which the gate labels a candidate (``evidence``):
    ``share`` (``coverage``), and for a session message longer than a passage, the share
    its best passage holds (passages.py). A message is labelled by its words alone (its
    cosine never labels it), and a long one (a sub-agent's 7-13 KB report) holds a third
    of an unrelated question's words by chance, scattered through it. Ranking keeps the
    whole text's share: a best passage there lost rows (s28-long). Length is counted in
    tokens (``pack.latin_widths``): a Chinese passage is about 470 characters."""
    if not share or not candidate.is_message:
        return share
    content = candidate.memory.content
    widths = latin_widths(content, run.params)
    if measured(content, widths) <= PASSAGE_CHARS:
        return share
    text = own_words(content)
    if widths is not None:
        widths = widths[len(content) - len(text) :]
    total = sum(run.word_weights.values())
    best = 0.0
    for window in passages(text, widths=widths):
        best = max(best, _share(run, window.lower(), total))
        if best >= share:  # no passage holds more than the whole
            return share
    return best


def own_words(content: str) -> str:
    """A message's text without the marks memctl's readers open a sub-agent's message and
    report with (ingest/parse/common.py): they are no one's words. "[subagent report]" held
    the "reporting" of "which java version does the reporting service use?": 8 reports were
    clear matches to it, in 3 of the dev store's 22 unrelated asks with a clear match
    (docs/benchmarks.md, "A report's mark and a long message's passages")."""
    return content.lstrip().removeprefix(SUBAGENT_REPORT).removeprefix(SUBAGENT)


def _share(run: Run, text: str, total: float) -> float:
    """``coverage`` of one lower-cased text; ``total``: the weights' sum."""
    weights = run.word_weights
    synonyms = run.query.synonyms
    # only the stems asked about below are looked for: not every word of a long text
    beginnings = stem_beginnings(
        (*weights, *(p for word in weights for phrase in synonyms.get(word, ()) for p in phrase))
    )
    everywhere, plain = asked_stems(text, beginnings)
    spelled = identifier_words(run.query.text)
    # in the query's order: a sum over a set differs in its last bits between processes
    held = [
        word
        for word in weights
        if stem(word.lower()) in (everywhere if word.lower() in spelled else plain)
    ]
    # a word the candidate writes in other words (the vocabulary's synonyms) counts less
    written_otherwise = [
        w
        for word, w in weights.items()
        if word not in held
        and any(all(stem(p) in plain for p in phrase) for phrase in synonyms.get(word, ()))
    ]
    own = sum(weights[word] for word in held)
    if run.query.runs:
        own += letters_between(run.query.runs, weights, set(held))
    return (own + run.params.vocabulary_weight * sum(written_otherwise)) / total


WORD = re.compile(r"[^\W_]+")
# Inflections a question and its answer often differ by ("deploy" / "deploys" / "deployed").
SUFFIXES = ("ing", "ed", "es", "s")
# Endings that may have taken a word's own closing "e" with them ("noted", "notes", "noting"
# of "note"; "themes" of "theme").
E_ENDINGS = ("ing", "ed", "es")
VOWELS = frozenset("aeiou")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """``word`` without one common English inflection, when enough of it is left. A stem
    that would be a function word is none: "noted" is no "not", "themes" no "them" (a word
    the query asks for met every denial, every pronoun). Its own "e" is back when the ending
    took it, after a vowel and a consonant ("not" -> "note", "them" -> "theme"); else the
    word stays whole ("willing" is no "will")."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if base not in STOPWORDS or suffix not in E_ENDINGS:
                return base
            return f"{base}e" if base[-2] in VOWELS and base[-1] not in VOWELS else word
    return word


# A token of markup, whose words are no words said: a path or an address, with two slashes
# or more (``/Users/x/testing-gitflows-git-ai/a.txt``, ``src/lib/app``, a URL), a
# backslash (``C:\\x``), or opening as one (``~/notes``, ``./app``, ``../lib``); one slash
# is as often English ("CI/CD", "and/or") or a client's command ("/compact"), and a date
# (``8/15/2023``, ``2023/08/15``) says its words. Or a JSON object's key, as a tool call's
# arguments write it (``{"yield_time_ms":``).
MARKUP = re.compile(
    r"(?<!\S)(?:(?![(\[]?(?:\d{1,4}/){2}\d{1,4}(?![\w/]))(?:[^\s/]*+/){2}"
    r"|[^\s\\]*+\\|[\"'`(\[{<]*+(?:~|\.\.?)/"
    r'|[{\[,]*+"[^"\s]++":)\S*'
)
# What every token of MARKUP holds: a text without them has none (a cheap test)
MARKS = ("/", "\\", '":')
TOKEN = re.compile(r"\S+")  # a token, whitespace to whitespace


@functools.lru_cache(maxsize=256)
def stem_beginnings(words: tuple[str, ...]) -> tuple[str, ...]:
    """How a word whose stem is one of ``words``' stems (as written and lower-cased) begins:
    with the stem, or with the stem but its last "e" (``stem`` gives "note" back for
    "noting")."""
    stems = {stem(word.lower()) for word in words} | {stem(word) for word in words}
    return tuple(sorted({s[:-1] if s.endswith("e") else s for s in stems}))


def stems_beginning(words: set[str], beginnings: tuple[str, ...]) -> set[str]:
    """The stems of ``words`` that begin as ``beginnings``."""
    return {stem(w) for w in words if w.startswith(beginnings)}


@functools.lru_cache(maxsize=256)
def beginning_pattern(beginnings: tuple[str, ...]) -> re.Pattern[str] | None:
    """The words (as ``WORD`` finds them) that begin as ``beginnings``; None when one is no
    word (or none is given): ``asked_stems`` then reads every word."""
    if not beginnings or not all(WORD.fullmatch(b) for b in beginnings):
        return None
    return re.compile(rf"(?<![^\W_])(?:{'|'.join(map(re.escape, beginnings))})[^\W_]*")


def asked_stems(text: str, beginnings: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """The stems of the words of ``text`` (lower-cased) that begin as ``beginnings``: all
    (``text_words``'), and those written as words (``plain_words``'). The same sets as
    stemming every word and keeping those, found without reading every word of a long
    text, nor every token of its markup. A text holding CJK letters is read word by word:
    ``text_words`` splits its words into parts a beginning may be inside of."""
    pattern = beginning_pattern(beginnings)
    if pattern is None or cjk.has_letters(text):
        everywhere = stems_beginning(text_words(text), beginnings)
        if everywhere and any(mark in text for mark in MARKS):
            return everywhere, stems_beginning(text_words(MARKUP.sub(" ", text)), beginnings)
        return everywhere, everywhere
    found = [(m.start(), m.group()) for m in pattern.finditer(text)]
    everywhere = {stem(word) for _, word in found}
    if not found or not any(mark in text for mark in MARKS):
        return everywhere, everywhere
    plain = set()
    token = (0, 0, False)  # the last token read: its start, its end, whether it is markup
    for at, word in found:  # in the text's order: a long token is read once
        if at >= token[1]:
            token = markup_token(text, at)
        if not token[2]:
            plain.add(stem(word))
    return everywhere, plain


def markup_token(text: str, at: int) -> tuple[int, int, bool]:
    """The token of ``text`` the character at ``at`` is in (its start and end), and whether
    it is one of MARKUP's, which ``plain_words`` takes out: MARKUP's matches are whole
    tokens, whitespace (``\\s``: ``str.isspace``) to whitespace, holding one of MARKS."""
    start = at
    while start and not text[start - 1].isspace():
        start -= 1
    end = TOKEN.match(text, at)
    stop = end.end() if end is not None else at
    marked = any(mark in text[start:stop] for mark in MARKS)
    return start, stop, marked and MARKUP.match(text, start) is not None


def plain_words(text: str) -> set[str]:
    """The stems of the words ``text`` writes as words, not inside ``MARKUP``: a query's
    plain word counts only there ("time" in a tool call's ``"yield_time_ms":``, or "tests"
    in a folder's name, is the word in another sense). A command (``pip install -r
    requirements.txt``) or an identifier said in a sentence ("the `export_orders`
    method") says its words."""
    return {stem(w) for w in text_words(MARKUP.sub(" ", text))}


def text_words(text: str) -> set[str]:
    """The distinct words of ``text`` and, of a word holding CJK letters, its runs' bigrams
    and its other parts, as the full-text index holds them (store/cjk.py): a query's bigram
    counts where the text holds it."""
    words = set(WORD.findall(text))
    if text.isascii():
        return words
    return words.union(*(cjk.split_word(w) for w in words if not w.isascii()))


@functools.lru_cache(maxsize=256)
def identifier_words(query: str) -> frozenset[str]:
    """The parts of the identifiers and paths a query writes (``math_utils``,
    ``parseOrderId``, ``src/app.py``): the query names them as code, and they count
    wherever a candidate holds them."""
    return frozenset(
        part
        for token in query.split()
        if MARKUP.fullmatch(token) or JOINED.search(token) or CAMEL.search(token)
        for piece in WORD.findall(token)
        for part in split_identifier(piece)
    )


def anchor_in(run: Run, candidate: Candidate) -> str | None:
    """The first of the query's known names the candidate writes as the query does (a
    capitalised "Rust" is a name; "rust" on a bike is not), if any."""
    if not run.anchors:
        return None
    text = f"{candidate.memory.content} {candidate.memory.l0_abstract or ''}"
    return next((name for name in sorted(run.anchors) if name_pattern(name).search(text)), None)


# The cosine to the query with its names left out under which a memory holding one of them,
# and none of the query's other words, says nothing of what is asked (name_alone). The named
# questions' tune half (benchmarks/paraphrase/named_unanswered.jsonl, at 1,000 memories):
# 0.04-0.24; a real question's answer in other words than its question reaches 0.34.
UNNAMED_FLOOR = 0.25


def name_alone(run: Run, candidate: Candidate) -> str | None:
    """The query's name that is all a memory shares with a query asking about more than its
    names, if any: "What is Nadia Okafor's phone number?" beside "Nadia Okafor owns the
    billing service" (its cosine, 0.6, is the name's). The store knows who the query names,
    not what it asks of them (docs/benchmarks.md, "Questions naming what the store knows").
    A name is written capitalised, not in capitals only (as for ``anchors``: "CLI", "PR"
    are as often a topic), and fewer than ``anchor_memories`` memories mention it, or one
    the store knows well that no candidate says more of the query about
    (``unasked_names``: counting every well-known name, LoCoMo's tune half and its
    adversarial questions lost a question each, and the per-prompt block one). The memory
    holds none of the query's other words (as ``coverage`` counts them: a stem, or a word
    of the vocabulary standing for one) and, for a rare name, is far in meaning from the
    query without its names (``UNNAMED_FLOOR``; a candidate with no stored vector, a
    session message, never)."""
    names = {n for n in run.query.names if n != n.upper()} - run.anchors
    if not names and not run.unasked:
        return None
    text = f"{candidate.memory.content} {candidate.memory.l0_abstract or ''}"
    known = next((name for name in sorted(run.unasked) if name_pattern(name).search(text)), None)
    held = next((name for name in sorted(names) if name_pattern(name).search(text)), None)
    if known is None and held is None:
        return None
    others = other_words(run)
    if not others or holds_any(run, f"{own_words(candidate.memory.content)} {text}", others):
        return None  # "Who is Nadia Okafor?" asks about the name itself
    if known is not None:
        return known  # no memory holding it says anything of the rest (unasked_names)
    rest = unnamed_similarity(run, candidate, frozenset(names))
    return held if rest is not None and rest < UNNAMED_FLOOR else None


def other_words(run: Run) -> list[str]:
    """The query's content words that are no part of a name it writes."""
    in_names = {
        part.lower()
        for name in run.query.names
        for word in WORD.findall(name)
        for part in (word, *split_identifier(word))
    }
    return [w for w in run.word_weights if w.lower() not in in_names]


def unasked_names(run: Run, candidates: list[Candidate]) -> frozenset[str]:
    """The query's names the store knows well (``anchors``) of which no candidate holding
    one says anything else the query asks: none holds another word of the query (as
    ``coverage`` counts them), and none is within ``UNNAMED_FLOOR`` in meaning of the query
    without its names ("what is Tidepool's logo colour?" beside the five memories of
    Tidepool in the Quick start's store), and none holds another of the query's names, or
    a word of one ("When did Maria get Coco?", "Which Python release ended up on the
    Windows PC?": the two together are what it asks about). The store knows the name, not
    what is asked of it, so the names rule stands for none of them (``name_alone``). One
    candidate that says more of it keeps every memory of the name clear by that rule
    ("What is Caroline's identity?"). A session message meets the rest only by its words
    (its closeness in meaning never labels it); a memory with no vector to compare,
    always."""
    if not run.anchors:
        return frozenset()
    others = other_words(run)
    if not others:
        return frozenset()
    unasked = set(run.anchors)
    named = frozenset(n for n in run.query.names if n != n.upper())
    for candidate in candidates:
        text = f"{candidate.memory.content} {candidate.memory.l0_abstract or ''}"
        held = {name for name in named if name_pattern(name).search(text)}
        if not held & unasked:
            continue
        # another of the query's names, or a word of one ("Windows" of "the Windows PC"),
        # says more of it: the two together are what it asks about
        rest = [*others, *(w for name in named - held for w in WORD.findall(name))]
        if len(held) > 1 or holds_any(run, f"{own_words(candidate.memory.content)} {text}", rest):
            unasked -= held
        elif not candidate.is_message:
            cosine = unnamed_similarity(run, candidate, named)
            if cosine is None or cosine >= UNNAMED_FLOOR:
                unasked -= held
        if not unasked:
            break
    return frozenset(unasked)


def holds_any(run: Run, text: str, words: list[str]) -> bool:
    """Whether ``text`` holds one of the query's ``words`` as ``coverage`` counts them."""
    synonyms = run.query.synonyms
    beginnings = stem_beginnings(
        (*words, *(p for word in words for phrase in synonyms.get(word, ()) for p in phrase))
    )
    everywhere, plain = asked_stems(text.lower(), beginnings)
    found = everywhere | plain
    return any(
        stem(word.lower()) in found
        or any(all(stem(p) in found for p in phrase) for phrase in synonyms.get(word, ()))
        for word in words
    )


def unnamed_similarity(run: Run, candidate: Candidate, names: frozenset[str]) -> float | None:
    """The memory's cosine to the query with ``names`` left out, each text embedded once a
    run (None: no vector to compare)."""
    if run.index is None or candidate.is_message:
        return None
    if names not in run.unnamed:
        run.unnamed[names] = None
        text = without_names(run.query.text, names)
        if run.asked is not None and text == without_names(run.query.text, run.common_names):
            run.unnamed[names] = run.scores  # the vector legs searched this text already
        elif text != run.query.text and run.scores is not None:
            from memctl.store.vector_query import Scores

            (vector,) = run.ctx.embedder.embed([text])
            run.unnamed[names] = Scores(run.index, vector)
    scores = run.unnamed[names]
    if scores is None:
        return None
    from memctl.store.vector_query import similarities_of

    return similarities_of(run.index, scores, [candidate.id]).get(candidate.id)


@functools.lru_cache(maxsize=256)
def name_pattern(name: str) -> re.Pattern[str]:
    """``name``'s words in a row, as written, as whole words; in any case when a word of it
    has a capital past its first letter ("OTel", "PostgreSQL", "GitHub"): such a name is
    no ordinary word in lower case, and notes write it as they please ("OTEL", "otel.ex"),
    as the store's count of it (any case) has it."""
    words = r"[\W_]+".join(re.escape(w) for w in name.split())
    coined = any(w[1:] != w[1:].lower() for w in name.split())
    return re.compile(rf"(?<![^\W_]){words}(?![^\W_])", re.IGNORECASE if coined else 0)


JOINED = re.compile(r"[_.\-]")
CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")


def spelled_identifier(text: str, pairs: frozenset[tuple[str, str]]) -> str | None:
    """An identifier of ``text`` (``math_utils``, ``parseUserId``) two of whose parts in a
    row the query writes as words in a row ("the math utils project"), if any."""
    if not pairs:
        return None
    lowered = text.lower()
    if not any(first in lowered and second in lowered for first, second in pairs):
        return None  # no pair of the query's words in it at all: nothing to split
    for token in IDENTIFIER.findall(text):
        if not (JOINED.search(token) or CAMEL.search(token)):
            continue  # a plain word: one part
        parts = split_identifier(token)
        if len(parts) > 1 and any(pair in pairs for pair in zip(parts, parts[1:], strict=False)):
            return token
    return None


def word_pairs(text: str) -> frozenset[tuple[str, str]]:
    """The query's content words two by two, as written in a row (lower case) as words
    apart: a query writing them joined ("sub-agent", ``math_utils``) spells out no
    identifier; it writes the word itself, which counts in its share of the words."""
    tokens = [[w.lower() for w in WORD.findall(token)] for token in text.split()]
    return frozenset(
        (before[-1], after[0])
        for before, after in zip(tokens, tokens[1:], strict=False)
        if before and after and before[-1] not in STOPWORDS and after[0] not in STOPWORDS
    )


SHOWS, SUPPORTS = "shows", "supports"


def lead(candidates: list[Candidate]) -> tuple[str | None, float]:
    """(id, margin): the memory closest to the query in meaning and how far its cosine
    leads the next closest (None with fewer than two: one memory has nothing to stand out
    from). Session messages are no rivals: their closeness labels nothing, and the message
    a memory was distilled from is as close as the memory."""
    cosines = sorted(
        (
            (cosine, c)
            for c in candidates
            if not c.is_message and (cosine := own_similarity(c)) is not None
        ),
        key=lambda item: (-item[0], *tie_key(item[1].memory)),
    )
    if len(cosines) < 2:
        return None, 0.0
    return cosines[0][1].id, cosines[0][0] - cosines[1][0]


# Where the crowd around a query is measured (``crowd_cosine``): its 10th closest memory,
# the rows a recall shows by default (recall.limit; it follows neither that setting nor
# recall.depth): a near miss by meaning has that many about as close.
CROWD_RANK = 10


def crowd_cosine(run: Run) -> float | None:
    """The cosine of the ``CROWD_RANK``th closest memory to the query among those it may
    find (its scope and states: how crowded the store is around it, as the query sees it);
    None without a query vector or where fewer memories may be found."""
    if run.scores is None or run.index is None:
        return None
    from memctl.store.vector_query import nearest

    # as deep as the vector leg searched (candidates.py): its rows are scored already, and
    # when it asked for as many rows, its hits are this search's (the same call)
    rows = max(CROWD_RANK, run.depth * run.params.candidates)
    if run.vector_leg is not None and run.vector_leg[0] == rows:
        hits = run.vector_leg[1]
    else:
        hits = nearest(run.index, run.scores, rows, run.where)
    return 1.0 - hits[CROWD_RANK - 1][1] if len(hits) >= CROWD_RANK else None


def relevance_strength(run: Run, cosine: float | None, share: float) -> float:
    """What a candidate's own evidence weighs: its cosine + ``words_weight`` x its share of
    the query's words (the share counts from a cosine of ``words_cosine``); without a
    vector to compare, the word share stands in for the cosine."""
    p = run.params
    if cosine is None:
        return share + p.words_weight * share
    return cosine + (p.words_weight * share if words_count(run, cosine) else 0.0)


def words_count(run: Run, cosine: float) -> bool:
    """Whether the query's words a candidate shares count beside its ``cosine``: from
    ``words_cosine`` on (a shared topic is not an answer)."""
    return cosine >= run.params.words_cosine


# Which cosine ``strength_of`` weighed, in ``--explain``'s words.
RANKING_COSINE = "as the vector search ranks it"
DISCOUNTED_COSINE = "less how crowded its neighbourhood is"
NAMED_COSINE = "to its searched vector: its text and the names it mentions"
PLAIN_COSINE = "to its vector"


class Strength(NamedTuple):
    """What ``strength_of`` weighs: a cosine (None: no vector to compare), which one it
    is, and the candidate's share of the query's words."""

    cosine: float | None
    which: str
    share: float


def strength_parts(run: Run, candidate: Candidate) -> Strength:
    """One candidate's cosine and word share for ``strength_of``: its centred or its
    discounted cosine when it has one, else its cosine to its searched vector."""
    share = coverage(run, candidate)
    if candidate.centred is not None:
        return Strength(candidate.centred, RANKING_COSINE, share)
    if candidate.discounted is not None:
        return Strength(candidate.discounted, DISCOUNTED_COSINE, share)
    which = NAMED_COSINE if candidate.own is not None else PLAIN_COSINE
    return Strength(similarity(candidate), which, share)


def strength_of(run: Run, candidate: Candidate) -> float:
    """``relevance_strength`` of one candidate for ``run``'s query, by ``strength_parts``
    (this ranks the possible matches; the gate's ``evidence`` weighs the raw cosine, of
    the memory's text alone)."""
    parts = strength_parts(run, candidate)
    return relevance_strength(run, parts.cosine, parts.share)


def strength_why(run: Run, parts: Strength) -> str:
    """What ``relevance_strength`` made of ``parts``, in plain words (``--explain``)."""
    p = run.params
    words = f"words {parts.share:.2f}"
    if parts.cosine is None:
        return f"no vector to compare: {words} + {p.words_weight:g} x {words}"
    seen = f"cosine {parts.cosine:.3f} {parts.which}"
    if words_count(run, parts.cosine):
        return f"{seen} + {p.words_weight:g} x {words}"
    return (
        f"{seen}; {words} not counted: that cosine is below recall.words_cosine {p.words_cosine:g}"
    )


def legs_agree(candidate: Candidate, top: int) -> bool:
    """Whether a second signal backs a candidate's strength (DESIGN.md, recall 3): it is the
    vector leg's closest, or both the vector and the BM25 legs rank it in their ``top``
    (``recall.agree_top``; 0: its strength stands alone). Without a vector leg rank (no
    embedder, a session message) its strength stands alone too. Not asked when the query
    names a name the store knows (``evidence``): then the memories holding the name are
    clear, and one strong on its own evidence that this rule made possible would rank
    below every one of them (LoCoMo R@10 -1.8 on both halves, docs/benchmarks.md)."""
    vector = best_rank(candidate, ("vector", "vector_en"))
    if not top or vector is None:
        return True
    words = best_rank(candidate, ("bm25", "bm25_en"))
    return vector == 1 or (vector <= top and words is not None and words <= top)


def best_rank(candidate: Candidate, legs: tuple[str, ...]) -> int | None:
    return min((candidate.ranks[leg] for leg in legs if leg in candidate.ranks), default=None)


def evidence(
    run: Run,
    candidate: Candidate,
    share: float,
    pairs: frozenset[tuple[str, str]] = frozenset(),
    margin: float | None = None,
    crowd: float | None = None,
    abroad: bool = False,
) -> tuple[str | None, str]:
    """(SHOWS, SUPPORTS or None, what the evidence is) for one candidate, on its own;
    ``share``: the share of the query's content words it holds (``coverage``); ``margin``:
    how far it leads the next closest in meaning, when it is the closest; ``abroad``: a
    session message of another project than the one asked from (``abroad``)."""
    p = run.params
    window = run.query.window
    blank = "no vector, "
    inside = window is not None and window.contains(parse_time(candidate.memory.created_at))
    if inside and not run.word_weights:  # the query is only a time: its memories answer it
        return SHOWS, "inside the query's time"
    # a message's closeness in meaning ranks it and never labels it: assistants narrate
    # ("Let me look at the project structure") close to any question about the work; nor
    # does any closeness to an untranslated query in a script the model does not read
    unread = run.query.unread_script and run.translation is None
    cosine = None if candidate.is_message or unread else own_similarity(candidate)
    if run.meaningless and cosine is not None:  # what the model read says nothing
        cosine = None
        blank = f"no vector ({run.meaningless}), "
    named = anchor_in(run, candidate)
    seen = (f"cosine {cosine:.3f}, " if cosine is not None else blank) + (
        f"words {share:.2f}" + (", inside the query's time" if inside else "")
    )
    alone = name_alone(run, candidate)
    if alone is not None:  # its closeness in meaning and its words are the name's
        return SUPPORTS, (
            f"{seen}, holds {quoted_word(run.query.text, alone)} and none of the query's "
            "other words: the store knows the name, not what is asked of it"
        )
    strength = relevance_strength(run, cosine, share)
    if abroad:  # words a message of another project shares with the query weigh less
        strength *= ABROAD_WORDS
        seen = f"{seen}, a message of another project (words x {ABROAD_WORDS})"
    # A name no memory mentions ("When is Ben's birthday?" beside the user's own): closeness
    # in meaning, another name the store knows, or one word said in the query's time are
    # about another subject, not evidence of this one
    stranger = min(run.strangers, default=None) if p.strangers_veto else None
    # every word held, far in meaning, is the words in another sense ("run" in "its HBO
    # run", "tests" in a "testing-gitflows" path): a coincidence, not the subject
    coincidence = cosine is not None and cosine < p.words_alone_cosine
    if (share >= p.words_floor and not coincidence) or (inside and share > 0 and stranger is None):
        return SHOWS, seen
    if coincidence and share >= p.words_floor:
        seen = f"{seen}, its words in another sense (cosine below {p.words_alone_cosine})"
    far = far_message(run, candidate)
    if far:
        seen = f"{seen}, {far}"
    # in a store crowded around the query, the floor rises with the crowd (CROWD_RANK); not
    # for a query naming a name the store knows, as for legs_agree: its memories are clear,
    # and one strong on its own evidence that this made possible would rank below them all
    # (LoCoMo adversarial R@10 -2.5: docs/benchmarks.md, "Near misses in a crowd")
    crowded = (
        p.crowd_margin > 0
        and not run.anchors
        and cosine is not None
        and crowd is not None
        and strength < crowd + p.crowd_margin
    )
    if stranger is None and strength >= p.relevance_floor and not far:
        if crowded:
            seen = (
                f"{seen}, not {p.crowd_margin} above the cosine of the {CROWD_RANK}th "
                f"closest memory, {crowd:.3f}"
            )
        elif run.anchors or legs_agree(candidate, p.agree_top):
            return SHOWS, seen
        else:
            seen = f"{seen}, not the closest in meaning, nor in both legs' top {p.agree_top}"
    # meaning alone: the words a memory shares with the query are weighed by the rule above
    if stranger is None and margin is not None and margin >= p.lead_margin:
        if cosine is not None and cosine >= p.lead_floor:
            return SHOWS, f"{seen}, closest in meaning, {margin:.3f} ahead of the next"
    if stranger is not None:
        named_word = quoted_word(run.query.text, stranger)
        seen = f"{seen}, the query names {named_word}, which no memory mentions"
    if named and stranger is None:
        return SHOWS, f"{seen}, names {named}, which the store knows"
    spelled = spelled_identifier(candidate.memory.content, pairs)
    if spelled:
        return SHOWS, f"{seen}, holds {spelled}, which the query spells out"
    if inside or share > 0 or (cosine is not None and cosine >= p.support_floor):
        return SUPPORTS, seen
    return None, seen


# The weight of the word share of a session message from another project than the one
# asked from, where the gate weighs it in its cosine's stead (share x 1.3 x this >=
# relevance_floor: a share of 0.46, not 0.35). Recall across all projects (--all-scopes)
# from inside one: among 39 projects many messages hold a third of a question's words,
# and their clear label put them above the project's own answer, possible (measured:
# docs/benchmarks.md, "Recall everywhere: evidence from another project"; 0.4, 0.6 and
# 0.75 found the same, below 0.75 more questions had no clear match).
ABROAD_WORDS = 0.75


def abroad(run: Run, candidates: list[Candidate]) -> set[str]:
    """The session messages of another project than the one asked from (not a project the
    question names, nor global), when that project holds candidates: asked from outside
    every project (or of a single project's store), no project's evidence weighs less."""
    home = run.home_scope
    if home is None or not any(c.memory.scope == home for c in candidates):
        return set()
    near = {home, GLOBAL_SCOPE, *run.named_projects}
    return {c.id for c in candidates if c.is_message and c.memory.scope not in near}


def far_message(run: Run, candidate: Candidate) -> str:
    """Why a session message's share of the query's words is no evidence of its own (""
    when it is): its stored vector (``recall.message_vectors``) or one embedded now
    (``recall.session_vectors``) puts it below ``support_floor`` in meaning. Its closeness
    never labels a message, but its distance does: "How many different doctors did I
    visit?" shares two of its words with a reply about the different parks to visit
    (docs/benchmarks.md, "Far messages and counting questions")."""
    cosine = similarity(candidate) if candidate.is_message else None
    if cosine is None or cosine >= run.params.support_floor:
        return ""
    return f"a message far in meaning (cosine {cosine:.3f}): its words are no evidence alone"


Judged = list[tuple[Candidate, str | None, str]]


def second_opinion(run: Run, judged: Judged, judge: Judge | None = None) -> Judged:
    """An LLM's word on the ``llm_gate_candidates`` closest candidates (by meaning), when
    none shows on its own that the query is about the store: a question in other words
    than its memory can share no word and little cosine with it. Those the LLM rates at
    least ``llm_gate_floor`` show it; if it cannot answer, nothing changes."""
    from memctl.errors import MemctlError
    from memctl.retrieve.stages.rerank import judge_for

    p = run.params
    closest = sorted(
        (item for item in judged if similarity(item[0]) is not None),
        key=lambda item: -(similarity(item[0]) or 0.0),
    )[: p.llm_gate_candidates]
    if not closest:
        return judged
    try:
        scores = (judge or judge_for(run)).relevance(
            run.query.text, [c.memory.content for c, _, _ in closest]
        )
    except MemctlError as exc:
        run.notes.append(f"no LLM second opinion on relevance: {exc}")
        return judged
    verdicts = {
        c.id: f"{why}, LLM relevance {score:.2f}"
        for (c, _, why), score in zip(closest, scores, strict=True)
        if score >= p.llm_gate_floor
    }
    return [
        (c, SHOWS, verdicts[c.id]) if c.id in verdicts else (c, level, why)
        for c, level, why in judged
    ]


def fuse(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    w_vector, w_bm25 = leg_weights(run)
    centre(run, candidates)
    discount(run, candidates)
    vector = leg_share(candidates, VECTOR_LEGS)
    only_time = run.query.window is not None and not run.word_weights
    bm25 = leg_share(candidates, TIME_LEGS if only_time else BM25_LEGS)
    pairs = word_pairs(run.query.text)
    shares = {c.id: coverage(run, c) for c in candidates}
    latest = session_recency(run, candidates) if run.query.only_latest else None
    leader, margin = lead(candidates)
    crowd = crowd_cosine(run)
    elsewhere = abroad(run, candidates)
    run.meaningless = meaningless(run) if run.scores is not None else ""
    run.unasked = unasked_names(run, candidates)
    judged = [
        (
            c,
            *evidence(
                run,
                c,
                gate_share(run, c, shares[c.id]),
                pairs,
                margin if c.id == leader else None,
                crowd,
                c.id in elsewhere,
            ),
        )
        for c in candidates
    ]
    # stored questions boost a memory and never alone make it clear (DESIGN.md, recall 4);
    # nor does a message that only records tool calls (a path's words match it)
    judged = [
        (
            c,
            SUPPORTS if level == SHOWS and second_hand(c) else level,
            why + echo_why(c.only_asks, c.told_back),
        )
        for c, level, why in judged
    ]
    judged = [
        (c, SUPPORTS, f"{why}, {away}")
        if level == SHOWS and (away := unnamed(run, c))
        else (c, level, why)
        for c, level, why in judged
    ]
    judged = corroborated(run, judged)
    shown = any(level == SHOWS for _, level, _ in judged)
    if not shown and run.params.llm_gate:
        judged = second_opinion(run, judged)
        shown = any(level == SHOWS for _, level, _ in judged)
    kept, possible = [], []
    for candidate, level, why in judged:
        # what the words earned: BM25 and the word share (both favour long texts: length)
        words = (
            w_bm25 * bm25.get(candidate.id, 0.0) + run.params.weight_words * shares[candidate.id]
        )
        score = w_vector * vector.get(candidate.id, 0.0) + words
        if latest is not None:
            score = latest.get(candidate.id, 0.0)
        candidate.lexical = words / score if score > 0 else 0.0
        if candidate.memory.kind == Kind.PINNED:
            score *= run.params.pinned_boost
        if candidate.says_nothing:
            score *= TOOL_NOTES_FACTOR
        candidate.score = score
        candidate.factors[STAGE] = score
        candidate.clear = level == SHOWS
        candidate.match_reason, candidate.match_why = label_why(level, shown, why)
        if level is not None and shown:
            kept.append(candidate)
            run.record(STAGE, candidate, KEPT, score, candidate.match_why)
        else:
            possible.append(candidate)
            run.record(STAGE, candidate, DROPPED, score, candidate.match_why)
    run.possible = by_score(possible)
    run.beside = [
        replace(c, ranks=dict(c.ranks), raw=dict(c.raw), factors=dict(c.factors))
        for c in kept
        if not c.clear
    ]
    return by_score(kept)


def corroborated(run: Run, judged: Judged) -> Judged:
    """A memory of a session whose own message shows the query is about it (by its words,
    as said) shows it too, when it has both kinds of evidence of its own: one of the
    query's words and a cosine of ``support_floor``. The record said and the record
    distilled from it agree; a session's digest or fact is long, or in other words, and
    falls short of the floor beside the message that is clear ("where are the theme
    colours defined?": the message naming the colours was clear, the digest naming
    ``globals.css`` possible). It never makes a query clear that has no clear match, so
    an unrelated question is as often answered clear as before (docs/benchmarks.md, "A
    memory of a session whose message is clear")."""
    sessions = {
        c.memory.session_id
        for c, level, _ in judged
        if level == SHOWS and c.is_message and c.memory.session_id
    }
    if not sessions:
        return judged
    return [
        (c, SHOWS, f"{why}, and a message of its session shows it")
        if level == SUPPORTS
        and not c.is_message
        and not second_hand(c)
        and c.memory.session_id in sessions
        and coverage(run, c) > 0
        and (own_similarity(c) or 0.0) >= run.params.support_floor
        else (c, level, why)
        for c, level, why in judged
    ]


def unnamed(run: Run, candidate: Candidate) -> str:
    """Why a candidate answers for another project than the one the question names ("" when
    it does not): "how do I run the order service's tests?" asked from everywhere is not
    answered by another project's `cargo test`, however close in meaning; it stays a
    possible match. The project asked from, global memories and a memory that names the
    project itself keep their evidence."""
    named = run.named_projects
    where = candidate.memory.scope
    if not named or where in named or where in (run.home_scope, GLOBAL_SCOPE):
        return ""
    words = question_words(candidate.memory.content)
    if any(names_project(name, words, set(words)) for name in named.values()):
        return ""
    names = ", ".join(sorted(set(named.values())))
    return f"of another project than the one the question names ({names})"


def second_hand(candidate: Candidate) -> bool:
    """Evidence that never alone makes a clear match: found only through its stored
    questions, or a session message of tool notes, narration or a question only."""
    return candidate.only_by_questions or candidate.says_nothing


def label_why(level: str | None, shown: bool, why: str) -> tuple[Reason, str]:
    """Why a candidate is a clear or a possible match (in a word, and in words), from its
    evidence (``why``), its own level (SHOWS, SUPPORTS or None) and whether any candidate
    shows the query is about the store."""
    if level == SHOWS:
        return Reason.EVIDENCE, f"clear: {why}: shows relevance"
    if level == SUPPORTS and shown:
        return (
            Reason.SUPPORTS,
            f"possible: {why}: supports another's relevance, shows none of its own",
        )
    if level is None:
        return Reason.NO_EVIDENCE, f"possible: no evidence of relevance of its own: {why}"
    return (
        Reason.NOTHING_SHOWN,
        f"possible: {why}: no candidate shows the query is about anything stored",
    )


def idf(documents: int, containing: int) -> float:
    """How rare a word is: BM25's inverse document frequency, never below a small positive."""
    return max(0.05, math.log((documents - containing + 0.5) / (containing + 0.5) + 1.0))
