"""A message's tool calls as recall shows them beside the turn's said message
(retrieve/turns.py): each call that ran a command or wrote a file, as its note records it
(``[tool Bash: git merge --no-ff …]``), an absolute path by its last parts. Reading a file,
searching, a todo list or a sub-agent's order are left out: they say what was looked at,
not what was done."""

from __future__ import annotations

from memctl.ingest.parse.common import LONG_PATH, SHORT_PATH
from memctl.ingest.tools import Call, read_calls, tool_kind


def calls_shown(text: str) -> list[str]:
    """The calls of ``text`` (a message of tool notes) that ran a command or wrote a file,
    each as a note: "[tool Bash: git merge --no-ff alice/x bob/y]"."""
    calls: list[Call] = []
    read_calls(text, calls)
    return [
        f"[tool {call.name}: {LONG_PATH.sub(SHORT_PATH, call.detail)}]"
        for call in calls
        if call.detail and tool_kind(call.name, call.detail) != "other"
    ]
