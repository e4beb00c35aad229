"""OpenCode: ``opencode.json`` (``mcp.memctl``, a local server), ``AGENTS.md`` for
instructions, and a plugin file that captures sessions.

The plugin (``plugin/memctl.js``) listens for ``session.idle`` and
``session.compacted``, reads the session's messages through OpenCode's own client,
and pipes them, as ``opencode export`` would print them, to ``memctl hook opencode
EVENT`` (which captures them; a session seen before adds only its new messages).
"""

from __future__ import annotations

import json
from pathlib import Path

from memctl.integrations import formats
from memctl.integrations.base import Found, Launcher, Where, existing, find_binary
from memctl.integrations.files import Plan
from memctl.integrations.instructions import plan_instructions_block

NAME = "opencode"
BINARY = "opencode"
EVENTS = ("session.idle", "session.compacted")
PLUGIN_MARK = "// memctl plugin"

PLUGIN = """\
// memctl plugin: captures OpenCode sessions into memctl (written by `memctl install
// opencode`; `memctl install uninstall opencode` removes it).
const MEMCTL = __ARGV__;

export const MemctlPlugin = async ({ client, directory }) => ({
  event: async ({ event }) => {
    if (event.type !== "session.idle" && event.type !== "session.compacted") return;
    const id = event.properties?.sessionID;
    if (!id) return;
    try {
      const info = await client.session.get({ path: { id } });
      const messages = await client.session.messages({ path: { id } });
      const payload = JSON.stringify({
        cwd: directory,
        session_id: id,
        export: { info: info.data ?? info, messages: messages.data ?? messages },
      });
      const proc = Bun.spawn([...MEMCTL, "hook", "opencode", event.type], {
        stdin: new Blob([payload]), stdout: "ignore", stderr: "ignore",
      });
      await proc.exited;
    } catch (_) {
      // memctl never fails a session: the hook logs its own errors
    }
  },
});
"""


def config_dir(where: Where) -> Path:
    return where.xdg_config() / "opencode"


def detect(where: Where) -> Found:
    return Found(NAME, find_binary(BINARY, where.env), existing(config_dir(where)))


def config_path(where: Where) -> Path:
    return (where.project or config_dir(where)) / "opencode.json"


def plan_mcp(plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None:
    path = config_path(where)
    data = plan.read(path)
    entry = {"type": "local", "command": run.words("mcp"), "enabled": True}
    keys = ("mcp", "memctl")
    if remove:
        new = formats.remove_json(path, data, keys)
    else:
        new = formats.set_json(path, data, keys, entry)
        if data is None and new is not None:  # a new file names its schema, as OpenCode does
            doc = {"$schema": "https://opencode.ai/config.json", **json.loads(new)}
            new = formats.dump_json(doc, None)
    plan.write(path, new, NAME, "mcp server")


def instructions_path(where: Where) -> Path:
    return (where.project or config_dir(where)) / "AGENTS.md"


def plan_instructions(plan: Plan, where: Where, remove: bool = False) -> None:
    plan_instructions_block(plan, instructions_path(where), NAME, remove)


def plugin_path(where: Where) -> Path:
    base = where.project / ".opencode" if where.project else config_dir(where)
    return base / "plugin" / "memctl.js"


def plan_hooks(plan: Plan, where: Where, run: Launcher, timeout: int, remove: bool) -> None:
    path = plugin_path(where)
    data = plan.read(path)
    if data is not None and not data.startswith(PLUGIN_MARK.encode()):
        plan.note(f"{path}: not memctl's plugin; left alone")
        return
    text = PLUGIN.replace("__ARGV__", json.dumps(run.words()))
    plan.write(path, None if remove else text.encode(), NAME, "plugin")


def hooks_installed(where: Where) -> list[str]:
    path = plugin_path(where)
    if path.is_file() and path.read_bytes().startswith(PLUGIN_MARK.encode()):
        return list(EVENTS)
    return []


def hook_files(where: Where) -> list[Path]:
    return [plugin_path(where)]
