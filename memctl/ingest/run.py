"""A run: one pass of the distillation stages, with its LLM, token budget, trace and record.

Stages ask the LLM through ``Run.ask``: it keeps to the run's token budget and
to the day's (``llm.daily_token_budget``: the tokens of every run started
since local midnight), counts the tokens, and on a failure notes why and
switches the rest of the run to the rule-based stages (a None answer means:
use the rules).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memctl.config import Settings
from memctl.context import Context
from memctl.ingest.claims import Evidence
from memctl.ingest.facts import StageTrace
from memctl.llm import LLM, LLMError, estimate_tokens
from memctl.memories.operations import PERSONAL
from memctl.memories.privacy import safe_line
from memctl.model import format_time, new_id
from memctl.store.database import Database
from memctl.store.runs import RunRecord, tokens_since
from memctl.store.writes import Writer

RULES = "rules"
# Answers are rarely longer than this; counted before a call so the budget holds.
EXPECTED_ANSWER_TOKENS = 1000


@dataclass
class Run:
    ctx: Context
    record: RunRecord
    llm: LLM | None
    scope: str
    session_id: str | None = None
    agent_id: str | None = None
    tags: list[str] = field(default_factory=list)
    dry_run: bool = False
    trace: list[StageTrace] = field(default_factory=list)
    recorded: int = 0  # trace entries whose dropped facts are in the record already
    # the time facts are aged against: the session's last message (None: the clock)
    now: datetime | None = None
    # Why no LLM took part though the config asked for one, and how to set one up (shown once).
    llm_note: str | None = None
    # Where profile and preferences facts go (None: ``scope`` like the others).
    personal_scope: str | None = None
    tokens_today: int = 0  # LLM tokens of the day's other runs, when this one started
    # what the session's tool calls show, against which claims are checked (``claims``)
    evidence: Evidence = field(default_factory=Evidence)

    def scope_of(self, category: str) -> str:
        """The scope of a new memory of ``category``."""
        return self.personal_scope if self.personal_scope and category in PERSONAL else self.scope

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    @property
    def db(self) -> Database:
        return self.ctx.db

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def writer(self) -> Writer:
        """Where this run's changes go: each one an event of the run, for ``undo``."""
        return Writer(self.db, self.id)

    def stage(self, name: str) -> StageTrace:
        """A new trace entry for a stage, kept in order."""
        entry = StageTrace(name)
        self.trace.append(entry)
        return entry

    def note(self, text: str) -> None:
        self.record.notes.append(safe_line(text))

    def count(self, key: str, amount: int = 1) -> None:
        self.record.counts[key] = self.record.counts.get(key, 0) + amount

    def ask(
        self, system: str, prompt: str, schema: dict[str, Any], validate: Callable[[Any], Any]
    ) -> Any | None:
        """The LLM's validated answer, or None when the rules must do instead."""
        if self.llm is None:
            return None
        needed = estimate_tokens(system, prompt) + EXPECTED_ANSWER_TOKENS
        if self.record.tokens + needed > self.record.token_budget:
            self._fall_back(
                f"token budget of {self.record.token_budget} would be exceeded "
                f"({self.record.tokens} used, about {needed} more needed)"
            )
            return None
        daily, used = self.settings.llm_daily_token_budget, self.tokens_today + self.record.tokens
        if daily and used + needed > daily:
            self._fall_back(
                f"daily token budget of {daily} (llm.daily_token_budget) would be exceeded "
                f"({used} used today, about {needed} more needed)"
            )
            return None
        try:
            answer = self.llm.complete_json(system, prompt, schema, validate)
        except LLMError as error:
            self.record.tokens += error.tokens
            if error.reason == "unreachable":
                self.llm_note = str(error)
            self._fall_back(f"LLM failed ({error.reason}): {error}")
            return None
        self.record.tokens += answer.tokens
        self.count("llm_calls")
        return answer.value

    def _fall_back(self, why: str) -> None:
        self.note(f"{why}; rule-based stages for the rest of this run")
        self.record.llm = f"{self.record.llm} -> {RULES}"
        self.llm = None


def start_run(
    ctx: Context,
    kind: str,
    llm: LLM | None,
    scope: str,
    session_id: str | None = None,
    job_id: int | None = None,
    dry_run: bool = False,
    token_budget: int | None = None,
    llm_note: str | None = None,
) -> Run:
    """A new run of ``kind`` (ingest or import) with its own record and token budget
    (``ingest.token_budget`` unless given); ``llm_note`` says why there is no LLM."""
    record = RunRecord(
        id=new_id(),
        kind=kind,
        holder=f"{kind}@{socket.gethostname()}:{os.getpid()}",
        session_id=session_id,
        job_id=job_id,
        llm=llm.name if llm else RULES,
        token_budget=ctx.settings.ingest_token_budget if token_budget is None else token_budget,
    )
    run = Run(ctx, record, llm, scope, session_id=session_id, dry_run=dry_run, llm_note=llm_note)
    if llm is not None:
        run.tokens_today = tokens_since(ctx.db, day_start())
    if llm_note:
        run.note(llm_note)
    return run


def day_start(now: datetime | None = None) -> str:
    """Local midnight of ``now`` (the clock), as a stored time: the day a daily budget counts."""
    local = (now or datetime.now(UTC)).astimezone()
    return format_time(local.replace(hour=0, minute=0, second=0, microsecond=0).astimezone(UTC))


def holder_gone(claimed_by: str | None, host: str) -> bool:
    """True when ``claimed_by`` names a process on ``host`` that no longer runs."""
    _, at, where = (claimed_by or "").rpartition("@")
    name, colon, pid = where.rpartition(":")
    if not at or not colon or name != host or not pid.isdigit():
        return False
    return not alive(int(pid))


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not; another user's may)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process holds that pid now
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return not stat.read().rpartition(") ")[2].startswith("Z")  # a zombie is dead
    except OSError:
        return True
