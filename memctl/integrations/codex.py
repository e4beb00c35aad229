"""Codex CLI: ``$CODEX_HOME/config.toml`` (``[mcp_servers.memctl]``, and ``notify`` for
versions without hooks), ``AGENTS.md`` for instructions, ``hooks.json`` for hooks.

Codex skips the hooks in ``hooks.json`` until the user trusts them in ``/hooks``; it
records each trusted hook under ``[hooks.state."<key>"]`` with a ``trusted_hash`` in
the user's config.toml, which ``install status`` reads. ``notify`` runs a command
with the event's JSON as its last argument after each turn, and needs no trust.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memctl.integrations import formats
from memctl.integrations.base import Found, Launcher, Where, existing, find_binary
from memctl.integrations.claude_code import merge_hooks
from memctl.integrations.files import Plan
from memctl.integrations.instructions import plan_instructions_block

NAME = "codex"
BINARY = "codex"
TOML_COMMENT = "# {}"
NOTIFY = "notify"  # its own marked block: a top-level key must come before every table
EVENTS = ("SessionStart", "Stop")
TRUST_NOTE = (
    "Codex runs hooks only after you trust them: start `codex`, type /hooks, and trust the "
    "memctl hooks (`memctl install status` shows whether they are trusted)"
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


def mcp_block(run: Launcher) -> str:
    words = run.words("mcp")
    return (
        "[mcp_servers.memctl]\n"
        f"command = {formats.toml_string(words[0])}\n"
        f"args = {formats.toml_array(words[1:])}\n"
    )


def _toml_edit(plan: Plan, path: Path, body: str | None, top: bool, what: str) -> None:
    """Set (or with ``body`` None remove) memctl's marked block, checking the result parses."""
    data = plan.read(path)
    if body is None:
        new = formats.remove_block(data, TOML_COMMENT)
    else:
        new = formats.set_block(data, body, TOML_COMMENT, top=top)
        formats.load_toml(path, new)  # a duplicate table would make the file unreadable
    plan.write(path, new, NAME, what)


def plan_mcp(plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None:
    path = config_path(where)
    data = plan.read(path)
    doc = formats.load_toml(path, data)
    if (
        not remove
        and "memctl" in (doc.get("mcp_servers") or {})
        and not formats.has_block(data, TOML_COMMENT)
    ):
        plan.note(f"{path}: [mcp_servers.memctl] was set by hand; left alone")
        return
    _toml_edit(plan, path, None if remove else mcp_block(run), False, "mcp server")


def instructions_path(where: Where) -> Path:
    return (where.project / "AGENTS.md") if where.project else codex_home(where) / "AGENTS.md"


def plan_instructions(plan: Plan, where: Where, remove: bool = False) -> None:
    plan_instructions_block(plan, instructions_path(where), NAME, remove)


def hooks_path(where: Where) -> Path:
    return codex_home(where) / "hooks.json"


def hook_groups(run: Launcher, timeout: int) -> dict[str, list[dict[str, Any]]]:
    def group(event: str, matcher: str | None = None) -> dict[str, Any]:
        hook = {"type": "command", "command": run.shell("hook", NAME, event), "timeout": timeout}
        return {"matcher": matcher, "hooks": [hook]} if matcher else {"hooks": [hook]}

    return {"SessionStart": [group("SessionStart", "startup|resume")], "Stop": [group("Stop")]}


def is_ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and " hook codex " in f" {h.get('command', '')} " for h in hooks
    )


def plan_hooks(
    plan: Plan, where: Where, run: Launcher, timeout: int, remove: bool, notify: bool = False
) -> None:
    path = hooks_path(where)
    data = plan.read(path)
    doc = formats.load_json(path, data)
    merged = merge_hooks(doc, {} if remove else hook_groups(run, timeout), is_ours)
    plan.write(path, data if merged == doc else formats.dump_json(merged, data), NAME, "hooks")
    if remove or notify:
        _plan_notify(plan, where, run, remove)


def _plan_notify(plan: Plan, where: Where, run: Launcher, remove: bool) -> None:
    path = config_path(where)
    data = plan.read(path)
    if remove:
        new = formats.remove_block(data, TOML_COMMENT, NOTIFY)
        plan.write(path, new, NAME, "notify")
        return
    if "notify" in formats.load_toml(path, data) and not formats.has_block(
        data, TOML_COMMENT, NOTIFY
    ):
        plan.note(f"{path}: notify is already set; left alone (memctl's Stop hook captures)")
        return
    body = f"notify = {formats.toml_array(run.words('hook', NAME, 'notify'))}"
    new = formats.set_block(data, body, TOML_COMMENT, top=True, name=NOTIFY)
    formats.load_toml(path, new)
    plan.write(path, new, NAME, "notify")


def hooks_installed(where: Where) -> list[str]:
    path = hooks_path(where)
    data = path.read_bytes() if path.is_file() else None
    hooks = formats.load_json(path, data).get("hooks") or {}
    found = [event for event, groups in hooks.items() if any(is_ours(g) for g in groups or [])]
    config = config_path(where)
    if config.is_file() and formats.has_block(config.read_bytes(), TOML_COMMENT, NOTIFY):
        found.append("notify")
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


def hook_files(where: Where) -> list[Path]:
    return [hooks_path(where), config_path(where)]
