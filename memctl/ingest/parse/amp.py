"""Amp threads: one JSON document a thread (``~/.local/share/amp/threads/T-<uuid>.json``).

``{"v", "id": "T-…", "created", "title", "env", "messages": [...]}``; a message is
``{"role": "user" | "assistant" | "info", "messageId", "content": [blocks]}``, its
blocks Anthropic's as Claude Code keeps them (``text``, ``thinking``, ``tool_use``)
except a tool's result: ``{"type": "tool_result", "toolUseID", "run": {"status",
...}}``, where ``done`` holds the ``result`` (a dict for Amp's own tools: ``content``
of a read, ``output`` and ``exitCode`` of a shell, ``diff`` of an edit), ``error`` an
``error.message``, and ``cancelled`` / ``rejected-by-user`` a ``reason``. A user turn of
tool results only is a tool message, as Claude Code's is. A person's turn says when it
was sent (``meta.sentAt``, epoch ms), the model's when it was answered
(``usage.timestamp``); a turn of results, neither (it takes the time of the turn before,
as any undated message does). An ``info`` turn holding a ``summary`` block is the
compaction of the thread so far. The thread's folder is the first of
``env.initial.trees``, a ``file://`` URI.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from memctl.ingest.parse.claude import content_block as claude_block
from memctl.ingest.parse.common import (
    Parsed,
    Tally,
    call_result_note,
    session_summary,
    subagent_report,
    timestamp,
    tool_result_note,
)
from memctl.model import Role

ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
INFO = "info"  # Amp's own turns in a thread (a compaction's summary)
ENV = "env"  # the thread's member naming its workspace
# A run's status that did not end in a result (Amp's ToolRun: done, error, cancelled,
# rejected-by-user; in-progress while it runs)
FAILED = frozenset({"error", "cancelled"})
REFUSED = "rejected-by-user"
# How a refused call's result opens, so that its note reads "[tool refused ...]" as Claude
# Code's answer at the permission prompt does (common.REFUSED)
REFUSAL = "The user doesn't want to proceed with this tool use"
# Keys of a done run's result that hold what the tool said, most telling first: a shell's
# output, a read file's content, an edit's diff, a sub-agent's or a search's text
RESULT_KEYS = ("output", "content", "diff", "message", "text")
EXIT_KEY = "exitCode"
# Block kinds read (thinking read to be left out, as every reader does)
READ_KINDS = frozenset(
    {"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"}
)
# An edit's diff comes fenced; the fence's opening line says nothing of what changed
DIFF_FENCE = "```diff\n"


def looks_like(message: Any) -> bool:
    """An Amp thread's message: Amp numbers its messages in ``messageId``."""
    return (
        isinstance(message, dict)
        and isinstance(message.get("messageId"), int)
        and isinstance(message.get("content"), list)
    )


def message(value: dict[str, Any], tally: Tally) -> list[Parsed]:
    """One message of an Amp thread, read as Claude Code's blocks are."""
    speaker, created = value.get("role"), sent_at(value)
    if speaker == INFO:
        return _info(value["content"], created, tally)
    role = ROLES.get(str(speaker))
    if role is None:
        tally.bad(f"Amp message of unknown role {str(speaker)[:20]!r}")
        return []
    parts = [p for p in (content_block(b, tally) for b in value["content"]) if p is not None]
    text = "\n".join(t for t, _ in parts if t.strip()).strip()
    if not text:
        tally.pass_over(f"{role} without text")
        return []
    if parts and all(is_result for _, is_result in parts):
        role = Role.TOOL
    tally.keep(str(role))
    tally.started_at = tally.started_at or created
    return [Parsed(role, text, created)]


def sent_at(value: dict[str, Any]) -> str | None:
    """When a message was sent (a person's turn) or answered (the model's)."""
    meta, usage = value.get("meta"), value.get("usage")
    sent = meta.get("sentAt") if isinstance(meta, dict) else None
    return timestamp(sent or (usage.get("timestamp") if isinstance(usage, dict) else None))


def content_block(block: Any, tally: Tally) -> tuple[str, bool] | None:
    """(text, is a tool result) of one block: Amp's tool result here, the rest as Claude
    Code's (thinking left out); a block that is no object, or of a kind not read yet, is
    counted."""
    if not isinstance(block, dict):
        tally.bad("Amp content block that is not an object")
        return None
    kind = block.get("type")
    if kind not in READ_KINDS:
        tally.pass_over(f"Amp {str(kind)[:20]} block")
        return None
    if kind != "tool_result":
        return claude_block(block, tally)
    run: dict[str, Any] = block["run"] if isinstance(block.get("run"), dict) else {}
    call = str(block.get("toolUseID"))
    tool, status = tally.calls.get(call, ""), str(run.get("status") or "")
    if status == REFUSED:
        return tool_result_note(REFUSAL + _why(run), False, tool), True
    if status in FAILED:
        error = run.get("error")
        said = error.get("message") if isinstance(error, dict) else run.get("reason")
        return call_result_note(tally, call, str(said or status), True), True
    output = result_text(run.get("result"))
    if call in tally.subagent_calls:
        return subagent_report(output, False, tool), True
    return call_result_note(tally, call, output), True


def _why(run: dict[str, Any]) -> str:
    reason = run.get("reason")
    return f": {reason}" if isinstance(reason, str) and reason else ""


def result_text(result: Any) -> str:
    """What a done run's result says, as text; a shell's exit code on a line of its own
    (``Exit code 1``), where ``tool_result_note`` reads it; a diff without its fence."""
    if not isinstance(result, dict):
        return result if isinstance(result, str) else ""
    said = next((result[k] for k in RESULT_KEYS if isinstance(result.get(k), str)), "")
    said = said.removeprefix(DIFF_FENCE)
    code = result.get(EXIT_KEY)
    return f"Exit code {code}\n{said}" if isinstance(code, int) and code != 0 else said


def _info(content: list[Any], created: str | None, tally: Tally) -> list[Parsed]:
    """An ``info`` turn: the thread's summary when it holds one, else passed over."""
    summaries = [
        block["summary"].get("summary")
        for block in content
        if isinstance(block, dict) and isinstance(block.get("summary"), dict)
    ]
    text = "\n".join(s for s in summaries if isinstance(s, str) and s.strip())
    if not text:
        tally.pass_over("info")
        return []
    tally.keep("session summary")
    return [Parsed(Role.ASSISTANT, session_summary(text), created)]


def workspace(env: Any) -> str | None:
    """The folder of a thread's first workspace tree (``env.initial.trees[0].uri``)."""
    initial = env.get("initial") if isinstance(env, dict) else None
    trees = initial.get("trees") if isinstance(initial, dict) else None
    first = trees[0] if isinstance(trees, list) and trees else None
    uri = first.get("uri") if isinstance(first, dict) else None
    if not isinstance(uri, str):
        return None
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else None
