"""An assistant's session transcript met by import: taken in as ``memctl ingest FILE``
takes it, by the capture hook's fast path (``open_transcript`` then ``capture``).

Its messages are stored verbatim as a session, scoped by the directory the session ran
in (or ``--scope``), and its distillation is queued for a worker, as ingest's is; how far
the file was read is remembered, so importing it again stores nothing twice and a file
that grew adds only its new messages. Its memories come from that worker, not from this
import: the import's report counts the session and its messages.
"""

from __future__ import annotations

from memctl.context import Context
from memctl.errors import InputError
from memctl.imports.files import Target
from memctl.imports.report import DRY_RUN, IMPORTED, INGEST, UNCHANGED, FileReport
from memctl.ingest.capture import capture
from memctl.ingest.capture_report import CaptureReport, IngestOptions
from memctl.ingest.read_marks import open_transcript, pass_over, unchanged
from memctl.ingest.source import Input
from memctl.model import counted

STDIN = "-"
QUEUED = "distilled in the background, as `memctl ingest` does"
NOTHING_NEW = "nothing new since it was taken in"
FORGOTTEN = "nothing stored again, as `memctl ingest` stores nothing of it"


def take_in(
    ctx: Context, target: Target, scope: str | None, tags: tuple[str, ...], dry_run: bool
) -> CaptureReport:
    """Store the transcript's new messages (a dry run: count them) and queue their
    distillation; an InputError when it holds no message."""
    options = IngestOptions(scope=scope, tags=tags)
    if target.spool is not None:  # standard input, spooled by the import
        target.spool.seek(0)
        return capture(ctx, Input(target.spool, target.source), options, dry_run).report
    path = str(target.path) if target.path is not None else STDIN
    with open_transcript(ctx, path, None, options) as opened:
        if opened.source is None:
            return unchanged(ctx, opened, target.name)
        try:
            return capture(ctx, opened.source, opened.options, dry_run, opened).report
        except InputError:  # new lines holding no message (a client's bookkeeping)
            if dry_run or not pass_over(ctx, opened):
                raise
            return unchanged(ctx, opened, target.name)


def tell(file: FileReport, report: CaptureReport, dry_run: bool) -> None:
    """What the import's table says of the session."""
    file.format = f"{report.client} session" if report.client else file.format
    file.strategy, file.session_id = INGEST, report.session_id or None
    file.messages, file.job_id = report.messages_new, report.job_id
    file.problems += report.problems
    if dry_run:
        file.status = DRY_RUN
        file.why = f"{counted(report.messages_new, 'message')} would be stored verbatim"
    elif report.messages_new:
        file.status = IMPORTED
        file.why = f"{counted(report.messages_new, 'message')} stored verbatim; {QUEUED}"
    elif report.forgotten_at:
        file.status, file.forgotten = UNCHANGED, report.forgotten_at[:10]
        file.why = f"its session was forgotten on {file.forgotten}: {FORGOTTEN}"
    else:
        file.status, file.why = UNCHANGED, NOTHING_NEW
