"""memctl ui in a real browser: `memctl ui` started as a process on a free port, driven by
Debian's headless chromium through its chromedriver (scripts/install-browser installs them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import apsw
import pytest

from memctl.api import memory as memory_api
from memctl.api.memory import ListRequest, RememberRequest
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.source import Input
from memctl.model import State
from memctl.store.writes import Writer
from tests.conftest import ROOT, memctl_command, run_cli
from tests.ingesting import distil

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    pytest.skip(
        "chromium and chromium-driver are not installed (scripts/install-browser)",
        allow_module_level=True,
    )
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

HOSTILE = "Build note <script>document.title='pwned'</script><img src=x onerror=alert(1)>"
NARROW = 420  # a phone's window width, in CSS pixels
WAIT_SECONDS = 10  # for the browser to load a page (the driver waits this long at most)


@pytest.fixture
def viewer(home: Path) -> Iterator[str]:
    """A store with memories, and `memctl ui` serving it: its sign-in URL."""
    for text in ("The staging database is PostgreSQL 16", "Releases are cut on Mondays", HOSTILE):
        assert run_cli("remember", text).returncode == 0
    yield from serving()


def serving(**env: str) -> Iterator[str]:
    """`memctl ui` on the test's store (``env``: more of its environment), until the test
    ends: its sign-in URL. Forked from the worker's fork server (``memctl_command``):
    tests/ui/test_ui.py starts a fresh one."""
    full = {**os.environ, "MEMCTL_EMBEDDER": "hash", **env}
    process = subprocess.Popen(
        memctl_command(["ui", "--port", "0"], full),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("memctl ui: open http://127.0.0.1:"), process.stderr
        yield first.split("open ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless chromium for the module's tests (each starts its own: ``browser``)."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)), options=options
    )
    driver.implicitly_wait(WAIT_SECONDS)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chromium: Any) -> Any:
    """The module's chromium as new: no cookie of an earlier test (every viewer is on
    127.0.0.1, whatever its port), on a blank page."""
    chromium.execute_cdp_cmd("Network.clearBrowserCookies", {})
    chromium.get("about:blank")
    return chromium


def text_of_json(driver: Any, url: str) -> str:
    """The JSON a page's ``.json`` address answers, as the browser shows it."""
    driver.get(url)
    return str(driver.find_element(By.TAG_NAME, "pre").text)


def text_of(driver: Any) -> str:
    return str(driver.find_element(By.TAG_NAME, "body").text)


def said_above(driver: Any) -> str:
    """The first paragraph of the page's main part (waiting for the page to load)."""
    return str(driver.find_element(By.CSS_SELECTOR, "main p").text)


def said_on(driver: Any) -> str:
    """What the page a change led to says happened (waiting for that page to load)."""
    return str(driver.find_element(By.CSS_SELECTOR, "p.said").text)


def test_the_page_ui_open_gives_the_browser_signs_in(viewer: str, browser: Any, home: Path) -> None:
    """`memctl ui --open` hands the browser a private file that forwards to the sign-in URL
    (its token out of the browser's command line): from that file, a page of its own, the
    browser ends signed in on the projects page."""
    from memctl.ui.server import sign_in_page

    browser.get(sign_in_page(home, viewer).as_uri())
    browser.find_element(By.TAG_NAME, "h1")  # waits for the forwarded page
    assert browser.current_url == f"{viewer.split('/login', 1)[0]}/projects"
    assert "Projects" in browser.title and "sign in with the link" not in text_of(browser)


def test_sign_in_search_forget_and_undo_in_a_browser(viewer: str, browser: Any) -> None:
    base = viewer.split("/login", 1)[0]
    browser.get(f"{base}/projects")
    assert "sign in with the link" in text_of(browser)  # nothing without the link
    browser.get(viewer)
    assert browser.current_url == f"{base}/projects"
    assert "Projects" in browser.title and "(here)" in text_of(browser)

    search = browser.find_element(By.ID, "q")
    search.send_keys("staging database PostgreSQL")
    submit(browser, search)
    found = browser.find_element(By.PARTIAL_LINK_TEXT, "staging database")  # waits for it
    assert found.text == "The staging database is PostgreSQL 16"
    found.click()
    browser.find_element(By.XPATH, "//button[text()='Forget']").click()
    said = said_on(browser)
    assert "forgot" in said and "recall no longer returns it" in said
    assert "archived" in text_of(browser)

    browser.find_element(By.LINK_TEXT, "Runs").click()
    browser.find_element(By.XPATH, "//button[text()='Undo']").click()
    assert said_on(browser).startswith("undid run")
    browser.get(f"{base}/memories")
    assert "staging database" in text_of(browser)


def test_a_page_loads_without_an_error_in_the_browser_s_console(viewer: str, browser: Any) -> None:
    """Every page asked for /favicon.ico, which the viewer does not serve: a 404 in the
    console of each (the first-hour walk); its icon is a static file it names."""
    browser.get(viewer)
    browser.find_element(By.TAG_NAME, "h1")
    browser.get_log("browser")  # what signing in logged, read and dropped
    base = viewer.split("/login", 1)[0]
    for page in ("projects", "memories", "runs"):
        browser.get(f"{base}/{page}")
        browser.find_element(By.TAG_NAME, "h1")
        logged = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert logged == [], (page, logged)


def test_hostile_memory_text_is_shown_not_run(viewer: str, browser: Any) -> None:
    browser.get(viewer)
    browser.find_element(By.LINK_TEXT, "Memories").click()
    shown = browser.find_element(By.PARTIAL_LINK_TEXT, "Build note")
    assert "<script>document.title='pwned'</script>" in shown.text
    assert browser.title != "pwned"
    shown.click()
    content = browser.find_element(By.CSS_SELECTOR, "blockquote.content")
    assert browser.title != "pwned" and "onerror=alert(1)" in content.text


def test_the_screenshot_script_shoots_every_page(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "screenshots.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    shot = {p.name: p.read_bytes() for p in tmp_path.glob("*.png")}
    assert set(shot) == {f"{p.name}" for p in (ROOT / "docs" / "ui").glob("*.png")}
    assert all(data.startswith(b"\x89PNG") and len(data) > 5000 for data in shot.values())


SESSION = "5f0c2d7e-0000-4000-8000-000000000002"
TURNS = [
    ("user", "How do we deploy the billing service? I always forget the order."),
    ("assistant", "Run `make release` from main; staging smoke tests must pass first."),
    ("user", "Remember that we never deploy on Fridays."),
    ("assistant", "Noted: no deploys on Fridays."),
]


LOCK_WAIT_MS = 1000  # the viewer's wait for a store another process holds, in this test
# A session id a caller chose (`ingest --session-id`): a "/" and a "?" in it
SLASHED = "release/v2?draft=1"


@pytest.fixture
def with_session(home: Path, tmp_path: Path) -> Iterator[str]:
    """A store holding one Claude Code session, distilled by the rules, served by
    `memctl ui`: its sign-in URL."""
    lines = [
        {
            "type": role,
            "sessionId": SESSION,
            "cwd": str(Path.cwd()),
            "timestamp": f"2026-11-02T09:{n:02d}:00Z",
            "message": {"role": role, "content": text},
        }
        for n, (role, text) in enumerate(TURNS)
    ]
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = run_cli("ingest", "--transcript", str(transcript), "--client", "claude-code", "--wait")
    assert done.returncode == 0, done.stderr
    assert run_cli("remember", "The staging database is PostgreSQL 16").returncode == 0
    slashed = run_cli(
        "ingest", "--session-id", SLASHED, "--wait", input="user: Tag the release as v2.\n"
    )
    assert slashed.returncode == 0, slashed.stderr
    # a write held up by another process is said within a second, not the default 5
    yield from serving(MEMCTL_STORE_BUSY_TIMEOUT_MS=str(LOCK_WAIT_MS))


def loaded(driver: Any) -> None:
    """Wait until the page and its stylesheet have loaded: chromedriver's navigation
    sometimes returns while the document is still "interactive", the stylesheet not yet
    applied (an unstyled table is wider than a phone's window)."""
    from selenium.webdriver.support.wait import WebDriverWait

    WebDriverWait(driver, WAIT_SECONDS).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )


def sideways(driver: Any) -> int:
    """How many pixels the page is wider than the window (0: it never scrolls sideways)."""
    loaded(driver)
    wide, seen = driver.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]"
    )
    return max(0, int(wide) - int(seen))


def click(driver: Any, text: str) -> None:
    """Press the button labelled ``text`` and wait for the page it leads to."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    page = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.XPATH, f"//button[text()='{text}']").click()
    WebDriverWait(driver, WAIT_SECONDS).until(expected_conditions.staleness_of(page))


def submit(driver: Any, field: Any) -> None:
    """Submit ``field``'s form and wait for the page it leads to (a submit returns before it
    has: the old page's ``main p`` can be read, then go stale under the reader)."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    page = driver.find_element(By.TAG_NAME, "html")
    field.submit()
    WebDriverWait(driver, WAIT_SECONDS).until(expected_conditions.staleness_of(page))


def follow(where: Any, by: str, text: str, driver: Any = None) -> None:
    """Open the link found in ``where`` (a page, or an element of ``driver``'s) and wait for
    its page to load (a click returns before it has: the old page's elements still match)."""
    href = where.find_element(by, text).get_attribute("href")
    (driver or where).get(href)


def whole_dates(driver: Any, cells: str) -> list[bool]:
    """Of each of ``cells`` (a CSS selector) showing a time, whether its date
    (``2026-11-02``, its first ten characters) is on one line."""
    loaded(driver)
    return list(
        driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(cell => {"
            " const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT); const tops = [];"
            " for (let node = walk.nextNode(); node && tops.length < 10; node = walk.nextNode())"
            "  for (let i = 0; i < node.length && tops.length < 10; i++) {"
            "   const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);"
            "   tops.push(r.getBoundingClientRect().top); }"
            " return new Set(tops).size === 1; })",
            cells,
        )
    )


def status(driver: Any) -> int:
    """The HTTP status of the page the browser shows."""
    loaded(driver)
    return int(
        driver.execute_script("return performance.getEntriesByType('navigation')[0].responseStatus")
    )


def test_every_page_and_every_edit_in_a_browser(
    with_session: str, browser: Any, home: Path
) -> None:
    base = with_session.split("/login", 1)[0]
    browser.get(with_session)
    # a list counts its rows; a later page leads back to the newest
    listed = json.loads(text_of_json(browser, f"{base}/memories.json"))["memories"]
    browser.get(f"{base}/memories")
    counted = browser.find_element(By.CSS_SELECTOR, "p.pager").text
    assert counted == f"{len(listed)} memories" and len(listed) > 1, counted
    shown = browser.find_element(By.CSS_SELECTOR, "tbody a[href^='/memories/']").text
    row = listed[0]
    browser.get(f"{base}/memories?after={row['created_at']}%7C{row['id']}")
    assert shown not in text_of(browser)
    follow(browser, By.LINK_TEXT, "Newest")
    assert shown in text_of(browser)
    assert "Newest" not in browser.find_element(By.CSS_SELECTOR, "p.pager").text
    # a session link cut short opens the sessions, a range written backwards says so
    browser.get(f"{base}/sessions/")
    assert browser.title.startswith("Sessions") and status(browser) == 200
    assert "2 sessions" in browser.find_element(By.CSS_SELECTOR, "p.pager").text
    browser.get(f"{base}/sessions/.json")
    assert status(browser) == 404 and "no session id in the address" in text_of(browser)
    browser.get(f"{base}/sessions/{SESSION}?from=5&to=2")
    assert f"run backwards: the first comes first ({SESSION}#2-5)" in text_of(browser)
    # a session's time in a column squeezed by its title and digest: its date stays whole
    browser.set_window_size(760, 800)
    browser.get(f"{base}/sessions")
    assert whole_dates(browser, "td.when") == [True, True], browser.page_source
    # a session whose id holds "/" and "?" opens, and so does its page as JSON
    follow(browser, By.PARTIAL_LINK_TEXT, "Tag the release")
    assert SLASHED in said_above(browser), text_of(browser)
    follow(browser, By.LINK_TEXT, "This page as JSON")
    assert f'"id":"{SLASHED}"' in text_of(browser)
    # recall lists as many rows as asked (`recall -n`), then offers more, opening at the next
    browser.get(f"{base}/recall?q=deploy&n=1")
    assert len(browser.find_elements(By.CSS_SELECTOR, "ol.results > li")) == 1
    follow(browser, By.LINK_TEXT, "More results")
    assert browser.execute_script("return document.querySelector(':target').id") == "r2"
    assert len(browser.find_elements(By.CSS_SELECTOR, "ol.results > li")) > 1
    # a pasted page past recall's limit is refused at once, as `memctl recall` refuses it,
    # and stays in the search box to cut
    pasted = "deploy " * 1500
    browser.get(f"{base}/recall?q={quote(pasted)}")
    assert status(browser) == 400
    assert "the query is 10,499 characters; the limit is 10,000" in text_of(browser)
    assert browser.find_element(By.ID, "q").get_attribute("value") == pasted
    browser.get(f"{base}/projects")
    # projects -> the project's timeline -> a memory distilled from the session
    browser.find_element(By.CSS_SELECTOR, "a.name").click()
    assert browser.title.startswith("Timeline of")
    timeline = browser.current_url
    search = browser.find_element(By.ID, "pq")  # recall in this project, as the CLI's here
    search.send_keys("which day do we never deploy")
    submit(browser, search)
    assert "only (as memctl recall --scope it)" in said_above(browser)
    assert "Fridays" in browser.find_element(By.CSS_SELECTOR, "ol.results").text
    browser.get(timeline)
    browser.find_element(By.PARTIAL_LINK_TEXT, "Fridays").click()
    assert browser.title.startswith("Memory")
    # its source opens the session's lines, marked
    browser.find_element(By.PARTIAL_LINK_TEXT, f"session {SESSION}").click()
    marked = browser.find_elements(By.CSS_SELECTOR, "li.marked")
    assert marked and "Fridays" in " ".join(m.text for m in marked)
    browser.back()
    memory_url = browser.current_url
    # a phone's width: its long source and ids wrap, the page never scrolls sideways
    wide_as = browser.get_window_size()
    browser.set_window_size(NARROW, 800)
    browser.refresh()
    assert sideways(browser) == 0
    browser.set_window_size(wide_as["width"], wide_as["height"])

    click(browser, "Promote")
    assert "shared" in said_on(browser) and "Unpromote" in text_of(browser)
    click(browser, "Unpromote")
    assert "private" in said_on(browser)
    click(browser, "Pin")
    assert "pinned" in said_on(browser)
    edit = browser.find_element(By.ID, "text")
    edit.clear()
    edit.send_keys("We never deploy on Fridays or on holidays.")
    click(browser, "Save")
    assert "saved" in said_on(browser) and "holidays" in text_of(browser)
    click(browser, "Delete")
    assert "deleted" in said_on(browser)
    browser.find_element(By.LINK_TEXT, "Runs").click()
    click(browser, "Undo")  # the first: the delete
    assert said_on(browser).startswith("undid run")
    browser.get(memory_url)
    assert "active" in browser.find_element(By.CSS_SELECTOR, "dl.fields").text

    # remember from the memories page
    browser.find_element(By.LINK_TEXT, "Memories").click()
    browser.find_element(By.ID, "text").send_keys("Invoices go out on the first of the month")
    held = apsw.Connection(str(home / "memctl.db"))  # another process's write, under way
    held.execute("BEGIN IMMEDIATE")
    try:
        click(browser, "Remember")
        assert status(browser) == 503 and "try again" in text_of(browser)
        kept = browser.find_element(By.ID, "text").get_attribute("value")
        assert kept == "Invoices go out on the first of the month"
    finally:
        held.execute("ROLLBACK")
        held.close()
    click(browser, "Try again")
    assert said_on(browser).startswith("remembered")

    # recall, health
    browser.get(f"{base}/recall?q=staging+database")
    assert "PostgreSQL 16" in text_of(browser)
    browser.find_element(By.LINK_TEXT, "Health").click()
    assert "memctl doctor" in text_of(browser) and "model" in text_of(browser)

    # forget the session: asked first, then gone with what was made from it
    browser.get(f"{base}/sessions/{SESSION}")
    kept = browser.find_element(By.CSS_SELECTOR, "details.kept")  # what memctl keeps of it
    kept.find_element(By.TAG_NAME, "summary").click()
    assert "Kept from it: " in kept.text and "or on holidays." in kept.text, kept.text
    browser.find_element(By.PARTIAL_LINK_TEXT, "Forget this session").click()
    assert "cannot be undone" in text_of(browser)
    asked = text_of(browser)
    assert "The memories made from it:" in asked and "on Fridays or on holidays." in asked
    click(browser, "Forget this session")
    assert f"forgot session {SESSION}" in said_on(browser)
    assert "deploy the billing service" not in text_of(browser)
    browser.get(memory_url)
    assert "no memory" in text_of(browser).lower() or "not found" in text_of(browser).lower()

    # its run cannot be undone: Runs says why in place of the button; in a narrow window
    # a run's kind, status and door stay whole words
    browser.set_window_size(NARROW, 800)
    browser.find_element(By.LINK_TEXT, "Runs").click()
    forgot = browser.find_element(By.CSS_SELECTOR, "tbody tr")
    assert "cannot be undone: it forgot text for good" in forgot.text
    assert not forgot.find_elements(By.TAG_NAME, "button")
    loaded(browser)
    lines = browser.execute_script(
        "return [...document.querySelectorAll('td.meta')].map(td => {"
        " const r = document.createRange(); r.selectNodeContents(td);"
        " return r.getClientRects().length; })"
    )
    assert 1 in lines and set(lines) <= {0, 1}, lines  # 0: an empty cell
    # nor does any page scroll sideways there: each row a block of its cells, each named
    for page in ("projects", "sessions", "memories", "profile", "graph", "runs", "health"):
        browser.get(f"{base}/{page}")
        assert sideways(browser) == 0, page
    named = browser.execute_script(  # health: the column's name before each value
        "const td = document.querySelector('td[data-label]');"
        "return [td.dataset.label, getComputedStyle(td, '::before').content]"
    )
    assert named[0] == "Status" and "Status" in named[1], named


# A project whose path has no place a line may break (a slash is none): it must still wrap
LONG_PATH = "/home/ann/ghq/github.com/averyverylongorganisationname/averyverylongrepositoryname"
LONG_SESSION = "5f0c2d7e-0000-4000-8000-000000000003"
ACCESSES = 60  # recalls of one memory: more than a page of its history (views.PAGE_SIZE)


@pytest.fixture
def walked(make_ctx: Any, tmp_path: Path) -> Iterator[str]:
    """A preference the user changed (its rules supersede the first), recalled often; a
    session of more than one page, in a project with a long path: `memctl ui` serving it."""
    ctx = make_ctx()
    distil(ctx, "user: I like long commit messages.\nassistant: Noted.\n", "pref-1")
    distil(ctx, "user: I don't like long commit messages.\nassistant: Noted.\n", "pref-2")
    said_again = "user: Remember: I don't like long commit messages.\nassistant: Noted.\n"
    distil(ctx, said_again, "pref-3")
    distil(ctx, "user: We always run the migrations before the deploy.\n", "mig-1")
    distil(ctx, "user: We never run the migrations before the deploy.\n", "mig-2")
    lines = [
        {
            "type": role,
            "sessionId": LONG_SESSION,
            "cwd": LONG_PATH,
            "timestamp": f"2026-11-03T{n // 60:02d}:{n % 60:02d}:00Z",
            "message": {"role": role, "content": f"step {n // 2} of the migration"},
        }
        for n, role in enumerate(["user", "assistant"] * 65)
    ]
    transcript = tmp_path / "long.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with transcript.open("rb") as raw:
        capture(ctx, Input(raw, str(transcript)), IngestOptions("claude-code"))
    now = [m.id for m in memory_api.list_memories(ctx, ListRequest()) if m.state == State.ACTIVE]
    with ctx.db.atomic():  # as recall records them
        for _ in range(ACCESSES):
            Writer(ctx.db).accessed(now, 0.0, by="recall")
    ctx.close()
    yield from serving()


def test_a_changed_preference_walked_from_recall_to_its_history(walked: str, browser: Any) -> None:
    """Recall says why a result is clear or possible (`recall --explain`'s match line); a
    relation names the other memory and leads to it; a superseded memory names the one
    that took its place, and its history undoes the run that superseded it; a history longer
    than a page pages back to the memory's creation, its accesses folded; a marked message's
    whole session opens at that message; a long project path wraps in a narrow window."""
    base = walked.split("/login", 1)[0]
    browser.get(walked)
    browser.get(f"{base}/recall?q=long+commit+messages")
    found = browser.find_element(By.CSS_SELECTOR, "a[href^='/memories/']")
    row = found.find_element(By.XPATH, "ancestor::li")
    row.find_element(By.TAG_NAME, "summary").click()
    why = row.find_element(By.CSS_SELECTOR, "dl.factors").text
    label = row.find_element(By.CSS_SELECTOR, "span.label").text
    assert f"match\n{label}: " in why and "found by\n" in why, why
    assert "the same as\nmessage 1 of session pref-2" in why, why  # its own words, said
    assert found.text == "I don't like long commit messages."
    found.click()
    relation = browser.find_element(By.CSS_SELECTOR, "ul.related li")
    assert relation.text.startswith("Supersedes I like long commit messages. (superseded)")
    assert "access ×50 by recall" in text_of(browser)  # a page of accesses: one line
    browser.find_element(By.LINK_TEXT, "Older history").click()
    older = browser.find_element(By.CSS_SELECTOR, "ol.events").text
    assert f"access ×{ACCESSES - 50}" in older and "create (supersede)" in older, older
    assert "link: supersedes I like long commit messages." in older, older
    # another session saying it again: where and when, not reconcile's "update (skip)"
    again = browser.find_element(By.PARTIAL_LINK_TEXT, "session pref-3, message 1")
    line = again.find_element(By.XPATH, "ancestor::li").text
    assert line.split(" · ")[1].startswith("update (said again) in session pref-3, message 1 (said")
    assert again.get_attribute("href").endswith("/sessions/pref-3?from=1&to=1")

    browser.find_element(By.PARTIAL_LINK_TEXT, "I like long commit messages").click()
    fields = browser.find_element(By.CSS_SELECTOR, "dl.fields").text
    assert "superseded, by I don't like long commit messages." in fields, fields
    history = browser.find_element(By.CSS_SELECTOR, "ol.events").text
    assert "state (supersede) → superseded by I don't like long commit messages." in history
    # the run that superseded it, undone from its history line: it is current again, here
    browser.find_element(By.CSS_SELECTOR, "ol.events > li:first-child form.undo button").click()
    assert "undid run" in said_on(browser)
    assert browser.find_element(By.CSS_SELECTOR, "dl.fields dd").text == "active"

    # a contradiction (stored both ways) read from each side: which was said later
    browser.get(f"{base}/recall?q=migrations+before+the+deploy")
    follow(browser, By.PARTIAL_LINK_TEXT, "We always run the migrations")
    relation = browser.find_element(By.CSS_SELECTOR, "ul.related li").text
    assert relation.startswith("Contradicted by We never run the migrations"), relation
    assert "(said later; weight" in relation, relation
    follow(browser, By.PARTIAL_LINK_TEXT, "We never run the migrations")
    relation = browser.find_element(By.CSS_SELECTOR, "ul.related li").text
    assert relation.startswith("Contradicts We always run") and "(said earlier;" in relation

    # another project's result: its Why names the project, not its scope id
    browser.get(f"{base}/recall?q=step+59+of+the+migration")
    row = browser.find_element(By.CSS_SELECTOR, "ol.results > li")
    row.find_element(By.TAG_NAME, "summary").click()
    why = row.find_element(By.CSS_SELECTOR, "dl.factors").text.replace("\n", "")
    assert f"another scope ({LONG_PATH})" in why and "(path:" not in why, why

    browser.get(f"{base}/sessions/{LONG_SESSION}?from=120&to=120")
    browser.find_element(By.LINK_TEXT, "the whole session").click()
    loaded(browser)
    assert browser.current_url.endswith("?page=2#m120"), browser.current_url
    assert browser.execute_script("return document.querySelector(':target').id") == "m120"
    assert "step 59 of the migration" in browser.find_element(By.ID, "m119").text
    assert "Earlier" in browser.find_element(By.CSS_SELECTOR, "p.pager").text  # at its foot
    # marked messages more than a page holds (a digest's: every one) come a page at a time
    browser.get(f"{base}/sessions/{LONG_SESSION}?from=1&to=130")
    assert len(browser.find_elements(By.CSS_SELECTOR, "li.marked")) == 100
    follow(browser.find_element(By.CSS_SELECTOR, "p.pager"), By.LINK_TEXT, "Later", browser)
    assert len(browser.find_elements(By.CSS_SELECTOR, "li.marked")) == 30
    browser.get(f"{base}/memories?project=no-such-project")  # a stale link: said, not empty
    assert "no project or scope is named 'no-such-project'" in text_of(browser)

    browser.set_window_size(NARROW, 800)
    browser.get(f"{base}/projects")
    assert LONG_PATH in text_of(browser).replace("\n", "") and sideways(browser) == 0
    # the project's own pages, headed by its path, wrap it too
    browser.find_element(By.XPATH, "//a[@class='name'][contains(., 'averyverylong')]").click()
    assert browser.title.startswith("Timeline of") and sideways(browser) == 0
    browser.find_element(By.LINK_TEXT, "its graph").click()
    assert browser.title.startswith("Graph of") and sideways(browser) == 0


@pytest.fixture
def projects_graph(make_ctx: Any) -> Iterator[str]:
    """Three projects whose memories name Git and GitHub, and a fourth, "orders", whose
    own memory names Alice and Acme: `memctl ui` serving them."""
    ctx = make_ctx()
    for project in ("shop", "blog", "wiki", "orders"):
        for n in range(3):
            text = f"The {project} code {n} is kept in Git and reviewed on GitHub."
            memory_api.remember(ctx, RememberRequest(text, scope=project))
    memory_api.remember(ctx, RememberRequest("Alice works at Acme.", scope="orders"))
    ctx.close()
    yield from serving()


def test_a_projects_graph_shows_its_own_entities_and_relations_first(
    projects_graph: str, browser: Any
) -> None:
    """The graph page listed every project's most mentioned names (Git, GitHub) and no
    relation; a project's timeline now leads to its graph: its own entities and their
    relations first, the names most projects name after, each link keeping the project."""
    base = projects_graph.split("/login", 1)[0]
    browser.get(projects_graph)
    browser.get(f"{base}/timeline?project=orders")
    browser.find_element(By.LINK_TEXT, "its graph").click()
    assert browser.title.startswith("Graph of orders")
    own = browser.find_element(By.CSS_SELECTOR, "main > ul").text.splitlines()
    assert sorted(own) == ["Acme organisation", "Alice person"], own
    shared = browser.find_element(By.XPATH, "//h2[text()='Named by most projects']")
    assert "Git" in shared.find_element(By.XPATH, "following-sibling::ul[1]").text
    relations = browser.find_element(By.XPATH, "//h2[text()='Its relations']")
    assert "Alice → works at → Acme" in relations.find_element(By.XPATH, "following::ul").text
    browser.find_element(By.LINK_TEXT, "Acme").click()
    assert browser.title.startswith("Graph of orders: Acme")
    assert browser.current_url.endswith("project=orders")
    browser.set_window_size(NARROW, 800)
    assert sideways(browser) == 0
