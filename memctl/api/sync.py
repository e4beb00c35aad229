"""Sharing memories through a git repository: sync, init, status, promote, unpromote.

``memctl.maintain.sync_hook.synced`` is the same sync, with the forget here of what
another machine forgot, for ``memctl maintain`` with ``sync.auto``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memctl.context import Context
from memctl.model import Memory
from memctl.sync import setup, share
from memctl.sync import trust as trusting
from memctl.sync.incoming import Progress, quiet
from memctl.sync.pipeline import SyncRequest, SyncResult, bad_file_lines
from memctl.sync.setup import InitResult, SyncStatus
from memctl.sync.trust import Trust

__all__ = [
    "InitResult",
    "ShareRequest",
    "SyncRequest",
    "SyncResult",
    "SyncStatus",
    "Trust",
    "bad_file_lines",
    "init",
    "promote",
    "status",
    "sync",
    "trust",
    "unpromote",
]


def sync(ctx: Context, request: SyncRequest, progress: Progress = quiet) -> SyncResult:
    """Pull, import, export and push, then forget here what another machine removed for
    good (``came_in["forgotten"]``); with ``dry_run`` only say what would move.
    ``progress(stage, done, total)`` hears how far each long step is (total 0: a git
    step that cannot count)."""
    from memctl.maintain.sync_hook import synced

    return synced(ctx, request, progress)


def init(ctx: Context, remote: str) -> InitResult:
    """Clone the repository (a URL or path) and record it as ``sync.remote``."""
    return setup.init(ctx, remote)


def status(ctx: Context) -> SyncStatus:
    """The remote, the last sync, what waits to go out and to come in, ahead/behind."""
    return setup.status(ctx)


@dataclass(frozen=True)
class ShareRequest:
    ids: tuple[str, ...] = ()
    every: bool = False  # promote: every memory but deleted ones
    scope: str | None = None  # with ``every``: only this scope


def promote(ctx: Context, request: ShareRequest) -> list[Memory]:
    """Mark memories shared, so that sync publishes them; the ones that changed."""
    memories = share.select(ctx, list(request.ids), request.every, request.scope)
    return share.set_shared(ctx, memories, True)


def unpromote(ctx: Context, request: ShareRequest) -> list[Memory]:
    """Mark memories private and withhold them; the next sync removes this machine's file."""
    memories = share.select(ctx, list(request.ids), False, None)
    return share.set_shared(ctx, memories, False)


def trust(ctx: Context, add: list[str], remove: list[str]) -> Trust:
    """Add hosts to ``sync.trust`` and remove others; the machines known, each trusted or not."""
    return trusting.trust(ctx, add, remove)


def key(ctx: Context) -> str:
    """This machine's ``HOST:KEY``: given to ``memctl sync trust`` on the user's other
    machines, it lets them tell this machine's files from any other naming its id."""
    return trusting.own_key(ctx)
