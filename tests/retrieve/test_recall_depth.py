"""The same question, the same first rows: a recall's first k rows are the rows of a recall
limited to k, whatever the limit (Run.depth; docs/recall.md, "The limit").

A property over many questions on a real store: the paraphrase benchmark's notes and
questions (reworded, and unrelated to every note), beside a session's messages, with the
real model. Before the depth was fixed, a limit of 20 ranked otherwise the first rows of
most of these questions (the legs' depth sets the range fuse maps their scores over;
the cap, the possible pool and the cut counted in the limit).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memctl.api.memory import RememberRequest, remember
from memctl.context import Context
from memctl.retrieve.pipeline import recall
from tests.ingesting import ingest_text

PARAPHRASE = Path(__file__).resolve().parents[2] / "benchmarks" / "paraphrase"
LIMITS = (3, 5, 10, 20)  # every limit up to twice recall.depth searches alike
SESSION = "\n".join(
    [
        "user: the deploy to staging failed again, the smoke tests timed out",
        "assistant: I'll look at the staging logs first.",
        "assistant: [tool Bash: kubectl logs deploy/api -n staging]",
        "assistant: The smoke tests wait 30 seconds for the API; it needs 45 after a migration.",
        "user: raise it to 60 and note that migrations slow the first boot",
        "assistant: Done: the smoke test timeout is 60 seconds now.",
        "user: ok",
    ]
)


def lines(name: str) -> list[dict[str, str]]:
    text = (PARAPHRASE / name).read_text("utf-8")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def store(real_store: Context) -> Context:
    """Half the paraphrase benchmark's notes (60: more than a leg's 30 rows) and one
    session's messages, on the real model."""
    for fact in lines("facts.jsonl")[::2]:
        remember(real_store, RememberRequest(fact["fact"], scope="global"))
    ingest_text(real_store, SESSION, "staging")
    return real_store


def rows(ctx: Context, question: str, limit: int) -> list[tuple[str, str]]:
    found = recall(ctx, question, limit, touch=False, sessions=True)
    return [(r.memory.id, r.match) for r in found.results]


def test_a_larger_limit_shows_a_smaller_ones_rows_first(store: Context) -> None:
    asked = [f["question"] for f in lines("facts.jsonl")[::6]]  # half of them asked of it
    asked += [u["question"] for u in lines("unrelated.jsonl")[::10]]
    asked += ["why did the staging smoke tests time out?", "ok"]
    differ = []
    for question in asked:
        longest = rows(store, question, LIMITS[-1])
        assert longest, question
        differ += [(question, k) for k in LIMITS[:-1] if rows(store, question, k) != longest[:k]]
    assert differ == []
