"""A message's tool calls as recall shows them beside the turn's said message
(retrieve/turns.py): each call that ran a command or wrote a file, as its note records it
(``[tool Bash: git merge --no-ff …]``), an absolute path by its last parts, flat and cut to
CALL_CHARS. Reading a file, searching, a todo list or a sub-agent's order are left out: they
say what was looked at, not what was done. The slow path embeds each as shown
(ingest/call_vectors.py): what is shown is what is weighed."""

from __future__ import annotations

from memctl.ingest.tools import LONG_PATH, SHORT_PATH, Call, read_calls, tool_kind

# At most this many characters of a call are shown: a member's answering part's room
# (retrieve/answering.py ANSWER_CHARS), the excerpt's line (cli/recall_out.py).
CALL_CHARS = 240


def cut(text: str) -> str:
    """``text`` flat, cut to CALL_CHARS."""
    flat = " ".join(text.split())
    return flat if len(flat) <= CALL_CHARS else flat[: CALL_CHARS - 1].rstrip() + "…"


def calls_shown(text: str) -> list[tuple[str, str]]:
    """The calls of ``text`` (a message of tool notes) that ran a command or wrote a file,
    each as (its whole note, as shown): "[tool Bash: git merge --no-ff alice/x bob/y]"."""
    calls: list[Call] = []
    read_calls(text, calls)
    notes = [
        f"[tool {call.name}: {LONG_PATH.sub(SHORT_PATH, call.detail)}]"
        for call in calls
        if call.detail and tool_kind(call.name, call.detail) != "other"
    ]
    return [(note, cut(note)) for note in notes]
