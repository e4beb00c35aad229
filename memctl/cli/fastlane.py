"""The hook's ingest without Typer: its options (defined once, shared with the Typer
command), an argparse parser for them, the fast path itself and its report.

Typer, click, rich and pydantic take about a quarter of a second to import,
more than the hook's whole budget; ``memctl.cli.entry`` sends a plain ``memctl
[--home DIR] [-c K=V] ingest ...`` here. ``memctl.cli.ingest`` builds its Typer
options from ``INGEST_OPTIONS``; a test checks that both parsers take the same
options.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.model import TRANSCRIPT_CLIENTS

if TYPE_CHECKING:
    from memctl.api.ingest import IngestRequest, IngestResult


@dataclass(frozen=True)
class Opt:
    flags: tuple[str, ...]
    help: str
    metavar: str | None = None  # None: a flag without a value
    choices: tuple[str, ...] = ()
    repeat: bool = False
    aliases: tuple[str, ...] = ()  # old spellings, still taken, not shown in --help


CLIENT_CHOICES = TRANSCRIPT_CLIENTS  # the Typer command takes the assistants too (--backfill)
INGEST_OPTIONS: dict[str, Opt] = {
    "transcript": Opt(
        ("--transcript",), "Transcript file; omit (or '-') to read standard input.", "PATH"
    ),
    "client": Opt(
        ("--client",),
        "Transcript format (default: guessed from the content); with --backfill, the"
        " assistant whose transcripts to read (default: every one).",
        "CLIENT",
        CLIENT_CHOICES,
    ),
    "session_id": Opt(("--session-id",), "Session id (default: the transcript's own).", "ID"),
    "agent_id": Opt(("--agent-id",), "Agent id recorded on the session and its memories.", "ID"),
    "scope": Opt(
        ("--scope", "-s"),
        "Scope of the memories: 'project' (the current one, default), 'global', or a name.",
        "SCOPE",
    ),
    "tags": Opt(
        ("--tag", "-t"),
        "A tag for the memories made from this session; repeat or separate with commas.",
        "TAG",
        repeat=True,
        aliases=("--tags",),
    ),
    "mode": Opt(
        ("--mode",),
        "smart: store the messages and distil memories; raw: only store the messages.",
        "MODE",
        ("smart", "raw"),
    ),
    "wait": Opt(("--wait",), "Run the slow path in the foreground instead of a worker."),
    "dry_run": Opt(
        ("--dry-run",),
        "Print the decisions a run would make (with --backfill: how many sessions, messages"
        " and bytes it would store); write nothing.",
    ),
    "backfill": Opt(
        ("--backfill",),
        "Store every past session the installed assistants keep transcripts of (a second"
        " run adds nothing); distil them in the background.",
    ),
    "since": Opt(
        ("--since",),
        "With --backfill: only transcripts changed since then (an ISO date, or a span: 30d).",
        "DATE",
    ),
    "as_json": Opt(("--json",), "Print JSON (stable field names)."),
}
SLOW_FLAGS = {"--wait", "--dry-run", "--backfill", "-h", "--help"}


class Refused(Exception):
    """This command line is not for the fast lane."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise Refused(message)


def ingest_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="memctl ingest", add_help=False, allow_abbrev=False)
    for dest, opt in INGEST_OPTIONS.items():
        if opt.metavar is None:
            parser.add_argument(*opt.flags, dest=dest, action="store_true", help=opt.help)
        else:
            parser.add_argument(
                *opt.flags,
                *opt.aliases,
                dest=dest,
                metavar=opt.metavar,
                choices=opt.choices or None,
                action="append" if opt.repeat else "store",
                help=opt.help,
            )
    return parser


def split_command(argv: list[str]) -> tuple[dict[str, Any], str | None, list[str]]:
    """(global options, command, the command's arguments) of a command line."""
    home: str | None = None
    config: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in ("--home", "-c", "--config") and index + 1 < len(argv):
            name, value = word, argv[index + 1]
            index += 2
        elif word.startswith(("--home=", "--config=")):
            name, _, value = word.partition("=")
            index += 1
        elif word.startswith("-"):
            raise Refused(word)
        else:
            return {"home": home, "config": config}, word, argv[index + 1 :]
        if name == "--home":
            home = value
        elif "=" in value:
            config.append(value)
        else:
            raise Refused(value)  # the full parser says what is wrong with it
    return {"home": home, "config": config}, None, []


def capture_lines(report: dict[str, Any], log: str | None, waited: bool = False) -> list[str]:
    """The fast path's report for people, as plain lines (shared with the Typer command)."""
    if report.get("spooled"):
        return [
            f"the database is busy: {report['source']} was kept in {report['spooled']}; "
            "the next `memctl ingest` or `memctl maintain` stores it"
        ]
    redacted = report["redactions"]
    lines = [
        f"session {report['session_id']} ({report['client']}): {report['messages_read']} "
        f"messages read, {report['messages_new']} new, {report['messages_total']} stored in all"
    ]
    if redacted["secrets"] or redacted["private_blocks"] or redacted["memctl_context_blocks"]:
        kinds = ", ".join(redacted["secrets_by_kind"])
        lines.append(
            f"redacted: {redacted['secrets']} secrets{f' ({kinds})' if kinds else ''}, "
            f"{redacted['private_blocks']} private blocks, "
            f"{report['private_messages_dropped']} all-private messages dropped, "
            f"{redacted['memctl_context_blocks']} memctl-context blocks removed"
        )
    if report["malformed"] or report["passed_over"] or report["nul_bytes"]:
        lines.append(
            f"skipped: {report['malformed']} malformed, {report['passed_over']} passed over"
            + (f", {report['nul_bytes']} NUL bytes" if report["nul_bytes"] else "")
            + (f" ({'; '.join(report['problems'])})" if report["problems"] else "")
        )
    if report.get("lines"):
        lines.append("lines: " + ", ".join(f"{n} {kind}" for kind, n in report["lines"].items()))
    if report["job_id"] is not None and not waited:
        worker = (
            f"worker {report['worker_pid']} started (log: {log})"
            if report["worker_pid"]
            else "a worker or `memctl maintain` will process it"
        )
        lines.append(f"queued job {report['job_id']}; {worker}")
    return lines


def ingest(options: dict[str, Any], args: argparse.Namespace) -> int:
    """The fast path: capture, queue, start a worker, report."""
    from memctl.api.config import Context, load_settings
    from memctl.api.ingest import ingest as api_ingest

    overrides = dict(pair.split("=", 1) for pair in options["config"])
    home = Path(options["home"]).expanduser() if options["home"] else None
    settings = load_settings(home=home, overrides=overrides)
    request = ingest_request(args, sys.stdin, overrides)
    with Context(settings) as ctx:
        result = api_ingest(ctx, request)
    data = result_data(result)
    if args.as_json:
        shown = {**data, "log": str(result.log)}
        sys.stdout.write(json.dumps(shown, ensure_ascii=False, indent=2, default=str) + "\n")
    else:
        sys.stdout.write("\n".join(capture_lines(data, str(result.log))) + "\n")
    return 0


def result_data(result: IngestResult) -> dict[str, Any]:
    """The capture report as data (shared with the Typer command); ``spooled`` when the
    database was busy and the transcript went to the spool."""
    data = result.report.to_dict()
    if result.spooled is not None:
        data["spooled"] = str(result.spooled)
    return data


def ingest_request(args: Any, stdin: Any, overrides: dict[str, str]) -> IngestRequest:
    """The core API's request from parsed arguments (argparse's or Typer's)."""
    from memctl.api.ingest import IngestRequest

    if getattr(args, "since", None) is not None:
        from memctl.errors import UsageError

        raise UsageError("--since goes with --backfill")
    transcript = None if args.transcript in (None, "-") else str(args.transcript)
    return IngestRequest(
        transcript=transcript,
        stdin=stdin,
        client=args.client,
        session_id=args.session_id,
        agent_id=args.agent_id,
        scope=args.scope,
        tags=tuple(args.tags or ()),
        mode=args.mode or "smart",
        wait=bool(getattr(args, "wait", False)),
        dry_run=bool(getattr(args, "dry_run", False)),
        worker_overrides=overrides,
    )
