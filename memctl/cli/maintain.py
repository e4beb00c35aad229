"""maintain and restore: what cron runs, and bringing a backup back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from memctl.api import maintain as api
from memctl.cli.common import JsonOption, open_context
from memctl.cli.render import console, print_json
from memctl.model import counted

SHOWN_IDS = 5
# A task's counts as a person reads them ("6 episodes consolidated, 1 fact", not "6
# consolidate, 1 facts"): the noun, one and many; --json keeps the keys. A key not here
# reads as its words.
COUNT_WORDS: dict[str, tuple[str, str]] = {
    "captured": ("transcript captured", "transcripts captured"),
    "spooled": ("spooled transcript stored", "spooled transcripts stored"),
    "job": ("job done", "jobs done"),
    "job_failed": ("job failed", "jobs failed"),
    "requeued": ("job requeued", "jobs requeued"),
    "consolidate": ("episode consolidated", "episodes consolidated"),
    "facts": ("fact", "facts"),
    "merge": ("merge", "merges"),
    "merge_compared": ("compared for a merge", "compared for a merge"),
    "dedup": ("duplicate superseded", "duplicates superseded"),
    "archive": ("archived", "archived"),
    "triples": ("triple", "triples"),
    "orphans": ("orphan entity removed", "orphan entities removed"),
    "lines": ("line", "lines"),
    "profiles": ("profile", "profiles"),
    "embed": ("memory embedded", "memories embedded"),
    "memories_named": ("memory named", "memories named"),
    "messages_embedded": ("message embedded", "messages embedded"),
    "calls_embedded": ("message's calls embedded", "messages' calls embedded"),
    "message_vectors_dropped": ("message vector dropped", "message vectors dropped"),
    "backup": ("backup", "backups"),
    "sync": ("sync", "syncs"),
}
# What a task does at most once a run: its words, no number.
ONCE_WORDS = {
    "reembed_all": "every memory re-embedded",
    "fts_optimized": "memory index optimized",
    "messages_fts_optimized": "message index optimized",
    "message_words_counted": "message word counts redone",
    "vectors_compacted": "vector index compacted",
}
if TYPE_CHECKING:
    from memctl.api.maintain import MaintainReport, TaskReport


def _count(key: str, n: int) -> str:
    if key in ONCE_WORDS:
        return ONCE_WORDS[key]
    one, many = COUNT_WORDS.get(key, (key.replace("_", " "),) * 2)
    return counted(n, one, many)


def _detail(task: TaskReport) -> str:
    if task.status == "skipped" and not task.counts:
        return task.notes[0] if task.notes else "skipped"  # why, once: not again as a note
    counts = ", ".join(_count(k, n) for k, n in sorted(task.counts.items())) or "nothing to do"
    ids = [c["id"][:8] for c in task.changes if c.get("id") and c["id"] != "*"]
    if ids:
        more = f" +{len(ids) - SHOWN_IDS}" if len(ids) > SHOWN_IDS else ""
        counts += f" ({', '.join(ids[:SHOWN_IDS])}{more})"
    return counts


def show_report(report: MaintainReport) -> None:
    if report.locked_by is not None:
        console.print(f"another maintain is running (pid {report.locked_by}); nothing done")
        return
    table = Table(header_style="bold", box=None)
    for column in ("task", "status", "changes"):
        table.add_column(column, overflow="fold")
    for task in report.tasks:
        table.add_row(task.task, task.status, _detail(task))
    console.print(table)
    for task in report.tasks:
        shown = task.notes[1:] if task.status == "skipped" and not task.counts else task.notes
        for note in shown:
            console.print(f"{task.task}: {note}")
    run = report.run
    if report.dry_run:
        console.print("dry run: nothing written")
    elif run is not None:
        # cron appends each run to one log: its start says which hour it was
        started = run.started_at[:16].replace("T", " ")
        console.print(
            f"run {run.id[:12]} of {started} UTC: {run.tokens}/{run.token_budget} LLM tokens"
        )


def maintain(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what each task would change; write nothing.")
    ] = False,
    only: Annotated[
        str | None, typer.Option("--only", metavar="TASK,...", help="Run only these tasks.")
    ] = None,
    skip: Annotated[
        str | None, typer.Option("--skip", metavar="TASK,...", help="Run all tasks but these.")
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="Compare every memory for duplicates again, not only those new or "
            "changed since the last run.",
        ),
    ] = False,
    print_crontab: Annotated[
        bool,
        typer.Option(
            "--print-crontab",
            help="Print a crontab line and a systemd user timer (as `memctl install cron`).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Keep the store healthy: rescrub, jobs, decay, consolidate, dedup, archive, graph,
    profile, upkeep, sync.

    Safe from cron: a second maintain while one runs says so and exits 0; every
    change is one run that `memctl undo RUN_ID` reverts.
    """
    if print_crontab:
        from memctl.cli.install import schedule_text

        console.print(schedule_text(ctx), highlight=False, soft_wrap=True, end="")
        return
    request = api.MaintainRequest(only=only, skip=skip, dry_run=dry_run, full=full)
    report = api.maintain(open_context(ctx), request)
    if as_json:
        print_json(report.to_dict())
        return
    show_report(report)


def restore(
    ctx: typer.Context,
    backup: Annotated[Path, typer.Argument(help="A backup file (see $MEMCTL_HOME/backups).")],
    as_json: JsonOption = False,
) -> None:
    """Replace the store with a backup; the current store is backed up first."""
    result = api.restore(open_context(ctx), api.RestoreRequest(backup))
    if as_json:
        print_json({"restored": str(result.restored), "saved": str(result.previous_saved_as)})
        return
    console.print(f"restored {result.restored}")
    console.print(f"the store before it is saved as {result.previous_saved_as}")
