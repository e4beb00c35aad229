"""remember, get, list, update, forget, delete, purge."""

from __future__ import annotations

import sys
from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from memctl.api import memory as api
from memctl.api.memory import (
    SORTS,
    Filters,
    PurgeRequest,
    UpdateRequest,
    is_message_id,
)
from memctl.cli.common import (
    JsonOption,
    ScopeOption,
    TagsAlias,
    TagsOption,
    new_typer,
    open_context,
    tags_given,
)
from memctl.cli.fastlane import remember_text
from memctl.cli.memory_out import LIST_FORMATS, show_list, show_memory
from memctl.cli.render import console, memory_table, print_json
from memctl.errors import UsageError
from memctl.model import Memory, counted

if TYPE_CHECKING:
    from memctl.api.memory import Forgotten

app = new_typer()

ListFormat = StrEnum("ListFormat", [(f, f) for f in LIST_FORMATS])  # type: ignore[misc]

CategoryOption = Annotated[
    str | None,
    typer.Option("--category", help="profile, preferences, entities, events, cases or patterns."),
]
ImportanceOption = Annotated[
    float | None, typer.Option("--importance", "-i", help="0 to 1.", min=0.0, max=1.0)
]


@app.command()
def remember(
    ctx: typer.Context,
    text: Annotated[
        str | None, typer.Argument(help="What to remember; '-' or omit for stdin.")
    ] = None,
    category: CategoryOption = None,
    tags: TagsOption = None,
    tags_alias: TagsAlias = None,
    importance: ImportanceOption = None,
    scope: ScopeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store a pinned memory exactly as given (no LLM) and print its id."""
    context = open_context(ctx)
    given = tags_given(tags, tags_alias)
    remember_text(context, text, category, given, importance, scope, as_json)


@app.command()
def get(
    ctx: typer.Context,
    memory_id: Annotated[
        str, typer.Argument(help="A full id, a unique prefix, or SESSION-ID#N (a message).")
    ],
    as_json: JsonOption = False,
) -> None:
    """Show one memory, every field and its relations."""
    show_memory(open_context(ctx), memory_id, as_json)


FilterScope = Annotated[
    str | None,
    typer.Option(
        "--scope",
        "-s",
        help="Only this scope ('project', a path or a project's name); default all.",
    ),
]
KindFilter = Annotated[list[str] | None, typer.Option("--kind", help="episodic, semantic, pinned.")]
CategoryFilter = Annotated[list[str] | None, typer.Option("--category", help="Repeatable.")]
StateFilter = Annotated[
    list[str] | None,
    typer.Option("--state", help="Repeatable; default every state but archived and deleted."),
]
TagFilter = Annotated[str | None, typer.Option("--tag", "-t", help="Only memories with this tag.")]
SinceFilter = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="Since an ISO date or a span like 7d, 12h, 2w, by the memory's own date "
        "(when its source was said).",
    ),
]
StoredClock = Annotated[
    bool, typer.Option("--stored", help="--since counts from when memctl stored it instead.")
]


def _filters(
    scope: str | None,
    kind: list[str] | None,
    category: list[str] | None,
    state: list[str] | None,
    tag: str | None,
    since: str | None,
) -> Filters:
    return Filters(scope, tuple(kind or ()), tuple(category or ()), tuple(state or ()), tag, since)


@app.command("list")
def list_(
    ctx: typer.Context,
    scope: FilterScope = None,
    kind: KindFilter = None,
    category: CategoryFilter = None,
    state: StateFilter = None,
    tag: TagFilter = None,
    since: SinceFilter = None,
    stored: StoredClock = False,
    session: Annotated[
        str | None,
        typer.Option(
            "--session", help="Those distilled from this session (its id or a unique prefix)."
        ),
    ] = None,
    all_scopes: Annotated[
        bool,
        typer.Option(
            "--all-scopes", help="Every scope: list's default already (recall's is the project)."
        ),
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="How many (default list.limit).")
    ] = None,
    sort: Annotated[str, typer.Option(help=f"One of: {', '.join(SORTS)}.")] = "created",
    output: Annotated[
        ListFormat, typer.Option("--format", "-f", help="table, json or ids.")
    ] = ListFormat.table,  # type: ignore[attr-defined]
    as_json: JsonOption = False,
) -> None:
    """List memories, newest first."""
    fmt = "json" if as_json else str(output)
    scope = None if all_scopes else scope
    filters = replace(
        _filters(scope, kind, category, state, tag, since), stored=stored, session=session
    )
    show_list(open_context(ctx), filters, limit, sort, fmt)


@app.command()
def update(
    ctx: typer.Context,
    memory_id: Annotated[
        str, typer.Argument(help="A full id, a unique prefix, or SESSION-ID#N (a message).")
    ],
    text: Annotated[str | None, typer.Option("--text", help="New content (re-embedded).")] = None,
    tags: Annotated[
        list[str] | None,
        typer.Option(
            "--tag", "-t", help="Replace the tags; repeat or separate with commas ('' clears)."
        ),
    ] = None,
    tags_alias: TagsAlias = None,
    importance: ImportanceOption = None,
    category: CategoryOption = None,
    as_json: JsonOption = False,
) -> None:
    """Change a memory's content, tags, importance or category."""
    given = tags_given(tags, tags_alias)
    request = UpdateRequest(
        memory_id, text, None if given is None else tuple(given), importance, category
    )
    memory = api.update(open_context(ctx), request)
    if as_json:
        print_json(memory.to_dict())
    else:
        console.print(f"updated {memory.id}")


@app.command()
def forget(
    ctx: typer.Context,
    memory_id: Annotated[
        str, typer.Argument(help="A full id, a unique prefix, or SESSION-ID#N (a message).")
    ],
    noise: Annotated[
        bool,
        typer.Option(
            "--noise", help="It was noise: ingest drops facts like it from now on (learned)."
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Archive a memory: recall no longer returns it; nothing is deleted."""
    from memctl.integrations.purge import stop_resident_after

    context = open_context(ctx)
    if is_message_id(memory_id) and not noise:
        memory, done = api.forget_message(context, memory_id)
        stop_resident_after(context.settings.home, done)
    else:
        memory = api.forget(context, memory_id, noise)
    if as_json:
        print_json(memory.to_dict())
    elif is_message_id(memory.id):
        console.print(f"forgot message {memory.id} everywhere (`memctl sessions forget`)")
    else:
        console.print(f"archived {memory.id}" + (" and learned it as noise" if noise else ""))


@app.command()
def delete(
    ctx: typer.Context,
    memory_id: Annotated[
        str, typer.Argument(help="A full id, a unique prefix, or SESSION-ID#N (a message).")
    ],
    permanent: Annotated[
        bool, typer.Option("--permanent", help="Remove the row, vector, index entry and relations.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete a memory (soft: state deleted; --permanent removes it; events stay)."""
    from memctl.integrations.purge import stop_resident_after

    context = open_context(ctx)
    if not permanent:
        memory = api.delete(context, memory_id)  # a session message's is refused
    elif is_message_id(memory_id):
        memory, done = api.forget_message(context, memory_id)
        stop_resident_after(context.settings.home, done)
    else:
        memory, done = api.delete_for_good(context, memory_id)
        stop_resident_after(context.settings.home, done)
        _show_deleted(memory, done, as_json)
        return
    if as_json:
        print_json({"id": memory.id, "permanent": permanent})
    elif is_message_id(memory.id):
        console.print(f"forgot message {memory.id} everywhere (`memctl sessions forget`)")
    else:
        console.print(f"deleted {memory.id}")


def _show_deleted(memory: Memory, done: Forgotten, as_json: bool) -> None:
    """What a permanent delete of a memory took."""
    if as_json:
        print_json(
            {
                "id": memory.id,
                "permanent": True,
                "shared": done.shared,
                "memories": done.memories,
                "reverted": done.reverted,
            }
        )
        return
    facts = len(done.memories) - 1
    console.print(
        f"permanently deleted {memory.id}"
        + (f" and {counted(facts, 'fact')} maintain consolidated from it" if facts > 0 else "")
        + (f"; {done.history_note()}" if done.shared else "")
    )


def read_value(text: str) -> str:
    """``text``, or for ``-`` all of standard input (a secret typed on the command line
    stays in the shell's history, and every local user sees it in ``ps``; a private key is
    several lines, each of which leaked with it); bytes that are not UTF-8 are a usage
    error, not a crash."""
    value = text if text != "-" else sys.stdin.read().strip()
    if text == "-" and not value:
        raise UsageError("redact -: give the value on standard input")
    try:  # undecodable bytes reach Python as surrogates, which no stored text holds
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError("redact: the value is not UTF-8 text") from None
    return value


@app.command()
def redact(
    ctx: typer.Context,
    text: Annotated[
        str,
        typer.Argument(
            help="The leaked value, exactly (8 characters or more); - reads it from all of "
            "stdin (out of the shell's history and `ps`; a value of several lines goes whole "
            "and line by line)."
        ),
    ],
    as_json: JsonOption = False,
) -> None:
    """Replace one leaked value (a password, a token) by [REDACTED] everywhere: every
    session's messages, memories, the event log, runs, the WAL, the backups, the
    transcripts waiting in the spool, memctl's logs, the hooks' records and your
    identity file."""
    from memctl.integrations.purge import stop_resident

    context = open_context(ctx)
    done = api.redact(context, read_value(text))
    # The home's resident process is ended: its memory keeps the requests it read (a
    # recall of the value, the usual way to find the leak), and each child it forks gets a
    # copy. The next recall or session start starts another.
    stop_resident(context.settings.home)
    if as_json:
        print_json(done.to_dict())
        return
    quotes = sum(done.quotes.values())
    console.print(
        f"redacted {done.target}: {counted(quotes, 'row')}, "
        f"{counted(len(done.memories), 'memory', 'memories')}, "
        f"{counted(len(done.backups), 'backup')}"
        + (f", {counted(done.spooled, 'spooled transcript')}" if done.spooled else "")
        + (f", {counted(done.logs, 'log')}" if done.logs else "")
        + (", your identity file" if done.identity else "")
        + " rewritten"
        + (f", {counted(done.pending, 'pending transcript mark')} removed" if done.pending else "")
        + ("" if done.wal_emptied else f"; {done.file_note()}")
        + (f"; {done.history_note()}" if done.shared else "")
        + "".join(
            f"; {path} holds it still: it came with the repository, edit it there"
            for path in done.identity_left
        )
    )


@app.command()
def purge(
    ctx: typer.Context,
    scope: FilterScope = None,
    kind: KindFilter = None,
    category: CategoryFilter = None,
    state: StateFilter = None,
    tag: TagFilter = None,
    since: SinceFilter = None,
    permanent: Annotated[bool, typer.Option("--permanent", help="Remove rows for good.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would go.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete every memory matching the filters (at least one filter is required)."""
    from memctl.integrations.purge import stop_resident

    filters = _filters(scope, kind, category, state, tag, since)
    context = open_context(ctx)
    victims = api.purge(context, PurgeRequest(filters, dry_run=True))
    if not dry_run and victims and not yes:
        if not typer.confirm(
            f"{'Permanently delete' if permanent else 'Delete'} "
            f"{counted(len(victims), 'memory', 'memories')}?",
            err=True,
        ):
            raise UsageError("purge cancelled; nothing was deleted")
    if not dry_run:
        victims = api.purge(context, PurgeRequest(filters, permanent=permanent))
    if permanent and victims and not dry_run:  # their text went: as a forget's does
        stop_resident(context.settings.home)
    if as_json:
        print_json(
            {
                "dry_run": dry_run,
                "permanent": permanent,
                "ids": [m.id for m in victims],
                "count": len(victims),
            }
        )
        return
    if victims:
        console.print(memory_table(victims, title="would delete" if dry_run else "deleted"))
    console.print(
        f"{counted(len(victims), 'memory', 'memories')} {'would be ' if dry_run else ''}deleted"
    )
