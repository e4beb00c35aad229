"""How long the session-end hook waits: the whole `memctl ingest` process, and the slow path.

    .venv/bin/python benchmarks/ingest_speed.py [--runs 15]

Times, as wall-clock of the real process (Python start-up included) from a
store that already holds sessions, as a hook meets it:

- `memctl ingest` of a 200-message Claude Code transcript (a new session each
  run), detached worker started; each run waits for its worker to finish
  before the next starts, so workers do not compete with the timing;
- the same into a fresh, empty data directory (the database is created);
- a 2,000-message transcript, and a 50 MB one (big tool results), with the
  peak memory of the process;
- the slow path the worker ran for a 200-message session (rules, no LLM, the
  local MiniLM embedder), from the run's start and finish times.

The package is byte-compiled first and Python may write bytecode, as an
installed memctl would (PYTHONDONTWRITEBYTECODE is removed for the runs).
Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.transcripts import claude_code_lines  # noqa: E402  (needs the path above)
from memctl.model import parse_time  # noqa: E402
from memctl.store.database import Database  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["MEMCTL_LLM"] = "none"


def write(path: Path, lines: object) -> Path:
    with path.open("w") as out:
        for line in lines:  # type: ignore[attr-defined]
            out.write(line + "\n")
    return path


def ingest(home: Path, transcript: Path) -> tuple[float, int | None]:
    """Seconds the process took, and its worker's pid."""
    began = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memctl",
            "--home",
            str(home),
            "ingest",
            "--json",
            "--transcript",
            str(transcript),
            "--client",
            "claude-code",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    elapsed = time.perf_counter() - began
    import json

    return elapsed, json.loads(done.stdout).get("worker_pid")


def wait_for_worker(home: Path, pid: int | None) -> None:
    """Until the queue is empty and the worker process gone."""
    db = Database.open(home / "memctl.db")
    try:
        while db.value("SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')"):
            time.sleep(0.05)
    finally:
        db.close()
    while pid and Path(f"/proc/{pid}").exists():
        with open(f"/proc/{pid}/stat") as stat:
            if stat.read().split(") ")[1].startswith("Z"):
                break
        time.sleep(0.02)


# Runs the CLI as `python -m memctl` does, then reports the process's own peak memory
# (VmHWM: ru_maxrss would include the benchmark's own size, carried across fork and exec).
PEAK_PROBE = (
    "import runpy, sys\n"
    "sys.argv = ['memctl', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('memctl', run_name='__main__')\n"
    "finally:\n"
    "    hwm = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
    "    print('PEAK', int(hwm) // 1024, file=sys.stderr)\n"
)


def peak_ingest(home: Path, transcript: Path) -> tuple[float, int]:
    """(seconds, peak RSS in MiB) of one ingest process, no worker started."""
    began = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK_PROBE,
            "--home",
            str(home),
            "-c",
            "ingest.spawn_worker=false",
            "ingest",
            "--transcript",
            str(transcript),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    elapsed = time.perf_counter() - began
    return elapsed, int(done.stderr.rpartition("PEAK ")[2].split()[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    compileall.compile_dir(str(ROOT / "memctl"), quiet=1)
    work = Path(tempfile.mkdtemp(prefix="memctl-ingest-bench-"))
    home = work / "home"

    timings, slow = [], []
    for n in range(runs + 1):
        transcript = write(work / f"t{n}.jsonl", claude_code_lines(200, session=f"session-{n}"))
        elapsed, pid = ingest(home, transcript)
        wait_for_worker(home, pid)
        if n:  # the first run creates the store and loads cold files: shown apart below
            timings.append(elapsed * 1000)
    db = Database.open(home / "memctl.db")
    for row in db.rows("SELECT started_at, finished_at FROM runs WHERE status = 'done'"):
        slow.append(
            (parse_time(row["finished_at"]) - parse_time(row["started_at"])).total_seconds()
        )
    db.close()
    timings.sort()
    baseline = []
    for _ in range(10):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=ENV, check=True)
        baseline.append((time.perf_counter() - began) * 1000)
    print(f"python start-up alone (-c pass): median {statistics.median(baseline):.0f} ms")
    print(
        f"memctl ingest, 200 messages, existing store: median {statistics.median(timings):.0f} ms, "
        f"p90 {timings[int(len(timings) * 0.9) - 1]:.0f} ms, min {timings[0]:.0f} ms ({runs} runs)"
    )
    fresh = []
    for n in range(5):
        elapsed, pid = ingest(work / f"fresh-{n}", work / "t1.jsonl")
        wait_for_worker(work / f"fresh-{n}", pid)
        fresh.append(elapsed * 1000)
    print(
        "memctl ingest, 200 messages, fresh data directory: "
        f"median {statistics.median(fresh):.0f} ms"
    )
    print(
        f"slow path (worker run, rules + local MiniLM), 200-message session: median "
        f"{statistics.median(slow) * 1000:.0f} ms"
    )

    big = write(work / "big.jsonl", claude_code_lines(2000, session="big"))
    elapsed, peak = peak_ingest(home, big)
    print(f"memctl ingest, 2,000 messages: {elapsed * 1000:.0f} ms, peak RSS {peak} MiB")
    huge = write(work / "huge.jsonl", claude_code_lines(1000, session="huge", filler=100_000))
    size = huge.stat().st_size / 1e6
    elapsed, peak = peak_ingest(home, huge)
    print(f"memctl ingest, {size:.0f} MB transcript: {elapsed * 1000:.0f} ms, peak RSS {peak} MiB")


if __name__ == "__main__":
    main()
