"""Codex rollout files: JSONL, ``{"timestamp", "type", "payload"}`` a line.

``session_meta`` gives the session id; ``response_item`` payloads are the
conversation: ``message`` (role user or assistant; ``developer`` and
``system`` instructions are passed over) with ``input_text`` /
``output_text`` parts, ``function_call`` / ``local_shell_call`` /
``custom_tool_call`` and their outputs as one-line notes (an output named by
its call's tool, its exit code deciding success), ``reasoning``
dropped. ``event_msg`` repeats the turns (``user_message``, then the response item;
``agent_message``, before it), and a Codex Desktop or CLI rollout may hold a turn only
as its event: each turn is kept once, from whichever comes first (the same words of
the same role said again at once are passed over; a tool call between makes them new).
``task_complete`` repeats the last answer and is passed over.
An answer is kept as the person saw it (``as_shown``): the ``<oai-mem-citation>`` block
Codex ends an answer with when it used its memory folder (MEMORY.md line references and
rollout ids, which the CLI and the app hide) is left out, and so are Codex Desktop's
directive lines (``::git-commit{...}``, ``::git-create-pr{...}``, ...: drawn as buttons), but
for a review comment (``::code-comment{...}``), kept as its title, body and place.
A sub-agent's end reaches its parent as a user turn of ``<subagent_notification>`` JSON
(Codex 0.17x): it is the sub-agent's report, a tool message, not the person's words.
A sub-agent's rollout (``session_meta`` ``source`` ``{"subagent": ...}``, or a
``parent_thread_id``: a thread the parent agent spawned, whose "user" is that agent)
marks its turns ``[subagent]``, as Claude Code's sidechain turns are, and belongs to the
session its ``session_meta`` names (``session_id``, 0.17x: its parent's), as a Claude Code
sub-agent's file does. A turn in it that no agent asked for (its ``task_started`` names no
``parent_turn_id``) is the person's, unmarked: ``codex exec resume --last`` resumes the
newest rollout, a sub-agent's when the parent exited first (aborting the sub-agent's turn
with a ``<turn_aborted>`` note, kept as Codex's injected text). Codex runs no hook in a
sub-agent's thread: the ids of the threads a ``spawn_agent`` call started go in
``tally.spawned``, for whatever captured the parent (a hook, the worker, ``maintain``) to
mark their rollouts pending (``thread_rollout`` finds each beside the parent's).
An approval judge's rollout (``source`` ``{"subagent": {"other": "guardian"}}``: Codex's
automatic reviewer of the actions that need approval) is passed over but for a turn the person
started in it: each of its turns quotes the parent's transcript (whole, then what was added)
and one planned action, and answers a verdict such as ``{"outcome":"allow"}``; the action
and its result are in the parent's own rollout.
A thread another one handed work to (Codex Desktop's ``<codex_delegation>`` first turn, its
``<source_thread_id>`` and ``<input>``) keeps the order as its first request, unwrapped.
``compacted`` holds the summary Codex wrote when it compacted its context: kept as one
``[session summary]`` message. ``turn_context`` is configuration, passed over. The
session's directory is the first ``cwd`` met: in ``session_meta``, ``turn_context`` or
``<environment_context>``.
Older rollouts put the items at the top level (no envelope) after a first
line of session metadata; both work.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memctl.config.safe_load import json_value
from memctl.ingest.parse.common import (
    SUBAGENT,
    Parsed,
    Tally,
    block_text,
    call_result_note,
    called,
    one_line,
    session_summary,
    subagent_report,
    timestamp,
    tool_result_note,
    tool_use_note,
)
from memctl.lazy_re import lazy
from memctl.model import Role

ENVELOPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
# the events that repeat a turn, or hold it alone (Codex Desktop and CLI)
EVENT_ROLES = {"user_message": Role.USER, "agent_message": Role.ASSISTANT}
# Codex prepends these to the first user turn of every session: configuration, not speech.
BOILERPLATE = lazy(
    r"<(environment_context|user_instructions|permissions instructions)>.*?</\1>", re.S
)
TOOL_CALLS = {"function_call", "local_shell_call", "custom_tool_call", "web_search_call"}
TOOL_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
# Rollouts without a cwd in their metadata carry it in the injected environment block.
# Spaces are stripped after the match: `\s*([^<\n]+?)\s*` could split a run of blanks three
# ways, and an unclosed <cwd> followed by 8,000 of them took over two minutes.
ENVIRONMENT_CWD = lazy(r"<environment_context>.*?<cwd>([^<]*)</cwd>", re.S)
# The block Codex's memories feature asks the model to end an answer with (codex 0.171's
# prompt): the MEMORY.md lines and rollout ids it used, parsed out of the stream and never
# shown; its CLI hides it wherever it stands, fenced or not
CITATION = lazy(r"[ \t]*<oai-mem-citation>.*?</oai-mem-citation>[ \t]*", re.S)
# Codex Desktop's directives, each alone on a line of a final answer outside a code fence
# (its app prompt): drawn as a chip (staged, committed, pushed, a pull request, a new
# thread) or, for code-comment, as a review comment on a file's lines
DIRECTIVE = lazy(r"^[ \t]*::([a-z][a-z-]*)\{(.*)\}[ \t]*$")
DIRECTIVES = frozenset(
    {"git-stage", "git-commit", "git-create-branch", "git-push", "git-create-pr"}
    | {"created-thread", "code-comment"}
)
REVIEW_COMMENT = "code-comment"
ATTRIBUTE = lazy(r'([\w-]+)=(?:"((?:[^"\\]|\\.)*)"|(\S+))')
FENCE = lazy(r"^ {0,3}(`{3,}|~{3,})")
BLANK_RUN = lazy(r"\n{3,}")
# A sub-agent's end, as its parent's rollout holds it (codex 0.171): a user-role message
# whose provenance is the multi-agent tool, {"agent_path": ..., "status": {state: text}}
NOTIFICATION = lazy(r"\A\s*<subagent_notification>(.*?)</subagent_notification>\s*\Z", re.S)
# A thread another thread handed work to (Codex Desktop 0.142, ``thread_source``
# ``subagent``): its first user turn is the order, wrapped with the thread that gave it. The
# person goes on in the thread; read wrapped, the wrapper titled the session
# "<codex_delegation>" and the order's last rule ended "</input>"
DELEGATION = lazy(
    r"\A\s*<codex_delegation>\s*(?:<source_thread_id>[^<]*</source_thread_id>\s*)?"
    r"<input>(.*?)</input>\s*</codex_delegation>\s*\Z",
    re.S,
)
# A turn's start (0.17x): its ``turn_attribution`` names the agent turn that asked for it
# (``parent_turn_id``), or none: the person's (``codex exec resume --last`` picks the newest
# rollout, which may be a sub-agent's: the person then speaks in the sub-agent's thread)
TURN_STARTED = "task_started"
# The multi-agent tool that starts a sub-agent in a thread (and rollout) of its own; its
# result names the thread by an id, which names the rollout file (``thread_rollout``)
SPAWN_TOOL = "spawn_agent"
AGENT_ID = lazy(r"\A[0-9A-Za-z-]{8,64}\Z")
# The sub-agent ``source`` of an approval judge's rollout (Codex Desktop 0.142-0.144, with
# ``approvals_reviewer: auto_review``): ``{"subagent": {"other": "guardian"}}``
JUDGE = "guardian"
# Codex files a thread's rollout as ``sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl``
DAY_FOLDERS = 3


def looks_like(record: dict[str, Any]) -> bool:
    return record.get("type") in ENVELOPES or "record_type" in record


def _json_output(text: str) -> Any:
    """Newer rollouts wrap a shell's output as JSON text: {"output": ..., "metadata": ...}."""
    try:
        value = json_value(text)
    except ValueError:
        return text
    if isinstance(value, dict) and isinstance(value.get("output"), str):
        return {
            "content": value["output"],
            "success": (value.get("metadata") or {}).get("exit_code", 0) == 0,
        }
    return text


def _tool_call(item: dict[str, Any], tally: Tally) -> str:
    kind = item.get("type")
    called(tally, item.get("call_id"), _name(item), _arguments(item))
    if kind == "local_shell_call":
        action = item.get("action") or {}
        return tool_use_note("shell", {"command": action.get("command") or ""})
    if kind == "web_search_call":
        return tool_use_note("web_search", item.get("action") or {})
    return tool_use_note(_name(item), item.get("arguments") or item.get("input"))


def _arguments(item: dict[str, Any]) -> Any:
    """A call's input: a shell's command, a function's arguments (JSON text) or input."""
    if item.get("type") == "local_shell_call":
        return {"command": (item.get("action") or {}).get("command") or ""}
    return item.get("arguments") or item.get("input") or item.get("action")


def _name(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind == "local_shell_call":
        return "shell"
    if kind == "web_search_call":
        return "web_search"
    return str(item.get("name") or "")


def _said(role: Role, text: str, created: str | None, tally: Tally) -> list[Parsed]:
    """A user's or assistant's turn, or nothing when it repeats the turn just before (the
    same words said again after another turn or a tool call are a new turn)."""
    if role is Role.ASSISTANT:
        text = as_shown(text)
        if not text:
            tally.pass_over("client markup")
            return []
    delegated = DELEGATION.match(text) if role is Role.USER else None
    if delegated is not None and delegated.group(1).strip():
        text = delegated.group(1).strip()  # the order handed over, without its wrapper
    same = f"{role}: " + " ".join(text.split())
    if same == tally.last_said:
        tally.pass_over("turn said twice")  # Codex: an event and a response item
        return []
    tally.last_said = same
    report = NOTIFICATION.match(text) if role is Role.USER else None
    if report is not None:
        tally.keep("subagent report")
        return [Parsed(Role.TOOL, _notified(report.group(1)), created)]
    marked = tally.subagent and not tally.persons_turn
    tally.keep(f"subagent {role}" if marked else str(role))
    return [Parsed(role, (SUBAGENT if marked else "") + text, created)]


def as_shown(text: str) -> str:
    """An answer as Codex shows it: without its memory citation block and its Desktop
    directive lines; a review comment as one line of text."""
    lines, fence = [], ""
    for line in CITATION.sub("", text).split("\n"):
        opened = FENCE.match(line)
        if opened and (not fence or opened.group(1).startswith(fence)):
            fence = "" if fence else opened.group(1)
        directive = None if fence or opened else DIRECTIVE.match(line)
        if directive is None or directive.group(1) not in DIRECTIVES:
            lines.append(line)
        elif directive.group(1) == REVIEW_COMMENT:
            lines.append(_review_comment(directive.group(2)))
    return BLANK_RUN.sub("\n\n", "\n".join(lines)).strip()


def _review_comment(attributes: str) -> str:
    """``::code-comment{title=... body=... file=... start=...}`` as the person reads it."""
    found = {
        key: quoted.replace('\\"', '"') or bare
        for key, quoted, bare in ATTRIBUTE.findall(attributes)
    }
    place = f"{found.get('file', '?')}:{found['start']}" if "start" in found else found.get("file")
    said = ": ".join(part for part in (found.get("title"), found.get("body")) if part)
    return f"[review comment {place}] {said}" if place else f"[review comment] {said}"


def _notified(text: str) -> str:
    """A ``<subagent_notification>``'s JSON as a note: a finished sub-agent's report, else
    its state (errored, shut down) as an error."""
    try:
        value = json_value(text.strip())
    except ValueError:
        value = None
    status = value.get("status") if isinstance(value, dict) else None
    if isinstance(status, dict) and isinstance(status.get("completed"), str):
        return subagent_report(status["completed"])
    if isinstance(status, dict) and status:
        state, said = next(iter(status.items()))
        return tool_result_note(f"sub-agent {state}: {said}", True)
    return one_line(f"[subagent report: {status or text.strip()}]", close="")


def _spawned(tally: Tally, call: Any, output: Any) -> None:
    """Note the thread a ``spawn_agent`` call started (its output, 0.171:
    ``{"agent_id": ..., "nickname": ...}``): the sub-agent's own rollout is named by it."""
    if not isinstance(call, str) or tally.calls.get(call) != SPAWN_TOOL:
        return
    try:
        value = json_value(output) if isinstance(output, str) else output
    except ValueError:
        return
    agent = value.get("agent_id") if isinstance(value, dict) else None
    if isinstance(agent, str) and AGENT_ID.match(agent) and agent not in tally.spawned:
        tally.spawned.append(agent)


def _event(payload: Any, created: str | None, tally: Tally) -> list[Parsed]:
    """An ``event_msg``: the turn of a ``user_message`` or ``agent_message`` (once), else
    nothing."""
    kind = _turn_started(payload, tally)
    role = EVENT_ROLES.get(str(kind))
    if role is not None:
        text = BOILERPLATE.sub("", str(payload.get("message") or "")).strip()
        if text:
            return _said(role, text, created, tally)
    tally.pass_over("event_msg")
    return []


def _turn_started(payload: Any, tally: Tally) -> str | None:
    """An ``event_msg``'s kind, noting whether the turn it starts is the person's."""
    kind = payload.get("type") if isinstance(payload, dict) else None
    attribution = payload.get("turn_attribution") if kind == TURN_STARTED else None
    if isinstance(attribution, dict) and "parent_turn_id" in attribution:
        tally.persons_turn = attribution["parent_turn_id"] is None  # no agent asked for it
    return kind


def _judges(source: Any) -> bool:
    """Whether a ``session_meta`` ``source`` is an approval judge's."""
    spawned = source.get("subagent") if isinstance(source, dict) else None
    return isinstance(spawned, dict) and spawned.get("other") == JUDGE


def _item(item: dict[str, Any], created: str | None, tally: Tally) -> list[Parsed]:
    kind = item.get("type")
    if kind == "message":
        role = ROLES.get(str(item.get("role")))
        if role is None:
            tally.pass_over(f"{item.get('role')} message")
            return []
        text = block_text(item.get("content"))
        cwd = ENVIRONMENT_CWD.search(text)
        if cwd and cwd.group(1).strip() and "\n" not in cwd.group(1).strip():
            tally.saw_cwd(cwd.group(1).strip())
        text = BOILERPLATE.sub("", text).strip()
        if not text:
            tally.pass_over("injected context")
            return []
        return _said(role, text, created, tally)
    if kind in TOOL_CALLS or kind in TOOL_OUTPUTS:
        tally.last_said = ""  # a call ends the turn: the same words again are new
    if kind in TOOL_CALLS:
        tally.keep("tool call")
        return [Parsed(Role.ASSISTANT, _tool_call(item, tally), created)]
    if kind in TOOL_OUTPUTS:
        tally.keep("tool output")
        output, call = item.get("output"), item.get("call_id")
        _spawned(tally, call, output)
        if isinstance(output, str) and output.startswith("{"):
            output = _json_output(output)
        if isinstance(output, dict):  # {"content": ..., "success": bool}
            failed = output.get("success") is False
            note = call_result_note(tally, call, output.get("content") or "", failed)
            return [Parsed(Role.TOOL, note, created)]
        return [Parsed(Role.TOOL, call_result_note(tally, call, output or ""), created)]
    if kind is None:
        tally.bad("response item without a type")
    else:
        tally.pass_over(str(kind))  # reasoning, and kinds yet unknown
    return []


def messages(record: dict[str, Any], tally: Tally) -> list[Parsed]:
    """The messages one rollout line holds."""
    kind = record.get("type")
    created = timestamp(record.get("timestamp"))
    if kind == "session_meta" or (kind is None and "id" in record and "timestamp" in record):
        meta = record.get("payload") if kind else record
        tally.pass_over("session_meta")
        if isinstance(meta, dict):
            tally.saw_cwd(meta.get("cwd"))
            source = meta.get("source")
            spawned = isinstance(source, dict) and "subagent" in source
            tally.subagent = tally.subagent or spawned or bool(meta.get("parent_thread_id"))
            tally.judge = tally.judge or _judges(source)
            # a sub-agent's thread is part of the session that spawned it (0.17x names it)
            parent = meta.get("session_id") if tally.subagent else None
            tally.session_id = tally.session_id or parent or meta.get("id")
            tally.started_at = tally.started_at or timestamp(meta.get("timestamp")) or created
        return []
    if tally.judge:
        if kind == "event_msg":
            _turn_started(record.get("payload"), tally)
        if not tally.persons_turn:
            tally.pass_over("approval judge")
            return []
    if kind == "response_item":
        payload = record.get("payload")
        if not isinstance(payload, dict):
            tally.bad("response_item without a payload object")
            return []
        return _item(payload, created, tally)
    if kind == "event_msg":
        return _event(record.get("payload"), created, tally)
    if kind == "compacted":  # the summary Codex wrote when it compacted its context
        payload = record.get("payload")
        said = payload.get("message") if isinstance(payload, dict) else None
        if isinstance(said, str) and said.strip():
            tally.keep("session summary")
            return [Parsed(Role.ASSISTANT, session_summary(said), created)]
    if kind in ENVELOPES or "record_type" in record:
        payload = record.get("payload")
        if kind == "turn_context" and isinstance(payload, dict):
            tally.saw_cwd(payload.get("cwd"))
        tally.pass_over(str(kind or "state"))
        return []
    if kind is not None:  # an older rollout: the item itself, without an envelope
        return _item(record, created, tally)
    tally.bad("record without a type")
    return []


def thread_rollout(beside: str, thread: str) -> str | None:
    """The rollout of Codex thread ``thread`` (a sub-agent's, named by ``spawn_agent``) in
    the folder of rollouts that holds ``beside`` (its parent's): under any day of its
    ``sessions/YYYY/MM/DD/`` (a sub-agent started before midnight may write after it), or
    beside it when ``beside`` is filed some other way. Found from the parent's file, not
    from ``$CODEX_HOME``: the worker and ``maintain`` may run with another environment."""
    if not AGENT_ID.match(thread):
        return None
    day = Path(beside).parent
    folders = [day, *day.parents][: DAY_FOLDERS + 1]
    dated = len(folders) > DAY_FOLDERS and all(f.name.isdigit() for f in folders[:DAY_FOLDERS])
    pattern = f"*/*/*/rollout-*{thread}.jsonl" if dated else f"rollout-*{thread}.jsonl"
    found = sorted((folders[DAY_FOLDERS] if dated else day).glob(pattern))
    return str(found[-1]) if found else None
