"""Claude Code: ``~/.claude.json`` (or a project's ``.mcp.json``) for the MCP server,
``CLAUDE.md`` for instructions, ``skills/`` for /recall, /remember and /forget, and
``settings.json`` hooks.

Hooks (settings.json): SessionStart (matcher startup|resume|clear|compact) prints the
context block as ``hookSpecificOutput.additionalContext``; Stop, SessionEnd and
PreCompact hand the transcript to ingest, SubagentStop the sub-agent's own transcript
(``agent_transcript_path``, stored with its session) too. Each hook entry is a command group
``{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": s}]}``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.clients import formats
from memctl.clients.base import Found, Launcher, Where, existing, find_binary
from memctl.clients.files import Plan
from memctl.clients.instructions import SKILLS, plan_instructions_block, skill_file

if TYPE_CHECKING:  # the hooks import the clients; a backfill alone needs ingest
    from memctl.ingest.backfill import StoredSession

NAME = "claude-code"
BINARY = "claude"
START_MATCHER = "startup|resume|clear|compact"
EVENTS = ("SessionStart", "Stop", "SubagentStop", "SessionEnd", "PreCompact")
START_EVENTS = ("SessionStart",)
CAPTURE_EVENTS = ("Stop", "SubagentStop", "SessionEnd", "PreCompact")
PROMPT_EVENTS = ("UserPromptSubmit",)  # installed with --per-prompt
TRANSCRIPT_FORMAT = "claude-code"
# one file a session in a folder a project; <session>/subagents/*.jsonl are its subagents
TRANSCRIPT_GLOBS = ("*/*.jsonl", "*/*/subagents/*.jsonl")  # sessions, and their sub-agents


def config_dir(where: Where) -> Path:
    return (where.project or where.home) / ".claude"


def detect(where: Where) -> Found:
    return Found(NAME, find_binary(BINARY, where.env), existing(where.home / ".claude"))


def mcp_path(where: Where) -> tuple[Path, tuple[str, ...]]:
    """The file and key path of the MCP server entry."""
    if where.project is not None:
        return where.project / ".mcp.json", ("mcpServers", "memctl")
    return where.home / ".claude.json", ("mcpServers", "memctl")


def mcp_entry(run: Launcher) -> dict[str, Any]:
    """``alwaysLoad``: Claude Code (2.1.x) waits for the server before the first request and
    lists its tools directly instead of behind its tool search; without it, ``claude -p``
    may answer before memctl's tools are there."""
    words = run.words("mcp")
    return {"type": "stdio", "command": words[0], "args": words[1:], "env": {}, "alwaysLoad": True}


def plan_mcp(plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None:
    path, keys = mcp_path(where)
    data = plan.read(path)
    new = (
        formats.remove_json(path, data, keys)
        if remove
        else formats.set_json(path, data, keys, mcp_entry(run))
    )
    plan.write(path, new, NAME, "mcp server")


def instructions_path(where: Where) -> Path:
    return (where.project / "CLAUDE.md") if where.project else where.home / ".claude" / "CLAUDE.md"


def plan_instructions(plan: Plan, where: Where, remove: bool = False) -> None:
    plan_instructions_block(plan, instructions_path(where), NAME, remove)
    for name in SKILLS:
        skill = config_dir(where) / "skills" / name / "SKILL.md"
        plan.write(skill, None if remove else skill_file(name).encode(), NAME, "skill")


def settings_path(where: Where) -> Path:
    return config_dir(where) / "settings.json"


def command_group(
    run: Launcher, client: str, event: str, timeout: int, matcher: str | None = None
) -> dict[str, Any]:
    """One hook group of the hooks JSON Claude Code defines and Codex reads too: the
    command memctl runs for ``client``'s ``event``."""
    hook = {"type": "command", "command": run.shell("hook", client, event), "timeout": timeout}
    return {"matcher": matcher, "hooks": [hook]} if matcher else {"hooks": [hook]}


def runs_hook_of(client: str, group: Any) -> bool:
    """Whether a hook group is memctl's for ``client`` (its command runs `hook CLIENT`)."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and f" hook {client} " in f" {h.get('command', '')} " for h in hooks
    )


def hook_groups(
    run: Launcher, timeout: int, per_prompt: bool = False
) -> dict[str, list[dict[str, Any]]]:
    def group(event: str, matcher: str | None = None) -> dict[str, Any]:
        return command_group(run, NAME, event, timeout, matcher)

    return {
        "SessionStart": [group("SessionStart", START_MATCHER)],
        "Stop": [group("Stop")],
        "SubagentStop": [group("SubagentStop")],
        "SessionEnd": [group("SessionEnd")],
        "PreCompact": [group("PreCompact")],
        **({"UserPromptSubmit": [group("UserPromptSubmit")]} if per_prompt else {}),
    }


def is_ours(group: Any) -> bool:
    return runs_hook_of(NAME, group)


def merge_hooks(
    doc: dict[str, Any], ours: dict[str, list[dict[str, Any]]], is_mine: Any
) -> dict[str, Any]:
    """``doc`` with memctl's hook groups replaced by ``ours`` (empty: removed); the user's
    own groups stay, in their order."""
    hooks = doc.get("hooks")
    hooks = dict(hooks) if isinstance(hooks, dict) else {}
    for event in sorted(set(hooks) | set(ours), key=list({**hooks, **ours}).index):
        kept = [g for g in hooks.get(event) or [] if not is_mine(g)]
        merged = kept + ours.get(event, [])
        if merged:
            hooks[event] = merged
        else:
            hooks.pop(event, None)
    result = dict(doc)
    if hooks:
        result["hooks"] = hooks
    else:
        result.pop("hooks", None)
    return result


def plan_hooks(
    plan: Plan, where: Where, run: Launcher, timeout: int, remove: bool, per_prompt: bool = False
) -> None:
    """memctl's hook groups in settings.json (UserPromptSubmit only ``per_prompt``)."""
    groups = {} if remove else hook_groups(run, timeout, per_prompt)
    plan_hook_groups(plan, settings_path(where), NAME, groups, is_ours)


def plan_hook_groups(
    plan: Plan, path: Path, client: str, groups: dict[str, list[dict[str, Any]]], is_mine: Any
) -> None:
    """``groups`` (none: memctl's removed) in the ``hooks`` of the settings file at
    ``path``, the user's own groups kept (Claude Code's shape, which Gemini CLI shares);
    a file that is not there is not made to remove nothing from it."""
    data = plan.read(path)
    if not groups and data is None:
        return
    doc = formats.load_json(path, data)
    merged = merge_hooks(doc, groups, is_mine)
    plan.write(path, data if merged == doc else formats.dump_json(merged, data), client, "hooks")


def hooks_installed(where: Where) -> list[str]:
    """The events with a memctl hook in settings.json."""
    return hooked_events(settings_path(where), is_ours)


def hooked_events(path: Path, is_mine: Any) -> list[str]:
    """The events with a memctl hook group in the settings file at ``path``."""
    data = path.read_bytes() if path.is_file() else None
    hooks = formats.load_json(path, data).get("hooks") or {}
    return [event for event, groups in hooks.items() if any(is_mine(g) for g in groups or [])]


def start_output(context: str) -> str:
    """``hookSpecificOutput.additionalContext`` (Codex reads the same shape)."""
    answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    return json.dumps(answer) + "\n"


def prompt_output(block: str) -> str:
    """The same for UserPromptSubmit (Codex's and Gemini CLI's BeforeAgent read it too)."""
    event = {"hookEventName": "UserPromptSubmit", "additionalContext": block}
    return json.dumps({"hookSpecificOutput": event}) + "\n"


def find_transcript(session_id: str) -> str | None:
    return None  # every payload names its transcript_path


def transcript_dirs() -> list[Path]:
    """``$CLAUDE_CONFIG_DIR/projects`` (default ``~/.claude/projects``)."""
    return [Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"]


def stored_sessions(since: float | None) -> list[StoredSession]:
    """None: its sessions are transcript files (``TRANSCRIPT_GLOBS``)."""
    return []
