"""sync (with init and status), promote and unpromote."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import console, item_progress, print_json, say, update_items, warn
from memctl.errors import UsageError
from memctl.model import counted

if TYPE_CHECKING:
    from memctl.api.sync import SyncResult, Trust

app = new_typer(invoke_without_command=True)
# What a file naming this machine that its own key did not sign is (sync/trust.py)
UNSIGNED_OWN = (
    "its key did not sign: a teammate's, pushed under this machine's id (kept, recalled "
    "when asked, never at session start)"
)
share = new_typer()
IdsArgument = Annotated[
    list[str] | None, typer.Argument(help="Memory ids (full or unique prefixes).", metavar="ID")
]


@app.callback(no_args_is_help=False)
def sync(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would come in and go out; change nothing.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Share memories through a git repository: pull, import, export, push."""
    if ctx.invoked_subcommand is not None:
        return
    from memctl.api import sync as api  # git, YAML and the sync stages: only when syncing

    with item_progress(disable=as_json or not console.is_terminal) as bar:
        task = bar.add_task("syncing", total=None, rate="")
        shown = {"stage": ""}

        def show(stage: str, done: int, total: int) -> None:
            if stage != shown["stage"]:  # a new step: its own count, rate and time left
                shown["stage"] = stage
                bar.reset(task, description=stage, total=total or None, rate="")
            if total:
                update_items(bar, task, done, total, stage.split()[-1])

        memctl = open_context(ctx)
        result = api.sync(memctl, api.SyncRequest(dry_run=dry_run), show)
    if as_json:
        print_json(result.to_dict())
        return
    _print_sync(result, dry_run)
    came = result.came_in
    if (came.get("created") or came.get("updated")) and not dry_run:
        untrusted(api.trust(memctl, [], []), waiting=bool(came.get("created")))


def _print_sync(result: SyncResult, dry_run: bool) -> None:
    """What a sync did (or would do): the files refused or withheld, then one line of counts."""
    from memctl.api.sync import bad_file_lines

    for line in bad_file_lines(result.bad_files):
        warn(line)
    for memory_id, why in result.refused:
        warn(f"refused {memory_id[:12]}: {why}")
    if result.withheld:
        warn(
            f"withheld {counted(len(result.withheld), 'memory', 'memories')} whose sync "
            "import was undone here"
        )
    came, went = result.came_in, result.went_out
    if result.migrated:
        moved = "would move" if dry_run else "moved"
        say(f"{moved} the repository from sync format 1.0 to 2.0 (one commit)")
    if dry_run:
        for what, memory_id in result.incoming:
            say(f"in   {what:<8} {memory_id}")
        for what, path in result.outgoing:
            say(f"out  {what:<8} {path}")
    verb = "would " if dry_run else ""
    say(
        f"{result.remote}: {verb}import {came.get('created', 0)} new, "
        f"{came.get('updated', 0)} updated, {counted(came.get('conflicts', 0), 'conflict')} "
        f"kept as events, {came.get('unshared', 0)} no longer shared"
        + (
            f", {came['forgotten']} forgotten as another machine forgot them"
            if "forgotten" in came
            else ""
        )
        + (
            f", {counted(came['redacted'], 'text')} another machine redacted taken out here"
            if "redacted" in came
            else ""
        )
        + f"; {verb}write "
        f"{counted(went.get('written', 0), 'file')}, remove {went.get('removed', 0)}; "
        f"{counted(len(result.bad_files), 'bad file')} skipped"
        + ("" if dry_run or result.readonly else (", pushed" if result.pushed else ""))
        + (f" (run {result.run_id[:12]})" if result.run_id and not dry_run else "")
    )


def untrusted(found: Trust, waiting: bool = True) -> None:
    """Say, once memories came in (``waiting``: new ones), that those of a machine not in
    sync.trust open no session (a person syncing their own second machine expects them at
    the next start), and, once memories came in or changed, that files naming a machine
    whose key is held here (this one's own too) came in unsigned by it."""
    if found.unsigned_own:
        say(f"{counted(found.unsigned_own, 'file')} naming this machine {UNSIGNED_OWN}")
    for host in (h for h in found.hosts if h.unsigned):
        say(
            f"{counted(host.unsigned, 'file')} naming host {host.id[:8]} its key did not sign: "
            "kept as a teammate's (or that machine's memctl signs no files yet)"
        )
    untrusting = [h for h in found.hosts if not h.trusted and h.memories] if waiting else []
    if untrusting:
        named = ", ".join(f"{h.id[:8]}: {h.memories}" for h in untrusting)
        say(
            f"memories of machines not in sync.trust ({named}) are recalled when asked, never "
            "at session start; yours? run `memctl sync key` there and give what it prints to "
            "`memctl sync trust` here"
        )


@app.command()
def init(
    ctx: typer.Context,
    remote: Annotated[str, typer.Argument(help="The repository: a URL or a path.")],
    as_json: JsonOption = False,
) -> None:
    """Clone a repository into the data directory (laying it out if it is empty) and
    record it as sync.remote."""
    from memctl.api import sync as api

    result = api.init(open_context(ctx), remote)
    if as_json:
        print_json(result.__dict__)
        return
    made = "laid out the empty repository and " if result.created else ""
    say(f"{made}cloned {result.remote} into {result.clone}")


@app.command()
def status(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """The remote, the last sync, what waits to go out and to come in, ahead/behind."""
    from memctl.api import sync as api

    report = api.status(open_context(ctx))
    if as_json:
        print_json(report.to_dict())
        return
    mode = "read-only" if report.readonly else f"publishes {report.include}"
    say(f"remote        {report.remote} ({mode})")
    say(f"clone         {report.clone}")
    say(f"host id       {report.host}")
    pushed = "" if report.last_pushed is None else (" (pushed)" if report.last_pushed else "")
    say(f"last sync     {report.last_sync or 'never'}{pushed}")
    say(f"to go out     {counted(report.waiting_out, 'file')}")
    say(f"to come in    {counted(report.waiting_in, 'file')} (as of the last fetch)")
    say(f"last fetch    {report.last_fetch or 'never'}")
    say(f"ahead/behind  {report.ahead}/{report.behind} commits")


@app.command("trust")
def trust_(
    ctx: typer.Context,
    hosts: Annotated[
        list[str] | None,
        typer.Argument(
            help="Host ids (or their first characters), HOST:KEY as `memctl sync key` "
            "prints it, or 'all'; '-' reads them from standard input (a key given there "
            "stays out of the shell's history).",
            metavar="HOST",
        ),
    ] = None,
    remove: Annotated[
        list[str] | None,
        typer.Option("--remove", metavar="HOST", help="Stop trusting this host (repeatable)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Whose memories may open a session: the other machines, trusted or not (sync.trust)."""
    from memctl.api import sync as api

    given = [word for host in hosts or () for word in _stdin_words(host)]
    found = api.trust(open_context(ctx), given, list(remove or ()))
    if as_json:
        listed = [h.__dict__ for h in found.hosts]
        print_json({"trust": found.setting, "hosts": listed, "unsigned_own": found.unsigned_own})
        return
    for host in found.hosts:
        state = "trusted" if host.trusted else "recalled when asked, never at session start"
        if host.trusted:
            state += (
                ": the files its key signed"
                if host.signed
                else " by its id alone: anyone who can push can name it (give HOST:KEY)"
            )
        if host.unsigned:
            state += f"; {counted(host.unsigned, 'file')} naming it its key did not sign"
        say(f"{host.id}  {counted(host.memories, 'memory', 'memories'):>14}  {state}")
    if found.unsigned_own:
        say(f"{counted(found.unsigned_own, 'file')} naming this machine {UNSIGNED_OWN}")
    if not found.hosts:
        say("no other machine's memories have come in through sync yet")
    verb = "now " if found.changed else ""
    say(f"sync.trust is {verb}{found.setting or 'empty: no other machine'}")


def _stdin_words(host: str) -> list[str]:
    """``host`` itself, or for '-' the words on standard input: a HOST:KEY pasted there, not
    typed as an argument, is kept by no shell history."""
    if host != "-":
        return [host]
    words = sys.stdin.read().split()
    if not words:
        raise UsageError("nothing on standard input: paste HOST:KEY as `memctl sync key` prints it")
    return words


@app.command("key")
def key_(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """This machine's HOST:KEY, to give to `memctl sync trust` on your other machines."""
    from memctl.api import sync as api

    found = api.key(open_context(ctx))
    if as_json:
        print_json({"key": found})
        return
    say(found)
    say("on your other machines: `memctl sync trust HOST:KEY` with the line above; keep it secret")


@share.command()
def promote(
    ctx: typer.Context,
    ids: IdsArgument = None,
    every: Annotated[bool, typer.Option("--all", help="Every memory but deleted ones.")] = False,
    scope: Annotated[
        str | None,
        typer.Option("--scope", "-s", help="With --all: only this scope ('project', 'global')."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Share memories: `memctl sync` publishes promoted memories."""
    from memctl.api import sync as api

    changed = api.promote(open_context(ctx), api.ShareRequest(tuple(ids or ()), every, scope))
    if as_json:
        print_json([m.id for m in changed])
    else:
        say(f"promoted {counted(len(changed), 'memory', 'memories')}")


@share.command()
def unpromote(ctx: typer.Context, ids: IdsArgument = None, as_json: JsonOption = False) -> None:
    """Stop sharing memories: the next sync removes this machine's files of them."""
    from memctl.api import sync as api

    changed = api.unpromote(open_context(ctx), api.ShareRequest(tuple(ids or ())))
    if as_json:
        print_json([m.id for m in changed])
    else:
        say(f"unpromoted {counted(len(changed), 'memory', 'memories')}")
