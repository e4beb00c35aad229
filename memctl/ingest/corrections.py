"""A later session correcting an earlier one's digest.

A digest records what its session claimed ("Created: CLAUDE.md", "Fixed: `npm run build`
…", "Outcome: all tests pass"). A later session of the same project may show it wrong: the
user says "/init did NOT create CLAUDE.md" or "the build still fails", or its own digest
says a command is still failing. Such a memory corrects the earlier digest when one of its
sentences says something was not done or does not work (``CORRECTING``) and names a file
or a command (``names``) that a claim of the earlier digest names, said without a negation. A
question corrects nothing ("Would I be able to redirect so the old URL doesn't break?"):
nor does one of the asks a later digest's "Asked:" line joins with "; ".

The correcting memory is linked ``contradicts`` to the digest (recall ranks the weaker side
of a contradiction lower, ``retrieve.stages.status``), the digest's confidence falls to
``CORRECTED_CONFIDENCE`` (below a fact's, so the correction is the stronger side), and the
session-start block puts the correction before the digest (``retrieve.session_start``).
"""

from __future__ import annotations

import re

from memctl.ingest.claims import NOT_A_CLAIM
from memctl.ingest.rule_sentences import QUESTION, sentences
from memctl.ingest.run import Run
from memctl.lazy_re import lazy
from memctl.memories.provenance import DIGEST_TAG
from memctl.model import Memory, Relation, RelationType, State
from memctl.store.memories import MemoryFilter, list_memories, session_memories
from memctl.store.relations import has_relation

# the latest digests of the project a new session's memories are checked against
EARLIER_DIGESTS = 5
# a corrected digest's confidence: below a rules fact's (0.7-0.9), so that recall's
# contradiction rule ranks the correction above it
CORRECTED_CONFIDENCE = 0.5
# a sentence saying something was not done, is missing or does not work (not an order:
# "don't edit X" corrects nothing)
CORRECTING = lazy(
    r"\b(?:did not|didn't|was not|wasn't|were not|weren't|is not|isn't|are not|aren't|does not|"
    r"doesn't|never (?:was|were|got)|has not|hasn't|have not|haven't|no longer)\b|"
    r"\bstill (?:fail(?:s|ing)?|broken|missing|red|crash(?:es|ing)?|errors?|not)\b|"
    r"\b(?:is|was|are|were) (?:missing|broken|wrong)\b|\brefused\b|"
    r"되지 않|안 됐|없습니다|실패|されていません|できていません|失敗|没有|未能|仍然失败|还是失败",
    re.I,
)
# the digest's lines that claim something was done: the first four list it, item by item
CLAIM_LINES = ("Created:", "Edited:", "Ran:", "Fixed:", "Found:", "Decided:", "Outcome:")
# a command in backticks, or a file name with an extension (CLAUDE.md, src/app.ts)
NAME = lazy(r"`([^`\n]{2,80})`|((?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5})\b")
SHORTEST_NAME = 4
# where a digest's line joins one item to the next ("Asked:", "Left open:"), or a backtick
# opening or closing a command, inside which a "; " joins nothing
ITEMS = lazy(r"`|[;；]\s+")
# a later digest's record of a call the person declined at the permission prompt ("Edit
# /repo/skills/search/SKILL.md refused", "`deploy.sh` refused"): its session's, it says
# nothing of an earlier one's claims (fresh7's 2026-04-23 session "corrected" the
# response-header digest of 04-17 by three declined edits of its SKILL.md files)
DECLINED = lazy(r"^\s*(?:Left open:\s*)?(?:`[^`]*`|[\w-]+ \S+) refused\s*$")
EDITED = "Edited:"


def names(text: str) -> set[str]:
    """The files (by their base name) and commands ``text`` names, lower-cased."""
    found = set()
    for command, path in NAME.findall(text):
        name = (command or path.rsplit("/", 1)[-1]).strip().lower()
        if len(name) >= SHORTEST_NAME and not name.replace(".", "").isdigit():
            found.add(name)
    return found


def claimed(digest: str) -> str:
    """The digest's claims (its lines of what was done, without negated sentences), as
    one lower-cased text."""
    said = []
    for line in digest.splitlines():
        if line.startswith(CLAIM_LINES[:4]):  # lists of what was done: each item a claim
            said.append(line)
        elif line.startswith(CLAIM_LINES):
            said += [s for s in sentences(line) if not NOT_A_CLAIM.search(s)]
    return "\n".join(said).lower()


def correction(text: str, digest: str) -> list[str]:
    """The sentences of ``text`` that correct a claim of ``digest`` (none: it corrects
    nothing)."""
    return correcting(text, claimed(digest))


def correcting(text: str, claims: str) -> list[str]:
    """The sentences of ``text`` that correct one of ``claims`` (``claimed``'s text). A file
    ``text`` itself edited (its "Edited:" line) was there: what it says the file lacked is
    its own work's start, no earlier claim denied (fresh8's code-tour sub-agent, "the
    validation command exited non-zero because `README.md` did not include the required
    phrase", then its edit, "corrected" a week older digest that had edited a README.md)."""
    if not claims:
        return []
    lines = text.splitlines()
    edited = names(" ".join(line for line in lines if line.startswith(EDITED)))
    return [
        s
        for line in lines
        if not line.startswith(CLAIM_LINES[:4])  # its own claims correct nothing
        for s in sentences(line)
        if any(corrects(item, claims, edited) for item in items(s))
    ]


def items(sentence: str) -> list[str]:
    """The items a digest's line joins with "; " (a sentence of prose is one), the commands
    in backticks kept whole."""
    found, start, quoted = [], 0, False
    for mark in ITEMS.finditer(sentence):
        if mark.group() == "`":
            quoted = not quoted
        elif not quoted:
            found.append(sentence[start : mark.start()])
            start = mark.end()
    return [*found, sentence[start:]]


def corrects(item: str, claims: str, edited: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether one item says that something one of ``claims`` names (and the item's own
    memory did not edit) was not done or does not work: the negation and the name in the
    same item, which asks nothing. A later digest's "Left open: `ls skills/` refused; asked:
    … start on the SKILL.md?" corrects no claim of SKILL.md: the refusal is the command's
    (the fresh8 split's 84be825e contradicted an earlier digest so, and every answer folded
    into that one was possible); nor does its "Edit …/SKILL.md refused" (``DECLINED``)."""
    return (
        CORRECTING.search(item) is not None
        and QUESTION.search(item) is None
        and DECLINED.match(item) is None
        and any(name in claims for name in names(item) - edited)
    )


def link_corrections(run: Run, session_id: str) -> int:
    """Link each memory of the session that corrects an earlier digest of its project, and
    lower that digest's confidence; how many links were made."""
    mine = session_memories(run.db, session_id)
    if not mine:
        return 0
    latest = MemoryFilter(scopes=(run.scope,), tag=DIGEST_TAG, states=(State.ACTIVE,))
    first = min(m.created_at for m in mine)
    earlier = [
        d
        for d in list_memories(run.db, latest, EARLIER_DIGESTS + 1, "created")
        if d.session_id != session_id and d.created_at < first
    ]
    made = 0
    for old in earlier:
        claims, linked = claimed(old.content), 0
        for new in mine if claims else []:
            said = correcting(new.content, claims)
            if said and not has_relation(run.db, new.id, old.id, RelationType.CONTRADICTS):
                _mark(run, new, old, said[0], lower=linked == 0)
                linked += 1
        made += linked
    return made


def _mark(run: Run, new: Memory, old: Memory, said: str, lower: bool) -> None:
    """Link ``new`` to the digest it corrects; with ``lower``, lower the digest's confidence
    (once: the digest read before the first link)."""
    why = f"corrected by a later session: {said[:120]}"
    run.writer.link(Relation(new.id, old.id, RelationType.CONTRADICTS), reason=why)
    if lower and old.confidence > CORRECTED_CONFIDENCE:
        run.writer.update(old, {"confidence": CORRECTED_CONFIDENCE}, decision="corrected", by=why)
    run.stage("corrections").notes.append(f"{new.id[:8]} corrects {old.id[:8]}: {said[:120]}")
