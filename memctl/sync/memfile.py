"""One memory as a YAML file of the sync repository: written in a stable key order and
block style (small, readable diffs), read as untrusted input.

Reading uses ``yaml.safe_load`` only; unknown keys are ignored, a wrong type
refuses the file (``BadFile``), and text holding ``<private>`` blocks or
secrets is refused both ways.
"""

from __future__ import annotations

import hashlib
from dataclasses import MISSING, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any

import yaml

from memctl.errors import MemctlError
from memctl.lazy_re import lazy
from memctl.memories.operations import clean_content, clean_tags
from memctl.memories.privacy import scrub
from memctl.memories.provenance import file_digest, file_mac
from memctl.model import (
    KEYED,
    Category,
    Kind,
    Memory,
    Relation,
    RelationType,
    State,
    Tier,
    format_time,
    keyed_hash,
    parse_choice,
    parse_time,
)
from memctl.store.sessions import KEYED_ID
from memctl.sync.layout import MEMORY_ID
from memctl.sync.records import IMPORT_SOURCE
from memctl.sync.untrusted import MAX_RELATIONS, MAX_TRIPLE_CHARS, MAX_TRIPLES, yaml_problem

TEXTS = ("content", "l0_abstract", "l1_overview", "l2_content", "source")
# A session id of 32 hex digits in a memory's source (``session:<id>#3:user``): capture
# names a session stored without an id of its own by a SHA-256 of its client and its file's
# path or first message (``ingest.capture.session_id_of``), which a teammate tries guessed
# paths and openings against. It goes to the repository as ``local-`` and 32 hex digits
# of an HMAC-SHA256 under the home's ``forget.key``: stable from sync to sync, known to
# nobody else; an id this machine keyed since (``store.sessions.keyed_session_id``, the
# same digest) goes so too. A client's id (a UUID, ``ses_...``) or one given by hand goes
# as it is.
DERIVED_SESSION = lazy(r"^session:([0-9a-f]{32})(?=#|$)")
SHARED_SESSION = "local-"
SESSION_DIGITS = 32
TIMES = ("created_at", "updated_at", "invalidated_at")
# The order of the keys in a file; ``relations`` comes last.
KEYS = (
    "id",
    "state",
    "kind",
    "category",
    "tier",
    "importance",
    "confidence",
    "created_at",
    "updated_at",
    "invalidated_at",
    "superseded_by",
    "tags",
    "source",
    "content",
    "l0_abstract",
    "l1_overview",
    "l2_content",
)
TOMBSTONE_KEYS = ("id", "state", "created_at", "updated_at")
# The key a tombstone carries (``forgotten: true``) when the memory was removed for good
# (``delete --permanent``, ``sessions forget``): a machine that pulls it forgets the text
# as a local forget does. Without it (a soft ``delete``, or a tombstone an older memctl
# wrote, which cannot tell) the memory is only marked deleted there, restorable. It is
# also the state the index of read files (``sync_files.state``) records for such a file.
FORGOTTEN = "forgotten"
# The key a live memory's file carries (``redacted: true``) when this version took text
# out of the one before (``memctl redact``, or a forget that put a merged memory back to
# its text from before the merge): a machine that pulls it takes the old text out of its
# event log, backups and file as a local ``memctl redact`` does. Without it (any other
# edit, or a file an older memctl wrote) the old text stays in the update's ``before``.
REDACTED_KEY = "redacted"
ENUMS: dict[str, Any] = {"state": State, "kind": Kind, "category": Category, "tier": Tier}
MAX_TAG_CHARS = 200
# What a key a file leaves out stands for: a new memory's default.
DEFAULTS: dict[str, Any] = {
    f.name: str(f.default) if isinstance(f.default, StrEnum) else f.default
    for f in fields(Memory)
    if f.name in KEYS and f.default not in (MISSING, None, "")
}


class BadFile(ValueError):
    """A repository file that is refused, with the reason."""


@dataclass(frozen=True)
class Version:
    """A memory as one host's file holds it: the synced fields, normalised."""

    id: str
    host: str
    scope: str
    values: dict[str, Any]
    relations: list[Relation] = field(default_factory=list)
    # what it states; None: the file has no `triples` key (an older memctl's: it says nothing)
    triples: list[tuple[str, str, str]] | None = field(default_factory=list)
    forgotten: bool = False  # a tombstone of a memory removed for good (``FORGOTTEN``)
    redacted: bool = False  # a version that took text out of the one before (``REDACTED_KEY``)

    @property
    def updated_at(self) -> str:
        return str(self.values["updated_at"])

    @property
    def key(self) -> tuple[str, str]:
        """Its place in the order versions are resolved in (as ``SyncFile.key``)."""
        return self.updated_at, self.host

    @property
    def tombstone(self) -> bool:
        return self.values["state"] == State.DELETED and "content" not in self.values


def synced_values(
    memory: Memory, home_key: bytes, keys: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The fields of a memory that travel (``keys``, by default those of its file),
    normalised as ``parse`` returns them; ``home_key``: ``shared_source``'s."""
    data = memory.to_dict()
    if keys is None:
        keys = TOMBSTONE_KEYS if memory.state == State.DELETED else KEYS
    values = {k: data[k] for k in keys if k != "id"}
    if "source" in values:
        values["source"] = shared_source(values["source"], home_key)
    for name in TIMES:
        if values.get(name):
            values[name] = normal_time(values[name])
    return values


def shared_source(source: str, home_key: bytes) -> str:
    """``source`` as the repository holds it: an absolute path (an imported file's,
    ``file:/home/bob/clients/acme/notes.md#chunk-2``) reduced to the file's name
    (``file:notes.md#chunk-2``), so no user name or folder goes to teammates; a session
    id of 32 hex digits keyed with ``home_key`` (``SHARED_SESSION``); the rest as it is.
    A pure function of the source and the key: the same file each sync, no churn."""
    derived = DERIVED_SESSION.match(source)
    if derived:
        digest = keyed_hash(home_key, derived.group(1)).removeprefix(KEYED)
        return f"session:{SHARED_SESSION}{digest[:SESSION_DIGITS]}{source[derived.end() :]}"
    if source.startswith(f"session:{KEYED_ID}"):  # the same digest, keyed here since
        return f"session:{SHARED_SESSION}{source.removeprefix(f'session:{KEYED_ID}')}"
    prefix = IMPORT_SOURCE if source.startswith(IMPORT_SOURCE) else ""
    rest = source[len(prefix) :]
    path, mark, anchor = rest.partition("#")  # the anchor: a section, chunk or message
    if not path.startswith(("/", "~")):
        return source
    return f"{prefix}{PurePosixPath(path).name}{mark}{anchor}"


def normal_time(value: str | datetime) -> str:
    moment = value if isinstance(value, datetime) else parse_time(value)
    return format_time(moment if moment.tzinfo else parse_time(moment.isoformat()))


class _Dumper(yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper):  # type: ignore[misc]
    pass


def _str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str)


def render(
    memory: Memory,
    relations: list[Relation],
    triples: list[tuple[str, str, str]] | None = None,
    forgotten: bool = False,
    redacted: bool = False,
    *,
    home_key: bytes,
) -> str:
    """The file of a memory (``home_key``: ``shared_source``'s); a deleted memory is a
    tombstone (no content), saying ``forgotten: true`` when ``forgotten`` (removed for
    good); a live one says ``redacted: true`` when ``redacted`` (it took text out).
    ``triples``: the knowledge-graph triples it states, listed even when none (a file
    without the key, an older memctl's, takes nothing back)."""
    record: dict[str, Any] = {"id": memory.id, **synced_values(memory, home_key)}
    if memory.state == State.DELETED and forgotten:
        record[FORGOTTEN] = True
    if memory.state != State.DELETED and redacted:
        record[REDACTED_KEY] = True
    if memory.state != State.DELETED:
        record["relations"] = [
            {
                "dst_id": r.dst_id,
                "type": str(r.type),
                "weight": r.weight,
                "created_at": r.created_at,
            }
            for r in sorted(relations, key=lambda r: (r.dst_id, str(r.type)))
            if r.src_id == memory.id
        ]
        record["triples"] = [list(t) for t in sorted(triples or [])]
    return yaml.dump(
        record,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 20,
    )


# The last line of a file this memctl writes: the MAC of the rest under the writing
# machine's ``sync.key`` (``provenance.file_digest``). A memctl before it reads the key as
# any key it does not know: ignored.
MAC_KEY = "mac"
MAC_LINE = lazy(r"mac: ([0-9a-f]{64})")


def signed(text: str, path: str, key: bytes) -> str:
    """A rendered file with its ``mac`` line, for ``path`` in the repository."""
    return f"{text}{MAC_KEY}: {file_mac(key, file_digest(path, text))}\n"


def signature(text: str, path: str) -> tuple[str, str | None]:
    """What a file's MAC signs (its digest) and the MAC its last line gives (None)."""
    head, _, last = text.removesuffix("\n").rpartition("\n")
    found = MAC_LINE.fullmatch(last)
    if found is None:
        return file_digest(path, text), None
    return file_digest(path, f"{head}\n"), found.group(1)


def blob_id(text: str) -> str:
    """The id git gives a file of this text (so a rendered file is compared without git)."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def privacy_problem(values: dict[str, Any]) -> str | None:
    """Why these fields must not be shared: private text or a secret; None when they may."""
    texts = [v for k, v in values.items() if k in TEXTS and isinstance(v, str)]
    texts += [t for t in values.get("tags") or [] if isinstance(t, str)]
    kinds: set[str] = set()
    private = False
    for text in texts:
        _, found = scrub(text)
        private = private or bool(found.private_blocks or found.context_blocks)
        kinds |= set(found.secrets)
    if kinds:
        return f"holds a secret ({', '.join(sorted(kinds))})"
    if private:
        return "holds <private> text"
    return None


_Loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader

# The dates a file may carry: from the epoch to a day past now (a later ``updated_at``
# would win every conflict until then; one near year 9999 overflows with its offset).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
CLOCK_SKEW = timedelta(days=1)


def parse(text: str, memory_id: str, host: str, scope: str) -> Version:
    """The version a file holds; BadFile says what is wrong with it."""
    try:
        problem = yaml_problem(text)
        if problem:
            raise BadFile(problem)
        record = yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader
    except (yaml.YAMLError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BadFile(f"not valid YAML ({first[:200]})") from None
    if not isinstance(record, dict):
        raise BadFile("not a mapping of memory fields")
    if record.get("id") != memory_id:
        raise BadFile("its id is not the one in its file name")
    try:
        values = _values(record)
        raw_relations = _list(record.get("relations"), "relations")
        if len(raw_relations) > MAX_RELATIONS:
            raise TypeError(f"more than {MAX_RELATIONS:,} relations")
        relations = [_relation(memory_id, r) for r in raw_relations]
        triples = _triples(record["triples"]) if "triples" in record else None
        forgotten = _forgotten(record, values)
        redacted = _flag(record, REDACTED_KEY) and "content" in values
    except (MemctlError, ValueError, TypeError, OverflowError) as exc:
        raise BadFile(str(exc).splitlines()[0]) from None
    problem = privacy_problem(values) or triples_problem(triples or [])
    if problem:
        raise BadFile(problem)
    return Version(memory_id, host, scope, values, relations, triples, forgotten, redacted)


def _forgotten(record: dict[str, Any], values: dict[str, Any]) -> bool:
    """Whether a file is a tombstone of a memory removed for good (``FORGOTTEN``); the key
    on a file that holds text means nothing."""
    return _flag(record, FORGOTTEN) and values["state"] == State.DELETED and "content" not in values


def _flag(record: dict[str, Any], key: str) -> bool:
    """A file's true-or-false key (absent: false)."""
    flag = record.get(key, False)
    if not isinstance(flag, bool):
        raise TypeError(f"{key} must be true or false")
    return flag


def triples_problem(triples: list[tuple[str, str, str]]) -> str | None:
    """Why these triples must not be shared (private text or a secret), or None."""
    text = "\n".join(" ".join(t) for t in triples)
    return privacy_problem({"content": text}) if text else None


def _triples(value: Any) -> list[tuple[str, str, str]]:
    raw = _list(value, "triples")
    if len(raw) > MAX_TRIPLES:
        raise TypeError(f"more than {MAX_TRIPLES:,} triples")
    found: list[tuple[str, str, str]] = []
    for item in raw:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and all(isinstance(p, str) and 0 < len(p) <= MAX_TRIPLE_CHARS for p in item)
        ):
            raise TypeError("a triple must be a list of 3 short strings")
        found.append((item[0], item[1], item[2]))
    return found


def _values(record: dict[str, Any]) -> dict[str, Any]:
    """The fields of a file; a missing (or null) one takes the default a new memory has,
    but for ``updated_at`` (required) and ``created_at`` (``updated_at`` then)."""
    record = {k: v for k, v in record.items() if v is not None}
    record.setdefault("state", str(State.ACTIVE))
    if "updated_at" in record:
        record.setdefault("created_at", record["updated_at"])
    for key, default in DEFAULTS.items():
        record.setdefault(key, default)
    state = parse_choice(State, _text(record, "state"), "state")
    tombstone = state == State.DELETED and "content" not in record
    keys = TOMBSTONE_KEYS if tombstone else KEYS
    values: dict[str, Any] = {}
    for key in keys[1:]:
        value = record.get(key)
        if key in TIMES:
            if value is None and key == "invalidated_at":
                values[key] = None
                continue
            values[key] = _time(key, value)
        elif key in ENUMS:
            values[key] = parse_choice(ENUMS[key], _text(record, key), key)
        elif key in ("importance", "confidence"):
            values[key] = _unit(record, key)
        elif key == "tags":
            tags = _list(value, "tags")
            if not all(isinstance(t, str) and len(t) <= MAX_TAG_CHARS for t in tags):
                raise TypeError("tags must be a list of short strings")
            values[key] = clean_tags(tags)
        elif key == "superseded_by":
            if value is not None and not (isinstance(value, str) and MEMORY_ID.match(value)):
                raise TypeError("superseded_by must be a memory id")
            values[key] = value
        elif key == "content":
            values[key] = clean_content(_text(record, key))
        else:
            values[key] = "" if value is None else _text(record, key)
    return values


def _time(key: str, value: Any) -> str:
    """A timestamp of a file, normalised; TypeError unless it is one between the epoch
    and a day from now (one near year 9999 overflows with its offset)."""
    if not isinstance(value, str | datetime):
        raise TypeError(f"{key} must be a timestamp")
    try:
        moment = parse_time(value) if isinstance(value, str) else value
        if moment.tzinfo is None:
            moment = parse_time(moment.isoformat())
        if not EARLIEST <= moment <= datetime.now(UTC) + CLOCK_SKEW:
            raise OverflowError
        return normal_time(moment)
    except (OverflowError, ValueError):
        raise TypeError(f"{key} must be a timestamp from 1970 to now") from None


def _text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string")
    return value


def _unit(record: dict[str, Any], key: str) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise TypeError(f"{key} must be a number between 0 and 1")
    return float(value)


def _list(value: Any, key: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"{key} must be a list")
    return value


def _relation(memory_id: str, raw: Any) -> Relation:
    if not isinstance(raw, dict):
        raise TypeError("a relation must be a mapping")
    dst = raw.get("dst_id")
    weight = raw.get("weight", 1.0)
    if not isinstance(dst, str) or not MEMORY_ID.match(dst):
        raise TypeError("a relation's dst_id must be a memory id")
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 < weight <= 1:
        raise TypeError("a relation's weight must be above 0 and at most 1")
    created = raw.get("created_at")
    return Relation(
        memory_id,
        dst,
        parse_choice(RelationType, str(raw.get("type")), "relation type"),
        float(weight),
        _time("created_at", created) if created is not None else normal_time("1970-01-01"),
    )
