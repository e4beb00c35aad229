"""The records memctl keeps: memories, relations, events, sessions and their messages,
with their vocabularies."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

from memctl.errors import UsageError

E = TypeVar("E", bound=StrEnum)


class Kind(StrEnum):
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PINNED = "pinned"


class Category(StrEnum):
    PROFILE = "profile"
    PREFERENCES = "preferences"
    ENTITIES = "entities"
    EVENTS = "events"
    CASES = "cases"
    PATTERNS = "patterns"


class Tier(StrEnum):
    CORE = "core"
    WORKING = "working"
    PERIPHERAL = "peripheral"


class State(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    CONTRADICTED = "contradicted"
    ARCHIVED = "archived"
    DELETED = "deleted"


class Visibility(StrEnum):
    PRIVATE = "private"
    SHARED = "shared"


class RelationType(StrEnum):
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    CONTEXTUALIZES = "contextualizes"
    SUPERSEDES = "supersedes"
    DEPENDS_ON = "depends_on"
    RELATED = "related"


class Role(StrEnum):
    """Who said a message of a session."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


# The roles as a person or an assistant names one in a filter, in the order the errors list them.
ROLES = ("user", "assistant", "tool", "system")


class Action(StrEnum):
    """What an event records."""

    CREATE = "create"
    UPDATE = "update"
    STATE = "state"
    ACCESS = "access"
    DELETE = "delete"
    IMPORT = "import"
    LINK = "link"
    UNLINK = "unlink"
    REEMBED = "reembed"
    CONFLICT = "conflict"  # sync kept another version; the event holds the one that lost


def parse_choice(enum: type[E], value: str, what: str) -> E:
    """``enum(value)``, or a UsageError listing the allowed values."""
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(member.value for member in enum)
        raise UsageError(f"unknown {what} {value!r}: expected one of {allowed}") from None


# States that recall and list leave out unless asked for.
HIDDEN_STATES = (State.ARCHIVED, State.DELETED)
# The transcript formats ingest reads, by the client that writes them.
TRANSCRIPT_CLIENTS = (
    "claude-code",
    "opencode",
    "codex",
    "cursor",
    "gemini",
    "copilot",
    "generic",
)


def now_iso() -> str:
    """The current UTC time as a sortable ISO-8601 string with milliseconds."""
    return format_time(datetime.now(UTC))


def format_time(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 timestamp (``Z`` or offset; a naive one is taken as UTC)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def new_id() -> str:
    """A random 32-hex-digit id; random (not time-ordered) so short prefixes stay unique."""
    import uuid  # here: it imports platform (9 patterns compiled), which reads need not

    return uuid.uuid4().hex


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` and its noun: "1 file", "3 files", "1 memory", "2 memories" (``many``): every
    door (the CLI, the viewer) counts in these words."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def counted_to(n: int, at_most: int, one: str, many: str | None = None) -> str:
    """``counted`` for a count that stopped at ``at_most`` (a count reads every row it
    counts): "120 sessions", or "10,000+ sessions" where it stopped."""
    return f"{n:,}+ {many or one + 's'}" if n >= at_most else counted(n, one, many)


def derived_session_id(client: str, origin: str) -> str:
    """The id of a session stored without one of its own: a digest of its client and the
    absolute path of its file, or its first message (standard input)."""
    return hashlib.sha256(f"{client}\0{origin}".encode()).hexdigest()[:32]


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


# A forgotten or redacted message's digest: keyed (HMAC-SHA256 under the home's
# ``forget.key``), so it still tells a capture the message is stored, and no one holding
# the database alone can try values against it (a PIN, a dictionary password).
KEYED = "hmac:"


def keyed_hash(key: bytes, text: str) -> str:
    return KEYED + hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def message_digest_text(role: str, content: str) -> str:
    """What a message's content hash is taken of: its role and its text."""
    return f"{role}\n{content}"


# A transcript's read mark is kept under a digest of its path, not the path: a folder named
# after a token stays out of the database (store.migrations.m022_paths digests older marks).
PATH_KEY = "sha256:"


def path_key(path: str) -> str:
    """The key the read mark of the transcript at ``path`` (absolute) is kept under."""
    return PATH_KEY + hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()


# Memory fields that say what this store did with a memory, not what it says: a change to
# them alone is no new version of it (``updated_at`` stays, and a sync sends no file), so
# a teammate's maintain consolidating an episode another machine shared does not make
# that memory theirs (issue 33, s24-walk).
BOOKKEEPING = frozenset({"consolidated_at"})
# The longest query a recall takes, at every door a person types into (the CLI, the
# viewer): a pasted page. Recall embeds the first 256 tokens of it (MiniLM's window), and a
# 1 MB query ran 16 s before this limit (issue 37); the viewer, without it, ran a 30,000
# character one 20 s and stopped a 60,000 character one at its read time limit.
QUERY_LIMIT = 10_000


@dataclass
class Memory:
    """One durable memory. ``content`` is the original text and the ground truth."""

    content: str
    id: str = field(default_factory=new_id)
    l0_abstract: str = ""
    l1_overview: str = ""
    l2_content: str = ""
    kind: Kind = Kind.SEMANTIC
    category: Category = Category.PREFERENCES
    tier: Tier = Tier.WORKING
    state: State = State.ACTIVE
    importance: float = 0.5
    confidence: float = 1.0
    strength: float = 1.0
    access_count: int = 0
    last_accessed_at: str | None = None
    created_at: str = field(default_factory=now_iso)
    updated_at: str = ""
    invalidated_at: str | None = None
    superseded_by: str | None = None
    scope: str = "global"
    visibility: Visibility = Visibility.PRIVATE
    tags: list[str] = field(default_factory=list)
    source: str = ""
    session_id: str | None = None
    agent_id: str | None = None
    content_hash: str = ""
    # When ``strength`` was last decayed by maintain (None: never); memories/strength.py.
    decayed_at: str | None = None
    # When maintain distilled this episode into semantic facts (None: not yet).
    consolidated_at: str | None = None
    # When the memory entered this store: decay and archive count from it, not from
    # ``created_at`` (which an ingested or imported memory takes from its source).
    stored_at: str = field(default_factory=now_iso)

    def __post_init__(self) -> None:
        self.updated_at = self.updated_at or self.created_at
        self.content_hash = self.content_hash or content_hash(self.content)

    def to_dict(self) -> dict[str, Any]:
        """Every field, with enums as their string values (stable JSON field names)."""
        return {name: str(v) if isinstance(v, StrEnum) else v for name, v in asdict(self).items()}

    @property
    def summary(self) -> str:
        """The one line a table shows: the abstract when there is one, else the content."""
        return self.l0_abstract or self.content


@dataclass(frozen=True)
class Relation:
    """A typed, weighted edge between two memories."""

    src_id: str
    dst_id: str
    type: RelationType
    weight: float = 1.0
    created_at: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "type": str(self.type)}


@dataclass(frozen=True)
class Event:
    """One entry of the append-only event log."""

    id: int
    at: str
    action: Action
    memory_id: str | None
    run_id: str | None
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "action": str(self.action)}


@dataclass
class Message:
    """One message of a session, stored verbatim (after redaction); ``seq`` counts from 1."""

    role: Role
    content: str
    created_at: str = field(default_factory=now_iso)
    session_id: str = ""
    seq: int = 0
    content_hash: str = ""
    speaker: str = ""  # who said it, by name, where the transcript or export says; else ''

    def __post_init__(self) -> None:
        self.content_hash = self.content_hash or content_hash(
            message_digest_text(str(self.role), self.content)
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "role": str(self.role)}


IMPORTED = "import"  # the client of a session holding an imported file's text (imports.raw)


@dataclass
class Session:
    """A conversation with an assistant: where it came from and how far it was distilled."""

    id: str
    client: str
    scope: str
    agent_id: str | None = None
    title: str = ""
    source: str = ""
    tags: list[str] = field(default_factory=list)
    started_at: str | None = None
    created_at: str = field(default_factory=now_iso)
    updated_at: str = ""
    message_count: int = 0
    extracted_through: int = 0
    cwd: str = ""  # the directory it ran in, when the transcript says
    forgotten_at: str | None = None  # `memctl sessions forget`: never captured again

    def __post_init__(self) -> None:
        self.updated_at = self.updated_at or self.created_at

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
