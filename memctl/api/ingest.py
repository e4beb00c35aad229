"""Conversations and files in, memories out: ingest, import, export, runs and undo.

The hook's fast lane (``memctl.cli.fastlane``) and ``memctl ingest`` both call
``ingest``; this module imports only what the fast path needs at the top, so a
hook does not pay for the slow path's imports.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.config.files import FILE_MODE
from memctl.context import Context
from memctl.errors import DatabaseBusyError, InputError, NotFoundError, UsageError
from memctl.imports import STRATEGIES as STRATEGIES  # import --strategy
from memctl.ingest.capture import capture
from memctl.ingest.capture_report import MODES, Captured, CaptureReport, IngestOptions
from memctl.ingest.read_marks import Opened, open_transcript, pass_over, unchanged
from memctl.ingest.source import wide_codec as wide_codec  # remember - and recall -
from memctl.memories.privacy import secret_in_id

if TYPE_CHECKING:
    from memctl.imports.report import ImportReport as ImportReport
    from memctl.ingest.backfill import BackfillReport, Target
    from memctl.ingest.undo import UndoReport
    from memctl.maintain.queue import DrainReport
    from memctl.store.runs import RunRecord as RunRecord


@dataclass(frozen=True)
class IngestRequest:
    transcript: str | None = None  # a path; None or '-' reads ``stdin``
    stdin: Any = None
    client: str | None = None  # default: guessed from the content
    session_id: str | None = None
    agent_id: str | None = None
    scope: str | None = None  # None or 'project': the current project
    tags: tuple[str, ...] = ()
    mode: str = "smart"  # smart: store and distil; raw: only store
    wait: bool = False  # run the slow path here instead of in a worker
    dry_run: bool = False
    # A hook's: a file with more new bytes than this is not captured here (``deferred``).
    inline_bytes: int | None = None
    # The config overrides a detached worker is started with (the caller's -c KEY=VALUE).
    worker_overrides: dict[str, str] = field(default_factory=dict)


@dataclass
class IngestResult:
    report: CaptureReport
    log: Path  # the worker's log
    drained: DrainReport | None = None  # with ``wait``: the jobs run here
    preview: RunRecord | None = None  # with ``dry_run``: the decisions, nothing written
    spooled: Path | None = None  # the database was busy: the transcript waits here
    replayed: int = 0  # spooled transcripts of earlier runs stored by this one
    released: list[int] = field(default_factory=list)  # jobs of dead workers queued again
    deferred: bool = False  # too big for ``inline_bytes``: nothing stored here
    left: bool = False  # the database was busy before the transcript was read: nothing read

    def ran_own_job(self) -> bool:
        runs = [] if self.drained is None else [*self.drained.done, *self.drained.failed]
        return any(item["job"] == self.report.job_id for item in runs)


def _no_secret_ids(request: IngestRequest) -> None:
    """Refuse an id given by hand that holds a secret: stored as typed, it would reach the
    sessions, the memories and the sync repository (a scrubbed id would make different
    sessions one)."""
    for flag, value in (("--session-id", request.session_id), ("--agent-id", request.agent_id)):
        kind = secret_in_id(value) if value else None
        if kind:
            raise UsageError(
                f"{flag} holds what looks like a secret ({kind}): give another id; "
                "nothing was stored"
            )


def ingest(ctx: Context, request: IngestRequest) -> IngestResult:
    """Store a transcript's new messages at once; distil them now, in a worker, or later.

    Without ``wait`` (a hook's ingest) a database busy for longer than
    ``ingest.lock_wait_ms`` does not fail: the transcript goes to the spool and
    the next ingest or maintain stores it. Either also takes back the jobs of
    workers that died, and stores what earlier runs spooled.
    """
    from memctl.maintain.spawn import log_path, spawn

    _no_secret_ids(request)
    options = IngestOptions(
        client=request.client,
        session_id=request.session_id,
        agent_id=request.agent_id,
        scope=request.scope,
        tags=request.tags,
        mode=request.mode,
    )
    hook = not (request.wait or request.dry_run)
    log = log_path(ctx.settings)
    whole = request.dry_run or options.mode not in MODES
    captured: Captured | None = None
    name = str(request.transcript)
    try:
        with _budget(ctx, hook):
            opened = open_transcript(ctx, request.transcript, request.stdin, options, whole)
    except DatabaseBusyError:
        if not hook:
            raise
        return _busy_before_reading(ctx, request, options, log)
    with opened:
        source = opened.source
        if _too_big(opened, request.inline_bytes):
            return IngestResult(unchanged(ctx, opened, name), log, deferred=True)
        try:
            with _budget(ctx, hook):
                if source is None:  # a file with nothing new since its last capture
                    report = unchanged(ctx, opened, name)
                else:
                    captured = _capture(ctx, opened, request)
                    report = captured.report if captured else unchanged(ctx, opened, name)
        except DatabaseBusyError:
            if not hook or source is None:
                raise
            from memctl.ingest.spool import spool

            spooled = spool(ctx, source, opened.options, opened.inside, opened.after)
            return IngestResult(spooled.report, log, spooled=spooled.path)
    result = IngestResult(report, log)
    if request.dry_run and captured is not None:
        from memctl.ingest.pipeline import preview

        result.preview = preview(ctx, captured).record
        return result
    with _budget(ctx, hook):
        queued = recover(ctx, result)
    if request.wait:
        result.drained = drain_jobs(ctx, "ingest")
    elif (queued or report.job_id is not None) and ctx.settings.ingest_spawn_worker:
        result.report.worker_pid = spawn(ctx.settings, request.worker_overrides)
    return result


def _busy_before_reading(
    ctx: Context, request: IngestRequest, options: IngestOptions, log: Path
) -> IngestResult:
    """A hook met a busy database before it read the transcript (opening the store, or
    reading how far the file was read): the whole transcript goes to the spool, as when
    the capture meets it busy. A file over ``inline_bytes``, or a spool that needs the
    database too (a scope given by name), is left as it is, read for the next run
    (``left``)."""
    from memctl.ingest.spool import spool

    name = str(request.transcript)
    left = IngestResult(CaptureReport(source=name), log, deferred=True, left=True)
    if request.inline_bytes is not None and request.transcript not in (None, "-"):
        if os.stat(name).st_size > request.inline_bytes:
            return left
    with open_transcript(ctx, request.transcript, request.stdin, options, whole=True) as opened:
        assert opened.source is not None
        try:
            spooled = spool(ctx, opened.source, opened.options)
        except DatabaseBusyError:
            return left
    return IngestResult(spooled.report, log, spooled=spooled.path)


def _capture(ctx: Context, opened: Opened, request: IngestRequest) -> Captured | None:
    """Capture what is new; None when the lines new since the last capture hold no message
    (records a client writes after a turn, such as Claude Code's after its Stop hook): they
    are remembered as read."""
    assert opened.source is not None
    try:
        return capture(ctx, opened.source, opened.options, request.dry_run, opened)
    except InputError:
        if request.dry_run or not pass_over(ctx, opened):
            raise
        return None


def _too_big(opened: Opened, inline_bytes: int | None) -> bool:
    """More of the file is new than ``inline_bytes``."""
    tracked = opened.tracked
    if inline_bytes is None or opened.source is None or tracked is None:
        return False
    return os.fstat(tracked.file.fileno()).st_size - tracked.start > inline_bytes


def backfill(
    ctx: Context,
    targets: list[Target],
    mode: str = "smart",
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
    worker_overrides: dict[str, str] | None = None,
) -> BackfillReport:
    """Store every target transcript as the capture hook would; start a worker for the
    distillation jobs that queued (when ``ingest.spawn_worker``), never run them here."""
    from memctl.ingest.backfill import store_all
    from memctl.maintain.spawn import spawn

    report = store_all(ctx, targets, mode, dry_run, progress)
    if report.jobs and ctx.settings.ingest_spawn_worker:
        spawn(ctx.settings, worker_overrides or {})
    return report


def _budget(ctx: Context, hook: bool) -> AbstractContextManager[None]:
    """A hook waits for the database at most ``ingest.lock_wait_ms``; others as configured."""
    return ctx.lock_wait(ctx.settings.ingest_lock_wait_ms) if hook else nullcontext()


def recover(ctx: Context, result: IngestResult | None = None) -> bool:
    """Store the spooled transcripts and queue again the jobs of dead workers; True when
    that queued work. A database still busy leaves both for the next run."""
    from memctl.ingest.spool import replay
    from memctl.maintain.claims import release_orphans

    try:
        replayed = replay(ctx)
        released = release_orphans(ctx.db, ctx.settings.ingest_job_max_attempts)
    except DatabaseBusyError:
        return False
    if result is not None:
        result.replayed, result.released = len(replayed.stored), released
    return bool(replayed.jobs or released)


def drain_jobs(ctx: Context, role: str, log: Callable[[str], None] | None = None) -> DrainReport:
    """Run the queued slow-path jobs until none is left."""
    from memctl.maintain.claims import worker_name
    from memctl.maintain.queue import drain

    return drain(ctx, worker_name(role), log or (lambda line: None))


@dataclass(frozen=True)
class ImportRequest:
    paths: tuple[str, ...]  # files, directories, globs, or '-' for ``stdin``
    stdin: Any = None
    strategy: str = "auto"  # auto, atomic, section, document
    force: bool = False  # import files imported before again
    dry_run: bool = False
    scope: str | None = None
    tags: tuple[str, ...] = ()
    # The config overrides a worker distilling an assistant's session is started with.
    worker_overrides: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ImportPlan:
    """The files an import will read, before it reads them (for a progress bar)."""

    request: ImportRequest
    targets: list[Any]

    @property
    def total_bytes(self) -> int:
        return sum(t.size for t in self.targets)


def plan_import(request: ImportRequest) -> ImportPlan:
    """The files the request names; an InputError when there are none."""
    from memctl.imports.files import expand

    targets = expand(list(request.paths), request.stdin)
    if not targets:
        raise InputError(f"found no files to import in {', '.join(request.paths)}")
    return ImportPlan(request, targets)


def import_files(
    ctx: Context, plan: ImportPlan, progress: Callable[[str, int, int], None] | None = None
) -> ImportReport:
    """Import every planned file; ``progress`` is told (stage, done, total) as it goes, each
    stage counted over the whole import (``memctl.imports.pipeline``: READING in bytes,
    EMBEDDING and WRITING in facts, IMPORTING in memories of memctl's own formats). An
    assistant's session transcript among them queues its distillation, as ``ingest`` does:
    a worker is started for it (when ``ingest.spawn_worker``)."""
    from memctl.imports.pipeline import ImportOptions
    from memctl.imports.pipeline import import_files as run_import
    from memctl.maintain.spawn import spawn

    request = plan.request
    options = ImportOptions(
        request.strategy, request.force, request.dry_run, request.scope, request.tags
    )
    report = run_import(ctx, plan.targets, options, progress)
    queued = any(f.job_id is not None for f in report.files)
    if queued and not request.dry_run and ctx.settings.ingest_spawn_worker:
        spawn(ctx.settings, request.worker_overrides)
    return report


def export(ctx: Context, scope: str | None = None) -> Iterator[str]:
    """Every memory (every state) as memctl JSONL lines: fields and relations, no vectors."""
    from memctl.memories.operations import make_filter
    from memctl.model import State
    from memctl.sync.records import export_lines

    return export_lines(ctx, make_filter(ctx, scope, states=[s.value for s in State]))


def export_to(ctx: Context, output: Path, scope: str | None = None) -> int:
    """``export`` written to the file ``output`` (0600); how many memories. Written beside
    it and renamed, so a failed export never leaves half a file."""
    if output.is_dir() or not output.name or not output.parent.is_dir():
        raise UsageError(f"cannot write the export to {output}: not a file in a directory")
    partial = output.with_name(output.name + ".partial")
    count = 0
    with os.fdopen(
        os.open(partial, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE),
        "w",
        encoding="utf-8",
    ) as stream:
        for line in export(ctx, scope):
            stream.write(line + "\n")
            count += 1
    partial.replace(output)
    return count


def runs(
    ctx: Context,
    limit: int = 20,
    kind: str | None = None,
    before: tuple[str, str] | None = None,
) -> list[RunRecord]:
    """Runs (ingest, import, maintain, sync, undo, and each direct edit), newest first;
    ``kind``: only those of that kind; ``before``: the page after the run (its start, its
    id) one ended with. An import is one run, whatever its files (``ingest.batches``)."""
    from memctl.ingest.batches import one_run
    from memctl.store.runs import batch_runs, list_runs

    heads = _settled(ctx, list_runs(ctx.db, limit, kind, batch_heads=True, before=before))
    return [one_run(batch_runs(ctx.db, r.batch)) if r.batch else r for r in heads]


def undo_refusal(ctx: Context, record: RunRecord) -> str | None:
    """Why ``undo`` refuses a run ``runs`` listed (an import's: any of its files'), in a
    few words; None: it can be undone, if it was not already."""
    from memctl.ingest.batches import batch_refusal

    return batch_refusal(ctx.db, _members(ctx, record))


def changed_nothing(ctx: Context, record: RunRecord) -> bool:
    """Whether a run ``runs`` listed (an import's: every file of it not undone) never
    changed a memory: the viewer offers it no Undo and has no refusal to tell."""
    from memctl.ingest.batches import changed_nothing as batch_changed_nothing

    return batch_changed_nothing(ctx.db, _members(ctx, record))


def _members(ctx: Context, record: RunRecord) -> list[RunRecord]:
    """The runs of ``record``'s batch (an import's files), or ``record`` alone."""
    from memctl.store.runs import batch_runs

    return batch_runs(ctx.db, record.batch) if record.batch else [record]


def _settled(ctx: Context, records: list[RunRecord]) -> list[RunRecord]:
    """``records``, those still marked running whose process is gone (a ``kill -9``)
    marked failed, as the next ingest or maintain would mark them."""
    from memctl.maintain.claims import DEAD_RUN, fail_dead_runs

    if any(r.status == "running" for r in records):
        dead = set(fail_dead_runs(ctx.db))
        for record in records:
            if record.id in dead:
                record.status = DEAD_RUN
    return records


@dataclass(frozen=True)
class TokensToday:
    """LLM tokens the runs started today (local time) used, and the day's budget."""

    used: int
    budget: int  # llm.daily_token_budget; 0: no daily limit


def tokens_today(ctx: Context) -> TokensToday:
    from memctl.ingest.run import day_start
    from memctl.store.runs import tokens_since

    return TokensToday(tokens_since(ctx.db, day_start()), ctx.settings.llm_daily_token_budget)


def run(ctx: Context, run_id: str) -> RunRecord:
    """One run in full (a unique prefix will do); an import's, with every file's."""
    from memctl.ingest.batches import one_run
    from memctl.store.runs import batch_runs, get_run, resolve_run_id

    record = get_run(ctx.db, resolve_run_id(ctx.db, run_id))
    if record is None:
        raise NotFoundError(f"no run with id {run_id}")
    record = _settled(ctx, [record])[0]
    return one_run(batch_runs(ctx.db, record.batch)) if record.batch else record


def undo(ctx: Context, run_id: str | None = None, force: bool = False) -> UndoReport:
    """Revert every memory change of one run (None: the newest direct edit not undone yet),
    as a run of its own; an import's, of every file it read."""
    from memctl.ingest.batches import undo_batch

    return undo_batch(ctx, run_id, force)
