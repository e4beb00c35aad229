"""What flows through the distillation stages: passages in, facts, then decisions out.

These are shared by conversation ingest and file import: both turn text into
``Passage``s, ``extract`` them into ``Fact``s, and ``reconcile`` the facts
into ``Decision``s against the memories already stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from memctl.model import Category, Role, Tier

if TYPE_CHECKING:
    from memctl.ingest.entities import Triple

ABSTRACT_WIDTH = 120


class Verdict(StrEnum):
    """What reconcile decides to do with a fact."""

    CREATE = "create"
    MERGE = "merge"
    SKIP = "skip"
    SUPERSEDE = "supersede"
    SUPPORT = "support"
    CONTEXTUALIZE = "contextualize"
    CONTRADICT = "contradict"


def abstract(text: str, width: int = ABSTRACT_WIDTH) -> str:
    """One line standing for ``text``: its first line, cut to ``width``."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    flat = " ".join(first.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@dataclass
class Passage:
    """A piece of text to distil: a message, or a chunk of an imported file."""

    text: str
    role: Role = Role.USER
    source: str = ""  # e.g. session:<id>#<seq> or file:<path>#<chunk>
    created_at: str | None = None
    # a user turn the user pasted (a manual, a log, a docs page: ingest/pasted.py), not
    # wrote: the rules read no fact from it
    pasted: bool = False


@dataclass
class Fact:
    """One atomic fact on its way to becoming (or changing) a memory."""

    content: str
    category: Category
    l0_abstract: str = ""
    l1_overview: str = ""
    l2_content: str = ""
    tags: list[str] = field(default_factory=list)
    importance: float = 0.5
    confidence: float = 0.7
    source: str = ""
    created_at: str | None = None
    questions: list[str] = field(default_factory=list)  # the host's (memories/questions.py)
    # set by the stages: the embedding (a numpy row), the admission score and tier
    vector: Any = None
    # the vector of its text and the names the vocabulary gives what it mentions, when it
    # has any (ingest/meaning.py): what it is searched by once written
    named: Any = None
    score: float | None = None
    tier: Tier = Tier.WORKING
    # what the fact states as graph triples, given by an LLM or the host (rules read the text)
    triples: list[Triple] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.content = self.content.strip()
        self.l0_abstract = self.l0_abstract.strip() or abstract(self.content)
        self.l1_overview = self.l1_overview.strip() or self.content
        self.l2_content = self.l2_content.strip() or self.content
        self.importance = min(1.0, max(0.0, float(self.importance)))
        self.confidence = min(1.0, max(0.0, float(self.confidence)))


@dataclass
class Decision:
    """A verdict on one fact; ``memory_id`` is the memory it made or changed, once applied."""

    verdict: Verdict
    fact: Fact
    target_id: str | None = None
    merged: str | None = None
    reason: str = ""
    by: str = "rules"  # rules, llm or guard
    memory_id: str | None = None
    # A MERGE's text and its vector, embedded before the write transaction (prepare_writes)
    embedded: tuple[str, Any] | None = None
    named: Any = None  # that text's vector with its names, when it has any (ingest/meaning.py)
    # the questions a memory it creates is stored with, and their vectors (prepare_writes)
    asked: list[tuple[str, bytes]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": str(self.verdict),
            "fact": self.fact.l0_abstract,
            "category": str(self.fact.category),
            "tier": str(self.fact.tier),
            "score": None if self.fact.score is None else round(self.fact.score, 3),
            "target_id": self.target_id,
            "memory_id": self.memory_id,
            "by": self.by,
            "reason": self.reason,
            "source": self.fact.source,
        }


@dataclass
class StageTrace:
    """What one stage did: how many facts it passed on, which it dropped and why."""

    stage: str
    kept: int = 0
    dropped: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def drop(self, fact: Fact, reason: str) -> None:
        self.dropped.append({"fact": fact.l0_abstract, "reason": reason})

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "kept": self.kept,
            "dropped": self.dropped,
            "notes": self.notes,
        }
