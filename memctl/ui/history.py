"""A memory page's relations and history, as a person reads them: each relation names the
other memory (its words, its state) in the direction it runs, and each event says what it
did and to whom (the memory a link or a supersede names), accesses in a row folded to one
line so a memory recalled often keeps its changes in sight."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from memctl.api.sessions import named_session, one_line
from memctl.model import Action, Event, Memory, Relation, RelationType

if TYPE_CHECKING:
    from memctl.api.ingest import RunRecord

LINKS = frozenset({Action.LINK, Action.UNLINK})  # the events that add or take a relation
UNSHOWN_FIELDS = frozenset({"content_hash"})  # an update's fields its history leaves out
OTHER_LINE = 120  # characters of another memory's text a relation or an event shows
RELATIONS_SHOWN = 50  # a memory's relations a page lists (a hub may have hundreds)
# What decided an update, as its history line says it, where reconcile's word is its own:
# "skip" is another message saying the memory again (one more source of it, nothing
# changed), which the line read as "update (skip)".
DECISIONS = {"skip": "said again"}
# A relation read from its target's side: "A supersedes B" shown on B as "superseded by A".
PASSIVE = {
    "supports": "supported by",
    "contradicts": "contradicted by",
    "contextualizes": "put in context by",
    "supersedes": "superseded by",
    "depends_on": "needed by",
    "related": "related to",
}


def first_relations(relations: list[Relation]) -> list[Relation]:
    """The relations a page lists: those that change what the memory means (supersedes,
    contradicts, ...) before plain "related" ones, the heaviest first, at most
    ``RELATIONS_SHOWN``."""
    ranked = sorted(relations, key=lambda r: (r.type == RelationType.RELATED, -r.weight))
    return ranked[:RELATIONS_SHOWN]


def named_in(memory: Memory, relations: Iterable[Relation], history: Iterable[Event]) -> set[str]:
    """The other memories a memory's page names: the one superseding it, and those its
    relations and events point at."""
    ids = {i for r in relations for i in (r.src_id, r.dst_id)} | {memory.superseded_by or ""}
    for event in history:
        data = event.data
        ids.update(str(data[k]) for k in ("src_id", "dst_id", "superseded_by") if data.get(k))
    return ids - {memory.id, ""}


def about(memory: Memory | None) -> dict[str, Any] | None:
    """Another memory as a page names it: its words (cut) and its state; None once it is
    gone for good (its id alone, no link to a page that would say "not found")."""
    if memory is None:
        return None
    return {
        "id": memory.id,
        "text": one_line(memory.content, OTHER_LINE),
        "state": str(memory.state),
    }


def related(
    memory: Memory, relations: list[Relation], others: dict[str, Memory]
) -> list[dict[str, Any]]:
    """One row per other memory and type: "supersedes X" or "superseded by X"; a relation
    stored both ways (a contradiction) is one row, read by which of the two was said
    first: "contradicts X" (said earlier: ``order``), "contradicted by X" (said later)."""
    pairs = {(r.src_id, r.dst_id, str(r.type)) for r in relations}
    rows, seen = [], set()
    for r in relations:
        outgoing = r.src_id == memory.id
        other, kind = (r.dst_id if outgoing else r.src_id), str(r.type)
        if (other, kind) in seen:
            continue
        seen.add((other, kind))
        says, order = (kind if outgoing else PASSIVE.get(kind, kind)), None
        known = others.get(other)
        if (r.dst_id, r.src_id, kind) in pairs:
            says = kind
            if known is not None and known.created_at != memory.created_at:
                later = known.created_at > memory.created_at
                says = PASSIVE.get(kind, kind) if later else kind
                order = "said later" if later else "said earlier"
        rows.append(
            {
                "type": kind,
                "says": says,
                "order": order,
                "id": other,
                "weight": r.weight,
                "other": about(known),
            }
        )
    return rows


def told(
    memory: Memory,
    event: Event,
    run: RunRecord | None,
    others: dict[str, Memory],
    origins: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One line of a memory's history: what changed, the decision that changed it (a merge,
    a supersede, a message saying it again), the message that said it (``said``: of the
    memory's ``origins``, its session and when), the memory it names (a link read as its
    relation is: ``linked``), and which run did it (its kind, the door of an edit, the
    session of an ingest), as ``memctl events`` and ``memctl runs`` hold them."""
    memory_id, data = memory.id, event.data
    before, after = data.get("before") or {}, data.get("after") or {}
    changed = sorted(k for k in after if k not in UNSHOWN_FIELDS and before.get(k) != after[k])
    named = data.get("superseded_by") or next(
        (data[k] for k in ("dst_id", "src_id") if data.get(k) and data[k] != memory_id), None
    )
    decision = data.get("decision")
    return {
        **event.to_dict(),
        "changed": changed,
        "was": before.get("content") if "content" in changed else None,
        # what decided a create or an update, when it was more than that (merge, supersede)
        "decision": DECISIONS.get(decision, decision)
        if decision and decision != str(event.action)
        else None,
        "said": said_in(data, origins or []),
        "names": None if named is None else {"id": named, "other": about(others.get(named))},
        "linked": linked(memory, data, others.get(str(named))) if event.action in LINKS else None,
        # the run an undo's change took back (an unlink's event names it by its run only)
        "undid": data.get("undo_of") or (run.undo_of if run and run.kind == "undo" else None),
        "count": 1,
        "run": None
        if run is None
        else {"id": run.id, "kind": run.kind, "door": run.door, "session_id": run.session_id},
    }


def said_in(data: dict[str, Any], origins: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The message an event's evidence came from (a merge's fact, a message saying the
    memory again: its ``source``), as the memory's origins name it (its messages, whether
    it is stored), and when it was said; None for an event without one (a forget of that
    session took its source out)."""
    session_id = named_session(data.get("source"))
    if session_id is None:
        return None
    known = next((o for o in origins if o["session_id"] == session_id), None)
    return {
        "session_id": session_id,
        "first": known["first"] if known else 0,
        "last": known["last"] if known else 0,
        "stored": bool(known and known["stored"]),
        "at": data.get("source_at"),
    }


def linked(memory: Memory, data: dict[str, Any], other: Memory | None) -> str:
    """A link event's relation as the memory's page reads it (``related``): passive from
    its target's side ("superseded by"); a contradiction, stored both ways, by which was
    said first ("contradicted by" the one said later)."""
    kind = str(data.get("type") or "")
    if data.get("dst_id") == memory.id and data.get("src_id") != memory.id:
        return PASSIVE.get(kind, kind)
    if kind == str(RelationType.CONTRADICTS) and other is not None:
        return PASSIVE[kind] if other.created_at > memory.created_at else kind
    return kind


def folded(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Accesses in a row (newest first), by the same door, as one line: its count and the
    first one's time (``since``)."""
    out: list[dict[str, Any]] = []
    for line in lines:
        last = out[-1] if out else None
        if (
            last is not None
            and line["action"] == str(Action.ACCESS) == last["action"]
            and line["data"].get("by") == last["data"].get("by")
        ):
            last["count"] += 1
            last["since"] = line["at"]
            continue
        out.append(line)
    return out


def offer_undo(lines: list[dict[str, Any]], undoable: set[str]) -> list[dict[str, Any]]:
    """The lines of a memory's history (newest first), each run that `memctl undo` takes
    back now (``undoable``) offered on its newest line (``undo``) only: one button a run."""
    offered: set[str] = set()
    for line in lines:
        run_id = str((line["run"] or {}).get("id"))
        line["undo"] = run_id in undoable and run_id not in offered
        offered.add(run_id)
    return lines
