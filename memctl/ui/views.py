"""The viewer's pages and changes: each a function of the Context and the request's values
that returns one data dict (served as HTML through its template, and as JSON).

Every read and write goes through ``memctl.api``, as the CLI's do; a change is one
direct edit (or undo), so `memctl runs` lists it and `memctl undo` takes it back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memctl.api import ingest as ingest_api
from memctl.api import memory as memory_api
from memctl.api import sessions as sessions_api
from memctl.api.config import Context
from memctl.api.memory import EventsRequest, Filters, ListRequest, UpdateRequest
from memctl.api.projects import list_projects, project_labels
from memctl.api.recall import RecallRequest, explain, recall
from memctl.api.sessions import Where
from memctl.errors import UsageError

Values = Mapping[str, str]
PAGE_SIZE = 50  # rows of a list page
MESSAGES_PAGE = 100  # messages of a session page
RUNS_SHOWN = 50
KEY_SEPARATOR = "|"  # a keyset cursor: time|id


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


def projects(ctx: Context, values: Values) -> dict[str, Any]:
    return {"title": "Projects", "projects": [p.to_dict() for p in list_projects(ctx)]}


def sessions(ctx: Context, values: Values) -> dict[str, Any]:
    scope = values.get("project") or None
    where = Where(scope, all_scopes=scope is None)
    rows = sessions_api.list_sessions(ctx, where, PAGE_SIZE, _cursor(values.get("before")))
    labels = project_labels(ctx, [r.scope for r in rows] + ([scope] if scope else []))
    last = rows[-1] if len(rows) == PAGE_SIZE else None
    return {
        "title": f"Sessions of {labels.get(scope, scope)}" if scope else "Sessions",
        "project": scope,
        "sessions": [{**row.__dict__, "project": labels.get(row.scope, row.scope)} for row in rows],
        "next": f"{last.at}{KEY_SEPARATOR}{last.id}" if last else None,
    }


def session(ctx: Context, values: Values) -> dict[str, Any]:
    """One session's messages, a page at a time; ``from``-``to``: the messages a memory
    came from, marked, with the turns around them."""
    if values.get("from"):
        ref = f"{values['id']}#{values['from']}-{values.get('to') or values['from']}"
        passage = sessions_api.expand(ctx, ref, around=2)[0]
        page, pages = 0, 0
    else:
        page = _number(values, "page", 1)
        passage = sessions_api.show(ctx, values["id"], page, MESSAGES_PAGE)
        pages = max(1, -(-passage.total // MESSAGES_PAGE))
    marked = passage.marked and not page
    return {
        "title": passage.session.title or f"Session {passage.session.id}",
        "session": passage.session.to_dict(),
        "project": project_labels(ctx, [passage.session.scope])[passage.session.scope],
        "messages": [
            {**m.to_dict(), "marked": marked and passage.first <= m.seq <= passage.last}
            for m in passage.messages
        ],
        "total": passage.total,
        "page": page,
        "pages": pages,
    }


def memories(ctx: Context, values: Values) -> dict[str, Any]:
    scope = values.get("project") or None
    request = ListRequest(Filters(scope), PAGE_SIZE, after=_cursor(values.get("after")))
    found = memory_api.list_memories(ctx, request)
    labels = project_labels(ctx, [m.scope for m in found] + ([scope] if scope else []))
    last = found[-1] if len(found) == PAGE_SIZE else None
    return {
        "title": f"Memories of {labels.get(scope, scope)}" if scope else "Memories",
        "project": scope,
        "memories": [{**m.to_dict(), "project": labels.get(m.scope, m.scope)} for m in found],
        "next": f"{last.created_at}{KEY_SEPARATOR}{last.id}" if last else None,
    }


def memory(ctx: Context, values: Values) -> dict[str, Any]:
    """One memory: every field, where it came from (each source opens its session lines),
    its relations and its history."""
    found = memory_api.get(ctx, values["id"])
    history = memory_api.events(ctx, EventsRequest(found.memory.id, PAGE_SIZE))
    return {
        "title": f"Memory {found.memory.id[:8]}",
        **found.to_dict(),
        "project": project_labels(ctx, [found.memory.scope])[found.memory.scope],
        "events": [e.to_dict() for e in history],
    }


def recall_page(ctx: Context, values: Values) -> dict[str, Any]:
    """Search: clear matches, else the closest in meaning (possible), each with the factors
    that scored it (``recall --explain``)."""
    query = (values.get("q") or "").strip()
    data: dict[str, Any] = {"title": "Recall", "q": query, "results": [], "elsewhere": 0}
    if not query:
        return data
    scope = values.get("project") or None
    request = RecallRequest(query, scope=scope, all_scopes=scope is None, touch=False)
    response = recall(ctx, request)
    result = response.result
    shown = [("clear", r) for r in result.results] + [("possible", r) for r in result.unconfirmed]
    data["results"] = [
        {
            **item.to_dict(),
            "label": label,
            "explain": explain(item, result.steps_of(item.memory.id)),
        }
        for label, item in shown
    ]
    data["elsewhere"] = response.elsewhere
    return data


def runs(ctx: Context, values: Values) -> dict[str, Any]:
    found = ingest_api.runs(ctx, RUNS_SHOWN)
    return {
        "title": "Runs",
        "runs": [
            {**r.to_dict(), "undoable": r.status == "done" and not r.undone_by} for r in found
        ],
    }


PAGES: dict[str, Page] = {
    "projects": Page("projects.html", projects),
    "sessions": Page("sessions.html", sessions),
    "session": Page("session.html", session),
    "memories": Page("memories.html", memories),
    "memory": Page("memory.html", memory),
    "recall": Page("recall.html", recall_page),
    "runs": Page("runs.html", runs),
}


# Changes: each returns (where to go next, what happened), after one edit run.
def forget(ctx: Context, values: Values) -> tuple[str, str]:
    done = memory_api.forget(ctx, values["id"])
    return f"/memories/{done.id}", f"forgot {done.id[:8]}: recall no longer returns it"


def pin(ctx: Context, values: Values) -> tuple[str, str]:
    done = memory_api.pin(ctx, values["id"])
    return f"/memories/{done.id}", f"pinned {done.id[:8]}: it never fades"


def edit(ctx: Context, values: Values) -> tuple[str, str]:
    done = memory_api.update(ctx, UpdateRequest(values["id"], text=values.get("text") or ""))
    return f"/memories/{done.id}", f"saved {done.id[:8]}"


def undo(ctx: Context, values: Values) -> tuple[str, str]:
    report = ingest_api.undo(ctx, values["id"])
    return "/runs", f"undid run {report.run_id[:8]}: {report.reverted} change(s) put back"


CHANGES: dict[str, Callable[[Context, Values], tuple[str, str]]] = {
    "forget": forget,
    "pin": pin,
    "edit": edit,
    "undo": undo,
}
