"""sessions list|show|grep|expand: the stored transcripts, read back."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memctl.api import sessions as api
from memctl.api.projects import project_labels
from memctl.api.sessions import Forgotten, GrepMatch, SessionRow, Where
from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import console, fit, middle, print_json
from memctl.errors import UsageError

app = new_typer()
group = new_typer()
app.add_typer(
    group, name="sessions", help="The stored sessions: list, show, grep, expand and forget them."
)

ScopeFilter = Annotated[
    str | None,
    typer.Option(
        "--scope",
        "-s",
        help="'project' (the current one and global, default), a project's path or name, "
        "or a scope.",
    ),
]
AllScopes = Annotated[bool, typer.Option("--all-scopes", help="Every project.")]
ClientFilter = Annotated[
    str | None, typer.Option("--client", help="Only this client (claude-code, codex, ...).")
]
Since = Annotated[
    str | None,
    typer.Option(
        "--since", help="From this time (an ISO date or a span like 7d), by the session's own time."
    ),
]
Until = Annotated[str | None, typer.Option("--until", help="Before this time (ISO date or span).")]
Stored = Annotated[
    bool,
    typer.Option("--stored", help="--since/--until count from when memctl stored the session."),
]
ROW_WIDTH = 76  # a title or digest line under its session: 80 columns with the indent


@group.command("list")
def list_(
    ctx: typer.Context,
    scope: ScopeFilter = None,
    all_scopes: AllScopes = False,
    client: ClientFilter = None,
    since: Since = None,
    until: Until = None,
    stored: Stored = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many.")] = 20,
    as_json: JsonOption = False,
) -> None:
    """The latest sessions, newest first by their own time: id, date, client, messages,
    then the title and the digest's last line (imported files' text: --client import)."""
    where = Where(scope, all_scopes, client, since, until, clock="stored" if stored else "session")
    context = open_context(ctx)
    rows = api.list_sessions(context, where, limit)
    more, files = api.elsewhere(context, where), api.imported(context, where)
    labels = project_labels(context, [row.scope for row in rows])
    if as_json:  # the scope stays the id; the project is how a person reads it
        print_json([{**row.__dict__, "project": labels[row.scope]} for row in rows])
        return
    labels = labels if all_scopes else {}
    for row in rows:
        console.print(_session_line(row, labels.get(row.scope, "")), style="bold")
        for line in (row.title, row.digest.split("\n")[-1]):  # cut by cells: CJK is wide
            if line:
                console.print(
                    f"  {api.one_line(line, ROW_WIDTH)}", no_wrap=True, overflow="ellipsis"
                )
    if not rows:
        console.print("no sessions " + ("match" if all_scopes else "stored in this project"))
    if files:
        console.print(f"{files:,} imported files left out: --client import lists them")
    if more:
        console.print(f"{more:,} more in other projects: --all-scopes lists them")
    elif not rows and (since or until):
        other = "when memctl stored them" if stored else "their own time"
        console.print(f"(--since/--until went by {other}; --stored switches)")


def _session_line(row: SessionRow, project: str) -> str:
    """``id  date time  client  N msgs  project``: 80 columns at most."""
    when = row.at[:16].replace("T", " ")
    line = f"{row.id[:12]:<12}  {when}  {row.client}  {row.message_count} msgs"
    # a project is cut in the middle: its directory's name shows
    return f"{line}  {middle(' '.join(project.split()), 78 - len(line))}" if project else line


@group.command()
def show(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="A session id or a unique prefix.")],
    page: Annotated[int, typer.Option("--page", "-p", min=1, help="Page number, from 1.")] = 1,
    page_size: Annotated[int, typer.Option("--page-size", min=1, help="Messages per page.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """A session's transcript as a person reads it: turns, tool notes, sub-agent threads."""
    passage = api.show(open_context(ctx), session_id, page, page_size)
    if as_json:
        print_json(passage.to_dict())
        return
    sys.stdout.write(fit(passage.text()) + "\n")
    if passage.last < passage.total:
        sys.stdout.write(f"(more: --page {page + 1})\n")


@group.command()
def grep(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words to find (operators and quotes are words).")],
    scope: ScopeFilter = None,
    all_scopes: AllScopes = False,
    client: ClientFilter = None,
    since: Since = None,
    until: Until = None,
    role: Annotated[
        str | None, typer.Option("--role", help="Only user, assistant, tool or system messages.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many.")] = 10,
    around: Annotated[
        int, typer.Option("--context", "-C", min=0, help="Messages shown either side.")
    ] = 1,
    as_json: JsonOption = False,
) -> None:
    """Full-text search over every stored message, with the matching line and its neighbours."""
    where = Where(scope, all_scopes, client, since, until, role)
    matches = api.grep(open_context(ctx), query, where, limit, around)
    if as_json:
        print_json([m.to_dict() for m in matches])
        return
    if not matches:
        console.print("no stored message matches (--all-scopes looks everywhere)")
    for match in matches:  # its heading on one line, the title cut by cells; the rest folded
        heading, _, messages = _grep_text(match).partition("\n")
        console.print(heading, no_wrap=True, overflow="ellipsis")
        console.print(fit(messages), soft_wrap=True)


def _grep_text(match: GrepMatch) -> str:
    hit = match.hit
    title = f' "{api.one_line(hit.title, 50)}"' if hit.title else ""
    lines = [f"{match.ref}  {hit.client}  {hit.created_at[:16].replace('T', ' ')}{title}"]
    lines += [f"   [{m.seq}] {m.role}: {api.first_line(m.content)}" for m in match.before]
    lines += [f"  >[{hit.seq}] {hit.role}: {line}" for line in match.lines]
    lines += [f"   [{m.seq}] {m.role}: {api.first_line(m.content)}" for m in match.after]
    return "\n".join(lines)


@group.command()
def expand(
    ctx: typer.Context,
    ref: Annotated[
        str, typer.Argument(help="A memory id (or prefix), a digest's id, or SESSION#A-B.")
    ],
    around: Annotated[
        int, typer.Option("--context", "-C", min=0, help="Turns shown either side.")
    ] = 2,
    as_json: JsonOption = False,
) -> None:
    """The raw messages behind a memory or a range, with the turns around them (marked >);
    a memory distilled from several sessions' messages opens each, in order."""
    passages = api.expand(open_context(ctx), ref, around)
    if as_json:  # the first passage's fields, as before more than one could be; then all
        print_json({**passages[0].to_dict(), "passages": [p.to_dict() for p in passages]})
    else:
        sys.stdout.write(fit("\n\n".join(p.text() for p in passages)) + "\n")


@group.command()
def forget(
    ctx: typer.Context,
    ref: Annotated[
        str, typer.Argument(help="A session id (or unique prefix), or SESSION#N: one message.")
    ],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Forget a session, or one message, everywhere: its text, the memories distilled from
    it, every quote of it in the store, its free pages, the WAL and the backups. It is
    never captured again. Nothing can bring it back."""
    context = open_context(ctx)
    if not yes and not typer.confirm(f"Forget {ref} everywhere, for good?", err=True):
        raise UsageError("forget cancelled; nothing was changed")
    done = api.forget(context, ref)
    if as_json:
        print_json(done.to_dict())
        return
    console.print(fit(forgotten_line(done)), soft_wrap=True)


def forgotten_line(done: Forgotten) -> str:
    """What a forget or a redact took out, in one line (and a warning when the WAL could
    not be emptied)."""
    quotes = sum(done.quotes.values())
    line = (
        f"forgot {done.target}: {done.messages} messages, {len(done.memories)} memories, "
        f"{quotes} quotes, {len(done.backups)} backups rewritten"
    )
    if not done.wal_emptied:
        line += (
            "; another process is reading the store, so its WAL still holds old pages until "
            "it closes (run `memctl maintain` then)"
        )
    return line
