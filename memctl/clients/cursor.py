"""Cursor: ``mcp.json`` (``mcpServers.memctl``), a rule file for instructions
(``.cursor/rules/memctl.mdc``, project level only: Cursor keeps user rules in its
settings, not in files), and ``hooks.json`` (``sessionStart``; ``stop`` after each turn
in the editor, ``sessionEnd`` (the CLI's ``-p`` fires no ``stop``) and ``subagentStop``
(its ``agent_transcript_path``) capture).

``hooks.json`` is ``{"version": 1, "hooks": {"sessionStart": [{"command": ...}]}}``;
a sessionStart hook answers ``{"additional_context": ...}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.clients import formats
from memctl.clients.base import Found, Launcher, Where, existing, find_binary
from memctl.clients.claude_code import prompt_output as prompt_output  # no PROMPT_EVENTS
from memctl.clients.files import Plan
from memctl.clients.instructions import CURSOR_RULE

if TYPE_CHECKING:  # the hooks import the clients; a backfill alone needs ingest
    from memctl.ingest.backfill import StoredSession

NAME = "cursor"
BINARY = "cursor-agent"
EVENTS = ("sessionStart", "stop", "sessionEnd", "subagentStop")
START_EVENTS = ("sessionStart",)
CAPTURE_EVENTS = ("stop", "sessionEnd", "subagentStop")
PROMPT_EVENTS: tuple[str, ...] = ()  # beforeSubmitPrompt can block a prompt, not add to it
TRANSCRIPT_FORMAT = None  # sniffed: JSONL (ingest/parse/cursor.py), older versions' text
TRANSCRIPT_GLOBS = (  # see find_transcript
    "*/agent-transcripts/*.jsonl",
    "*/agent-transcripts/*/*.jsonl",
    "*/agent-transcripts/*/subagents/*.jsonl",  # stored with their conversation
    "*/agent-transcripts/*.txt",
)


def config_dir(where: Where) -> Path:
    return (where.project or where.home) / ".cursor"


def detect(where: Where) -> Found:
    binary = find_binary(BINARY, where.env) or find_binary("cursor", where.env)
    return Found(NAME, binary, existing(where.home / ".cursor"))


def mcp_path(where: Where) -> Path:
    return config_dir(where) / "mcp.json"


def plan_mcp(plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None:
    path = mcp_path(where)
    data = plan.read(path)
    words = run.words("mcp")
    keys = ("mcpServers", "memctl")
    new = (
        formats.remove_json(path, data, keys)
        if remove
        else formats.set_json(path, data, keys, {"command": words[0], "args": words[1:]})
    )
    plan.write(path, new, NAME, "mcp server")


def rule_path(where: Where) -> Path:
    return config_dir(where) / "rules" / "memctl.mdc"


def plan_instructions(plan: Plan, where: Where, remove: bool = False) -> None:
    if where.project is None:  # nothing memctl wrote to take out: a note for init only
        if not remove:
            plan.note("cursor: user rules live in Cursor's settings; use --project for a rule file")
        return
    plan.write(rule_path(where), None if remove else CURSOR_RULE.encode(), NAME, "instructions")


def hooks_path(where: Where) -> Path:
    return config_dir(where) / "hooks.json"


def is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and " hook cursor " in f" {entry.get('command', '')} "


def plan_hooks(plan: Plan, where: Where, run: Launcher, timeout: int, remove: bool) -> None:
    path = hooks_path(where)
    data = plan.read(path)
    if remove and data is None:
        return
    doc = formats.load_json(path, data)
    hooks = doc.get("hooks") if isinstance(doc.get("hooks"), dict) else {}
    merged = dict(doc)
    merged.setdefault("version", 1)
    new_hooks = {k: [e for e in v if not is_ours(e)] for k, v in (hooks or {}).items()}
    if not remove:
        for event in EVENTS:
            entry = {"command": run.shell("hook", NAME, event), "timeout": timeout}
            new_hooks.setdefault(event, []).append(entry)
    merged["hooks"] = {k: v for k, v in new_hooks.items() if v}
    plan.write(path, data if merged == doc else formats.dump_json(merged, data), NAME, "hooks")


def hooks_installed(where: Where) -> list[str]:
    path = hooks_path(where)
    data = path.read_bytes() if path.is_file() else None
    hooks = formats.load_json(path, data).get("hooks") or {}
    return [event for event, entries in hooks.items() if any(is_ours(e) for e in entries or [])]


def start_output(context: str) -> str:
    return json.dumps({"additional_context": context}) + "\n"


def find_transcript(session_id: str) -> str | None:
    """Where Cursor keeps a conversation's transcript: ``~/.cursor/projects/<project>/
    agent-transcripts/`` holds ``<id>.jsonl`` (the CLI), ``<id>/<id>.jsonl`` (the editor)
    or ``<id>.txt`` (older versions)."""
    if not session_id or not session_id.replace("-", "").isalnum():
        return None
    root = transcript_dirs()[0]
    for name in (f"{session_id}.jsonl", f"{session_id}/*.jsonl", f"{session_id}.txt"):
        found = sorted(root.glob(f"*/agent-transcripts/{name}"))
        if found:
            return str(found[-1])
    return None


def transcript_dirs() -> list[Path]:
    return [Path.home() / ".cursor" / "projects"]


def stored_sessions(since: float | None) -> list[StoredSession]:
    """None: its sessions are transcript files (``TRANSCRIPT_GLOBS``)."""
    return []
