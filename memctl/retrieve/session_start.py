"""What a session starts with before anyone has asked anything: a layered context.

A session-start hook has no question to recall for, and a made-up query
("conventions and decisions in this project") is exactly the kind recall now
answers with nothing. So the block is chosen, not searched, in layers, each
within its own budget (``context.*_budget``) and all within the total:

- L0 identity: the identity files, verbatim (``retrieve.identity``);
- L1 essentials: the written profile (global and the project's, see
  maintain/profile.py), the user's profile and preferences, the project's pinned facts
  and conventions, most important first, line by line while they fit;
- L2 recent work: the digests of the project's latest sessions (what was asked,
  done and left open), each after what a later session found wrong in it
  (``ingest.corrections``) and its own session's facts, sharing the layer
  fairly, then its recent cases (errors and fixes) and events.

A memory that does not fit what is left is shortened (``retrieve.fit``), not dropped.

``compact`` halves L1 and drops L2. Each memory appears once; nothing of another
project appears. Nothing is touched: being shown at start is not being recalled.
Every item, and every memory left out, says why (``memctl context --explain``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from memctl.config import Settings
from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.memories.one_off import one_off
from memctl.memories.provenance import (
    DIGEST_TAG,
    forged,
    origin,
    start_refusal,
    trusted_hosts,
)
from memctl.model import Category, Kind, Memory, RelationType, State
from memctl.retrieve.context_block import CONTEXT_TAG, escape_tags, memory_line
from memctl.retrieve.fit import SHORTEST, shorten
from memctl.retrieve.identity import identity_paths, read_identity
from memctl.retrieve.params import recall_params
from memctl.retrieve.pipeline import Recalled
from memctl.retrieve.stages.pack import estimate_tokens
from memctl.store.memories import MemoryFilter, get_memories, list_memories
from memctl.store.profile import profile_lines
from memctl.store.relations import relations_touching
from memctl.store.sync import foreign_hosts
from memctl.store.transcripts import count_scope_sessions

ACTIVE = (State.ACTIVE,)
PERSONAL = (Category.PROFILE, Category.PREFERENCES)
RECENT = (Category.CASES, Category.EVENTS)
ITEM_TOKENS = 6  # the bullet, the age and the line break
# A fact this long that the block already gives is taken out of a later digest, which
# quotes what was asked and done (the deploy fact said three times in one block, issue 37).
REPEAT_CHARS = 20
PER_SECTION = 12  # memories read per section: more than a layer's budget holds
DIGESTS = 3  # latest session digests read for L2
# The share of L2 a session's own facts may take before its digest (the rest is the digest's).
OWN_FACTS_SHARE = 0.5
# Written profile sections whose line restates its one memory: that memory is not repeated.
RESTATED = ("role", "conventions")
SESSION_TOOLS = (
    "Earlier sessions of this project are stored verbatim: for the exact command, error "
    "or wording, search them (MCP session_search, or `memctl sessions grep`) and open the "
    "messages behind a memory (session_expand, `memctl sessions expand ID`)."
)
# Sessions never sync (docs/sync.md): a memory another machine pushed was said there.
SYNCED_SESSIONS = "Memories marked {hosts} came by sync: their sessions are on the machine named."
SESSIONS_ELSEWHERE = (
    "This project's earlier sessions are on {hosts}, not on this machine (sessions do not sync)."
)


class Tokens:
    """A token estimate per script: recall's (``recall.chars_per_token``, about 4 Latin
    characters a token, ``recall.cjk_chars_per_token`` for Chinese, and kana and hangul
    at their own rates; ``retrieve.stages.pack``)."""

    def __init__(self, settings: Settings) -> None:
        self.params = recall_params(settings)

    def of(self, text: str) -> int:
        return estimate_tokens(text, self.params)


@dataclass
class Item:
    """One line (or, for L0, one file) of the block and why it is there, or not."""

    layer: str
    section: str
    text: str
    tokens: int
    why: str
    memory_id: str | None = None
    refused: bool = False  # left out for who said it (sync.trust, fetched code), not its size

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "section": self.section,
            "memory_id": self.memory_id,
            "tokens": self.tokens,
            "why": self.why,
            "text": self.text,
        }


@dataclass
class Layered:
    """The block's items, the memories left out, the notes (unusable identity files), and
    each layer's tokens used and budget."""

    title: str
    items: list[Item] = field(default_factory=list)
    dropped: list[Item] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    budgets: dict[str, int] = field(default_factory=dict)
    used: dict[str, int] = field(default_factory=dict)
    sessions_stored: int = 0
    # the other machines whose memories the block gives (their sessions are there)
    hosts: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The ``<memctl-context>`` block; '' when there is nothing to say (no memory,
        and no earlier session whose words the session tools would find)."""
        if not self.items and not (self.sessions_stored and any(self.budgets.values())):
            return ""
        lines = [f"<{CONTEXT_TAG}>", f"Context for: {escape_tags(' '.join(self.title.split()))}"]
        section = None
        for item in self.items:
            if item.section != section:
                section = item.section
                lines.append(f"## {section}")
            lines.append(item.text)
        lines += self.where_sessions_are()
        lines.append(f"</{CONTEXT_TAG}>")
        return "\n".join(lines)

    def where_sessions_are(self) -> list[str]:
        """The session tools when this machine holds sessions of the project (and which
        memories' sessions are elsewhere), else the machines that hold them, else nothing."""
        hosts = " and ".join(f"host {host[:8]}" for host in self.hosts)
        if self.sessions_stored:
            return [SESSION_TOOLS] + ([SYNCED_SESSIONS.format(hosts=hosts)] if hosts else [])
        return [SESSIONS_ELSEWHERE.format(hosts=hosts)] if hosts else []

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "budgets": self.budgets,
            "used": self.used,
            "items": [i.to_dict() for i in self.items],
            "dropped": [i.to_dict() for i in self.dropped],
            "notes": self.notes,
            "sessions_stored": self.sessions_stored,
            "hosts": self.hosts,
            "block": self.text(),
        }


@dataclass
class _Builder:
    """Adds items layer by layer, within each layer's budget and the total."""

    out: Layered
    total: int
    tokens: Tokens
    now: datetime
    seen: set[str] = field(default_factory=set)
    said: list[str] = field(default_factory=list)  # the memories given, as written
    # the host that pushed a memory, when another machine did; the hosts of ``sync.trust``
    host_of: Callable[[str], str | None] = lambda _memory_id: None
    trust: frozenset[str] | None = frozenset()
    # whether a memory's file names a host whose key did not sign it (``provenance.forged``)
    forged: Callable[[str, str | None], bool] = lambda _memory_id, _host: False
    # the session the block is for, when the client names it: resumed, it holds its own
    # words already, so its digest and facts are not recent work to give it again
    session: str | None = None

    def its_own(self, memory: Memory) -> bool:
        """Whether ``memory`` comes from the session the block is for (then left out of
        L2, and the explanation says so)."""
        if not self.session or memory.session_id != self.session:
            return False
        item = self._item("L2", "recent sessions", memory, "", origin(memory), None)
        item.why = "left out: from the session this block is for (resumed: it holds it)"
        self.out.dropped.append(item)
        return True

    def left(self, layer: str) -> int:
        spent = sum(self.out.used.values())
        return min(self.out.budgets[layer] - self.out.used[layer], self.total - spent)

    def add(self, item: Item) -> bool:
        if item.tokens > self.left(item.layer):
            item.why = f"left out: over the {item.layer} budget ({item.tokens} tokens, " + (
                f"{max(0, self.left(item.layer))} left)"
            )
            self.out.dropped.append(item)
            return False
        self.out.items.append(item)
        self.out.used[item.layer] += item.tokens
        return True

    def memory(
        self, layer: str, section: str, memory: Memory, why: str, cap: int | None = None
    ) -> None:
        """Add ``memory`` (once), shortened to what is left (at most ``cap`` tokens) when it
        does not fit whole."""
        key = " ".join(memory.content.lower().split())
        if memory.id in self.seen or key in self.seen:
            return  # each fact once
        self.seen.add(memory.id)
        shown = memory
        if DIGEST_TAG in memory.tags:  # without the facts the block gives already
            shown = replace(memory, content=unsaid(asked_once(memory.content), self.said))
            if not shown.content:
                return
        host = self.host_of(memory.id)
        refused = start_refusal(memory, host, self.trust, self.forged(memory.id, host))
        item = self._item(layer, section, shown, why, origin(memory, host), cap)
        if refused:  # its text may still come from a memory that may open a session
            item.why, item.refused = f"left out: {refused}", True
            self.out.dropped.append(item)
            return
        self.seen.add(key)
        if self.add(item):  # given: a later digest need not repeat it
            self.said.append(memory.content)
            if host and host not in self.out.hosts:
                self.out.hosts.append(host)

    def _item(
        self, layer: str, section: str, memory: Memory, why: str, said_by: str, cap: int | None
    ) -> Item:
        text = memory.content
        cost = ITEM_TOKENS + self.tokens.of(text)
        room = min(self.left(layer), cost if cap is None else cap)
        if cost > room >= SHORTEST:
            text = shorten(text, room - ITEM_TOKENS, self.tokens.of) or text
            if text != memory.content:
                why += f"; shortened to fit ({ITEM_TOKENS + self.tokens.of(text)} of {cost} tokens)"
                cost = ITEM_TOKENS + self.tokens.of(text)
        shown = replace(memory, content=text)
        line = memory_line(Recalled(shown, 0.0, {}, {}, {}), self.now, said_by)
        return Item(layer, section, line, cost, why, memory.id)


def unsaid(text: str, said: list[str]) -> str:
    """``text`` without the facts already given (each ``REPEAT_CHARS`` or longer); ''
    when nothing of its own is left."""
    kept = text
    for fact in said:
        if len(fact) >= REPEAT_CHARS:
            kept = kept.replace(fact, "")
    if kept == text:
        return text
    lines = (_items_left(" ".join(line.split())) for line in kept.splitlines())
    return "\n".join(line for line in lines if line)


def asked_once(digest: str) -> str:
    """A digest without the ask its heading's title states whole: a session titled by its
    first request ("Session of … — Make the colors green and yellow") would say it twice,
    in the heading and first on its "Asked:" line. A title cut short ("…") says less than
    the ask, which stays."""
    heading, _, rest = digest.partition("\n")
    title = " ".join(heading.partition(" — ")[2].split())
    lines = rest.split("\n")
    for n, line in enumerate(lines):
        if line.startswith(ASKED):
            first, _, others = line.removeprefix(ASKED).partition(ASKS_JOINED)
            if title and " ".join(first.split()) == title:
                lines[n] = ASKED + others if others else ""
            break
    return "\n".join([heading, *(line for line in lines if line)])


ASKED = "Asked: "  # a digest's line of requests, joined by "; " (ingest/digest.py render)
ASKS_JOINED = "; "
# A digest's section line: "Fixed: a; b; c" (ingest/digest.py renders them so).
SECTION_LINE = re.compile(r"([A-Z][\w ,]{1,40}):\s*(.*)")
EMPTY_ITEM = re.compile(r";\s*(?=;|$)")  # a separator before another or at the end
LEADING_SEPARATOR = re.compile(r"^\s*;\s*")


def _items_left(line: str) -> str:
    """A digest's section line without the items a removed fact left empty ("Fixed: ; b"
    -> "Fixed: b"); '' when none is left. Other lines as they are."""
    section = SECTION_LINE.fullmatch(line)
    if section is None:
        return line
    items = LEADING_SEPARATOR.sub("", EMPTY_ITEM.sub("", section[2])).strip()
    return f"{section[1]}: {items}" if items else ""


def _identity(builder: _Builder, home: Any, cwd: Any) -> None:
    """L0: each identity file verbatim, cut (with a note) when over what is left."""
    for path in identity_paths(home, cwd):
        found = read_identity(path)
        if found is None:
            continue
        if found.note:
            builder.out.notes.append(found.note)
        if found.refused:  # the session is told, in one line
            line = f"[memctl: {found.note}]"
            builder.add(Item("L0", "identity", line, builder.tokens.of(line), "refused"))
        if not found.text:
            continue
        text, left = escape_tags(found.text), builder.left("L0")
        if builder.tokens.of(text) > left:
            text = _cut(text, left, builder.tokens)
            builder.out.notes.append(f"{path} is over the L0 budget of {left} tokens: cut")
            text += f"\n[… {path.name} cut to the identity budget]" if text else ""
        if text:
            builder.add(Item("L0", "identity", text, builder.tokens.of(text), f"from {path}"))


def _cut(text: str, budget: int, tokens: Tokens) -> str:
    """The lines of ``text`` that fit ``budget`` (less the cut note's share), whole."""
    kept: list[str] = []
    used = 12  # the note saying it was cut
    for line in text.splitlines():
        cost = tokens.of(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join(kept).rstrip()


def _essentials(builder: _Builder, ctx: Context, scope: str) -> None:
    """L1: profile and preferences (this project's and global), then the project's pinned
    and semantic facts (its conventions and decisions), most important first."""
    db = ctx.db
    for line in profile_lines(db, (GLOBAL_SCOPE, scope)):
        text = f"- {line.section}: {line.text} [{', '.join(s[:8] for s in line.sources)}]"
        why = f"L1 written profile ({line.scope}), from {', '.join(line.sources)}"
        if text.casefold() not in builder.seen:
            builder.seen.add(text.casefold())
            builder.add(Item("L1", "profile", text, ITEM_TOKENS + builder.tokens.of(text), why))
            if line.section in RESTATED:
                builder.seen |= set(line.sources)  # the line says what its memory says
    personal = MemoryFilter(scopes=(scope, GLOBAL_SCOPE), categories=PERSONAL, states=ACTIVE)
    for memory in list_memories(db, personal, PER_SECTION, "importance"):
        why = f"L1 {memory.category}: importance {memory.importance:.2f}"
        builder.memory("L1", str(memory.category), memory, why)
    facts = MemoryFilter(scopes=(scope,), kinds=(Kind.PINNED, Kind.SEMANTIC), states=ACTIVE)
    for memory in list_memories(db, facts, 2 * PER_SECTION, "importance"):
        if memory.category in PERSONAL or (memory.category in RECENT and memory.kind != "pinned"):
            continue  # personal above; cases and events are recent work (L2) unless pinned
        if memory.kind != Kind.PINNED and one_off(memory.content):
            continue  # an instruction about an old task an older rules run filed as a rule
        why = f"L1 project {memory.kind} {memory.category}: importance {memory.importance:.2f}"
        builder.memory("L1", "project facts and conventions", memory, why)


def fair_share(costs: list[int], total: int) -> int:
    """The first item's share of ``total`` when it is split fairly among ``costs``: an item
    needing less than an equal share keeps its cost, and the others share the rest."""
    left, waiting = total, sorted(costs[1:])
    for count, cost in enumerate(waiting):
        share = left // (len(waiting) - count + 1)
        if cost > share:
            break
        left -= cost
    else:
        return min(costs[0], left)
    return min(costs[0], left // (len(waiting) - count + 1))


def corrections(ctx: Context, digests: list[Memory]) -> dict[str, list[Memory]]:
    """{digest id: the active memories of later sessions that correct it}
    (``ingest.corrections`` links them ``contradicts``)."""
    ids = [d.id for d in digests]
    edges = relations_touching(ctx.db, ids, (RelationType.CONTRADICTS,))
    pairs = [(e.dst_id, e.src_id) for e in edges if e.dst_id in ids and e.src_id not in ids]
    found = get_memories(ctx.db, [new for _, new in pairs])
    by_digest: dict[str, list[Memory]] = {}
    for digest_id, new in pairs:
        if new in found and found[new].state == State.ACTIVE:
            by_digest.setdefault(digest_id, []).append(found[new])
    return by_digest


def _recent(builder: _Builder, ctx: Context, scope: str) -> None:
    """L2: the latest session digests, each after its own session's facts (which may
    correct it) and sharing the layer fairly with the others, then the project's other
    recent cases and events."""
    latest = MemoryFilter(scopes=(scope,), tag=DIGEST_TAG, states=ACTIVE)
    read = list_memories(ctx.db, latest, DIGESTS + 1, "created")  # one may be its own
    digests = [d for d in read if not builder.its_own(d)][:DIGESTS]
    recent = MemoryFilter(scopes=(scope,), categories=RECENT, states=ACTIVE)
    facts = [
        m
        for m in list_memories(ctx.db, recent, PER_SECTION, "created")
        if DIGEST_TAG not in m.tags and not builder.its_own(m)
    ]
    correcting = corrections(ctx, digests)
    for index, digest in enumerate(digests):
        for memory in correcting.get(digest.id, []):  # a later session's, wherever it ranks
            builder.memory("L2", "recent sessions", memory, "L2 corrects the digest after it")
        own = [m for m in facts if m.session_id and m.session_id == digest.session_id]
        budget = builder.out.used["L2"] + int(OWN_FACTS_SHARE * builder.left("L2"))
        for memory in own:
            why = "L2 a fact of the digest's session, before it (it may correct the digest)"
            if builder.out.used["L2"] + ITEM_TOKENS + builder.tokens.of(memory.content) <= budget:
                builder.memory("L2", "recent sessions", memory, why)
        costs = [ITEM_TOKENS + builder.tokens.of(d.content) for d in digests[index:]]
        cap = fair_share(costs, builder.left("L2"))
        builder.memory("L2", "recent sessions", digest, "L2 digest of a latest session", cap)
    for memory in facts:
        why = f"L2 recent {memory.category}, created {memory.created_at[:10]}"
        builder.memory("L2", "recent cases and events", memory, why)


def layered_context(
    ctx: Context,
    scope: str,
    title: str,
    total: int,
    compact: bool = False,
    now: datetime | None = None,
    session: str | None = None,
) -> Layered:
    """The layers of a new session's context in ``scope``, within ``total`` tokens;
    ``session``: the one starting, when the client names it (``_Builder.session``)."""
    settings = ctx.settings
    essentials = settings.context_essentials_budget
    out = Layered(
        title,
        budgets={
            "L0": settings.context_identity_budget,
            "L1": essentials // 2 if compact else essentials,
            "L2": 0 if compact else settings.context_recent_budget,
        },
        used={"L0": 0, "L1": 0, "L2": 0},
    )
    tokens = Tokens(settings)
    builder = _Builder(out, total, tokens, now or datetime.now(UTC), session=session)
    builder.trust = trusted_hosts(settings.sync_trust)
    if settings.refused_note:
        out.notes.append(settings.refused_note)
    _identity(builder, settings.home, settings.cwd)
    if settings.db_path.exists():
        builder.host_of = lambda memory_id: foreign_hosts(ctx.db, (memory_id,)).get(memory_id)
        builder.forged = lambda memory_id, host: bool(
            host and forged(ctx.db, {memory_id: host}, settings.home)
        )
        _essentials(builder, ctx, scope)
        if out.budgets["L2"]:
            _recent(builder, ctx, scope)
        out.sessions_stored = count_scope_sessions(ctx.db, scope)
    return out
