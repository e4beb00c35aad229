"""File import: detect -> store the raw text -> distil (in workers) -> reconcile and write.

For each file, in the calling thread: ``survey`` it (format, SHA-256,
strategy); skip it if this content was imported into this scope before
(unless ``force``), or is the same as an earlier file of this import; store
its raw text as a session (``raw``). Then a worker thread distils its facts
(``distil``: at most ``import.concurrency`` files at once, since LLM calls
mostly wait). Back in the calling thread, the one writer, each file's facts
are embedded, deduplicated among themselves, passed through ingest's noise
and admission stages (atomic facts only: sections, documents and other
tools' memories were kept on purpose), and reconciled against the store
``import.reconcile_batch`` facts at a time, each batch written in its own
transaction so a batch sees the ones before it and no write lock waits on
an LLM. The run record and the import's record close the file.

memctl's own formats skip all that: their memories are imported as they
are, ids kept (``memctl.sync.records``). A file's own problems (unreadable,
binary, malformed) fail that file only; trouble with the store stops the
import.
"""

from __future__ import annotations

import socket
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from memctl.config.files import known_forget_key
from memctl.context import Context
from memctl.embed import BATCH_TEXTS
from memctl.errors import InputError, UsageError
from memctl.imports import detect, sessions
from memctl.imports.dedupe import dedupe
from memctl.imports.detect import ATOMIC, STRATEGIES, Survey
from memctl.imports.distil import Gone, Plan, distil
from memctl.imports.files import Target
from memctl.imports.formats import ChatNotImportedError
from memctl.imports.formats.base import Kind
from memctl.imports.raw import session_id, store_raw
from memctl.imports.report import (
    DRY_RUN,
    FORCE_AGAIN,
    IMPORTED,
    SKIPPED,
    UNCHANGED,
    FileReport,
    ImportReport,
)
from memctl.ingest.apply import apply, prepare_writes
from memctl.ingest.facts import Decision, Fact
from memctl.ingest.pipeline import FACT_STAGES, embed, record_decisions
from memctl.ingest.reconcile import decide
from memctl.ingest.run import Run, holder_gone, start_run
from memctl.ingest.undo import undo
from memctl.llm import choose_llm
from memctl.memories.operations import kept_tags, personal_scope, resolve_scope
from memctl.model import new_id, now_iso
from memctl.store import taken_out
from memctl.store.imports import (
    DONE,
    FAILED,
    STORED,
    ImportRecord,
    already_imported,
    find_import,
    save_import,
)
from memctl.store.runs import get_run, save_run
from memctl.store.sessions import get_session
from memctl.sync.records import forgotten_line, import_lines, preview_lines

# A file's own problems: they fail that file, and the import goes on with the others.
FILE_ERRORS = (InputError, OSError)

# The stages an import tells its progress in: (stage, done, total), counted over the whole
# import. Reading counts bytes (of every planned file); a total grows as each file's count
# becomes known (its facts once distilled, its memories once counted).
READING = "reading bytes"
EMBEDDING = "embedding facts"
WRITING = "writing facts"
IMPORTING = "importing memories"  # memctl's own formats: embedded and written together
# A file the extraction found no fact in (the rules keep few from plain notes): its text is
# stored all the same, as a session of its own
NO_FACTS = "no fact in it to keep as a memory; its text is kept: `sessions grep` and recall find it"

StageProgress = Callable[[str, int, int], None]


class _Counts:
    """What an import has done so far, told to ``progress`` (from any thread)."""

    def __init__(self, progress: StageProgress | None, total_bytes: int) -> None:
        self.progress = progress
        self.done: Counter[str] = Counter()
        self.total: Counter[str] = Counter({READING: total_bytes})
        self.lock = threading.Lock()

    def add(self, stage: str, done: int = 0, total: int = 0) -> None:
        if self.progress is None:
            return
        with self.lock:
            self.done[stage] += done
            self.total[stage] += total
            self.progress(stage, self.done[stage], self.total[stage])

    def read(self, size: int) -> None:
        if size:
            self.add(READING, size)


@dataclass(frozen=True)
class ImportOptions:
    strategy: str = detect.AUTO
    force: bool = False
    dry_run: bool = False
    scope: str | None = None
    tags: tuple[str, ...] = ()


INTERRUPTED = "interrupted"  # a run's status after Ctrl-C (maintain marks dead ones so too)


@dataclass
class _Job:
    """A file handed to a worker, and what the writer needs when it comes back."""

    plan: Plan
    file: FileReport
    run: Run
    record: ImportRecord | None  # None on a dry run


class _Importer:
    def __init__(self, ctx: Context, options: ImportOptions, counts: _Counts) -> None:
        if options.strategy not in STRATEGIES:
            raise UsageError(
                f"unknown strategy {options.strategy!r}: expected one of {', '.join(STRATEGIES)}"
            )
        self.ctx, self.options, self.counts = ctx, options, counts
        self.scope = resolve_scope(ctx, options.scope)
        self.tags = kept_tags(list(options.tags))
        self.seen: dict[str, str] = {}  # content hash -> the first file of this import with it
        self.key = known_forget_key(ctx.settings.home)  # a forgotten import's digest is keyed
        # the keyed digests of what a forget or redact took out, read here once: a chat
        # export imported again after one (cumulative: ChatGPT's) repeats those messages
        self.gone = taken_out.digests(ctx.db) if self.key is not None else frozenset()
        self.batch = new_id()  # every file's run carries it: the import is one run

    def start(self, target: Target, file: FileReport) -> _Job | None:
        """Survey a file and store its raw text; None when there is nothing for a worker."""
        if target.problem:
            file.fail(target.problem)
            return None
        if target.passed_over:
            file.status, file.why = SKIPPED, target.passed_over
            file.problems.append(f"{target.name} left out: {target.passed_over}")
            return None
        try:
            found = detect.survey(target)
        except FILE_ERRORS as error:
            if (
                target.explicit
                or not isinstance(error, InputError)
                or isinstance(error, ChatNotImportedError)
            ):
                file.fail(error)
            else:  # a picture or the like, met in a directory: not what was asked for
                file.status, file.why = SKIPPED, str(error)
            self.counts.read(target.size)
            return None
        file.format, file.sha256, file.bytes = found.label, found.sha256, found.bytes
        file.strategy, file.why = detect.strategy(found, self.options.strategy, self.ctx.settings)
        try:
            if found.kind == Kind.SESSION:
                self.session(target, file)
            elif found.kind == Kind.NATIVE:
                self.native(target, found, file)
            elif self.skipped(target, found, file):
                self.counts.read(found.bytes)
            else:
                return self.job(Plan(target, found, file.strategy, file.why), file)
        except FILE_ERRORS as error:  # malformed past the head: nothing was stored
            file.fail(error)
        return None

    def skipped(self, target: Target, found: Survey, file: FileReport) -> bool:
        first = self.seen.setdefault(found.sha256, target.name)
        if first != target.name:
            file.status, file.why = SKIPPED, f"the same content as {first}"
            return True
        record = find_import(self.ctx.db, found.sha256, self.scope, self.key)
        if already_imported(self.ctx.db, record) and not self.options.force:
            assert record is not None
            file.status, file.run_id, file.session_id = UNCHANGED, record.run_id, record.session_id
            session = get_session(self.ctx.db, record.session_id) if record.session_id else None
            file.forgotten = (session.forgotten_at or "")[:10] if session else ""
            when = f"its import was forgotten on {file.forgotten}" if file.forgotten else ""
            file.why = f"{when or f'imported before ({record.updated_at[:10]})'}; {FORCE_AGAIN}"
            return True
        return False

    def job(self, plan: Plan, file: FileReport) -> _Job:
        ctx, survey = self.ctx, plan.survey
        record = None
        if not self.options.dry_run:
            record = find_import(ctx.db, survey.sha256, self.scope, self.key) or ImportRecord(
                id=new_id(),
                sha256=survey.sha256,
                scope=self.scope,
                path=plan.target.source,
                format=file.format,
                bytes=survey.bytes,
            )
            record.strategy = plan.strategy
            if record.session_id is None or get_session(ctx.db, record.session_id) is None:
                file.redactions = store_raw(ctx, plan, record, self.tags).to_dict()
            file.session_id = session_id(record)
        llm = choose_llm(ctx.settings)
        run = start_run(
            ctx,
            "import",
            llm.llm,
            self.scope,
            file.session_id,
            dry_run=self.options.dry_run,
            token_budget=ctx.settings.import_token_budget,
            llm_note=llm.note,
        )
        run.tags, file.run_id, run.record.batch = self.tags, run.id, self.batch
        if self.options.scope in (None, ""):
            run.personal_scope = personal_scope(ctx)
        if record is not None:
            self.abandon(record)
            record.run_id = run.id  # named before it writes: a rerun after a kill finds it
            with ctx.db.atomic():
                save_run(ctx.db, run.record)
                save_import(ctx.db, record)
        return _Job(plan, file, run, record)

    def abandon(self, record: ImportRecord) -> None:
        """Undo what an earlier import of this file wrote before its process died, so that
        importing it again makes no duplicates."""
        earlier = get_run(self.ctx.db, record.run_id) if record.run_id else None
        if record.status != STORED or earlier is None or earlier.undone_by is not None:
            return
        dead = earlier.status == "running" and holder_gone(earlier.holder, socket.gethostname())
        if dead or earlier.status in ("failed", INTERRUPTED):
            undo(self.ctx, earlier.id)

    def session(self, target: Target, file: FileReport) -> None:
        """An assistant's session transcript: taken in as `memctl ingest FILE` takes it."""
        options = self.options
        report = sessions.take_in(
            self.ctx, target, options.scope, tuple(self.tags), options.dry_run
        )
        sessions.tell(file, report, options.dry_run)
        self.counts.read(file.bytes)

    def native(self, target: Target, found: Survey, file: FileReport) -> None:
        """memctl's own memories: imported as they are, ids kept."""
        if self.counts.progress is not None and not self.options.dry_run:
            with target.open() as counting:  # a first pass, for the progress bar's total
                self.counts.add(IMPORTING, total=sum(1 for _ in found.format.lines(counting)))
        with target.open(self.counts.read) as reading:
            lines = found.format.lines(reading)
            if self.options.dry_run:
                result = preview_lines(self.ctx, lines, self.scope)
            else:
                run = start_run(self.ctx, "import", None, self.scope)
                file.run_id, run.record.batch = run.id, self.batch
                with self.ctx.db.atomic():  # first: a run killed midway can be undone
                    save_run(self.ctx.db, run.record)
                result = import_lines(
                    self.ctx,
                    lines,
                    lambda n: self.counts.add(IMPORTING, n),
                    default_scope=self.scope,
                    run_id=run.id,
                    origin=target.source,
                )
                run.record.status, run.record.finished_at = "done", now_iso()
                run.record.counts = {"imported": result.imported, "skipped": result.skipped}
                with self.ctx.db.atomic():
                    save_run(self.ctx.db, run.record)
        file.imported, file.skipped, file.relations = (
            result.imported,
            result.skipped,
            result.relations,
        )
        file.problems = result.errors + forgotten_line(result.forgotten)
        if not (result.imported or result.skipped) and result.errors:
            file.fail(result.errors[0])
            return
        file.status = DRY_RUN if self.options.dry_run else IMPORTED
        if not self.options.dry_run:
            self.record_native(target, found, file)

    def record_native(self, target: Target, found: Survey, file: FileReport) -> None:
        db = self.ctx.db
        record = find_import(db, found.sha256, self.scope, self.key) or ImportRecord(
            id=new_id(),
            sha256=found.sha256,
            scope=self.scope,
            path=target.source,
            format=file.format,
        )
        record.status, record.strategy, record.bytes = DONE, file.strategy, found.bytes
        record.run_id = file.run_id
        record.counts = {"imported": file.imported, "skipped": file.skipped}
        record.updated_at = now_iso()
        with db.atomic():
            save_import(db, record)

    def write(self, job: _Job, facts: list[Fact]) -> None:
        """Reconcile a file's facts and write them: the one writer, in the calling thread."""
        ctx, run = self.ctx, job.run
        run.record.facts = len(facts)
        self.embed(run, facts)
        facts = dedupe(run, facts)
        if job.plan.strategy == ATOMIC:
            for stage in FACT_STAGES:
                facts = stage(run, facts)
        decisions: list[Decision] = []
        size = ctx.settings.import_reconcile_batch
        self.counts.add(WRITING, total=len(facts))
        for start in range(0, len(facts), size):
            decided = decide(run, facts[start : start + size])
            self.counts.add(WRITING, len(decided))
            if not run.dry_run:
                prepare_writes(run, decided)
                with ctx.db.atomic():
                    apply(run, decided)
                    save_run(ctx.db, run.record)  # so a run cut short can still be undone
            decisions += decided
        record_decisions(run, decisions)
        job.file.tally(decisions, run)
        if not run.record.facts:  # "0 0 0" said nothing of why, nor that the text is kept
            job.file.why = f"{job.file.why}; {NO_FACTS}" if job.file.why else NO_FACTS
        job.file.llm_note = run.llm_note
        job.file.status = DRY_RUN if run.dry_run else IMPORTED
        if job.record is not None:
            self.close(job, DONE)

    def embed(self, run: Run, facts: list[Fact]) -> None:
        """Every fact's vector, longest texts first, BATCH_TEXTS at a time (so the bar moves
        and the embedder's batches hold texts of one length)."""
        self.counts.add(EMBEDDING, total=len(facts))
        longest_first = sorted(facts, key=lambda fact: len(fact.content), reverse=True)
        for start in range(0, len(facts), BATCH_TEXTS):
            chunk = longest_first[start : start + BATCH_TEXTS]
            embed(run, chunk)
            self.counts.add(EMBEDDING, len(chunk))

    def fail(self, job: _Job, error: BaseException) -> None:
        job.file.fail(error)
        run = job.run
        run.record.status, run.record.finished_at = "failed", now_iso()
        run.note(f"failed: {type(error).__name__}: {error}")
        if job.record is not None:
            job.record.error = job.file.error
            self.close(job, FAILED)

    def interrupt(self, job: _Job) -> None:
        """A job stopped by Ctrl-C: its run is marked interrupted (an import of the file
        again undoes what it wrote, then imports it whole)."""
        run = job.run
        if run.record.status != "running":
            return  # done or failed before the Ctrl-C
        run.record.status, run.record.finished_at = INTERRUPTED, now_iso()
        run.note("interrupted (Ctrl-C)")
        with self.ctx.db.atomic():
            save_run(self.ctx.db, run.record)

    def close(self, job: _Job, status: str) -> None:
        record, file = job.record, job.file
        assert record is not None
        record.status, record.run_id, record.path = status, job.run.id, job.plan.target.source
        record.counts = {"imported": file.imported, "merged": file.merged, "skipped": file.skipped}
        record.error = file.error if status == FAILED else None
        record.updated_at = now_iso()
        with self.ctx.db.atomic():
            save_run(self.ctx.db, job.run.record)
            save_import(self.ctx.db, record)


def import_files(
    ctx: Context,
    targets: list[Target],
    options: ImportOptions,
    progress: StageProgress | None = None,
) -> ImportReport:
    """Import every target; ``progress`` is told (stage, done, total) as it goes: READING,
    then EMBEDDING and WRITING, or IMPORTING for memctl's own formats."""
    counts = _Counts(progress, sum(t.size for t in targets))
    importer = _Importer(ctx, options, counts)
    report = ImportReport([FileReport(t.name) for t in targets], options.dry_run)
    workers = ctx.settings.import_concurrency
    running: dict[Future[list[Fact]], _Job] = {}
    started: list[_Job] = []
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memctl-import")
    try:
        for target, file in zip(targets, report.files, strict=True):
            job = importer.start(target, file)
            if job is None:
                continue
            started.append(job)
            while len(running) >= workers:
                _finish(importer, running)
            copies = Gone(importer.key, importer.gone) if importer.gone and importer.key else None
            running[pool.submit(distil, job.run, job.plan, counts.read, copies)] = job
        while running:
            _finish(importer, running)
    except KeyboardInterrupt:  # Ctrl-C: the runs say so; importing again resumes
        for job in started:
            importer.interrupt(job)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return report


def _finish(importer: _Importer, running: dict[Future[list[Fact]], _Job]) -> None:
    """Write the files whose workers are done (waiting for at least one)."""
    done, _ = wait(running, return_when=FIRST_COMPLETED)
    for future in done:
        job = running.pop(future)
        try:
            importer.write(job, future.result())
        except FILE_ERRORS as error:
            importer.fail(job, error)
