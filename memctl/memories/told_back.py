"""memctl's own answers read back into a session: its tools' results, and the reply that
tells them back.

An assistant asks memctl (its MCP ``memory_search``, or ``memctl recall`` in a shell), and
its next reply restates what memctl handed back ("From memory: the cache listens on
6380"). Stored with the session, the result and the reply came back from recall as clear
matches beside the memory they repeat (s27-walk: "which port is the cache on?" had two
such replies at #2 and #3), and a memory deleted for good stayed quoted there. So ingest
keeps of such a call its outcome and no line of its output (ingest/parse/common.py), the
digest takes no outcome from the reply (ingest/digest.py), and recall weighs the reply as
second-hand evidence, counted with the memory it repeats (retrieve/stages/copies.py).
The user's own words after it (agreeing, correcting) are theirs, and stay evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memctl.lazy_re import lazy
from memctl.model import Role

# memctl's own MCP tools (integrations/mcp_server.py), as a client names them: bare, or behind
# its server's prefix ("mcp__memctl__memory_search" in Claude Code and Codex,
# "memctl_memory_search" in OpenCode, "memctl-memory_search" in GitHub Copilot CLI). Their
# results are memctl's memories read back: distilled again they would echo.
MEMCTL_TOOL = lazy(
    r"(?:^|_|[.:/-])(?:memory_(?:search|get|list|profile|stats|store|update|forget|link|ingest|"
    r"distill_tasks|distill_apply|profile_task|profile_write)|session_(?:search|expand))$",
    re.I,
)
# A command line running one of memctl's commands that print what it keeps (memories,
# sessions, the context block, a run's memories, a hook's block: `memctl -h`), after its
# global options (``--home DIR``, ``-c key=value``): ``memctl recall "cache port"``,
# ``uv run memctl sessions show s1``; or any command naming its database, which prints
# what it holds as it is (``sqlite3 ~/.local/share/memctl/memctl.db "SELECT content FROM
# memories"``).
MEMCTL_READ = lazy(
    r"(?:^|[\s;&|(/])memctl(?:\s+-{1,2}[\w-]+(?:[= ](?!-)\S+)?)*\s+"
    r"(?:recall|get|list|profile|context|graph|export|events|sessions|runs|hook)\b"
    r"|(?:^|[\s;&|(/'\"=])memctl\.db\b"
)
# A tool call's note as the parsers write it (ingest/parse/common.py): ``[tool NAME:
# detail]``; not a result's (``[tool result NAME: ...]``, ``error``, ``refused``)
CALL_NOTE = lazy(r"\[tool (?!(?:result|error|refused)\b)([^\s:\]]+)(?::\s*([^\]\n]*))?")
# How far back recall looks for the user's message that opened a reply's turn (reasoned: a
# question, then up to three memctl calls with their results; a longer turn did more).
TURN_SPAN = 8


def memctl_tool(name: str) -> bool:
    """A call of one of memctl's own tools, whose result is memctl's memories read back."""
    return bool(MEMCTL_TOOL.search(name.strip()))


def reads_memctl(command: str) -> bool:
    """Whether a command line runs one of memctl's commands that print memories or
    sessions (``MEMCTL_READ``)."""
    return MEMCTL_READ.search(command) is not None


def memctl_read(name: str, detail: str) -> bool:
    """A call whose result is memctl's store read back: one of its own tools, or a command
    line (``detail``) that ``reads_memctl``."""
    return memctl_tool(name) or reads_memctl(detail)


def tells_back(turn: Sequence[tuple[str, str]]) -> bool:
    """Whether the last of ``turn`` ((role, text) of a session's messages in order, up to
    the one asked about) tells memctl's own answer back: an assistant's reply after which,
    since the user last spoke, the assistant called tools, each one a read of memctl's
    (``memctl_read``). A turn whose opening is not in ``turn`` did more."""
    if not turn or turn[-1][0] != Role.ASSISTANT:
        return False
    called = False
    for role, text in reversed(turn):
        if role == Role.USER:
            return called
        for name, detail in CALL_NOTE.findall(text) if "[tool " in text else ():
            if not memctl_read(name, detail):  # it did work of its own (most turns): no echo
                return False
            called = True
    return False
