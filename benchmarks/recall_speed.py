"""Recall speed of the current pipeline on N synthetic memories.

    .venv/bin/python benchmarks/recall_speed.py [N]

Builds a fresh store of N realistic synthetic memories with the real local
embedder (insert rate is measured), then times in-process recall (query
embedding included) over the benchmark queries, and a whole `memctl recall`
process. Prints the figures; nothing is asserted.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memctl.bench.synthetic import QUERIES, synthetic_memories
from memctl.config import load_settings
from memctl.context import Context
from memctl.exchange import import_lines


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    home = Path(tempfile.mkdtemp(prefix="memctl-bench-"))
    ctx = Context(load_settings(home=home))
    lines = (
        (i, json.dumps({"content": text, "scope": "global"}))
        for i, text in enumerate(synthetic_memories(count), start=1)
    )
    start = time.perf_counter()
    import_lines(ctx, lines)
    elapsed = time.perf_counter() - start
    print(f"memories: {count}; insert (embed + write): {count / elapsed:.0f} memories/s")
    size = sum(p.stat().st_size for p in home.glob("memctl.db*"))
    print(f"database size: {size / 2**20:.1f} MiB")

    from memctl.retrieve.pipeline import recall

    recall(ctx, "warm up the model")
    timings = []
    for _ in range(5):
        for query in QUERIES:
            began = time.perf_counter()
            recall(ctx, query, scopes=None)
            timings.append((time.perf_counter() - began) * 1000)
    timings.sort()
    p95 = timings[int(len(timings) * 0.95) - 1]
    print(
        f"in-process recall: p50 {statistics.median(timings):.1f} ms, p95 {p95:.1f} ms "
        f"({len(timings)} queries)"
    )
    ctx.close()

    runs = []
    for query in QUERIES[:5]:
        began = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "memctl",
                "--home",
                str(home),
                "recall",
                "--all-scopes",
                "--json",
                query,
            ],
            check=True,
            capture_output=True,
            env={**os.environ, "MEMCTL_HOME": str(home)},
        )
        runs.append((time.perf_counter() - began) * 1000)
    print(f"whole `memctl recall` process: median {statistics.median(runs):.0f} ms")


if __name__ == "__main__":
    main()
