"""Screenshots of every page of `memctl ui`, for the docs: docs/ui/PAGE.png.

    .venv/bin/python scripts/screenshots.py [--out docs/ui]

A store of its own in a temporary home (the example memories, one captured session
distilled by the rules, maintain's graph and profile of them), `memctl ui` on a free
port, and Debian's headless chromium (scripts/install-browser) driven through its
chromedriver with Selenium.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1200, 800)
LOAD_SECONDS = 10  # for a page and its stylesheet to load (the driver waits this long at most)
PROJECT = "tidepool"  # the project directory, in the work directory (HOME there)
SESSION = "5f0c2d7e-0000-4000-8000-000000000001"
# A short Claude Code session: what the viewer's session and memory pages show.
TURNS = [
    ("user", "How do we deploy the billing service? I always forget the order."),
    ("assistant", "Run `make release` from main; staging smoke tests must pass first."),
    ("user", "Remember that we never deploy on Fridays."),
    ("assistant", "Noted: no deploys on Fridays."),
]


def environment(work: Path) -> dict[str, str]:
    """The store's home and HOME in the work directory: the project shows as
    ``~/tidepool``, not as a temporary path. The default embedder, as a user has it: the
    recall page's labels and order are those the real model gives."""
    env = {**os.environ, "MEMCTL_HOME": str(work / "memctl"), "HOME": str(work)}
    env.pop("MEMCTL_EMBEDDER", None)
    return env


def memctl(work: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memctl", *args],
        capture_output=True,
        text=True,
        env=environment(work),
        cwd=work / PROJECT,
    )
    if done.returncode != 0:
        raise SystemExit(f"memctl {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def fill(work: Path) -> None:
    (work / PROJECT).mkdir()
    memctl(work, "import", str(ROOT / "examples" / "memories.jsonl"))
    lines = [
        {
            "type": role,
            "sessionId": SESSION,
            "cwd": str(work / PROJECT),
            "timestamp": f"2026-11-02T09:{n:02d}:00Z",
            "message": {"role": role, "content": text},
        }
        for n, (role, text) in enumerate(TURNS)
    ]
    transcript = work / "session.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    memctl(work, "ingest", "--transcript", str(transcript), "--client", "claude-code", "--wait")
    memctl(work, "maintain", "--only", "graph,profile")  # what the graph and profile pages show


def shoot(out: Path) -> list[Path]:
    """Every page's screenshot under ``out``; the files written."""
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp).resolve()
        fill(work)
        server = subprocess.Popen(
            [sys.executable, "-m", "memctl", "ui", "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
            env=environment(work),
            cwd=work / PROJECT,
        )
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            f"--user-data-dir={work / 'chromium'}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
        ):
            options.add_argument(flag)
        driver = webdriver.Chrome(
            service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options
        )
        written = []
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split("open ", 1)[1].strip()
            base = url.split("/login", 1)[0]
            driver.get(url)
            memory = json.loads(memctl(work, "list", "--json", "--state", "active"))
            distilled = next(m for m in memory if m["source"].startswith("session:"))
            listed = json.loads(memctl(work, "projects", "--json"))
            scope = next(p["scope"] for p in listed if p["path"].endswith(PROJECT))
            pages = {
                "projects": "/projects",
                "timeline": f"/timeline?project={quote(scope, safe='')}",
                "sessions": "/sessions",
                "session": f"/sessions/{SESSION}",
                "memories": "/memories",
                "memory": f"/memories/{distilled['id']}",
                "recall": "/recall?q=how+do+we+deploy",
                "profile": "/profile",
                "graph": "/graph",
                "runs": "/runs",
                "health": "/health",
                "forget-session": f"/sessions/{SESSION}/forget",
            }
            for name, path in pages.items():
                driver.get(base + path)
                # chromedriver can return while the page is "interactive", unstyled
                WebDriverWait(driver, LOAD_SECONDS).until(
                    lambda d: d.execute_script("return document.readyState") == "complete"
                )
                driver.find_element(By.TAG_NAME, "h1")
                target = out / f"{name}.png"
                driver.save_screenshot(str(target))
                written.append(target)
        finally:
            driver.quit()
            server.terminate()
            server.wait(timeout=30)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "ui")
    args = parser.parse_args()
    for path in shoot(args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
