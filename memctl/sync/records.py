"""memctl's own JSONL format: one memory a line, every field and its outgoing relations.

Export writes no vectors (they belong to a model, not to the memory); import
re-makes them, keeps ids, and skips ids already present, so it is safe to run
twice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Any

from memctl.config.files import known_forget_key
from memctl.config.safe_load import json_value
from memctl.config.scope import keyed_scope
from memctl.context import Context
from memctl.errors import InputError, MemctlError
from memctl.memories.operations import kept_content, kept_tags
from memctl.memories.privacy import safe_line, scrub, secret_in_id
from memctl.model import (
    Action,
    Memory,
    Relation,
    RelationType,
    content_hash,
    counted,
    format_time,
    now_iso,
    parse_choice,
    parse_time,
)
from memctl.store import memories as store
from memctl.store.events import deleted_for_good
from memctl.store.memories import ENUMS, MemoryFilter
from memctl.store.relations import relations_of
from memctl.store.sessions import named_session, session_known_as
from memctl.store.writes import Writer

# An imported memory enters this store now, whatever its record says (decay counts from it).
MEMORY_FIELDS = {f.name for f in fields(Memory)} - {"stored_at"}
# Free text besides the content: scrubbed on the way in and out like the content.
TEXT_FIELDS = ("l0_abstract", "l1_overview", "l2_content", "source", "agent_id", "session_id")
# An id or a scope is taken as written: one holding a secret or private text refuses its
# line (scrubbed, different ids would become one).
ID_FIELDS = ("id", "scope", "superseded_by", "session_id", "agent_id")
# Read by every listing, recall and decay: a line with another value in one is refused.
TIME_FIELDS = ("created_at", "updated_at", "invalidated_at", "last_accessed_at")
IMPORT_BATCH = 64
NUMBER_FIELDS = ("importance", "confidence", "strength")


def export_lines(ctx: Context, where: MemoryFilter) -> Iterator[str]:
    """One JSON line per memory (every state unless filtered), oldest first."""
    for memory in store.list_memories(ctx.db, where, None, sort="oldest"):
        record = scrubbed(memory.to_dict())
        del record["stored_at"]  # belongs to this store: an import is stored when it runs
        record["relations"] = [
            {
                "dst_id": r.dst_id,
                "type": str(r.type),
                "weight": r.weight,
                "created_at": r.created_at,
            }
            for r in relations_of(ctx.db, memory.id)
            if r.src_id == memory.id
        ]
        yield json.dumps(record, ensure_ascii=False)


def scrubbed(record: dict[str, Any]) -> dict[str, Any]:
    """A memory's record with private text and secrets taken out of its free text.

    What reaches the store is scrubbed already; an export scrubs again, so a store
    written before a pattern was added does not pass a secret on."""
    for name in ("content", *TEXT_FIELDS):
        if isinstance(record.get(name), str):
            record[name] = scrub(record[name])[0]
    if isinstance(record.get("tags"), list):
        record["tags"] = [scrub(str(t))[0] for t in record["tags"]]
    return record


@dataclass
class ImportReport:
    imported: int = 0
    skipped: int = 0
    forgotten: int = 0  # of the skipped: from a session forgotten here, or deleted for good
    relations: int = 0
    errors: list[str] = field(default_factory=list)


def forgotten_line(count: int) -> list[str]:
    """What an import says of the memories it left out as forgotten here."""
    if not count:
        return []
    return [
        f"{counted(count, 'memory', 'memories')} forgotten here (of a forgotten session, "
        "or deleted for good) left out"
    ]


def parse_record(line: str, default_scope: str) -> tuple[Memory, list[dict[str, Any]]]:
    """A memory and its relations from one line; ValueError says what is wrong."""
    record = json_value(line)
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    if not isinstance(record.get("content"), str):
        raise ValueError('no "content" string')
    relations = record.pop("relations", None) or []
    values = {k: v for k, v in record.items() if k in MEMORY_FIELDS and v is not None}
    _check_ids(values)
    for name in TIME_FIELDS:
        if name in values:
            values[name] = record_time(name, values[name])
    values["content"] = kept_content(values["content"])
    for name in TEXT_FIELDS:
        if isinstance(values.get(name), str):
            values[name] = scrub(values[name])[0]
    values.setdefault("scope", default_scope)
    for name, enum in ENUMS.items():
        if name in values:
            values[name] = parse_choice(enum, values[name], name)
    if not isinstance(values.get("tags", []), list):
        raise ValueError('"tags" must be a list')
    values["tags"] = kept_tags([str(t) for t in values.get("tags", [])])
    for name in NUMBER_FIELDS:
        if name in values and not _finite(values[name]):
            raise ValueError(f'"{name}" must be a finite number')
    values["content_hash"] = content_hash(values["content"])
    values.setdefault("id", stable_id(values["scope"], values["content"]))
    return Memory(**values), relations


def _check_ids(values: dict[str, Any]) -> None:
    """ValueError when an id or scope of a record is no string or holds a secret or
    private text (the message names the field, never its value)."""
    for name in ID_FIELDS:
        if name not in values:
            continue
        if not isinstance(values[name], str):
            raise ValueError(f'"{name}" must be a string')
        kind = secret_in_id(values[name])
        if kind:
            raise ValueError(f'"{name}" holds what looks like a secret ({kind})')


def record_time(name: str, value: Any) -> str:
    """A record's timestamp as the store keeps one; ValueError (naming the field, never
    its value) unless it is an ISO 8601 date and time."""
    try:
        return format_time(parse_time(value))
    except (ValueError, TypeError, AttributeError, OverflowError):
        raise ValueError(f'"{name}" must be an ISO 8601 date and time') from None


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def stable_id(scope: str, content: str) -> str:
    """The id of a record that came without one: the same for the same text in the same
    scope, so that importing a hand-written file twice skips it the second time."""
    return content_hash(f"{scope}\0{content}")[:32]


def parsed_records(
    lines: Iterable[tuple[int, str]], default_scope: str, report: ImportReport, key: bytes | None
) -> Iterator[tuple[Memory, list[dict[str, Any]]]]:
    """The memories of the lines, an older memctl's ``path:`` scope as its keyed name here
    (``config.scope.keyed_scope``: the same project); malformed lines are added to the
    report's errors."""
    seen_any = False
    for number, line in lines:
        seen_any = True
        try:
            memory, relations = parse_record(line, default_scope)
            yield replace(memory, scope=keyed_scope(memory.scope, key)), relations
        except (ValueError, TypeError, MemctlError) as exc:
            reason = safe_line(str(exc).splitlines()[0]) if str(exc) else type(exc).__name__
            report.errors.append(f"line {number}: {reason}")
    if not seen_any:
        raise InputError("nothing to import: the input is empty")


def import_lines(
    ctx: Context,
    lines: Iterable[tuple[int, str]],
    progress: Callable[[int], None] | None = None,
    default_scope: str | None = None,
    run_id: str | None = None,
    origin: str = "stdin",
) -> ImportReport:
    """Import memories in batches, each one an event of run ``run_id`` (so ``memctl undo``
    reverts them); malformed lines are reported and skipped. Each memory's source is the
    file (``origin``) it came from, whatever its record claims (``cli`` would make it the
    user's word, ``memories.provenance``): the claim is kept in its import event."""
    report, pending_relations = ImportReport(), []
    batch: list[tuple[Memory, str]] = []
    scope = default_scope or ctx.settings.project_scope
    for memory, relations in parsed_records(lines, scope, report, ctx.settings.scope_key):
        pending_relations += [(memory.id, r) for r in relations]
        batch.append(imported_from(memory, origin))
        if len(batch) >= IMPORT_BATCH:
            _import_batch(ctx, batch, report, progress, run_id)
            batch = []
    _import_batch(ctx, batch, report, progress, run_id)
    report.relations = _import_relations(ctx, pending_relations, report, run_id)
    return report


# Where an imported memory came from: the file, as file import names it (``file:<path>``).
IMPORT_SOURCE = "file:"


def imported_from(memory: Memory, origin: str) -> tuple[Memory, str]:
    """``memory`` with the file it was imported from as its source, and the source its
    record claimed ('' when it named a file already), for its import event."""
    if memory.source.startswith(IMPORT_SOURCE):
        return memory, ""
    claimed, memory.source = memory.source, f"{IMPORT_SOURCE}{origin}"
    return memory, claimed


def preview_lines(
    ctx: Context, lines: Iterable[tuple[int, str]], default_scope: str | None = None
) -> ImportReport:
    """What ``import_lines`` would do with the lines, writing nothing."""
    report = ImportReport()
    scope = default_scope or ctx.settings.project_scope
    seen: set[str] = set()
    key = known_forget_key(ctx.settings.home)
    for memory, _ in parsed_records(lines, scope, report, ctx.settings.scope_key):
        present = memory.id in seen or bool(store.get_memories(ctx.db, [memory.id]))
        seen.add(memory.id)
        forgotten = not present and _forgotten_here(ctx, memory, memory.source, key)
        report.forgotten += forgotten
        report.skipped += present or forgotten
        report.imported += not (present or forgotten)
    return report


def _forgotten_here(ctx: Context, memory: Memory, source: str, key: bytes | None) -> bool:
    """Whether the memory was deleted for good here (``delete --permanent``), or came from
    a session forgotten here (its record names it by id or by its source): an export made
    before either brings none of it back."""
    if deleted_for_good(ctx.db, memory.id):
        return True
    named = {memory.session_id, named_session(source)} - {None, ""}
    return key is not None and any(
        (found := session_known_as(ctx.db, str(name), key)) is not None
        and found.forgotten_at is not None
        for name in named
    )


def _import_batch(
    ctx: Context,
    batch: list[tuple[Memory, str]],
    report: ImportReport,
    progress: Callable[[int], None] | None,
    run_id: str | None,
) -> None:
    seen = set(store.get_memories(ctx.db, [m.id for m, _ in batch]))
    key = known_forget_key(ctx.settings.home)
    fresh = []
    for memory, claimed in batch:  # a record the file holds twice is written once
        if memory.id in seen:
            continue
        seen.add(memory.id)
        if _forgotten_here(ctx, memory, claimed or memory.source, key):
            report.forgotten += 1
        else:
            fresh.append((memory, claimed))
    report.skipped += len(batch) - len(fresh)
    vectors = ctx.vectors([m.content for m, _ in fresh])
    writer = Writer(ctx.db, run_id)
    with ctx.db.atomic():
        for (memory, claimed), vector in zip(fresh, vectors, strict=True):
            extra = {"claimed_source": claimed} if claimed else {}
            writer.create(memory, vector, Action.IMPORT, format="memctl-jsonl", **extra)
    name(ctx, [memory for memory, _ in fresh])
    report.imported += len(fresh)
    if progress:
        progress(len(batch))


def name(ctx: Context, memories: list[Memory]) -> None:
    """The vocabulary's names in the searched vectors of memories just written, as every
    other write path gives them (ingest/meaning.py): ranked by their content alone until
    ``maintain`` ran, a fresh store answered a reworded question otherwise than it would
    after (docs/benchmarks.md, "Imported memories named at once")."""
    from memctl.ingest.meaning import give_names

    give_names(ctx.db, ctx.embedder, [(m.id, m.content) for m in memories])


def _import_relations(
    ctx: Context,
    pending: list[tuple[str, dict[str, Any]]],
    report: ImportReport,
    run_id: str | None,
) -> int:
    added = 0
    writer = Writer(ctx.db, run_id)
    with ctx.db.atomic():
        for src_id, raw in pending:
            try:
                relation = Relation(
                    src_id=src_id,
                    dst_id=str(raw["dst_id"]),
                    type=RelationType(raw["type"]),
                    weight=float(raw.get("weight", 1.0)),
                    created_at=record_time("created_at", raw.get("created_at") or now_iso()),
                )
            except (KeyError, ValueError, TypeError):
                report.errors.append(
                    f"memory {src_id[:8]}: malformed relation {safe_line(repr(raw))}"
                )
                continue
            if len(store.get_memories(ctx.db, [relation.src_id, relation.dst_id])) == 2:
                writer.link(relation)
                added += 1
    return added
