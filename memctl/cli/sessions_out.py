"""``sessions list``'s and ``sessions show``'s output, without Typer: the commands
(``memctl.cli.sessions``) and the fast lane (``memctl.cli.entry.run_fast``) parse their
options and hand the request here; the fast lane's parsers are the Typer commands'
options (``memctl.cli.sessions`` has their help)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from memctl.api import sessions as api
from memctl.cli.fastlane import Parser, Refused, settings
from memctl.cli.render import SESSION_ID_WIDTH, fit, middle, print_json, shown_of
from memctl.model import counted

if TYPE_CHECKING:
    from memctl.api.config import Context
    from memctl.api.sessions import SessionRow, Where

ROW_WIDTH = 76  # a title or digest line under its session: 80 columns with the indent


def show_sessions(context: Context, where: Where, limit: int, as_json: bool) -> None:
    """The latest sessions ``where`` selects, newest first, and what it left out."""
    from memctl.api.projects import project_labels

    rows = api.list_sessions(context, where, limit)
    more, files = api.elsewhere(context, where), api.imported(context, where)
    labels = project_labels(context, [row.scope for row in rows])
    if as_json:  # the scope stays the id; the project is how a person reads it
        print_json([{**row.__dict__, "project": labels[row.scope]} for row in rows])
        return
    from memctl.cli.render import console

    labels = labels if where.all_scopes else {}
    for row in rows:
        console.print(_session_line(row, labels.get(row.scope, "")), style="bold")
        for line in (row.title, row.digest.split("\n")[-1]):  # cut by cells: CJK is wide
            if line:
                console.print(
                    f"  {api.one_line(line, ROW_WIDTH)}", no_wrap=True, overflow="ellipsis"
                )
    if rows:
        console.print(shown_of(len(rows), api.count(context, where), api.COUNT_AT_MOST, "session"))
    else:
        console.print("no sessions " + ("match" if where.all_scopes else "stored in this project"))
    if files:
        console.print(f"{counted(files, 'imported file')} left out: --client import lists them")
    if more:
        console.print(f"{more:,} more in other projects: --all-scopes lists them")
    elif not rows and (where.since or where.until):
        other = "when memctl stored them" if where.clock == "stored" else "their own time"
        console.print(f"(--since/--until went by {other}; --stored switches)")


def _session_line(row: SessionRow, project: str) -> str:
    """``id  date time  client  N msgs  project``: 80 columns at most."""
    when = row.at[:16].replace("T", " ")
    shown = row.id[:SESSION_ID_WIDTH]
    line = f"{shown:<{SESSION_ID_WIDTH}}  {when}  {row.client}  {counted(row.message_count, 'msg')}"
    # a project is cut in the middle: its directory's name shows
    return f"{line}  {middle(' '.join(project.split()), 78 - len(line))}" if project else line


def show_passage(
    context: Context, session_id: str, page: int, page_size: int, as_json: bool
) -> None:
    """A page of a session's transcript as a person reads it."""
    passage = api.show(context, session_id, page, page_size)
    if as_json:
        print_json(passage.to_dict())
        return
    sys.stdout.write(fit(passage.text()) + "\n")
    if passage.last < passage.total:
        sys.stdout.write(f"(more: --page {page + 1})\n")


def list_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="memctl sessions list", add_help=False, allow_abbrev=False)
    parser.add_argument("--scope", "-s")
    parser.add_argument("--all-scopes", action="store_true")
    parser.add_argument("--client")
    parser.add_argument("--since")
    parser.add_argument("--until")
    parser.add_argument("--stored", action="store_true")
    parser.add_argument("--limit", "-n", type=int, default=20)
    parser.add_argument("--json", dest="as_json", action="store_true")
    return parser


def show_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="memctl sessions show", add_help=False, allow_abbrev=False)
    parser.add_argument("session_id")
    parser.add_argument("--page", "-p", type=int, default=1)
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--json", dest="as_json", action="store_true")
    return parser


def sessions_args(argv: list[str]) -> argparse.Namespace:
    """The arguments of a ``memctl sessions list|show`` (``argv`` after ``sessions``);
    Refused for any other subcommand, a number below 1 (Typer's message says the range)
    or a session id starting with a dash (click reads it as an option)."""
    if argv[:1] == ["list"]:
        args = list_parser().parse_args(argv[1:])
        numbers = [args.limit]
    elif argv[:1] == ["show"]:
        args = show_parser().parse_args(argv[1:])
        numbers = [args.page, args.page_size]
        if args.session_id.startswith("-"):
            raise Refused(args.session_id)
    else:
        raise Refused(" ".join(argv[:1]))
    if min(numbers) < 1:
        raise Refused("a number below 1")
    args.subcommand = argv[0]
    return args


def sessions_fast(options: dict[str, Any], args: argparse.Namespace) -> int:
    """``memctl sessions list|show`` with the options of ``sessions_args``."""
    from memctl.api.config import Context
    from memctl.api.sessions import Where

    with Context(settings(options)) as ctx:
        if args.subcommand == "show":
            show_passage(ctx, args.session_id, args.page, args.page_size, args.as_json)
        else:
            clock = "stored" if args.stored else "session"
            where = Where(
                args.scope, args.all_scopes, args.client, args.since, args.until, clock=clock
            )
            show_sessions(ctx, where, args.limit, args.as_json)
    return 0
