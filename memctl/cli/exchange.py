"""export and import of memctl's JSONL format."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from memctl import memories
from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import console, print_json, warn
from memctl.errors import InputError
from memctl.exchange import export_lines, import_lines, read_lines
from memctl.model import State

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
    where = memories.make_filter(context, scope, states=[s.value for s in State])
    if output is None:
        for line in export_lines(context, where):
            sys.stdout.write(line + "\n")
        return
    partial = output.with_name(output.name + ".partial")
    count = 0
    # Written beside the target and renamed, so a failed export never leaves half a file.
    with os.fdopen(
        os.open(partial, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600), "w", encoding="utf-8"
    ) as stream:
        for line in export_lines(context, where):
            stream.write(line + "\n")
            count += 1
    partial.replace(output)
    console.print(f"exported {count} memories to {output}", highlight=False)


@app.command("import")
def import_(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="A memctl JSONL export, or '-' for stdin.")],
    as_json: JsonOption = False,
) -> None:
    """Import a memctl JSONL export: ids kept, ids already present skipped, vectors re-made."""
    from rich.progress import Progress  # ~5 ms: only for the commands that show one

    context = open_context(ctx)
    if path == "-":
        report = import_lines(context, read_lines(sys.stdin.buffer))
    else:
        source = Path(path)
        if not source.is_file():
            raise InputError(f"no such file: {source}")
        with (
            source.open("rb") as stream,
            Progress(console=console, transient=True, disable=as_json) as bar,
        ):
            task = bar.add_task(f"importing {source.name}", total=None)
            report = import_lines(
                context, read_lines(stream), progress=lambda n: bar.advance(task, n)
            )
    if as_json:
        print_json(
            {
                "imported": report.imported,
                "skipped": report.skipped,
                "relations": report.relations,
                "errors": report.errors,
            }
        )
        return
    for error in report.errors:
        warn(error)
    console.print(
        f"imported {report.imported}, skipped {report.skipped} already present, "
        f"{report.relations} relations, {len(report.errors)} errors"
    )
