"""``memctl hook CLIENT EVENT``: what the assistants run at session start and end.

Fail-open: whatever happens, the exit status is 0 and standard output holds only
what the client expects (the context block at session start, nothing otherwise);
errors go to ``$MEMCTL_HOME/logs/hooks.log``. It never waits on the slow path:
a capture stores the transcript's new messages, queues the distillation and
starts a detached worker. Typer is never imported here (``memctl.cli.entry``
sends ``memctl hook`` straight to ``main``).

The client's JSON comes on standard input (``session_id``, ``transcript_path``,
``cwd``, ...), except Codex's ``notify``, which gets it as its last argument.
Memories are scoped by the project of the session's ``cwd``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memctl.clients import REGISTRY, codex, copilot
from memctl.config.settings import HEADLESS_ENV
from memctl.integrations import hooks_state

if TYPE_CHECKING:
    from memctl.api.ingest import IngestResult

START = {(c.NAME, e) for c in REGISTRY.values() for e in c.START_EVENTS}
CAPTURE = {(c.NAME, e) for c in REGISTRY.values() for e in c.CAPTURE_EVENTS}
PROMPT = {(c.NAME, e) for c in REGISTRY.values() for e in c.PROMPT_EVENTS}
# Capture hooks their client kills before a capture may be done: run in a process of
# their own session, which the client's kill does not reach (``outlive_the_client``)
OUTLIVED = {(c.NAME, e) for c in (codex, copilot) for e in c.KILLED_EVENTS}
LOG = "hooks.log"
# New transcript bytes a capture hook stores itself; a file with more new is handed to the
# detached worker: a first capture ran at ~1.1 MB per CPU second (100 MB in 89 s, i22b's
# note), and the client kills a hook after ``hooks.timeout`` (10 s by default).
INLINE_BYTES = 2 << 20
# A sub-agent starting (Codex's SubagentStart, under its parent's session_id, naming the
# sub-agent's own rollout): nothing to read yet, the rollout is marked pending with the
# parent's session, for its SubagentStop, the parent's next capture, the worker or maintain
SUBAGENT_START = "SubagentStart"


class NothingToCapture(Exception):
    """A capture hook with no transcript to read: logged as one line, not a traceback."""


def _spelling(name: str) -> str:
    """An event name without case and separators: SessionStart, session-start,
    session_start and sessionStart are one event."""
    return "".join(c for c in name.lower() if c.isalnum())


EVENTS = {(client, _spelling(event)): event for client, event in START | CAPTURE | PROMPT}


def canonical(client: str, event: str) -> str | None:
    """The client's own name for ``event`` in any spelling (None: not a memctl hook)."""
    return EVENTS.get((client, _spelling(event)))


def unknown(client: str, event: str) -> str:
    """One line saying what is wrong with a hook's name, and what would be right."""
    clients = sorted({c for c, _ in START | CAPTURE})
    if client not in clients:
        return f"memctl hook: unknown client {client!r}; known: {', '.join(clients)}"
    events = sorted(e for c, e in START | CAPTURE | PROMPT if c == client)
    return f"memctl hook: {client} has no event {event!r}; known: {', '.join(events)}"


def main(options: dict[str, Any], argv: list[str], stdin: IO[str] | None = None) -> int:
    """Run one hook; always 0."""
    if os.environ.get(HEADLESS_ENV):  # memctl's own headless extraction run: not a session
        return 0
    began, startup = time.monotonic(), _startup_ms()
    client, given = (argv + ["", ""])[:2]
    event = canonical(client, given)
    if event is None:  # said on the terminal (a person typing it) and in the log
        print(unknown(client, given), file=sys.stderr)
        log_error(_home(options), client, given, unknown(client, given))
        return 0
    errors, sys.stderr = sys.stderr, io.StringIO()  # warnings go to the log, not the client
    try:
        payload = read_payload(client, event, argv[2:], stdin or sys.stdin)
        output = handle(options, client, event, payload)
        if output:
            sys.stdout.write(output)
            sys.stdout.flush()
    except NothingToCapture as exc:  # expected (a Cursor stop before its transcript): one line
        if not log_error(_home(options), client, event, str(exc)):
            print(f"memctl hook {client} {event}: {exc}", file=errors)
    except Exception as exc:  # fail open: log, never fail the session
        if not log_error(_home(options), client, event, traceback.format_exc()):
            print(f"memctl hook {client} {event}: {exc}", file=errors)  # not even a log: say it
    finally:
        said, sys.stderr = sys.stderr.getvalue(), errors
        if said.strip():
            log_error(_home(options), client, event, said)
        _record(options, client, event, (time.monotonic() - began) * 1000 + startup)
    return 0


def _startup_ms() -> float:
    """How long this process ran before ``main`` (starting Python, importing memctl), from
    the kernel's record of its start (Linux); 0 where that is not known. In a child of the
    resident process: how long the client ran before it (``resident.CLIENT_PID``)."""
    from memctl.integrations import resident

    try:
        with open(f"/proc/{resident.CLIENT_PID or 'self'}/stat", encoding="ascii") as stat:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as uptime:
            up = float(uptime.read().split()[0])
        return max(0.0, (up - ticks / os.sysconf("SC_CLK_TCK")) * 1000)
    except (OSError, ValueError, IndexError):
        return 0.0


def _record(options: dict[str, Any], client: str, event: str, ms: float) -> None:
    try:
        hooks_state.record_duration(_home(options), client, event, ms)
    except OSError:
        pass


def _home(options: dict[str, Any]) -> Path:
    from memctl.config.settings import default_home

    return Path(options["home"]).expanduser() if options.get("home") else default_home()


def log_error(home: Path, client: str, event: str, text: str) -> bool:
    """Append to the hooks' log, secrets and private text taken out (a transcript's path,
    an exception's message); False when it could not be written (a full disk)."""
    from memctl.config.files import open_private
    from memctl.memories.privacy import scrub  # its patterns: only when there is an error

    text = scrub(text)[0]
    try:
        descriptor = open_private(home / "logs" / LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        with os.fdopen(descriptor, "a", encoding="utf-8") as out:
            out.write(f"{stamp} {client} {event}: {text.rstrip()}\n")
    except OSError:
        return False
    return True


def read_payload(client: str, event: str, rest: list[str], stdin: IO[str]) -> dict[str, Any]:
    """The client's JSON: the last argument for Codex's notify, else standard input."""
    if client == "codex" and event == "notify":
        text = rest[-1] if rest else "{}"
    else:
        text = "" if stdin is None or stdin.isatty() else stdin.read()
    text = text.removeprefix("\ufeff")  # Cursor on Windows starts it with a byte-order mark
    payload = json.loads(text) if text.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError(f"expected a JSON object, got {type(payload).__name__}")
    return payload


def _cwd(payload: dict[str, Any]) -> Path:
    roots = payload.get("workspace_roots")  # Cursor
    given = payload.get("cwd") or (roots[0] if isinstance(roots, list) and roots else None)
    path = Path(str(given)) if given else Path.cwd()
    return path if path.is_dir() else Path.cwd()


def _settings(options: dict[str, Any], cwd: Path) -> Any:
    from memctl.config import settings_from_flags

    return settings_from_flags(options.get("home"), options.get("config", []), cwd)


def handle(options: dict[str, Any], client: str, event: str, payload: dict[str, Any]) -> str:
    settings = _settings(options, _cwd(payload))
    hooks_state.mark_fired(settings.home, client, event)
    if (client, event) in START | PROMPT:
        if (client, event) in START:
            _mark_started(settings, client, payload)
            context, kept_as = session_context(settings, _session_id(payload))
            _note_started(settings, client, kept_as)
            output = REGISTRY[client].start_output(context) if context else ""
        else:
            block = prompt_block(settings, str(payload.get("prompt") or ""), _session_id(payload))
            output = REGISTRY[client].prompt_output(block) if block else ""
        if options.get("start_resident"):
            _start_resident(settings)
        return output
    capture_event(settings, client, event, payload)
    return ""


def outlives(argv: list[str]) -> bool:
    """Whether ``memctl hook`` ``argv`` (CLIENT EVENT) is a capture hook its client kills
    before a capture may be done (``OUTLIVED``)."""
    client, given = (argv + ["", ""])[:2]
    return (client, canonical(client, given)) in OUTLIVED


def outlive_the_client() -> None:
    """Go on in a child in a session of its own; this process waits for it and exits with
    its status. The client's kill (Copilot CLI's SIGKILL to the hook's process group soon
    after /exit, Codex's at its SessionEnd's 3 s) ends this process, not the capture:
    before, it was cut short, and stored only by the next hook, the worker or maintain.
    Called first thing, before the capture's imports: Copilot's kill came 1.5-2 s after
    the hook started on a loaded machine."""
    from memctl.integrations import resident

    parent, child = os.getpid(), os.fork()
    if child:
        _, status = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(status))
    os.setsid()
    resident.CLIENT_PID = parent  # the hook's duration counts from the process it started


def _mark_started(settings: Any, client: str, payload: dict[str, Any]) -> None:
    """Mark a starting session's transcript pending, when the client names one that exists
    and is not marked yet: a session whose client is killed before any capture hook runs
    (a terminal closed in its first turn: Codex 0.171 runs neither Stop nor SessionEnd on
    SIGHUP or SIGTERM) is stored by the next hook, the worker or maintain."""
    transcript = payload.get("transcript_path")
    if not transcript or not Path(str(transcript)).is_file():
        return
    from memctl.ingest import pending

    if not pending.marked(settings.home, str(transcript)) and not _forgotten(
        settings, _session_id(payload)
    ):
        entry = pending.Pending(
            str(transcript),
            client,
            _session_id(payload) or None,
            str(settings.cwd),
            -1,
            time.time(),
            _format(client),
        )
        pending.remember(settings.home, entry)


def _forgotten(settings: Any, session_id: str | None) -> bool:
    """Whether the store keeps this session forgotten (a resumed one: ``kept_as``). Its
    transcript is marked pending by no hook: the mark would hold its id, the transcript's
    path and the directory the forget took out, for as long as the session runs (and after,
    were its client killed), for a capture that stores nothing of it. A store that cannot
    be read now (busy, damaged) says no: the capture reading the mark tells, and takes it."""
    from memctl.context import Context
    from memctl.errors import StoreError

    if not session_id:
        return False
    try:
        with Context(settings, door="hook") as ctx:
            return bool(kept_as(ctx, session_id) != session_id)
    except StoreError:
        return False


def _note_started(settings: Any, client: str, session_id: str | None) -> None:
    """Record the session a client process starts, for its MCP server
    (``hooks_state.running_session``)."""
    from memctl.config.settings import PROCESS_VARIABLES

    process = os.environ.get(PROCESS_VARIABLES.get(client, ""))
    if process and session_id:
        hooks_state.add_started(settings.home, process, session_id)


def _start_resident(settings: Any) -> None:
    """The resident process for the session's next prompts and recalls (``recall.resident``),
    detached: it loads after this hook has its answer."""
    if settings.recall_resident:
        from memctl.integrations.resident import start

        start(settings.home)


def _session_id(payload: dict[str, Any]) -> str:
    session_id = payload.get("session_id") or payload.get("conversation_id")
    return _kept_id(str(session_id or payload.get("sessionId") or ""))  # Copilot CLI's


def _kept_id(session_id: Any) -> Any:
    """The client's session id, or None when it holds what looks like a secret: kept, it
    would name a session, its hooks' marks and its log lines (capture names the session
    by its transcript then, as one without an id of its own). Refused whole, a session
    would never be captured."""
    from memctl.memories.privacy import secret_in_id

    return None if session_id and secret_in_id(str(session_id)) else session_id


def session_context(settings: Any, session_id: str = "") -> tuple[str, str]:
    """The layered context block for a session starting (or resumed) in this project
    (empty when neither memory nor the identity files hold anything for it), and the name
    the hooks' records give the session (``kept_as``); its memories are recorded as given
    to the session."""
    from memctl.api.recall import SessionStartRequest, layered
    from memctl.context import Context

    with Context(settings, door="hook") as ctx:
        found = layered(ctx, SessionStartRequest(session=session_id or None))
        name = kept_as(ctx, session_id)
    hooks_state.add_injected(settings.home, name, [i.memory_id for i in found.items if i.memory_id])
    return found.text(), name


def kept_as(ctx: Any, session_id: str) -> str:
    """The name the hooks' records (``hooks/started/``, ``injected/``) give a session: its
    id, or the keyed id the store keeps a forgotten one under (``sessions forget`` keys
    every row and quote naming it; resumed, it is never captured again, and is still given
    memories, once each)."""
    from memctl.config.files import known_forget_key
    from memctl.store.sessions import session_known_as

    key = known_forget_key(ctx.settings.home)  # none: nothing was ever forgotten
    if key is None or not session_id or not ctx.settings.db_path.exists():
        return session_id  # and no database made by a hook that only reads
    found = session_known_as(ctx.db, session_id, key)
    return found.id if found is not None else session_id


def prompt_block(settings: Any, prompt: str, session_id: str) -> str:
    """The memories relevant to this prompt that the session does not have yet (the
    client's ``prompt_output`` gives them their shape); nothing for an unrelated prompt."""
    from memctl.api.recall import PromptRequest, prompt_context
    from memctl.context import Context

    with Context(settings, door="hook") as ctx:
        name = kept_as(ctx, session_id)
        shown = frozenset(hooks_state.injected(settings.home, name)) if name else frozenset()
        found = prompt_context(ctx, PromptRequest(prompt, shown, session=session_id or None))
    if not found.block:
        return ""
    hooks_state.add_injected(settings.home, name, found.ids)
    return found.block


def capture_event(settings: Any, client: str, event: str, payload: dict[str, Any]) -> None:
    """Capture this session's transcript, then others that grew since their last capture."""
    session_id = payload.get("session_id") or payload.get("conversation_id")
    session_id = session_id or payload.get("thread-id") or payload.get("sessionId")  # Copilot
    export = payload.get("export")  # OpenCode's plugin sends the session itself
    if isinstance(export, dict):
        info = export.get("info")  # a sub-agent's (a task's) session: part of its parent's
        parent = info.get("parentID") if isinstance(info, dict) else None
        _capture_text(settings, client, json.dumps(export), _kept_id(parent or session_id))
        _catch_up_stored(settings, client)
        return
    if event == SUBAGENT_START:
        _note_subagent(settings, client, payload.get("transcript_path"), _kept_id(session_id))
        return
    # A sub-agent's end (SubagentStop): its own transcript, stored with its parent
    # session. The session's own waits for its turn's end, which brings the sub-agent's
    # call and its report together (a capture between them would read the report alone).
    agent = payload.get("agent_transcript_path")
    if agent:
        session_id = payload.get("parent_conversation_id") or session_id  # Cursor's parent
    transcript = agent or payload.get("transcript_path")
    transcript = transcript or REGISTRY[client].find_transcript(str(session_id or ""))
    if not transcript:
        from memctl.memories.privacy import scrub  # a session id is the client's to choose

        reason = scrub(f"no transcript_path and no transcript of session {session_id!r} found")[0]
        hooks_state.mark_missed(settings.home, client, event, reason)
        raise NothingToCapture(f"{reason} where {client} keeps them: nothing captured")
    hooks_state.clear_missed(settings.home, client, event)
    path = str(transcript)
    if not Path(path).is_file():
        raise NothingToCapture(f"transcript {path} does not exist (yet)")
    _capture_file(settings, client, path, _kept_id(session_id))
    if not agent:  # at a sub-agent's end, the session's own transcript is mid-turn too
        _catch_up(settings, client, skip=path)
        _recapture(settings, skip=path)


def _catch_up_stored(settings: Any, client: str) -> None:
    """A client that keeps its sessions in a store of its own (OpenCode) hands memctl a
    session as it goes idle: one whose process was killed in its turn (its terminal closed)
    never does. Its capture hook also stores the client's sessions changed within
    ``hooks.recapture_hours`` that memctl holds an older copy of, or none (as backfill
    does: an unchanged one is not read), the newest ``hooks.recapture_max``."""
    since = time.time() - settings.hooks_recapture_hours * 3600
    module = REGISTRY[client]
    changed = sorted(module.stored_sessions(since), key=lambda s: s.updated)
    if not changed or not settings.hooks_recapture_max:
        return
    from memctl.context import Context
    from memctl.ingest.backfill import Target, store_all

    newest = changed[-settings.hooks_recapture_max :]
    targets = [Target(client, module.TRANSCRIPT_FORMAT, s.where, 0, s) for s in newest]
    with Context(settings, door="hook") as ctx:
        store_all(ctx, targets)


def _note_subagent(settings: Any, client: str, transcript: Any, session_id: str | None) -> None:
    """Mark a starting sub-agent's transcript pending with its parent's session."""
    if not transcript:
        raise NothingToCapture("a sub-agent started with no transcript_path: nothing marked")
    if _forgotten(settings, session_id):
        return
    from memctl.ingest import pending

    entry = pending.Pending(
        str(transcript), client, session_id, str(settings.cwd), -1, time.time(), _format(client)
    )
    pending.remember(settings.home, entry)


def _catch_up(settings: Any, client: str, skip: str) -> None:
    """At the client's first capture after ``memctl install`` wrote its hooks: mark pending
    its transcripts that changed since (the recapture stores them). A client reads its
    hooks as a session starts, so no hook ran in a session already running then, nor in
    the Codex session in which the person trusted them (real runs of Codex 0.171)."""
    since = hooks_state.installed_at(settings.home, client)
    if since is None:
        return
    from memctl.ingest import pending
    from memctl.integrations.backfill import find_transcripts

    for target in find_transcripts(client, since):
        if target.stored is None and str(target.path) != skip:
            entry = pending.Pending(
                str(target.path), client, None, str(settings.cwd), -1, time.time(), target.format
            )
            pending.remember(settings.home, entry)
    hooks_state.clear_installed(settings.home, client)


def _capture_file(settings: Any, client: str, path: str, session_id: str | None) -> None:
    """Capture a transcript file. It is marked pending first (size -1: not captured whole),
    so a capture killed, out of disk, or too big to finish within the client's timeout
    (handed to the detached worker) is done by the next hook, the worker or maintain. One
    holding no message yet stays pending, quietly, until it grows."""
    from memctl.errors import NoMessagesError
    from memctl.ingest import pending

    size = Path(path).stat().st_size
    entry = pending.Pending(
        path, client, session_id, str(settings.cwd), -1, time.time(), _format(client)
    )
    pending.remember(settings.home, entry)
    with pending.capturing(settings.home, path) as mine:
        if not mine:  # another process is capturing it, and records it when done
            return
        try:
            result = _ingest(settings, client, path, None, session_id, INLINE_BYTES)
        except NoMessagesError:  # a session just started (another's hook reads it), or mute
            pending.no_messages_yet(settings.home, entry, size)
            return
        except Exception as exc:  # the mark stays, saying why, for doctor and the next try
            from memctl.memories.privacy import safe_line

            why = safe_line(f"{type(exc).__name__}: {exc}", 200)
            with contextlib.suppress(OSError):
                pending.remember(settings.home, dataclasses.replace(entry, error=why))
            raise
        deferred = result.deferred
        if result.report.forgotten_at:  # resumed: its path, directory and id, taken out
            pending.forget(settings.home, path)
        elif not deferred:
            pending.remember(settings.home, dataclasses.replace(entry, size=size))
            report = result.report
            pending.mark_spawned(settings.home, entry, report.session_id, report.spawned)
    if deferred and settings.ingest_spawn_worker:
        from memctl.maintain.spawn import spawn

        spawn(settings, {})


def _format(client: str) -> str | None:
    return REGISTRY[client].TRANSCRIPT_FORMAT


def _capture_text(settings: Any, client: str, text: str, session_id: str | None) -> None:
    _ingest(settings, client, "-", io.BytesIO(text.encode()), session_id)


def _ingest(
    settings: Any,
    client: str,
    path: str,
    stdin: Any,
    session_id: str | None,
    inline_bytes: int | None = None,
) -> IngestResult:
    from memctl.api.ingest import IngestRequest, ingest
    from memctl.context import Context

    request = IngestRequest(
        transcript=path,
        stdin=stdin,
        client=_format(client),
        session_id=session_id,
        inline_bytes=inline_bytes,
    )
    with Context(settings, door="hook") as ctx:
        return ingest(ctx, request)


def _recapture(settings: Any, skip: str) -> None:
    """Capture again the pending transcripts that grew, each in its own session's project.
    One that is no transcript is forgotten; one that failed otherwise (a full disk) stays
    pending, for the next hook, the worker or maintain."""
    from memctl.errors import InputError
    from memctl.ingest import pending

    for entry in pending.grown(
        settings.home, skip, settings.hooks_recapture_hours, settings.hooks_recapture_max
    ):
        try:
            other = pending.settings_for(settings, Path(entry.cwd))
            _capture_file(other, entry.client, entry.path, entry.session_id)
        except Exception as exc:
            log_error(settings.home, entry.client, "recapture", traceback.format_exc())
            if isinstance(exc, InputError):
                pending.forget(settings.home, entry.path)
