"""The stored sessions, read back: list them, show one, grep every message, expand a reference.

The verbatim transcripts are the record nothing lossy replaces: a digest or a
distilled fact names the messages it came from (its ``source``,
``session:<id>#<first>-<last>``), and ``expand`` opens them again with the turns
around them. The same functions serve ``memctl sessions`` and the MCP tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from memctl.config.files import known_forget_key
from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.ingest.parse.common import SUBAGENT
from memctl.ingest.title import stored_title
from memctl.lazy_re import lazy
from memctl.memories import operations
from memctl.memories.lines import unsaid
from memctl.memories.privacy import PRIVATE_ONLY, asked_query, no_session, quoted_ref
from memctl.memories.provenance import ASSISTANT_SOURCE
from memctl.memories.timeparse import parse_since
from memctl.model import IMPORTED, ROLES, Memory, Message, Session, counted
from memctl.retrieve.query import STOPWORDS
from memctl.store import transcripts
from memctl.store.fts import fts_query, fts_terms
from memctl.store.memories import of_session
from memctl.store.message_search import MESSAGE_SEPARATOR
from memctl.store.sessions import (
    folded_sources,
    get_session,
    keyed_session_id,
    last_stored_by_client,
    session_known_as,
    source_range,
    source_session,
)
from memctl.store.sessions import named_session as named_session  # a history's evidence
from memctl.store.sync import foreign_hosts
from memctl.store.transcripts import CLOCKS, GrepHit, SessionFilter, SessionRow

if TYPE_CHECKING:
    from memctl.maintain.everywhere import Forgotten as Forgotten  # what a forget did

# maintain.forgetting (and through it everywhere and backup) is imported where a forget
# runs: reading sessions back (`sessions list`, grep, expand) never needs it.

# CJK ideographs, kana and hangul: the tokenizer keeps their runs whole (store.transcripts).
CJK = lazy(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
RANGE = lazy(r"^(\d+)(?:-(\d+))?$")
LINE_WIDTH = 200  # characters of a matching or neighbouring line shown by grep
TITLE_LINE = 75  # the line under a session's heading: its messages and title (80 in all)
# Matches ranked by BM25 at most: ranking scores every match (about 1 µs each: 10,000 in
# ~10 ms, a word in 400,000 of 1,000,000 messages in ~800 ms, docs/benchmarks.md); beyond
# it, newest first.
RANK_AT_MOST = 10_000


@dataclass(frozen=True)
class Where:
    """Which sessions a command covers, as the user gave it."""

    scope: str | None = None  # None or 'project': the current project (and global)
    all_scopes: bool = False
    client: str | None = None
    since: str | None = None  # an ISO date or a span like 7d
    until: str | None = None  # an ISO date: strictly before
    role: str | None = None  # grep: only messages of this role
    clock: str = "session"  # since/until of a listing: the session's own time, or 'stored'


# Sessions counted elsewhere at most (a hint's number, not a census).
COUNT_AT_MOST = 10_000


def _filter(ctx: Context, where: Where) -> SessionFilter:
    if where.role is not None and where.role not in ROLES:
        raise UsageError(f"role takes one of {', '.join(ROLES)}, not {where.role!r}", ["role"])
    if where.clock not in CLOCKS:
        raise UsageError(f"clock takes one of {', '.join(CLOCKS)}, not {where.clock!r}", ["clock"])
    return SessionFilter(
        scopes=operations.recall_scopes(ctx, where.scope, where.all_scopes),
        client=where.client,
        since=parse_since(where.since) if where.since else None,
        until=parse_since(where.until) if where.until else None,
        role=where.role,
    )


def list_sessions(
    ctx: Context, where: Where, limit: int = 20, before: tuple[str, str] | None = None
) -> list[SessionRow]:
    """The latest sessions (newest first by ``where.clock``) with their digests and titles;
    ``before``: the page after the row of that (time, id)."""
    from memctl.memories.provenance import DIGEST_TAG

    if limit < 1:
        raise UsageError(f"limit takes 1 or more, not {limit}", ["limit"])
    found = transcripts.list_sessions(
        ctx.db, _listed(ctx, where), limit, DIGEST_TAG, where.clock, before
    )
    return [row if row.title else replace(row, title=title_of(ctx, row.id)) for row in found]


def _listed(ctx: Context, where: Where) -> SessionFilter:
    """What a listing covers: imported files' text is left out unless asked for by its
    client (a file is not a conversation; `sessions grep` still searches it)."""
    scope = _filter(ctx, where)
    return scope if where.client else replace(scope, not_client=IMPORTED)


def count(ctx: Context, where: Where) -> int:
    """How many sessions a listing covers (counted up to ``COUNT_AT_MOST``)."""
    return transcripts.count_sessions_where(ctx.db, _listed(ctx, where), where.clock, COUNT_AT_MOST)


def imported(ctx: Context, where: Where) -> int:
    """How many imported files a listing without ``--client import`` leaves out."""
    if where.client:
        return 0
    files = replace(_filter(ctx, where), client=IMPORTED)
    return transcripts.count_sessions_where(ctx.db, files, where.clock, COUNT_AT_MOST)


def title_of(ctx: Context, session_id: str) -> str:
    """A title for a session stored without one: its first request, condensed."""
    return stored_title(ctx.db, session_id)


def elsewhere(ctx: Context, where: Where) -> int:
    """How many sessions the same filters find in the projects ``where`` leaves out
    (counted up to ``COUNT_AT_MOST``); 0 when it covers every project."""
    if where.all_scopes:
        return 0
    scoped = _listed(ctx, where)
    everywhere = replace(scoped, scopes=None)
    total = transcripts.count_sessions_where(ctx.db, everywhere, where.clock, COUNT_AT_MOST)
    return max(0, total - transcripts.count_sessions_where(ctx.db, scoped, where.clock, total))


def forget(
    ctx: Context, ref: str, with_copies: bool = False, reads: str | None = None
) -> Forgotten:
    """Forget a session (``ID``) or one message (``ID#N``) everywhere, and with
    ``with_copies`` its messages' verbatim copies in other sessions (``maintain.forgetting``;
    ``reads``: "session" or "message", for a ref that names both)."""
    from memctl.maintain.forgetting import forget_session

    return forget_session(ctx, ref, with_copies, reads)


def copies(ctx: Context, ref: str, reads: str | None = None) -> dict[str, int]:
    """The other sessions holding verbatim copies of a session's or a message's messages:
    session id -> how many (``maintain.forgetting``)."""
    from memctl.maintain.forgetting import copies as copies_of

    return copies_of(ctx, ref, reads)


def kept_from(ctx: Context, session_id: str, limit: int) -> list[Memory]:
    """What memctl keeps of a session besides its messages: the memories distilled from
    it, oldest first, at most ``limit`` (forgetting it takes them out too)."""
    return of_session(ctx.db, session_id, limit)


def gone(ctx: Context, session_ids: set[str]) -> set[str]:
    """Those of ``session_ids`` no longer stored: forgotten (a run keeps the id it is kept
    under), or never here (a run of another machine's); a page names them without a link."""
    return {
        i for i in session_ids if (found := get_session(ctx.db, i)) is None or found.forgotten_at
    }


def forget_target(ctx: Context, ref: str, reads: str | None = None) -> tuple[Session, int | None]:
    """The session a forget's ``ref`` names (forgotten already or not), and the message's
    number when it names one (``SESSION#N``), as ``maintain.forgetting`` reads it: a stored
    session's whole id, "#" and all, is that session; one naming a message too is refused
    unless ``reads`` says which."""
    from memctl.maintain.forgetting import read_ref

    found = read_ref(ctx.db, ctx.settings.home, ref, reads)
    return find_session(ctx, found.session_id, True), found.seqs[0] if found.seqs else None


def find_session(ctx: Context, session_id: str, forgotten_too: bool = False) -> Session:
    """A session by id or unique prefix; NotFoundError with one clear line otherwise, and
    for a forgotten one unless ``forgotten_too`` (a forget names it before doing it again)."""
    wanted = session_id.strip()
    key = known_forget_key(ctx.settings.home)
    session = session_known_as(ctx.db, wanted, key) if wanted else None
    if session is None and len(wanted) >= 4:
        matches = transcripts.session_ids_like(ctx.db, wanted)
        if len(matches) == 2:
            raise UsageError(
                f"session prefix {quoted_ref(wanted)} is ambiguous ({' and '.join(matches)} "
                "match it, at least): give more of the id"
            )
        session = get_session(ctx.db, matches[0]) if matches else None
    if session is None:
        raise no_session(wanted)
    if session.forgotten_at and not forgotten_too:
        keyed = key is not None and session.id == keyed_session_id(key, wanted)
        named = wanted if keyed else session.id  # the id asked for, not the one kept
        raise NotFoundError(
            f"session {named} was forgotten on {session.forgotten_at[:10]}: its text is gone"
        )
    session.title = session.title or title_of(ctx, session.id)
    return session


@dataclass(frozen=True)
class Passage:
    """Messages of one session, with the numbers that matter: what was asked for
    (``first``-``last``) inside what is shown (the messages, perhaps with turns around)."""

    session: Session
    messages: list[Message]
    first: int
    last: int
    total: int  # the session's last message number
    memory: Memory | None = None  # the memory expanded, when one was
    marked: bool = True  # mark the asked-for messages (an expansion), or not (a page)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session.to_dict(),
            "first": self.first,
            "last": self.last,
            "total": self.total,
            "memory_id": self.memory.id if self.memory else None,
            "messages": [m.to_dict() for m in self.messages],
        }

    def text(self) -> str:
        """The passage as a person (or a model) reads it; the asked-for messages marked."""
        shown = f"{self.messages[0].seq}-{self.messages[-1].seq}" if self.messages else "none"
        about = f"messages {shown} of {self.total}"
        if self.session.title:
            about += f' · "{one_line(self.session.title, TITLE_LINE - len(about))}"'
        lines = [heading(self.session), about]
        if self.memory is not None:
            lines.append(f"expanding {self.memory.id[:8]}: {one_line(self.memory.content, 120)}")
        for message in self.messages:
            lines.extend(
                render_message(message, self.marked and self.first <= message.seq <= self.last)
            )
        return "\n".join(lines)


def heading(session: Session) -> str:
    """``session ID · client · date``: its messages and title go on the next line."""
    day = (session.started_at or session.created_at)[:16].replace("T", " ")
    return f"session {session.id} · {session.client} · {day}"


def one_line(text: str, width: int = LINE_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def said_text(message: Message) -> str:
    """A message's text without the ``Name: `` its speaker opens it with, for a page that
    names the speaker above it."""
    return unsaid(message.speaker, message.content)


def said_by(speaker: str, role: str) -> str:
    """Who said a message: its role, after its speaker's name where one is kept
    (``Tim (user)``)."""
    return f"{speaker} ({role})" if speaker else role


def render_message(message: Message, marked: bool = False) -> list[str]:
    """A message as lines: ``[n] role`` (``[n] Tim (user)`` when its speaker is named) then
    its text, indented; a tool note on one line; a sub-agent's message inside its thread
    (``│``)."""
    mark = ">" if marked else " "
    text = said_text(message)  # its speaker is named above it
    thread = text.startswith(SUBAGENT)
    text = text.removeprefix(SUBAGENT)
    who = said_by(message.speaker, f"sub-agent {message.role}" if thread else str(message.role))
    bar = "│ " if thread else ""
    if str(message.role) == "tool":
        return [f"{mark}[{message.seq}] {bar}{who}: {one_line(text)}"]
    lines = [f"{mark}[{message.seq}] {bar}{who} · {message.created_at[:16].replace('T', ' ')}"]
    lines.extend(f"    {bar}{line}" if line.strip() else "" for line in text.splitlines())
    return lines


def show(ctx: Context, session_id: str, page: int = 1, page_size: int = 50) -> Passage:
    """One page of a session's transcript."""
    if page < 1 or page_size < 1:
        raise UsageError("page and page_size take 1 or more", ["page", "page_size"])
    session = find_session(ctx, session_id)
    total = transcripts.max_seq(ctx.db, session.id)
    first = (page - 1) * page_size + 1
    if first > max(total, 1):
        pages = max(1, -(-total // page_size))
        raise UsageError(
            f"session {session.id} has {counted(pages, 'page')} of {page_size}, not {page}"
        )
    last = min(total, first + page_size - 1)
    messages = transcripts.message_range(ctx.db, session.id, first, last)
    return Passage(session, messages, first, last, total, marked=False)


@dataclass(frozen=True)
class GrepMatch:
    """A matching message: its lines that match, and the messages around it."""

    hit: GrepHit
    lines: list[str]
    before: list[Message] = field(default_factory=list)
    after: list[Message] = field(default_factory=list)
    every_word: bool = True  # False: it holds only some of the query's words

    @property
    def ref(self) -> str:
        return f"{self.hit.session_id}{MESSAGE_SEPARATOR}{self.hit.seq}"

    def to_dict(self) -> dict[str, Any]:
        hit = self.hit
        return {
            "ref": self.ref,
            "session_id": hit.session_id,
            "seq": hit.seq,
            "role": hit.role,
            "speaker": hit.speaker,
            "client": hit.client,
            "scope": hit.scope,
            "title": hit.title,
            "created_at": hit.created_at,
            "lines": self.lines,
            "every_word": self.every_word,
            "before": [_brief(m) for m in self.before],
            "after": [_brief(m) for m in self.after],
        }


def _brief(message: Message) -> dict[str, Any]:
    line = first_line(said_text(message))
    return {"seq": message.seq, "role": str(message.role), "speaker": message.speaker, "line": line}


def brief_line(message: Message) -> str:
    """A neighbouring message in one line: who said it, then its first line."""
    who = said_by(message.speaker, str(message.role))
    return f"{who}: {first_line(said_text(message))}"


def first_line(text: str) -> str:
    return one_line(next((line for line in text.splitlines() if line.strip()), ""))


def matching_lines(text: str, terms: list[str], most: int = 2) -> list[str]:
    """The lines of ``text`` holding a query word (at most ``most``); else its first line."""
    found = [one_line(line) for line in text.splitlines() if any(t in line.lower() for t in terms)]
    return found[:most] or [first_line(text)]


def grep(
    ctx: Context, query: str, where: Where, limit: int = 10, around: int = 1
) -> list[GrepMatch]:
    """Messages holding every word of ``query``; when fewer than ``limit`` do, messages
    holding any of its telling words follow. Operators and quotes are words like others;
    function words ("the", "why") count only in a query of nothing else."""
    if limit < 1 or around < 0:
        raise UsageError("limit takes 1 or more and around 0 or more", ["limit", "around"])
    # from here on, the query without its private parts: no statement, error or answer
    # sees them (as recall's: ``privacy.asked_query``)
    query = asked_query(query)
    if not query:
        raise UsageError(f"nothing to search for: {PRIVATE_ONLY}")
    terms = fts_terms(query)
    if not terms:
        raise UsageError(f"nothing to search for in {query!r}: give a word")
    scope = _filter(ctx, where)
    some: list[GrepHit] = []  # holding only some of the words
    if CJK.search(query):
        hits = transcripts.grep_substrings(ctx.db, terms, scope, limit)
    else:
        words = [t for t in terms if t not in STOPWORDS] or terms
        hits, some = _search(ctx, words, scope, limit)
    return [_with_neighbours(ctx, hit, terms, around) for hit in hits] + [
        _with_neighbours(ctx, hit, terms, around, every_word=False) for hit in some
    ]


def _search(
    ctx: Context, words: list[str], scope: SessionFilter, limit: int
) -> tuple[list[GrepHit], list[GrepHit]]:
    """The messages holding every word, ranked when few enough match (else newest first);
    then, to fill ``limit``, those holding any word rare enough to rank (a word in more
    messages selects nothing)."""
    db = ctx.db
    every = fts_query(" ".join(words), "AND") or ""
    ranked = transcripts.fts_count(db, every, RANK_AT_MOST + 1) <= RANK_AT_MOST
    hits = transcripts.grep_fts(db, every, scope, limit, ranked)
    if len(hits) >= limit or len(words) < 2:
        return hits, []
    counts = {w: transcripts.fts_count(db, fts_query(w) or "", RANK_AT_MOST + 1) for w in words}
    telling = [w for w, n in counts.items() if 0 < n <= RANK_AT_MOST]
    wider = fts_query(" ".join(telling or [w for w, n in counts.items() if n])) or ""
    if not wider:
        return hits, []
    seen = {(h.session_id, h.seq) for h in hits}
    more = transcripts.grep_fts(db, wider, scope, limit + len(hits), bool(telling))
    return hits, [h for h in more if (h.session_id, h.seq) not in seen][: limit - len(hits)]


def _with_neighbours(
    ctx: Context, hit: GrepHit, terms: list[str], around: int, every_word: bool = True
) -> GrepMatch:
    near = transcripts.message_range(ctx.db, hit.session_id, hit.seq - around, hit.seq + around)
    return GrepMatch(
        hit,
        matching_lines(unsaid(hit.speaker, hit.content), terms),
        [m for m in near if m.seq < hit.seq],
        [m for m in near if m.seq > hit.seq],
        every_word,
    )


def expand(ctx: Context, ref: str, around: int = 2) -> list[Passage]:
    """The raw messages behind ``ref`` (a memory id or prefix, a digest, or
    ``SESSION#A-B`` / ``SESSION#N``), with ``around`` turns either side: one passage for
    a range, one for each stored session range a memory was distilled from, in order."""
    if around < 0:
        raise UsageError("around takes 0 or more", ["around"])
    ref = ref.strip()
    if MESSAGE_SEPARATOR not in ref:
        memory = _memory(ctx, ref)
        found = origins(ctx, [memory]).get(memory.id, [])
        if not found:
            where = memory.source or "no source"
            raise NotFoundError(
                f"memory {memory.id[:8]} was not distilled from a session ({where})"
            )
        stored = [o for o in found if o.stored]
        if not stored:
            raise NotFoundError(
                f"memory {memory.id[:8]} came from {found[0].text()}: nothing left to open"
            )
        return [_passage(ctx, o.session_id, o.first, o.last, around, memory) for o in stored]
    session_id, _, numbers = ref.rpartition(MESSAGE_SEPARATOR)
    span = RANGE.match(numbers)
    if not session_id or not span:
        raise UsageError(f"cannot read {quoted_ref(ref)}: expected SESSION#A-B or SESSION#N")
    first, last = int(span[1]), int(span[2] or span[1])
    return [_passage(ctx, session_id, first, last, around, None)]


def _passage(
    ctx: Context, session_id: str, first: int, last: int, around: int, memory: Memory | None
) -> Passage:
    session = find_session(ctx, session_id)
    total = transcripts.max_seq(ctx.db, session.id)
    if first > last:
        raise UsageError(
            f"messages {first}-{last} run backwards: the first comes first "
            f"({session.id}#{last}-{first})"
        )
    if not 1 <= first <= last <= total:
        raise UsageError(
            f"messages {first}-{last} are out of bounds: session {session.id} has 1-{total}"
        )
    messages = transcripts.message_range(ctx.db, session.id, first - around, last + around)
    return Passage(session, messages, first, last, total, memory)


def _memory(ctx: Context, ref: str) -> Memory:
    try:
        return operations.get(ctx, ref)[0]
    except (NotFoundError, UsageError):
        raise NotFoundError(
            f"no memory or session message {quoted_ref(ref)}: "
            "give a memory id (or prefix) or SESSION#A-B"
        ) from None


@dataclass(frozen=True)
class Origin:
    """Where a memory came from: a session and the messages it was distilled from."""

    session_id: str
    first: int  # 0 with ``last``: a session no longer stored, of a fact its actions show
    last: int
    client: str = ""
    title: str = ""
    started_at: str | None = None
    stored: bool = False  # the session is still stored (expand can open it)
    by_time: bool = False  # a fact the session's tool calls show: the message said then
    # not stored: the machine whose memory came in by sync (it has the session); None: this one
    host: str | None = None
    # not stored: a session an assistant stored the memory in (MCP memory_store), not
    # captured yet (forgetting it forgets the memory: it is not one forgotten)
    running: bool = False

    def text(self) -> str:
        if self.running:
            return f"session {self.session_id} ({self.unstored()})"
        if not self.first:
            span = "its actions"
        elif self.first == self.last:
            span = f"message {self.first}"
        else:
            span = f"messages {self.first}-{self.last}"
        if self.by_time and self.first:
            span += " (the action's time)"
        if not self.stored:
            return f"session {self.session_id}, {span} ({self.unstored()})"
        day = (self.started_at or "")[:10]
        about = ", ".join(p for p in (self.client, day, self.title and f'"{self.title}"') if p)
        return f"session {self.session_id} ({about}), {span}"

    def unstored(self) -> str:
        """Why the session cannot be opened here: sessions never sync, so a memory from
        another machine names a session that machine keeps, not one forgotten here."""
        if self.host:
            return f"on host {self.host[:8]}, where it was stored: sessions do not sync"
        if self.running:
            return "the session is not stored yet: its capture hooks store it"
        return "the session is no longer stored"

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "first": self.first,
            "last": self.last,
            "client": self.client,
            "title": self.title,
            "stored": self.stored,
            "by_time": self.by_time,
            "host": self.host,
            "unstored": None if self.stored else self.unstored(),
        }


FOLD_DEPTH = 8  # folds followed into folded memories at most (a chain longer is unheard of)


def origins(ctx: Context, memories: list[Memory]) -> dict[str, list[Origin]]:
    """memory id -> every session range it was distilled from, in order: its own
    ``source``, then each fact merged into it and each memory folded into it (their
    events and rows; see ``store.sessions.folded_sources``). A fact of a session's tool
    calls (``session:<id>``) names the message said when the call was made."""
    from memctl.maintain.changes import FOLDS  # maintain's modules: only here

    named = {m.id: [(m.source, m.created_at), *_stored_in(m)] for m in memories}
    owner = {m.id: m.id for m in memories}  # a folded memory -> the memory asked about
    wanted = list(owner)
    for _ in range(FOLD_DEPTH):
        if not wanted:
            break
        folded = folded_sources(ctx.db, wanted, FOLDS)
        wanted = []
        for into, pieces in folded.items():
            for source, at, came_as in pieces:
                named[owner[into]].append((source, at))
                if came_as != into and came_as not in owner:
                    owner[came_as] = owner[into]
                    wanted.append(came_as)
    spans = {m: [s for source, at in refs if (s := _span(source, at))] for m, refs in named.items()}
    sessions = sorted({s[0] for named_spans in spans.values() for s in named_spans})
    rows = transcripts.memory_session_rows(ctx.db, sessions)
    hosts = foreign_hosts(ctx.db, [m.id for m in memories])
    # A file's ``source`` is the word of whoever pushed it: one naming a session stored
    # here would open it (``expand``, MCP ``session_expand``) from the file's scope.
    claimed = {m.id: _span(m.source, m.created_at) for m in memories if m.id in hosts}
    running = {m.id: m.session_id for m in memories if _stored_in(m) and m.id not in hosts}
    result: dict[str, list[Origin]] = {}
    for memory_id, found in spans.items():
        kept: list[Origin] = []
        for span in dict.fromkeys(found):
            session_id, first, last, when = span
            row = None if claimed.get(memory_id) == span else rows.get(session_id)
            if when is not None:  # the message said when the action was taken
                first = last = (transcripts.seq_at(ctx.db, session_id, when) or 0) if row else 0
            origin = (
                Origin(
                    session_id,
                    first,
                    last,
                    row["client"],
                    row["title"],
                    row["started_at"],
                    True,
                    when is not None,
                )
                if row and first
                else Origin(
                    session_id,
                    first,
                    last,
                    by_time=when is not None,
                    host=hosts.get(memory_id),
                    running=running.get(memory_id) == session_id,
                )
            )
            if origin not in kept:
                kept.append(origin)
        if kept:
            result[memory_id] = kept
    return result


def _stored_in(memory: Memory) -> list[tuple[str, str]]:
    """The session an assistant stored ``memory`` in (MCP memory_store), as a source naming
    it, and when: the message said then is the one that stored it."""
    if memory.source == ASSISTANT_SOURCE and memory.session_id:
        return [(f"session:{memory.session_id}", memory.created_at)]
    return []


def _span(source: str, at: str) -> tuple[str, int, int, str | None] | None:
    """(session, first, last, None) of a source naming messages; (session, 0, 0, when)
    of one naming only its session; None for any other source."""
    named = source_range(source)
    if named is not None:
        return (*named, None)
    session_id = source_session(source)
    return (session_id, 0, 0, at) if session_id else None


def last_captured(ctx: Context) -> dict[str, str]:
    """When memctl last stored messages of each client's sessions: {client: ISO time}."""
    return last_stored_by_client(ctx.db)
