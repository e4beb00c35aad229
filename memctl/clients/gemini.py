"""Gemini CLI: ``settings.json`` (``mcpServers.memctl``, and the ``hooks``), ``GEMINI.md``
for instructions.

Its hooks are Claude Code's command groups under other event names, with the timeout in
milliseconds (Gemini CLI 0.61, docs/hooks/reference.md of its package): SessionStart
(on startup, resume and /clear: a lifecycle matcher is an exact string, so none is set)
prints the context block as ``hookSpecificOutput.additionalContext``; AfterAgent (each
turn's end), PreCompress and SessionEnd capture the session file ``transcript_path``
names; with ``--per-prompt``, BeforeAgent answers a prompt with the memories relevant to
it (``additionalContext`` too). A hook that prints nothing is read as no answer.

It keeps a session in ``<gemini dir>/tmp/<project>/chats/session-<time>-<id[:8]>.jsonl``
(older versions: one ``.json`` document), ``<gemini dir>`` being ``~/.gemini`` or
``$GEMINI_CLI_HOME/.gemini``; ``<project>`` is a short name (older versions: a hash) and
``.project_root`` in it names the project's folder. A sub-agent's session is
``chats/<parent session id>/<its id>.jsonl``.

Folder trust is on unless ``security.folderTrust.enabled`` is false (0.61; its docs still
say off): in a folder the user has not trusted, Gemini CLI starts no MCP server, the
user's own either.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.clients import formats
from memctl.clients.base import Found, Launcher, Where, existing, find_binary
from memctl.clients.claude_code import hooked_events, plan_hook_groups, runs_hook_of
from memctl.clients.claude_code import prompt_output as prompt_output
from memctl.clients.claude_code import start_output as start_output
from memctl.clients.files import Plan
from memctl.clients.instructions import plan_instructions_block

if TYPE_CHECKING:  # the hooks import the clients; a backfill alone needs ingest
    from memctl.ingest.backfill import StoredSession

NAME = "gemini"
BINARY = "gemini"
EVENTS = ("SessionStart", "AfterAgent", "PreCompress", "SessionEnd")
START_EVENTS = ("SessionStart",)
CAPTURE_EVENTS = ("AfterAgent", "PreCompress", "SessionEnd")
PROMPT_EVENTS = ("BeforeAgent",)  # installed with --per-prompt: its additionalContext
TRANSCRIPT_FORMAT = "gemini"
TRANSCRIPT_GLOBS = (
    "*/chats/session-*.jsonl",
    "*/chats/session-*.json",  # versions before the JSONL file
    "*/chats/*/*.jsonl",  # sub-agents, in a folder named after their session
)
HOME_ENV = "GEMINI_CLI_HOME"  # replaces the home directory Gemini CLI keeps .gemini in
MS_PER_SECOND = 1000  # Gemini CLI reads a hook's timeout in milliseconds
HOOK_NAME = "memctl"  # what /hooks and hooksConfig.disabled call memctl's hooks
TRUST_NOTE = (
    "gemini: Gemini CLI starts memctl's MCP server only in folders you trust "
    "(/permissions in Gemini CLI, or ~/.gemini/trustedFolders.json)"
)


def gemini_dir(where: Where) -> Path:
    """The user's ``.gemini`` (``$GEMINI_CLI_HOME/.gemini`` when that is set)."""
    return Path(where.env.get(HOME_ENV) or where.home) / ".gemini"


def config_dir(where: Where) -> Path:
    return where.project / ".gemini" if where.project else gemini_dir(where)


def detect(where: Where) -> Found:
    return Found(NAME, find_binary(BINARY, where.env), existing(gemini_dir(where)))


def settings_path(where: Where) -> Path:
    return config_dir(where) / "settings.json"


MCP_KEYS = ("mcpServers", "memctl")  # no underscore: Gemini CLI names tools mcp_<server>_<tool>


def plan_mcp(plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None:
    path = settings_path(where)
    data = plan.read(path)
    words = run.words("mcp")
    new = (
        formats.remove_json(path, data, MCP_KEYS)
        if remove
        else formats.set_json(path, data, MCP_KEYS, {"command": words[0], "args": words[1:]})
    )
    plan.write(path, new, NAME, "mcp server")
    if not remove:
        plan.note(TRUST_NOTE)


def instructions_path(where: Where) -> Path:
    return where.project / "GEMINI.md" if where.project else gemini_dir(where) / "GEMINI.md"


def plan_instructions(plan: Plan, where: Where, remove: bool = False) -> None:
    plan_instructions_block(plan, instructions_path(where), NAME, remove)


def hook_groups(
    run: Launcher, timeout: int, per_prompt: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """One group an event, each running ``memctl hook gemini EVENT`` (``timeout`` seconds);
    BeforeAgent only ``per_prompt``."""
    return {
        event: [
            {
                "hooks": [
                    {
                        "type": "command",
                        "name": HOOK_NAME,
                        "command": run.shell("hook", NAME, event),
                        "timeout": timeout * MS_PER_SECOND,
                    }
                ]
            }
        ]
        for event in EVENTS + (PROMPT_EVENTS if per_prompt else ())
    }


def is_ours(group: Any) -> bool:
    return runs_hook_of(NAME, group)


def plan_hooks(
    plan: Plan, where: Where, run: Launcher, timeout: int, remove: bool, per_prompt: bool = False
) -> None:
    groups = {} if remove else hook_groups(run, timeout, per_prompt)
    plan_hook_groups(plan, settings_path(where), NAME, groups, is_ours)


def hooks_installed(where: Where) -> list[str]:
    return hooked_events(settings_path(where), is_ours)


def problems(where: Where) -> list[str]:
    """What keeps Gemini CLI from running memctl's hooks: its hooks switched off
    (``hooksConfig.enabled`` false) or memctl's among those it skips by name."""
    path = settings_path(where)
    data = path.read_bytes() if path.is_file() else None
    try:
        config = formats.load_json(path, data).get("hooksConfig")
    except formats.MalformedConfig:
        return []  # named once already, by the hooks check
    if not isinstance(config, dict) or not hooks_installed(where):
        return []
    if config.get("enabled") is False:
        return [f"gemini: {path} switches hooks off (hooksConfig.enabled): none of memctl's runs"]
    skipped = config.get("disabled")
    if isinstance(skipped, list) and HOOK_NAME in skipped:
        return [f"gemini: {path} skips memctl's hooks (hooksConfig.disabled names {HOOK_NAME!r})"]
    return []


def find_transcript(session_id: str) -> str | None:
    """A session's file, by the first 8 characters of its id in the file's name (every
    payload names its ``transcript_path``; this is for one that does not)."""
    short = session_id[:8]
    if len(short) < 8 or not short.replace("-", "").isalnum():
        return None
    found = sorted(transcript_dirs()[0].glob(f"*/chats/session-*-{short}.json*"))
    return str(found[-1]) if found else None


def transcript_dirs() -> list[Path]:
    """``~/.gemini/tmp`` (``$GEMINI_CLI_HOME/.gemini/tmp`` when that is set)."""
    return [gemini_dir(Where(Path.home(), env=dict(os.environ))) / "tmp"]


def stored_sessions(since: float | None) -> list[StoredSession]:
    """None: its sessions are transcript files (``TRANSCRIPT_GLOBS``)."""
    return []
