"""config show | path | init | set."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from memctl.api.config import (
    DEFAULT_SOURCE,
    KEYS,
    check_project_key,
    shown_value,
    write_config_value,
    write_template,
)
from memctl.cli.common import JsonOption, new_typer, settings_for
from memctl.cli.render import console, print_json, warn
from memctl.errors import UsageError

app = new_typer()


@app.command()
def show(
    ctx: typer.Context,
    every: Annotated[
        bool, typer.Option("--all", help="Every tuning key too, not only the ones set.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """The settings (and tuning keys someone set), their values and where each came from;
    --json lists every key."""
    settings = settings_for(ctx)
    if settings.refused_note:
        warn(settings.refused_note)
    if as_json:
        print_json(
            {
                key.name: {
                    "value": shown_value(settings.values[key.name]),
                    "source": settings.sources[key.name],
                }
                for key in KEYS
            }
        )
        return
    shown = [
        key
        for key in KEYS
        if every or not key.tuning or settings.sources[key.name] != DEFAULT_SOURCE
    ]
    table = Table(header_style="bold")
    for column in ("key", "value", "source"):
        table.add_column(column)
    for key in shown:
        value = shown_value(settings.values[key.name])
        table.add_row(key.name, str(value), settings.sources[key.name])
    console.print(table)
    if not every:
        left = len(KEYS) - len(shown)
        console.print(f"{left} tuning keys at their defaults: memctl config show --all")


@app.command()
def path(
    ctx: typer.Context,
    project: Annotated[bool, typer.Option("--project", help="The project file.")] = False,
) -> None:
    """Print the path of the config file (home, or with --project the project's)."""
    settings = settings_for(ctx)
    # echo, not the console: a script reads the path whole (`$EDITOR "$(memctl config path)"`),
    # never wrapped at the terminal's width
    typer.echo(settings.project_config if project else settings.home_config)


@app.command()
def init(
    ctx: typer.Context,
    project: Annotated[bool, typer.Option("--project", help="The project file.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite.")] = False,
) -> None:
    """Write a commented config file listing every key at its default."""
    settings = settings_for(ctx)
    target = settings.project_config if project else settings.home_config
    if target.exists() and not force:
        raise UsageError(f"{target} exists; use --force to overwrite it")
    write_template(target, project)
    console.print(f"wrote {target}")


@app.command("set")
def set_(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="A dotted key, e.g. recall.limit.")],
    value: Annotated[str, typer.Argument(help="Its new value.")],
    project: Annotated[bool, typer.Option("--project", help="The project file.")] = False,
) -> None:
    """Set one key in the home (or project) config file."""
    settings = settings_for(ctx)
    target = settings.project_config if project else settings.home_config
    if project:
        check_project_key(key)
    parsed = write_config_value(target, key, value)
    console.print(f"{key} = {shown_value(parsed)!r} in {target}")
