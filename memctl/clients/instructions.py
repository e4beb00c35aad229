"""What memctl tells an assistant: the instructions block and Claude Code's slash commands."""

from __future__ import annotations

from pathlib import Path

from memctl.clients import formats
from memctl.clients.files import Plan

MD_COMMENT = "<!-- {} -->"

INSTRUCTIONS = """\
## Long-term memory (memctl)

You have a long-term memory through the `memctl` MCP server.

- Search it (`memory_search`) before answering questions about this project's history,
  conventions, decisions, or the user's preferences, and when a task resembles past work.
  When a `<memctl-context>` block is there at the start of a session, it already holds
  the best matches for this project.
- Store (`memory_store`) durable facts worth keeping across sessions: decisions and their
  reasons, conventions, preferences the user states, fixes to problems that took effort.
  One fact per memory, in a full sentence. Do not store secrets or passing chatter.
- Text the user marks `<private>...</private>` is never stored: do not repeat it into a
  memory. Once memctl's hooks are installed for this assistant, sessions are captured when
  they end: you do not need to store the whole chat.
- When a memory is wrong or outdated, fix it (`memory_update`) or archive it
  (`memory_forget`) instead of storing a contradicting one.
"""

SKILLS: dict[str, tuple[str, str]] = {
    "recall": (
        "Search long-term memory (memctl) for what is known about a topic",
        "Search long-term memory for: $ARGUMENTS\n\n"
        "Call the `memory_search` tool of the memctl MCP server with that query "
        '(format "context"), then answer from the memories it returns, saying which '
        "ones you used. If nothing relevant comes back, say so plainly.",
    ),
    "remember": (
        "Store a fact in long-term memory (memctl)",
        "Store this in long-term memory: $ARGUMENTS\n\n"
        "Call the `memory_store` tool of the memctl MCP server with the fact as one "
        "full sentence (add tags if the user gave any), then reply with the new memory's id.",
    ),
    "forget": (
        "Archive a memory in long-term memory (memctl)",
        "Forget the memory described by: $ARGUMENTS\n\n"
        "If this is a memory id, call `memory_forget` with it. Otherwise call "
        "`memory_search` first, show the user the matching memories, and archive with "
        "`memory_forget` only the one they confirm.",
    ),
}


def skill_file(name: str) -> str:
    description, body = SKILLS[name]
    return f"---\nname: {name}\ndescription: {description}\nargument-hint: <what>\n---\n\n{body}\n"


CURSOR_RULE = (
    "---\ndescription: Long-term memory through memctl\nalwaysApply: true\n---\n\n" + INSTRUCTIONS
)


def plan_instructions_block(plan: Plan, path: Path, client: str, remove: bool = False) -> None:
    """Set (or remove) memctl's instructions between markers in the Markdown file ``path``,
    leaving the rest of it as it is."""
    data = plan.read(path)
    new = (
        formats.remove_block(data, MD_COMMENT)
        if remove
        else formats.set_block(data, INSTRUCTIONS, MD_COMMENT)
    )
    plan.write(path, new, client, "instructions")
