"""Task profile: write one global profile and one per project, each line citing its sources.

By rules, from what the store holds (no model):

- static: ``role`` (profile memories), ``stack`` (the tools and services the memories
  mention most, from the knowledge graph, those most of the store's projects name after
  the project's own; a brand only simple-icons lists, only where a memory names it beside
  a file, a command or a repository), ``conventions`` (preferences and patterns, not a
  one-off instruction about the task at hand, a bug report or "don't stop until ...":
  ``memories.one_off``; nor a check's command a later one of its purpose replaced);
- dynamic: ``focus`` (what the latest sessions asked, of those within ``CURRENT_DAYS`` of
  the newest: a request, not a command typed into the prompt, a pasted terminal line, a
  two-word go-ahead, a chore such as "commit and push", a sign-off ("Stop now.") or a later
  answer to the assistant: "great, but ...", "no, ...", "いや…"),
  ``open problems`` (what those digests left open), ``decisions`` (what the latest
  decided, newest first, no one-off instruction); no digest line holding a terminal's
  frame or banner, and a digest's item keeps a "; " inside its brackets or code.

A line saying what a line of another section says (most of its words in it) is said once:
a request that is still open, or became a convention or a decision, is said there, not in
focus.

With an LLM configured, the model rewrites each profile from the rules' lines (numbered,
with their sections): short lines, each citing the numbers of the lines it rests on,
whose memories it then cites; an answer citing no line, or a line that is not there,
is refused, and the rules' lines stay (so they do when the LLM fails or the run's
token budget is spent).

The host model (the assistant the user runs, through MCP) may write a profile too:
``host_task`` gives it the rules' lines with the ids of their memories, ``host_written``
takes its lines, each citing the memories it rests on; a line citing no active memory
of that scope (or one that is not there) refuses the whole answer, each problem named.
``profile`` keeps a host-written profile while every line's sources are active: once
one goes, the rules (or the LLM) write that scope anew, and the host may write it again.

The global profile reads the global memories; a project's reads its own (a project's
memory never shows in another project's session start). Each line keeps the ids of the
memories it rests on; a line whose source is forgotten, deleted or superseded, or of
a scope not asked for, is not shown (store/profile.py) and is gone at the next run. At most
``PER_SECTION`` lines a section, each cut to ``LINE_CHARS``: the whole profile stays
within the session start's L1 budget.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

from memctl.config.scope import GLOBAL_SCOPE
from memctl.errors import InputError
from memctl.ingest.entities import ALIASES, brand_only, digest_items
from memctl.ingest.facts import abstract
from memctl.ingest.tools import READ_ONLY
from memctl.lazy_re import lazy
from memctl.maintain.plan import Maintenance, TaskReport
from memctl.memories.one_off import REPLY, one_off, task_note
from memctl.memories.privacy import scrub
from memctl.memories.provenance import DIGEST_TAG
from memctl.memories.statements import normalised, replaced
from memctl.model import Category, Kind, Memory, State, now_iso, parse_time
from memctl.retrieve.query import STOPWORDS, cjk_count
from memctl.retrieve.stages.mmr import words
from memctl.store.database import Database
from memctl.store.events import last_event
from memctl.store.graph import shared_floor
from memctl.store.memories import MemoryFilter, get_memories, list_memories
from memctl.store.profile import (
    ProfileLine,
    profile_lines,
    profile_scopes,
    replace_profile,
    stack_mentions,
    stack_spread,
    stored_lines,
)

STATIC = ("role", "stack", "conventions")
DYNAMIC = ("focus", "open problems", "decisions")
SECTIONS = (*STATIC, *DYNAMIC)
PER_SECTION = 5
LINE_CHARS = 160
DIGESTS = 3  # the latest session digests the dynamic sections read
# Focus and open problems come only from digests of sessions within this many days of the
# scope's latest: a request of a session months before the last one is not what the work
# is about now (a walk's project showed a six-month-old request as focus). A week: the
# sessions a person coming back on Monday still counts as last week's work.
CURRENT_DAYS = 7
# The dynamic sections whose lines hold only while the work is current (decisions hold on).
CURRENT_ONLY = ("focus", "open problems")
STACK_KINDS = ("tool", "service")
STACK_SOURCES = 3  # memories cited for a stack line
# Entities that make a memory naming a brand a developer's (``_stack``): the rules' kinds
# of code (ingest/entities.py).
CODE_KINDS = ("file", "command", "repository")
STACK_CANDIDATES = 4  # the most named tools read a line of the stack may come from, per line
# What a preference chose against: "I prefer helix over vim" (``passed_over``)
PREFERRED_OVER = lazy(r"\bprefers? .+? over (.+?)(?:\s*[,.;!]|$)", re.I)
# Words that end the thing chosen against and start what it was for (reconcile_rules' CLAUSE)
CLAUSE_WORDS = frozenset("for in on with when while because since as to these now".split())
# Digest lines (ingest/digest.py render) and the section each feeds.
DIGEST_LINES = {"Asked: ": "focus", "Left open: ": "open problems", "Decided: ": "decisions"}
# The order lines are kept in when two say the same thing: focus (what was asked) last.
PRECEDENCE = ("role", "stack", "conventions", "decisions", "open problems", "focus")
# A line with at least this many words, this share of them in an earlier line, repeats it
# ("unanswered: X" after the focus "X"; "Good. From now on, Y" after the convention "Y").
REPEAT_MIN_WORDS = 3
REPEAT_SHARE = 0.8
# A focus line of fewer words asks nothing a colleague can read ("continue implementation");
# a line in Chinese, Japanese or Korean is not counted so (its words are not spaced).
FOCUS_MIN_WORDS = 3
# A shell prompt pasted into a request ("jim@host:/mnt/c/app$ claude -c"): terminal output.
TERMINAL_PROMPT = lazy(r"\S+@[\w.-]+:[~/]\S*\$\s")
# Box drawing and block elements (Unicode U+2500-U+259F): a terminal's frames and banners
# ("│ Path must be within ... │", Claude Code's "▐▛███▜▌"), pasted, never typed into a
# request or a decision: no line of any section.
TERMINAL_ART = lazy(r"[\u2500-\u259f]")
# Work on the repository, not what it is for: a focus line of these words and function
# words only ("commit and push", "did you push?", "continue until all are done") asks a
# chore of the session, and says nothing of the work a colleague would pick up.
CHORES = frozenset(
    """commit commits push pull fetch merge rebase force normal continue proceed resume
    keep going go ahead git github origin main master branch""".split()
)
# Ending the session, not work of it: a focus line of these words, the chores' and function
# words only ("I've reviewed my work and it's complete. Stop now.", "you can stop").
SIGN_OFF = frozenset(
    "stop stopped done complete completed finish finished review reviewed work".split()
)
# A later request that answers the assistant's last turn rather than asking anew, besides
# ``REPLY``'s assessments: a no, a yes or a correction ("no, set the working dir to X", "but
# you got rid of the descriptions", "I think you missed some places"; "いや別に…" and "違う、…"
# (no, wrong), "어 해줘" (yeah, do it), "不对，…"). What it answers is the focus; a first
# request opens its session however it starts. A word that only opens a longer word
# ("違うファイル", a different file; "어떤", which; "对比", compare) is no answer.
ANSWER = lazy(
    r"^\W*(?:(?:no|nope|nah|wrong|but)\b|いや(?![\u3040-\u309f])|"
    r"(?:違う|ちがう|うん|はい|ええ|不是|不对|对|好的|嗯|아니(?:요)?|아뇨|어|응|네)(?=[\s、。,，.!！]))|"
    r"\byou (?:missed|forgot|broke|got rid of|removed|dropped)\b",
    re.I,
)
# Claude Code's line-end backslashes, typed to go on to the next line of a prompt ("not
# supported by Chrome :(\ \"): the prompt's line breaks, not its text.
LINE_END = lazy(r"(?:\s*\\)+\s*$")
# A check's fact (ingest/extract_actions.py): "type checks run with `uv run ty check` (passed
# on 2025-07-13)": its purpose and its day.
CHECK_FACT = lazy(r"^(.+?) with `[^`\n]+` \((?:passed|succeeded) on (\d{4}-\d{2}-\d{2})\)$")
WRITER = "rules"
LLM_WRITER = "llm"
HOST_WRITER = "host"
PROFILE_SYSTEM = """You write a short profile of a developer's work from numbered notes, \
each with its section. Sections: role, stack, conventions, focus, open problems, decisions. \
Merge repeats, keep what a colleague needs, add nothing the notes do not say, write in the \
notes' language. Each line is one short statement citing the numbers of the notes it rests \
on. Answer JSON: {"lines": [{"section": "stack", "text": "...", "notes": [1, 2]}]}."""


def lines_schema(cites: str, kind: str) -> dict[str, Any]:
    """The JSON schema of a written profile: lines, each with its section, its text and
    what it cites (``cites``, a list of ``kind``: the LLM's note numbers, the host's ids)."""
    line = {
        "section": {"type": "string", "enum": list(SECTIONS)},
        "text": {"type": "string"},
        cites: {"type": "array", "items": {"type": kind}},
    }
    item = {"type": "object", "properties": line, "required": ["section", "text", cites]}
    return {
        "type": "object",
        "properties": {"lines": {"type": "array", "items": item}},
        "required": ["lines"],
    }


PROFILE_SCHEMA = lines_schema("notes", "integer")


HOST_INSTRUCTIONS = """Write a short profile of the user's work in this scope from the \
notes (each with its section and the ids of the memories it rests on). Sections: role, \
stack, conventions, focus, open problems, decisions. Merge repeats, keep what a colleague \
needs, add nothing the memories do not say, write in the notes' language. Each line is one \
short statement citing, in `sources`, the full ids of the memories it rests on (memory_get \
reads one). A line citing no active memory of this scope refuses the whole answer: fix it \
and send it again. Answer with memory_profile_write."""
HOST_SCHEMA = lines_schema("sources", "string")


def _memories(
    db: Database, scopes: tuple[str, ...] | None, categories: tuple[Category, ...]
) -> list[Memory]:
    found = MemoryFilter(scopes=scopes, categories=categories, states=(State.ACTIVE,))
    return list_memories(db, found, PER_SECTION * 2, "importance")


def _line(section: str, text: str, sources: list[str], at: str, scope: str) -> ProfileLine:
    text = LINE_END.sub("", text)
    return ProfileLine(scope, section, abstract(text, LINE_CHARS), tuple(sources), WRITER, at)


def _stack(
    db: Database, scopes: tuple[str, ...], at: str, scope: str, spread: tuple[dict[str, int], int]
) -> list[ProfileLine]:
    """The tools and services the scope's memories name most, those most projects name
    (``_everywhere``: Git, the assistant) after the others; a brand only simple-icons
    lists (YouTube, Sentry) only where a memory names it beside code (a file, a command, a
    repository), citing those memories: "I watched it on YouTube" is no stack."""
    found = stack_mentions(db, scopes, STACK_KINDS, PER_SECTION * STACK_CANDIDATES, CODE_KINDS)
    texts = {
        m.id: m.content for m in get_memories(db, [i for _, ids, _ in found for i in ids]).values()
    }
    lines = []
    for name, ids, coded in found:
        cited = [
            i
            for i in (coded if brand_only(name) else ids)
            if not passed_over(name, texts.get(i, ""))
        ]
        if cited:
            lines.append(_line("stack", name, cited[:STACK_SOURCES], at, scope))
    lines.sort(key=lambda x: _everywhere(x.text, spread) and scope != GLOBAL_SCOPE)
    return lines[:PER_SECTION]


def passed_over(name: str, text: str) -> bool:
    """The memory names ``name`` (or an alias of it) only as what it chose against: "I
    prefer helix over vim", "SQLite instead of Postgres", "switched from yarn to pnpm" (the
    walk's profile said "stack: Vim" for the helix user, at every session start)."""
    chosen = PREFERRED_OVER.search(text)
    rejected = [*_clause(replaced(text) or ""), *_clause(chosen.group(1) if chosen else "")]
    spellings = {name.lower(), *(a for a, n in ALIASES.items() if n == name)}
    found = [s for s in spellings if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text, re.I)]
    named = sum(len(re.findall(rf"(?<!\w){re.escape(s)}(?!\w)", text, re.I)) for s in found)
    return named == 1 and _within(normalised(found[0]).split(), rejected)


def _clause(said: str) -> list[str]:
    """The words of what was chosen against, up to what it was for: "postgres" of
    "Postgres for the edge cache", "black" of "black for Python"."""
    kept = []
    for word in normalised(said).split():
        if word in CLAUSE_WORDS:
            break
        kept.append(word)
    return kept


def _within(said: list[str], words_: list[str]) -> bool:
    """Whether ``said`` occurs in ``words_`` as a run of words."""
    return any(words_[i : i + len(said)] == said for i in range(len(words_)))


def _everywhere(name: str, spread: tuple[dict[str, int], int]) -> bool:
    """Whether most of the store's projects name ``name`` (``shared_floor``): it says
    nothing of one project, and comes after the project's other tools."""
    named, scopes = spread
    return named.get(name, 0) >= shared_floor(scopes)


def _typed_command(text: str) -> bool:
    """A command typed into the prompt ("python train.py --epochs 3"): a program's name as
    a shell writes it, then only arguments (a path, a flag, a file, a number; no word)."""
    first, *rest = text.split() or [""]
    program = first in ALIASES or first in READ_ONLY
    return program and all(w.isdigit() or any(c in w for c in "./-_=~") for w in rest)


def _request(text: str, replies: bool) -> bool:
    """Whether a digest's "Asked:" item says what the session was about: not a reply to
    the assistant's last answer either ("it's good, but ...", ``REPLY``), when it ``replies``
    to one (any request but a session's first)."""
    said = words(text)
    short = not cjk_count(text) and len(said) < FOCUS_MIN_WORDS
    chore = said <= CHORES | SIGN_OFF | STOPWORDS
    replied = replies and (REPLY.search(text) or ANSWER.search(text))
    return not (short or chore or _typed_command(text) or TERMINAL_PROMPT.search(text) or replied)


def _said_once(lines: dict[str, list[ProfileLine]]) -> list[ProfileLine]:
    """At most ``PER_SECTION`` lines a section, each said once (``PRECEDENCE``), in the
    order of ``SECTIONS``."""
    seen: set[str] = set()
    said: list[frozenset[str]] = []  # the words of the earlier sections' lines
    kept: dict[str, list[ProfileLine]] = {}
    for section in PRECEDENCE:
        kept[section] = []
        for line in lines[section]:
            if line.text.casefold() in seen or any(_repeats(words(line.text), x) for x in said):
                continue
            if len(kept[section]) < PER_SECTION:
                kept[section].append(line)
                seen.add(line.text.casefold())
        said += [words(x.text) for x in kept[section]]
    return [x for section in SECTIONS for x in kept[section]]


def _repeats(a: frozenset[str], b: frozenset[str]) -> bool:
    small = min(len(a), len(b))
    return small >= REPEAT_MIN_WORDS and len(a & b) >= REPEAT_SHARE * small


def written(
    db: Database, scope: str, at: str, spread: tuple[dict[str, int], int] | None = None
) -> list[ProfileLine]:
    """The profile of ``scope``, from its own memories, section by section; ``spread``:
    ``stack_spread`` when the caller read it once for every scope."""
    scopes = (scope,)
    lines: dict[str, list[ProfileLine]] = {s: [] for s in SECTIONS}
    for memory in _memories(db, scopes, (Category.PROFILE,)):
        lines["role"].append(_line("role", memory.content, [memory.id], at, scope))
    kinds = (Category.PREFERENCES, Category.PATTERNS)
    rules = _memories(db, scopes, kinds)
    replaced = _replaced(rules)
    for memory in rules:
        # a one-off instruction an older rules run filed as a rule is no convention either,
        # nor a bug report; what the user stored by hand (pinned) is theirs to word
        if DIGEST_TAG not in memory.tags and (
            memory.kind == Kind.PINNED
            or not (one_off(memory.content) or task_note(memory.content) or memory.id in replaced)
        ):
            lines["conventions"].append(
                _line("conventions", memory.content, [memory.id], at, scope)
            )
    lines["stack"] = _stack(db, scopes, at, scope, spread or stack_spread(db, STACK_KINDS))
    digests = MemoryFilter(scopes=scopes, tag=DIGEST_TAG, states=(State.ACTIVE,))
    latest = list_memories(db, digests, DIGESTS, "created")
    for memory in latest:
        current = _current(memory, latest[0])
        for text in memory.content.splitlines():
            for prefix, section in DIGEST_LINES.items():
                if text.startswith(prefix) and (current or section not in CURRENT_ONLY):
                    for n, part in enumerate(digest_items(text.removeprefix(prefix))):
                        if _belongs(section, part, opens=n == 0):
                            lines[section].append(_line(section, part, [memory.id], at, scope))
    return _said_once(lines)


def _replaced(rules: list[Memory]) -> set[str]:
    """The check facts another of the same purpose replaced: it passed more than
    ``CURRENT_DAYS`` after them ("type checks run with `uv run pyright`" of June beside `uv run
    ty check` of July). Two commands of one purpose run in the same week (a backend's and a
    frontend's tests) both hold."""
    days: dict[str, list[tuple[date, str]]] = {}
    for memory in rules:
        check = CHECK_FACT.match(memory.content)
        if check:
            day = date.fromisoformat(check.group(2))
            days.setdefault(check.group(1), []).append((day, memory.id))
    return {
        memory_id
        for runs in days.values()
        for day, memory_id in runs
        if max(runs)[0] - day > timedelta(days=CURRENT_DAYS)
    }


def _current(digest: Memory, newest: Memory) -> bool:
    """Whether ``digest``'s session is within ``CURRENT_DAYS`` of the scope's newest."""
    gap = parse_time(newest.created_at) - parse_time(digest.created_at)
    return gap <= timedelta(days=CURRENT_DAYS)


def _belongs(section: str, part: str, opens: bool) -> bool:
    """Whether a digest item is a line of ``section``: a focus item says what was asked
    (``_request``; the first request of a session replies to nothing, however it opens); a
    decision item is no instruction about that session's task alone (``one_off``: it stays
    in the digest and the session)."""
    if TERMINAL_ART.search(part):
        return False
    if section == "focus":
        return _request(part, replies=not opens)
    return section != "decisions" or not one_off(part)


def _rewritten(answer: Any, ruled: list[ProfileLine]) -> list[ProfileLine]:
    """The LLM's lines, each citing the memories of the rule lines it names; a ValueError
    (the answer is asked again) for a line without text, section or a real note."""
    items = answer.get("lines") if isinstance(answer, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ValueError("no list of lines")
    kept: list[ProfileLine] = []
    for item in items:
        text, section, notes = (  # the model's words are scrubbed as a memory's are
            scrub(str(item.get("text", "")))[0].strip(),
            item.get("section"),
            item.get("notes"),
        )
        if not isinstance(notes, list):
            raise ValueError(f"notes {notes!r} are not a list")
        if not text or section not in SECTIONS:
            raise ValueError(f"a line without text or with section {section!r}")
        if not notes or any(not isinstance(n, int) or not 1 <= n <= len(ruled) for n in notes):
            raise ValueError(f"notes {notes!r} are not among 1-{len(ruled)}")
        sources = list(dict.fromkeys(m for n in notes for m in ruled[n - 1].sources))
        first = ruled[0]
        kept.append(_line(section, text, sources, first.written_at, first.scope))
    if not kept:
        raise ValueError("no lines")
    by_section = {s: [x for x in kept if x.section == s][:PER_SECTION] for s in SECTIONS}
    return [replace(x, written_by=LLM_WRITER) for s in SECTIONS for x in by_section[s]]


def llm_written(m: Maintenance, ruled: list[ProfileLine]) -> list[ProfileLine] | None:
    """The profile the LLM writes from the rules' lines, or None (no LLM, over the run's
    token budget, or no valid answer)."""
    if not ruled:
        return None
    notes = "\n".join(f"{n}. [{x.section}] {x.text}" for n, x in enumerate(ruled, 1))
    answer: list[ProfileLine] | None = m.run.ask(
        PROFILE_SYSTEM, f"Notes:\n{notes}", PROFILE_SCHEMA, lambda a: _rewritten(a, ruled)
    )
    return answer


def host_task(db: Database, scope: str) -> list[dict[str, Any]]:
    """The notes the host writes ``scope``'s profile from: the rules' lines, each with its
    section and the ids of the memories it rests on."""
    return [
        {"section": x.section, "text": x.text, "sources": list(x.sources)}
        for x in written(db, scope, now_iso())
    ]


def _host_problems(item: Any, n: int, live: dict[str, Memory]) -> list[str]:
    if not isinstance(item, dict):
        return [f"line {n}: not an object"]
    problems = []
    if not str(item.get("text", "")).strip():
        problems.append(f"line {n}: no text")
    if item.get("section") not in SECTIONS:
        problems.append(f"line {n}: section {item.get('section')!r} is not one of {SECTIONS}")
    sources = item.get("sources")
    if not isinstance(sources, list) or not sources:
        return [*problems, f"line {n}: cites no memory (sources)"]
    unknown = [s for s in sources if not isinstance(s, str) or s not in live]
    if unknown:
        problems.append(f"line {n}: {unknown!r} is no active memory of this scope")
    return problems


def host_written(db: Database, scope: str, answer: Any) -> list[ProfileLine]:
    """The host's lines for ``scope``'s profile, each citing active memories of that scope;
    an InputError naming every problem when one is wrong."""
    items = answer.get("lines") if isinstance(answer, dict) else None
    if not isinstance(items, list) or not items:
        raise InputError('the answer is not {"lines": [...]} with at least one line')
    cited = [
        s
        for i in items
        if isinstance(i, dict) and isinstance(i.get("sources"), list)
        for s in i["sources"]
        if isinstance(s, str)
    ]
    live = get_memories(db, cited, MemoryFilter(scopes=(scope,), states=(State.ACTIVE,)))
    problems = [p for n, item in enumerate(items, 1) for p in _host_problems(item, n, live)]
    if problems:
        raise InputError("; ".join(problems))
    at = now_iso()
    lines = [
        _line(
            i["section"],
            scrub(str(i["text"]))[0].strip(),
            list(dict.fromkeys(i["sources"])),
            at,
            scope,
        )
        for i in items
    ]
    by_section = {s: [x for x in lines if x.section == s][:PER_SECTION] for s in SECTIONS}
    return [replace(x, written_by=HOST_WRITER) for s in SECTIONS for x in by_section[s]]


def host_kept(db: Database, scope: str) -> bool:
    """Whether ``scope``'s profile is the host's with every line's sources still active."""
    shown = profile_lines(db, (scope,))
    return (
        bool(shown)
        and all(x.written_by == HOST_WRITER for x in shown)
        and len(shown) == stored_lines(db, scope)
    )


def profile(m: Maintenance) -> TaskReport:
    report = m.report("profile")
    at = now_iso()
    spread = stack_spread(m.db, STACK_KINDS)
    for scope in [GLOBAL_SCOPE, *(s for s in profile_scopes(m.db) if s != GLOBAL_SCOPE)]:
        if host_kept(m.db, scope):
            report.count("kept as the host wrote them")
            continue
        since = last_event(m.db)
        ruled = written(m.db, scope, at, spread)
        lines = llm_written(m, ruled) or ruled
        with m.db.atomic():
            if m.overtaken(since, report):
                return report
            replace_profile(m.db, scope, lines)
        report.count("lines", len(lines))
        report.count("profiles")
        if lines is not ruled:
            report.count("written by the llm")
    return report
