"""install: capture hooks for each assistant; their status; uninstall."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memctl.cli.common import JsonOption, new_typer, open_context, settings_for
from memctl.cli.init import (
    ProjectOption,
    RestoreForceOption,
    home_and_launcher,
    show,
    show_removal,
    show_status,
)
from memctl.cli.render import console
from memctl.clients.base import launcher
from memctl.errors import NotFoundError
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
    "codex": "hooks.json: SessionStart prints the context block, Stop captures the rollout; "
    "--notify adds the `notify` program for versions without hooks.",
    "opencode": "a plugin that adds the context block to each session's system prompt and "
    "captures each session on session.idle and session.compacted.",
    "cursor": "hooks.json: sessionStart prints the context block; stop, sessionEnd and "
    "subagentStop capture the transcript.",
}


PerPromptOption = Annotated[
    bool,
    typer.Option(
        "--per-prompt",
        help="Also UserPromptSubmit (Gemini CLI: BeforeAgent; Copilot CLI: "
        "userPromptSubmitted): add the memories relevant to "
        "each prompt (context.prompt_budget tokens, none twice a session). Install without "
        "it to stop.",
    ),
]


def _install(
    ctx: typer.Context,
    client: str,
    project: bool,
    dry_run: bool,
    force: bool,
    notify: bool,
    as_json: bool,
    per_prompt: bool = False,
) -> None:
    home, run = home_and_launcher(ctx)
    timeout = settings_for(ctx).hooks_timeout
    request = setup.InstallRequest(client, project, force, dry_run, notify, timeout, per_prompt)
    outcome = setup.install(request, setup.where(project, Path.cwd()), run, home)
    if not outcome.clients:  # the client is not on this machine: say so, fail, write nothing
        raise NotFoundError(" ".join(outcome.notes))
    show(outcome, dry_run, as_json)


def _command(client: str, name: str) -> None:
    def command(
        ctx: typer.Context,
        project: ProjectOption = False,
        dry_run: DryRunOption = False,
        force: ForceOption = False,
        as_json: JsonOption = False,
    ) -> None:
        _install(ctx, client, project, dry_run, force, False, as_json)

    command.__doc__ = f"Install {name}'s hooks: {SUMMARY[client]}"
    app.command(client)(command)


for _client, _name in (("opencode", "OpenCode"), ("cursor", "Cursor")):
    _command(_client, _name)


def _per_prompt_command(client: str, doc: str) -> None:
    """``install CLIENT`` for a client whose hooks can add memories to each prompt."""

    def command(
        ctx: typer.Context,
        project: ProjectOption = False,
        dry_run: DryRunOption = False,
        force: ForceOption = False,
        per_prompt: PerPromptOption = False,
        as_json: JsonOption = False,
    ) -> None:
        _install(ctx, client, project, dry_run, force, False, as_json, per_prompt)

    command.__doc__ = doc
    app.command(client)(command)


_per_prompt_command(
    "claude-code",
    """Install Claude Code's hooks (settings.json): SessionStart prints the context block;
    Stop, SubagentStop, SessionEnd and PreCompact capture the transcript.""",
)
_per_prompt_command(
    "gemini",
    """Install Gemini CLI's hooks (settings.json): SessionStart prints the context block;
    AfterAgent, PreCompress and SessionEnd capture the session file (--per-prompt: also
    BeforeAgent).""",
)
_per_prompt_command(
    "copilot",
    """Install GitHub Copilot CLI's hooks (hooks/memctl.json): sessionStart prints the context
    block, sessionEnd captures the session (--per-prompt: also userPromptSubmitted).""",
)


@app.command("codex")
def codex(
    ctx: typer.Context,
    project: ProjectOption = False,
    dry_run: DryRunOption = False,
    force: ForceOption = False,
    notify: Annotated[
        bool, typer.Option("--notify", help="Also set `notify` (Codex versions without hooks).")
    ] = False,
    per_prompt: PerPromptOption = False,
    as_json: JsonOption = False,
) -> None:
    """Install Codex's hooks (hooks.json: SessionStart prints the context block; Stop,
    SubagentStart, SubagentStop and SessionEnd capture). Codex runs them only after you trust
    them in /hooks."""
    _install(ctx, "codex", project, dry_run, force, notify, as_json, per_prompt)


@app.command("cron")
def cron(
    ctx: typer.Context,
    systemd: Annotated[
        bool,
        typer.Option(
            "--systemd", help="Also write the systemd user service and timer (backed up)."
        ),
    ] = False,
    dry_run: DryRunOption = False,
    as_json: JsonOption = False,
) -> None:
    """Run `memctl maintain` hourly: print a crontab line and a systemd user timer; --systemd
    writes the timer's two files (`memctl install uninstall cron` takes them out)."""
    if not systemd:
        console.print(schedule_text(ctx), highlight=False, soft_wrap=True, end="")
        return
    home = settings_for(ctx).home
    outcome = setup.install_cron(setup.where(False, Path.cwd()), launcher(home), home, dry_run)
    show(outcome, dry_run, as_json)


def schedule_text(ctx: typer.Context) -> str:
    """The crontab line and systemd units (also `memctl maintain --print-crontab`). They
    always name the data directory: cron and systemd start with another environment."""
    from memctl.integrations.cron import schedule_text as text

    home = settings_for(ctx).home
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)  # the line appends to a log there
    return text(launcher(home), logs / "maintain.log", setup.where(False, Path.cwd()))


@app.command("completions")
def completions(
    ctx: typer.Context, dry_run: DryRunOption = False, as_json: JsonOption = False
) -> None:
    """Put memctl on PATH (~/.local/bin/memctl, which runs this memctl), its man page where
    `man` finds it and bash, zsh and fish completions where each shell looks (backed up;
    `memctl install uninstall completions` takes them out)."""
    home, run = home_and_launcher(ctx)
    outcome = setup.install_shell(setup.where(False, Path.cwd()), run, home, dry_run)
    show(outcome, dry_run, as_json)


@app.command("status")
def status(ctx: typer.Context, project: ProjectOption = False, as_json: JsonOption = False) -> None:
    """What is installed where, whether Codex's hooks are trusted, when each hook last ran
    and when each assistant's sessions were last captured."""
    from memctl.api.sessions import last_captured

    home, _run = home_and_launcher(ctx)
    captured = last_captured(open_context(ctx))
    show_status(setup.status(setup.where(project, Path.cwd()), home, captured), as_json)


@app.command("uninstall")
def uninstall(
    ctx: typer.Context,
    client: Annotated[
        str,
        typer.Argument(
            metavar="CLIENT",
            help="claude-code, codex, opencode, cursor, gemini, copilot, cron or completions.",
        ),
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
        console.print(f"(nothing of {client} installed by memctl)")
