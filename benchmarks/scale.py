"""Speed at scale: N realistic synthetic memories, how fast they go in and come back out.

For each N a fresh store is filled with ``synthetic_memories(N)`` (embedded
through the run's cache, written in transactions of WRITE_CHUNK), then
recall is timed in this process (query embedding included) for the real
pipeline and each leg alone, and as whole `memctl recall` processes, whose
peak memory is read from the kernel's accounting of the child.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from benchmarks.embedcache import EmbeddingCache
from benchmarks.haystack import BENCH_SCOPE, BenchStores
from benchmarks.metrics import percentile
from benchmarks.retrievers import BASELINES, Question
from benchmarks.synthetic import QUERIES, synthetic_memories
from memctl.config import Settings
from memctl.context import Context
from memctl.errors import MemctlError
from memctl.model import Category, Kind, Memory

WRITE_CHUNK = 1000


@dataclass
class ScaleRow:
    """The figures for one store size."""

    memories: int
    texts_embedded: int
    embed_per_s: float  # over the texts actually embedded (cache misses)
    write_per_s: float  # embedding excluded
    insert_per_s: float  # embed + write, as if every text were embedded
    db_mib: float
    recall_ms: dict[str, dict[str, float]]  # retriever -> p50 / p95, in-process
    process_ms: dict[str, float]  # whole `memctl recall`: median / max
    process_peak_mib: float
    peak_rss_mib: float  # this process so far (it only grows across sizes)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def synthetic(count: int) -> list[Memory]:
    return [
        Memory(content=text, kind=Kind.SEMANTIC, category=Category.PREFERENCES, scope=BENCH_SCOPE)
        for text in synthetic_memories(count)
    ]


def time_recall(ctx: Context, rounds: int) -> dict[str, dict[str, float]]:
    """p50/p95 milliseconds of every baseline retriever over the benchmark queries."""
    figures = {}
    for name, retriever in BASELINES.items():
        retriever(ctx, Question("warm up"), 10)
        samples = []
        for _ in range(rounds):
            for query in QUERIES:
                began = time.perf_counter()
                retriever(ctx, Question(query), 10)
                samples.append((time.perf_counter() - began) * 1000)
        figures[name] = {"p50": percentile(samples, 50), "p95": percentile(samples, 95)}
    return figures


def memctl_command(settings: Settings) -> list[str]:
    """`memctl` on the bench store, with the run's non-default settings as flags."""
    flags = [
        arg
        for name, value in settings.values.items()
        if settings.sources.get(name, "default") != "default"
        for arg in ("-c", f"{name}={value}")
    ]
    # each process loads everything itself (process_speed.py times the resident process)
    flags += ["-c", "recall.resident=off"]
    return [sys.executable, "-m", "memctl", "--home", str(settings.home), *flags]


def time_processes(settings: Settings, runs: int) -> tuple[dict[str, float], float]:
    """Wall time (median, max) and peak RSS (MiB) of whole `memctl recall` processes."""
    durations, peak = [], 0.0
    for query in (QUERIES[i % len(QUERIES)] for i in range(runs)):
        args = [*memctl_command(settings), "recall", "--all-scopes", "--json", query]
        began = time.perf_counter()
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        durations.append((time.perf_counter() - began) * 1000)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
            raise MemctlError(f"`memctl recall` on the bench store failed: {stderr.strip()}")
        if child.stderr:
            child.stderr.close()
        peak = max(peak, usage.ru_maxrss / 1024)
    return {"median": percentile(durations, 50), "max": max(durations)}, peak


def measure(
    stores: BenchStores, count: int, rounds: int, runs: int, note: Callable[[str], None]
) -> ScaleRow:
    cache = stores.cache
    misses, embed_seconds = cache.misses, cache.embed_seconds
    ctx = stores.new()
    try:
        note(f"{count:,} memories: embedding and writing")
        began = time.perf_counter()
        stores.fill(ctx, synthetic(count), WRITE_CHUNK)
        total = time.perf_counter() - began
        embedded, embedding = cache.misses - misses, cache.embed_seconds - embed_seconds
        write = max(total - embedding, 1e-9)
        embed_rate = embedded / embedding if embedding else 0.0
        size = sum(p.stat().st_size for p in ctx.settings.home.glob("memctl.db*"))
        note(f"{count:,} memories: timing recall")
        recall_ms = time_recall(ctx, rounds)
        ctx.close()  # a whole process must not wait on this one's connection
        process_ms, process_peak = time_processes(ctx.settings, runs)
    finally:
        stores.discard(ctx)
    return ScaleRow(
        memories=count,
        texts_embedded=embedded,
        embed_per_s=round(embed_rate, 1),
        write_per_s=round(count / write, 1),
        insert_per_s=round(1 / (1 / embed_rate + write / count), 1) if embed_rate else 0.0,
        db_mib=round(size / 2**20, 1),
        recall_ms=recall_ms,
        process_ms=process_ms,
        process_peak_mib=round(process_peak, 1),
        peak_rss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    )


def run(
    settings: Settings,
    cache: EmbeddingCache,
    counts: list[int],
    rounds: int = 5,
    runs: int = 5,
    note: Callable[[str], None] = lambda _: None,
) -> list[ScaleRow]:
    with BenchStores(settings, cache) as stores:
        return [measure(stores, count, rounds, runs, note) for count in counts]
