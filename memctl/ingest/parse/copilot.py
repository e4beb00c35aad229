"""GitHub Copilot CLI's session files (npm ``@github/copilot`` 1.0.x): one event a line,
``{"type", "data", "id", "timestamp", "parentId"}``, in
``~/.copilot/session-state/<session id>/events.jsonl``.

The schema is the package's own (``schemas/session-events.schema.json``); what is read:

- ``session.start`` / ``session.resume``: the session's id, folder (``context.cwd``) and
  start time;
- ``user.message``: ``content``, what the person typed (``transformedContent`` is what the
  model got, with the date and injected context); a prompt with a ``source`` is the CLI's
  own (``skill-<name>``: a skill's hidden text) or another agent's (``agent-<id>``);
- ``assistant.message``: ``content``, and each of ``toolRequests`` as a tool note;
- ``tool.execution_complete``: the result of the call ``toolCallId`` (``result.content``,
  or ``error.message`` when ``success`` is false); a shell's exit code is in
  ``shellExecution.exitCode``, since a command that failed is a call that succeeded; a
  call refused (error code ``rejected``: the person said no; ``denied``: no rule allowed it
  and no one could be asked) is a refusal note, in its runtime's words (``REFUSED``), and
  the word the person gave the model with their no ("The user rejected this tool call.
  User feedback: ...") is their message;
- ``session.compaction_complete``: ``summaryContent``, the summary it compacted into;
- ``hook.end`` of a hook that failed (``success`` false): its ``error.message``, what the
  hook's command printed, as a note of its own (``[sessionStart hook failed] ...``): a
  startup hook's syntax error is what the session then works on.

A sub-agent (the ``task`` tool) writes into the same file: its events carry ``agentId``
(and ``parentToolCallId``), its prompt comes from ``agent-<parent session id>``; they are
marked ``[subagent]`` as Claude Code's sidechain turns are, and the ``task`` call's result
is its report. A sub-agent started in the background (the ``task`` call's result only says
so: ``LAUNCHED``) reports through a later ``read_agent`` call, whose result is its report
after a status line (``AGENT_STATUS``). ``hook.start`` / ``hook.end`` hold the hooks' input
and output, memctl's own context block among them: never read as messages, but for the
failure of one (above).
"""

from __future__ import annotations

import re
from typing import Any

from memctl.ingest.parse.common import (
    HOOK_FAILED,
    SUBAGENT,
    Parsed,
    Tally,
    call_result_note,
    called,
    one_line,
    session_summary,
    subagent_report,
    timestamp,
    tool_use_note,
)
from memctl.lazy_re import lazy
from memctl.model import Role

PRODUCER = "copilot-agent"  # session.start's ``producer``
STARTS = frozenset({"session.start", "session.resume"})
# Events of its schema that hold no message: the session's state, usage, hooks' runs (their
# output is memctl's own context), streaming pieces of a message written whole later.
STATE = frozenset(
    {
        "session.permissions_changed",
        "session.usage_record",
        "session.usage_info",
        "session.usage_checkpoint",
        "session.shutdown",
        "session.model_change",
        "session.mode_changed",
        "session.info",
        "session.warning",
        "session.idle",
        "session.title_changed",
        "session.todos_changed",
        "session.plan_changed",
        "session.tools_updated",
        "session.skills_loaded",
        "session.mcp_servers_loaded",
        "session.mcp_server_status_changed",
        "session.mcp_server_tools_loaded",
        "session.context_changed",
        "session.context_cleared",
        "session.compaction_start",
        "session.truncation",
        "session.task_complete",
        "system.message",
        "system.notification",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.usage",
        "assistant.intent",
        "assistant.idle",
        "assistant.message_start",
        "assistant.message_delta",
        "assistant.streaming_delta",
        "assistant.reasoning_delta",
        "tool.execution_start",
        "tool.execution_progress",
        "tool.execution_partial_result",
        "tool.shell_output",
        "hook.start",
        "hook.progress",
        "hook.end",
        "subagent.started",
        "subagent.configured",
        "subagent.selected",
        "subagent.deselected",
        "subagent.completed",
        "subagent.failed",
        "permission.requested",
        "permission.completed",
        "model.call_start",
        "model.call_finished",
        "model.call_final_result",
    }
)
# The person said no at the permission prompt with a word for the model (its runtime's
# words, 1.0.102): the refusal, then what they said, which is theirs, not a tool's output
FEEDBACK = lazy(r"\A(The user rejected this tool call\.) User feedback: (.+)\Z", re.S)
# What ``read_agent`` puts before a background sub-agent's answer (1.0.x: "Agent is idle
# (waiting for messages). agent_id: …, status: idle, …" and "[Turn 0]"): the answer follows
READ_AGENT = "read_agent"
AGENT_STATUS = lazy(r"\AAgent is [^\n]*\bagent_id: [^\n]*\n+(?:\[Turn \d+\]\n)?")
ANSI = lazy(r"\x1b\[[0-9;]*[A-Za-z]")  # a terminal's colours, in a hook's stderr
# How its runtime words a hook command's failure (1.0.x), before what the command printed
HOOK_ERROR = lazy(r"\AError: Hook command failed with code (-?\d+)\s*(?:Stderr:\s*)?")
# The line a shell's result ends with: its output is the lines before
SHELL_TRAILER = lazy(r"\n?<shellId: [^>\n]*completed with exit code -?\d+>\s*\Z")


def looks_like(record: dict[str, Any]) -> bool:
    """A session file's first line: ``session.start`` by the Copilot agent."""
    data = record.get("data")
    return (
        record.get("type") in STARTS
        and isinstance(data, dict)
        and (data.get("producer") == PRODUCER or "copilotVersion" in data)
    )


def messages(record: dict[str, Any], tally: Tally) -> list[Parsed]:
    """The messages one event holds."""
    kind, data = record.get("type"), record.get("data")
    if not isinstance(kind, str) or not isinstance(data, dict):
        tally.bad("event without a type and a data object")
        return []
    created = timestamp(record.get("timestamp"))
    sub = isinstance(record.get("agentId"), str) or isinstance(data.get("parentToolCallId"), str)
    if kind in STARTS:
        _start(data, tally)
        return []
    if kind == "user.message":
        return _user(data, created, sub, tally)
    if kind == "assistant.message":
        return _assistant(data, created, sub, tally)
    if kind == "tool.execution_complete":
        return _result(data, created, sub, tally)
    if kind == "hook.end" and data.get("success") is False:
        return _hook_failed(data, created, tally)
    if kind == "session.compaction_complete" and _text(data.get("summaryContent")):
        tally.keep("session summary")
        return [Parsed(Role.ASSISTANT, session_summary(data["summaryContent"]), created)]
    if kind == "assistant.reasoning":
        tally.pass_over("reasoning")
    elif kind == "session.error":
        tally.pass_over("error notice")  # the CLI's own (a model call that failed)
    else:  # a kind of its schema yet unread is named in the run's notes
        tally.pass_over("state" if kind in STATE or kind.endswith("_changed") else kind)
    return []


def _start(data: dict[str, Any], tally: Tally) -> None:
    tally.pass_over("session_meta")
    context = data.get("context")
    if isinstance(context, dict):
        tally.saw_cwd(context.get("cwd"))
    if isinstance(data.get("sessionId"), str):
        tally.session_id = tally.session_id or data["sessionId"]
    tally.started_at = tally.started_at or timestamp(data.get("startTime"))


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _said(role: Role, text: str, created: str | None, sub: bool, tally: Tally) -> Parsed:
    tally.keep(f"subagent {role}" if sub else str(role))
    return Parsed(role, (SUBAGENT if sub else "") + text, created)


def _user(data: dict[str, Any], created: str | None, sub: bool, tally: Tally) -> list[Parsed]:
    source = str(data.get("source") or "")
    text = _text(data.get("content"))
    if source and not source.startswith("agent-"):
        tally.pass_over("injected context")  # a skill's hidden text, the CLI's own prompt
        return []
    if not text:
        tally.pass_over("user without text")
        return []
    return [_said(Role.USER, text, created, sub or bool(source), tally)]


def _assistant(data: dict[str, Any], created: str | None, sub: bool, tally: Tally) -> list[Parsed]:
    text = _text(data.get("content"))
    said = [_said(Role.ASSISTANT, text, created, sub, tally)] if text else []
    requests = data.get("toolRequests")
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            tally.bad("a tool request that is not an object")
            continue
        name, arguments = str(request.get("name") or ""), request.get("arguments")
        called(tally, request.get("toolCallId"), name, arguments)
        tally.keep("tool call")
        said.append(Parsed(Role.ASSISTANT, _mark(tool_use_note(name, arguments), sub), created))
    if not said:
        tally.pass_over("assistant without text")
    return said


def _result(data: dict[str, Any], created: str | None, sub: bool, tally: Tally) -> list[Parsed]:
    """A call's result; a sub-agent's report when the call started one; a call the person
    said no to, with a word for the model, that refusal and then their words."""
    call = str(data.get("toolCallId") or "")
    result, error = data.get("result"), data.get("error")
    output = result.get("content") if isinstance(result, dict) else None
    failed = data.get("success") is False
    if failed and isinstance(error, dict):
        output = error.get("message") or output
        answer = FEEDBACK.match(output) if isinstance(output, str) else None
        if answer is not None and not sub:
            tally.keep("person's answer")
            refused = _mark(call_result_note(tally, call, answer.group(1), True), sub)
            return [
                Parsed(Role.TOOL, refused, created),
                Parsed(Role.USER, answer.group(2), created),
            ]
    text = SHELL_TRAILER.sub("", output) if isinstance(output, str) else ""
    shell = data.get("shellExecution")
    code = shell.get("exitCode") if isinstance(shell, dict) else None
    if isinstance(code, int) and code != 0:
        # as Claude Code's Bash writes it: the notes' reader takes its exit code from it
        text, failed = f"Exit code {code}\n{text}", True
    tally.keep("tool output")
    status = AGENT_STATUS.match(text) if tally.calls.get(call) == READ_AGENT else None
    if call in tally.subagent_calls or (status and text[status.end() :].strip()):
        told = text[status.end() :] if status else text
        report = subagent_report(told, failed, tally.calls.get(call, ""))
        return [Parsed(Role.TOOL, report, created)]
    return [Parsed(Role.TOOL, _mark(call_result_note(tally, call, text, failed), sub), created)]


def _hook_failed(data: dict[str, Any], created: str | None, tally: Tally) -> list[Parsed]:
    """A hook that failed, and what its command printed: a note of the session's own."""
    error = data.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str) or not message.strip():
        tally.pass_over("hook.end")
        return []
    tally.keep("hook failed")
    failed = HOOK_ERROR.match(message)
    if failed is not None:  # as a shell's error note says it: "exit 1: <what it printed>"
        message = f"exit {failed.group(1)}: {message[failed.end() :]}"
    said = one_line(ANSI.sub("", message))
    note = HOOK_FAILED.format(hook=data.get("hookType") or "a") + said
    return [Parsed(Role.TOOL, note, created)]


def _mark(note: str, sub: bool) -> str:
    return (SUBAGENT if sub else "") + note
