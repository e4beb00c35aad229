"""``memctl sync trust``: whose memories may open a session (the ``sync.trust`` key).

Another machine's memories are recalled when asked for, and enter a session's
start block only when their host is trusted (``memctl.memories.provenance``).
This lists the machines whose files the repository brought in, and adds or
removes hosts in the home config's ``sync.trust``. A host given with its key
(``HOST:KEY``, as ``memctl sync key`` prints it on that machine) is kept in the
home's ``sync-hosts.keys``: from then on only a file that key signed is that host's
(``provenance.unproven``); a host given without one is trusted by its name alone,
which anyone who can push can write.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from memctl.config import write_config_value
from memctl.config.files import (
    FORGET_KEY_BYTES,
    host_keys,
    known_sync_key,
    sync_key,
    write_host_keys,
)
from memctl.context import Context
from memctl.errors import UsageError
from memctl.memories.provenance import signs, trusted_hosts
from memctl.model import State
from memctl.store.sync import HOST_ID_CHARS, host_id, hosts, indexed_files
from memctl.sync.memfile import FORGOTTEN

KEY = "sync.trust"
EVERY = "all"
# A host as sync.trust names it: its id (hex, as in the repository's file names) or the
# first characters of it, enough to tell machines apart.
HOST = re.compile(r"^[0-9a-f]{4,32}$")
# A host with its key, as ``memctl sync key`` prints it: the whole id, then the key.
HOST_AND_KEY = re.compile(rf"^([0-9a-f]{{{HOST_ID_CHARS}}}):([0-9a-f]{{{2 * FORGET_KEY_BYTES}}})$")
# A tombstone's state in the index: a removal, which carries no text to trust
GONE = (FORGOTTEN, State.DELETED)


@dataclass(frozen=True)
class Host:
    id: str
    memories: int  # memories whose files it wrote
    trusted: bool
    signed: bool  # its key is held here: only the files it signed are its
    unsigned: int = 0  # files naming it that its key (held here) did not sign: a teammate's


@dataclass(frozen=True)
class Trust:
    setting: str  # sync.trust after the change
    hosts: list[Host]  # the other machines the repository brought in, most memories first
    changed: bool
    # files naming this machine that its own key did not sign: a teammate's (tombstones
    # aside: an older memctl's removals for good stay unsigned, and a delete is restorable)
    unsigned_own: int = 0


def _names(given: list[str], keys: dict[str, bytes] | None = None) -> list[str]:
    """The hosts ``given`` names; one given as ``HOST:KEY`` puts its key in ``keys``."""
    names = []
    for name in (n.strip().lower() for n in given if n.strip()):
        keyed = HOST_AND_KEY.match(name)
        if keyed and keys is not None:
            name, keys[keyed.group(1)] = keyed.group(1), bytes.fromhex(keyed.group(2))
        elif ":" in name:
            raise UsageError(
                f"{name.partition(':')[0]!r} is given with a key that is not one: give "
                "HOST:KEY as `memctl sync key` prints it on that machine"
            )
        elif name != EVERY and not HOST.match(name):
            raise UsageError(
                f"{name!r} is not a host id: give 4 to 32 hex digits as `memctl sync trust` "
                f"lists them, HOST:KEY as `memctl sync key` prints it, or {EVERY!r}"
            )
        names.append(name)
    return names


def trust(ctx: Context, add: list[str], remove: list[str]) -> Trust:
    """Add ``add`` to ``sync.trust`` and take ``remove`` out of it (each a host id, a
    prefix of one, ``HOST:KEY`` to add with its key, or ``all``); the machines known and
    whether each is trusted. A removed host's key goes too."""
    home = ctx.settings.home
    current = ctx.settings.sync_trust.replace(",", " ").split()
    keys = host_keys(home)
    given = dict(keys)
    dropped = set(_names(remove))

    def kept(name: str) -> bool:  # a host removed by its id or the first characters of it
        return name not in dropped and not any(name.startswith(d) for d in dropped - {EVERY})

    wanted = [n for n in dict.fromkeys([*current, *_names(add, given)]) if kept(n)]
    given = {h: k for h, k in given.items() if kept(h)}
    setting = " ".join(wanted)
    changed = setting != " ".join(current) or given != keys
    if given != keys:
        write_host_keys(home, given)
    if setting != " ".join(current):
        write_config_value(ctx.settings.home_config, KEY, setting)
    allowed = trusted_hosts(setting)
    own = host_id(ctx.db)
    index = list(indexed_files(ctx.db).values())
    unsigned = Counter(
        f.host_id for f in index if f.host_id in given and not signs(given[f.host_id], f)
    )
    mine = [f for f in index if f.host_id == own and f.state not in GONE]
    mine_key = known_sync_key(home) or b""
    unsigned_own = sum(not signs(mine_key, f) for f in mine)
    rows = [
        Host(
            host,
            count,
            allowed is None or any(host.startswith(t) for t in allowed),
            host in given,
            unsigned[host],
        )
        for host, count in hosts(ctx.db).items()
        if host != own
    ]
    rows.sort(key=lambda h: (-h.memories, h.id))
    return Trust(setting, rows, changed, unsigned_own)


def own_key(ctx: Context) -> str:
    """This machine's ``HOST:KEY``, for ``memctl sync trust`` on the user's other machines
    (the key made now when no sync made it yet)."""
    return f"{host_id(ctx.db)}:{sync_key(ctx.settings.home).hex()}"
