"""What capture was told (``IngestOptions``) and what it did (``CaptureReport``,
``Captured``): shared by its stages (``read_marks``, ``scrub``, ``known``) and every door
that captures (``api.ingest``, the hooks, the spool, backfill)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memctl.memories.privacy import Redactions, kept_path
from memctl.model import Message, Session

MODES = ("smart", "raw")


@dataclass(frozen=True)
class IngestOptions:
    """What `memctl ingest` was told about the transcript."""

    client: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    scope: str | None = None
    tags: tuple[str, ...] = ()
    mode: str = "smart"


@dataclass
class CaptureReport:
    """What the fast path did with one transcript."""

    session_id: str = ""
    client: str = ""
    scope: str = ""
    source: str = ""
    messages_read: int = 0
    messages_new: int = 0
    messages_total: int = 0
    private_messages_dropped: int = 0
    malformed: int = 0
    passed_over: int = 0
    nul_bytes: int = 0
    lines: dict[str, int] = field(default_factory=dict)  # kept / passed over, per kind
    cwd: str | None = None
    # where its project came from: "scope" (given), "transcript" (the directory it names),
    # "here" (it names none: the project memctl ran in); "" when nothing was stored
    scope_from: str = ""
    here: str = ""  # with "here": the project's directory
    problems: list[str] = field(default_factory=list)
    redactions: Redactions = field(default_factory=Redactions)
    job_id: int | None = None
    worker_pid: int | None = None
    forgotten_at: str | None = None  # `memctl sessions forget` took it: nothing is stored
    # --scope given for a session stored already with nothing new: the scope it keeps
    scope_unchanged: str = ""
    # the threads of sub-agents the new messages started (Codex), each in a transcript of
    # its own that the client's hooks never capture: the hook marks those pending
    spawned: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """As every door shows it: its paths as the session keeps them (``kept_path``)."""
        paths: dict[str, str | None] = {"source": kept_path(self.source)}
        paths |= {"here": kept_path(self.here), "cwd": self.cwd and kept_path(self.cwd)}
        return {**asdict(self), **paths, "redactions": self.redactions.to_dict()}


@dataclass
class Captured:
    """The report, and the newest new messages (what a dry run goes on to distil)."""

    report: CaptureReport
    session: Session
    recent: list[Message]
