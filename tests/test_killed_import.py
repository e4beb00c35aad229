"""Issue 34, item 8: a JSONL import killed midway (kill -9) stayed `running` in `memctl
runs` for ever, and one stopped with Ctrl-C printed nothing. Listing the runs marks one
whose process is gone failed, as the next ingest or maintain would; importing the file
again then finishes it with no duplicates. A real `memctl import` process, signalled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memctl.context import Context
from memctl.store.runs import list_runs
from tests.conftest import run_cli

# long enough to be stopped midway (the wait below sees its run within a poll of 0.05 s;
# the import takes seconds), short enough for the suite: it is imported again in full
FACTS = 5_000
# How long the test waits for the import to start writing (a bound, not a measure).
START_BOUND_SECONDS = 60


def _import_runs() -> list[dict[str, object]]:
    return json.loads(run_cli("runs", "--json", "--kind", "import").stdout)


def _big(tmp_path: Path) -> Path:
    big = tmp_path / "big.jsonl"
    big.write_text(
        "".join(
            json.dumps({"content": f"Fact {n}: host h{n} serves shard {n % 97}."}) + "\n"
            for n in range(FACTS)
        )
    )
    return big


def _running(ctx: Context) -> bool:
    """Whether an import run is written as running (read in this process: a `memctl runs`
    process a poll would cost more CPU than the import it waits for)."""
    return any(r.status == "running" for r in list_runs(ctx.db, 20, "import", batch_heads=True))


def _started_import(big: Path, ctx: Context) -> subprocess.Popen[str]:
    """``memctl import BIG`` as a real process, once its run is written."""
    child = subprocess.Popen(
        [sys.executable, "-m", "memctl", "import", str(big)],
        env={**os.environ, "MEMCTL_EMBEDDER": "hash"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as at a terminal: a job started in the background of a script (as CI may
        # run the suite) inherits SIGINT ignored, and Python then never raises it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + START_BOUND_SECONDS
    while not _running(ctx):
        assert child.poll() is None, "the import ended before it could be stopped"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return child


def test_an_import_stopped_with_ctrl_c_says_so(ctx: Context, tmp_path: Path) -> None:
    child = _started_import(_big(tmp_path), ctx)
    child.send_signal(signal.SIGINT)
    _, said = child.communicate()
    assert child.returncode == 130
    assert said.strip().splitlines()[-1] == "memctl: interrupted"
    assert said.count("interrupted") == 1  # one line, from one place
    (stopped,) = _import_runs()
    assert stopped["status"] != "running"


def test_an_import_killed_midway_is_not_left_running(ctx: Context, tmp_path: Path) -> None:
    big = _big(tmp_path)
    child = _started_import(big, ctx)
    child.send_signal(signal.SIGKILL)
    child.communicate()
    (killed,) = _import_runs()
    assert killed["status"] == "failed"
    shown = run_cli("runs")
    assert "running" not in shown.stdout and "failed" in shown.stdout
    again = run_cli("import", str(big), timeout=600)
    assert again.returncode == 0, again.stderr
    stats = json.loads(run_cli("status", "--json").stdout)
    assert stats["total"] == FACTS
