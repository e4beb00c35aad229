"""What an import did, file by file, and in total (what `memctl import` prints)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memctl.ingest.facts import Decision, Verdict
from memctl.ingest.run import Run
from memctl.memories.privacy import safe_line
from memctl.model import counted

# Decisions that add a memory, and the relations each writes.
ADDS = frozenset(
    {Verdict.CREATE, Verdict.SUPERSEDE, Verdict.SUPPORT, Verdict.CONTEXTUALIZE, Verdict.CONTRADICT}
)
LINKS = {Verdict.SUPERSEDE: 1, Verdict.SUPPORT: 1, Verdict.CONTEXTUALIZE: 1, Verdict.CONTRADICT: 2}
# A file's status: imported; unchanged (imported before: --force imports it again); skipped
# (nothing to import: found in a directory but binary or of no known format, or the same
# content as another file of this import); failed; dry-run (what an import would do).
IMPORTED, UNCHANGED, SKIPPED, FAILED, DRY_RUN = (
    "imported",
    "unchanged",
    "skipped",
    "failed",
    "dry-run",
)
FORCE_AGAIN = "--force imports it again"
# The strategy of an assistant's session transcript: taken in as `memctl ingest` takes it
# (``imports.sessions``), its memories distilled by a worker after the import.
INGEST = "ingest"


@dataclass
class FileReport:
    """One file; ``imported`` counts the memories it added (or would add)."""

    name: str
    format: str = ""
    strategy: str = ""
    why: str = ""
    status: str = ""
    sha256: str = ""
    bytes: int = 0
    imported: int = 0
    merged: int = 0
    skipped: int = 0
    relations: int = 0
    run_id: str | None = None
    session_id: str | None = None
    error: str | None = None
    problems: list[str] = field(default_factory=list)  # e.g. malformed lines passed over
    redactions: dict[str, Any] = field(default_factory=dict)
    llm_note: str | None = None  # why no LLM took part, and how to set one up
    forgotten: str = ""  # unchanged: the day `sessions forget` forgot its import
    messages: int = 0  # an assistant's session (INGEST): its messages stored verbatim
    job_id: int | None = None  # ... and its distillation's queued job

    def fail(self, error: BaseException | str) -> None:
        self.status = FAILED
        text = str(error).strip()
        self.error = safe_line(text.splitlines()[0]) if text else type(error).__name__

    def tally(self, decisions: list[Decision], run: Run) -> None:
        """Count what the decisions make; facts the stages dropped count as skipped."""
        for decision in decisions:
            self.imported += decision.verdict in ADDS
            self.merged += decision.verdict == Verdict.MERGE
            self.skipped += decision.verdict == Verdict.SKIP
            self.relations += LINKS.get(decision.verdict, 0)
        self.skipped += sum(len(entry.dropped) for entry in run.trace)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ImportReport:
    files: list[FileReport]
    dry_run: bool = False

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.status == FAILED]

    def total(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)

    @property
    def errors(self) -> list[str]:
        """Files that failed, and problems in files that were imported (malformed lines)."""
        return [f"{f.name}: {f.error}" for f in self.failed] + [
            f"{f.name}: {problem}" for f in self.files for problem in f.problems
        ]

    @property
    def llm_notes(self) -> list[str]:
        """Each file's note on the missing LLM, once."""
        return list(dict.fromkeys(f.llm_note for f in self.files if f.llm_note))

    @property
    def unchanged(self) -> str:
        """Why files imported nothing, for the summary line ('' when every file did)."""
        same = [f for f in self.files if f.status == UNCHANGED and f.strategy != INGEST]
        forgotten = sum(bool(f.forgotten) for f in same)
        parts = [
            f"{forgotten} file whose import was forgotten" if forgotten == 1 else "",
            f"{forgotten} files whose imports were forgotten" if forgotten > 1 else "",
            f"{len(same) - forgotten} imported before" if len(same) > forgotten else "",
        ]
        again = FORCE_AGAIN if len(same) == 1 else FORCE_AGAIN.replace(" it ", " them ")
        return f"{' and '.join(p for p in parts if p)} ({again})" if same else ""

    @property
    def stored(self) -> int:
        """The assistant sessions that got new messages (a sub-agent's or a resumed session's
        transcript adds to its session)."""
        return len({f.session_id for f in self.files if f.strategy == INGEST and f.messages})

    @property
    def sessions(self) -> str:
        """What became of the assistants' session transcripts, for the summary line ('' when
        there were none): their memories are distilled after the import, not counted in it."""
        taken = [f for f in self.files if f.strategy == INGEST and f.status != FAILED]
        stored = [f for f in taken if f.messages]
        verb = "would be stored" if self.dry_run else "stored verbatim"
        held = f"{counted(self.total('messages'), 'message')} of {counted(self.stored, 'session')}"
        parts = [
            f"{counted(len(stored), 'assistant transcript')}: {held} {verb}"
            + ("" if self.dry_run else ", queued for distillation")
            if stored
            else "",
            f"{counted(len(taken) - len(stored), 'assistant transcript')} with nothing new"
            if len(taken) > len(stored)
            else "",
        ]
        return ", ".join(p for p in parts if p)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            **{n: self.total(n) for n in ("imported", "merged", "skipped", "relations")},
            "sessions": self.stored,
            "messages": self.total("messages"),
            "errors": self.errors,
            "files": [f.to_dict() for f in self.files],
        }
