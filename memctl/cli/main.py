"""The ``memctl`` command: global options, command groups, and the one error wrapper."""

from __future__ import annotations

from typing import Annotated

import typer

from memctl import __version__
from memctl.cli import (
    config_cmd,
    exchange,
    graph,
    hook,
    ingest,
    init,
    install,
    mcp,
    memory,
    model_cmd,
    recall,
    status,
    sync,
)
from memctl.cli.common import home_path, new_typer, split_assignments

app = new_typer(
    help="memctl: local long-term memory for AI assistants.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    home: Annotated[
        str | None,
        typer.Option(
            "--home",
            envvar="MEMCTL_HOME",
            show_envvar=True,
            help="Data directory (default: $XDG_DATA_HOME/memctl).",
        ),
    ] = None,
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            "-c",
            metavar="KEY=VALUE",
            help="Set a config key for this run only; repeatable.",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """memctl keeps what your assistants learn, and hands it back when it matters."""
    ctx.obj = {"home": home_path(home), "config": split_assignments(config or [])}


for group in (memory, graph, recall, status, exchange, ingest, init, hook, mcp):
    app.add_typer(group.app)
app.add_typer(install.app, name="install")
app.add_typer(sync.share)
app.add_typer(sync.app, name="sync")
app.add_typer(config_cmd.app, name="config", help="Show and change configuration.")
app.add_typer(model_cmd.app, name="model", help="Install and inspect the embedding model.")
app.command("reembed")(model_cmd.reembed)
