"""install: capture hooks for each assistant; their status; uninstall."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memctl.cli.common import JsonOption, new_typer, settings_for
from memctl.cli.init import (
    ProjectOption,
    RestoreForceOption,
    home_and_launcher,
    show,
    show_removal,
    show_status,
)
from memctl.cli.render import console
from memctl.integrations import setup

app = new_typer(
    help="Install capture hooks: session-start context and session-end capture.",
)

DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print a unified diff of every change; write nothing.")
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Install even if the tool was not found.")
]

SUMMARY = {
    "claude-code": "SessionStart prints the context block; Stop, SessionEnd and PreCompact "
    "capture the transcript.",
    "codex": "hooks.json: SessionStart prints the context block, Stop captures the rollout; "
    "--notify adds the `notify` program for versions without hooks.",
    "opencode": "a plugin that captures each session on session.idle and session.compacted.",
    "cursor": "hooks.json: sessionStart prints the context block, stop captures the transcript.",
}


def _install(
    ctx: typer.Context,
    client: str,
    project: bool,
    dry_run: bool,
    force: bool,
    notify: bool,
    as_json: bool,
) -> None:
    home, run = home_and_launcher(ctx)
    timeout = settings_for(ctx).hooks_timeout
    request = setup.InstallRequest(client, project, force, dry_run, notify, timeout)
    show(setup.install(request, setup.where(project, Path.cwd()), run, home), dry_run, as_json)


def _command(client: str) -> None:
    def command(
        ctx: typer.Context,
        project: ProjectOption = False,
        dry_run: DryRunOption = False,
        force: ForceOption = False,
        as_json: JsonOption = False,
    ) -> None:
        _install(ctx, client, project, dry_run, force, False, as_json)

    command.__doc__ = f"Install {client}'s hooks: {SUMMARY[client]}"
    app.command(client)(command)


for _client in ("claude-code", "opencode", "cursor"):
    _command(_client)


@app.command("codex")
def codex(
    ctx: typer.Context,
    project: ProjectOption = False,
    dry_run: DryRunOption = False,
    force: ForceOption = False,
    notify: Annotated[
        bool, typer.Option("--notify", help="Also set `notify` (Codex versions without hooks).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Install Codex's hooks (hooks.json: SessionStart, Stop). Codex runs them only after you
    trust them in /hooks."""
    _install(ctx, "codex", project, dry_run, force, notify, as_json)


@app.command("status")
def status(ctx: typer.Context, project: ProjectOption = False, as_json: JsonOption = False) -> None:
    """What is installed where, whether Codex's hooks are trusted, when each hook last ran."""
    home, _run = home_and_launcher(ctx)
    show_status(setup.status(setup.where(project, Path.cwd()), home), as_json)


@app.command("uninstall")
def uninstall(
    ctx: typer.Context,
    client: Annotated[
        str, typer.Argument(metavar="CLIENT", help="claude-code, codex, opencode or cursor.")
    ],
    project: ProjectOption = False,
    force: RestoreForceOption = False,
    as_json: JsonOption = False,
) -> None:
    """Remove a client's hooks: put back the files `memctl install` changed, byte for byte."""
    home, run = home_and_launcher(ctx)
    place = setup.where(project, Path.cwd())
    removal = setup.uninstall("install", (client,), place, run, home, force)
    show_removal(removal, as_json)
    if not as_json and not removal.undone.restored and not removal.undone.removed:
        console.print(f"(no hooks of {client} installed by memctl)")
