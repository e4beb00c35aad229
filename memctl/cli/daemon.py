"""daemon start|stop|status|run: the resident recall process of this home."""

from __future__ import annotations

import time

import typer

from memctl.cli.common import JsonOption, new_typer, settings_for
from memctl.cli.render import print_json
from memctl.errors import ConfigError
from memctl.integrations import resident
from memctl.model import counted

app = new_typer()
group = new_typer()
app.add_typer(
    group,
    name="daemon",
    help="The resident recall process: answers `memctl recall` and the start and prompt"
    " hooks with the model already loaded (recall.resident).",
)
START_WAIT = resident.START_SECONDS  # `daemon start` waits for it to answer (it loads the model)


@group.command("start")
def start(ctx: typer.Context) -> None:
    """Start the resident recall process of this home in the background (the session-start
    hook does it); one already running is kept."""
    settings = settings_for(ctx)
    if not settings.recall_resident:
        raise ConfigError("recall.resident is off: set it on to use the resident process")
    resident.start(settings.home)
    deadline = time.monotonic() + START_WAIT
    while (answer := resident.tell(settings.home, "status")) is None:
        if time.monotonic() > deadline:
            typer.echo(f"started; not answering yet (see {settings.home}/logs/{resident.LOG})")
            return
        time.sleep(0.05)
    typer.echo(f"resident recall process {answer.get('pid')} serves {settings.home}")


@group.command("stop")
def stop(ctx: typer.Context) -> None:
    """Stop the resident recall process of this home (recalls run in their own process
    until the next session start or recall starts it again)."""
    home = settings_for(ctx).home
    if resident.tell(home, "stop") is not None:
        typer.echo(f"stopped the resident recall process of {home}")
    elif (pid := resident.stop_starting(home)) is not None:
        typer.echo(f"stopped the resident recall process of {home} (process {pid}, starting)")
    else:
        typer.echo(f"no resident recall process serves {home}")


@group.command("status")
def status(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Whether a resident recall process serves this home: its process id and requests
    served, or that one is still loading the model. One of another memctl version or copy
    is told to stop."""
    home = settings_for(ctx).home
    answer = resident.tell(home, "status") or {}
    running = "pid" in answer
    loading = None if running else resident.loading(home)
    if as_json:
        # the process's own "running" counts its requests in progress: it would hide the
        # answer's (a walk read "running": 0 from one that ran)
        requests = {"requests_running": answer.pop("running", 0)} if running else {}
        print_json(
            {**answer, "running": running, "home": str(home), "loading": loading, **requests}
        )
    elif loading is not None:
        typer.echo(f"starting: process {loading} is loading the model")
    elif running:
        typer.echo(
            f"running: process {answer['pid']}, {counted(answer['served'], 'request')} served,"
            f" exits after {answer['idle']:g} s idle"
        )
    elif "stale" in answer:
        typer.echo("a resident process of another memctl was running: told to stop")
    else:
        typer.echo("not running")


@group.command("run")
def run(ctx: typer.Context) -> None:
    """Be the resident recall process in the foreground, until idle for
    recall.resident_idle seconds or stopped (for a service manager)."""
    from memctl.cli.resident import serve

    settings = settings_for(ctx)
    if not settings.recall_resident:
        raise ConfigError("recall.resident is off: set it on to use the resident process")
    serve(settings)
