"""link and unlink: shape the graph recall's spreading activation follows."""

from __future__ import annotations

from typing import Annotated

import typer

from memctl.api import memory as api
from memctl.api.memory import LINK_TYPES as TYPES
from memctl.api.memory import LinkRequest
from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import console, print_json

app = new_typer()

LINK_TYPES = ", ".join(t.value for t in TYPES)


@app.command()
def link(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(help="The memory the relation starts at (id or prefix).")
    ],
    target: Annotated[str, typer.Argument(help="The memory it points to.")],
    type: Annotated[str, typer.Option("--type", "-t", help=LINK_TYPES + ".")] = "related",
    weight: Annotated[float, typer.Option("--weight", "-w", help="Above 0, at most 1.")] = 1.0,
    as_json: JsonOption = False,
) -> None:
    """Relate two memories (recall follows relations both ways)."""
    relation = api.link(open_context(ctx), LinkRequest(source, target, type, weight))
    if as_json:
        print_json(relation.to_dict())
    else:
        console.print(
            f"linked {relation.src_id[:8]} --{relation.type}({relation.weight:g})--> "
            f"{relation.dst_id[:8]}"
        )


@app.command()
def unlink(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="One memory (id or prefix).")],
    target: Annotated[str, typer.Argument(help="The other.")],
    type: Annotated[
        str | None, typer.Option("--type", "-t", help="Only this type (default: every type).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Remove the relations between two memories, in either direction."""
    removed = api.unlink(open_context(ctx), source, target, type)
    if as_json:
        print_json([r.to_dict() for r in removed])
    else:
        for relation in removed:
            console.print(
                f"unlinked {relation.src_id[:8]} --{relation.type}--> {relation.dst_id[:8]}"
            )
