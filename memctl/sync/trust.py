"""``memctl sync trust``: whose memories may open a session (the ``sync.trust`` key).

Another machine's memories are recalled when asked for, and enter a session's
start block only when their host is trusted (``memctl.memories.provenance``).
This lists the machines whose files the repository brought in, and adds or
removes hosts in the home config's ``sync.trust``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.config import write_config_value
from memctl.context import Context
from memctl.errors import UsageError
from memctl.memories.provenance import trusted_hosts
from memctl.store.sync import host_id, hosts

KEY = "sync.trust"
EVERY = "all"
# A host as sync.trust names it: its id (hex, as in the repository's file names) or the
# first characters of it, enough to tell machines apart.
HOST = re.compile(r"^[0-9a-f]{4,32}$")


@dataclass(frozen=True)
class Host:
    id: str
    memories: int  # memories whose files it wrote
    trusted: bool


@dataclass(frozen=True)
class Trust:
    setting: str  # sync.trust after the change
    hosts: list[Host]  # the other machines the repository brought in, most memories first
    changed: bool


def _names(given: list[str]) -> list[str]:
    names = [n.strip().lower() for n in given if n.strip()]
    for name in names:
        if name != EVERY and not HOST.match(name):
            raise UsageError(
                f"{name!r} is not a host id: give 4 to 32 hex digits as `memctl sync trust` "
                f"lists them, or {EVERY!r}"
            )
    return names


def trust(ctx: Context, add: list[str], remove: list[str]) -> Trust:
    """Add ``add`` to ``sync.trust`` and take ``remove`` out of it (each a host id, a
    prefix of one, or ``all``); the machines known and whether each is trusted."""
    current = ctx.settings.sync_trust.replace(",", " ").split()
    dropped = set(_names(remove))
    wanted = [n for n in dict.fromkeys([*current, *_names(add)]) if n not in dropped]
    setting = " ".join(wanted)
    changed = setting != " ".join(current)
    if changed:
        write_config_value(ctx.settings.home_config, KEY, setting)
    allowed = trusted_hosts(setting)
    own = host_id(ctx.db)
    rows = [
        Host(host, count, allowed is None or any(host.startswith(t) for t in allowed))
        for host, count in hosts(ctx.db).items()
        if host != own
    ]
    rows.sort(key=lambda h: (-h.memories, h.id))
    return Trust(setting, rows, changed)
