"""The assistants memctl works with: one module per assistant, behind one ``Client``
protocol, in one registry.

Each module says how its assistant is detected; where its MCP config, instructions
and hooks live and in which format (and plans memctl's changes to them); which of
its hook events start a session and which end one, with the payload and the answer
each expects; which transcript format it writes, where it keeps a session's
transcript when the payload does not say, and where it keeps them all (for
``memctl ingest --backfill`` and what ``memory_ingest`` may read; or, kept in a store
of its own, how each is read). ``integrations/``
(init, install, status, the hook entry, backfill) asks the registry and names no
assistant itself. Adding an assistant is one module here, its fixtures and its tests.

Still outside: the transcript parsers (``ingest/parse/``, one module per format,
named by ``TRANSCRIPT_FORMAT``) and the injected-text rules (``memories/injected.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memctl.clients import claude_code, codex, copilot, cursor, gemini, opencode
from memctl.clients.base import Found, Launcher, Where
from memctl.clients.files import Plan

if TYPE_CHECKING:  # the hooks import the clients; a backfill alone needs ingest
    from memctl.ingest.backfill import StoredSession


class Client(Protocol):
    """What memctl knows of one assistant (a module satisfies it: mypy checks each)."""

    @property
    def NAME(self) -> str:
        """As the user types it: `memctl install NAME`."""
        ...

    @property
    def BINARY(self) -> str:
        """Its command on PATH."""
        ...

    @property
    def EVENTS(self) -> tuple[str, ...]:
        """The hook events memctl installs, as the client names them."""
        ...

    @property
    def START_EVENTS(self) -> tuple[str, ...]:
        """Those answered with the context block."""
        ...

    @property
    def CAPTURE_EVENTS(self) -> tuple[str, ...]:
        """Those that capture the session (Codex's notify is not installed by default)."""
        ...

    @property
    def PROMPT_EVENTS(self) -> tuple[str, ...]:
        """Those answered with the memories relevant to the prompt (``--per-prompt``)."""
        ...

    @property
    def TRANSCRIPT_FORMAT(self) -> str | None:
        """The parser for its transcripts (None: sniffed)."""
        ...

    @property
    def TRANSCRIPT_GLOBS(self) -> tuple[str, ...]:
        """Its past sessions' transcripts, as globs under ``transcript_dirs()`` (empty:
        none memctl can read as they are kept)."""
        ...

    def detect(self, where: Where) -> Found: ...

    def plan_mcp(self, plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None: ...

    def plan_instructions(self, plan: Plan, where: Where, remove: bool = False) -> None: ...

    def plan_hooks(
        self, plan: Plan, where: Where, run: Launcher, timeout: int, remove: bool
    ) -> None: ...

    def hooks_installed(self, where: Where) -> list[str]: ...

    def start_output(self, context: str) -> str:
        """What a session-start hook prints for this client (``context`` not empty)."""
        ...

    def prompt_output(self, block: str) -> str:
        """What a per-prompt hook (``PROMPT_EVENTS``) prints for this client (``block``, the
        memories relevant to the prompt, not empty)."""
        ...

    def find_transcript(self, session_id: str) -> str | None:
        """Where the client keeps this session's transcript, for payloads without one."""
        ...

    def transcript_dirs(self) -> list[Path]:
        """The folders it keeps its transcripts in (whether or not they exist)."""
        ...

    def stored_sessions(self, since: float | None) -> list[StoredSession]:
        """Its past sessions kept in a store of its own rather than as transcript files
        (OpenCode's database), changed at or after ``since``."""
        ...


REGISTRY: dict[str, Client] = {
    claude_code.NAME: claude_code,
    codex.NAME: codex,
    opencode.NAME: opencode,
    cursor.NAME: cursor,
    gemini.NAME: gemini,
    copilot.NAME: copilot,
}


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)
