"""Where a memory came from, and whether that lets it open a new session by itself.

A memory's ``source`` says who said it: ``cli`` (the user's ``remember``),
``mcp`` (the assistant's ``memory_store``), ``session:<id>#<seq>:<role>`` (a
message of a session: the user's, the assistant's), ``session:<id>#<a>-<b>`` (a
session's digest), ``file:<path>#...`` (an import); a memory another machine
pushed through the sync repository (``store.sync.foreign_hosts``) is that host's.

The session-start block is the one place memctl speaks to a new session
unasked, so there a memory is left out when it came from another host not in
``sync.trust``, or when it tells to run code fetched from the network
(``curl ... | sh``, or saved and run: ``wget URL; sh f``, ``curl -o f URL && bash f``,
``chmod +x f``, ``python f``) and the user did not say it: text from tools, web pages or
other machines never becomes an instruction by itself. Asked for, such
memories are still recalled, marked with where they came from.

A host id is only a name in a repository everyone with push access writes, so a
machine signs each file it writes (HMAC-SHA256 under its ``sync.key``, the file's
``mac`` line) and a host whose key the user gave here (``memctl sync trust HOST:KEY``)
is that host only in a file its key signs: any other file naming it is ``unproven``,
a teammate's.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

from memctl.config.files import host_keys, known_sync_key
from memctl.lazy_re import lazy
from memctl.model import Memory, format_time, parse_time
from memctl.store.database import Database
from memctl.store.message_search import message_role
from memctl.store.sync import HOST_ID, SyncFile, claimed_files

YOU = "you"
ASSISTANT_SOURCE = "mcp"  # the source of what an assistant stored (MCP memory_store)
_DOWNLOAD = r"\b(?:curl|wget|iwr|invoke-webrequest|irm|invoke-restmethod|fetch|aria2c|scp)\b"
# What runs a file: a shell or interpreter given a file, ``source``/``.``, ``./file``, or
# making it executable; after a command separator (``;``, ``&&``, ``||``, a new line).
_RUNS_A_FILE = (
    r"(?:;|&&|\|\||\n|\bthen\b)\s*(?:sudo\s+(?:-\S+\s+)*)?(?:"
    r"(?:ba|z|da|k|fi)?sh\s+(?:-[a-z]+\s+)*[\w./~$\"'-]|source\s+\S|\.\s+[\w./~$\"'-]|\./\S"
    r"|chmod\s+(?:-\S+\s+)*(?:[ugoa]*\+[rwx]*x|[0-7]{3,4})\b"
    r"|(?:python[0-9.]*|perl|ruby|node|php|pwsh|powershell)\s+(?:-\S+\s+)*[\w./~$\"'-]"
    r"|iex\b|invoke-expression\b|start-process\b)"
)
# Words of a command that runs what it just downloaded (piped, or saved then run), or
# decodes and runs a payload.
FETCH_AND_RUN = lazy(
    _DOWNLOAD + r"[^\n|;]{0,300}"
    r"\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b"
    r"|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\|\s*(?:iex|invoke-expression)\b"
    r"|\bbase64\s+(?:-d|--decode)\b[^\n]{0,100}\|\s*(?:ba|z)?sh\b"
    r"|\beval\s+[\"']?\$\(\s*(?:curl|wget)\b"
    r"|" + _DOWNLOAD + r".{0,300}?" + _RUNS_A_FILE,
    re.I | re.S,
)


# The source of a recall result that stands for a knowledge-graph path, not a memory.
GRAPH_SOURCE = "graph"
# The tag of a session's digest (ingest/digest.py writes it; recall, the session-start
# block and the profile read it).
DIGEST_TAG = "digest"


def origin(memory: Memory, host: str | None = None) -> str:
    """Who a memory's text came from, in a word or two: ``you``, ``assistant``,
    ``session``, ``import``, ``host <id>``; a session message, its speaker."""
    if host:
        return f"host {host[:8]}"
    source = memory.source
    if source.startswith("session:"):
        if "#" not in source:  # the whole session (maintain's consolidation names it so)
            return "session"
        seqs, _, role = source.rpartition("#")[2].partition(":")
        if "-" in seqs:
            return "session digest"
        return YOU if role == "user" else (role or "session")
    if source.startswith("file:"):
        return "import"
    if source == ASSISTANT_SOURCE:
        return "assistant"
    if source == GRAPH_SOURCE:
        return "knowledge graph"
    role = message_role(memory)  # a session message as a record: its speaker
    return role if role and role != "user" else YOU


def fetches_and_runs(text: str) -> bool:
    """True when ``text`` tells to run code fetched from the network (``curl ... | sh``)."""
    return bool(FETCH_AND_RUN.search(text))


def trusted_hosts(setting: str) -> frozenset[str] | None:
    """The hosts of ``sync.trust`` (ids or their first characters); None for ``all``."""
    names = frozenset(setting.replace(",", " ").split())
    return None if "all" in names else names


def trusts(trust: frozenset[str] | None, host: str) -> bool:
    """True when ``host`` is in ``sync.trust`` (``trusted_hosts``: an id's first characters
    name it; None, ``all``, trusts every host)."""
    return trust is None or any(host.startswith(t) for t in trust)


def start_refusal(
    memory: Memory, host: str | None, trust: frozenset[str] | None, forged: bool = False
) -> str | None:
    """Why ``memory`` must not enter a session-start block, or None when it may;
    ``forged``: its file names a host whose key did not sign it (``unproven``)."""
    if host and forged:
        return f"names host {host[:8]}, whose key did not sign it"
    if host and not trusts(trust, host):
        return f"from host {host[:8]}, not in sync.trust"
    said_by = origin(memory, host)
    if said_by != YOU and fetches_and_runs(memory.content):
        return f"tells to run fetched code, and {said_by} said it, not you"
    return None


# What a sync file's MAC signs: this label, the file's path in the repository (so a signed
# file copied to another memory, scope or host's name does not verify) and its text above
# the ``mac`` line, hashed (so the index keeps the digest and checks it against a key
# given later).
FILE_LABEL = b"memctl sync file\0"


def file_digest(path: str, body: str) -> str:
    """The SHA-256 of what a sync file's MAC signs (``FILE_LABEL``)."""
    return hashlib.sha256(FILE_LABEL + path.encode() + b"\0" + body.encode()).hexdigest()


def file_mac(key: bytes, digest: str) -> str:
    """The MAC of a sync file whose ``file_digest`` is ``digest``, under ``key``."""
    return hmac.new(key, bytes.fromhex(digest), hashlib.sha256).hexdigest()


def unproven(db: Database, hosts: dict[str, str], keys: dict[str, bytes]) -> frozenset[str]:
    """The memory ids of ``hosts`` (memory id -> host) whose host has a key here (``keys``)
    that did not sign the file their text came from: the host's newest file of the memory
    has no MAC, a MAC the key did not make, or is not the version the memory holds (an
    older signed file pushed again over a forged one)."""
    keyed = {m: h for m, h in hosts.items() if h in keys}
    files = claimed_files(db, keyed)
    found = set()
    for memory_id, host in keyed.items():
        file, updated_at = files.get(memory_id, (None, None))
        if not (
            file is not None
            and updated_at is not None
            and format_time(parse_time(updated_at)) == file.updated_at
            and signs(keys[host], file)
        ):
            found.add(memory_id)
    return frozenset(found)


def signs(key: bytes, file: SyncFile) -> bool:
    """Whether ``key`` made the MAC of the sync file ``file``; no key (``b""``: this
    machine never synced, so never signed) made none."""
    return bool(key and file.digest and file.mac) and hmac.compare_digest(
        file_mac(key, str(file.digest)), str(file.mac)
    )


def forged(db: Database, hosts: dict[str, str], home: Path) -> frozenset[str]:
    """``unproven`` under the keys the user gave this home and this machine's own key for
    a file naming this machine (none read when no memory of ``hosts`` came from another
    machine). This machine never reads its own words back, so such a file is another's
    unless its own key signed it (a store restored from a backup reads back what it wrote
    since); a config shared between the user's machines lists this one in ``sync.trust``."""
    if not hosts:
        return frozenset()
    keys = host_keys(home)
    own = db.meta(HOST_ID)
    if own and own in hosts.values():
        keys[own] = known_sync_key(home) or b""
    return unproven(db, hosts, keys)
