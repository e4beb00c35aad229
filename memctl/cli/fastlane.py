"""The hook's ingest, a plain recall and remember without Typer: ingest's options
(defined once, shared with the Typer command), argparse parsers, the fast path itself
and its report.

Typer, click, rich and pydantic take about a quarter of a second to import,
more than the hook's whole budget; ``memctl.cli.entry`` sends a plain ``memctl
[--home DIR] [-c K=V] ingest ...`` here, a ``recall`` with only the options
``recall_parser`` takes (no --explain or --why-not), and a ``remember`` (no --help);
anything they do not take goes to Typer, which says what is wrong. ``memctl.cli.ingest``
builds its Typer options from ``INGEST_OPTIONS`` and ``memctl.cli.memory``'s remember runs
``remember_text``; tests check that both parsers take the same options, and that the
fast lane prints what the Typer command prints, errors and exit codes included.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memctl.errors import InputError, UsageError
from memctl.integrations.resident import split_globals
from memctl.model import QUERY_LIMIT, TRANSCRIPT_CLIENTS, counted

if TYPE_CHECKING:
    from memctl.api.config import Context
    from memctl.api.ingest import IngestRequest, IngestResult


@dataclass(frozen=True)
class Opt:
    """One option of `memctl ingest`, as both its parsers take it."""

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
        "Scope of the session and its memories: 'project' (default: the project of the "
        "directory the session ran in, else the current one), 'global', or a name.",
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
FILE_HELP = "Transcript file, as with --transcript."  # `memctl ingest FILE`
SLOW_FLAGS = {"--wait", "--dry-run", "--backfill", "-h", "--help"}


class Refused(Exception):
    """This command line is not for the fast lane."""


# The width of the fast lane's help formatter: its parsers print no help and no usage
# (-h goes to Typer, an error to Refused), so it is fixed rather than the terminal's, which
# argparse finds through shutil (loading the compression modules: ~3 ms of a recall).
UNPRINTED_WIDTH = 80


class _Unprinted(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=UNPRINTED_WIDTH)


class Parser(argparse.ArgumentParser):
    def __init__(self, **options: Any) -> None:
        super().__init__(formatter_class=_Unprinted, **options)

    def error(self, message: str) -> Any:
        raise Refused(message)


def ingest_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="memctl ingest", add_help=False, allow_abbrev=False)
    parser.add_argument("file", nargs="?", default=None, metavar="FILE", help=FILE_HELP)
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
    """(global options, command, the command's arguments) of a command line; Refused when
    an option other than a global one comes first, a ``-c`` is not KEY=VALUE (the full
    parser says what is wrong with it), or a short option is joined to its value by '='
    (``-s=global``: click reads the value "=global", argparse "global")."""
    home, config, rest = split_globals(argv)
    odd = [v for v in config if "=" not in v] + [w for w in rest[:1] if w.startswith("-")]
    odd += [w for w in rest if w[:1] == "-" and w[1:2] not in ("-", "=") and "=" in w]
    if odd:
        raise Refused(odd[0])
    return {"home": home, "config": config}, (rest[0] if rest else None), rest[1:]


def recall_args(argv: list[str]) -> argparse.Namespace:
    """The arguments of a ``memctl recall`` for the fast lane; Refused when the command
    line has anything ``recall_parser`` does not take, or a --limit out of its range."""
    args = recall_parser().parse_args(argv)
    if args.limit is not None and not RECALL_LIMITS[0] <= args.limit <= RECALL_LIMITS[1]:
        raise Refused("--limit")  # Typer's message says the range
    return args


def recall_parser() -> argparse.ArgumentParser:
    """The options of ``memctl recall`` the fast lane takes (``memctl.cli.recall`` has
    them all, with their help)."""
    parser = Parser(prog="memctl recall", add_help=False, allow_abbrev=False)
    parser.add_argument("query", nargs="?")
    parser.add_argument("--limit", "-n", type=int)
    parser.add_argument("--scope", "-s")
    parser.add_argument("--all-scopes", action="store_true")
    parser.add_argument("--format", "-f", dest="output", default="table")
    parser.add_argument("--json", dest="as_json", action="store_true")
    parser.add_argument("--budget")
    parser.add_argument("--as-of")
    parser.add_argument("--history", action="store_true")
    parser.add_argument("--sessions", action="store_true", default=True)
    parser.add_argument("--no-sessions", dest="sessions", action="store_false")
    parser.add_argument("--clear-only", action="store_true")
    parser.add_argument("--mode", "-m")
    parser.add_argument("--no-touch", action="store_true")
    return parser


RECALL_LIMITS = (1, 1000)  # --limit's range (the Typer command's min and max)


def recall(options: dict[str, Any], args: argparse.Namespace) -> int:
    """``memctl recall`` with the options of ``recall_parser``, as the Typer command runs it."""
    from memctl.api.config import Context
    from memctl.api.recall import RecallRequest, asking_session, check_choice
    from memctl.cli.recall_out import FORMATS, parse_budget, show

    fmt = "json" if args.as_json else check_choice(args.output, FORMATS, "format")
    tokens = parse_budget(args.budget)
    with Context(settings(options)) as ctx:
        request = RecallRequest(
            query=text_argument(args.query, "query"),
            limit=args.limit,
            scope=args.scope,
            all_scopes=args.all_scopes,
            mode=args.mode,
            budget=tokens,
            context=fmt == "context",
            as_of=args.as_of,
            history=args.history,
            sessions=args.sessions,
            clear_only=args.clear_only,
            touch=not args.no_touch,
            session=asking_session(os.environ),
        )
        show(ctx, request, fmt, False)
    if options.get("start_resident") and ctx.settings.recall_resident:
        from memctl.integrations.resident import start

        start(ctx.settings.home)
    return 0


def remember_args(argv: list[str]) -> argparse.Namespace:
    """The arguments of a ``memctl remember`` for the fast lane; Refused when the command
    line has anything ``remember_parser`` does not take, a text starting with a dash (click
    reads it as an option) or an --importance outside 0..1 (Typer's message says the range)."""
    args = remember_parser().parse_args(argv)
    if args.text not in (None, "-") and args.text.startswith("-"):
        raise Refused(args.text)
    if args.importance is not None and not 0 <= args.importance <= 1:
        raise Refused("--importance")
    return args


def remember_parser() -> argparse.ArgumentParser:
    """The options of ``memctl remember`` (``memctl.cli.memory.remember`` has their help)."""
    parser = Parser(prog="memctl remember", add_help=False, allow_abbrev=False)
    parser.add_argument("text", nargs="?")
    parser.add_argument("--category")
    parser.add_argument("--tag", "-t", dest="tags", action="append")
    parser.add_argument("--tags", dest="tags_alias", action="append")
    parser.add_argument("--importance", "-i", type=float)
    parser.add_argument("--scope", "-s")
    parser.add_argument("--json", dest="as_json", action="store_true")
    return parser


def remember(options: dict[str, Any], args: argparse.Namespace) -> int:
    """``memctl remember`` with the options of ``remember_parser``."""
    from memctl.api.config import Context

    with Context(settings(options)) as ctx:
        tags = tags_given(args.tags, args.tags_alias)
        given = (args.text, args.category, tags, args.importance, args.scope)
        remember_text(ctx, *given, args.as_json)
    return 0


def remember_text(
    ctx: Context,
    text: str | None,
    category: str | None,
    tags: list[str] | None,
    importance: float | None,
    scope: str | None,
    as_json: bool,
) -> None:
    """Store the text (the argument, or stdin) as a pinned memory and print its id, or its
    JSON; a text already stored says so (the fast lane's and the Typer command's body)."""
    from memctl.api.memory import MAX_CONTENT_CHARS, RememberRequest
    from memctl.api.memory import remember as api_remember
    from memctl.cli.render import one_line, print_json, warn

    text = text_argument(text, "memory text", MAX_CONTENT_CHARS)
    found = api_remember(ctx, RememberRequest(text, category, tuple(tags or ()), importance, scope))
    if found.existing:
        warn(f"already remembered in this scope: {found.memory.id} (not stored again)")
    elif found.redacted:  # the text as stored is not the text given
        warn(
            f"stored without {counted(found.redacted, 'private or secret part')}: "
            "[REDACTED] instead"
        )
    for old in found.replaced:
        said = one_line(old.content, 80)
        warn(f"replaces {old.id} (now superseded; `memctl undo` brings it back): {said}")
    if as_json:
        replaced = [old.id for old in found.replaced]
        print_json({**found.memory.to_dict(), "existing": found.existing, "replaced": replaced})
    else:
        sys.stdout.write(found.memory.id + "\n")


def tags_given(*spellings: list[str] | None) -> list[str] | None:
    """The tags of ``--tag`` and its alias together; None when neither was given."""
    given = [spelling for spelling in spellings if spelling is not None]
    return None if not given else [tag for spelling in given for tag in spelling]


def text_argument(text: str | None, what: str = "text", limit: int = QUERY_LIMIT) -> str:
    """The argument, or stdin when it is '-' or absent and stdin is not a terminal; refused
    at once, before any work, when it is over ``limit`` characters."""
    if text is None or text == "-":
        text = _stdin_text(what, limit)
    if len(text) > limit:
        raise InputError(f"the {what} is {len(text):,} characters; the limit is {limit:,}")
    return text


def _stdin_text(what: str, limit: int) -> str:
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError(f"give the {what} as an argument or on standard input")
    data = sys.stdin.buffer.read(4 * limit + 4)  # at most 4 bytes a character, and 1 more
    codec = None
    if b"\x00" in data:  # text with a UTF-16/32 byte order mark (PowerShell's pipe) has NULs
        from memctl.api.ingest import wide_codec

        codec = wide_codec(data)
        if codec is None:
            raise InputError("standard input holds binary data, not text")
    text = data.decode(codec or "utf-8-sig", errors="replace")
    if len(text) > limit or sys.stdin.buffer.read(1):
        raise InputError(f"the {what} on standard input is over the limit of {limit:,} characters")
    return text


def settings(options: dict[str, Any]) -> Any:
    """The settings the global options (--home, -c) select."""
    from memctl.api.config import settings_from_flags

    return settings_from_flags(options["home"], options["config"])


def capture_lines(report: dict[str, Any], log: str | None, waited: bool = False) -> list[str]:
    """The fast path's report for people, as plain lines (shared with the Typer command)."""
    if report.get("spooled"):
        return [
            f"the database is busy: {report['source']} was kept in {report['spooled']}; "
            "the next `memctl ingest` or `memctl maintain` stores it"
        ]
    if report.get("left"):
        return [
            f"the database is busy: {report['source']} was not read; ingest it again later "
            "(a hook's transcript: the next hook, the worker or `memctl maintain` does)"
        ]
    if report.get("forgotten_at"):
        return [
            f"session {report['session_id']} ({report['client']}) was forgotten on "
            f"{report['forgotten_at'][:10]} (`memctl sessions forget`): nothing stored again"
        ]
    if not report["session_id"] and report["problems"]:  # no session stored, and why
        return list(report["problems"])
    redacted = report["redactions"]
    lines = [
        f"session {report['session_id']} ({report['client']}): "
        f"{counted(report['messages_read'], 'message')} read, {report['messages_new']} new, "
        f"{report['messages_total']} stored in all"
    ]
    if report.get("scope_unchanged"):
        lines.append(
            f"nothing new: the session stays filed under {report['scope_unchanged']} (-s files "
            "only a transcript with new messages)"
        )
    if report.get("scope_from") == "here":
        lines.append(
            f"filed under the project memctl ran in, {report['here']} ({report['scope']}): the "
            "transcript names no directory (ingest it with `-s SCOPE`, or from the project's "
            "directory, to file it under another)"
        )
    if redacted["secrets"] or redacted["private_blocks"] or redacted["memctl_context_blocks"]:
        kinds = ", ".join(redacted["secrets_by_kind"])
        lines.append(
            f"redacted: {counted(redacted['secrets'], 'secret')}{f' ({kinds})' if kinds else ''}, "
            f"{counted(redacted['private_blocks'], 'private block')}, "
            f"{counted(report['private_messages_dropped'], 'all-private message')} dropped, "
            f"{counted(redacted['memctl_context_blocks'], 'memctl-context block')} removed"
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
    from memctl.api.config import Context, split_assignments
    from memctl.api.ingest import ingest as api_ingest

    request = ingest_request(args, sys.stdin, split_assignments(options["config"]))
    with Context(settings(options)) as ctx:
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
    database was busy and the transcript went to the spool, ``left`` when it was busy
    before the transcript was read."""
    data = result.report.to_dict()
    if result.spooled is not None:
        data["spooled"] = str(result.spooled)
    if result.left:
        data["left"] = True
    return data


def ingest_request(args: Any, stdin: Any, overrides: dict[str, str]) -> IngestRequest:
    """The core API's request from parsed arguments (argparse's or Typer's)."""
    from memctl.api.ingest import IngestRequest

    if getattr(args, "since", None) is not None:
        raise UsageError("--since goes with --backfill")
    given = getattr(args, "file", None)
    if given is not None and args.transcript is not None:
        raise UsageError("give the transcript once: as FILE or with --transcript, not both")
    named = args.transcript if given is None else given
    transcript = None if named in (None, "-") else str(named)
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
