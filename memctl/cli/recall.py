"""recall (with --explain and --why-not) and profile."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from memctl.api.recall import ProfileRequest, RecallRequest, asking_session, check_choice
from memctl.api.recall import profile as api_profile
from memctl.cli import render as out
from memctl.cli.common import JsonOption, ScopeOption, new_typer, open_context, text_argument
from memctl.cli.recall_out import FORMATS, parse_budget, show
from memctl.cli.render import print_json

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
    all_scopes: Annotated[
        bool, typer.Option("--all-scopes", help="Search every scope (others' x 0.4).")
    ] = False,
    output: Annotated[
        str, typer.Option("--format", "-f", help="table, json, context or ids.")
    ] = "table",
    as_json: JsonOption = False,
    budget: Annotated[
        str | None,
        typer.Option("--budget", help="Token budget: add results in order until it is reached."),
    ] = None,
    explain_: Annotated[
        bool, typer.Option("--explain", help="Show how each result was found and scored.")
    ] = False,
    why_not_id: Annotated[
        str | None,
        typer.Option(
            "--why-not", metavar="ID", help="Say which stage dropped this memory, and why."
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option("--as-of", help="Recall as of a date (ISO, or a span like 30d ago: 30d)."),
    ] = None,
    history: Annotated[
        bool, typer.Option("--history", help="Include superseded memories (x 0.5).")
    ] = False,
    sessions: Annotated[
        bool,
        typer.Option(
            "--sessions/--no-sessions",
            help="Rank the verbatim session messages with the memories (the default).",
        ),
    ] = True,
    clear_only: Annotated[
        bool,
        typer.Option("--clear-only", help="Only clear matches, no possible ones (for scripts)."),
    ] = False,
    mode: Annotated[
        str | None,
        typer.Option("--mode", "-m", help="smart (default), focused, deep or working."),
    ] = None,
    no_touch: Annotated[
        bool, typer.Option("--no-touch", help="Do not record this access on the memories.")
    ] = False,
) -> None:
    """Recall memories and session messages by meaning, words, time and the graph: the clear
    matches, then the possible ones."""
    fmt = "json" if as_json else check_choice(output, FORMATS, "format")
    tokens = parse_budget(budget)
    context = open_context(ctx)
    request = RecallRequest(
        query=text_argument(query, "query"),
        limit=limit,
        scope=scope,
        all_scopes=all_scopes,
        mode=mode,
        budget=tokens,
        context=fmt == "context",
        as_of=as_of,
        history=history,
        sessions=sessions,
        clear_only=clear_only,
        touch=not no_touch,
        why_not=why_not_id,
        session=asking_session(os.environ),
    )
    show(context, request, fmt, explain_)


@app.command()
def profile(
    ctx: typer.Context,
    scope: ScopeOption = None,
    all_scopes: Annotated[bool, typer.Option("--all-scopes", help="Every scope.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Per section.")] = 20,
    as_json: JsonOption = False,
) -> None:
    """The user's profile and preferences, most important first."""
    found = api_profile(open_context(ctx), ProfileRequest(scope, all_scopes, limit))
    if as_json:
        print_json(found.to_dict())
    else:
        out.console.print(out.fit(found.text()), soft_wrap=True)
