"""OpenCode session exports (`opencode export <id>`): one JSON document.

``{"info": {id, title, time: {created, ...}}, "messages": [{"info": {role,
time}, "parts": [...]}], "todos": [...]}``. Of the parts, ``text`` is kept
(``synthetic`` text, which OpenCode itself inserts, is not), ``tool`` becomes a
one-line note (a shell's failing by the exit code in its ``metadata``), ``file`` a mention
of the file, ``subtask`` (a command such as ``/review`` that runs in a sub-agent: the
user's message holds only this part) a mention of the command, and ``reasoning``,
``step-start``, ``step-finish``, ``snapshot``, ``patch`` are dropped. A ``task``
tool's output is its sub-agent's report, kept as such, without the ``<task ...>`` and
``<task_result>`` tags around it. When OpenCode compacts its
context, its ``compaction`` agent writes the summary of the conversation so far as an
assistant message (``"summary": true``; ``"mode"`` or ``"agent"`` ``compaction``), after
a user message holding only a ``compaction`` part: the summary is kept as one
``[session summary]`` message, as Claude Code's and Codex's are. A sub-agent's session
(its ``info`` names a ``parentID``: the session whose ``task`` call started it) marks its
messages ``[subagent]``, as Claude Code's sidechain turns are, and belongs to that session,
as a Codex sub-agent's rollout does: stored under the parent's id, its own title left out.
"""

from __future__ import annotations

import re
from typing import Any

from memctl.ingest.parse.common import (
    SUBAGENT,
    Parsed,
    Tally,
    is_subagent_call,
    one_line,
    session_summary,
    subagent_report,
    timestamp,
    took,
    tool_result_note,
    tool_use_note,
    withholds,
)
from memctl.lazy_re import lazy
from memctl.model import Role

ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
COMPACTION = "compaction"  # the agent OpenCode compacts a session's context with
# A task call's output (OpenCode 1.18): its sub-agent's report in the frame OpenCode's model
# reads, `<task id="ses_..." state="completed">`, a <summary> perhaps, then <task_result> or
# <task_error> around the text; OpenCode's own views show the text alone
TASK_OUTPUT = lazy(
    r'\A\s*<task id="[^"]*" state="[^"]*">\s*(?:<summary>.*?</summary>\s*)?'
    r"<(task_result|task_error)>\s*(.*?)\s*</\1>\s*</task>\s*\Z",
    re.S,
)
FAILED = "task_error"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tool(part: dict[str, Any], tally: Tally) -> str:
    """A tool part: its call's note and its result's (what they left out: ``took``)."""
    state = _object(part.get("state"))
    note = _tool_note(part, state)
    took(
        tally,
        str(part.get("tool") or ""),
        state.get("input"),
        state.get("error") or state.get("output"),
        note,
        withholds(state.get("input")),
    )
    return note


def _tool_note(part: dict[str, Any], state: dict[str, Any]) -> str:
    name = str(part.get("tool") or "")
    call, withheld = tool_use_note(name, state.get("input")), withholds(state.get("input"))
    if state.get("status") == "error":
        return call + " " + tool_result_note(state.get("error") or "", True, name, withheld)
    output = state.get("output")
    if output and is_subagent_call(name, state.get("input")):
        framed = TASK_OUTPUT.match(output) if isinstance(output, str) else None
        if framed is not None:
            return call + "\n" + subagent_report(framed.group(2), framed.group(1) == FAILED, name)
        return call + "\n" + subagent_report(output, False, name)
    exit_code = _object(state.get("metadata")).get("exit")
    if isinstance(exit_code, int) and exit_code != 0 and isinstance(output, str):
        output = f"Exit code {exit_code}\n{output}"  # a shell's failure, as Claude Code's reads
    if output:
        return call + " " + tool_result_note(output, False, name, withheld)
    return call


def _is_summary(info: dict[str, Any]) -> bool:
    """An assistant message the compaction agent wrote: the conversation so far, summed up."""
    return info.get("summary") is True or COMPACTION in (info.get("mode"), info.get("agent"))


def _part(part: Any, tally: Tally) -> str:
    if not isinstance(part, dict):
        return ""
    kind = part.get("type")
    if kind == "text" and not part.get("synthetic") and not part.get("ignored"):
        return str(part.get("text") or "")
    if kind == "tool":
        return _tool(part, tally)
    if kind == "file":
        return one_line(f"[file: {part.get('filename') or part.get('url') or '?'}]")
    if kind == "subtask":
        return _subtask(part)
    return ""


def _subtask(part: dict[str, Any]) -> str:
    """The command a user's message started in a sub-agent, in one line: its expanded
    prompt is the command's template, kept with the sub-agent's report on the ``task`` call
    that answers it."""
    command, what = part.get("command"), part.get("description") or part.get("agent") or "?"
    return one_line(f"[command /{command}: {what}]" if command else f"[sub-agent task: {what}]")


# `opencode run "a prompt"` sends the prompt as it joins its arguments: one holding a
# space in double quotes, its own quotes as \" (OpenCode 1.18's run command).
RUN_QUOTED = lazy(r'"((?:[^"\\]|\\.)*\s(?:[^"\\]|\\.)*)"')


def unquote_run(text: str) -> str:
    """A prompt `opencode run` quoted as one argument, as the user typed it."""
    whole = RUN_QUOTED.fullmatch(text)
    return whole.group(1).replace('\\"', '"') if whole else text


def member(key: str | None, value: Any, tally: Tally) -> list[Parsed]:
    """The messages one top-level member of the export holds."""
    if key == "info" and isinstance(value, dict):
        parent = value.get("parentID")
        tally.session_id = tally.session_id or parent or value.get("id")
        if not parent:  # a task's title ("<description> (@general subagent)") is not its parent's
            tally.title = str(value.get("title") or tally.title)
        tally.saw_cwd(value.get("directory"))
        tally.subagent = tally.subagent or bool(parent)
        times = _object(value.get("time"))
        tally.started_at = tally.started_at or timestamp(times.get("created"))
        return []
    if key != "messages":
        return []
    if not isinstance(value, dict):
        tally.bad("message that is not an object")
        return []
    info = _object(value.get("info")) or value
    role = ROLES.get(str(info.get("role")))
    parts = value.get("parts")
    if role is None or not isinstance(parts, list):
        tally.bad("message without a user/assistant role or a parts list")
        return []
    text = "\n".join(t for t in (_part(p, tally) for p in parts) if t.strip()).strip()
    text = unquote_run(text) if role is Role.USER else text
    if not text:
        tally.pass_over(f"{role} without text")
        return []
    if role is Role.ASSISTANT and _is_summary(info):
        tally.keep("session summary")
        text = session_summary(text)
    else:
        tally.keep(f"subagent {role}" if tally.subagent else str(role))
        text = (SUBAGENT if tally.subagent else "") + text
    times = _object(info.get("time"))
    return [Parsed(role, text, timestamp(times.get("created")))]
