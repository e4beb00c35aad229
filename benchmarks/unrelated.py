"""Queries unrelated to any benchmark's conversations: recall should return nothing for them.

Written once, general knowledge, weather, sports and trivia, before looking at
what the stores hold; never changed to fit the data. Each retriever answers
them against every benchmark store, and the report counts the results: a
retriever that always returns its top k (BM25 alone, vectors alone) returns
k for each; memctl should return none.
"""

from __future__ import annotations

from benchmarks.retrievers import Question, Retriever
from memctl.context import Context

QUERIES = (
    "what's the weather forecast for tomorrow",
    "who won the world cup final",
    "how tall is mount everest",
    "what is the capital of australia",
    "how many ounces are in a pound",
    "what time does the stock market open",
    "best recipe for sourdough bread",
    "how do I change a flat tyre",
    "what is the boiling point of mercury",
    "who wrote the theory of relativity",
    "latest premier league football scores",
    "how far is the moon from the earth",
    "what is the population of tokyo",
    "convert fifty fahrenheit to celsius",
    "who painted the mona lisa",
    "how does a nuclear reactor work",
    "when is the next solar eclipse",
    "what is the exchange rate of the euro to the yen",
    "rules of cricket for beginners",
    "how many players are on a basketball team",
)
DEPTH = 10  # results asked for: recall's default limit


def unrelated_results(ctx: Context, retrievers: dict[str, Retriever], depth: int) -> dict[str, int]:
    """How many results each retriever returns, in all, for the unrelated queries."""
    return {
        name: sum(len(retriever(ctx, Question(text), depth)) for text in QUERIES)
        for name, retriever in retrievers.items()
    }
