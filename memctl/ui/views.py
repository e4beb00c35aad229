"""The viewer's pages and changes: each a function of the Context and the request's values
that returns one data dict (served as HTML through its template, and as JSON).

Every read and write goes through ``memctl.api``, as the CLI's do; a change is one
direct edit (or undo), so `memctl runs` lists it and `memctl undo` takes it back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from memctl.api import graph as graph_api
from memctl.api import ingest as ingest_api
from memctl.api import memory as memory_api
from memctl.api import sessions as sessions_api
from memctl.api import sync as sync_api
from memctl.api.config import Context, key_named
from memctl.api.memory import (
    EventsRequest,
    Filters,
    ListRequest,
    RememberRequest,
    UpdateRequest,
)
from memctl.api.projects import list_projects, project_labels
from memctl.api.recall import ProfileRequest, RecallRequest, excerpt, explain, recall
from memctl.api.recall import profile as profile_of
from memctl.api.sessions import Where
from memctl.api.sync import ShareRequest
from memctl.errors import InputError, NotFoundError, UsageError
from memctl.integrations.doctor import doctor
from memctl.integrations.purge import stop_resident_after
from memctl.model import QUERY_LIMIT, Memory, counted, counted_to
from memctl.ui.history import (
    about,
    first_relations,
    folded,
    named_in,
    offer_undo,
    related,
    told,
)

if TYPE_CHECKING:
    from memctl.api.ingest import RunRecord

Values = Mapping[str, str]
PAGE_SIZE = 50  # rows of a list page
MESSAGES_PAGE = 100  # messages of a session page
RUNS_SHOWN = 50  # rows of the runs page
RESULT_LINE = 300  # characters of a recall result shown (its part that answers: excerpt)
# Characters of a message its session page shows open (~4 screens of a long reply); the
# rest folds under its own toggle: a pasted 2.6 MB log was laid out whole, a page 544,000
# pixels tall, every message after it out of reach of a scroll.
MESSAGE_SHOWN = 10_000
KEY_SEPARATOR = "|"  # a keyset cursor: time|id
COUNT_AT_MOST = sessions_api.COUNT_AT_MOST  # rows a list page's total counts at most
# What a session page's marked messages are, by the link that opened it (``mark``): a
# memory's sources (its page's links, the default), or what a recall matched.
MARKS = {"source": "source", "match": "recall match"}
RECALL_MOST = int(key_named("recall.limit").maximum or 0)  # rows a recall page lists, as `-n`


@dataclass(frozen=True)
class Page:
    template: str
    view: Callable[[Context, Values], dict[str, Any]]


def _cursor(text: str | None) -> tuple[str, str] | None:
    if not text:
        return None
    at, sep, key = text.partition(KEY_SEPARATOR)
    if not sep or not at or not key:
        raise UsageError(f"not a page cursor: {text!r}")
    return at, key


def _number(values: Values, name: str, default: int) -> int:
    text = values.get(name) or str(default)
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"{name} takes a number from 1, not {text!r}")
    return int(text)


def _session_id(values: Values) -> str:
    """The session a page or change is asked of; an empty one (``/sessions/.json``, a link
    cut short) is said as such, not as "no stored session ''"."""
    if not values.get("id"):
        raise NotFoundError("no session id in the address: Sessions lists them")
    return values["id"]


def _project(ctx: Context, values: Values) -> str | None:
    """The project a page is asked of (``project``), or None for every one; a name no
    project or stored row carries (a stale link, a typo) is said, not shown as empty."""
    scope = values.get("project") or None
    if scope is not None and memory_api.unknown_scope(ctx, Filters(scope)):
        raise NotFoundError(f"no project or scope is named {scope!r}: Projects lists them")
    return scope


def total(n: int, one: str, many: str | None = None) -> str:
    """A list page's total as its foot says it: "120 sessions", or "10,000+ sessions"."""
    return counted_to(n, COUNT_AT_MOST, one, many)


def projects(ctx: Context, values: Values) -> dict[str, Any]:
    return {"title": "Projects", "projects": [p.to_dict() for p in list_projects(ctx)]}


def sessions(ctx: Context, values: Values) -> dict[str, Any]:
    scope, client = _project(ctx, values), values.get("client") or None
    where = Where(scope, all_scopes=scope is None, client=client)
    rows = sessions_api.list_sessions(ctx, where, PAGE_SIZE, _cursor(values.get("before")))
    labels = project_labels(ctx, [r.scope for r in rows] + ([scope] if scope else []))
    last = rows[-1] if len(rows) == PAGE_SIZE else None
    return {
        "title": f"Sessions of {labels.get(scope, scope)}" if scope else "Sessions",
        "project": scope,
        "sessions": [{**row.__dict__, "project": labels.get(row.scope, row.scope)} for row in rows],
        "next": f"{last.at}{KEY_SEPARATOR}{last.id}" if last else None,
        "client": client,
        "imported": sessions_api.imported(ctx, where),
        "total": total(sessions_api.count(ctx, where), "session"),
        "newest": bool(values.get("before")),  # a later page: it links back to the first
    }


def session(ctx: Context, values: Values) -> dict[str, Any]:
    """One session's messages, a page at a time; ``from``-``to``: the messages a memory
    came from, marked, with the turns around them, and the page that holds them
    (``holding``: the whole session opens there, at the first of them). Marked messages
    more than a page holds (a digest's: the whole session) are shown in the session's
    pages, from the one holding the first (``page``), never all at once."""
    session_id = _session_id(values)
    asked: tuple[int, int] | None = None
    holding = 1
    if values.get("from"):
        ref = f"{session_id}#{values['from']}-{values.get('to') or values['from']}"
        passage = sessions_api.expand(ctx, ref, around=2)[0]
        asked = (passage.first, passage.last)
        holding = (passage.first - 1) // MESSAGES_PAGE + 1
    if asked is not None and asked[1] - asked[0] < MESSAGES_PAGE:
        page, pages = 0, 0
    else:
        page = _number(values, "page", holding)
        passage = sessions_api.show(ctx, session_id, page, MESSAGES_PAGE)
        pages = max(1, -(-passage.total // MESSAGES_PAGE))
        holding = holding if asked else page
    return {
        "title": passage.session.title or f"Session {passage.session.id}",
        "session": passage.session.to_dict(),
        "project": project_labels(ctx, [passage.session.scope])[passage.session.scope],
        "messages": [
            {
                **m.to_dict(),
                "said": sessions_api.said_text(m),  # its speaker is named above it
                "marked": asked is not None and asked[0] <= m.seq <= asked[1],
            }
            for m in passage.messages
        ],
        "total": passage.total,
        "page": page,
        "pages": pages,
        "first": asked[0] if asked else passage.first,
        "asked": asked,
        "mark": values.get("mark") if values.get("mark") in MARKS else "source",
        "marks": MARKS,
        "holding": holding,
        "kept": [about(m) for m in sessions_api.kept_from(ctx, passage.session.id, PAGE_SIZE)],
        "kept_all": PAGE_SIZE,  # shown at most: a session distilled into more says so
    }


def split_text(text: str, most: int = MESSAGE_SHOWN) -> tuple[str, str]:
    """A message's text as its session page shows it (the template's ``split`` filter):
    at most ``most`` characters open, ended at a line break in their second half when
    there is one, and the rest, folded."""
    if len(text) <= most:
        return text, ""
    cut = text.rfind("\n", most // 2, most) + 1 or most
    return text[:cut], text[cut:]


def memories(ctx: Context, values: Values) -> dict[str, Any]:
    """The memories, newest first, a page at a time (``after``); of one project
    (``project``), or those distilled from one session (``session``: every one its page's
    "Kept from it" names, and those past the first ``PAGE_SIZE`` it lists)."""
    scope = _project(ctx, values)
    of = sessions_api.find_session(ctx, values["session"]) if values.get("session") else None
    filters = Filters(scope, session=of.id if of else None)
    request = ListRequest(filters, PAGE_SIZE, after=_cursor(values.get("after")))
    found = memory_api.list_memories(ctx, request)
    labels = project_labels(ctx, [m.scope for m in found] + ([scope] if scope else []))
    last = found[-1] if len(found) == PAGE_SIZE else None
    title = f"Memories of {labels.get(scope, scope)}" if scope else "Memories"
    return {
        "title": f"{title} kept from session {of.title or of.id}" if of else title,
        "project": scope,
        "session": of.id if of else None,
        "memories": [{**m.to_dict(), "project": labels.get(m.scope, m.scope)} for m in found],
        "next": f"{last.created_at}{KEY_SEPARATOR}{last.id}" if last else None,
        "total": total(memory_api.count(ctx, filters), "memory", "memories"),
        "newest": bool(values.get("after")),
    }


def memory(ctx: Context, values: Values) -> dict[str, Any]:
    """One memory: every field, where it came from (each source opens its session lines),
    its relations (each naming the other memory) and its history, a page at a time
    (``history``: its number), newest first."""
    found = memory_api.get(ctx, values["id"])
    page = _number(values, "history", 1)
    history = memory_api.events(ctx, EventsRequest(found.memory.id, PAGE_SIZE, page))
    made_by = {
        run_id: ingest_api.run(ctx, run_id) for run_id in {e.run_id for e in history if e.run_id}
    }
    own, shown = found.memory.id, first_relations(found.relations)
    others = memory_api.by_ids(ctx, named_in(found.memory, shown, history))
    ran_in = {r.session_id for r in made_by.values() if r is not None and r.session_id}
    undoable = {r.id for r in made_by.values() if r is not None and can_undo(ctx, r)[0]}
    origins = [o.to_dict() for o in found.origins]
    told_lines = [
        told(found.memory, e, made_by.get(e.run_id or ""), others, origins) for e in history
    ]
    return {
        "title": f"Memory {own[:8]}",
        **found.to_dict(),
        "project": project_labels(ctx, [found.memory.scope])[found.memory.scope],
        "related": related(found.memory, shown, others),
        "relations_left": len(found.relations) - len(shown),  # `memctl get` lists them all
        "superseded": about(others.get(found.memory.superseded_by or "")),
        "events": offer_undo(folded(told_lines), undoable),
        "gone": sorted(sessions_api.gone(ctx, ran_in)),  # sessions its runs name, forgotten
        "history_page": page,
        "older_history": page + 1 if len(history) == PAGE_SIZE else None,
    }


def recall_page(ctx: Context, values: Values) -> dict[str, Any]:
    """Search every project, or one (``project``: as `memctl recall` in it): the clear
    matches, then the possible ones, each with why (``recall --explain``); ``n`` rows at
    most (``recall -n``), and ``more``: the ``n`` of the next longer list, when this one
    may have left rows out."""
    query = (values.get("q") or "").strip()
    scope = values.get("project") or None  # unknown: nothing found, the others' count said
    limit = min(_number(values, "n", ctx.settings.recall_limit), RECALL_MOST)
    data: dict[str, Any] = {
        "title": "Recall",
        "q": query,
        "n": limit,
        "results": [],
        "more": None,
        "elsewhere": 0,
        "project": scope,
        "project_label": project_labels(ctx, [scope])[scope] if scope else None,
    }
    if not query:
        return data
    if len(query) > QUERY_LIMIT:  # as `memctl recall` refuses it, at once
        raise InputError(f"the query is {len(query):,} characters; the limit is {QUERY_LIMIT:,}")
    request = RecallRequest(query, limit, scope=scope, all_scopes=scope is None, touch=False)
    response = recall(ctx, request)
    result = response.result
    labels = project_labels(ctx, [item.memory.scope for item in result.results])
    data["results"] = [
        {
            **item.to_dict(),
            "label": item.match,
            "project": labels.get(item.memory.scope, item.memory.scope),
            "dated": item.dated_at,
            "line": excerpt(item.memory.summary, item.memory.content, query, RESULT_LINE),
            "href": result_href(item.memory.id, item.memory.session_id, item.is_message),
            "explain": explain(item, result.steps_of(item.memory.id), labels),
            "why": item.match_why or item.match,  # the evidence its label rests on
            "same": [same_as(key) for key in item.members],
            # its member's sentence that answers (answering.py), and where that message opens
            "answers": same_as(item.answering.message) if item.answering else None,
            "host": response.hosts.get(item.memory.id),
            # a machine not in sync.trust: follows the user's own of its label, whatever its score
            "following": item.memory.id in response.following,
        }
        for item in result.results
    ]
    own_labels = {row["label"] for row in data["results"] if not row["following"]}
    for row in data["results"]:
        row["after_own"] = row["following"] and row["label"] in own_labels
    data["elsewhere"] = response.elsewhere
    if len(result.results) == limit < RECALL_MOST:
        data["more"] = min(limit + ctx.settings.recall_limit, RECALL_MOST)
    return data


def profile(ctx: Context, values: Values) -> dict[str, Any]:
    """``memctl profile --all-scopes``: the profile maintain wrote, a heading per project and
    section, each line linking the memories it rests on; then the profile and preferences
    memories themselves."""
    found = profile_of(ctx, ProfileRequest(all_scopes=True))
    return {
        "title": "Profile",
        "written": [
            {**line.to_dict(), "project": found.labels.get(line.scope, line.scope)}
            for line in found.written
        ],
        "sections": {
            name: [m.to_dict() for m in items] for name, items in found.sections.items() if items
        },
    }


def graph(ctx: Context, values: Values) -> dict[str, Any]:
    """``memctl graph --all-scopes``, or of one project (``project``: ``memctl graph -s``):
    without ``entity``, the counts and the most mentioned entities (of a project, its own
    and their relations first, then the names most projects name); with it, its relations
    (live, then history), each with the memories that state it, ``graph_api.RELATIONS`` a
    page (``page``: its number)."""
    name = (values.get("entity") or "").strip()
    page = _number(values, "page", 1)
    scope = _project(ctx, values)
    request = graph_api.GraphRequest(name or None, scope, scope is None, page)
    of = {"project": scope, "project_label": project_labels(ctx, [scope])[scope] if scope else None}
    title = f"Graph of {of['project_label']}" if scope else "Graph"
    if not name:
        found = graph_api.summary(ctx, request)
        return {"title": title, "entity": None, **of, **found.to_dict()}
    shown = graph_api.entity_graph(ctx, request)
    named = memory_api.by_ids(ctx, set(shown.mentioned))
    return {
        "title": f"{title}: {shown.entity.name}",
        "per_page": graph_api.RELATIONS,
        **of,
        **shown.to_dict(),
        "mentions": [about(named[i]) for i in shown.mentioned if i in named],
    }


def result_href(item_id: str, session_id: str | None, is_message: bool) -> str:
    """Where a recall result opens: a memory's page, or a session message marked in its
    session as the recall's match (its id is ``SESSION#N``)."""
    if not is_message or not session_id:
        return f"/memories/{quote(item_id)}"
    seq = item_id.rpartition("#")[2]
    return f"/sessions/{quote(session_id)}?from={seq}&to={seq}&mark=match"


def same_as(key: str) -> dict[str, str]:
    """A row folded into a recall result as the same thing (said in a session, or
    distilled from it), as ``recall --explain`` lists it: what it is and where it opens."""
    if memory_api.is_message_id(key):
        session_id, _, seq = key.rpartition("#")
        label = f"message {seq} of session {session_id[:12]}"
        return {"label": label, "href": result_href(key, session_id, True)}
    return {"label": f"memory {key[:8]}", "href": result_href(key, None, False)}


def timeline(ctx: Context, values: Values) -> dict[str, Any]:
    """A project's memories and sessions in one list, newest first (a memory by when it was
    created, a session by its own time); ``before``: the page after that (time, id)."""
    scope = _project(ctx, values)
    if not scope:
        raise UsageError("the timeline is of one project: open it from Projects", ["project"])
    before = _cursor(values.get("before"))
    found = sessions_api.list_sessions(ctx, Where(scope), PAGE_SIZE, before)
    kept = memory_api.list_memories(ctx, ListRequest(Filters(scope), PAGE_SIZE, after=before))
    entries = sorted(
        [
            {
                "kind": "session",
                "at": s.at,
                "id": s.id,
                "title": s.title,
                "client": s.client,
                "messages": s.message_count,
            }
            for s in found
        ]
        + [
            {
                "kind": "memory",
                "at": m.created_at,
                "id": m.id,
                "title": m.content,
                "category": m.category,
                "state": str(m.state),
            }
            for m in kept
        ],
        key=lambda e: (e["at"], e["id"]),
        reverse=True,
    )[:PAGE_SIZE]
    last = entries[-1] if len(entries) == PAGE_SIZE else None
    label = project_labels(ctx, [scope])[scope]
    return {
        "title": f"Timeline of {label}",
        "project": scope,
        "entries": entries,
        "next": f"{last['at']}{KEY_SEPARATOR}{last['id']}" if last else None,
        "total": f"{total(sessions_api.count(ctx, Where(scope)), 'session')} and "
        f"{total(memory_api.count(ctx, Filters(scope)), 'memory', 'memories')}",
        "newest": bool(values.get("before")),
    }


def health(ctx: Context, values: Values) -> dict[str, Any]:
    """``memctl doctor``: each check, its status and its fix. SQLite's quick check of the
    store runs only when asked (``check=store``): it reads the whole file."""
    quick_check = values.get("check") == "store"
    checks = doctor(ctx, sessions_api.last_captured(ctx), quick_check)
    return {
        "title": "Health",
        "checks": [c.__dict__ for c in checks],
        "failing": sum(c.status == "fail" for c in checks),
        "quick_check": quick_check,
    }


def confirm_forget_session(ctx: Context, values: Values) -> dict[str, Any]:
    """The page that asks before a session is forgotten: it cannot be undone."""
    found = sessions_api.find_session(ctx, _session_id(values))
    return {
        "title": f"Forget session {found.id}?",
        "session": found.to_dict(),
        "project": project_labels(ctx, [found.scope])[found.scope],
        # other sessions repeating its messages
        "copies": sessions_api.copies(ctx, found.id, reads="session"),
        "kept": [about(m) for m in sessions_api.kept_from(ctx, found.id, PAGE_SIZE)],
        "kept_all": PAGE_SIZE,
    }


def runs(ctx: Context, values: Values) -> dict[str, Any]:
    """The runs, newest first, a page at a time (``before``: the page after that start and
    id); each that undo takes back has its button, each it refuses says why."""
    found = ingest_api.runs(ctx, RUNS_SHOWN, before=_cursor(values.get("before")))
    shown = []
    for run in found:
        undoable, why = can_undo(ctx, run)
        shown.append({**run.to_dict(), "undoable": undoable, "why_not": why})
    named = {run.session_id for run in found if run.session_id}
    last = found[-1] if len(found) == RUNS_SHOWN else None
    return {
        "title": "Runs",
        "runs": shown,
        "gone": sorted(sessions_api.gone(ctx, named)),
        "next": f"{last.started_at}{KEY_SEPARATOR}{last.id}" if last else None,
        "newest": bool(values.get("before")),
    }


def can_undo(ctx: Context, run: RunRecord) -> tuple[bool, str | None]:
    """Whether `memctl undo` takes ``run`` back now, and why not when it refuses it (a run
    undone already, one not done, or one that never changed a memory has neither: nothing
    to say; beside every sync and every quiet session, "nothing is left to put back" hid
    the refusals that matter)."""
    open_ = run.status == "done" and not run.undone_by
    why = ingest_api.undo_refusal(ctx, run) if open_ else None
    if why is not None and ingest_api.changed_nothing(ctx, run):
        return False, None
    return open_ and why is None, why


PAGES: dict[str, Page] = {
    "projects": Page("projects.html", projects),
    "sessions": Page("sessions.html", sessions),
    "session": Page("session.html", session),
    "memories": Page("memories.html", memories),
    "memory": Page("memory.html", memory),
    "recall": Page("recall.html", recall_page),
    "profile": Page("profile.html", profile),
    "graph": Page("graph.html", graph),
    "runs": Page("runs.html", runs),
    "timeline": Page("timeline.html", timeline),
    "health": Page("health.html", health),
    "forget-session": Page("forget_session.html", confirm_forget_session),
}


# Changes: each returns (where to go next, what happened), after one edit run.
def _before(ctx: Context, values: Values) -> Memory:
    """The memory a change is asked of, as it is before (to say when nothing changed)."""
    return memory_api.get(ctx, values["id"]).memory


def forget(ctx: Context, values: Values) -> tuple[str, str]:
    before = _before(ctx, values)
    done = memory_api.forget(ctx, values["id"])
    if done.state == before.state:
        return f"/memories/{done.id}", f"{done.id[:8]} was forgotten already: nothing changed"
    return f"/memories/{done.id}", f"forgot {done.id[:8]}: recall no longer returns it"


def pin(ctx: Context, values: Values) -> tuple[str, str]:
    before = _before(ctx, values)
    done = memory_api.pin(ctx, values["id"])
    if (done.kind, done.tier) == (before.kind, before.tier):
        return f"/memories/{done.id}", f"{done.id[:8]} was pinned already: nothing changed"
    return f"/memories/{done.id}", f"pinned {done.id[:8]}: it never fades"


def edit(ctx: Context, values: Values) -> tuple[str, str]:
    done = memory_api.update(ctx, UpdateRequest(values["id"], text=values.get("text") or ""))
    return f"/memories/{done.id}", f"saved {done.id[:8]}"


def remember(ctx: Context, values: Values) -> tuple[str, str]:
    done = memory_api.remember(
        ctx,
        RememberRequest(values.get("text") or "", scope=values.get("project") or None, source="ui"),
    )
    if done.existing:
        return f"/memories/{done.memory.id}", f"already remembered as {done.memory.id[:8]}"
    return f"/memories/{done.memory.id}", f"remembered {done.memory.id[:8]}"


def delete(ctx: Context, values: Values) -> tuple[str, str]:
    before = _before(ctx, values)
    done = memory_api.delete(ctx, values["id"])
    if done.state == before.state:
        return f"/memories/{done.id}", f"{done.id[:8]} was deleted already: nothing changed"
    return f"/memories/{done.id}", f"deleted {done.id[:8]}: undo it from Runs"


def promote(ctx: Context, values: Values) -> tuple[str, str]:
    changed = sync_api.promote(ctx, ShareRequest((values["id"],)))
    said = "shared: the next sync publishes it" if changed else "it was shared already"
    return f"/memories/{values['id']}", said


def unpromote(ctx: Context, values: Values) -> tuple[str, str]:
    changed = sync_api.unpromote(ctx, ShareRequest((values["id"],)))
    said = "private: the next sync withdraws it" if changed else "it was private already"
    return f"/memories/{values['id']}", said


def forget_session(ctx: Context, values: Values) -> tuple[str, str]:
    done = sessions_api.forget(ctx, _session_id(values), reads="session")  # its page's id
    stop_resident_after(ctx.settings.home, done)
    return "/sessions", (
        f"forgot session {values['id']}: {counted(done.messages, 'message')} and "
        f"{counted(len(done.memories), 'memory', 'memories')} taken out everywhere"
        + (f"; {done.file_note()}" if not done.wal_emptied else "")
        + (f"; {done.history_note()}" if done.shared else "")
        + (
            f"; kept {counted(len(done.kept), 'memory', 'memories')} another session also "
            "states, now its source"
            if done.kept
            else ""
        )
        + (
            f"; copies of its messages stay in {', '.join(done.copies)} "
            "(`memctl sessions forget ID` forgets such a session)"
            if done.copies
            else ""
        )
    )


def undo(ctx: Context, values: Values) -> tuple[str, str]:
    """Undo a run; sent from a memory's history (``memory``), back to that memory."""
    report = ingest_api.undo(ctx, values["id"])
    left = f"; {report.left_alone()}" if report.skipped else ""
    n = report.reverted
    put_back = f"{n} change{'' if n == 1 else 's'} put back"
    back = f"/memories/{quote(values['memory'], safe='')}" if values.get("memory") else "/runs"
    return back, f"undid run {report.run_id[:8]}: {put_back}{left}"


CHANGES: dict[str, Callable[[Context, Values], tuple[str, str]]] = {
    "forget": forget,
    "pin": pin,
    "edit": edit,
    "undo": undo,
    "remember": remember,
    "delete": delete,
    "promote": promote,
    "unpromote": unpromote,
    "forget-session": forget_session,
}
