"""What every command shares: option types, the context it opens, reading stdin."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand

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


class Command(TyperCommand):
    """A command whose arguments read as the man page and the docs spell them: ``REF`` in
    its help and errors, ``memctl sessions forget [OPTIONS] REF`` in its usage line (Typer
    writes a required argument ``{ref}``, an optional one ``[ref]``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument) and param.metavar is None:
                param.metavar = (param.name or "").upper()

    def collect_usage_pieces(self, ctx: Any) -> list[str]:  # click's Context (typer vendors it)
        pieces = [self.options_metavar] if self.options_metavar else []
        return pieces + [
            usage_word(p) for p in self.get_params(ctx) if isinstance(p, TyperArgument)
        ]


def usage_word(argument: TyperArgument) -> str:
    """An argument as a usage line names it, as click does: ``ID``, ``[ID]``, ``[ID]...``;
    a metavar written bracketed (``[FILE]``) as it is."""
    word = argument.metavar or (argument.name or "").upper()
    if word.startswith("["):
        return word
    word = word if argument.required else f"[{word}]"
    return f"{word}..." if argument.nargs != 1 else word


class MemctlTyper(typer.Typer):
    """A Typer app whose commands are ``Command``s."""

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Any:
        return super().command(name, cls=cls or Command, **kwargs)


def new_typer(**kwargs: Any) -> typer.Typer:
    """A Typer app that leaves error display to memctl's one error wrapper."""
    return MemctlTyper(
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
