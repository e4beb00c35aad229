"""The knowledge graph's cost at N memories: maintain's graph and profile tasks, and
recall with the graph stage on and off (issue 38).

    .venv/bin/python benchmarks/graph_speed.py --n 100000 [--cache DIR] [--repeat 3]

The store is maintain_speed.py's (benchmarks/bench_store.py records with
``WordEmbedder`` vectors, built once and cached under --cache, default
/tmp/memctl-bench-cache/maintain-N), copied into a fresh home. Printed, CPU seconds
(``time.process_time``): ``maintain``'s graph task reading every memory (its first
run) and again (nothing new), the profile task; then in-process recall p50/p95 over
the benchmark queries (wall and CPU, touch off) with the stage on (the
defaults) and off (``recall.graph_share`` 0), alternating, ``--repeat`` times each;
every scope's memories, or with ``--project`` the project's and the global ones (as
``memctl recall`` in the project: the graph stage then reads only their edges).
The query's vector is ``WordEmbedder``'s, not MiniLM's: add MiniLM's query
embedding (benchmarks/recall_speed.py prints it) for a user's figure. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_store import PROJECT  # noqa: E402
from benchmarks.maintain_speed import WordEmbedder, build  # noqa: E402
from benchmarks.recall_speed import EXTRA_QUERIES  # noqa: E402
from benchmarks.synthetic import QUERIES  # noqa: E402
from memctl.api.maintain import MaintainRequest, maintain  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.config.scope import GLOBAL_SCOPE  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.retrieve.pipeline import recall  # noqa: E402
from memctl.store.graph import graph_counts  # noqa: E402

OFF = {"recall.graph_share": 0.0}


def _task(ctx: Context, name: str) -> float:
    began = time.process_time()
    maintain(ctx, MaintainRequest(only=name))
    return time.process_time() - began


def _recalls(
    home: Path,
    overrides: dict[str, object],
    queries: list[str],
    scopes: tuple[str, ...] | None = None,
) -> list[tuple[float, float]]:
    settings = load_settings(home=home, overrides={"llm": "none", **overrides})
    with Context(settings, embedder=WordEmbedder()) as ctx:
        recall(ctx, queries[0], scopes=scopes, touch=False)  # warm: index and caches
        times = []
        for query in queries:
            wall, cpu = time.perf_counter(), time.process_time()
            recall(ctx, query, scopes=scopes, touch=False)
            times.append((time.perf_counter() - wall, time.process_time() - cpu))
    return times


def _line(label: str, times: list[tuple[float, float]]) -> str:
    walls = sorted(1000 * w for w, _ in times)
    cpus = sorted(1000 * c for _, c in times)
    p95 = max(0, int(len(walls) * 0.95) - 1)
    return (
        f"{label}: wall p50 {statistics.median(walls):.1f} ms, p95 {walls[p95]:.1f} ms; "
        f"CPU p50 {statistics.median(cpus):.1f} ms ({len(times)} recalls)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--project", action="store_true", help="recall in the project")
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.gettempdir()) / "memctl-bench-cache" / f"maintain-{args.n}"
    database = build(args.n, cache)
    with tempfile.TemporaryDirectory() as work:
        home = Path(work)
        shutil.copy(database, home / "memctl.db")
        settings = load_settings(home=home, overrides={"llm": "none"})
        with Context(settings, embedder=WordEmbedder()) as ctx:
            first, again = _task(ctx, "graph"), _task(ctx, "graph")
            profile = _task(ctx, "profile")
            counts = graph_counts(ctx.db)
        print(f"{args.n:,} memories: {counts}")
        print(f"graph task: first {first:.2f} s CPU, again {again:.2f} s CPU")
        print(f"profile task: {profile:.2f} s CPU")
        queries = QUERIES + EXTRA_QUERIES
        scopes = (PROJECT, GLOBAL_SCOPE) if args.project else None
        on: list[tuple[float, float]] = []
        off: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            on += _recalls(home, {}, queries, scopes)
            off += _recalls(home, OFF, queries, scopes)
        print(_line("recall, graph stage on ", on))
        print(_line("recall, graph stage off", off))
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
