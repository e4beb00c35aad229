"""What the host model reads of a session: its people's words and what its tools did.

The host model (the assistant the user runs, through MCP) distils a session
the way a colleague would read it: the user's requests and rules, the
assistant's answers, and each tool call with its outcome, since "I've created
CLAUDE.md" means nothing without the permission error that stopped the write.
So the lines it gets are:

- ``user`` / ``assistant``: what was said, injected text (instruction files,
  reminders, command wrappers) left out; a slash command stays as ``/name args``; a
  pasted user turn's paste under a line naming it (``ingest/pasted.py``);
  a long assistant message (a plan full of code) is condensed like a report, so
  that it neither fills a task alone nor loses its conclusions to a cut;
- ``tool``: one line per call that changed something or failed, with its
  outcome: ``ran `pnpm test` → error: exit 1: ...``, ``wrote src/a.py → ok``,
  ``Write CLAUDE.md → refused: ...``; a read that worked (``Read``, ``ls``,
  ``git status``) and other tools (search, fetch, polling) are left out;
- ``tool``: a sub-agent's report, condensed (conclusions and headings first);
- ``user``: the person's answers to the assistant's questions (Claude Code's
  AskUserQuestion), since they are decisions in the person's words.

A task holds as many messages as fit in ``extract.chunk_chars`` characters of
these lines, not a count of messages, so a session of 400 tool messages is a
few tasks, not twenty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.ingest.facts import Passage
from memctl.ingest.parse.common import ANSWERED, SUBAGENT, SUBAGENT_REPORT
from memctl.ingest.pasted import pasted_by_user
from memctl.ingest.tools import Call, condense, read_calls, shell_command, tool_kind
from memctl.memories.injected import strip_injected
from memctl.model import Message, Role

REPORT_CHARS = 1500  # of a sub-agent's report in a task (the digest keeps less)
# of an assistant message: real plans run 8-20K characters, mostly code, and filled a task
# each (cut mid-code) in the gold set's Claude Code sessions
SAID_CHARS = 2500
OUTCOME_CHARS = 200  # of a call's result or error
LINE_OVERHEAD = 16  # "[n] assistant: " and the newline
ANSWER_TAIL = re.compile(r"\s*You can now continue with the user's answers in mind\.?.*$")


@dataclass
class _Line:
    """A line of a task on its way: said text, or a call whose outcome may come later."""

    message: Message
    role: Role
    text: str = ""
    call: Call | None = None

    def render(self) -> str:
        return _call_line(self.call) if self.call else self.text


def _call_line(call: Call) -> str:
    kind = tool_kind(call.name, call.detail)
    if kind == "shell":
        what = f"ran `{shell_command(call.detail).text}`"
    elif kind == "file":
        paths = [path for _, path in call.files()]
        what = f"{call.name} {', '.join(paths) or call.detail}"
    else:
        what = f"{call.name} {call.detail}".strip()
    outcome = call.outcome or "ok"
    detail = " ".join(call.error.replace("\\n", " ").split())[:OUTCOME_CHARS]
    return f"{what} → {outcome}{': ' + detail if detail and outcome != 'ok' else ''}"


def _worth_showing(call: Call) -> bool:
    """A command or a file change that changed something, failed or was refused; a read
    that worked, and any other tool (search, fetch, polling), is not."""
    kind = tool_kind(call.name, call.detail)
    if kind == "shell":
        return not call.succeeded or not shell_command(call.detail).read_only
    return kind == "file"


def _lines(messages: list[Message]) -> list[_Line]:
    lines: list[_Line] = []
    calls: list[Call] = []
    for message in messages:
        text = strip_injected(message.content).text
        if text.startswith(SUBAGENT_REPORT):
            report = condense(text.removeprefix(SUBAGENT_REPORT), REPORT_CHARS)
            lines.append(_Line(message, Role.TOOL, f"sub-agent report: {report}"))
            continue
        subagent = text.startswith(SUBAGENT)
        text = text.removeprefix(SUBAGENT)
        prose = "\n".join(
            line for line in text.splitlines() if not line.lstrip().startswith("[tool")
        ).strip()
        if prose and message.role != Role.TOOL:
            role = Role.ASSISTANT if subagent else message.role
            said = condense(prose, SAID_CHARS) if role == Role.ASSISTANT else prose
            lines.append(_Line(message, role, said if len(prose) > SAID_CHARS else prose))
        known = len(calls)
        read_calls(text, calls)
        lines += [_Line(message, Role.TOOL, call=call) for call in calls[known:]]
    for line in lines:
        answered = ANSWERED.match(line.call.error) if line.call and line.call.succeeded else None
        if line.call and answered:
            answers = ANSWER_TAIL.sub("", line.call.error[answered.end() :])
            line.role, line.text, line.call = Role.USER, f"(answering) {answers}", None
    return [line for line in lines if line.call is None or _worth_showing(line.call)]


@dataclass(frozen=True)
class HostBatch:
    """The messages one task covers and the numbered lines the host reads of them."""

    messages: list[Message]
    passages: list[Passage]


def host_batch(messages: list[Message], limit: int) -> HostBatch:
    """The first messages whose lines fit in ``limit`` characters (one message at least;
    a line longer than ``limit`` is cut), and those lines as passages."""
    chosen: list[tuple[int, Passage]] = []
    room, last = limit, messages[-1].seq if messages else 0
    for line in _lines(messages):
        text, seq = line.render(), line.message.seq
        if chosen and len(text) + LINE_OVERHEAD > room:
            whole = [(s, p) for s, p in chosen if s != seq]  # a message is never split
            chosen, last = (whole, seq - 1) if whole else (chosen, seq)
            break
        text = text if len(text) <= limit else text[: limit - 1] + "…"
        room -= len(text) + LINE_OVERHEAD
        source = f"session:{line.message.session_id}#{seq}:{line.role}"
        pasted = pasted_by_user(line.role, text)
        chosen.append((seq, Passage(text, line.role, source, line.message.created_at, pasted)))
    covered = [m for m in messages if m.seq <= last] or messages[:1]
    return HostBatch(covered, [passage for _, passage in chosen])
