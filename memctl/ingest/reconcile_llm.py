"""Reconcile with the LLM: one call per batch, existing memories under short integer ids.

The prompt lists the candidate memories as ``[n] (category, age) content``
and the new facts as ``n. (category) content``; the answer, a JSON object of
``SCHEMA``, gives a decision per fact. Facts the answer leaves out, or
decides about with an unknown target, are left to the rules.
"""

from __future__ import annotations

from typing import Any

from memctl.ingest.facts import Decision, Fact, Verdict
from memctl.ingest.run import Run
from memctl.memories.privacy import model_text
from memctl.model import Memory, parse_time

SYSTEM = """You keep a long-term memory consistent. For each new fact choose one action \
against the existing memories:
CREATE: new information; target null.
MERGE: about the same thing as memory [target]; give merged, one text keeping both.
SKIP: memory [target] already says this.
SUPERSEDE: the fact replaces memory [target], which is out of date.
SUPPORT: the fact is further evidence for memory [target].
CONTEXTUALIZE: the fact adds a condition, exception or circumstance to memory [target].
CONTRADICT: the fact conflicts with memory [target] and neither is clearly newer.
Give one decision per new fact, by its number, with a short reason."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decisions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "fact": {"type": "integer"},
                    "action": {"type": "string", "enum": [v.name for v in Verdict]},
                    "target": {"type": ["integer", "null"]},
                    "merged": {"type": "string"},
                    "reason": {"type": "string"},
                },
                "required": ["fact", "action", "target"],
            },
        }
    },
    "required": ["decisions"],
}


def age_label(iso: str, now: str) -> str:
    """How old a memory is: today, 3d, 5w, 4mo, 2y."""
    days = (parse_time(now) - parse_time(iso)).days
    for unit, size in (("y", 365), ("mo", 30), ("w", 7), ("d", 1)):
        if days >= size:
            return f"{days // size}{unit} old"
    return "today"


def prompt(facts: list[Fact], memories: list[Memory], now: str) -> str:
    existing = "\n".join(
        f"[{n}] ({m.category}, {age_label(m.created_at, now)}) {' '.join(m.content.split())}"
        for n, m in enumerate(memories, start=1)
    )
    new = "\n".join(
        f"{n}. ({f.category}) {' '.join(f.content.split())}" for n, f in enumerate(facts, start=1)
    )
    return f"Existing memories:\n{existing}\n\nNew facts:\n{new}"


def parse(value: Any) -> list[dict[str, Any]]:
    """The decisions of an answer; ValueError when it is not ``{"decisions": [...]}``."""
    if not isinstance(value, dict) or not isinstance(value.get("decisions"), list):
        raise ValueError('expected {"decisions": [...]}')
    return [d for d in value["decisions"] if isinstance(d, dict)]


def ask(run: Run, facts: list[Fact], memories: list[Memory], now: str) -> dict[int, Decision]:
    """Decisions by index into ``facts``; empty when the LLM is off or failed."""
    answer = run.ask(SYSTEM, prompt(facts, memories, now), SCHEMA, parse)
    decisions: dict[int, Decision] = {}
    for item in answer or []:
        number, action, target = item.get("fact"), item.get("action"), item.get("target")
        if not isinstance(number, int) or not 0 < number <= len(facts) or number - 1 in decisions:
            continue
        if action not in Verdict.__members__:
            continue
        verdict = Verdict[action]
        memory = (
            memories[target - 1]
            if isinstance(target, int) and 0 < target <= len(memories)
            else None
        )
        if memory is None and verdict != Verdict.CREATE:
            continue
        merged = model_text(item["merged"]) if isinstance(item.get("merged"), str) else None
        decisions[number - 1] = Decision(
            verdict,
            facts[number - 1],
            memory.id if memory and verdict != Verdict.CREATE else None,
            merged=(merged.strip() or None) if merged else None,
            reason=str(item.get("reason") or "")[:300],
            by="llm",
        )
    return decisions
