"""The detached worker: ``python -m memctl.maintain.worker`` captures the transcripts hooks
left pending (``memctl.ingest.pending``), drains the job queue and exits.

``memctl ingest`` starts it with ``spawn`` in its own process session (so a
hook's end, or a closed terminal, does not stop it), with standard input
from /dev/null and its output appended to ``$MEMCTL_HOME/logs/worker.log``; it runs
at a lower CPU priority (``NICENESS``).
The log holds ids, counts and scrubbed errors, never message text.
"""

from __future__ import annotations

import argparse
import os
import sys

from memctl.config import settings_from_flags
from memctl.context import Context
from memctl.ingest.pending import Chunked, capture_grown
from memctl.maintain.claims import worker_name
from memctl.maintain.queue import drain
from memctl.maintain.spawn import NICENESS
from memctl.memories.privacy import safe_line
from memctl.model import now_iso


def _log(line: str) -> None:
    print(f"{now_iso()} {line}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memctl.maintain.worker")
    parser.add_argument("--home", help="the data directory")
    parser.add_argument("--config", "-c", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    name = worker_name("worker")
    niceness = os.nice(NICENESS)
    try:
        settings = settings_from_flags(args.home, args.config)
        with Context(settings) as ctx:
            for entry, done in capture_grown(ctx, _log):  # hooks left them (too big, killed)
                if isinstance(done, Chunked):
                    _log(f"captured {safe_line(entry.path)}: {done.messages_new} new messages")
            report = drain(ctx, name, _log)
    except Exception as error:
        _log(f"worker {name} stopped: {safe_line(f'{type(error).__name__}: {error}')}")
        return 1
    counts = f"{len(report.done)} jobs done, {len(report.failed)} failed"
    _log(f"worker {name}: {counts} (nice {niceness})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
