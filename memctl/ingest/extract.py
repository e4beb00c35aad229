"""Stage: extract atomic facts from passages, with the LLM or, failing that, by rules.

The LLM sees the passages numbered, at most ``extract.chunk_chars``
characters a call, and answers JSON matching ``SCHEMA``. A fact the answer
gets wrong (no content, an unknown category) is dropped and counted; an
answer that is not ``{"facts": [...]}`` is invalid and retried by the LLM
client. When the LLM is off, unreachable, failing or over budget, the whole
stage runs ``extract_rules`` instead.
"""

from __future__ import annotations

from typing import Any

from memctl.ingest.extract_rules import extract_rules
from memctl.ingest.facts import Fact, Passage
from memctl.ingest.graph import parse_triples
from memctl.ingest.pasted import marked
from memctl.ingest.run import Run
from memctl.memories.privacy import model_text
from memctl.model import Category

CATEGORIES = [c.value for c in Category]
SYSTEM = """You extract durable facts for a long-term memory from a conversation between a \
user and an AI assistant. Lines are numbered [n] and marked user or assistant.
- Extract only what the user said or confirmed; assistant lines are context.
- Text under "[pasted by the user: N lines]" is what the user pasted (a log, a manual, a \
docs page), not what they said: it is context for their own words above it.
- One atomic, self-contained fact per item: name its subject, no dangling pronouns.
- Keep what will still matter in later conversations: who the user is, preferences, \
habits, goals, decisions, project facts, problems and their solutions. Leave out \
greetings, thanks, questions, requests for this conversation, and small talk.
- Write each fact in the language the conversation uses.
- Categories: profile (who the user is), preferences (likes, dislikes, choices), \
entities (projects, tools, people, places and their attributes), events (what happened \
or will happen, with its time), cases (a problem and its solution), patterns (habits, \
workflows, rules to follow).
- l0_abstract: one line. l1_overview: 2-5 lines. l2_content: every useful detail.
- importance and confidence between 0 and 1; source_message: the [n] of the line.
- triples (optional): [subject, predicate, object] the fact states, e.g. \
["Alice", "works at", "Acme"].
- At most {max_facts} facts; an empty list is a good answer when nothing is worth keeping."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "l0_abstract": {"type": "string"},
                    "l1_overview": {"type": "string"},
                    "l2_content": {"type": "string"},
                    "category": {"type": "string", "enum": CATEGORIES},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "importance": {"type": "number"},
                    "confidence": {"type": "number"},
                    "source_message": {"type": "integer"},
                    "triples": {
                        "type": "array",
                        "items": {
                            "type": "array",
                            "items": {"type": "string"},
                            "minItems": 3,
                            "maxItems": 3,
                        },
                    },
                },
                "required": ["content", "l0_abstract", "category", "source_message"],
            },
        }
    },
    "required": ["facts"],
}


# The host model's answer (MCP memory_distill_tasks / memory_distill_apply): the same facts,
# each with the questions a person might ask for it (memories/questions.py).
HOST_SCHEMA: dict[str, Any] = {
    **SCHEMA,
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                **SCHEMA["properties"]["facts"]["items"],
                "properties": {
                    **SCHEMA["properties"]["facts"]["items"]["properties"],
                    "questions": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                },
            },
        }
    },
}


def numbered_chunks(passages: list[Passage], limit: int) -> list[str]:
    """The passages as ``[n] role: text`` lines, packed into chunks of at most ``limit``
    characters; a passage longer than that is cut into several lines with the same n. A
    pasted user turn's paste sits under a line naming it (``pasted.marked``)."""
    lines = []
    for number, passage in enumerate(passages, start=1):
        prefix = f"[{number}] {passage.role}: "
        room = max(1, limit - len(prefix))
        text = marked(passage.text) if passage.pasted else passage.text
        for start in range(0, len(text), room):
            lines.append(prefix + text[start : start + room])
    chunks, current = [], ""
    for line in lines:
        if current and len(current) + 1 + len(line) > limit:
            chunks.append(current)
            current = ""
        current = f"{current}\n{line}" if current else line
    return [*chunks, current] if current else chunks


def parse_facts(value: Any, passages: list[Passage]) -> tuple[list[Fact], list[str]]:
    """(facts, why each unusable item is unusable) from an answer; ValueError if it has no
    list."""
    if not isinstance(value, dict) or not isinstance(value.get("facts"), list):
        raise ValueError('expected {"facts": [...]}')
    facts, problems = [], []
    for number, item in enumerate(value["facts"], start=1):
        try:
            facts.append(_fact(item, passages))
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            problems.append(f"fact {number}: {_reason(error)}")
    return facts, problems


def _reason(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"{error.args[0]} is missing"
    if isinstance(error, (TypeError, AttributeError)):
        return "not an object with the schema's fields"
    return str(error)


def _fact(item: dict[str, Any], passages: list[Passage]) -> Fact:
    content = item["content"]
    if not isinstance(content, str) or not content.strip():
        raise ValueError("no content")
    content = model_text(content)
    if not content:
        raise ValueError("nothing is left of its content once private text and secrets go")
    category = item["category"]
    if category not in CATEGORIES:
        raise ValueError(f"category {category!r} is not one of {', '.join(CATEGORIES)}")
    number = item.get("source_message")
    passage = (
        passages[number - 1] if isinstance(number, int) and 0 < number <= len(passages) else None
    )
    tags = [t for t in (model_text(t) for t in item.get("tags") or []) if t]
    return Fact(
        content=content,
        category=Category(category),
        l0_abstract=model_text(item.get("l0_abstract")),
        l1_overview=model_text(item.get("l1_overview")),
        l2_content=model_text(item.get("l2_content")),
        tags=tags[:10],
        importance=float(item.get("importance", 0.5)),
        confidence=float(item.get("confidence", 0.8)),
        source=passage.source if passage else "",
        created_at=passage.created_at if passage else None,
        triples=parse_triples(item.get("triples")),
        questions=_questions(item.get("questions")),
    )


def _questions(value: Any) -> list[str]:
    """The questions a host gave with a fact (a ValueError names what is wrong)."""
    from memctl.errors import UsageError
    from memctl.memories.questions import clean_questions

    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("questions is not a list of strings")
    try:
        return clean_questions(value)
    except UsageError as error:
        raise ValueError(str(error)) from None


def extract(run: Run, passages: list[Passage], max_facts: int | None = None) -> list[Fact]:
    """At most ``max_facts`` (default ``extract.max_facts``) facts from the passages."""
    trace = run.stage("extract")
    limit = run.settings.extract_max_facts if max_facts is None else max_facts
    facts: list[Fact] | None = [] if run.llm else None
    system = SYSTEM.format(max_facts=limit)
    for chunk in numbered_chunks(passages, run.settings.extract_chunk_chars) if run.llm else []:
        answer = run.ask(system, chunk, SCHEMA, lambda value: parse_facts(value, passages))
        if answer is None:
            facts = None  # the LLM gave out: the rules redo the whole stage
            break
        found, problems = answer
        facts = [*(facts or []), *found]
        if problems:
            trace.notes.append(f"{len(problems)} unusable facts in the LLM's answer")
    if facts is None:
        facts = extract_rules(passages, limit)
        trace.notes.append("rule-based extraction")
    trace.kept = min(len(facts), limit)
    return facts[:limit]
