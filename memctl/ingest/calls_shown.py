"""A message's tool calls as recall shows them beside the turn's said message
(retrieve/turns.py): each call that ran a command or wrote a file, as its note records it
(``[tool Bash: git merge --no-ff …]``), an absolute path by its last parts, flat and cut to
CALL_CHARS, with its result's note when one was recorded. Reading a file, searching, a todo
list or a sub-agent's order are left out: they say what was looked at, not what was done.
The slow path embeds each as shown (ingest/call_vectors.py): what is shown is what is
weighed."""

from __future__ import annotations

from memctl.ingest.parse.common import LONG_PATH, RESULT_LINES, SHORT_PATH
from memctl.ingest.tools import Call, read_calls, tool_kind

# At most this many characters of a call are shown: a member's answering part's room
# (retrieve/answering.py ANSWER_CHARS), the excerpt's line (cli/recall_out.py).
CALL_CHARS = 240


def cut(text: str) -> str:
    """``text`` flat, cut to CALL_CHARS."""
    flat = " ".join(text.split())
    return flat if len(flat) <= CALL_CHARS else flat[: CALL_CHARS - 1].rstrip() + "…"


def shown_call(call: Call) -> bool:
    return bool(call.detail) and tool_kind(call.name, call.detail) != "other"


def told(call: Call) -> tuple[str, ...]:
    """What the call's result tells: its lines, but not a file write's receipt ("The file …
    has been updated") when it worked: the write is what it did."""
    if call.succeeded and tool_kind(call.name, call.detail) == "file":
        return ()
    return lines(call.error)


def lines(result: str) -> tuple[str, ...]:
    """A result note's lines (the parsers join them with RESULT_LINES), each flat."""
    return tuple(" ".join(line.split()) for line in result.split(RESULT_LINES) if line.strip())


def calls_shown(texts: list[str]) -> list[list[tuple[str, str, tuple[str, ...], bool]]]:
    """The calls of each of ``texts`` (a run of messages of tool notes, oldest first) that ran
    a command or wrote a file, each as (its whole note, as shown: "[tool Bash: git merge
    --no-ff alice/x bob/y]", the lines of its result as recorded in the run: the output, the
    error or the refusal, none when none, and whether it failed or was refused)."""
    calls: list[Call] = []
    spans = []
    for text in texts:
        start = len(calls)
        read_calls(text, calls)
        spans.append((start, len(calls)))
    shown = []
    for start, end in spans:
        notes = [
            (f"[tool {call.name}: {LONG_PATH.sub(SHORT_PATH, call.detail)}]", call)
            for call in calls[start:end]
            if shown_call(call)
        ]
        shown.append([(note, cut(note), told(c), not c.succeeded) for note, c in notes])
    return shown
