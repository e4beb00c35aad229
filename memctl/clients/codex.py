"""Codex CLI: ``$CODEX_HOME/config.toml`` (``[mcp_servers.memctl]``, and ``notify`` for
versions without hooks), ``AGENTS.md`` for instructions, ``hooks.json`` for hooks.

config.toml is Codex's own file too: it appends hook trust, folder trust and UI state
at its end. memctl edits it as data (``formats.set_toml``): its table and key change,
nothing else does.

Codex skips the hooks in ``hooks.json`` until the user trusts them in ``/hooks``; it
records each trusted hook under ``[hooks.state."<key>"]`` with a ``trusted_hash`` in
the user's config.toml, which ``install status`` reads. ``notify`` runs a command
with the event's JSON as its last argument after each turn, and needs no trust.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.clients import formats
from memctl.clients.base import Found, Launcher, Where, existing, find_binary
from memctl.clients.claude_code import command_group, merge_hooks, runs_hook_of
from memctl.clients.claude_code import prompt_output as prompt_output
from memctl.clients.claude_code import start_output as start_output
from memctl.clients.files import Plan
from memctl.clients.instructions import plan_instructions_block

if TYPE_CHECKING:  # the hooks import the clients; a backfill alone needs ingest
    from memctl.ingest.backfill import StoredSession

NAME = "codex"
BINARY = "codex"
NOTIFY = "notify"
# Codex 0.171's hooks (their input schemas are in its binary: subagent-start.command.input
# ...): Stop ends a turn, but not one the person interrupts (Ctrl-C; then only SessionEnd
# fires); SubagentStart and SubagentStop run for a sub-agent's thread under its parent's
# session_id, naming its own rollout (``transcript_path``, ``agent_transcript_path``)
EVENTS = ("SessionStart", "Stop", "SubagentStart", "SubagentStop", "SessionEnd")
START_EVENTS = ("SessionStart",)
# notify: the event's JSON is its last argument; SubagentStart marks the sub-agent's
# rollout pending with its parent (``hooks.SUBAGENT_START``)
CAPTURE_EVENTS = ("Stop", "SubagentStart", "SubagentStop", "SessionEnd", NOTIFY)
PROMPT_EVENTS = ("UserPromptSubmit",)  # installed with --per-prompt; Claude Code's shape
TRANSCRIPT_FORMAT = "codex"
TRANSCRIPT_GLOBS = ("**/rollout-*.jsonl",)  # sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl
# Codex 0.171 asks at its start when hooks are new or changed ("Hooks need review"), and
# /hooks lists them; either way it reads them as a session starts (``hooks._catch_up``)
TRUST_FIX = "start `codex` and trust memctl's hooks when it asks (or type /hooks)"
# Codex 0.171 cuts a SessionEnd hook's timeout to 3 s, and says so on every start when
# hooks.json asks for more ("clamping SessionEnd hook timeout to 3s")
SESSION_END_TIMEOUT = 3
# and kills it then (SIGKILL: a hook trapping TERM, HUP and INT saw none, and never reached
# its end; `codex exec` exited 3.1 s after the hook began): the capture runs in a process of
# its own, which outlives the hook (integrations/hooks.OUTLIVED)
KILLED_EVENTS = ("SessionEnd",)


def trust_note(events: list[str]) -> str:
    """What to do after memctl added or changed these hooks: Codex skips them until trusted."""
    return (
        f"Codex runs hooks only after you trust them: {TRUST_FIX} ({', '.join(events)}; "
        "`memctl install status` shows which are trusted)"
    )


def codex_home(where: Where) -> Path:
    if where.project is not None:
        return where.project / ".codex"
    return Path(where.env.get("CODEX_HOME") or where.home / ".codex")


def user_codex_home(where: Where) -> Path:
    return Path(where.env.get("CODEX_HOME") or where.home / ".codex")


def detect(where: Where) -> Found:
    return Found(NAME, find_binary(BINARY, where.env), existing(user_codex_home(where)))


def config_path(where: Where) -> Path:
    return codex_home(where) / "config.toml"


MCP_KEYS = ("mcp_servers", "memctl")
# `codex exec` answers without waiting for a server that is not required, and cannot ask
# the user to approve a tool call: both are needed for the model to call memory_search.
MCP_SETTINGS = {"required": True, "default_tools_approval_mode": "approve"}


def mcp_entry(run: Launcher) -> dict[str, Any]:
    words = run.words("mcp")
    return {"command": words[0], "args": words[1:], **MCP_SETTINGS}


def runs_memctl(words: Any, *tail: str) -> bool:
    """Whether a command line (a list of words) starts memctl with ``tail`` among its words."""
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        return False
    named = any(Path(w).name == "memctl" for w in words) or "memctl" in words
    return named and all(t in words for t in tail)


def plan_mcp(plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None:
    path = config_path(where)
    data = plan.read(path)
    current = formats.get_toml(path, data, MCP_KEYS)
    if isinstance(current, dict):
        words = [current.get("command"), *(current.get("args") or [])]
        if not runs_memctl(words, "mcp"):
            plan.note(f"{path}: [mcp_servers.memctl] runs something else; left alone")
            return
    new = (
        formats.remove_toml(path, data, MCP_KEYS)
        if remove
        else formats.set_toml(path, data, MCP_KEYS, mcp_entry(run))
    )
    plan.write(path, new, NAME, "mcp server")


def instructions_path(where: Where) -> Path:
    return (where.project / "AGENTS.md") if where.project else codex_home(where) / "AGENTS.md"


def plan_instructions(plan: Plan, where: Where, remove: bool = False) -> None:
    plan_instructions_block(plan, instructions_path(where), NAME, remove)


def hooks_path(where: Where) -> Path:
    return codex_home(where) / "hooks.json"


def hook_groups(
    run: Launcher, timeout: int, per_prompt: bool = False
) -> dict[str, list[dict[str, Any]]]:
    def group(event: str, matcher: str | None = None) -> dict[str, Any]:
        return command_group(run, NAME, event, timeout, matcher)

    # the capture a SessionEnd hook cut short is done by the next hook, the worker or
    # maintain (the transcript is marked pending before it is read)
    end = command_group(run, NAME, "SessionEnd", min(timeout, SESSION_END_TIMEOUT))
    return {
        "SessionStart": [group("SessionStart", "startup|resume")],
        "Stop": [group("Stop")],
        "SubagentStart": [group("SubagentStart")],
        "SubagentStop": [group("SubagentStop")],
        "SessionEnd": [end],
        **({"UserPromptSubmit": [group("UserPromptSubmit")]} if per_prompt else {}),
    }


def is_ours(group: Any) -> bool:
    return runs_hook_of(NAME, group)


def plan_hooks(
    plan: Plan,
    where: Where,
    run: Launcher,
    timeout: int,
    remove: bool,
    notify: bool = False,
    per_prompt: bool = False,
) -> None:
    """memctl's hook groups in hooks.json (UserPromptSubmit only ``per_prompt``), and
    ``notify`` in config.toml when asked."""
    path = hooks_path(where)
    data = plan.read(path)
    doc = formats.load_json(path, data)
    merged = merge_hooks(doc, {} if remove else hook_groups(run, timeout, per_prompt), is_ours)
    plan.write(path, data if merged == doc else formats.dump_json(merged, data), NAME, "hooks")
    if remove or notify:
        _plan_notify(plan, where, run, remove)


def _plan_notify(plan: Plan, where: Where, run: Launcher, remove: bool) -> None:
    path = config_path(where)
    data = plan.read(path)
    current = formats.get_toml(path, data, (NOTIFY,))
    if current is not None and not runs_memctl(current, "hook", NAME, NOTIFY):
        if not remove:
            plan.note(f"{path}: notify is already set; left alone (memctl's Stop hook captures)")
        return
    new = (
        formats.remove_toml(path, data, (NOTIFY,))
        if remove
        else formats.set_toml(path, data, (NOTIFY,), run.words("hook", NAME, NOTIFY))
    )
    plan.write(path, new, NAME, "notify")


def hooks_installed(where: Where) -> list[str]:
    path = hooks_path(where)
    data = path.read_bytes() if path.is_file() else None
    hooks = formats.load_json(path, data).get("hooks") or {}
    found = [event for event, groups in hooks.items() if any(is_ours(g) for g in groups or [])]
    config = config_path(where)
    notify = formats.get_toml(config, config.read_bytes() if config.is_file() else None, (NOTIFY,))
    if runs_memctl(notify, "hook", NAME, NOTIFY):
        found.append(NOTIFY)
    return found


def trusted(where: Where) -> list[str]:
    """The keys of trusted hooks in the user's config.toml that belong to memctl's file."""
    path = user_codex_home(where) / "config.toml"
    try:
        doc = formats.load_toml(path, path.read_bytes() if path.is_file() else None)
    except formats.MalformedConfig:
        return []
    state = (doc.get("hooks") or {}).get("state") or {}
    target = str(hooks_path(where))
    return [
        key
        for key, value in state.items()
        if isinstance(value, dict) and value.get("trusted_hash") and target in key
    ]


def snake(event: str) -> str:
    """An event as Codex spells it in a trust key: UserPromptSubmit -> user_prompt_submit."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in event).lstrip("_")


def hook_keys(hooks_file: Path, doc: dict[str, Any]) -> dict[str, str]:
    """Each event of memctl's hooks in ``doc`` (hooks.json) -> the key Codex records its
    trust under: ``<hooks.json>:<event in snake case>:<group index>:<hook index>``."""
    keys = {}
    for event, groups in (doc.get("hooks") or {}).items():
        for index, group in enumerate(groups or []):
            if is_ours(group):
                mine = [i for i, h in enumerate(group["hooks"]) if is_ours({"hooks": [h]})]
                keys[event] = f"{hooks_file}:{snake(event)}:{index}:{mine[0] if mine else 0}"
    return keys


def untrusted(where: Where) -> list[str]:
    """The events of memctl's hooks in hooks.json that Codex has not been told to trust:
    it skips them without a word."""
    path = hooks_path(where)
    doc = formats.load_json(path, path.read_bytes() if path.is_file() else None)
    known = set(trusted(where))
    return [event for event, key in hook_keys(path, doc).items() if key not in known]


def changed_hooks(before: bytes | None, after: bytes | None, path: Path) -> list[str]:
    """The events whose memctl hook a write of hooks.json adds or changes (each needs
    trusting again: Codex's trust holds a hash of the hook)."""
    old, new = (formats.load_json(path, data).get("hooks") or {} for data in (before, after))

    def ours(hooks: dict[str, Any], event: str) -> list[Any]:
        return [g for g in hooks.get(event) or [] if is_ours(g)]

    return [event for event in new if ours(new, event) and ours(new, event) != ours(old, event)]


def find_transcript(session_id: str) -> str | None:
    """The rollout file of a Codex thread: ``$CODEX_HOME/sessions/Y/M/D/rollout-...-<id>.jsonl``."""
    if not session_id:
        return None
    matches = sorted(transcript_dirs()[0].glob(f"*/*/*/rollout-*{session_id}.jsonl"))
    return str(matches[-1]) if matches else None


def transcript_dirs() -> list[Path]:
    """``$CODEX_HOME/sessions`` (default ``~/.codex/sessions``)."""
    return [Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"]


def stored_sessions(since: float | None) -> list[StoredSession]:
    """None: its sessions are transcript files (``TRANSCRIPT_GLOBS``)."""
    return []
