"""EXPERIMENTS, not memctl: retrieval ideas measured on the benchmarks before any of them goes
into the recall pipeline. Their figures are labelled ``exp-*`` and never reported as memctl's.

Each experiment is a ``Recipe`` run over the same two legs the pipeline uses
(``fts_search`` and ``vector_search``), changing one idea at a time:

- fusion: reciprocal rank fusion with equal weights and a small k, or fusion
  of normalised scores, so that one leg's confident first hit is not buried
  under the other leg's long tail;
- query analysis: the BM25 query without function words;
- context: a turn inherits part of its neighbours' score (the answer often
  follows the turn that matches the question's words);
- dates: a date or relative time named in the question ("on 8 May, 2023",
  "last week") boosts memories created in that window, as of the question's time;
- diversity: each hit taken from a session lowers the rest of that session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial

from benchmarks.retrievers import ACTIVE, Question, Retriever
from memctl.context import Context
from memctl.model import parse_time
from memctl.store.memories import fts_search, get_memories, list_memories, vector_search

STOPWORDS = frozenset(
    """a about after again all also am an and any are as at be been before being both but by
    can could did do does doing done during each ever for from had has have having he her here
    hers him his how i if in into is it its just me might more most my no nor not now of on
    once only or other our out over own same she should so some such than that the their them
    then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your""".split()
)
MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
DAY_MONTH_YEAR = re.compile(rf"\b{DAY}\s+(?:of\s+)?{MONTH},?\s+(\d{{4}})\b", re.I)
MONTH_DAY_YEAR = re.compile(rf"\b{MONTH}\s+{DAY},?\s+(\d{{4}})\b", re.I)
MONTH_YEAR = re.compile(rf"\b{MONTH},?\s+(\d{{4}})\b", re.I)
UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}
AGO = re.compile(
    r"\b(\d+|a|one|two|three|four|five|six|ten)\s+(day|week|month|year)s?\s+ago\b", re.I
)
LAST = re.compile(r"\b(yesterday|last\s+(?:week|month|year|weekend))\b", re.I)
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
LAST_WEEKDAY = re.compile(rf"\b(?:last|this past)\s+({'|'.join(WEEKDAYS)})\b", re.I)


@dataclass(frozen=True)
class Recipe:
    fusion: str = "rrf"  # "rrf" or "score"
    rrf_k: int = 60
    weight_bm25: float = 0.5  # the vector leg gets 1 - this
    depth: int = 3  # each leg fetches limit x depth candidates
    stopwords: bool = False
    context: float = 0.0  # share of a neighbour's score a turn inherits
    dates: float = 0.0  # score boost (x 1 + this) inside a date window the question names
    diversify: float = 0.0  # each hit already taken from a session cuts that session's by this


def content_words(text: str) -> str:
    return " ".join(w for w in re.findall(r"\w+", text) if w.lower() not in STOPWORDS)


def rrf(rankings: dict[str, list[str]], weights: dict[str, float], k: int) -> dict[str, float]:
    scores: dict[str, float] = {}
    for leg, ids in rankings.items():
        for rank, memory_id in enumerate(ids, start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + weights[leg] / (k + rank)
    return scores


def normalised(hits: dict[str, float]) -> dict[str, float]:
    """Scores mapped linearly onto [0, 1] over this candidate list (higher is better)."""
    if not hits:
        return {}
    low, high = min(hits.values()), max(hits.values())
    span = high - low or 1.0
    return {memory_id: (value - low) / span for memory_id, value in hits.items()}


def fuse(ctx: Context, question: Question, recipe: Recipe, size: int) -> dict[str, float]:
    words = content_words(question.text) if recipe.stopwords else question.text
    bm25 = fts_search(ctx.db, words or question.text, size, ACTIVE)
    (vector,) = ctx.vectors([question.text])
    nearest = vector_search(ctx.db, vector, size, ACTIVE)
    weights = {"bm25": recipe.weight_bm25, "vector": 1.0 - recipe.weight_bm25}
    if recipe.fusion == "rrf":
        rankings = {"bm25": [i for i, _ in bm25], "vector": [i for i, _ in nearest]}
        return rrf(rankings, weights, recipe.rrf_k)
    scores: dict[str, float] = {}
    legs = {"bm25": {i: -s for i, s in bm25}, "vector": {i: 1.0 - d for i, d in nearest}}
    for leg, hits in legs.items():
        for memory_id, value in normalised(hits).items():
            scores[memory_id] = scores.get(memory_id, 0.0) + weights[leg] * value
    return scores


_NEIGHBOURS: dict[str, dict[str, list[str]]] = {}


def neighbours(ctx: Context) -> dict[str, list[str]]:
    """memory id -> the memories just before and after it in its session (cached per store)."""
    key = str(ctx.settings.db_path)
    if key not in _NEIGHBOURS:
        ordered = list_memories(ctx.db, ACTIVE, None, sort="oldest")
        found: dict[str, list[str]] = {m.id: [] for m in ordered}
        for before, after in zip(ordered, ordered[1:], strict=False):
            if before.session_id == after.session_id:
                found[before.id].append(after.id)
                found[after.id].append(before.id)
        _NEIGHBOURS.clear()
        _NEIGHBOURS[key] = found
    return _NEIGHBOURS[key]


def with_context(ctx: Context, scores: dict[str, float], share: float) -> dict[str, float]:
    near = neighbours(ctx)
    spread = dict(scores)
    for memory_id, score in scores.items():
        for other in near.get(memory_id, []):
            spread[other] = spread.get(other, 0.0) + share * score
    return spread


def date_window(text: str, now: datetime | None) -> tuple[datetime, datetime] | None:
    """The period a question names, widened by a few days either side; None if it names none."""
    slack = timedelta(days=3)
    if match := DAY_MONTH_YEAR.search(text):
        day = datetime(int(match[3]), MONTHS[match[2].lower()], int(match[1]))
        return day - slack, day + timedelta(days=1) + slack
    if match := MONTH_DAY_YEAR.search(text):
        day = datetime(int(match[3]), MONTHS[match[1].lower()], int(match[2]))
        return day - slack, day + timedelta(days=1) + slack
    if match := MONTH_YEAR.search(text):
        start = datetime(int(match[2]), MONTHS[match[1].lower()], 1)
        return start - slack, start + timedelta(days=31) + slack
    if now is None:
        return None
    now = now.replace(tzinfo=None)
    if match := AGO.search(text):
        count = int(match[1]) if match[1].isdigit() else NUMBERS[match[1].lower()]
        days = count * UNITS[match[2].lower()]
        centre = now - timedelta(days=days)
        width = max(slack, timedelta(days=days * 0.25))
        return centre - width, centre + width
    if match := LAST_WEEKDAY.search(text):
        back = (now.weekday() - WEEKDAYS.index(match[1].lower())) % 7 or 7
        day = (now - timedelta(days=back)).replace(hour=0, minute=0, second=0, microsecond=0)
        return day - timedelta(days=1), day + timedelta(days=2)
    if match := LAST.search(text):
        phrase = match[1].lower().split()[-1]
        days = {"yesterday": 1, "weekend": 7, "week": 7, "month": 30, "year": 365}[phrase]
        return now - timedelta(days=2 * days) - slack, now
    return None


def with_dates(
    ctx: Context, question: Question, scores: dict[str, float], boost: float
) -> dict[str, float]:
    window = date_window(question.text, question.now)
    if window is None:
        return scores
    start, end = window
    memories = get_memories(ctx.db, list(scores))
    boosted = dict(scores)
    for memory_id, memory in memories.items():
        if start <= parse_time(memory.created_at).replace(tzinfo=None) < end:
            boosted[memory_id] *= 1.0 + boost
    return boosted


def diversified(ctx: Context, scores: dict[str, float], cut: float, limit: int) -> list[str]:
    """Greedy ranking in which every pick from a session lowers that session's other hits."""
    sessions = {i: m.session_id for i, m in get_memories(ctx.db, list(scores)).items()}
    taken: dict[str | None, int] = {}
    left = dict(scores)
    ranked: list[str] = []
    while left and len(ranked) < limit:
        best = max(left, key=lambda i: (left[i] * (1 - cut) ** taken.get(sessions.get(i), 0), i))
        ranked.append(best)
        del left[best]
        taken[sessions.get(best)] = taken.get(sessions.get(best), 0) + 1
    return ranked


def run_recipe(recipe: Recipe, ctx: Context, question: Question, limit: int) -> list[str]:
    scores = fuse(ctx, question, recipe, limit * recipe.depth)
    if recipe.context:
        scores = with_context(ctx, scores, recipe.context)
    if recipe.dates:
        scores = with_dates(ctx, question, scores, recipe.dates)
    if recipe.diversify:
        return diversified(ctx, scores, recipe.diversify, limit)
    return sorted(scores, key=lambda i: (-scores[i], i))[:limit]


RRF = Recipe(fusion="rrf", rrf_k=20, weight_bm25=0.5)
SCORE = Recipe(fusion="score", weight_bm25=0.5)
RECIPES = {
    "exp-rrf": RRF,
    "exp-score": SCORE,
    "exp-score-stop": replace(SCORE, stopwords=True),
    "exp-score-context": replace(SCORE, context=0.3),
    "exp-score-dates": replace(SCORE, dates=0.5),
    "exp-all": replace(SCORE, stopwords=True, context=0.3, dates=0.5),
    "exp-all-diversify": replace(SCORE, stopwords=True, context=0.3, dates=0.5, diversify=0.1),
}
EXPERIMENTS: dict[str, Retriever] = {
    name: partial(run_recipe, recipe) for name, recipe in RECIPES.items()
}
