"""init and uninstall: register memctl's MCP server and instructions with the assistants."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from memctl.cli.common import JsonOption, new_typer, open_context, settings_for
from memctl.cli.render import console, fit, middle, print_json, say
from memctl.clients.base import Launcher, launcher
from memctl.integrations import setup
from memctl.integrations.hooks_state import SLOW_MS

app = new_typer()
# What `uninstall` says when no assistant file, launcher or completion of memctl's is left
NOTHING_INSTALLED = "no file of memctl's left to put back (nothing installed)"

ToolOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tool",
        help="Only this assistant (claude-code, codex, opencode, cursor, gemini, copilot); "
        "repeatable.",
    ),
]
RestoreForceOption = Annotated[
    bool, typer.Option("--force", help="Restore files even if they changed since.")
]
ProjectOption = Annotated[
    bool, typer.Option("--project", help="Set up the current repository instead of your user.")
]
ForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Set up tools that were not found too; with --undo, restore files changed since.",
    ),
]


def home_and_launcher(ctx: typer.Context) -> tuple[Path, Launcher]:
    """The data directory, and the command line the clients will run (with --home when
    the data directory was chosen, so the hooks and the server use the same store)."""
    import os

    settings = settings_for(ctx)
    chosen = (ctx.find_root().obj or {}).get("home") is not None or bool(
        os.environ.get("MEMCTL_HOME")
    )
    return settings.home, launcher(settings.home if chosen else None)


def show(outcome: setup.Outcome, dry_run: bool, as_json: bool) -> None:
    changed = [str(path) for path, _, _ in outcome.plan.files()]
    if as_json:
        print_json(
            {
                "clients": outcome.clients,
                "changed": changed,
                "backup": str(outcome.backup) if outcome.backup else None,
                "notes": outcome.notes,
                "dry_run": dry_run,
            }
        )
        return
    if dry_run:
        sys.stdout.write(outcome.diff)
    elif changed:
        for path in changed:
            say(f"wrote {path}")
        say(f"backups in {outcome.backup}")
    for note in outcome.notes:
        say(note)
    if not changed:
        say("nothing to change" if outcome.clients else "no assistant found")


@app.command()
def init(
    ctx: typer.Context,
    tool: ToolOption = None,
    project: ProjectOption = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print a unified diff of every change; write nothing.")
    ] = False,
    force: ForceOption = False,
    instructions_only: Annotated[
        bool, typer.Option("--instructions-only", help="Only the instructions, no MCP server.")
    ] = False,
    list_tools: Annotated[
        bool, typer.Option("--list-tools", help="Show the assistants found and what is set up.")
    ] = False,
    undo: Annotated[
        bool, typer.Option("--undo", help="Put back every file init changed, byte for byte.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Set up the assistants found here: register memctl's MCP server and write
    instructions (CLAUDE.md, AGENTS.md, Cursor rules) and Claude Code's /recall,
    /remember and /forget. Every changed file is backed up first."""
    home, run = home_and_launcher(ctx)
    place = setup.where(project, Path.cwd())
    names = tuple(tool or ())
    if list_tools:
        from memctl.api.sessions import last_captured

        show_status(setup.status(place, home, last_captured(open_context(ctx))), as_json)
        return
    if undo:
        if dry_run:  # no preview of an undo: refused rather than done for real
            from memctl.errors import UsageError

            raise UsageError(
                "--undo takes no --dry-run (nothing was changed): `memctl init --list-tools` "
                "shows what is set up"
            )
        show_removal(setup.uninstall("init", names, place, run, home, force), as_json)
        return
    llm = settings_for(ctx).llm
    request = setup.InitRequest(names, project, force, instructions_only, dry_run, llm)
    show(setup.init(request, place, run, home), dry_run, as_json)


# The found column of `install status`: a longer path is cut in the middle (--json has it whole);
# at least 12, which leaves the table's seven columns, one space apart, room in 80 (issue 37);
# a wider terminal gives it what the others leave (``found_width``).
FOUND_WIDTH = 12
TABLE_EDGES = 2  # the table's box (SIMPLE_HEAD) draws a blank edge left and right


def tilde(path: str) -> str:
    """A path under the home directory as ``~/...``."""
    home = str(Path.home())
    return "~" + path[len(home) :] if path == home or path.startswith(home + "/") else path


def found_width(rows: list[list[str]], width: int) -> int:
    """How wide the found column (the second) may be: what the other columns, each as wide
    as its widest line, one space apart, leave of ``width``; FOUND_WIDTH at least (a
    terminal wider than 80 columns showed "/work…claude" beside empty room)."""
    others = [
        max(len(line) for row in rows for line in row[n].splitlines() or [""])
        for n in range(len(rows[0]))
        if n != 1
    ]
    return max(FOUND_WIDTH, width - sum(others) - (len(rows[0]) - 1) - TABLE_EDGES)


def _status_row(item: setup.ClientStatus) -> list[str]:
    """A client's cells, its found path whole (``~`` for home) or ''."""
    where = item.found.binary or (str(item.found.config_dir) if item.found.config_dir else "")
    hooks = "\n".join(item.hooks) or "-"
    if item.untrusted:
        hooks += "\nNOT trusted:\n" + "\n".join(item.untrusted) + "\nsee /hooks"
    elif item.trusted is not None and item.hooks:
        hooks += "\ntrusted"
    # each hook's last run on its own line, beside its name in the hooks column
    fired = "\n".join(setup.age(item.fired[e]) if e in item.fired else "never" for e in item.hooks)
    return [
        item.client,
        tilde(where) if where else "",
        "yes" if item.mcp else "no",
        "yes" if item.instructions else "no",
        hooks,
        fired or "never",
        setup.age(item.captured) if item.captured else "never",
    ]


def show_status(found: list[setup.ClientStatus], as_json: bool) -> None:
    if as_json:
        print_json([s.to_dict() for s in found])
        return
    from rich import box
    from rich.table import Table

    columns = ("tool", "found", "mcp", "instructions", "hooks", "last run", "captured")
    table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, padding=0)
    for column in columns:
        table.add_column(column, no_wrap=True)  # one item a line: nothing is broken
    rows = [_status_row(item) for item in found]
    room = found_width([list(columns), *rows], console.width)
    for row in rows:
        table.add_row(row[0], middle(row[1], room) if row[1] else "no", *row[2:])
    console.print(table)
    for item in found:
        for event, took in item.timings.items():
            flag = f", slow: over {SLOW_MS} ms" if took.slow else ""
            runs = f"{took.runs} run" + ("" if took.runs == 1 else "s")
            console.print(
                fit(
                    f"{item.client} {event}: last {took.last_ms} ms, p95 {took.p95_ms} ms "
                    f"({runs}{flag})"
                ),
                highlight=False,
                soft_wrap=True,
            )
        for problem in item.problems:
            console.print(problem)


def show_removal(removal: setup.Removal, as_json: bool, nothing: str = "nothing to undo") -> None:
    """What a removal put back, or ``nothing`` when it found nothing of memctl's."""
    undone = removal.undone
    cleaned = removal.cleaned
    if as_json:
        print_json(
            {
                "restored": undone.restored,
                "removed": undone.removed,
                "changed_since": undone.left,
                "cleaned": cleaned,
                "notes": removal.notes,
            }
        )
        return
    for path in undone.restored:
        say(f"restored {path}")
    for path in undone.removed:
        say(f"removed {path}")
    for path in cleaned:
        if path in undone.merged:  # a config file's patch: memctl's keys set back as they were
            say(f"put back what memctl changed in {path}, keeping what changed there since")
        else:
            say(f"took memctl's part out of {path} (changed since memctl wrote it)")
    for note in removal.notes:
        say(note)
    if not (undone.restored or undone.removed or cleaned):
        say(nothing)


@app.command()
def uninstall(
    ctx: typer.Context,
    tool: ToolOption = None,
    project: ProjectOption = False,
    force: RestoreForceOption = False,
    purge: Annotated[
        bool,
        typer.Option(
            "--purge",
            help="Also stop the resident process and remove the data directory and the model "
            "cache (asks first).",
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="With --purge: do not ask.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Undo `memctl install` and `memctl init`: put back every file they changed. --purge
    also stops the resident process and removes the data directory and the model cache."""
    home, run = home_and_launcher(ctx)
    if purge:
        _confirm_purge(home, tool, yes)
    place = setup.where(project, Path.cwd())
    names = tuple(tool or ())
    hooks = setup.uninstall("install", names, place, run, home, force)
    rest = setup.uninstall("init", names, place, run, home, force)
    # after an uninstall, "nothing to undo" opened a purge's lines as if it undid nothing
    show_removal(setup.combine(hooks, rest), as_json and not purge, NOTHING_INSTALLED)
    if purge:
        from memctl.integrations.purge import purge as remove_all

        stopped, removed = remove_all(home)
        if as_json:
            print_json({"resident_stopped": stopped, "removed_dirs": removed})
            return
        if stopped:
            console.print("stopped the resident recall process")
        for path in removed:
            say(f"removed {path}")


def _confirm_purge(home: Path, tool: list[str] | None, yes: bool) -> None:
    from memctl.errors import UsageError
    from memctl.integrations.purge import targets

    if tool:
        raise UsageError("--purge removes everything: it takes no --tool")
    where = ", ".join(str(path) for path in targets(home)) or "nothing stored"
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError("--purge removes every memory: confirm on a terminal, or add --yes")
    typer.confirm(f"Remove every memory and file memctl wrote ({where})?", abort=True)
