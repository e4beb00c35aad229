"""``memctl init`` and ``memctl install``: plan the changes to each client's files,
show them as a diff, back up and write them, report what is set up, and undo.

The client modules (``memctl.clients``: one per assistant, in its registry) know
their files and formats; this module picks the clients, collects their changes
into one plan, and applies or reverts it through ``files``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memctl.clients import (
    REGISTRY,
    Client,
    claude_code,
    codex,
    copilot,
    files,
    formats,
    gemini,
    opencode,
)
from memctl.clients.base import Found, Launcher, Where, portable
from memctl.config.scope import project_root
from memctl.errors import UsageError
from memctl.integrations import cron, shell
from memctl.integrations.backfill import newest_transcript
from memctl.integrations.hooks_state import Timing, last_fired, mark_installed, missed, timing
from memctl.retrieve.identity import create_identity_files, remove_project_template

CLIENTS: dict[str, Client] = REGISTRY
# A transcript untouched this long has had its session's end (its capture hook's turn):
# changed after the client's last capture, it was not captured.
QUIET_SECONDS = 600
# A client may write its turn's closing records after its capture hook returned: Codex's
# task_complete came 0.3 s after memctl stored the session (s24-walk, codex-cli as pinned
# by scripts/install-clients), and a busy machine delays it more. A transcript changed
# this soon after the last capture is that capture's.
CLOSING_SECONDS = 30


def where(project: bool, cwd: Path, env: dict[str, str] | None = None) -> Where:
    environ = dict(os.environ if env is None else env)
    home = Path(environ.get("HOME") or Path.home())
    return Where(home, project_root(cwd.resolve()) if project else None, environ)


def check_names(names: tuple[str, ...], known: tuple[str, ...] = tuple(CLIENTS)) -> tuple[str, ...]:
    for name in names:
        if name not in known:
            raise UsageError(f"unknown tool {name!r}; known: {', '.join(known)}")
    return names


def detect(place: Where) -> list[Found]:
    return [module.detect(place) for module in CLIENTS.values()]


@dataclass(frozen=True)
class InitRequest:
    tools: tuple[str, ...] = ()  # none: every client found
    project: bool = False  # the current repository instead of the user's config
    force: bool = False  # set up clients that were not found too
    instructions_only: bool = False
    dry_run: bool = False
    llm: str = "auto"  # the configured llm: init offers an assistant's CLI when none is set


# Assistants whose CLI memctl can run headless to distil (llm/headless.py): init offers them.
HEADLESS_CLIENTS = ("claude-code", "codex")


@dataclass
class Outcome:
    """What a set-up command changed (or, dry, would change)."""

    plan: files.Plan
    clients: list[str]
    backup: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def diff(self) -> str:
        return files.plan_diff(self.plan)


def _chosen(place: Where, names: tuple[str, ...], force: bool, notes: list[str]) -> list[str]:
    found = {f.client: f for f in detect(place)}
    if not names:
        return [name for name in CLIENTS if found[name].present or force]
    chosen = []
    for name in check_names(names):
        if found[name].present or force:
            chosen.append(name)
        else:
            notes.append(
                f"{name}: not found (no `{CLIENTS[name].BINARY}` on PATH and no "
                "config directory); nothing changed (--force sets it up anyway)"
            )
    return chosen


def _guarded(plan: files.Plan, step: Any, *args: Any) -> None:
    """Run one planning step; a malformed file is reported and left untouched."""
    try:
        step(plan, *args)
    except formats.MalformedConfig as exc:
        plan.note(str(exc))


def init(request: InitRequest, place: Where, run: Launcher, home: Path) -> Outcome:
    """Register the MCP server and write the instructions for each chosen client."""
    run = _shared(place, run)
    notes: list[str] = []
    chosen = _chosen(place, request.tools, request.force, notes)
    plan = files.Plan()
    for name in chosen:
        module = CLIENTS[name]
        if not request.instructions_only:
            _guarded(plan, module.plan_mcp, place, run)
        _guarded(plan, module.plan_instructions, place)
    outcome = _finish(plan, chosen, notes + plan.notes, request.dry_run, home, "init")
    if not request.dry_run:  # the identity files every session starts with (retrieve.identity)
        created = create_identity_files(
            home, place.project or Path.cwd(), place.project is not None
        )
        outcome.notes += [f"created {p}: what every session should know" for p in created.made]
        outcome.notes += created.refused
    offered = [n for n in chosen if n in HEADLESS_CLIENTS]
    if offered and request.llm in ("auto", "none"):  # offered, never switched on silently
        outcome.notes.append(
            f"to distil with {offered[0]}'s own model: `memctl config set llm {offered[0]}` "
            "(the worker runs it headless once a session ends: it spends your model quota)"
        )
    return outcome


def _shared(place: Where, run: Launcher) -> Launcher:
    """The command line the files of ``place`` name: a project's are shared with the team
    (``clients.base.portable``)."""
    return run if place.project is None else portable(run, place.env)


def _finish(
    plan: files.Plan, chosen: list[str], notes: list[str], dry: bool, home: Path, command: str
) -> Outcome:
    outcome = Outcome(plan, chosen, notes=notes)
    if not dry:
        outcome.backup = files.apply(plan, home, command)
    return outcome


@dataclass(frozen=True)
class InstallRequest:
    client: str
    project: bool = False
    force: bool = False
    dry_run: bool = False
    notify: bool = False  # Codex: also the `notify` program (versions without hooks)
    timeout: int = 10  # seconds a client gives each hook
    per_prompt: bool = False  # Claude Code, Codex, Gemini CLI, Copilot: recall for each prompt


def install(request: InstallRequest, place: Where, run: Launcher, home: Path) -> Outcome:
    """Write the client's capture hooks (or plugin)."""
    run = _shared(place, run)
    notes: list[str] = []
    chosen = _chosen(place, (request.client,), request.force, notes)
    plan = files.Plan()
    for name in chosen:
        module = CLIENTS[name]
        if name == codex.NAME:
            args = (request.timeout, False, request.notify, request.per_prompt)
            _guarded(plan, codex.plan_hooks, place, run, *args)
            notes += _trust_notes(plan, codex.hooks_path(place))
        elif name == claude_code.NAME:
            per_prompt = request.per_prompt
            _guarded(plan, claude_code.plan_hooks, place, run, request.timeout, False, per_prompt)
        elif name in (gemini.NAME, copilot.NAME):
            per_prompt = request.per_prompt
            _guarded(plan, module.plan_hooks, place, run, request.timeout, False, per_prompt)
        else:
            _guarded(plan, module.plan_hooks, place, run, request.timeout, False)
    outcome = _finish(plan, chosen, notes + plan.notes, request.dry_run, home, "install")
    if outcome.backup is not None and place.project is None:  # for the first capture hook
        for name in chosen:
            mark_installed(home, name)
    return outcome


def _trust_notes(plan: files.Plan, hooks_file: Path) -> list[str]:
    """Codex's trust note, naming the hooks this plan adds or changes (none: no note)."""
    for path, before, after in plan.files():
        if path == hooks_file and (events := codex.changed_hooks(before, after, path)):
            return [codex.trust_note(events)]
    return []


def install_cron(place: Where, run: Launcher, home: Path, dry_run: bool) -> Outcome:
    """Write the systemd user service and timer that run ``memctl maintain`` hourly."""
    plan = files.Plan()
    cron.plan_units(plan, place, run)
    notes = [f"then: {cron.ENABLE}"] if plan.files() else []
    return _finish(plan, [cron.NAME], notes, dry_run, home, "install")


def install_shell(place: Where, run: Launcher, home: Path, dry_run: bool) -> Outcome:
    """memctl on PATH (~/.local/bin), its man page and shell completions (``shell``)."""
    plan = files.Plan()
    shell.plan_shell(plan, place, run)
    outcome = _finish(plan, [shell.NAME], plan.notes + shell.notes(place), dry_run, home, "install")
    if not dry_run:
        shell.make_executable(place)
    return outcome


@dataclass
class Removal:
    undone: files.UndoReport
    cleaned: list[str]  # files changed since memctl wrote them: only memctl's parts taken out
    notes: list[str]


def uninstall(
    command: str, names: tuple[str, ...], place: Where, run: Launcher, home: Path, force: bool
) -> Removal:
    """Put back every file ``command`` (init or install) changed for these clients, byte for
    byte; from a file changed since memctl wrote it, take out only memctl's parts (a config
    file: memctl's keys set back as they were, the other changes kept), unless ``force``,
    which puts back the old bytes (memctl's keys) anyway."""
    clients = set(check_names(names, (*CLIENTS, cron.NAME, shell.NAME))) if names else None
    run = _shared(place, run)
    undone = files.undo(home, (command,), clients, force)
    notes = [
        f"{path}: changed since memctl wrote it; left alone (--force puts back what was there)"
        for path in undone.left
        if Path(path).parent == cron.units_dir(place)
    ]
    plan = files.Plan()
    if command == "install" and (clients is None or shell.NAME in clients):
        shell.plan_shell(plan, place, run, remove=True)
    for name in sorted((clients or set(CLIENTS)) - {cron.NAME, shell.NAME}):
        module = CLIENTS[name]
        if command == "install":
            _guarded(plan, module.plan_hooks, place, run, 0, True)
        else:
            _guarded(plan, module.plan_mcp, place, run, True)
            _guarded(plan, module.plan_instructions, place, True)
    plan = plan.only({Path(p) for p in undone.left})
    files.apply(plan, home, "uninstall")
    if command == "init" and place.project is not None and clients is None:
        template = remove_project_template(place.project)  # init wrote it: it goes with it
        undone.removed += [str(template)] if template else []
    cleaned = undone.merged + [str(path) for path, _, _ in plan.files()]
    return Removal(undone, cleaned, notes + plan.notes)


def combine(first: Removal, second: Removal) -> Removal:
    """Two removals reported as one."""
    undone = files.UndoReport(
        first.undone.restored + second.undone.restored,
        first.undone.removed + second.undone.removed,
        first.undone.left + second.undone.left,
        first.undone.merged + second.undone.merged,
    )
    return Removal(undone, first.cleaned + second.cleaned, first.notes + second.notes)


@dataclass(frozen=True)
class ClientStatus:
    client: str
    found: Found
    mcp: bool
    instructions: bool
    hooks: list[str]
    trusted: list[str] | None  # Codex only: the trusted memctl hooks
    fired: dict[str, str]  # event -> when memctl last ran its hook
    problems: list[str]
    timings: dict[str, Timing] = field(default_factory=dict)  # event -> its durations
    captured: str | None = None  # when memctl last stored a session of this client's
    untrusted: list[str] | None = None  # Codex only: memctl's hooks it skips until trusted

    def to_dict(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "binary": self.found.binary,
            "config_dir": str(self.found.config_dir) if self.found.config_dir else None,
            "mcp": self.mcp,
            "instructions": self.instructions,
            "hooks": self.hooks,
            "trusted": self.trusted,
            "untrusted": self.untrusted,
            "fired": self.fired,
            "problems": self.problems,
            "captured": self.captured,
            "timings": {
                event: {"last_ms": t.last_ms, "p95_ms": t.p95_ms, "runs": t.runs, "slow": t.slow}
                for event, t in self.timings.items()
            },
        }


def _has_mcp(module: Client, place: Where) -> bool:
    plan = files.Plan()
    module.plan_mcp(plan, place, Launcher(("memctl",)), True)
    return bool(plan.changes)


def _has_instructions(module: Client, place: Where) -> bool:
    plan = files.Plan()
    module.plan_instructions(plan, place, True)
    return any(c.what == "instructions" for c in plan.changes)


def status(place: Where, home: Path, captured: dict[str, str] | None = None) -> list[ClientStatus]:
    """Per client: found where, MCP registered, instructions written, hooks, last fired,
    last captured (``captured``: when memctl last stored a session of each client's)."""
    result = []
    for name, module in CLIENTS.items():
        problems: list[str] = []
        checks: dict[str, Any] = {}
        for label, check in (
            ("mcp", _has_mcp),
            ("instructions", _has_instructions),
            ("hooks", lambda m, p: m.hooks_installed(p)),
        ):
            try:
                checks[label] = check(module, place)
            except formats.MalformedConfig as exc:
                checks[label] = [] if label == "hooks" else False
                problems.append(str(exc))
        trusted = codex.trusted(place) if name == codex.NAME else None
        untrusted = _untrusted(place) if name == codex.NAME else None
        events = module.EVENTS + module.PROMPT_EVENTS + (("notify",) if name == codex.NAME else ())
        fired = {
            event: stamp.isoformat(timespec="seconds")
            for event in events
            if (stamp := last_fired(home, name, event)) is not None
        }
        timings = {e: t for e in events if (t := timing(home, name, e)) is not None}
        problems += [f"{name} {e}: {why}" for e in events if (why := missed(home, name, e))]
        problems += _missing_hooks(name, module.EVENTS, checks["hooks"])
        problems += opencode.problems(place) if name == opencode.NAME else []
        problems += gemini.problems(place) if name == gemini.NAME else []
        last = (captured or {}).get(name)
        problems += _uncaptured(name, last) if captured is not None else []
        result.append(
            ClientStatus(
                name,
                module.detect(place),
                checks["mcp"],
                checks["instructions"],
                checks["hooks"],
                trusted,
                fired,
                problems,
                timings,
                last,
                untrusted,
            )
        )
    return result


def _missing_hooks(name: str, events: tuple[str, ...], installed: list[str]) -> list[str]:
    """An install some of whose hooks are missing (made by an older memctl, which had fewer:
    Codex's SessionEnd came later) names them and the fix; no install says nothing."""
    missing = [event for event in events if event not in installed]
    if not installed or not missing:
        return []
    return [f"{name}: no memctl hook for {', '.join(missing)}: `memctl install {name}` adds it"]


def _untrusted(place: Where) -> list[str]:
    try:
        return codex.untrusted(place)
    except formats.MalformedConfig:
        return []  # named once already, by the hooks check


def _uncaptured(name: str, last: str | None) -> list[str]:
    """A problem when the client's newest transcript, quiet since, changed after memctl
    last stored one of its sessions."""
    newest = newest_transcript(name)
    now = datetime.now(UTC)
    if newest is None or newest > now.timestamp() - QUIET_SECONDS:
        return []
    if last is not None and datetime.fromisoformat(last).timestamp() + CLOSING_SECONDS >= newest:
        return []
    changed = age(datetime.fromtimestamp(newest, UTC).isoformat(), now)
    since = f"last capture {age(last, now)}" if last else "none captured yet"
    return [
        f"{name}: a transcript changed {changed} is not captured ({since}): check its hooks, "
        "or store every past session with `memctl ingest --backfill`"
    ]


def age(iso: str, now: datetime | None = None) -> str:
    """'3m ago' for an ISO time."""
    moment = datetime.fromisoformat(iso)
    seconds = int(((now or datetime.now(UTC)) - moment).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"
