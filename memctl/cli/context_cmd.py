"""context: exactly what a session started in this directory would be given, and why."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from memctl.api.recall import SessionStartRequest, layered
from memctl.cli.common import JsonOption, ScopeOption, new_typer, open_context
from memctl.cli.render import console, fit, print_json, warn
from memctl.model import counted

if TYPE_CHECKING:
    from memctl.api.recall import Layered

app = new_typer()


@app.command()
def context(
    ctx: typer.Context,
    compact: Annotated[
        bool,
        typer.Option(
            "--compact",
            help="Half the essentials (L1), no recent work (L2); context.compact sets it.",
        ),
    ] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Say why each item is there, and what was left out.")
    ] = False,
    scope: ScopeOption = None,
    budget: Annotated[
        int | None, typer.Option("--budget", help="Tokens in all (default recall.context_budget).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """The context block a session starting here gets: identity, essentials, recent work."""
    found = layered(open_context(ctx), SessionStartRequest(scope, budget, compact or None))
    if as_json:
        print_json(found.to_dict())
        return
    for note in found.notes:
        warn(note)
    sys.stdout.write(fit(found.text() or f"(nothing: {why_empty(found)})") + "\n")
    if explain:
        _explain(found)


def why_empty(found: Layered) -> str:
    """Why a context block is empty: its budgets, what did not fit, what may not open a
    session (another machine's, untrusted), or an empty memory."""
    if not any(found.budgets.values()):
        return "every context budget is 0 (context.*_budget, recall.context_budget, --budget)"
    refused = sum(item.refused for item in found.dropped)
    over = len(found.dropped) - refused
    reasons = [f"{counted(over, 'item')} did not fit the budgets"] if over else []
    if refused:
        reasons.append(
            f"{counted(refused, 'item')} may not open a session (another machine's, not in "
            "sync.trust:"
            " `memctl sync trust`; or telling to run fetched code)"
        )
    if reasons:
        return "; ".join(reasons) + "; --explain names them"
    return "memory holds nothing for this project"


def _explain(found: Layered) -> None:
    names = {"L0": "identity", "L1": "essentials", "L2": "recent work"}
    for layer, name in names.items():
        console.print(
            f"{layer} {name}: {found.used[layer]} of {found.budgets[layer]} tokens",
            style="bold",
        )
        for item in found.items:
            if item.layer == layer:
                console.print(fit(f"  + {_label(item.memory_id)}{item.why}"), soft_wrap=True)
        for item in found.dropped:
            if item.layer == layer:
                console.print(fit(f"  - {_label(item.memory_id)}{item.why}"), soft_wrap=True)
    if found.sessions_stored:
        console.print(
            f"{counted(found.sessions_stored, 'earlier session')} stored: the block names the "
            "session tools"
        )


def _label(memory_id: str | None) -> str:
    return f"{memory_id[:8]} " if memory_id else ""
