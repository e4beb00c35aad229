"""export (memctl's JSONL) and import (files of many formats, that JSONL among them)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from memctl.api import ingest as api
from memctl.api.ingest import STRATEGIES
from memctl.cli.common import (
    JsonOption,
    ScopeOption,
    TagsAlias,
    TagsOption,
    new_typer,
    open_context,
    tags_given,
)
from memctl.cli.render import (
    console,
    item_progress,
    middle,
    print_json,
    update_items,
    warn,
)
from memctl.errors import InputError
from memctl.model import counted

if TYPE_CHECKING:
    from rich.progress import TaskID

    from memctl.api.ingest import ImportReport

app = new_typer()


@app.command()
def export(
    ctx: typer.Context,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to FILE (default stdout).")
    ] = None,
    scope: Annotated[str | None, typer.Option("--scope", "-s", help="Only this scope.")] = None,
) -> None:
    """Write every memory as JSONL: every field and its relations, no vectors."""
    context = open_context(ctx)
    if output is None:
        for line in api.export(context, scope):
            sys.stdout.write(line + "\n")
        return
    count = api.export_to(context, output, scope)
    console.print(f"exported {counted(count, 'memory', 'memories')} to {output}", highlight=False)


Strategy = StrEnum("Strategy", [(s, s) for s in STRATEGIES])  # type: ignore[misc]
# Above this much input (or with more than one file) a progress bar is shown on a terminal:
# ~100 memories of 700 characters, about 5 s of embedding on one core (docs/benchmarks.md);
# at 1 MiB a 300-memory file embedded for ~15 s with nothing shown.
LARGE_INPUT = 64 << 10


@app.command("import")
def import_(
    ctx: typer.Context,
    path: Annotated[
        list[str],
        typer.Argument(
            help="Files, directories (walked, hidden entries left out), globs, or '-' for stdin.",
            metavar="PATH",
        ),
    ],
    strategy: Annotated[
        Strategy,
        typer.Option(
            "--strategy",
            help="How a document becomes memories: auto (by its shape), atomic (facts), "
            "section (one a section) or document (one a file).",
        ),
    ] = Strategy.auto,  # type: ignore[attr-defined]
    force: Annotated[
        bool, typer.Option("--force", help="Import files imported before again.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show per file the strategy and what it would make."),
    ] = False,
    scope: ScopeOption = None,
    tags: TagsOption = None,
    tags_alias: TagsAlias = None,
    as_json: JsonOption = False,
) -> None:
    """Import notes, documents, chat exports (ChatGPT, Claude.ai, Cursor, SpecStory histories,
    WhatsApp, Slack, "Name: text" transcripts) and memory exports (mem0, memctl JSONL and sync
    YAML) as memories; assistants' session transcripts (Codex, Claude Code, ...) as `memctl
    ingest` takes them."""
    context = open_context(ctx)
    request = api.ImportRequest(
        tuple(path),
        sys.stdin,
        str(strategy),
        force,
        dry_run,
        scope,
        tuple(tags_given(tags, tags_alias) or ()),
        ctx.find_root().obj.get("config") or {},
    )
    plan = api.plan_import(request)
    total = plan.total_bytes
    show = not as_json and console.is_terminal and (len(plan.targets) > 1 or total > LARGE_INPUT)
    with item_progress(disable=not show) as bar:
        tasks: dict[str, TaskID] = {}

        def tell(stage: str, done: int, total: int) -> None:
            """One row a stage (reading, embedding, ...): its count, rate and time left."""
            if total:  # a file with nothing to embed has no row
                if stage not in tasks:
                    tasks[stage] = bar.add_task(stage, total=None, rate="")
                update_items(bar, tasks[stage], done, total, stage.split()[-1])

        report = api.import_files(context, plan, tell)
    failed = report.failed
    if as_json:
        print_json(report.to_dict())
    elif len(report.files) == 1 and failed:
        raise InputError(failed[0].error or "import failed")
    else:
        _show_import(report)
    if failed:
        raise InputError(
            f"{len(failed)} of {counted(len(report.files), 'file')} could not be imported"
        )


# Columns beside the file name: status, new, merged, skipped, and the padding between.
IMPORT_FIXED_WIDTH = 46
# A dry run reads each file against the store as it is: what an earlier file of the same
# import would have written is not there to merge with or skip
DRY_RUN_FILES = "(each file against the store as it is now: a fact two files share counts in each)"


def _show_import(report: ImportReport) -> None:
    """One row a file: its name on one line (cut in the middle to fit), then its format,
    strategy and why; the counts beside it."""
    table = Table(
        header_style="bold",
        box=box.SIMPLE_HEAD,
        title="dry run: nothing written" if report.dry_run else None,
    )
    table.add_column("file: format, strategy (why)", overflow="fold", ratio=1)
    table.add_column("status", no_wrap=True)
    for column in ("new", "merged", "skipped"):
        table.add_column(column, justify="right", no_wrap=True)
    width = max(20, console.width - IMPORT_FIXED_WIDTH)
    for file in report.files:
        why = file.error or file.why
        detail = f"{file.format or '-'}, {file.strategy or '-'}" + (f" ({why})" if why else "")
        table.add_row(
            f"{middle(file.name, width)}\n{detail}",
            file.status,
            str(file.imported),
            str(file.merged),
            str(file.skipped),
        )
    console.print(table)
    for problem in (p for f in report.files for p in f.problems):
        warn(problem)
    for note in report.llm_notes:
        warn(note)
    verb = "would be " if report.dry_run else ""
    console.print(
        f"{counted(len(report.files), 'file')}: "
        f"{counted(report.total('imported'), 'memory', 'memories')} {verb}imported, "
        f"{report.total('merged')} {verb}merged, {report.total('skipped')} skipped; "
        f"{counted(len(report.failed), 'file')} failed"
        + (f"; {report.unchanged}" if report.unchanged else "")
        + (f"; {report.sessions}" if report.sessions else "")
    )
    if report.dry_run and len(report.files) > 1:  # the walk's 16 would-be were 14 imported
        console.print(DRY_RUN_FILES)
