"""What every command shares: option types, the context it opens, reading stdin."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from memctl.api.config import Context, Settings, settings_from_flags
from memctl.cli.fastlane import tags_given as tags_given  # shared with the fast lane
from memctl.cli.fastlane import text_argument as text_argument
from memctl.cli.render import warn

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (stable field names).")]
TagsOption = Annotated[
    list[str] | None, typer.Option("--tag", "-t", help="A tag; repeat or separate with commas.")
]
# ``--tags``, the spelling some commands had: still taken, not shown (scripts do not break).
TagsAlias = Annotated[list[str] | None, typer.Option("--tags", hidden=True)]
ScopeOption = Annotated[
    str | None,
    typer.Option(
        "--scope",
        "-s",
        help="Scope: 'project' (the current one, default), 'global', a project's path or "
        "name, or a scope.",
    ),
]


def new_typer(**kwargs: Any) -> typer.Typer:
    """A Typer app that leaves error display to memctl's one error wrapper."""
    return typer.Typer(
        add_completion=False,
        pretty_exceptions_enable=False,
        no_args_is_help=True,
        rich_markup_mode=None,
        **kwargs,
    )


def settings_for(ctx: typer.Context) -> Settings:
    """The settings the global options (--home, --config) select."""
    options = ctx.find_root().obj or {}
    return settings_from_flags(options.get("home"), options.get("config") or {})


def open_context(ctx: typer.Context) -> Context:
    """A Context for the global options' settings; closed when the command ends. Keys the
    project's file may not set are named on stderr, once."""
    settings = settings_for(ctx)
    if settings.refused_note:
        warn(settings.refused_note)
    context = Context(settings)
    ctx.call_on_close(context.close)
    return context


def home_path(value: str | None) -> Path | None:
    return Path(value).expanduser() if value else None
