"""`memctl ui` page loads in a real browser: `memctl ui` started on a copy of a store, each
page opened in Debian's headless chromium, timed by the browser's own navigation timing.

    .venv/bin/python benchmarks/ui_browser_speed.py --home /tmp/fold-stores/dev \
        [--repeat 5] [--width 1280] [--hash]

What a person waits for, where ``benchmarks/ui_speed.py`` times the server alone: the
request and response (``response``: navigation start to the last byte), then parsing,
the stylesheet and layout (``load``: to the load event). Pages: projects, sessions,
memories, the newest session and memory, their source passages, the largest session and
its digest's source, a recall, runs, profile, graph, health. The store is copied first
(recall and the pages write nothing, but the viewer opens it read-write). ``--hash``
serves with the hash embedder (a generated store's vectors); otherwise the store's own
model. Prints p50 of each in ms and the page's size; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
QUESTION = "how do we run the tests?"
# navigation timing, ms from the navigation's start: the last byte, the load event's end
TIMING = (
    "const t = performance.getEntriesByType('navigation')[0];"
    "return [t.responseEnd - t.startTime, t.loadEventEnd - t.startTime, t.transferSize,"
    " t.decodedBodySize];"
)


def pages(home: Path, hashed: bool) -> dict[str, str]:
    """Each page's path on this store: the newest session and memory, the largest session."""
    from urllib.parse import quote

    from memctl.api import memory as memory_api
    from memctl.api import sessions as sessions_api
    from memctl.api.memory import ListRequest

    overrides = {"embedder": "hash"} if hashed else {}
    with Context(load_settings(home=home, overrides=overrides)) as ctx:
        newest = sessions_api.list_sessions(ctx, sessions_api.Where(None, all_scopes=True), 200)
        biggest = max(newest, key=lambda s: s.message_count)
        memory = memory_api.list_memories(ctx, ListRequest(limit=1))[0]
    session, big = quote(newest[0].id), quote(biggest.id)
    return {
        "projects": "/projects",
        "sessions": "/sessions",
        "memories": "/memories",
        "a session": f"/sessions/{session}",
        "a memory": f"/memories/{memory.id}",
        f"largest session ({biggest.message_count})": f"/sessions/{big}",
        "its whole source": f"/sessions/{big}?from=1&to={biggest.message_count}",
        "recall": f"/recall?q={quote(QUESTION)}",
        "recall, 50 rows": f"/recall?q={quote(QUESTION)}&n=50",
        "runs": "/runs",
        "profile": "/profile",
        "graph": "/graph",
        "health": "/health",
    }


def browser(width: int) -> Any:
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", f"--window-size={width},900"):
        options.add_argument(flag)
    return webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a memctl data directory")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--hash", action="store_true", help="serve with the hash embedder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(args.home, home)
        paths = pages(home, args.hash)
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
        if args.hash:
            env["MEMCTL_EMBEDDER"] = "hash"
        command = [sys.executable, "-m", "memctl", "--home", str(home), "ui", "--port", "0"]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
        driver = browser(args.width)
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split("open ", 1)[1].strip()
            base = url.split("/login", 1)[0]
            driver.get(url)
            print(f"{'page':<28}{'response':>10}{'load':>8}{'kB':>8}")
            for label, path in paths.items():
                timed = []
                for _ in range(args.repeat):
                    driver.get(base + path)
                    timed.append(driver.execute_script(TIMING))
                response = statistics.median(t[0] for t in timed)
                load = statistics.median(t[1] for t in timed)
                print(f"{label:<28}{response:>10.0f}{load:>8.0f}{timed[-1][3] / 1000:>8.0f}")
        finally:
            driver.quit()
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
