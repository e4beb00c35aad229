"""Claude Code transcripts: JSONL, one record a line.

Records of ``type`` user and assistant carry ``message.content``: a string,
or a list of blocks. ``text`` blocks are kept, ``tool_use`` and
``tool_result`` become one-line notes, ``thinking`` is dropped. A user record
holding only tool results is a ``tool`` message, and the result of a
sub-agent call (Agent, Task) keeps the sub-agent's report (see
``subagent_report``), as does the ``<task-notification>`` turn that brings a background
sub-agent's. A ``summary`` line titles the session only when the
message it summarises (``leafUuid``) is one of this file's: Claude Code also
writes the summaries of *other* sessions into a resumed one. A ``custom-title`` line
(2.1.2xx: the name the person or the app gave the session) titles it over any summary,
the last one winning, unless it names another session. ``system``,
``file-history-snapshot``, ``queue-operation``, meta lines (``isMeta``) and
2.1's records of its own (``attachment``, ``api-request``, ``last-prompt``, …:
``METADATA_KINDS``) are passed over, each counted by kind. Sub-agent lines
(``isSidechain``) are kept as the sub-agent's own thread: their text starts
with ``[subagent]``. A compaction summary (the ``isCompactSummary`` turn, and the answer
of the compaction sub-agent, whose prompt is passed over) is kept as one
``[session summary]`` message (``session_summary``). The prompt's shell mode (a command
the person ran with ``!``, then its output) is a tool call and its result. The first
record with a ``cwd`` names the session's directory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from memctl.ingest.parse.common import (
    COMPACTION_PROMPT,
    EXIT_CODE,
    REFUSED,
    SUBAGENT,
    TASK_RESULT,
    TOOL_USE_ERROR,
    Parsed,
    Tally,
    block_text,
    call_result_note,
    called,
    next_result_call,
    result_call,
    session_summary,
    subagent_report,
    timestamp,
    tool_result_note,
    tool_use_note,
    without_reminders,
    without_secret_file_copies,
)
from memctl.lazy_re import lazy
from memctl.model import Role

ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
# Claude Code keeps a session at ~/.claude/projects/<slug>/<session>.jsonl and its
# sub-agents' at <slug>/<session>/subagents/<agent>.jsonl; <slug> is the directory the
# session started in, each character but a letter or digit made "-"
PROJECTS, SUBAGENTS = "projects", "subagents"
# The prompt's shell mode ("!uv run pytest"): Claude Code writes the command the person
# ran, then its output, as two user turns. They are a shell call and its result, read as
# the model's are (the digest's commands, the facts of how tests run).
SHELL_INPUT = lazy(r"\A\s*<bash-input>(.*?)</bash-input>\s*\Z", re.S)
SHELL_OUTPUT = lazy(
    r"\A\s*<bash-stdout>(.*?)</bash-stdout>\s*(?:<bash-stderr>(.*?)</bash-stderr>)?\s*\Z", re.S
)
SHELL_TOOL = "Bash"  # Claude Code's shell tool: a note as its calls are written
# A shell-mode command and its output come as two turns without an id: this one ties them
SHELL_CALL = "shell mode"
SLUG_GAP = lazy(r"[^A-Za-z0-9]")
# The person's answer at a permission prompt ("No, and tell Claude what to do differently",
# or an SDK host's deny with a message) is written as the call's error result, bare: "please
# add transformer.js too first". Claude Code 2.1.33x marks it (holdsPersonsWords, and a
# permissionDecision from user_reject); 2.0 did not, and a bare error of a tool that asks
# first is then the person's line: its own errors are "Exit code N", <tool_use_error> or a
# refusal sentence. 2.1 before the marks wrote hooks' and its own blocks bare too.
PERSON_REJECTED = "user_reject"
UNMARKED_ANSWERS = lazy(r"\A2\.0\.")
ASKING_TOOLS = frozenset({"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "WebFetch"})
# The refused call's note, in Claude Code's own words for a refusal (its REFUSED sentence)
REFUSED_NOTE = "The user doesn't want to proceed with this tool use."


def looks_like(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    return (kind in ROLES and isinstance(record.get("message"), dict)) or (
        kind == "summary" and "leafUuid" in record
    )


def parser(name: str) -> Callable[[dict[str, Any], Tally], list[Parsed]]:
    """The record parser for the transcript at ``name``: when the file lies where Claude
    Code keeps it, the session's directory is the project's, the start of its ``cwd``
    that the folder names (a sub-agent, or a compaction, that ran in ``<project>/assets``
    belongs to ``<project>``, as its parent session does)."""
    slug = project_slug(name)

    def parse(record: dict[str, Any], tally: Tally) -> list[Parsed]:
        cwd = record.get("cwd")
        if slug and isinstance(cwd, str):
            tally.saw_cwd(project_dir(cwd, slug))
        return messages(record, tally)

    return parse


def project_slug(name: str) -> str | None:
    """The project folder's name of a transcript in Claude Code's place, else None."""
    parts = PurePath(name).parts
    if len(parts) >= 3 and parts[-3] == PROJECTS:
        return parts[-2]
    if len(parts) >= 5 and parts[-2] == SUBAGENTS and parts[-5] == PROJECTS:
        return parts[-4]
    return None


def project_dir(cwd: str, slug: str) -> str:
    """The longest start of ``cwd`` (whole folders) that Claude Code names ``slug``;
    ``cwd`` itself when none is."""
    folders = cwd.rstrip("/").split("/")
    for end in range(len(folders), 0, -1):
        start = "/".join(folders[:end]) or "/"
        if SLUG_GAP.sub("-", start) == slug:
            return start
    return cwd


def content_block(block: Any, tally: Tally) -> tuple[str, bool] | None:
    """(text, is a tool result) of one content block; None for blocks that say nothing."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return without_secret_file_copies(without_reminders(block["text"]), tally), False
    if kind == "tool_use":
        name = str(block.get("name") or "")
        called(tally, block.get("id"), name, block.get("input"))
        return tool_use_note(name, block.get("input")), False
    if kind == "tool_result":
        content, failed = block.get("content") or "", bool(block.get("is_error"))
        call = result_call(tally, block.get("tool_use_id"))
        if call in tally.subagent_calls:
            return subagent_report(content, failed, tally.calls[call]), True
        return call_result_note(tally, call, content, failed), True
    if kind == "image":
        return "[image]", False
    return None  # thinking, redacted_thinking, and kinds yet unknown


def messages(record: dict[str, Any], tally: Tally) -> list[Parsed]:
    """The messages one transcript line holds (usually one, often none)."""
    kind = record.get("type")
    tally.saw_cwd(record.get("cwd"))
    if kind == "summary":
        _summary(record, tally)
        tally.pass_over("summary")
        return []
    if kind == "custom-title":
        _custom_title(record, tally)
        tally.pass_over("custom-title")
        return []
    _titled(record, tally)
    if kind not in ROLES:
        tally.pass_over(str(kind or "untyped"))
        return []
    if record.get("isMeta"):
        tally.pass_over("meta")
        return []
    message = record.get("message")
    if not isinstance(message, dict) or "content" not in message:
        tally.bad(f"{kind} record without message.content")
        return []
    tally.session_id = tally.session_id or record.get("sessionId")
    created = timestamp(record.get("timestamp"))
    tally.started_at = tally.started_at or created
    content = message["content"]
    if isinstance(content, str):
        text, only_tools = without_secret_file_copies(without_reminders(content), tally), False
    elif isinstance(content, list):
        answer = _persons_answer(record, content, tally) if kind == "user" else None
        if answer is not None:
            return [Parsed(Role.TOOL, answer[0], created), Parsed(Role.USER, answer[1], created)]
        parts = [p for p in (content_block(b, tally) for b in content) if p is not None]
        text = "\n".join(t for t, _ in parts if t.strip())
        only_tools = bool(parts) and all(is_result for _, is_result in parts)
    else:
        tally.bad(f"{kind} record whose content is neither text nor blocks")
        return []
    sidechain = bool(record.get("isSidechain"))
    report = TASK_RESULT.match(text) if kind == "user" else None
    if report is not None:  # a background sub-agent's end: its report
        tally.keep(str(Role.TOOL))
        return [Parsed(Role.TOOL, subagent_report(report.group(1)), created)]
    if not text.strip():
        tally.pass_over("subagent without text" if sidechain else f"{kind} without text")
        return []
    shell = _shell_mode(text, tally) if kind == "user" else None
    if shell is not None:
        tally.keep(str(Role.TOOL))
        return [Parsed(Role.TOOL, (SUBAGENT if sidechain else "") + shell, created)]
    if record.get("isCompactSummary") or (tally.compacting and kind == "assistant"):
        tally.keep("session summary")
        return [Parsed(Role.ASSISTANT, session_summary(text), created)]
    if sidechain and kind == "user" and COMPACTION_PROMPT.match(text):
        tally.compacting = True
        tally.pass_over("compaction prompt")
        return []
    role = Role.TOOL if only_tools else ROLES[kind]
    tally.keep(f"subagent {role}" if sidechain else str(role))
    return [Parsed(role, (SUBAGENT if sidechain else "") + text.strip(), created)]


def _persons_answer(
    record: dict[str, Any], content: list[Any], tally: Tally
) -> tuple[str, str] | None:
    """(the refused call's note, the person's words) of a turn answering a permission
    prompt with text; None for any other turn."""
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if len(blocks) != 1 or len(content) != 1 or not blocks[0].get("is_error"):
        return None
    words = block_text(blocks[0].get("content")).strip()
    if not words or REFUSED.match(words) or record.get("isSidechain"):
        return None
    decision = record.get("permissionDecision")
    marked = record.get("holdsPersonsWords") is True or (
        isinstance(decision, dict) and decision.get("source") == PERSON_REJECTED
    )
    tool = tally.calls.get(next_result_call(tally, blocks[0].get("tool_use_id")), "")
    unmarked = (
        UNMARKED_ANSWERS.match(str(record.get("version") or ""))
        and tool in ASKING_TOOLS
        and "\n" not in words
        and not EXIT_CODE.match(words)
        and not TOOL_USE_ERROR.search(words)
    )
    if not marked and not unmarked:
        return None
    result_call(tally, blocks[0].get("tool_use_id"))  # answered: the next result is another's
    tally.keep("person's answer")
    return tool_result_note(REFUSED_NOTE, True, tool), without_reminders(words)


def _shell_mode(text: str, tally: Tally) -> str | None:
    """A shell-mode turn as a tool note: the command the person ran, or its output."""
    ran = SHELL_INPUT.match(text)
    if ran:
        command = {"command": ran.group(1).strip()}
        tally.withheld_calls.discard(SHELL_CALL)
        called(tally, SHELL_CALL, SHELL_TOOL, command)
        return tool_use_note(SHELL_TOOL, command)
    output = SHELL_OUTPUT.match(text)
    if output:
        said = "\n".join(part for part in output.groups() if part and part.strip())
        return call_result_note(tally, SHELL_CALL, said)
    return None


def _summary(record: dict[str, Any], tally: Tally) -> None:
    """A summary line: the title when its message is this session's, else kept waiting."""
    leaf, summary = str(record.get("leafUuid") or ""), str(record.get("summary") or "")
    if not summary:
        return
    if leaf in tally.uuids:
        tally.title = tally.title if tally.named else summary
    else:
        tally.summaries[leaf] = summary


def _custom_title(record: dict[str, Any], tally: Tally) -> None:
    """The name the session was given: its title, unless the line names another session."""
    title, session = record.get("customTitle"), record.get("sessionId")
    if not isinstance(title, str) or not title.strip():
        return
    if tally.session_id and isinstance(session, str) and session != tally.session_id:
        return
    tally.title, tally.named = title.strip(), True


def _titled(record: dict[str, Any], tally: Tally) -> None:
    """Note a message's uuid; a summary waiting for it becomes the title."""
    uuid = record.get("uuid")
    if isinstance(uuid, str) and uuid:
        tally.uuids.add(uuid)
        if uuid in tally.summaries:
            summary = tally.summaries.pop(uuid)
            tally.title = tally.title if tally.named else summary
