"""memctl ui in-process (Starlette's TestClient): each page's data, and every refusal."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from html import escape, unescape
from pathlib import Path
from typing import Any
from urllib.parse import quote

import apsw
import pytest
from starlette.testclient import TestClient

from memctl.api import graph as graph_api
from memctl.api import ingest as ingest_api
from memctl.api import memory as memory_api
from memctl.api import sessions as sessions_api
from memctl.api.maintain import MaintainRequest, maintain
from memctl.api.memory import (
    EventsRequest,
    Filters,
    LinkRequest,
    ListRequest,
    RememberRequest,
    UpdateRequest,
)
from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.errors import UsageError
from memctl.imports.files import expand
from memctl.imports.pipeline import ImportOptions, import_files
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.model import Category, Kind
from memctl.store.events import run_events
from memctl.ui import history, views
from memctl.ui.app import build_app
from memctl.ui.security import COOKIE, Keys
from memctl.ui.views import PAGE_SIZE
from tests.conftest import ROOT, Shared, memctl_command, run_cli, shared
from tests.fakes import HashEmbedder
from tests.ingesting import SESSION, claude_record, distil, fixture, ingest_text
from tests.maintain.test_maintain import put
from tests.memories.test_forget_everywhere import _files_holding
from tests.syncing import bare_repo

HOSTILE = (
    "Deploy note <script>alert('x')</script> </textarea><img src=x onerror=alert(1)> "
    + "long " * 200_000
)
HOST = "testserver"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Shared:
    """A session captured and distilled, another captured, a memory remembered: once for
    the module (``stored`` copies it for each test)."""
    with shared(tmp_path_factory, user_cache, "ui-store") as place:
        settings = load_settings(overrides={"llm": "none", "llm.backoff_seconds": 0})
        with Context(settings, embedder=HashEmbedder()) as ctx:
            capture(ctx, fixture("claude-code.jsonl"), IngestOptions())
            run_session(ctx, SESSION)
            ingest_text(ctx, "user: please fix the flaky login test\nassistant: done\n", "here-1")
            memory_api.remember(ctx, RememberRequest("The staging database is PostgreSQL 16"))
    return place


@pytest.fixture
def stored(store: Shared, home: Path, make_ctx: Any, monkeypatch: pytest.MonkeyPatch) -> Context:
    """The test's home: a copy of ``store``, run from its project."""
    monkeypatch.chdir(store.copy(home).project)
    ctx: Context = make_ctx()
    return ctx


@pytest.fixture
def keys() -> Keys:
    return Keys(frozenset({HOST}))


@pytest.fixture
def anonymous(stored: Context, keys: Keys) -> Iterator[TestClient]:
    app, viewer = build_app(load_settings(overrides={"embedder": "hash"}), keys, HashEmbedder())
    with TestClient(app, base_url=f"http://{HOST}", follow_redirects=False) as client:
        yield client
    viewer.close()


@pytest.fixture
def client(anonymous: TestClient, keys: Keys) -> TestClient:
    assert keys.token is not None
    signed = anonymous.get(f"/login?token={keys.token}")
    assert signed.status_code == 303 and signed.headers["location"] == "/projects"
    cookie = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    return anonymous


def test_a_sign_in_link_opened_from_another_site_goes_on_by_a_page_of_its_own(
    anonymous: TestClient, keys: Keys
) -> None:
    """From the file `ui --open` hands the browser (another site), a redirect would carry no
    SameSite=Strict cookie: the viewer answers with its own page leading to the projects."""
    signed = anonymous.get(f"/login?token={keys.token}", headers={"sec-fetch-site": "cross-site"})
    assert signed.status_code == 200 and 'content="0;url=/projects"' in signed.text
    assert "samesite=strict" in signed.headers["set-cookie"].lower()
    assert anonymous.get("/projects").status_code == 200


def test_the_sign_in_link_works_once_and_nothing_opens_without_it(
    anonymous: TestClient, keys: Keys
) -> None:
    token = keys.token
    assert anonymous.get("/projects").status_code == 401
    assert anonymous.get("/projects.json").status_code == 401
    assert anonymous.get("/login?token=wrong").status_code == 403
    assert anonymous.get(f"/login?token={token}").status_code == 303
    assert anonymous.get("/projects").status_code == 200
    again = anonymous.get(f"/login?token={token}")  # the link opened again, signed in
    assert again.status_code == 303 and again.headers["location"] == "/projects"
    anonymous.cookies.clear()
    assert anonymous.get(f"/login?token={token}").status_code == 403  # spent
    assert anonymous.get("/projects").status_code == 401
    anonymous.cookies.set(COOKIE, "forged")
    assert anonymous.get("/projects").status_code == 401


def test_a_foreign_host_is_refused_even_signed_in(client: TestClient) -> None:
    refused = client.get("/projects", headers={"host": "evil.example:80"})
    assert refused.status_code == 403 and "evil.example" in refused.text


def test_every_answer_forbids_outside_resources_and_framing(client: TestClient) -> None:
    page = client.get("/projects")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "http://" not in page.text.replace(f"http://{HOST}", "")  # nothing loaded elsewhere


def test_projects_page(client: TestClient, stored: Context) -> None:
    data = client.get("/projects.json").json()
    paths = {p["path"] for p in data["projects"]}
    assert "/home/alice/src/widget" in paths
    here = next(p for p in data["projects"] if p["current"])
    assert here["scope"] == stored.settings.project_scope and here["sessions"] == 1
    html = client.get("/").text
    assert "/home/alice/src/widget" in html and 'aria-current="page"' in html
    assert "Times are UTC." in html  # every time shown is stored UTC, not the reader's


def test_sessions_and_one_session(client: TestClient, stored: Context) -> None:
    data = client.get("/sessions.json").json()
    titles = {s["id"]: s["title"] for s in data["sessions"]}
    assert titles["here-1"] == "please fix the flaky login test"
    assert titles[SESSION] == "Deploy pipeline and editor setup"
    one = client.get(f"/sessions/{SESSION}.json").json()
    assert one["total"] == 9 and len(one["messages"]) == 9 and one["pages"] == 1
    marked = client.get(f"/sessions/{SESSION}.json?from=4&to=5").json()
    assert [m["seq"] for m in marked["messages"] if m["marked"]] == [4, 5]
    assert client.get("/sessions/nope.json").status_code == 404
    assert "no stored session" in client.get("/sessions/nope").text


def test_every_memory_kept_from_a_session_is_listed_past_its_pages_first(
    client: TestClient, stored: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "Kept from it" stopped at a page's memories, and no page listed the rest
    kept = {m.id for m in sessions_api.kept_from(stored, SESSION, 1000)}
    assert len(kept) >= 2, kept
    monkeypatch.setattr(views, "PAGE_SIZE", 1)
    page = unescape(client.get(f"/sessions/{SESSION}").text)
    assert f'<a href="/memories?session={SESSION}">every memory kept from it</a>' in page
    listed, after = [], None
    while True:
        shown = client.get("/memories.json", params={"session": SESSION, "after": after}).json()
        listed += [m["id"] for m in shown["memories"]]
        if not (after := shown["next"]):
            break
    assert set(listed) == kept and len(listed) == len(kept)
    html = unescape(client.get("/memories", params={"session": SESSION}).text)
    assert f"session={SESSION}&after=" in html  # its next page keeps the session
    assert "Something to remember" not in html  # a remembered text is of no session
    assert client.get("/memories", params={"session": "no-such-session"}).status_code == 404
    # `memctl list --session` lists the same, by a prefix of the id too
    by_prefix = memory_api.list_memories(stored, ListRequest(Filters(session=SESSION[:8])))
    assert {m.id for m in by_prefix} == kept


def test_a_huge_message_shows_its_start_and_folds_the_rest(
    client: TestClient, stored: Context
) -> None:
    """A pasted log of megabytes was laid out whole: a page hundreds of thousands of pixels
    tall, every message after it out of reach. Its start shows, the rest is one toggle."""
    log = "".join(f"line {n} of the build log <b>\n" for n in range(3_000))
    ingest_text(stored, f"user: why does this fail?\n{log}assistant: line 2999 says why\n", "big")
    page = client.get("/sessions/big").text
    shown, _, rest = page.partition('<details class="rest">')
    assert "line 10 of the build log &lt;b&gt;" in shown and "line 2998 " not in shown
    assert "line 2998 of the build log &lt;b&gt;" in rest and "<b>" not in page
    assert "characters more</summary>" in rest and "line 2999 says why" in rest  # what follows
    whole = client.get("/sessions/big.json").json()["messages"][0]["content"]
    assert whole.endswith("line 2999 of the build log <b>")  # the JSON keeps every line


def test_memories_memory_and_its_sources(client: TestClient, stored: Context) -> None:
    listed = client.get("/memories.json").json()["memories"]
    distilled = next(m for m in listed if m["source"].startswith("session:"))
    one = client.get(f"/memories/{distilled['id']}.json").json()
    assert one["origins"] and one["origins"][0]["session_id"] == SESSION
    assert one["events"][0]["action"] == "create"
    page = client.get(f"/memories/{distilled['id']}").text
    origin = one["origins"][0]
    assert f"/sessions/{SESSION}?from={origin['first']}&amp;to={origin['last']}" in page
    first, last = origin["first"], origin["last"]
    said = f"message {first}<" if first == last else f"messages {first}–{last}<"
    assert said in page and f"messages {first}–{first}<" not in page


def test_a_memory_history_says_what_changed_and_which_run_did_it(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    listed = client.get("/memories.json").json()["memories"]
    distilled = next(m for m in listed if m["source"].startswith("session:"))
    made = client.get(f"/memories/{distilled['id']}").text
    assert f'of <a href="/sessions/{SESSION}">session {SESSION[:12]}</a>' in made
    assert "create by rules" in made
    memory = memory_api.remember(stored, RememberRequest("Releases are cut on Mondays")).memory
    client.post(
        f"/memories/{memory.id}/edit",
        data={"csrf": keys.csrf, "text": "Releases are cut on Tuesdays"},
    )
    history = client.get(f"/memories/{memory.id}.json").json()["events"]
    assert history[0]["changed"] == ["content"] and history[0]["run"]["door"] == "ui"
    page = unescape(client.get(f"/memories/{memory.id}").text)
    assert "update: content" in page and "edit from ui" in page
    assert "it was: Releases are cut on Mondays" in page
    assert "content_hash" not in page


def test_a_memory_history_undoes_a_run_runs_no_longer_lists(
    client: TestClient, stored: Context, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs lists the latest runs only; `memctl undo RUN_ID` takes back any: a memory's
    history offers each run the CLI would undo (once a run), and comes back to the memory."""
    monkeypatch.setattr(views, "RUNS_SHOWN", 1)
    own = memory_api.remember(stored, RememberRequest("Invoices are sent hourly")).memory.id
    memory_api.remember(stored, RememberRequest("Billing runs on Fridays"))  # the latest run
    run_id = client.get(f"/memories/{own}.json").json()["events"][0]["run"]["id"]
    assert run_id not in client.get("/runs").text
    page = client.get(f"/memories/{own}").text
    assert page.count(f'action="/runs/{run_id}/undo"') == 1
    done = client.post(f"/runs/{run_id}/undo", data={"csrf": keys.csrf, "memory": own})
    assert done.status_code == 303 and done.headers["location"].startswith(f"/memories/{own}?")
    after = client.get(done.headers["location"]).text
    assert "undid run" in after and f"(undo of run <code>{run_id[:8]}</code>)" in after
    assert memory_api.get(stored, own).memory.state == "deleted"
    assert f'action="/runs/{run_id}/undo"' not in after  # undone: no second button
    assert after.count('class="undo"') == 1  # the undo's own run, which can be undone


def test_a_contradiction_reads_the_same_in_relations_and_history(
    client: TestClient, stored: Context
) -> None:
    """A contradiction is stored both ways: the earlier memory's history said "link:
    contradicts" the later one, where its relations say "Contradicted by" it."""
    distil(stored, "user: We always run the migrations before the deploy.\n", "mig-1")
    distil(stored, "user: We never run the migrations before the deploy.\n", "mig-2")
    listed = client.get("/memories.json").json()["memories"]
    earlier = next(m["id"] for m in listed if m["content"].startswith("We always run"))
    page = unescape(client.get(f"/memories/{earlier}").text)
    assert "Contradicted by <a" in page
    assert "link: contradicted by <a" in page and "link: contradicts" not in page
    # each side's own event of the pair, not the other's too (each is stored both ways)
    later = next(m["id"] for m in listed if m["content"].startswith("We never run"))
    for one in (earlier, later):
        events = memory_api.events(stored, EventsRequest(one, 50))
        assert [e.memory_id for e in events if e.action == "link"] == [one], events


def test_a_link_made_from_another_memory_is_in_its_targets_history_and_its_undo(
    client: TestClient, stored: Context
) -> None:
    """`link A B --type supports` showed on B's Relations ("Supported by A") and not in
    B's history (`memctl events B`): now in both, with an Undo of that run on B's page."""
    a, b = (
        memory_api.remember(stored, RememberRequest(text)).memory.id
        for text in ("Invoices go out every hour", "Invoices are sent hourly")
    )
    memory_api.link(stored, LinkRequest(a, b, "supports", 0.5))
    events = memory_api.events(stored, EventsRequest(b, 50))
    assert [(e.action, e.memory_id) for e in events][:2] == [("link", a), ("create", b)]
    page = unescape(client.get(f"/memories/{b}").text)
    history_part = page[page.index('<h2 id="history">') :]
    assert (
        "link: supported by <a" in history_part and "Invoices go out every hour</a>" in history_part
    )
    undo = re.search(r'action="(/runs/[0-9a-f]+/undo)"', history_part)
    assert undo is not None and events[0].run_id in undo.group(1)
    memory_api.unlink(stored, a, b)
    assert [e.action for e in memory_api.events(stored, EventsRequest(b, 1))] == ["unlink"]
    assert memory_api.events(stored, EventsRequest(b, 1, page=3))[0].action == "create"


def test_the_runs_pages_follow_each_other_to_the_first_run(
    client: TestClient, stored: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs was the latest 50 and no more: its Older runs link pages back to the first, every
    run once, in `memctl runs`'s order."""
    monkeypatch.setattr(views, "RUNS_SHOWN", 2)
    for text in ("Invoices are sent hourly", "Billing runs on Fridays", "Tax is added"):
        memory_api.remember(stored, RememberRequest(text))
    every = [run.id for run in ingest_api.runs(stored, 1000)]
    seen: list[str] = []
    query = ""
    while True:
        page = client.get(f"/runs{query}").text
        assert ('href="/runs">Newest' in page) == bool(query)
        seen += [run["id"] for run in client.get(f"/runs.json{query}").json()["runs"]]
        older = re.search(r'rel="next" href="(\?before=[^"]+)"', page)
        if older is None:
            break
        query = unescape(older.group(1))
    assert seen == every and len(every) > 2 * views.RUNS_SHOWN


def test_a_memory_lists_its_weightiest_relations_and_counts_the_rest(
    client: TestClient, stored: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hub's relations are not all listed: those saying more than "related" first (a
    support, however light), then the heaviest, and how many more `memctl get` lists."""
    monkeypatch.setattr(history, "RELATIONS_SHOWN", 2)
    made = [
        memory_api.remember(stored, RememberRequest(text)).memory.id
        for text in ("Invoices are sent hourly", "Billing runs on Fridays", "Tax is added")
    ]
    newer = memory_api.remember(stored, RememberRequest("Invoices go out every hour")).memory.id
    for other, weight in zip(made[1:], (0.3, 0.9), strict=True):
        memory_api.link(stored, LinkRequest(made[0], other, "related", weight))
    memory_api.link(stored, LinkRequest(newer, made[0], "supports", 0.2))
    page = unescape(client.get(f"/memories/{made[0]}").text)
    listed = page[page.index('<ul class="related">') : page.index("<h2>Change it</h2>")]
    assert "Supported by <a" in listed and "Invoices go out every hour</a>" in listed
    assert "Tax is added</a> (weight 0.9)" in listed and "Billing runs" not in listed
    assert f"And 1 more: <code>memctl get {made[0][:8]}</code>" in listed


def test_a_consolidated_memory_links_the_memory_and_session_it_came_from(
    client: TestClient, stored: Context, make_ctx: Any
) -> None:
    # an old episode of the stored session whose finding no turn of it said (a digest's
    # Asked / Decided lines quote turns ingest read already: consolidate skips them), its
    # fact consolidated as a memory of its own, not merged into one whose words it repeats
    put(
        stored,
        "Session of 2025-09-14 (claude-code) — the staging database\n"
        "Found: the staging database is called pelican-stage",
        30,
        kind=Kind.EPISODIC,
        category=Category.EVENTS,
        tags=["digest", "session"],
        session_id=SESSION,
    )
    maintain(make_ctx(reconcile__match_similarity=0.99), MaintainRequest(only="consolidate"))
    listed = client.get("/memories.json").json()["memories"]
    made = next(m for m in listed if m["source"].startswith("memory:"))
    page = client.get(f"/memories/{made['id']}").text
    episode = made["source"].removeprefix("memory:")
    assert f'Consolidated from <a href="/memories/{episode}">memory {episode[:8]}</a>' in page
    assert f'<a href="/sessions/{made["session_id"]}">' in page
    assert "Not distilled from a session" not in page
    assert "(weight 1.0)" in page  # the relation to its episode: a number named


def test_the_profile_page_shows_what_memctl_profile_does(
    client: TestClient, stored: Context
) -> None:
    memory_api.remember(stored, RememberRequest("I prefer answers that show the command first"))
    before = client.get("/profile").text  # before maintain wrote one: the memories only
    assert "Written by" not in before and "show the command first" in before
    maintain(stored, MaintainRequest(only="profile"))
    data = client.get("/profile.json").json()
    assert data["written"], data
    line = data["written"][0]
    page = unescape(client.get("/profile").text)
    assert f"<h2>{line['section'].capitalize()} <small>({line['project']})</small></h2>" in page
    assert line["text"] in page and f'<a href="/memories/{line["sources"][0]}">' in page
    assert 'href="/profile" aria-current="page"' in page  # in the navigation bar


def test_the_graph_page_shows_what_memctl_graph_does(client: TestClient, stored: Context) -> None:
    memory_api.remember(stored, RememberRequest("The billing service uses PostgreSQL 16"))
    maintain(stored, MaintainRequest(only="graph"))
    listed = client.get("/graph.json").json()
    assert listed["counts"]["triples"] >= 1 and listed["entities"], listed
    page = unescape(client.get("/graph").text)
    counts = listed["counts"]
    assert f"{counts['entities']} entities, {counts['triples']} relations" in page
    first = listed["entities"][0]["name"]
    assert f'<a href="/graph?entity={quote(first)}">{first}</a>' in page
    related = next(
        shown
        for e in listed["entities"]
        if (shown := client.get("/graph.json", params={"entity": e["name"]}).json())["relations"]
    )
    one = related["relations"][0]
    page = unescape(client.get("/graph", params={"entity": related["entity"]["name"]}).text)
    assert f"→ {one['predicate']} →" in page
    assert f'<a href="/memories/{one["sources"][0]["memory_id"]}">' in page
    missing = client.get("/graph", params={"entity": "no such thing at all"})
    assert missing.status_code == 404 and "no entity named" in missing.text


def test_an_entitys_relations_past_a_page_are_on_the_next_ones(
    client: TestClient, stored: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a hub's relations stopped at graph_api.RELATIONS, and nothing said more were left out
    said = [
        memory_api.remember(stored, RememberRequest(text)).memory.id
        for text in ("Alice works at Acme.", "Alice lives in Paris.", "Alice moved from Sweden.")
    ]
    maintain(stored, MaintainRequest(only="graph"))
    # an entity's page names the memories mentioning it (the most mentioned entities often
    # have no relation: their page said "No relations yet" and nothing more)
    sweden = client.get("/graph.json", params={"entity": "Sweden"}).json()
    assert sweden["mentioned"] == [said[2]] and not sweden["mentioned_more"]
    html = unescape(client.get("/graph", params={"entity": "Sweden"}).text)
    assert f'<h2>Mentioned in</h2><ul><li><a href="/memories/{said[2]}">Alice moved' in html
    monkeypatch.setattr(graph_api, "MENTIONS", 2)
    alice = client.get("/graph.json", params={"entity": "Alice"}).json()
    assert len(alice["mentioned"]) == 2 and set(alice["mentioned"]) < set(said)
    assert alice["mentioned_more"]
    monkeypatch.setattr(graph_api, "RELATIONS", 2)
    pages, page = [], 1
    while True:
        shown = client.get("/graph.json", params={"entity": "Alice", "page": page}).json()
        pages.append([t["id"] for t in shown["relations"] + shown["history"]])
        if not shown["more"]:
            break
        html = unescape(client.get("/graph", params={"entity": "Alice", "page": page}).text)
        assert f'href="/graph?entity=Alice&page={page + 1}">More relations</a>' in html
        page += 1
    assert len(pages) >= 2 and all(len(ids) == 2 for ids in pages[:-1]), pages
    every = [i for ids in pages for i in ids]
    assert len(every) == len(set(every)) >= 3  # each relation once, none left out
    last = unescape(client.get("/graph", params={"entity": "Alice", "page": page}).text)
    assert "More relations" not in last and ">Earlier relations</a>" in last
    past = client.get("/graph", params={"entity": "Alice", "page": page + 1})
    assert past.status_code == 404 and f"no relations on page {page + 1}" in past.text


def test_recall_labels_and_explains(client: TestClient) -> None:
    data = client.get("/recall.json", params={"q": "staging database PostgreSQL"}).json()
    first = data["results"][0]
    assert "PostgreSQL 16" in first["content"] and first["label"] in ("clear", "possible")
    assert first["explain"]["legs"] and first["explain"]["factors"]
    assert client.get("/recall.json").json()["results"] == []
    elsewhere = client.get("/recall", params={"q": "staging database", "project": "nope"}).text
    assert "in other projects" in elsewhere and 'href="/recall?q=staging%20database"' in elsewhere


def test_recall_with_only_possible_rows_names_the_clear_ones_of_other_projects(
    client: TestClient, stored: Context
) -> None:
    # the CLI's hint ("1 clear match in other scopes"), on the page a project was chosen for
    memory_api.remember(stored, RememberRequest("the job board lists open roles", scope="shop"))
    memory_api.remember(stored, RememberRequest("the invoice job runs hourly", scope="billing"))
    asked = {"q": "how often does the invoice job run?", "project": "shop"}
    found = client.get("/recall.json", params=asked).json()
    assert [r["label"] for r in found["results"]] == ["possible"] and found["elsewhere"] == 1
    page = unescape(client.get("/recall", params=asked).text)
    assert "No clear match" in page and "1 clear in other projects" in page
    for question in ("staging database PostgreSQL", "which grass do goats prefer"):
        labels = {
            r["label"] for r in client.get("/recall.json", params={"q": question}).json()["results"]
        }
        page = client.get("/recall", params={"q": question}).text
        assert labels  # each label is told what it means, or that no match was clear
        assert ("No clear match" in page) == ("clear" not in labels), (question, labels)
        assert "its own words or meaning show" in page or "clear" not in labels
        # a possible match's number is its relevance, on another scale than a clear one's
        # score (as recall's table says): never read as a better score
        assert ("Why (relevance " in page) == ("possible" in labels), (question, labels)
        assert ("Why (score " in page) == ("clear" in labels), (question, labels)


def test_a_session_message_found_by_recall_opens_in_its_session(client: TestClient) -> None:
    data = client.get("/recall.json", params={"q": "flaky login test"}).json()
    messages = [r for r in data["results"] if r["from_session_messages"]]
    assert messages, data["results"]
    session, _, seq = messages[0]["id"].rpartition("#")
    assert messages[0]["href"] == f"/sessions/{session}?from={seq}&to={seq}&mark=match"
    page = client.get(messages[0]["href"]).text  # the page the link opens
    assert "flaky login test" in page
    # marked as what the recall matched, not as a memory's source (the same page's mark
    # from a memory's Sources)
    assert "<strong>(recall match)</strong>" in page and "(source)" not in page
    sourced = client.get(f"/sessions/{session}?from={seq}&to={seq}").text
    assert "<strong>(source)</strong>" in sourced and "(recall match)" not in sourced
    # each result says what it is, as `memctl recall` does: a message of a session, or a
    # memory with its category; its project and its date
    listed = client.get("/recall", params={"q": "flaky login test"}).text
    day = messages[0]["dated"][:10]
    assert f"message {seq} of session {session[:12]} · {messages[0]['project']} · {day}" in listed
    memories = [r for r in data["results"] if not r["from_session_messages"]]
    assert memories, data["results"]
    assert f"memory {memories[0]['id'][:8]}, {memories[0]['category']} · " in listed


def test_hostile_text_is_shown_as_text(client: TestClient, stored: Context) -> None:
    memory = memory_api.remember(stored, RememberRequest(HOSTILE[:99_000])).memory
    page = client.get(f"/memories/{memory.id}")
    assert page.status_code == 200
    assert "<script>alert" not in page.text and "&lt;script&gt;alert" in page.text
    assert "<img src=x" not in page.text and "&lt;/textarea&gt;" in page.text
    assert page.text.count("</textarea>") == 1  # the edit form's own
    listed = client.get("/memories").text
    assert "<script>alert" not in listed


def test_forget_pin_edit_and_undo_are_posts_with_the_form_token(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    memory = memory_api.remember(stored, RememberRequest("Releases are cut on Mondays")).memory
    base = f"/memories/{memory.id}"
    assert client.get(f"{base}/forget").status_code == 405  # a GET changes nothing
    assert client.post(f"{base}/forget", data={}).status_code == 403  # no form token
    assert client.post(f"{base}/forget", data={"csrf": "guess"}).status_code == 403
    assert memory_api.get(stored, memory.id).memory.state == "active"
    done = client.post(f"{base}/forget", data={"csrf": keys.csrf})
    assert done.status_code == 303 and done.headers["location"].startswith(base + "?said=")
    assert "forgot" in client.get(done.headers["location"]).text
    assert memory_api.get(stored, memory.id).memory.state == "archived"
    runs = client.get("/runs.json").json()["runs"]
    forgot = next(r for r in runs if r["kind"] == "edit" and r["undoable"])
    assert forgot["door"] == "ui" and forgot["notes"] == [f"forget {memory.id[:8]}"]
    undone = client.post(f"/runs/{forgot['id']}/undo", data={"csrf": keys.csrf})
    assert undone.status_code == 303
    assert client.get("/runs.json").json()["runs"][0]["door"] == "ui"  # the undo's run
    assert memory_api.get(stored, memory.id).memory.state == "active"
    client.post(f"{base}/pin", data={"csrf": keys.csrf})
    assert memory_api.get(stored, memory.id).memory.kind == "pinned"
    client.post(f"{base}/edit", data={"csrf": keys.csrf, "text": "Releases are cut on Tuesdays"})
    assert memory_api.get(stored, memory.id).memory.content == "Releases are cut on Tuesdays"
    empty = client.post(f"{base}/edit", data={"csrf": keys.csrf, "text": "  "})
    assert empty.status_code == 400 and "needs some text" in empty.text


def test_a_change_from_another_site_is_refused(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    memory = memory_api.remember(stored, RememberRequest("Backups run nightly")).memory
    url = f"/memories/{memory.id}/forget"
    form = {"csrf": keys.csrf}
    foreign = client.post(url, data=form, headers={"origin": "http://evil.example"})
    assert foreign.status_code == 403
    cross = client.post(url, data=form, headers={"sec-fetch-site": "cross-site"})
    assert cross.status_code == 403
    assert memory_api.get(stored, memory.id).memory.state == "active"
    own = client.post(url, data=form, headers={"origin": f"http://{HOST}"})
    assert own.status_code == 303


def test_memory_pages_follow_each_other(client: TestClient, stored: Context) -> None:
    for n in range(PAGE_SIZE + 5):
        memory_api.remember(stored, RememberRequest(f"Fact number {n} about the build"))
    first = client.get("/memories.json").json()
    assert len(first["memories"]) == PAGE_SIZE and first["next"]
    second = client.get("/memories.json", params={"after": first["next"]}).json()
    ids = [m["id"] for m in first["memories"] + second["memories"]]
    assert len(ids) == len(set(ids)) and len(second["memories"]) >= 5
    assert client.get("/memories.json", params={"after": "junk"}).status_code == 400


def test_the_speed_benchmark_requests_every_page(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ui_speed.py"), "--memories", "120"]
        + ["--sessions", "30", "--messages", "3", "--repeat", "2", "--cache", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for page in ("projects", "timeline", "a session", "a memory", "recall", "runs", "health"):
        assert any(line.startswith(page + " ") for line in done.stdout.splitlines()), page


def test_a_session_line_of_a_megabyte_of_markup_is_shown_as_text(
    client: TestClient, stored: Context
) -> None:
    line = "<img src=x onerror=alert(1)></pre>" + "x" * 1_000_000
    ingest_text(stored, f"user: {line}\nassistant: ok\n", "huge-1")
    page = client.get("/sessions/huge-1")
    assert page.status_code == 200 and len(page.text) > 1_000_000
    assert "<img src=x" not in page.text and "&lt;/pre&gt;" in page.text
    listed = client.get("/sessions.json").json()["sessions"]
    title = next(s["title"] for s in listed if s["id"] == "huge-1")
    assert title.startswith("<img src=x") and len(title) <= 60  # condensed, shown escaped


def test_a_damaged_store_is_said_before_the_viewer_serves(home: Path) -> None:
    """`memctl ui` on a file that is no memctl database: one line and an exit status, no
    sign-in URL (it served, and every page behind the link said the store was damaged)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "memctl.db").write_bytes(b"not a database, " * 2000)
    done = run_cli("ui", "--port", "0", timeout=60)
    assert done.returncode == 4 and "http://" not in done.stdout, done.stdout
    (line,) = done.stderr.strip().splitlines()
    assert "memctl.db is not a memctl database or is damaged: `memctl restore BACKUP`" in line


@pytest.mark.fresh
def test_a_port_in_use_is_one_line() -> None:
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        done = run_cli("ui", "--port", str(taken.getsockname()[1]))
    finally:
        taken.close()
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "cannot listen on 127.0.0.1:" in line and "Address already in use" in line
    assert line.endswith("give another --port (0: a free one)")  # the CLI's spelling


def test_a_project_timeline_mixes_its_sessions_and_memories(
    client: TestClient, stored: Context
) -> None:
    scope = stored.settings.project_scope
    projects = client.get("/projects").text
    assert f"/timeline?project={quote(scope, safe='')}" in projects
    data = client.get("/timeline.json", params={"project": scope}).json()
    kinds = {e["kind"] for e in data["entries"]}
    assert kinds == {"session", "memory"}, data["entries"]
    times = [e["at"] for e in data["entries"]]
    assert times == sorted(times, reverse=True)
    assert any(e["title"] == "please fix the flaky login test" for e in data["entries"])
    page = client.get("/timeline", params={"project": scope}).text
    assert "/sessions/here-1" in page and "The staging database is PostgreSQL 16" in page
    missing = client.get("/timeline.json")
    assert missing.status_code == 400 and "one project" in missing.json()["error"]


def test_the_timeline_pages_follow_each_other(client: TestClient, stored: Context) -> None:
    scope = stored.settings.project_scope
    for n in range(PAGE_SIZE + 3):
        memory_api.remember(stored, RememberRequest(f"Timeline fact {n}", scope=scope))
    first = client.get("/timeline.json", params={"project": scope}).json()
    assert len(first["entries"]) == PAGE_SIZE and first["next"]
    rest = client.get("/timeline.json", params={"project": scope, "before": first["next"]})
    ids = [e["id"] for e in first["entries"] + rest.json()["entries"]]
    assert len(ids) == len(set(ids)) and "here-1" in ids


def test_the_health_page_shows_doctor_checks(client: TestClient) -> None:
    data = client.get("/health.json").json()
    names = [c["name"] for c in data["checks"]]
    assert "model" in names and "store" in names
    assert all(c["status"] in ("ok", "warn", "fail") for c in data["checks"])
    model = next(c for c in data["checks"] if c["name"] == "model")
    page = client.get("/health").text
    assert escape(model["detail"]) in page and 'href="/health" aria-current="page"' in page
    store = next(c for c in data["checks"] if c["name"] == "store")
    assert store["detail"].endswith("(quick check not run)") and "?check=store" in page
    checked = client.get("/health.json", params={"check": "store"}).json()["checks"]
    store = next(c for c in checked if c["name"] == "store")
    assert (store["status"], store["detail"].endswith("passes the quick check")) == ("ok", True)
    # doctor's `command` quoting is for a terminal: here each command is code, no backtick
    fixes = [c["fix"] for c in data["checks"] if "`" in (c["fix"] or "")]
    assert fixes, data["checks"]
    command = fixes[0].split("`")[1]
    assert f"<code>{escape(command)}</code>" in page and "`" not in page
    failing = sum(c["status"] == "fail" for c in data["checks"])
    assert "check(s)" not in page and (failing != 1 or "1 check failing" in page)


def test_remember_delete_promote_and_unpromote_are_runs(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    form = {"csrf": keys.csrf, "text": "The on-call rota changes on Thursdays"}
    assert client.post("/memories", data={"text": form["text"]}).status_code == 403
    made = client.post("/memories", data=form)
    assert made.status_code == 303
    memory_id = made.headers["location"].split("?")[0].rsplit("/", 1)[1]
    assert memory_api.get(stored, memory_id).memory.content == form["text"]
    asked = client.get("/memories").text  # the field and its button say different things
    assert '<label for="text">Something to remember</label>' in asked
    again = client.post("/memories", data=form)  # the same text: the same memory
    assert "already remembered" in client.get(again.headers["location"]).text
    empty = client.post("/memories", data={"csrf": keys.csrf, "text": " "})
    assert empty.status_code == 400 and "needs some text" in empty.text
    widget = next(
        p["scope"] for p in client.get("/projects.json").json()["projects"] if not p["current"]
    )
    assert f'name="project" value="{widget}"' in client.get(f"/memories?project={widget}").text
    there = client.post(
        "/memories", data={**form, "text": "Widget ships on Tuesdays", "project": widget}
    )
    there_id = there.headers["location"].split("?")[0].rsplit("/", 1)[1]
    assert memory_api.get(stored, there_id).memory.scope == widget  # the page's project

    base = f"/memories/{memory_id}"
    assert client.get(f"{base}/promote").status_code == 405
    client.post(f"{base}/promote", data={"csrf": keys.csrf})
    assert memory_api.get(stored, memory_id).memory.visibility == "shared"
    assert "Unpromote" in client.get(base).text
    client.post(f"{base}/unpromote", data={"csrf": keys.csrf})
    assert memory_api.get(stored, memory_id).memory.visibility == "private"
    client.post(f"{base}/delete", data={"csrf": keys.csrf})
    assert memory_api.get(stored, memory_id).memory.state == "deleted"

    runs = client.get("/runs.json").json()["runs"]
    notes = [r["notes"][0].split()[0] for r in runs[:4]]
    assert notes == ["delete", "unpromote", "promote", "remember"], runs[:4]
    assert {r["door"] for r in runs[:4]} == {"ui"}
    for run in runs[:3]:  # undo the delete, then the unpromote: shared again
        assert client.post(f"/runs/{run['id']}/undo", data={"csrf": keys.csrf}).status_code == 303
        if run["notes"][0].startswith("unpromote"):
            break
    back = memory_api.get(stored, memory_id).memory
    assert (back.state, back.visibility) == ("active", "shared")


def test_forgetting_a_session_asks_first_and_takes_it_out(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    asked = client.get("/sessions/here-1/forget")  # the question: nothing changes
    assert asked.status_code == 200 and "cannot be undone" in asked.text
    assert client.get("/sessions/here-1.json").status_code == 200
    assert 'href="/sessions/here-1/forget"' in client.get("/sessions/here-1").text
    refused = client.post("/sessions/here-1/forget", data={})
    assert refused.status_code == 403
    done = client.post("/sessions/here-1/forget", data={"csrf": keys.csrf})
    assert done.status_code == 303 and done.headers["location"].startswith("/sessions?said=")
    said = client.get(done.headers["location"]).text
    assert "forgot session here-1" in said and "flaky login" not in said
    assert client.get("/sessions/here-1.json").status_code == 404
    recalled = client.get("/recall.json", params={"q": "flaky login test"}).json()
    assert not any("flaky" in r["content"] for r in recalled["results"])
    assert client.post("/sessions/nope/forget", data={"csrf": keys.csrf}).status_code == 404


def test_a_refused_text_is_kept_to_mend_and_a_change_offers_no_json(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """A text the core refuses (too long) comes back in a form, not lost to a Back that
    reloads an empty page (no-store); a change's error page links no `.json` (a 404)."""
    text = "Invoices go out on the first. " * 4000  # past memctl's limit
    refused = client.post("/memories", data={"csrf": keys.csrf, "text": text})
    assert refused.status_code == 400 and "the limit is" in refused.text
    assert escape(text.strip()[:200], quote=False) in refused.text  # in the box to mend
    assert ".json" not in refused.text
    gone = client.post("/memories/0000/edit", data={"csrf": keys.csrf, "text": "x"})
    assert gone.status_code == 404 and "Try again" not in gone.text  # nothing to send again


def test_a_session_whose_id_holds_a_hash_can_be_forgotten(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """`ingest --session-id` takes any id: one holding "#" (read as SESSION#N, a message)
    was refused by the forget page, its button and `sessions forget` alike."""
    ingest_text(stored, "user: the ticket#42 password is hunter2\nassistant: noted\n", "tk#42")
    assert sessions_api.forget_target(stored, "tk#42")[1] is None  # the session, not message 42
    path = f"/sessions/{quote('tk#42', safe='')}/forget"
    asked = client.get(path)
    assert asked.status_code == 200 and "cannot be undone" in asked.text
    done = client.post(path, data={"csrf": keys.csrf})
    assert done.status_code == 303
    assert client.get(f"/sessions/{quote('tk#42', safe='')}.json").status_code == 404
    assert sessions_api.forget_target(stored, "here-1#1")[1] == 1  # a message, as before


def test_a_ref_naming_a_session_and_another_sessions_message_is_refused_until_told(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """With sessions "tk" and "tk#2" stored, "tk#2" took the session "tk#2" when message 2
    of "tk" may have been meant (forgetting cannot be undone), and `memctl forget tk#2`, a
    message, forgot the whole other session; a message of "tk#2" could not be named."""
    ingest_text(stored, "user: the plum code is 1234\nassistant: the pear code is 5678\n", "tk")
    ingest_text(stored, "user: the fig code is 9999\nassistant: noted the fig code\n", "tk#2")
    with pytest.raises(
        UsageError, match="names session 'tk#2' and message 2 of session 'tk': reads"
    ):
        sessions_api.forget(stored, "tk#2")
    assert sessions_api.forget_target(stored, "tk#2", reads="message")[1] == 2
    with pytest.raises(UsageError, match="give SESSION-ID or SESSION-ID#N"):
        sessions_api.forget(stored, "tk", reads="message")  # no message: not the session
    of, seq = sessions_api.forget_target(stored, "tk#2#1")  # a message of the session "tk#2"
    assert (of.id, seq) == ("tk#2", 1)
    memory_api.forget(stored, "tk#2")  # a message's id: that message, never the session
    assert "pear" not in client.get("/sessions/tk.json").text
    fig = client.get(f"/sessions/{quote('tk#2', safe='')}.json")
    assert fig.status_code == 200 and "fig code" in fig.text
    path = f"/sessions/{quote('tk#2', safe='')}/forget"  # its page's button: the session
    assert client.post(path, data={"csrf": keys.csrf}).status_code == 303
    assert client.get(f"/sessions/{quote('tk#2', safe='')}.json").status_code == 404
    assert "plum code" in client.get("/sessions/tk.json").text


def test_forgetting_a_session_names_the_sessions_holding_its_copies(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """A resumed conversation repeats here-1's messages: the question and the answer name
    it, and its copy stays."""
    said = "user: please fix the flaky login test in the checkout service today\n"
    ingest_text(stored, said, "here-2")
    ingest_text(stored, said + "user: and then the signup one\n", "here-3")
    asked = client.get("/sessions/here-2/forget").text
    assert 'href="/sessions/here-3"' in asked and "word for word" in asked
    done = client.post("/sessions/here-2/forget", data={"csrf": keys.csrf})
    said_back = client.get(done.headers["location"]).text
    assert "copies of its messages stay in here-3" in said_back
    assert (
        client.get("/sessions/here-3.json")
        .json()["messages"][0]["content"]
        .startswith("please fix")
    )


def test_forgetting_a_session_names_the_memories_another_session_keeps(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """here-2 states here-1's rule again (its fact skipped as a duplicate): the rule stays,
    and the answer says so."""
    rule = "We always deploy the shop with make ship, never by hand."
    distil(stored, f"user: {rule}\n", "here-1")
    distil(stored, f"user: Remember that {rule[0].lower()}{rule[1:]}\n", "here-2")
    done = client.post("/sessions/here-1/forget", data={"csrf": keys.csrf})
    said_back = client.get(done.headers["location"]).text
    assert "kept 1 memory another session also states, now its source" in said_back
    recalled = client.get("/recall.json", params={"q": "how do we deploy the shop"}).json()
    kept = next(r for r in recalled["results"] if "make ship" in r["content"])
    # the runs that made it name the forgotten session without a link to a page saying so
    for page in (client.get(kept["href"]).text, client.get("/runs").text):
        assert "a session forgotten since" in page
        for link in re.findall(r'href="(/sessions/[^"]+)"', page):
            assert client.get(unescape(link)).status_code == 200, link


def test_runs_undo_refuses_offer_no_undo_button_and_a_forged_undo_changes_nothing(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """A permanent delete and a forgotten session took text out for good: `memctl undo`
    refuses them, so the Runs page says why instead of offering the button, and a POST
    made anyway gets undo's own one-line refusal."""
    gone = memory_api.remember(stored, RememberRequest("The VPN password rotates weekly"))
    memory_api.delete(stored, gone.memory.id, permanent=True)
    client.post("/sessions/here-1/forget", data={"csrf": keys.csrf})
    runs = client.get("/runs.json").json()["runs"]
    refused = [
        r for r in runs if r["notes"][:1] and r["notes"][0].split()[0] in ("delete", "sessions")
    ]
    assert len(refused) == 2
    page = client.get("/runs").text
    for run in refused:
        assert not run["undoable"] and run["why_not"] == "it forgot text for good"
        assert f'action="/runs/{run["id"]}/undo"' not in page
        with pytest.raises(UsageError) as undo_says:
            ingest_api.undo(stored, run["id"])
        events = stored.db.value("SELECT count(*) FROM events")
        forged = client.post(f"/runs/{run['id']}/undo", data={"csrf": keys.csrf})
        assert forged.status_code == 400 and escape(str(undo_says.value)) in forged.text
        assert stored.db.value("SELECT count(*) FROM events") == events
    assert page.count("cannot be undone: it forgot text for good") == 2
    assert client.get("/runs.json").json()["runs"] == runs  # no undo run was made
    remembered = next(r for r in runs if r["notes"][:1] and r["notes"][0].startswith("remember"))
    assert remembered["undoable"] and f'action="/runs/{remembered["id"]}/undo"' in page


def test_a_memory_offers_only_changes_that_change_it_and_says_when_none_did(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """A pinned memory has no Pin button, a forgotten one no Forget or Pin; a stale page's
    button pressed anyway says nothing changed (no run), rather than claiming it did."""
    pinned = memory_api.remember(stored, RememberRequest("Releases are cut on Mondays")).memory
    base = f"/memories/{pinned.id}"
    buttons = re.findall(r'action="[^"]*/(\w+)"', client.get(base).text)
    assert "pin" not in buttons and {"forget", "delete"} <= set(buttons)
    runs = len(client.get("/runs.json").json()["runs"])
    said = client.get(client.post(f"{base}/pin", data={"csrf": keys.csrf}).headers["location"])
    assert "was pinned already: nothing changed" in said.text
    assert len(client.get("/runs.json").json()["runs"]) == runs
    client.post(f"{base}/forget", data={"csrf": keys.csrf})
    buttons = re.findall(r'action="[^"]*/(\w+)"', client.get(base).text)
    assert "forget" not in buttons and "pin" not in buttons and "delete" in buttons
    again = client.post(f"{base}/forget", data={"csrf": keys.csrf}).headers["location"]
    assert "was forgotten already" in client.get(again).text
    client.post(f"{base}/delete", data={"csrf": keys.csrf})
    # a deleted memory offers no change: not shared, not edited; its run's undo brings it back
    deleted = client.get(base).text
    offered = re.findall(r'action="[^"]*/(\w+)"', deleted)
    assert offered[0] == "recall" and set(offered[1:]) == {"undo"}  # the search box, undos
    assert "undoing the run that deleted it" in deleted
    deleted_by = client.get(f"{base}.json").json()["events"][0]["run"]["id"]
    assert f'action="/runs/{deleted_by}/undo"' in deleted
    again = client.post(f"{base}/delete", data={"csrf": keys.csrf}).headers["location"]
    assert "was deleted already" in client.get(again).text


def test_runs_say_what_each_did_and_unknown_addresses_get_a_page_with_links(
    client: TestClient,
) -> None:
    """An ingest run shows its counts (not only its notes, which may be a warning) and the
    session it read (five ingests are told apart); a path no page has, or a link to a
    button's address, is answered by a viewer page."""
    assert re.search(
        r'<td class="meta" data-label="Kind">ingest</td>(.|\n)*?'
        r'<td data-label="What">[1-9][0-9]* create from '
        rf'<a href="/sessions/{SESSION}">session {SESSION[:12]}</a></td>',
        client.get("/runs").text,
    )
    for path, status, said in (
        ("/nothing", 404, "no such page"),
        ("/runs/abc/undo", 405, "takes a form&#39;s button"),
    ):
        answer = client.get(path)
        assert answer.status_code == status and said in answer.text
        assert 'href="/recall"' in answer.text and ".json" not in answer.text


def test_an_undo_says_which_memories_it_left_alone(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """A memory changed after the run is left alone by undo (without --force): the page
    the undo leads to says so, as `memctl undo` does, rather than only a count."""
    first = next(r for r in ingest_api.runs(stored) if r.counts.get("create", 0) >= 2)
    made = memory_api.get(stored, run_events(stored.db, first.id)[0].memory_id or "").memory
    memory_api.update(stored, UpdateRequest(made.id, text="Deploys need one approval"))
    undone = client.post(f"/runs/{first.id}/undo", data={"csrf": keys.csrf})
    said = unescape(client.get(undone.headers["location"]).text)
    assert f"left 1 memory alone, changed since the run ({made.id[:8]})" in said
    assert memory_api.get(stored, made.id).memory.content == "Deploys need one approval"
    # what it says to do reverts that memory too (the run is undone: `undo RUN --force`
    # alone is refused)
    undo_run = client.get("/runs.json").json()["runs"][0]["id"]
    told = f"to revert them too: `memctl undo {undo_run[:12]}`, then "
    assert told + f"`memctl undo {first.id[:12]} --force`" in said
    with pytest.raises(UsageError, match="already undone"):
        ingest_api.undo(stored, first.id, force=True)
    ingest_api.undo(stored, undo_run[:12])
    ingest_api.undo(stored, first.id[:12], force=True)
    assert memory_api.get(stored, made.id).memory.state == "deleted"


def test_an_undo_that_would_revert_nothing_leaves_its_run_as_it_is(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """Every memory the run changed was changed since: undo puts nothing back, so the run
    is not marked undone; the page says how to revert it anyway, and that advice works."""
    made = memory_api.remember(stored, RememberRequest("Deploys need two approvals")).memory
    first = client.get("/runs.json").json()["runs"][0]
    memory_api.update(stored, UpdateRequest(made.id, text="Deploys need one approval"))
    undone = client.post(f"/runs/{first['id']}/undo", data={"csrf": keys.csrf})
    said = unescape(undone.text)
    assert undone.status_code == 400
    assert f"left as it is: the memory it changed was changed since ({made.id[:8]})" in said
    assert f"`memctl undo {first['id'][:12]} --force` reverts anyway" in said
    assert memory_api.get(stored, made.id).memory.content == "Deploys need one approval"
    shown = {run["id"]: run for run in client.get("/runs.json").json()["runs"]}
    assert shown[first["id"]]["status"] == "done" and shown[first["id"]]["undoable"]
    ingest_api.undo(stored, first["id"][:12], force=True)  # what it says to do
    assert memory_api.get(stored, made.id).memory.state == "deleted"


def test_an_empty_store_says_it_has_no_runs_yet(make_ctx: Any, keys: Keys) -> None:
    make_ctx()
    app, viewer = build_app(load_settings(overrides={"embedder": "hash"}), keys, HashEmbedder())
    with TestClient(app, base_url=f"http://{HOST}") as fresh:
        fresh.get(f"/login?token={keys.token}")
        assert "No runs yet" in fresh.get("/runs").text
        assert "No profile yet" in fresh.get("/profile").text
    viewer.close()


def test_imported_files_are_left_out_of_the_sessions_page(
    client: TestClient, stored: Context, tmp_path: Path
) -> None:
    note = tmp_path / "deploys.md"
    note.write_text("# Deploys\n\nWe deploy with make release from main.\n", encoding="utf-8")
    import_files(stored, expand([str(note)]), ImportOptions())
    data = client.get("/sessions.json").json()
    clients = {s["client"] for s in data["sessions"]}
    assert data["imported"] == 1 and clients == {"claude-code", "generic"}
    page = client.get("/sessions").text
    assert 'href="?client=import">1 imported file</a> is left out.' in page
    files = client.get("/sessions.json", params={"client": "import"}).json()["sessions"]
    assert [s["title"] for s in files] == ["Deploys"]


def test_recall_shows_the_part_of_a_long_memory_that_answers(
    stored: Context, client: TestClient
) -> None:
    from tests.retrieve.test_excerpt import DIGEST, TITLE

    memory_api.remember(stored, RememberRequest(DIGEST))
    page = client.get("/recall", params={"q": "what compaction threshold did we pick?"}).text
    assert "threshold: 0.9" in page and TITLE.split(" — ")[0] in page
    assert "changelog" not in page  # the digest's other lines are not shown


def test_a_session_forgotten_in_the_viewer_leaves_no_byte_of_it(
    client: TestClient, stored: Context, keys: Keys, home: Path
) -> None:
    """The viewer holds its own connections open: the forget still empties the WAL."""
    assert client.get("/sessions/here-1").status_code == 200  # read through the viewer
    assert _files_holding(home, "flaky login")
    done = client.post("/sessions/here-1/forget", data={"csrf": keys.csrf})
    assert done.status_code == 303
    assert _files_holding(home, "flaky login") == []


CRAWLED_AT_MOST = 400  # pages: the stored fixture's store has fewer


def test_every_link_of_every_page_opens_a_page_after_a_session_is_forgotten(
    client: TestClient, stored: Context, keys: Keys
) -> None:
    """From the projects page, every link the viewer's pages hold, followed: each opens a
    page (a session forgotten since is named, never linked to a page saying so)."""
    rule = "We always deploy the shop with make ship, never by hand."
    distil(stored, f"user: {rule}\n", "here-1")
    distil(stored, f"user: Remember that {rule[0].lower()}{rule[1:]}\n", "here-2")
    assert client.post("/sessions/here-1/forget", data={"csrf": keys.csrf}).status_code == 303
    seen: set[str] = set()
    waiting = ["/projects"]
    while waiting and len(seen) < CRAWLED_AT_MOST:
        path = waiting.pop()
        if path in seen:
            continue
        seen.add(path)
        page = client.get(path)
        assert page.status_code == 200, (path, page.text[-300:])
        for link in re.findall(r'href="(/[^"#]*)', page.text):
            if not link.startswith("/static/") and ".json" not in link:
                waiting.append(unescape(link))
    assert len(seen) > 20 and not waiting or len(seen) == CRAWLED_AT_MOST, len(seen)


def test_ui_open_gives_the_browser_a_private_page_never_the_token_on_its_command_line(
    home: Path, tmp_path: Path
) -> None:
    """A browser's command line is readable by every local user while it runs: `--open`
    hands it a 0600 page that sends it on to the sign-in URL, removed when the viewer
    stops (by Ctrl-C; a killed one leaves it, holding a token that died with it). The page
    signs in; the browser's arguments hold no token."""
    seen = tmp_path / "browser"
    browser = tmp_path / "fake-browser"
    browser.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > "{seen}.argv"\n'
        f'cat "${{1#file://}}" > "{seen}.page"\nstat -c %a "${{1#file://}}" > "{seen}.mode"\n'
        f'touch "{seen}.done"\n'
    )
    browser.chmod(0o755)
    process = subprocess.Popen(
        [sys.executable, "-m", "memctl", "ui", "--port", "0", "--open"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "MEMCTL_EMBEDDER": "hash", "BROWSER": str(browser)},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split("open ", 1)[1].strip()
        token = url.split("token=", 1)[1]
        deadline = time.monotonic() + 60
        while not Path(f"{seen}.done").is_file():
            assert time.monotonic() < deadline, "the browser was never started"
            time.sleep(0.1)
        assert token not in Path(f"{seen}.argv").read_text()
        assert Path(f"{seen}.mode").read_text().strip() == "600"
        page = Path(f"{seen}.page").read_text()
        sent_to = unescape(re.search(r'url=([^"]+)"', page).group(1))  # type: ignore[union-attr]
        assert sent_to == url
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(sent_to, timeout=30) as signed_in:
            assert signed_in.url.endswith("/projects")
            first = signed_in.read().decode()  # an empty store: how to fill it
        assert "Nothing is stored yet:\n<code>memctl install claude-code</code>" in first
        assert "<code>memctl ingest --backfill</code>" in first and 'href="/memories"' in first
        assert (home / "ui" / "sign-in.html").is_file()
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl-C
        process.wait(timeout=30)
    assert not (home / "ui" / "sign-in.html").exists()


def test_a_change_while_another_process_holds_the_store_says_when_to_try_again(
    make_ctx: Any, keys: Keys, home: Path
) -> None:
    """A 503 names its Retry-After (the busy timeout, rounded up to whole seconds) and keeps
    the form."""
    assert make_ctx().db.path.is_file()  # the store, empty
    settings = load_settings(overrides={"embedder": "hash", "store.busy_timeout_ms": 100})
    app, viewer = build_app(settings, keys, HashEmbedder())
    held = apsw.Connection(str(home / "memctl.db"))  # another process's write, under way
    held.execute("BEGIN IMMEDIATE")
    try:
        with TestClient(app, base_url=f"http://{HOST}", follow_redirects=False) as client:
            client.get(f"/login?token={keys.token}")
            said = {"csrf": keys.csrf, "text": "Invoices go out on the first"}
            refused = client.post("/memories", data=said)
    finally:
        held.execute("ROLLBACK")
        held.close()
        viewer.close()
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert "Invoices go out on the first" in refused.text


# Run inside a mount namespace where the store's folder is mounted read-only: the viewer's
# pages, a change, and the resident start a recall makes, printed as JSON.
READ_ONLY_INSIDE = """
import json, sys
from starlette.testclient import TestClient
from memctl.config.settings import load_settings
from memctl.integrations import resident
from memctl.ui.app import build_app
from memctl.ui.security import Keys
from tests.fakes import HashEmbedder

keys = Keys(frozenset({"testserver"}))
app, viewer = build_app(load_settings(overrides={"embedder": "hash"}), keys, HashEmbedder())
with TestClient(app, base_url="http://testserver") as client:
    client.get(f"/login?token={keys.token}")
    pages = {p: client.get(p).status_code for p in ("/memories", "/recall?q=invoices", "/runs")}
    store = next(c for c in client.get("/health.json").json()["checks"] if c["name"] == "store")
    found = client.get("/memories.json").json()["memories"]
    said = {"csrf": keys.csrf, "text": "a thought to keep"}
    change = client.post("/memories", data=said, headers={"origin": "http://testserver"})
viewer.close()
print(json.dumps({"pages": pages, "found": [m["content"] for m in found],
                  "change": [change.status_code, change.text], "store": store,
                  "resident": resident.start(load_settings().home)}))
"""
MOUNT_READ_ONLY = (
    'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 77; shift; exec "$@"'
)


def test_a_store_on_a_read_only_disk_is_read_and_a_change_says_so(home: Path) -> None:
    """A store on a disk mounted read-only (a snapshot, a backup disk): `memctl ui` said
    only "cannot open the database" (SQLite could not make its -shm file there). Its pages
    are read; a change is refused in one line, its text kept; Health warns of it; recall
    starts no resident process (its log cannot be written) rather than failing after its
    answer. The project got a git remote since it was remembered: the scope's adoption (a
    write) waits for a writable store rather than failing every page."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to mount a folder read-only")
    project = home.parent / "shop"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert run_cli("remember", "Invoices go out on the first", cwd=project).returncode == 0
    remote = ["git", "-C", str(project), "remote", "add", "origin", "https://example.com/a/shop"]
    subprocess.run(remote, check=True)
    namespace = [unshare, "-m"] if os.geteuid() == 0 else [unshare, "-r", "-m"]
    done = subprocess.run(
        [*namespace, "sh", "-c", MOUNT_READ_ONLY, "sh", str(home)]
        + [sys.executable, "-c", READ_ONLY_INSIDE],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=project,
    )
    if done.returncode == 77:
        pytest.skip("no read-only mount here (unshare needs CAP_SYS_ADMIN or user namespaces)")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert set(seen["pages"].values()) == {200}
    assert seen["found"] == ["Invoices go out on the first"]
    status, page = seen["change"]
    assert status == 400 and "is read-only" in page and "a thought to keep" in page
    assert seen["resident"] is False
    assert seen["store"]["status"] == "warn" and "read-only disk" in seen["store"]["detail"]


def test_an_imported_chat_s_message_shows_who_said_it(
    client: TestClient, stored: Context, tmp_path: Path
) -> None:
    """A chat export's message is shown with its author, escaped like its text."""
    chat = tmp_path / "WhatsApp Chat with Tim.txt"
    chat.write_text(
        "12/31/23, 9:42 PM - <b>Tim</b>: Did you book the train to Edinburgh?\n"
        "12/31/23, 9:43 PM - John: Not yet.\n"
        "12/31/23, 9:44 PM - <b>Tim</b>: Book it.\n"
    )
    import_files(stored, expand([str(chat)]), ImportOptions())
    session = stored.db.value("SELECT id FROM sessions WHERE source LIKE '%Tim.txt'")
    page = client.get(f"/sessions/{session}").text
    assert "&lt;b&gt;Tim&lt;/b&gt; (user) · " in page and "John (user) · " in page
    assert "<b>Tim</b>" not in page
    # named once, above its text ("John: Not yet." stored), as `sessions show` does
    assert "<pre>Not yet.</pre>" in page and "John: Not yet." not in page


def test_the_runs_page_offers_no_undo_and_no_refusal_for_a_run_that_changed_no_memory(
    home: Path, tmp_path: Path
) -> None:
    """A sync that only wrote a file out and a captured session that stored no memory
    changed none: `memctl undo` refuses them, but the Runs page (`memctl ui`, a real
    server on loopback) says nothing beside them, where "cannot be undone: nothing is
    left to put back" beside each hid the runs that matter; a remember keeps its Undo."""

    def ok(*args: str) -> str:
        done = run_cli(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    ok("sync", "init", str(bare_repo(tmp_path)))
    shared_id = ok("remember", "--scope", "global", "Deploys need two approvals").strip()
    ok("promote", shared_id)
    assert "write 1 file" in ok("sync")
    said = [("user", "hi"), ("assistant", [{"type": "text", "text": "Hello! What now?"}])]
    quiet = tmp_path / "quiet.jsonl"
    quiet.write_text(
        "".join(json.dumps(claude_record(*s, n, "quiet")) + "\n" for n, s in enumerate(said))
    )
    assert "no changes" in ok("ingest", "--transcript", str(quiet), "--wait")
    # newest first: the ingest, the sync, the promote, the remember (the edit kept here)
    runs = {r["kind"]: r for r in json.loads(ok("runs", "--json"))}
    for idle in (runs["sync"], runs["ingest"]):
        refused = run_cli("undo", idle["id"])
        assert refused.returncode == 2 and "nothing is left to put back" in refused.stderr

    env = {**os.environ, "MEMCTL_EMBEDDER": "hash"}
    process = subprocess.Popen(
        memctl_command(["ui", "--port", "0"], env), stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split("open ", 1)[1].strip()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as signed_in:  # follows the redirect
            base = signed_in.url.rsplit("/projects", 1)[0]
        with opener.open(f"{base}/runs", timeout=30) as answer:
            page = answer.read().decode()
        with opener.open(f"{base}/runs.json", timeout=30) as answer:
            shown = {r["id"]: r for r in json.load(answer)["runs"]}
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert "cannot be undone" not in page
    for idle in (runs["sync"], runs["ingest"]):
        assert not shown[idle["id"]]["undoable"] and shown[idle["id"]]["why_not"] is None
        assert f'action="/runs/{idle["id"]}/undo"' not in page
    assert runs["edit"]["notes"][0].startswith("remember")
    assert shown[runs["edit"]["id"]]["undoable"]
    assert f'action="/runs/{runs["edit"]["id"]}/undo"' in page
