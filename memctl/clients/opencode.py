"""OpenCode: ``opencode.json`` (``mcp.memctl``, a local server), ``AGENTS.md`` for
instructions, and a plugin file that adds the context block and captures sessions.

The plugin (``plugin/memctl.js``) is a plain module importing only node's built-in
``fs``. When OpenCode loads it (and on a ``session.created`` more than
``CONTEXT_FRESH_MS`` later) it starts ``memctl hook opencode session.created`` for the
project's context block, and adds the block to the system prompt of each model call
(``experimental.chat.system.transform``); a first call that comes before memctl has
answered waits at most ``CONTEXT_WAIT_MS``, later calls not at all. A session that was
not created while this OpenCode runs is resumed: it gets a block asked for with its id
(without its own digest and facts), once, waited for as long at most. On ``session.idle``
and ``session.compacted`` it reads the session through OpenCode's own client and hands
it, as ``opencode export`` prints it, to ``memctl hook opencode EVENT`` through a file
that it unlinks at once (the process keeps it open): a new file of mode 0600 in
``$TMPDIR``, so no other local user reads the session and a link planted at its name is
never followed. It does not wait for memctl: OpenCode neither waits for nor outlives a
capture.

OpenCode 1.18 installs ``@opencode-ai/plugin`` from npm into each of its config
directories once any plugin is configured, whatever the plugin imports (memctl's imports
no package), and waits for it before the first model call: offline, about 70 s on every
start. It skips the install when the directory has a ``node_modules`` directory and a
``package-lock.json`` whose root lists every dependency of ``package.json`` and that
package (its ``Npm.install``: ``checkNodeModules``, then ``checkDirty``). In a config
directory with none of the three, ``memctl install opencode`` writes that lock and
``node_modules/.memctl`` (removed by uninstall); ``offline_stall`` says when OpenCode
would still go to npm.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.clients import formats
from memctl.clients.base import Found, Launcher, Where, existing, find_binary
from memctl.clients.claude_code import prompt_output as prompt_output  # no PROMPT_EVENTS
from memctl.clients.files import Plan
from memctl.clients.instructions import plan_instructions_block
from memctl.config.safe_load import json_value
from memctl.config.settings import ASKING_ENV, SESSION_ARGUMENT
from memctl.errors import InputError
from memctl.store import foreign

if TYPE_CHECKING:  # the hooks import the clients; a backfill alone needs ingest
    from memctl.ingest.backfill import StoredSession

NAME = "opencode"
BINARY = "opencode"
START = "session.created"
EVENTS = (START, "session.idle", "session.compacted")
START_EVENTS = (START,)
CAPTURE_EVENTS = ("session.idle", "session.compacted")  # the payload holds the session
PROMPT_EVENTS: tuple[str, ...] = ()
TRANSCRIPT_FORMAT = "opencode"
# It keeps sessions in a store of its own, not as transcript files: ``stored_sessions``.
TRANSCRIPT_GLOBS: tuple[str, ...] = ()
DATABASE = "opencode.db"  # OpenCode 1.18 (see memctl.store.foreign)
STORAGE = (
    "storage"  # older versions: session/<project>/<id>.json, message/<session>/, part/<message>/
)
PLUGIN_MARK = "// memctl plugin"
# memctl's tools as OpenCode names an MCP server's: the server's name in opencode.json,
# "_", the tool's (1.18.33: each with [^a-zA-Z0-9_-] made "_"). The plugin names the
# session calling them: a search's "last time" is the session before it, and a memory
# stored records its session (forgotten with it).
SEARCH_TOOL = "memctl_memory_search"
STORE_TOOL = "memctl_memory_store"
SESSION_TOOLS = (SEARCH_TOOL, STORE_TOOL)
# The longest a session's first model call waits for its context: the hook takes 1.5-2 s
# on a loaded 2-core machine (tests/e2e), and OpenCode offline no longer gives it 70 s.
CONTEXT_WAIT_MS = 3000
CONTEXT_FRESH_MS = 30_000  # a block asked for this recently serves a new session as it is
# How the system prompts of OpenCode's own small tasks begin (its title agent, 1.18):
# they get no context block.
TASK_PROMPTS = ("You are a title generator",)

PLUGIN = """\
// memctl plugin: adds memctl's context block to OpenCode sessions and captures them
// (written by `memctl install opencode`; `memctl install uninstall opencode` removes it).
// A plain module importing only node:fs (built in), so it needs nothing installed.
const MEMCTL = __ARGV__;
const WAIT_MS = __WAIT__;
const FRESH_MS = __FRESH__;
const TASKS = __TASKS__;
const SESSION_ENV = __SESSION_ENV__;
const SESSION_TOOLS = __SESSION_TOOLS__;
const SESSION_ARGUMENT = __SESSION_ARGUMENT__;

export const MemctlPlugin = async ({ client, directory }) => {
  const fs = await import("node:fs");
  const context = (session) => {
    try {
      const proc = Bun.spawn([...MEMCTL, "hook", "opencode", "session.created"], {
        stdin: new Blob([JSON.stringify({ cwd: directory, session_id: session })]),
        stdout: "pipe",
        stderr: "ignore",
      });
      proc.unref();
      return new Response(proc.stdout).text().catch(() => "");
    } catch (_) {
      return Promise.resolve("");
    }
  };
  let block = context();
  let asked = Date.now();
  // the sessions started while this OpenCode runs; any other is resumed (`--session`,
  // `--continue`, picked from the list): it gets a block of its own, without its own
  // digest and facts (it holds them), asked for once
  const started = new Set();
  const resumed = new Map();
  const capture = async (type, id) => {
    const info = await client.session.get({ path: { id } });
    const messages = await client.session.messages({ path: { id } });
    const payload = JSON.stringify({
      cwd: directory,
      session_id: id,
      export: { info: info.data ?? info, messages: messages.data ?? messages },
    });
    const dir = process.env.TMPDIR || "/tmp";
    const path = `${dir}/memctl-opencode-${process.pid}-${Date.now()}.json`;
    // the session, for this user only: 0600, and new ("wx": never through a planted link);
    // written and handed over with no await between, so an `opencode run` that exits as
    // the session idles does not end it halfway (the file written, no hook started)
    const fd = fs.openSync(path, "wx", 0o600);
    try { fs.writeSync(fd, payload); } finally { fs.closeSync(fd); }
    const proc = Bun.spawn([...MEMCTL, "hook", "opencode", type], {
      stdin: Bun.file(path), stdout: "ignore", stderr: "ignore",
    });
    proc.unref();
    fs.unlinkSync(path);
  };
  return {
    event: async ({ event }) => {
      try {
        if (event.type === "session.created") {
          started.add(event.properties?.sessionID ?? event.properties?.info?.id);
        }
        if (event.type === "session.created" && Date.now() - asked > FRESH_MS) {
          block = context();  // a later session in a long-running OpenCode: ask again
          asked = Date.now();
        }
        if (event.type !== "session.idle" && event.type !== "session.compacted") return;
        const id = event.properties?.sessionID;
        if (id) await capture(event.type, id);
      } catch (_) {
        // memctl never fails a session: the hook logs its own errors
      }
    },
    // the session a command of the shell tool runs in: a `memctl recall` there asking
    // about "last time" means the session before this one
    "shell.env": async (input, output) => {
      if (input?.sessionID && output?.env) output.env[SESSION_ENV] = input.sessionID;
    },
    // the session a call of memctl's memory_search or memory_store comes from (OpenCode
    // tells an MCP server nothing of it, and one server answers all its sessions): named
    // in the call's arguments, which memctl's server takes out before it reads them
    "tool.execute.before": async (input, output) => {
      if (SESSION_TOOLS.includes(input?.tool) && input.sessionID && output?.args) {
        output.args[SESSION_ARGUMENT] = input.sessionID;
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input?.sessionID || !Array.isArray(output?.system)) return;  // summaries
      const first = String(output.system[0] ?? "");
      if (TASKS.some((task) => first.startsWith(task))) return;  // titles
      const id = input.sessionID;
      if (!started.has(id) && !resumed.has(id)) resumed.set(id, context(id));
      let timer;
      const late = new Promise((done) => { timer = setTimeout(() => done(""), WAIT_MS); });
      const text = await Promise.race([resumed.get(id) ?? block, late]);
      clearTimeout(timer);
      if (text) output.system.push(text);
    },
  };
};
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
    text = text.replace("__WAIT__", str(CONTEXT_WAIT_MS))
    text = text.replace("__FRESH__", str(CONTEXT_FRESH_MS))
    text = text.replace("__TASKS__", json.dumps(list(TASK_PROMPTS)))
    text = text.replace("__SESSION_ENV__", json.dumps(ASKING_ENV))
    text = text.replace("__SESSION_TOOLS__", json.dumps(list(SESSION_TOOLS)))
    text = text.replace("__SESSION_ARGUMENT__", json.dumps(SESSION_ARGUMENT))
    plan.write(path, None if remove else text.encode(), NAME, "plugin")
    _plan_offline(plan, path.parent.parent, remove)


# What OpenCode installs into a config directory with a plugin (its Npm.install).
PLUGIN_PACKAGE = "@opencode-ai/plugin"
DEPENDENCY_KINDS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
LOCK = "package-lock.json"
MODULES_MARK = "node_modules/.memctl"
OFFLINE_LOCK = {
    "lockfileVersion": 3,
    "requires": True,
    "packages": {"": {"dependencies": {PLUGIN_PACKAGE: "*"}}},
}
MODULES_TEXT = (
    "Written by `memctl install opencode`, with ../package-lock.json, so that OpenCode does\n"
    "not try to install @opencode-ai/plugin from npm at every start (memctl's plugin needs\n"
    "nothing). A plugin of yours that imports the package at run time: `npm install\n"
    "@opencode-ai/plugin` here. `memctl install uninstall opencode` removes both.\n"
)


def _dependencies(doc: dict[str, Any]) -> set[str]:
    return {name for kind in DEPENDENCY_KINDS for name in (doc.get(kind) or {})}


def offline_stall(base: Path) -> bool:
    """Whether OpenCode, started with a plugin, would install from npm into config
    directory ``base`` (and offline wait for the registry): its own check, mirrored."""
    if not base.is_dir() or not os.access(base, os.W_OK):
        return False  # OpenCode installs nothing where it cannot write
    if not (base / "node_modules").exists():
        return True
    wanted = _dependencies(_json_file(base / "package.json")) | {PLUGIN_PACKAGE}
    lock = _json_file(base / LOCK).get("packages")
    root = lock.get("") if isinstance(lock, dict) else None
    return bool(wanted - _dependencies(root if isinstance(root, dict) else {}))


def _has_packages(base: Path) -> bool:
    return any((base / name).exists() for name in ("node_modules", "package.json", LOCK))


def _plan_offline(plan: Plan, base: Path, remove: bool) -> None:
    """The lock and ``node_modules`` marker that keep OpenCode from npm (docstring above),
    in a config directory that has no package of its own; taken out again on remove."""
    lock = (json.dumps(OFFLINE_LOCK, indent=2) + "\n").encode()
    ours = {base / LOCK: lock, base / MODULES_MARK: MODULES_TEXT.encode()}
    if remove:
        for path, data in ours.items():
            if plan.read(path) == data:
                plan.write(path, None, NAME, "offline")
        return
    if any(plan.read(path) == data for path, data in ours.items()):
        return  # written before
    if _has_packages(base):
        return  # the user's packages: `memctl doctor` says whether OpenCode goes to npm
    for path, data in ours.items():
        plan.write(path, data, NAME, "offline")


# What a plugin that hands sessions over in a private file says (older ones wrote it 0644).
PRIVATE_HANDOVER = 'openSync(path, "wx", 0o600)'
# What each older memctl plugin lacks, found by what the current one says.
OLDER_PLUGINS = (
    (PRIVATE_HANDOVER, "hands each session over in a file other users can read"),
    (
        "const SESSION_ARGUMENT",
        "does not name its session to memory_search nor leave a resumed session's own "
        "digest out of its block",
    ),
    ("const SESSION_TOOLS", "does not name its session to memory_store"),
)


def problems(where: Where) -> list[str]:
    """What keeps memctl's plugin from working well: what an older plugin lacks
    (``OLDER_PLUGINS``: a handover other users could read, ...), OpenCode going to npm at
    each start."""
    path = plugin_path(where)
    base = path.parent.parent
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    found = [
        f"opencode: {path} (an older memctl's) {lacks}: run `memctl install opencode`"
        for says, lacks in OLDER_PLUGINS
        if text.startswith(PLUGIN_MARK) and says not in text
    ]
    if not path.is_file() or not offline_stall(base):
        return found
    online = f"run `npm install {PLUGIN_PACKAGE}` there once online"
    fix = online if _has_packages(base) else "run `memctl install opencode`"
    return [
        *found,
        f"opencode: at each start OpenCode installs {PLUGIN_PACKAGE} from npm into {base} "
        f"and, offline, waits about 70 s for it: {fix}",
    ]


def hooks_installed(where: Where) -> list[str]:
    path = plugin_path(where)
    if not path.is_file() or not path.read_bytes().startswith(PLUGIN_MARK.encode()):
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    return [event for event in EVENTS if f'"{event}"' in text]  # older plugins: no context


def start_output(context: str) -> str:
    return context  # the plugin adds the text to the system prompt as it is


def find_transcript(session_id: str) -> str | None:
    return None  # the plugin sends the session itself


def transcript_dirs() -> list[Path]:
    """``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``)."""
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return [Path(data) / "opencode"]


def stored_sessions(since: float | None) -> list[StoredSession]:
    """Every session of its database (OpenCode 1.18) and of its older JSON storage,
    changed at or after ``since``; a database memctl cannot read is one session whose
    reading fails with the reason (so the backfill counts and names it)."""
    found: list[StoredSession] = []
    for folder in transcript_dirs():
        database = folder / DATABASE
        if database.is_file():
            found += _database_sessions(database, since)
        found += _storage_sessions(folder / STORAGE, since)
    return found


def _database_sessions(path: Path, since: float | None) -> list[StoredSession]:
    from memctl.ingest.backfill import StoredSession

    try:
        sessions = foreign.opencode_sessions(path, since)
    except InputError as exc:
        reason = str(exc)

        def unreadable() -> dict[str, Any]:
            raise InputError(reason)

        return [StoredSession("-", 0.0, path, unreadable)]
    return [
        StoredSession(s.id, s.updated, path, partial(foreign.opencode_export, path, s.id))
        for s in sessions
    ]


def _storage_sessions(storage: Path, since: float | None) -> list[StoredSession]:
    """The sessions of the JSON storage of OpenCode before its database: one file of the
    session's info, one a message, one a part, the export assembled from them."""
    from memctl.ingest.backfill import StoredSession

    found = []
    for info_file in sorted((storage / "session").glob("*/ses_*.json")):
        info = _json_file(info_file)
        updated = _time(info, "updated") / 1000 or info_file.stat().st_mtime
        if since is None or updated >= since:
            session = str(info.get("id") or info_file.stem)
            found.append(StoredSession(session, updated, storage, partial(_export, storage, info)))
    return found


def _export(storage: Path, info: dict[str, Any]) -> dict[str, Any]:
    session = str(info.get("id") or "")
    messages = [_json_file(p) for p in (storage / "message" / session).glob("msg_*.json")]
    messages.sort(key=lambda m: (_time(m, "created"), str(m.get("id"))))
    return {
        "info": info,
        "messages": [
            {"info": m, "parts": _parts(storage / "part" / str(m.get("id") or "-"))}
            for m in messages
        ],
    }


def _parts(folder: Path) -> list[dict[str, Any]]:
    return [_json_file(p) for p in sorted(folder.glob("prt_*.json"))]  # ids sort by time


def _time(value: dict[str, Any], which: str) -> float:
    """``time.<which>`` of a storage object (epoch ms); 0 when it has none."""
    times = value.get("time")
    stamp = times.get(which) if isinstance(times, dict) else None
    return float(stamp) if isinstance(stamp, int | float) and not isinstance(stamp, bool) else 0.0


def _json_file(path: Path) -> dict[str, Any]:
    """A storage file's object; {} for one that is not (cut short, not JSON)."""
    try:
        value = json_value(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeError):
        return {}
    return value if isinstance(value, dict) else {}
