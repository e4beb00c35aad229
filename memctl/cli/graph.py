"""link and unlink: shape the graph of memories recall's spreading activation follows;
graph: the knowledge graph of entities and their relations."""

from __future__ import annotations

from typing import Annotated

import typer

from memctl.api import graph as graph_api
from memctl.api import memory as api
from memctl.api.graph import LISTED, RELATIONS, GraphRequest, GraphSummary, GraphTriple
from memctl.api.memory import LINK_TYPES as TYPES
from memctl.api.memory import LinkRequest
from memctl.cli.common import JsonOption, ScopeOption, new_typer, open_context
from memctl.cli.render import console, fit, print_json
from memctl.model import counted

MENTIONS_LISTED = 10  # ids of the memories mentioning an entity a line names (JSON: 50)

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


@app.command()
def graph(
    ctx: typer.Context,
    entity: Annotated[
        str | None,
        typer.Argument(
            help="An entity's name or alias (none: a project's own entities and relations first)."
        ),
    ] = None,
    scope: ScopeOption = None,
    all_scopes: Annotated[bool, typer.Option("--all-scopes", help="Every scope.")] = False,
    page: Annotated[
        int,
        typer.Option("--page", "-p", min=1, help=f"An entity's relations, {RELATIONS} a page."),
    ] = 1,
    as_json: JsonOption = False,
) -> None:
    """An entity's relations in the knowledge graph, each with the memories it came from
    (those of the current project and global ones, unless told otherwise)."""
    context = open_context(ctx)
    request = GraphRequest(entity, scope, all_scopes, page)
    if entity is None:
        found = graph_api.summary(context, request)
        if as_json:
            print_json(found.to_dict())
            return
        counts = found.counts
        elsewhere = "" if counts["entities"] or all_scopes else "; --all-scopes looks everywhere"
        console.print(
            f"{counted(counts['entities'], 'entity', 'entities')}, "
            f"{counted(counts['triples'], 'relation')} "
            f"({counts['superseded']} superseded){elsewhere}"
        )
        _summary(found)
        return
    shown = graph_api.entity_graph(context, request)
    if as_json:
        print_json(shown.to_dict())
        return
    named = shown.entity
    others = [a for a in named.aliases if a != named.name]
    console.print(
        fit(f"{named.name} ({named.kind})" + (f" — also {', '.join(others)}" if others else "")),
        soft_wrap=True,
    )
    if not shown.relations and not shown.history:
        console.print("  no relations yet")
    for triple in shown.relations:
        console.print(fit(f"  {triple.text}  ({_sources(triple)})"), soft_wrap=True)
    if shown.history:
        console.print("history:")
    for triple in shown.history:
        by = f", superseded by #{triple.superseded_by}" if triple.superseded_by else ""
        console.print(fit(f"  {triple.text}  ({_sources(triple)}{by})"), soft_wrap=True)
    if shown.mentioned:
        listed = [i[:8] for i in shown.mentioned[:MENTIONS_LISTED]]
        ids = ", ".join(listed) + (", …" if len(shown.mentioned) > len(listed) else "")
        many = counted(len(shown.mentioned), "memory", "memories")
        many += " or more" if shown.mentioned_more else ""
        console.print(fit(f"mentioned in {many}: {ids}"), soft_wrap=True)
    if shown.more:
        console.print(f"more relations: --page {page + 1} lists the next {RELATIONS}")


def _summary(found: GraphSummary) -> None:
    """The entities to start from (a project's own, then those most projects name) and the
    relations of the project's own."""
    shared = set(found.shared)
    for item in found.entities:
        if item.name not in shared:
            console.print(fit(f"  {item.name} ({item.kind})"), soft_wrap=True)
    if shared:
        named = ", ".join(f"{e.name} ({e.kind})" for e in found.entities if e.name in shared)
        console.print(fit(f"named by most projects: {named}"), soft_wrap=True)
    if found.relations:
        console.print("relations:")
    for triple in found.relations:
        console.print(fit(f"  {triple.text}  ({_sources(triple)})"), soft_wrap=True)
    if len(found.relations) == LISTED:
        console.print("more: memctl graph NAME lists every relation of one")


def _sources(triple: GraphTriple) -> str:
    parts = [
        f"{s.memory_id[:8]}"
        + (f" {s.message}" if s.message else "")
        + ("" if s.state == "active" else f" ({s.state})")
        for s in triple.sources
    ]
    return f"#{triple.id} from " + ", ".join(parts)
