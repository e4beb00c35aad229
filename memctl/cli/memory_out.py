"""list's and get's output, without Typer: the commands (``memctl.cli.memory``) and the
fast lane (``memctl.cli.fastlane``) parse their options and hand the request here. JSON
loads no rich; a table loads rich's console and table only."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from memctl.api import memory as api
from memctl.cli.fastlane import Parser, Refused, settings
from memctl.cli.render import fit, memory_table, print_json, shown_of

if TYPE_CHECKING:
    from rich.table import Table

    from memctl.api.config import Context
    from memctl.api.memory import Filters
    from memctl.model import Memory, Relation

LIST_FORMATS = ("table", "json", "ids")


def show_list(context: Context, filters: Filters, limit: int | None, sort: str, fmt: str) -> None:
    """The memories ``filters`` select, in ``fmt`` (one of ``LIST_FORMATS``), and a hint
    when ``--since`` left out memories stored since then."""
    found = api.list_memories(context, api.ListRequest(filters, limit, sort))
    if fmt == "json":
        print_json([m.to_dict() for m in found])
        return
    from memctl.cli.render import console

    if fmt == "ids":
        for memory in found:
            console.print(memory.id)
    elif found:
        console.print(memory_table(found, times=api.source_times(context, found)))
        console.print(
            shown_of(
                len(found), api.count(context, filters), api.COUNT_AT_MOST, "memory", "memories"
            )
        )
    else:
        console.print("no memories match")
        if (unknown := api.unknown_scope(context, filters)) is not None:
            console.print(f"no project or scope is named {unknown!r}: `memctl projects` lists them")
    earlier = api.stored_earlier(context, filters) if fmt == "table" else 0
    if earlier:
        count = (
            f"{earlier:,} memory stored since then is"
            if earlier == 1
            else (f"{earlier:,} memories stored since then are")
        )
        console.print(f"{count} dated earlier (an older session or file): --stored lists them")


def show_memory(context: Context, memory_id: str, as_json: bool) -> None:
    """One memory, every field, its relations and where it came from."""
    found = api.get(context, memory_id)
    if as_json:
        print_json(found.to_dict())
        return
    from memctl.cli.render import console

    console.print(_memory_panel(found.memory, found.relations))
    if found.host:
        console.print(f"from host {found.host[:8]}, through sync")
    for origin in found.origins:
        console.print(fit(f"from {origin.text()}"), soft_wrap=True)
    if any(origin.stored for origin in found.origins):
        console.print(f"  open them: memctl sessions expand {found.memory.id[:8]}")


def _memory_panel(memory: Memory, relations: list[Relation]) -> Table:
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for name, value in memory.to_dict().items():
        if value not in ("", None, []):
            table.add_row(name, ", ".join(value) if isinstance(value, list) else str(value))
    for relation in relations:
        table.add_row(
            "relation",
            f"{relation.src_id[:8]} --{relation.type}"
            f"({relation.weight:g})--> {relation.dst_id[:8]}",
        )
    return table


# The fast lane's ``memctl list`` and ``memctl get`` (``memctl.cli.entry.run_fast``): the
# options of the Typer commands (``memctl.cli.memory`` has their help); a command line these
# parsers do not take, or a value the Typer command would refuse, goes to Typer.


def list_args(argv: list[str]) -> argparse.Namespace:
    """The arguments of a ``memctl list``; Refused when a value is one Typer checks (a
    --limit below 1, a --format it does not know)."""
    args = list_parser().parse_args(argv)
    if args.limit is not None and args.limit < 1:
        raise Refused("--limit")
    return args


def list_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="memctl list", add_help=False, allow_abbrev=False)
    parser.add_argument("--scope", "-s")
    for name in ("--kind", "--category", "--state"):
        parser.add_argument(name, action="append")
    parser.add_argument("--tag", "-t")
    parser.add_argument("--since")
    parser.add_argument("--stored", action="store_true")
    parser.add_argument("--session")
    parser.add_argument("--all-scopes", action="store_true")
    parser.add_argument("--limit", "-n", type=int)
    parser.add_argument("--sort", default="created")
    parser.add_argument("--format", "-f", dest="output", default="table", choices=LIST_FORMATS)
    parser.add_argument("--json", dest="as_json", action="store_true")
    return parser


def list_fast(options: dict[str, Any], args: argparse.Namespace) -> int:
    """``memctl list`` with the options of ``list_args``, as the Typer command runs it."""
    from memctl.api.config import Context
    from memctl.api.memory import Filters

    scope = None if args.all_scopes else args.scope
    given = (args.kind, args.category, args.state)
    kinds, categories, states = (tuple(values or ()) for values in given)
    filters = Filters(
        scope, kinds, categories, states, args.tag, args.since, args.stored, args.session
    )
    with Context(settings(options)) as ctx:
        show_list(ctx, filters, args.limit, args.sort, "json" if args.as_json else args.output)
    return 0


def get_args(argv: list[str]) -> argparse.Namespace:
    """The arguments of a ``memctl get``; Refused when an id starts with a dash (click reads
    it as an option)."""
    args = get_parser().parse_args(argv)
    if args.memory_id.startswith("-"):
        raise Refused(args.memory_id)
    return args


def get_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="memctl get", add_help=False, allow_abbrev=False)
    parser.add_argument("memory_id")
    parser.add_argument("--json", dest="as_json", action="store_true")
    return parser


def get_fast(options: dict[str, Any], args: argparse.Namespace) -> int:
    """``memctl get`` with the options of ``get_args``."""
    from memctl.api.config import Context

    with Context(settings(options)) as ctx:
        show_memory(ctx, args.memory_id, args.as_json)
    return 0
