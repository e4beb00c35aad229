"""recall: the memories that best match a query."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from memctl import memories
from memctl.cli.common import JsonOption, ScopeOption, new_typer, open_context, text_argument
from memctl.cli.render import age, console, one_line, print_json, warn
from memctl.retrieve.pipeline import recall as run_recall

app = new_typer()


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="What to look for; '-' for stdin.")] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", "-n", min=1, max=1000, help="How many memories (default recall.limit)."
        ),
    ] = None,
    scope: ScopeOption = None,
    all_scopes: Annotated[bool, typer.Option("--all-scopes", help="Search every scope.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Recall memories by meaning and by words (vectors + BM25, fused by rank)."""
    context = open_context(ctx)
    text = text_argument(query, "query")
    result = run_recall(context, text, limit, memories.recall_scopes(context, scope, all_scopes))
    for warning in result.warnings:
        warn(warning)
    if as_json:
        print_json(
            {
                "query": result.query,
                "results": [r.to_dict() for r in result.results],
                "warnings": result.warnings,
            }
        )
        return
    if not result.results:
        console.print("no memories found")
        return
    table = Table(header_style="bold")
    for column in ("#", "score", "id", "age", "category", "memory"):
        table.add_column(
            column,
            overflow="fold" if column == "memory" else "ellipsis",
            no_wrap=column != "memory",
        )
    for rank, item in enumerate(result.results, start=1):
        table.add_row(
            str(rank),
            f"{item.score:.4f}",
            item.memory.id[:8],
            age(item.memory.created_at),
            str(item.memory.category),
            one_line(item.memory.summary, 200),
        )
    console.print(table)
