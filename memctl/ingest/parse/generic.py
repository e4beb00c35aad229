"""Generic transcripts: JSON ``{"messages": [{"role", "content"}]}`` (or a bare array),
JSONL of ``{"role", "content"}`` lines, or plain text with ``user:`` / ``assistant:`` lines.

``content`` may be a string or a list of ``{"type": "text", "text": ...}``
blocks. In plain text a line starting with a role name opens a message and the
lines after it continue it; text before the first such line is the user's.

A Gemini CLI session file is such a document too: its messages name their speaker in
``type`` (``user``, ``gemini``; ``info``, ``error`` and ``warning`` are the CLI's own
notices) and carry their tool calls in ``toolCalls``, each with its ``result``.

So is a session VS Code's GitHub Copilot Chat keeps (``chatSessions/<id>.json``):
``{"sessionId", "customTitle", "requests": [...]}``, a request a turn: what the person
typed in ``message.text`` and the answer in ``response``, a list of parts: Markdown
(``value``), a file named in it (``inlineReference``), a tool it ran
(``toolInvocationSerialized``) and the edits and markers around them (not text).
Newer versions keep it as ``chatSessions/<id>.jsonl``, a log of changes to that
document: the first line ``{"kind": 0, "v": <document>}``, then ``kind`` 1 sets ``v`` at
the key path ``k``, 2 pushes the items of ``v`` onto the array there (cut to ``i`` items
first when ``i`` is given) and 3 deletes it; replayed, the log is the document.

So is an Amp thread: its messages, numbered in ``messageId``, are read by ``amp``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from memctl.ingest.parse import amp
from memctl.ingest.parse.common import (
    Parsed,
    Tally,
    block_text,
    is_subagent_call,
    subagent_report,
    timestamp,
    took,
    tool_result_note,
    tool_use_note,
    withholds,
)
from memctl.lazy_re import lazy
from memctl.model import Role

ROLE_NAMES = {
    "user": Role.USER,
    "human": Role.USER,
    "assistant": Role.ASSISTANT,
    "ai": Role.ASSISTANT,
    "model": Role.ASSISTANT,
    "gemini": Role.ASSISTANT,  # Gemini CLI's sessions name the model's turns so
    "system": Role.SYSTEM,
    "tool": Role.TOOL,
}
# Gemini CLI's notices in a session (a cancelled request, a quota message): no one said them.
NOTICES = frozenset({"info", "error", "warning"})
FAILED = "error"  # the status of a Gemini CLI tool call that failed
# Gemini CLI 0.61 hands a tool's output to its model inside <untrusted_context> tags, and
# its shell's as fields: "Output: ...", "Exit Code: 2", "Process Group PGID: 31142" (and
# Signal, Background PIDs when there are some). Its call's status says "success" whatever
# the exit code: the code decides, as a shell's does (common.EXIT_CODE)
UNTRUSTED = lazy(r"\A\s*<untrusted_context>\n?(.*?)\n?</untrusted_context>\s*\Z", re.S)
# Before 0.61 (the one-document ``.json`` sessions) every field is there, unwrapped, the
# command and its folder first: "Command: ls\nDirectory: (root)\nOutput: ...\nError:
# (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 8"
# (gemini-cli packages/core/src/tools/shell.ts). Read whole, the note of a failed command
# was its first line, "Command: ...", and not the error its output gave (fresh7's
# "The term 'Get-FileHash' is not recognized"): the call's note names the command already.
SHELL_COMMAND = lazy(r"\ACommand: .*?\nDirectory: [^\n]*\n", re.S)
SHELL_OUTPUT = lazy(r"\AOutput: (?:\(empty\)$)?", re.M)
SHELL_FIELDS = lazy(
    r"^(?:(?:Process Group PGID|Background PIDs|Signal): [^\n]*|Error: \(none\))(?:\n|\Z)",
    re.M,
)
SPEAKER = lazy(r"^\s*(user|human|assistant|ai|model|system)\s*:\s?(.*)$", re.I | re.S)
REQUESTS = "requests"  # the member of a Copilot Chat session holding its turns
WHOLE = ("messages", REQUESTS)  # the members that make a JSONL line a whole document
# A code fence left empty where Copilot's answer had an edit (its textEditGroup part)
EMPTY_FENCE = lazy(r"\n?(`{3,})\s*\1\n?")
# The first line of a Copilot Chat session log: the whole document as it began
COPILOT_LOG = lazy(r'\A\s*\{\s*"kind"\s*:\s*0\s*,\s*"v"\s*:\s*\{')
SET, PUSH, DELETE = 1, 2, 3  # the kinds of change after the first (VS Code's MutationKind)


def record(value: Any, tally: Tally) -> list[Parsed]:
    """One ``{"role", "content"}`` object as a message (the speaker in ``type`` when it has
    no ``role``), and its tool calls' results as a tool message after it."""
    if not isinstance(value, dict):
        tally.bad("message that is not an object")
        return []
    speaker = str(value.get("role") or value.get("type") or "").lower()
    if speaker in NOTICES:
        tally.pass_over(f"{speaker} notice")
        return []
    role = ROLE_NAMES.get(speaker)
    if role is None or "content" not in value:
        tally.bad("message without a known role and content")
        return []
    calls = [call for call in value.get("toolCalls") or [] if isinstance(call, dict)]
    said = block_text(value["content"]).strip()
    text = "\n".join(part for part in [said, *map(call_note, calls)] if part)
    if not text:
        tally.pass_over(f"{role} without text")
        return []
    tally.keep(str(role))
    created = timestamp(value.get("created_at") or value.get("timestamp") or value.get("time"))
    # OpenAI's chat messages name a participant in ``name``: who said it, kept as its speaker
    # (a tool's ``name`` is its function's, not a speaker)
    name = value.get("name") if role != Role.TOOL else None
    found = [Parsed(role, text, created, name.strip() if isinstance(name, str) else "")]
    results = [result_note(call, tally) for call in calls]
    if results:
        tally.keep(str(Role.TOOL))
        found.append(Parsed(Role.TOOL, "\n".join(results), created))
    return found


def call_note(call: dict[str, Any]) -> str:
    """A Gemini CLI tool call as a one-line note: ``[tool read_file: src/app.ts]``."""
    return tool_use_note(str(call.get("name") or ""), call.get("args"))


def result_note(call: dict[str, Any], tally: Tally) -> str:
    """A Gemini CLI tool call's result as a note (a sub-agent's report kept whole); what
    the call's note and this one left out goes to ``tally.taken`` (``took``)."""
    name, failed = str(call.get("name") or ""), call.get("status") == FAILED
    outputs = [
        part["functionResponse"].get("response", {}).get("output") or ""
        for part in call.get("result") or []
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
    ]
    output = "\n".join(o for o in outputs if isinstance(o, str)) or str(
        call.get("resultDisplay") or ""
    )
    wrapped = UNTRUSTED.match(output)
    if wrapped:
        output = shell_output(wrapped.group(1))
    elif command := SHELL_COMMAND.match(output):
        output = shell_output(output[command.end() :])
    if is_subagent_call(name, call.get("args")):
        note = subagent_report(output, failed, name)
        took(tally, name, call.get("args"), output, note, False)
        return note
    withheld = withholds(call.get("args"))
    note = tool_result_note(output, failed, name, withheld)
    took(tally, name, call.get("args"), output, note, withheld)
    return note


def shell_output(fields: str) -> str:
    """What Gemini CLI's shell fields say happened: the output, an error other than
    "(none)" and the exit code, without the fields that say nothing of it."""
    return SHELL_FIELDS.sub("", SHELL_OUTPUT.sub("", fields)).strip()


def copilot_turn(request: Any, tally: Tally) -> list[Parsed]:
    """One request of a Copilot Chat session: the person's message and Copilot's answer."""
    if not isinstance(request, dict) or not isinstance(request.get("message"), dict):
        tally.bad("Copilot request without a message")
        return []
    created = timestamp(request.get("timestamp"))
    asked = str(request["message"].get("text") or "").strip()
    parts = request.get("response")
    said = "".join(map(answer_part, parts)) if isinstance(parts, list) else ""
    answer = EMPTY_FENCE.sub("\n", said).strip()
    found = []
    for role, text in ((Role.USER, asked), (Role.ASSISTANT, answer)):
        if text:
            tally.keep(str(role))
            found.append(Parsed(role, text, created))
    return found


def answer_part(part: Any) -> str:
    """A part of a Copilot answer as text: Markdown as written, a file by its name, a tool
    call as a note on a line of its own; an edit's text is not kept (as Claude Code's)."""
    if not isinstance(part, dict):
        return ""
    kind = part.get("kind")
    if kind is None and isinstance(part.get("value"), str):
        return part["value"]
    if kind == "inlineReference" and isinstance(part.get("inlineReference"), dict):
        named = part["inlineReference"]
        path = str(named.get("path") or named.get("fsPath") or "")
        return f"`{named.get('name') or PurePosixPath(path).name}`"
    if kind == "toolInvocationSerialized":
        said = part.get("pastTenseMessage") or part.get("invocationMessage")
        detail = said.get("value") if isinstance(said, dict) else said
        return "\n" + tool_use_note(str(part.get("toolId") or ""), detail) + "\n"
    return ""


def replay(entries: Iterator[tuple[int, Any]], tally: Tally) -> dict[str, Any]:
    """The document a Copilot Chat session log ends with: each (line number, entry)
    applied in order; an entry that does not fit the document so far is malformed."""
    document: dict[str, Any] = {}
    for number, entry in entries:
        kind, path, value = entry.get("kind"), entry.get("k"), entry.get("v")
        try:
            if kind == 0 and isinstance(value, dict):
                document = value
                continue
            *parents, last = path
            target: Any = document
            for step in parents:
                target = target[step]
            if kind == SET:
                target[last] = value
            elif kind == PUSH:
                items = target[last]
                del items[entry.get("i", len(items)) :]
                items.extend(value)
            elif kind == DELETE:
                del target[last]
            else:
                tally.bad(f"line {number}: a change of unknown kind")
        except (TypeError, ValueError, KeyError, IndexError):
            tally.bad(f"line {number}: a change that does not fit the session")
    return document


def member(key: str | None, value: Any, tally: Tally) -> list[Parsed]:
    """One member of a JSON document: messages (an Amp thread's read by ``amp``), Copilot
    Chat's requests, or the session's id, title and folder."""
    if key in ("messages", None):
        return amp.message(value, tally) if amp.looks_like(value) else record(value, tally)
    if key == REQUESTS and isinstance(value, list):
        return [message for request in value for message in copilot_turn(request, tally)]
    if key in ("session_id", "sessionId", "id") and isinstance(value, str):
        tally.session_id = tally.session_id or value
    elif key in ("title", "customTitle") and isinstance(value, str):
        tally.title = value
    elif key == "cwd":
        tally.saw_cwd(value)
    elif key == amp.ENV:
        tally.saw_cwd(amp.workspace(value))
    return []


def jsonl_record(value: Any, tally: Tally) -> list[Parsed]:
    """A JSONL line: a message, or a whole document on one line (``{"messages": [...]}``,
    a Copilot Chat session's ``{"requests": [...]}``)."""
    if isinstance(value, dict) and any(isinstance(value.get(k), list) for k in WHOLE):
        found: list[Parsed] = []
        for key, item in value.items():
            items = item if key == "messages" else [item]
            for one in items:
                found += member(key, one, tally)
        return found
    return record(value, tally)


def text_messages(lines: Iterator[str], tally: Tally) -> Iterator[Parsed]:
    """Messages of a plain-text transcript."""
    role: Role = Role.USER
    body: list[str] = []
    for line in lines:
        speaker = SPEAKER.match(line)
        if speaker:
            tally.speakers += 1
            if "".join(body).strip():
                yield Parsed(role, "".join(body).strip())
            role, body = ROLE_NAMES[speaker.group(1).lower()], [speaker.group(2)]
        else:
            body.append(line)
    if "".join(body).strip():
        yield Parsed(role, "".join(body).strip())
