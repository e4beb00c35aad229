"""hook: the command the assistants run (the fast lane in memctl.cli.entry runs it
without Typer; this is the same command for --help and the generated docs)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memctl.cli.common import new_typer
from memctl.integrations import hooks

app = new_typer()


@app.command(context_settings={"allow_extra_args": True})
def hook(
    ctx: typer.Context,
    client: Annotated[
        str,
        typer.Argument(
            metavar="CLIENT", help="claude-code, codex, opencode, cursor, gemini or copilot."
        ),
    ],
    event: Annotated[
        str, typer.Argument(metavar="EVENT", help="The client's event (SessionStart, Stop, ...).")
    ],
) -> None:
    """Run by an assistant's hooks: reads its JSON on stdin (Codex notify: the last
    argument); at session start prints the context block, at the end captures the
    transcript. Never fails the session: errors go to $MEMCTL_HOME/logs/hooks.log."""
    options = ctx.find_root().obj or {}
    config = [f"{k}={v}" for k, v in (options.get("config") or {}).items()]
    home = options.get("home")
    code = hooks.main(
        {"home": str(home) if home else None, "config": config}, [client, event, *ctx.args]
    )
    sys.exit(code)
