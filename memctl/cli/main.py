"""The ``memctl`` command: global options and the command groups, loaded as needed.

Importing every command module (and the core each one pulls in) costs more
than a quick command's whole run, so ``build_app(command)`` builds a Typer app
holding only the group of the command being run; ``--help``, completion, an
unknown command and ``memctl`` alone get every group (``app``, built on
first use, is that full app).
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer

from memctl import __version__
from memctl.api.config import split_assignments
from memctl.cli.common import home_path, new_typer

# command -> the module of memctl.cli that defines it (tests check it is complete).
COMMANDS: dict[str, str] = {
    **dict.fromkeys(
        ("remember", "get", "list", "update", "forget", "delete", "purge", "redact"), "memory"
    ),
    **dict.fromkeys(("link", "unlink", "graph"), "graph"),
    **dict.fromkeys(("recall", "profile"), "recall"),
    **dict.fromkeys(("status", "projects", "events"), "status"),
    **dict.fromkeys(("export", "import"), "exchange"),
    **dict.fromkeys(("ingest", "runs", "undo"), "ingest"),
    **dict.fromkeys(("maintain", "restore"), "maintain"),
    "config": "config_cmd",
    "model": "model_cmd",
    "reembed": "model_cmd",
    **dict.fromkeys(("sync", "promote", "unpromote"), "sync"),
    **dict.fromkeys(("init", "uninstall"), "init"),
    "install": "install",
    "hook": "hook",
    "mcp": "mcp",
    "sessions": "sessions",
    "context": "context_cmd",
    "doctor": "doctor",
    "daemon": "daemon",
    "ui": "ui",
}
# In the order `memctl -h` lists them: what a person runs daily first, what hooks and
# assistants run (hook, mcp) after.
GROUPS = (
    *("memory", "recall", "sessions", "status", "exchange", "graph", "context_cmd", "ui"),
    *("ingest", "init", "doctor", "daemon", "hook", "mcp"),
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memctl {__version__}")
        raise typer.Exit()


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


def _add(app: typer.Typer, module_name: str) -> None:
    module: Any = importlib.import_module(f"memctl.cli.{module_name}")
    if module_name == "config_cmd":
        app.add_typer(module.app, name="config", help="Show and change configuration.")
    elif module_name == "sync":
        app.add_typer(module.share)
        app.add_typer(module.app, name="sync")
    elif module_name == "maintain":
        # in a group of their own, as every other command is: a command added to ``app``
        # itself is listed before every group, and `memctl -h` opened with maintain
        app.add_typer(_commands(module.maintain, module.restore))
    elif module_name == "install":
        app.add_typer(module.app, name="install")
    elif module_name == "model_cmd":
        app.add_typer(module.app, name="model", help="Install and inspect the embedding model.")
        app.add_typer(_commands(module.reembed))
    else:
        app.add_typer(module.app)


def _commands(*functions: Any) -> typer.Typer:
    """A group of no name holding ``functions`` as commands (their names)."""
    group = new_typer()
    for function in functions:
        group.command(function.__name__)(function)
    return group


def build_app(command: str | None = None) -> typer.Typer:
    """The Typer app with the group of ``command`` only, or every group (None or unknown)."""
    app = new_typer(
        help="memctl: local long-term memory for AI assistants.",
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(root)
    module = COMMANDS.get(command or "")
    for name in (
        (module,) if module else (*GROUPS, "install", "sync", "maintain", "config_cmd", "model_cmd")
    ):
        _add(app, name)
    return app


def __getattr__(name: str) -> typer.Typer:
    """``app``: every command (for the generated docs and the tests), built on first use."""
    if name == "app":
        built = build_app()
        globals()["app"] = built
        return built
    raise AttributeError(name)
