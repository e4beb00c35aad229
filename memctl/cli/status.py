"""status, projects and events."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from memctl.api import memory as api
from memctl.api.memory import EventsRequest, Status
from memctl.api.projects import list_projects, project_labels
from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import age, console, counts_table, human_size, middle, print_json

app = new_typer()
CLIENTS_WIDTH = 24  # the clients column of `projects` at most (a long list ends in …)
# What the sessions, memories and last columns of `projects` take, with the four gaps
# between its five columns (two spaces each): the project gets the rest, less the clients.
COUNT_COLUMNS = len("sessions") + len("memories") + len("YYYY-MM-DD") + 4 * 2
PROJECT_LEAST = 12  # a narrow terminal: the project column keeps this, the clients end in …


@app.command()
def status(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Counts by kind, category, state, tier and project; database size; embedding model and
    message vectors."""
    context = open_context(ctx)
    report = api.status(context)
    if as_json:
        print_json(asdict(report))
        return
    named = project_labels(context, [report.current_scope, *report.by_scope])
    model = f"{report.embed_model} ({report.embed_dim}-d)" if report.embed_model else "none yet"
    console.print(f"database      {report.database} ({human_size(report.size_bytes)})")
    console.print(f"memories      {report.total}")
    console.print(f"events        {report.events}")
    messages = f"{report.messages} message{'' if report.messages == 1 else 's'}"
    console.print(f"sessions      {report.sessions} ({messages})")
    jobs = ", ".join(f"{n} {state}" for state, n in sorted(report.jobs.items())) or "none"
    console.print(f"ingest jobs   {jobs}")
    imported = ", ".join(f"{n} {state}" for state, n in sorted(report.imports.items())) or "none"
    console.print(f"imports       {imported} (files)")
    console.print(f"vectors       {model}; messages: {_message_vectors(report)}")
    console.print(f"current scope {report.current_scope} ({named[report.current_scope]})")
    for title, counts in (
        ("by state", report.by_state),
        ("by kind", report.by_kind),
        ("by category", report.by_category),
        ("by tier", report.by_tier),
        ("by project", _by_label(report.by_scope, named)),
    ):
        if counts:
            console.print(counts_table(title, counts))


def _message_vectors(report: Status) -> str:
    """How many message parts have a vector, and why (``recall.message_vectors``)."""
    choice, limit = report.message_vectors_setting, report.message_vectors_up_to
    parts = f"{report.message_vectors:,} parts"
    if choice != "auto":
        return f"{parts} (recall.message_vectors {choice})"
    if report.message_vectors_kept:
        return f"{parts} (auto: kept while the store holds at most {limit:,} messages)"
    then = "the next maintain drops them; then " if report.message_vectors else ""
    return f"{parts} (auto: more than {limit:,} messages: {then}found by their words alone)"


def _by_label(counts: dict[str, int], named: dict[str, str]) -> dict[str, int]:
    """Counts by scope, keyed by how a person reads each (two scopes of one label add up)."""
    summed: dict[str, int] = {}
    for scope, count in counts.items():
        summed[named[scope]] = summed.get(named[scope], 0) + count
    return summed


@app.command()
def projects(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every project with sessions or memories: where it is, its sessions, memories, last
    activity and the clients seen; the current one marked *."""
    found = list_projects(open_context(ctx))
    if as_json:
        print_json([p.to_dict() for p in found])
        return
    if not found:
        console.print("no projects yet: nothing is stored")
        return
    table = Table(box=None, pad_edge=False)
    # the project takes what the counts, the date and the clients leave of the width: a
    # row wider than the terminal is cropped by rich, mid-word and without "…"
    widest = max(len(",".join(p.clients)) for p in found)
    shown = min(CLIENTS_WIDTH, widest, console.width - COUNT_COLUMNS - PROJECT_LEAST)
    shown = max(len("clients"), shown)
    room = max(PROJECT_LEAST, console.width - COUNT_COLUMNS - shown)
    table.add_column("project", overflow="ellipsis", no_wrap=True, max_width=room)
    for column in ("sessions", "memories"):
        table.add_column(column, justify="right", no_wrap=True, min_width=len(column))
    table.add_column("last", no_wrap=True, min_width=len("YYYY-MM-DD"))
    table.add_column(
        "clients",
        overflow="ellipsis",
        no_wrap=True,
        min_width=len("clients"),
        max_width=shown,
    )
    for project in found:
        mark = "*" if project.current else " "
        table.add_row(
            middle(f"{mark}{project.label}", room),  # cut in the middle: the name shows
            str(project.sessions),
            str(project.memories),
            project.last_activity[:10],
            ",".join(project.clients),
        )
    console.print(table)


@app.command()
def events(
    ctx: typer.Context,
    memory_id: Annotated[str | None, typer.Argument(help="Only this memory's events.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Page size.")] = None,
    page: Annotated[int, typer.Option("--page", "-p", min=1, help="Page number, from 1.")] = 1,
    as_json: JsonOption = False,
) -> None:
    """The event log, newest first, a page at a time."""
    found = api.events(open_context(ctx), EventsRequest(memory_id, limit, page))
    if as_json:
        print_json([e.to_dict() for e in found])
        return
    if not found:
        console.print("no events")
        return
    table = Table(header_style="bold")
    for column in ("#", "age", "action", "memory", "run", "details"):
        table.add_column(column, overflow="fold" if column == "details" else "ellipsis")
    for event in found:
        details = ", ".join(f"{k}={v}" for k, v in event.data.items())
        table.add_row(
            str(event.id),
            age(event.at),
            str(event.action),
            (event.memory_id or "-")[:8],
            (event.run_id or "-")[:8],
            details,
        )
    console.print(table)
