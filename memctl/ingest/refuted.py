"""Stage: tool results outrank claims. A fact claiming what the session's tool calls deny
(``claims``: a file never written said made, tests said to pass while a check still
fails) is dropped before admission, the tool result as its reason."""

from __future__ import annotations

from memctl.ingest.claims import refuted
from memctl.ingest.facts import Fact
from memctl.ingest.run import Run

# facts that a tool result itself gave ("tests run with `pytest` (passed on …)", a fixed
# error): evidence, not claims
EVIDENCE_TAGS = frozenset({"command", "case"})


def drop_refuted(run: Run, facts: list[Fact]) -> list[Fact]:
    """Stage: a fact claiming what the session's tool results deny is not kept."""
    if not run.evidence:
        return facts
    trace = run.stage("claims")
    kept = []
    for fact in facts:
        denied = [] if EVIDENCE_TAGS & set(fact.tags) else refuted(fact.content, run.evidence)
        if denied:
            trace.drop(fact, f"a tool result denies it: {denied[0]}")
        else:
            kept.append(fact)
    trace.kept = len(kept)
    return kept
