"""sessions list|show|grep|expand: the stored transcripts, read back."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from memctl.api import sessions as api
from memctl.api.sessions import GrepMatch, Where
from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import console, fit, print_json
from memctl.cli.sessions_out import show_passage, show_sessions
from memctl.errors import UsageError
from memctl.model import counted

if TYPE_CHECKING:
    from memctl.api.config import Context
    from memctl.api.sessions import Forgotten

app = new_typer()
group = new_typer()
FORGET_TITLE = 50  # characters of its title a forget's question names a session by
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
    show_sessions(open_context(ctx), where, limit, as_json)


@group.command()
def show(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="A session id or a unique prefix.")],
    page: Annotated[int, typer.Option("--page", "-p", min=1, help="Page number, from 1.")] = 1,
    page_size: Annotated[int, typer.Option("--page-size", min=1, help="Messages per page.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """A session's transcript as a person reads it: turns, tool notes, sub-agent threads."""
    show_passage(open_context(ctx), session_id, page, page_size, as_json)


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
    partial = next((m for m in matches if not m.every_word), None)
    for match in matches:  # its heading on one line, the title cut by cells; the rest folded
        if match is partial:  # not to be read as the words found: after a forget, above all
            console.print(
                "messages holding only some of the words:"
                if matches[0].every_word
                else "no stored message holds every word; messages holding some of them:"
            )
        heading, _, messages = _grep_text(match).partition("\n")
        console.print(heading, no_wrap=True, overflow="ellipsis")
        console.print(fit(messages), soft_wrap=True)


def _grep_text(match: GrepMatch) -> str:
    hit = match.hit
    title = f' "{api.one_line(hit.title, 50)}"' if hit.title else ""
    lines = [f"{match.ref}  {hit.client}  {hit.created_at[:16].replace('T', ' ')}{title}"]
    lines += [f"   [{m.seq}] {api.brief_line(m)}" for m in match.before]
    who = api.said_by(hit.speaker, hit.role)
    lines += [f"  >[{hit.seq}] {who}: {line}" for line in match.lines]
    lines += [f"   [{m.seq}] {api.brief_line(m)}" for m in match.after]
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
    with_copies: Annotated[
        bool,
        typer.Option(
            "--with-copies",
            help="Also forget the verbatim copies of its messages in other sessions "
            "(a resumed or forked conversation repeats them).",
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    reads: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="session or message: what REF is, when it names both a session "
            "(an id holding '#') and a message of another.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Forget a session, or one message, everywhere: its text, the memories distilled from
    it (a session's: those its assistant stored too), every quote of it in the store, its
    free pages, the WAL and the backups. It is
    never captured again. Nothing can bring it back. A fact another session states too
    stays, that session its source (named). Other sessions holding its messages
    verbatim (a resume or a fork) are named; --with-copies forgets those messages there."""
    from memctl.integrations.purge import stop_resident_after

    context = open_context(ctx)
    if not yes and not typer.confirm(_forget_question(context, ref, with_copies, reads), err=True):
        raise UsageError("forget cancelled; nothing was changed")
    done = api.forget(context, ref, with_copies, reads)
    stop_resident_after(context.settings.home, done)
    if as_json:
        print_json(done.to_dict())
        return
    console.print(fit(forgotten_line(done)), soft_wrap=True)
    if done.copies:
        console.print(fit(copies_line(done)), soft_wrap=True)


def _forget_question(context: Context, ref: str, with_copies: bool, reads: str | None) -> str:
    copies = api.copies(context, ref, reads)  # first: it refuses a malformed SESSION#N
    what = f"Forget {_forget_subject(context, ref, reads)} everywhere"
    if not copies:
        return f"{what}, for good?"
    named = ", ".join(copies)
    if with_copies:
        return f"{what}, and its copied messages in {named}, for good?"
    return (
        f"{named} also hold{'s' if len(copies) == 1 else ''} copies of its messages, which "
        f"stay there unless you add --with-copies. {what}, for good?"
    )


def _forget_subject(context: Context, ref: str, reads: str | None) -> str:
    """The session (or message) a forget would take, as found, not as typed: its id,
    client, day, messages and title ("Forget 0514" named nothing a person could check)."""
    session, seq = api.forget_target(context, ref, reads)
    if session.forgotten_at:
        about = f"forgotten on {session.forgotten_at[:10]} already"
    else:
        about = counted(session.message_count, "message")
        about += f': "{api.one_line(session.title, FORGET_TITLE)}"' if session.title else ""
    subject = f"{api.heading(session)} ({about})"
    return subject if seq is None else f"message {seq} of {subject}"


def copies_line(done: Forgotten) -> str:
    """The other sessions holding copies of the forgotten messages, in one line."""
    named = ", ".join(f"{session_id} ({count})" for session_id, count in done.copies.items())
    sessions = counted(len(done.copies), "other session")
    if done.copies_forgotten:
        return f"also forgot its messages copied in {sessions} (messages): {named}"
    return (
        f"{sessions} hold{'s' if len(done.copies) == 1 else ''} copies of its messages "
        f"(a resume or fork; messages): {named}; "
        "they stay there (`memctl sessions forget ID` forgets such a session whole)"
    )


def forgotten_line(done: Forgotten) -> str:
    """What a forget took out, in one line (and a warning when the WAL could not be
    emptied, or a memory had been shared through sync)."""
    quotes = sum(done.quotes.values())
    line = (
        f"forgot {done.target}: {counted(done.messages, 'message')}, "
        f"{counted(len(done.memories), 'memory', 'memories')}, {counted(quotes, 'quote')}, "
        f"{counted(len(done.backups), 'backup')} rewritten"
    )
    if done.kept:
        named = ", ".join(f"{m[:8]} ({s[:8]})" for m, s in done.kept.items())
        line += (
            f"; kept {counted(len(done.kept), 'memory', 'memories')} another session also "
            f"states, now its source: {named}"
        )
    return "; ".join(filter(None, [line, done.file_note(), done.history_note()]))
