"""GitHub Copilot CLI (npm ``@github/copilot``, command ``copilot``; as of 1.0.102).

Its files live in ``~/.copilot`` (``$COPILOT_HOME`` when set): MCP servers in
``mcp-config.json`` (``mcpServers.<name>``: ``type`` ``local``, ``command``, ``args``,
``tools``), instructions in ``copilot-instructions.md``, hooks in ``hooks/*.json`` (one
file each: ``{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": ...,
"timeoutSec": ...}]}}``). At project level: ``.github/mcp.json`` (it reads ``.mcp.json``
too, which is Claude Code's), ``.github/copilot-instructions.md``, ``.github/hooks/``.

Hooks: ``sessionStart`` (source ``new``, ``startup`` or ``resume``) prints the context block
as ``{"additionalContext": ...}``; ``sessionEnd`` captures the session (in prompt mode,
``-p``, it fires once per completed turn; interactively at exit and at ``/clear``). Their
payload is ``{"sessionId", "timestamp", "cwd", ...}``: it names no transcript, which is
``session-state/<sessionId>/events.jsonl``. Repository hooks run only in a folder the user
trusts. With ``--per-prompt``, ``userPromptSubmitted`` (payload ``prompt``) prints the
memories relevant to the prompt as ``{"additionalContext": ...}``, the sessionStart shape.
The session's MCP server is told its session by ``COPILOT_AGENT_SESSION_ID`` in its
environment (``config.settings.SESSION_VARIABLES``); the hooks are not.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.clients import formats
from memctl.clients.base import Found, Launcher, Where, existing, find_binary
from memctl.clients.files import Plan
from memctl.clients.instructions import plan_instructions_block

if TYPE_CHECKING:  # the hooks import the clients; a backfill alone needs ingest
    from memctl.ingest.backfill import StoredSession

NAME = "copilot"
BINARY = "copilot"
EVENTS = ("sessionStart", "sessionEnd")
START_EVENTS = ("sessionStart",)
CAPTURE_EVENTS = ("sessionEnd",)
# Copilot CLI (1.0.102, its TUI in a real terminal) kills its sessionEnd hook with SIGKILL
# about 1.5 s after /exit, whatever its timeoutSec: the capture runs in a process of its
# own, which outlives the hook (integrations/hooks.OUTLIVED)
KILLED_EVENTS = ("sessionEnd",)
PROMPT_EVENTS = ("userPromptSubmitted",)  # installed with --per-prompt
TRANSCRIPT_FORMAT = "copilot"
TRANSCRIPT_GLOBS = ("*/events.jsonl",)
HOME_ENV = "COPILOT_HOME"  # replaces ~/.copilot
STATE_DIR = "session-state"
TRANSCRIPT = "events.jsonl"
HOOKS_FILE = "memctl.json"  # memctl's own file in the hooks folder: the user's stay theirs
HOOKS_VERSION = 1  # the hooks files' schema version (.github/hooks/*.json)
MCP_KEYS = ("mcpServers", "memctl")
SESSION_ID = re.compile(r"\A[0-9A-Za-z-]{1,64}\Z")  # a folder name, never a path


def copilot_dir(where: Where) -> Path:
    """The user's ``~/.copilot`` (``$COPILOT_HOME`` when that is set)."""
    home = where.env.get(HOME_ENV)
    return Path(home) if home else where.home / ".copilot"


def detect(where: Where) -> Found:
    return Found(NAME, find_binary(BINARY, where.env), existing(copilot_dir(where)))


def mcp_path(where: Where) -> Path:
    return (
        where.project / ".github" / "mcp.json"
        if where.project
        else copilot_dir(where) / ("mcp-config.json")
    )


def plan_mcp(plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None:
    path = mcp_path(where)
    data = plan.read(path)
    words = run.words("mcp")
    server = {"type": "local", "command": words[0], "args": words[1:], "tools": ["*"]}
    new = (
        formats.remove_json(path, data, MCP_KEYS)
        if remove
        else formats.set_json(path, data, MCP_KEYS, server)
    )
    plan.write(path, new, NAME, "mcp server")


def instructions_path(where: Where) -> Path:
    if where.project:
        return where.project / ".github" / "copilot-instructions.md"
    return copilot_dir(where) / "copilot-instructions.md"


def plan_instructions(plan: Plan, where: Where, remove: bool = False) -> None:
    plan_instructions_block(plan, instructions_path(where), NAME, remove)


def hooks_path(where: Where) -> Path:
    folder = where.project / ".github" if where.project else copilot_dir(where)
    return folder / "hooks" / HOOKS_FILE


def hooks_file(run: Launcher, timeout: int, per_prompt: bool = False) -> dict[str, Any]:
    """memctl's hooks file: each event runs ``memctl hook copilot EVENT``
    (userPromptSubmitted only ``per_prompt``)."""
    return {
        "version": HOOKS_VERSION,
        "hooks": {
            event: [
                {"type": "command", "bash": run.shell("hook", NAME, event), "timeoutSec": timeout}
            ]
            for event in EVENTS + (PROMPT_EVENTS if per_prompt else ())
        },
    }


def plan_hooks(
    plan: Plan, where: Where, run: Launcher, timeout: int, remove: bool, per_prompt: bool = False
) -> None:
    """memctl's own hooks file, written whole (or taken away)."""
    path = hooks_path(where)
    before = plan.read(path)
    if remove:
        if before is not None:
            plan.write(path, None, NAME, "hooks")
        return
    after = formats.dump_json(hooks_file(run, timeout, per_prompt), before)
    plan.write(path, after, NAME, "hooks")


def hooks_installed(where: Where) -> list[str]:
    path = hooks_path(where)
    data = path.read_bytes() if path.is_file() else None
    hooks = formats.load_json(path, data).get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [
        event
        for event, entries in hooks.items()
        if isinstance(entries, list)
        and any(
            f" hook {NAME} " in f" {e.get('bash', '')} " for e in entries if isinstance(e, dict)
        )
    ]


def start_output(context: str) -> str:
    """``additionalContext`` at the top level: Copilot CLI adds it to the conversation."""
    return json.dumps({"additionalContext": context}) + "\n"


def prompt_output(block: str) -> str:
    """userPromptSubmitted's answer has sessionStart's shape."""
    return start_output(block)


def find_transcript(session_id: str) -> str | None:
    """``session-state/<id>/events.jsonl``: its hooks' payloads name no transcript."""
    if not SESSION_ID.match(session_id):
        return None
    path = transcript_dirs()[0] / session_id / TRANSCRIPT
    return str(path) if path.is_file() else None


def transcript_dirs() -> list[Path]:
    """``~/.copilot/session-state`` (``$COPILOT_HOME/session-state`` when that is set)."""
    return [copilot_dir(Where(Path.home(), env=dict(os.environ))) / STATE_DIR]


def stored_sessions(since: float | None) -> list[StoredSession]:
    """None: its sessions are transcript files (``TRANSCRIPT_GLOBS``)."""
    return []
