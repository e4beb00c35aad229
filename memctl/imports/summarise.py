"""The abstracts of a section or document memory: from the LLM, else derived from the text.

A memory made of a section or a whole document keeps the text itself as its
content. The LLM, asked once per memory (and retried by the LLM client
``llm.retries`` times, waiting ``llm.backoff_seconds`` and then twice that),
writes its l0 abstract, l1 overview, l2 content, category, tags and
importance from at most ``extract.chunk_chars`` characters of it (a longer
text keeps itself as l2). Without an answer they are derived: l0 is the
heading and the first sentence, l1 the first lines (headings and list marks
left out), l2 the whole text, and the category the one most of its sentences
match among the extraction rules' patterns (entities when none does).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from memctl.ingest.extract_rules import match
from memctl.ingest.facts import abstract
from memctl.ingest.rule_sentences import sentences
from memctl.ingest.run import Run
from memctl.memories.markdown import HEADING
from memctl.memories.privacy import model_text
from memctl.model import Category

OVERVIEW_LINES = 5
DEFAULT_CATEGORY = Category.ENTITIES
MAX_TAGS = 5
WHAT = {"section": "one section of a document", "document": "a document (or a part of one)"}
SYSTEM = """You index {what} a person imported into their long-term memory. Say only \
what the text says.
- l0_abstract: one line saying what the text is about.
- l1_overview: 2-5 lines with its key points.
- l2_content: every useful detail, faithful to the text.
- category: profile (who the person is), preferences (likes, dislikes, choices), entities \
(projects, tools, people, places and their attributes), events (what happened or will \
happen), cases (a problem and its solution) or patterns (habits, workflows, rules).
- tags: at most 5 short keywords. importance: between 0 and 1.
- Write in the language of the text."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "l0_abstract": {"type": "string"},
        "l1_overview": {"type": "string"},
        "l2_content": {"type": "string"},
        "category": {"type": "string", "enum": [c.value for c in Category]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "importance": {"type": "number"},
    },
    "required": ["l0_abstract", "l1_overview", "l2_content", "category"],
}


@dataclass(frozen=True)
class Summary:
    l0: str
    l1: str
    l2: str
    category: Category
    tags: list[str] = field(default_factory=list)
    importance: float = 0.5
    by: str = "rules"


def parse_summary(value: Any) -> Summary:
    """A summary from an answer; ValueError (so the client retries) when it is not one."""
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object")
    texts = [value.get(k) for k in ("l0_abstract", "l1_overview", "l2_content")]
    if not all(isinstance(t, str) and model_text(t) for t in texts):
        raise ValueError("l0_abstract, l1_overview and l2_content must be non-empty strings")
    l0, l1, l2 = (model_text(t) for t in texts)
    importance = value.get("importance", 0.5)
    tags = value.get("tags") if isinstance(value.get("tags"), list) else []
    return Summary(
        l0,
        l1,
        l2,
        Category(str(value.get("category"))),
        [t for t in map(model_text, tags or []) if t][:MAX_TAGS],
        float(importance) if isinstance(importance, int | float) else 0.5,
        by="llm",
    )


LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def body_of(text: str) -> str:
    """The text without its heading line."""
    first, _, rest = text.lstrip().partition("\n")
    return rest if HEADING.match(first) else text


def prose(text: str) -> list[str]:
    """The text's lines that are not headings, without list marks, trimmed."""
    found = (LIST_MARK.sub("", line).strip() for line in text.splitlines())
    return [line for line in found if line and not HEADING.match(line)]


def derived_category(text: str) -> Category:
    found = Counter(p.category for s in sentences(text) if (p := match(s)) is not None)
    return found.most_common(1)[0][0] if found else DEFAULT_CATEGORY


def derived(text: str, heading: str = "") -> Summary:
    body = body_of(text)
    lines = prose(body)
    first = next(iter(sentences("\n".join(lines[:1]))), "")
    l0 = f"{heading}: {first}" if heading and first else first or heading
    return Summary(
        abstract(l0),
        "\n".join(lines[:OVERVIEW_LINES]),
        text.strip(),
        derived_category(body),
    )


def summarise(run: Run, text: str, kind: str, heading: str = "", title: str = "") -> Summary:
    """The abstracts of one memory-to-be; ``kind`` is ``section`` or ``document``."""
    limit = run.settings.extract_chunk_chars
    context = [f"Document: {title}" if title else "", f"Section: {heading}" if heading else ""]
    prompt = "\n".join([*filter(None, context), "", text[:limit]]).lstrip()
    answer = run.ask(SYSTEM.format(what=WHAT[kind]), prompt, SCHEMA, parse_summary)
    if answer is None:
        return derived(text, heading or title)
    return replace(answer, l2=text.strip()) if len(text) > limit else answer
