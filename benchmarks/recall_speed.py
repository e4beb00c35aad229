"""Recall speed on N realistic synthetic memories.

    .venv/bin/python benchmarks/recall_speed.py --n 100000 [--cache DIR] [--repeat 5]

The store (benchmarks/bench_store.py) is built once with the real local
embedder and cached under --cache (default /tmp/memctl-bench-cache/N): building
100,000 memories takes minutes. Each run copies it into a fresh home, then
prints:

- the vector index: its first build from SQLite, the catch-up after one new
  memory and after one changed vector, and how many of sqlite-vec's exact
  nearest neighbours its vector leg finds;
- each part of one recall alone: query embedding, the vector leg (numpy over
  the index, and sqlite-vec's vec0 KNN for comparison), the BM25 leg;
- in-process recall p50/p95 (query embedding included, touch off, every scope),
  over the benchmark queries, --repeat times each, wall clock and CPU time, and
  how many cores other processes kept busy meanwhile (Linux);
- the whole `memctl recall` process (touching what it recalls), median and p95.

Nothing is asserted. Wall-clock times depend on what else the machine runs; the CPU
times (all threads of the process) show the work itself.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

# One query at a time, as `memctl recall` runs it: single-threaded BLAS (cli/recall.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import build_info, cached_store, fresh_home  # noqa: E402

from benchmarks.synthetic import QUERIES  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.memories import operations as memories  # noqa: E402
from memctl.retrieve.query import analyse  # noqa: E402
from memctl.store.memories import MemoryFilter, fts_rank, vector_search  # noqa: E402
from memctl.store.vector_index import vector_index  # noqa: E402
from memctl.store.vector_query import Scores, nearest  # noqa: E402

WHERE = MemoryFilter(states=("active", "superseded", "contradicted"))
NOW = datetime.now(UTC)
# More questions in the style of the synthetic memories, for the recall check only.
EXTRA_QUERIES = [
    "who is on call for payments this week",
    "postgres backups retention",
    "why was checkout slow",
    "Priya's preferences about pull requests",
    "kafka consumer lag incident",
    "terraform state locking",
    "how to rotate the vault token",
    "which team owns reporting",
    "grafana dashboard for gateway latency",
    "sentry alerts for the mailer",
]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


def timed(work: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        samples.append(time.perf_counter() - began)
    return samples


def index_figures(ctx: Context) -> None:
    began = time.perf_counter()
    index = vector_index(ctx.db)
    print(f"vector index, first build from SQLite: {ms(time.perf_counter() - began)}")
    memories.remember(ctx, "a new memory after the index was built", scope="global")
    began = time.perf_counter()
    vector_index(ctx.db)
    print(f"vector index, append one memory: {ms(time.perf_counter() - began)}")
    newest = memories.list_memories(ctx, MemoryFilter(), 1)[0]
    memories.update(ctx, newest.id, content="the same memory, changed")
    began = time.perf_counter()
    index = vector_index(ctx.db)
    print(f"vector index, patch after one changed vector: {ms(time.perf_counter() - began)}")
    found, wanted = 0, 0
    for query in QUERIES + EXTRA_QUERIES:
        vector = ctx.embedder.embed([query])[0]
        ours = nearest(index, Scores(index, vector), 30, WHERE)
        theirs = vector_search(ctx.db, vector.tobytes(), 30, WHERE)
        cut = theirs[-1][1] + 1e-6  # ties at the cut may come in any order
        found += sum(d <= cut for _, d in ours)
        wanted += len(theirs)
    exact = "exact product" if Scores(index, vector).exact else "sign-bit prefilter + rescoring"
    print(
        f"vector leg ({exact}) vs sqlite-vec's exact top 30: recall {found / wanted:.4f} "
        f"over {len(QUERIES) + len(EXTRA_QUERIES)} queries"
    )


def part_figures(ctx: Context, repeat: int) -> None:
    index = vector_index(ctx.db)
    embed = [t for q in QUERIES for t in timed(lambda q=q: ctx.embedder.embed([q]), repeat)]
    vectors = [ctx.embedder.embed([q])[0] for q in QUERIES]
    numpy_leg = [
        t
        for v in vectors
        for t in timed(lambda v=v: nearest(index, Scores(index, v), 30, WHERE), repeat)
    ]
    vec0_leg = [
        t
        for v in vectors[:3]
        for t in timed(lambda v=v: vector_search(ctx.db, v.tobytes(), 30, WHERE), 2)
    ]
    bm25_leg = [
        t
        for q in QUERIES
        for t in timed(
            lambda q=q: fts_rank(ctx.db, analyse(q, NOW).alternatives, 30, WHERE), repeat
        )
    ]
    for name, samples in (
        ("query embedding", embed),
        ("vector leg, numpy index", numpy_leg),
        ("vector leg, sqlite-vec vec0 (old)", vec0_leg),
        ("BM25 leg", bm25_leg),
    ):
        p50, p95 = percentiles(samples)
        print(f"{name}: p50 {ms(p50)}, p95 {ms(p95)}")


def busy_ticks() -> tuple[int, int] | None:
    """(busy, all) clock ticks of every CPU since boot, from /proc/stat; None elsewhere."""
    try:
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)  # idle and iowait are not busy


def others_load(before: tuple[int, int] | None, own_cpu: float) -> str:
    """How many cores other processes kept busy since ``before`` (this process used
    ``own_cpu`` seconds meanwhile): the wall times depend on it."""
    after = busy_ticks()
    if before is None or after is None or after[1] == before[1]:
        return ""
    cores = os.cpu_count() or 1
    own = own_cpu * os.sysconf("SC_CLK_TCK")
    others = cores * max(0.0, after[0] - before[0] - own) / (after[1] - before[1])
    return f"; meanwhile other processes kept {others:.1f} of {cores} cores busy"


def recall_figures(ctx: Context, repeat: int) -> None:
    from memctl.retrieve.pipeline import recall

    recall(ctx, "warm up", touch=False)
    wall, cpu = [], []
    ticks, own = busy_ticks(), time.process_time()
    for _ in range(repeat):
        for query in QUERIES:
            began, began_cpu = time.perf_counter(), time.process_time()
            recall(ctx, query, touch=False)
            wall.append(time.perf_counter() - began)
            cpu.append(time.process_time() - began_cpu)
    load = others_load(ticks, time.process_time() - own)
    p50, p95 = percentiles(wall)
    cpu50, cpu95 = percentiles(cpu)
    print(
        f"in-process recall: p50 {ms(p50)}, p95 {ms(p95)}; CPU time p50 {ms(cpu50)}, "
        f"p95 {ms(cpu95)} ({len(wall)} recalls){load}"
    )


def process_figures(home: Path, runs: int) -> None:
    # Byte-compiled, as `pip install` leaves memctl (this environment may set
    # PYTHONDONTWRITEBYTECODE, and compiling every module each run costs ~50 ms).
    compileall.compile_dir(Path(memories.__file__).parent, quiet=1)
    # each recall loads everything itself (process_speed.py times the resident process)
    env = {**os.environ, "MEMCTL_HOME": str(home), "MEMCTL_RECALL_RESIDENT": "off"}
    print(process_line(env, runs))


def process_line(env: dict[str, str], runs: int, extra: tuple[str, ...] = ()) -> str:
    """``runs`` whole `memctl recall --all-scopes [extra] QUERY` processes in ``env``: the
    median and p95 wall time and the median CPU time, as one line."""
    wall, cpu = [], []
    for i in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "memctl", "recall", "--all-scopes", *extra]
            + [QUERIES[i % len(QUERIES)]],
            check=True,
            capture_output=True,
            env=env,
        )
        wall.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    p50, p95 = percentiles(wall)
    command = " ".join(("memctl recall", *extra))
    return (
        f"whole `{command}` process: median {ms(p50)}, p95 {ms(p95)}; "
        f"CPU time median {ms(statistics.median(cpu))} ({runs} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--processes", type=int, default=20)
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.gettempdir()) / "memctl-bench-cache" / str(args.n)
    database = cached_store(args.n, cache)
    info = build_info(cache)
    rate = "resumed build" if info.get("resumed") else f"{args.n / info['seconds']:.0f} memories/s"
    print(
        f"memories: {args.n:,} ({rate}), {info['relations']:,} relations; "
        f"database {database.stat().st_size / 2**20:.0f} MiB"
    )
    home = fresh_home(args.n, cache, Path(tempfile.mkdtemp(prefix="memctl-bench-")))
    ctx = Context(load_settings(home=home))
    try:
        index_figures(ctx)
        part_figures(ctx, args.repeat)
        recall_figures(ctx, args.repeat)
    finally:
        ctx.close()
    process_figures(home, args.processes)
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
