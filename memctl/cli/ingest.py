"""ingest, runs and undo.

``memctl ingest`` usually runs in the fast lane of ``memctl.cli.entry``
without reaching this module; this is the same command for --help, --wait,
--dry-run and the generated docs, with its options taken from the one list.
"""

from __future__ import annotations

import sys
from collections import Counter
from enum import StrEnum
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from memctl.api import ingest as api
from memctl.cli.common import JsonOption, TagsAlias, new_typer, open_context, tags_given
from memctl.cli.fastlane import (
    CLIENT_CHOICES,
    FILE_HELP,
    INGEST_OPTIONS,
    capture_lines,
    ingest_request,
    result_data,
)
from memctl.cli.render import (
    TEXT_MIN_WIDTH,
    age,
    console,
    human_size,
    item_progress,
    print_json,
    say,
    short_id,
    update_items,
    warn,
)
from memctl.clients import REGISTRY
from memctl.errors import UsageError
from memctl.integrations.backfill import find_transcripts, since_time
from memctl.model import counted

if TYPE_CHECKING:
    from memctl.api.ingest import CaptureReport, RunRecord

app = new_typer()

# The llm column of `memctl runs` at most ("ollama:llama3.2 -> rules" is cut), so that
# the table fits 80 columns; `memctl runs RUN_ID` shows it whole.
LLM_WIDTH = 12

# the transcript formats and, for --backfill, the assistants
CLIENT_NAMES = tuple(dict.fromkeys((*CLIENT_CHOICES, *REGISTRY)))
Client = StrEnum("Client", [(c.replace("-", "_"), c) for c in CLIENT_NAMES])  # type: ignore[misc]
Mode = StrEnum("Mode", [("smart", "smart"), ("raw", "raw")])  # type: ignore[misc]


def _option(dest: str, **kwargs: Any) -> Any:
    opt = INGEST_OPTIONS[dest]
    return typer.Option(*opt.flags, help=opt.help, metavar=opt.metavar, **kwargs)


@app.command()
def ingest(
    ctx: typer.Context,
    file: Annotated[
        Path | None,
        typer.Argument(help=FILE_HELP, metavar="[FILE]", show_default=False),
    ] = None,
    transcript: Annotated[Path | None, _option("transcript")] = None,
    client: Annotated[Client | None, _option("client")] = None,
    session_id: Annotated[str | None, _option("session_id")] = None,
    agent_id: Annotated[str | None, _option("agent_id")] = None,
    scope: Annotated[str | None, _option("scope")] = None,
    tags: Annotated[list[str] | None, _option("tags")] = None,
    tags_alias: TagsAlias = None,
    mode: Annotated[Mode, _option("mode")] = Mode.smart,  # type: ignore[attr-defined]
    wait: Annotated[bool, _option("wait")] = False,
    dry_run: Annotated[bool, _option("dry_run")] = False,
    backfill: Annotated[bool, _option("backfill")] = False,
    since: Annotated[str | None, _option("since")] = None,
    as_json: Annotated[bool, _option("as_json")] = False,
) -> None:
    """Store a conversation verbatim at once; distil memories from it in the background."""
    if backfill:
        given = {
            "--transcript": transcript,
            "a transcript FILE": file,
            "--session-id": session_id,
            "--agent-id": agent_id,
            "--scope": scope,
            "--tag": tags or tags_alias,
            "--wait": wait,
        }
        clash = next((flag for flag, value in given.items() if value), None)
        if clash:
            raise UsageError(f"{clash} does not go with --backfill (each transcript is its own)")
        _backfill(ctx, str(client) if client else None, since, str(mode), dry_run, as_json)
        return
    context = open_context(ctx)
    arguments = SimpleNamespace(
        file=file,
        transcript=transcript,
        client=str(client) if client else None,
        session_id=session_id,
        agent_id=agent_id,
        scope=scope,
        tags=tags_given(tags, tags_alias),
        mode=str(mode),
        wait=wait,
        dry_run=dry_run,
    )
    overrides = ctx.find_root().obj.get("config") or {}
    result = api.ingest(context, ingest_request(arguments, sys.stdin, overrides))
    if result.preview is not None:
        _show_preview(result.report, result.preview, as_json)
        return
    drained = result.drained
    data = result_data(result)
    if as_json:
        print_json({**data, "log": str(result.log), "runs": _runs_of(drained)})
        return
    for line in capture_lines(data, str(result.log), waited=result.ran_own_job()):
        console.print(line)
    for item in drained.done if drained else []:
        console.print(f"run {item['run']}: {_counts(item['counts'])}")
    # a job's attempts fail alike (a store another model embedded): one warning a cause
    failures = Counter((item["job"], item["error"]) for item in drained.failed) if drained else {}
    for (job, error), tries in failures.items():
        warn(f"job {job} failed: {error}" + (f" ({tries} attempts)" if tries > 1 else ""))
    _warn_llm_notes(drained)


def _backfill(
    ctx: typer.Context, client: str | None, since: str | None, mode: str, dry: bool, as_json: bool
) -> None:
    targets = find_transcripts(client, since_time(since))
    context = open_context(ctx)
    overrides = ctx.find_root().obj.get("config") or {}
    with item_progress(disable=as_json or not targets or not console.is_terminal) as bar:
        task = bar.add_task("transcripts", total=len(targets), rate="")
        report = api.backfill(
            context,
            targets,
            mode,
            dry,
            lambda done, total: update_items(bar, task, done, total, "transcripts"),
            overrides,
        )
    if as_json:
        print_json(report.to_dict())
        return
    found = ", ".join(f"{n} {name}" for name, n in report.per_client.items()) or "none"
    console.print(f"found {counted(report.transcripts, 'transcript')} ({found})")
    verb = "would store" if dry else "stored"
    console.print(
        f"{verb} {counted(report.messages, 'new message')} of "
        f"{counted(report.sessions, 'session')} ({human_size(report.bytes)} read); "
        f"{counted(report.unchanged, 'transcript')} had nothing new"
    )
    if report.malformed:
        warn(
            f"{counted(report.malformed, 'line or record', 'lines or records')} did not parse "
            "(passed over)"
        )
    if report.failed:
        warn(f"{counted(report.failed, 'transcript')} could not be read (passed over):")
        for line in report.failures:
            warn(line)
    if dry:
        console.print("dry run: nothing written")
    elif report.jobs:
        console.print(
            f"{counted(report.jobs, 'session')} queued for distillation in the background"
        )


def _warn_llm_notes(drained: Any) -> None:
    """Why no LLM took part, and how to set one up: once, however many runs said so."""
    if drained is None:
        return
    for note in dict.fromkeys(item.get("llm_note") for item in drained.done):
        if note:
            warn(note)


def _runs_of(drained: Any) -> list[dict[str, Any]]:
    return [] if drained is None else [*drained.done, *drained.failed]


def _counts(counts: Any) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "no changes"


def _show_preview(report: CaptureReport, record: RunRecord, as_json: bool) -> None:
    if as_json:
        print_json({**report.to_dict(), "dry_run": True, "run": record.to_dict()})
        return
    for line in capture_lines(report.to_dict(), None)[:3]:
        say(line)
    console.print(
        f"dry run: {counted(record.messages, 'message')}, {counted(record.facts, 'fact')}, "
        "nothing written"
    )
    console.print(_decisions_table(record))
    for note in record.notes:
        warn(note)


def _decisions_table(record: RunRecord) -> Table:
    table = Table(header_style="bold")
    for column in ("decision", "category", "target", "memory", "fact", "why"):
        table.add_column(column, overflow="fold" if column in ("fact", "why") else "ellipsis")
    for item in record.decisions:
        table.add_row(*_decision_row(item))
    return table


# What a maintain run's change says besides its task, action and memory (`decay` from/to,
# a backup's path), shown where an ingest decision shows its fact.
_NAMED = frozenset(
    {
        "verdict",
        "stage",
        "action",
        "task",
        "category",
        "target_id",
        "memory_id",
        "id",
        "fact",
        "reason",
    }
)


def _decision_row(item: dict[str, Any]) -> tuple[str, ...]:
    """One decision as a row: an ingest run's (verdict, fact, reason) or another run's
    change (a maintain task's action on a memory, with its details)."""
    what = str(item.get("verdict") or item.get("action") or "-")
    if "stage" in item:
        what += f" ({item['stage']})"
    memory = str(item.get("memory_id") or item.get("id") or "-")
    details = ", ".join(f"{key} {value}" for key, value in item.items() if key not in _NAMED)
    return (
        what,
        str(item.get("category") or item.get("task") or ""),
        str(item.get("target_id") or "-")[:8],
        memory[:8] if "verdict" in item else memory,
        str(item.get("fact") or details),
        str(item.get("reason") or ""),
    )


@app.command()
def runs(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(help="Show this run's decisions.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many runs.")] = 20,
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            help="Only runs of this kind: ingest, import, maintain, sync, undo or edit (an "
            "assistant's memory_store calls are edits).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Runs (ingest, import, maintain, sync, undo, and each edit), newest first, with their
    counts and tokens, and the LLM tokens used today against llm.daily_token_budget (or one
    run in full)."""
    context = open_context(ctx)
    if run_id is not None:
        _print_run(api.run(context, run_id), as_json)
        return
    found = api.runs(context, limit, kind)
    if as_json:
        print_json([r.to_dict() for r in found])
        return
    if not found:
        console.print(f"no {kind} runs" if kind else "no runs yet")
        return
    console.print(_runs_table(found))
    today = api.tokens_today(context)
    budget = f"of {today.budget}" if today.budget else "(no daily limit)"
    console.print(f"LLM tokens today: {today.used} {budget} (llm.daily_token_budget)")


def _print_run(record: RunRecord, as_json: bool) -> None:
    """One run in full: its counts, notes and decisions."""
    if as_json:
        print_json(record.to_dict())
        return
    console.print(
        f"run {record.id} ({record.kind}, {record.status}) session {record.session_id or '-'}"
        f" llm {record.llm} tokens {record.tokens}/{record.token_budget}"
    )
    console.print(_counts(record.counts))
    for note in record.notes:
        console.print(f"note: {note}")
    if record.decisions:
        console.print(_decisions_table(record))


def _runs_table(found: list[RunRecord]) -> Table:
    """The runs, a row each, their columns as wide as they need and the decisions cut."""
    rows = [
        (
            short_id(r.id),
            age(r.started_at),
            r.kind,
            r.status,
            (r.llm or "-")[:LLM_WIDTH],
            f"{r.messages}/{r.facts}",
            str(r.tokens),
        )
        for r in found
    ]
    table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    headers = ("run", "age", "kind", "status", "llm", "msg/fact", "tokens")
    widths = [max(len(column), *(len(row[i]) for row in rows)) for i, column in enumerate(headers)]
    for column, width in zip(headers, widths, strict=True):  # as wide as they need: never cut
        table.add_column(column, no_wrap=True, min_width=width)
    # the rest (2 spaces between columns): one count a line, a name too long cut (…) at the
    # column's end, never broken
    rest = max(TEXT_MIN_WIDTH, console.width - sum(widths) - 2 * len(widths) - 1)
    table.add_column("decisions", overflow="ellipsis", no_wrap=True, max_width=rest)
    for row, r in zip(rows, found, strict=True):
        table.add_row(*row, _counts(r.counts).replace(", ", "\n"))
    return table


@app.command()
def undo(
    ctx: typer.Context,
    run_id: Annotated[
        str | None,
        typer.Argument(help="The run to revert (a unique prefix will do); none: your last edit."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Revert memories changed since the run too.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Revert every memory change of one run (created memories become deleted); without
    RUN_ID, the newest edit (remember, update, forget, delete, link, unlink, purge) not
    undone yet."""
    from dataclasses import asdict

    report = api.undo(open_context(ctx), run_id, force)
    if as_json:
        print_json(asdict(report))
        return
    edited = "; ".join(report.notes) if report.kind == "edit" else ""
    what = edited or _counts(report.counts)
    console.print(
        f"undid {report.kind} {short_id(report.run_id)} ({what}): "
        f"{report.reverted} change{'' if report.reverted == 1 else 's'} reverted"
    )
    if report.skipped:
        warn(report.left_alone())
