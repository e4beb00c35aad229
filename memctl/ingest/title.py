"""A session's title when its transcript gives none: its first request, condensed.

What a client injected (instructions, reminders, command wrappers) is not the request
(``memories.injected``); a slash command is named by itself and its arguments
(``/review the auth module``). A session of only client commands (``/clear``) is named
by the first of them. A sub-agent's own file is named by its first order, without its
``[subagent]`` mark (the digest says whose it is); a session that holds requests of its
own besides is named by those, whichever of its files was stored first (Claude Code's
SubagentStop stores a sub-agent's file, under its parent's id, before the parent's). A
session with no request of its own (a client's compaction sub-agent: its prompt is the
client's) is named by the request its summary states.

A sub-agent's digest heading says whose it is ("(opencode sub-agent)"), so the mark its
client puts in its title goes (``heading_title``): OpenCode titles a task's session
"<description> (@<agent> subagent)" (its task tool).
"""

from __future__ import annotations

import re

from memctl.ingest.parse.common import SESSION_SUMMARY, SUBAGENT
from memctl.ingest.rule_sentences import INTRODUCES
from memctl.ingest.summary import read_summary
from memctl.lazy_re import lazy
from memctl.memories.injected import COMMAND_NAME, strip_injected
from memctl.store.database import Database
from memctl.store.sessions import first_message_starting, first_requests

TITLE_WIDTH = 60  # characters: a title fits an 80-column row beside an id and a date
REQUESTS_READ = 5  # user messages looked at: past the client's preamble, a request is there
# What a first line ending in a colon introduces: Claude Code's accepted plan ("Implement
# the following plan:" over "# Plan: Add `--json` flag to `specstory watch`"), Cursor's
# "For the code present, we get this error:" over the error in a fence; alone, that line
# titled 3 of the studied sessions with half a sentence (s32-distill)
HEADING = lazy(r"^#{1,6}\s+")
FENCE = lazy(r"^(?:```|~~~)")
# A resumed session's opening that asks only to go on, after at most a greeting and the
# time: "pick up where we left off", "good morning buddy, it's 24 July 26 at 0546 local
# philly time. Please pick up where we left off." (four of fresh9's six StarCar sessions).
# It says nothing of the work: as a title and a digest's only request it made empty digests
# that ranked for any question of the project.
RESUME_PREAMBLE_CHARS = 120
# its source, for noise's table too (reading a lazy pattern's own ``pattern`` compiles it)
RESUMED_SOURCE = (
    rf"^(?:[^\n]{{0,{RESUME_PREAMBLE_CHARS}}}[.!,;]\s+)?(?:(?:please|let's|ok|okay),?\s+)*"
    r"(?:pick(?: it| this| things)? (?:back )?up|continue|carry on|resume|go on|keep going)"
    r"(?: (?:from|with))?\s+(?:where (?:we|you|I) (?:left off|stopped|were)|"
    r"(?:the |our )?(?:last|previous) session)\W*$"
)
RESUMED = lazy(RESUMED_SOURCE, re.I)
# the mark OpenCode's task tool ends a sub-agent session's title with: " (@review subagent)"
SUBAGENT_TITLE = lazy(r"\s*\(@[^()\s]+ subagent\)\s*$", re.I)


def condensed(text: str, width: int = TITLE_WIDTH) -> str:
    """The first non-blank line of ``text``, spaces collapsed, cut at a word with ``…``; a
    line that only introduces what follows it (``INTRODUCES``) goes on with the next line
    (a code fence's aside), or gives way to the heading that follows it."""
    lines = [" ".join(part.split()) for part in text.splitlines() if part.strip()]
    lines = [line for line in lines if not FENCE.match(line)]
    line = lines[0] if lines else ""
    if len(lines) > 1 and INTRODUCES.search(line):
        following = HEADING.sub("", lines[1])
        line = following if following != lines[1] else f"{line} {following}"
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[width // 2 :] else cut) + "…"


def session_title(requests: list[str]) -> str:
    """The title of a session whose first user messages are ``requests``: the first that
    says something, past one that only asks to resume (``RESUMED``) when another follows."""
    said = [strip_injected(text.removeprefix(SUBAGENT)).text for text in requests]
    said = [text for text in said if text]
    for text in [t for t in said if not resumed(t)] or said[:1]:
        return condensed(text)
    for text in requests:
        command = COMMAND_NAME.search(text)
        if command:
            return "/" + command.group(1)
    return ""


def resumed(text: str) -> bool:
    """The text only asks to go on from where the last session stopped (``RESUMED``)."""
    return bool(RESUMED.match(text.strip()))


def heading_title(title: str) -> str:
    """A sub-agent session's title as its digest's heading shows it: without its client's
    sub-agent mark (the heading names the sub-agent)."""
    return SUBAGENT_TITLE.sub("", title.removeprefix(SUBAGENT)).strip() or title


def summary_title(summary: str) -> str:
    """The title of a session known only by its compaction summary: the request it states
    ("Summary: …"); '' when it states none."""
    asked = read_summary(summary.removeprefix(SESSION_SUMMARY)).asked
    return condensed(f"Summary: {asked}") if asked else ""


def stored_title(db: Database, session_id: str) -> str:
    """The title of a stored session from its first requests (a sub-agent's orders after
    the session's own), else its summary's."""
    requests = first_requests(db, session_id, REQUESTS_READ, unless=SUBAGENT)
    return session_title(requests) or summary_title(
        first_message_starting(db, session_id, SESSION_SUMMARY)
    )
