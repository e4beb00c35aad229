"""How fast `memctl ingest --backfill` stores a history of past sessions.

    .venv/bin/python benchmarks/backfill_speed.py [--transcripts 1000] [--messages 100]
        [--filler 3200]

Writes N generated Claude Code transcripts (``--messages`` messages each, a tool
result of ``--filler`` characters after each assistant turn: 1,000 x 100 x 3,200
is about 200 MB) into a temporary HOME's ``~/.claude/projects``, then times the
real `memctl ingest --backfill` process (Python start-up included; distillation
queued, no worker started) into an empty data directory, and a second run that
must add nothing. Prints transcripts and MB a second, and the peak memory of the
process; asserts nothing. Target: 1,000 transcripts / 200 MB in at most 2 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.transcripts import claude_code_lines  # noqa: E402  (needs the path above)

PROJECTS = 20  # folders under ~/.claude/projects the transcripts are spread over


def write_history(home: Path, transcripts: int, messages: int, filler: int) -> int:
    """The transcripts, written; their bytes in all."""
    total = 0
    for n in range(transcripts):
        folder = home / ".claude" / "projects" / f"-work-project-{n % PROJECTS}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"session-{n:05d}.jsonl"
        with path.open("w") as out:
            for line in claude_code_lines(messages, session=f"session-{n:05d}", filler=filler):
                out.write(line + "\n")
        total += path.stat().st_size
    return total


def backfill(home: Path, data: Path) -> tuple[float, dict[str, object]]:
    env = {
        **os.environ,
        "HOME": str(home),
        "MEMCTL_HOME": str(data),
        "MEMCTL_LLM": "none",
        "MEMCTL_INGEST_SPAWN_WORKER": "false",
    }
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CODEX_HOME", None)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memctl", "ingest", "--backfill", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - start, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transcripts", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--filler", type=int, default=3200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, data = Path(tmp) / "home", Path(tmp) / "data"
        size = write_history(home, args.transcripts, args.messages, args.filler)
        seconds, report = backfill(home, data)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        again, second = backfill(home, data)
    mb = size / 1e6
    print(f"history: {args.transcripts} transcripts, {mb:.0f} MB, {report['messages']} messages")
    print(
        f"first run: {seconds:.1f} s = {args.transcripts / seconds:.1f} transcripts/s,"
        f" {mb / seconds:.1f} MB/s; peak memory {peak:.0f} MiB;"
        f" {report['jobs']} jobs queued, {report['failed']} failed"
    )
    print(f"second run: {again:.1f} s, {second['messages']} messages added")


if __name__ == "__main__":
    main()
