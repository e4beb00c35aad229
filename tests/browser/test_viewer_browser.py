"""memctl ui in a real browser: `memctl ui` started as a process on a free port, driven by
Debian's headless chromium through its chromedriver (scripts/install-browser installs them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_cli

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
WAIT_SECONDS = 10  # for the browser to load a page (the driver waits this long at most)


@pytest.fixture
def viewer(home: Path) -> Iterator[str]:
    """A store with memories, and `memctl ui` serving it: its sign-in URL."""
    for text in ("The staging database is PostgreSQL 16", "Releases are cut on Mondays", HOSTILE):
        assert run_cli("remember", text).returncode == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "memctl", "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MEMCTL_EMBEDDER": "hash"},
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("memctl ui: open http://127.0.0.1:"), process.stderr
        yield first.split("open ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'chromium'}",
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


def text_of(driver: Any) -> str:
    return str(driver.find_element(By.TAG_NAME, "body").text)


def said_on(driver: Any) -> str:
    """What the page a change led to says happened (waiting for that page to load)."""
    return str(driver.find_element(By.CSS_SELECTOR, "p.said").text)


def test_sign_in_search_forget_and_undo_in_a_browser(viewer: str, browser: Any) -> None:
    base = viewer.split("/login", 1)[0]
    browser.get(f"{base}/projects")
    assert "sign in with the link" in text_of(browser)  # nothing without the link
    browser.get(viewer)
    assert browser.current_url == f"{base}/projects"
    assert "Projects" in browser.title and "(here)" in text_of(browser)

    search = browser.find_element(By.ID, "q")
    search.send_keys("staging database PostgreSQL")
    search.submit()
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
