"""How fast the numpy MiniLM embedder is: model load time and sentences per second.

Run with the project's venv from the repository root:

    .venv/bin/python benchmarks/embed_speed.py [--batch-size 32] [--seconds 3]

Sentences are 15-25 words, like typical memories. Each call size is timed over
at least ``--seconds`` of repeated ``embed()`` calls (median call reported), so
the numbers include tokenisation, sorting and padding, as `memctl remember` and
`memctl recall` pay them.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memctl.embed.local import LocalEmbedder  # noqa: E402  (needs the path above)

SUBJECTS = [
    "The user",
    "Our backend team",
    "The on-call engineer",
    "Maria from finance",
    "The mobile client",
    "The nightly import job",
]
VERBS = [
    "prefers to keep",
    "decided last week to move",
    "keeps forgetting to document",
    "asked us to review",
    "wants a clearer explanation of",
    "spent the afternoon debugging",
]
OBJECTS = [
    "the retry policy for failed webhook deliveries",
    "all configuration in one YAML file",
    "the migration that renames the customer email column",
    "how invoices are rounded for the tax service",
    "the flaky integration test on slow CI machines",
    "the dark colour scheme in every editor",
]
ENDINGS = [
    "before the next release.",
    "because the old approach caused duplicates.",
    "and wants a summary by Friday.",
    "since nobody remembers why.",
]
CALL_SIZES = (1, 32, 256)


def sentences(count: int, seed: int = 7) -> list[str]:
    """Distinct-enough realistic sentences of 15-25 words, reproducible from ``seed``."""
    rng = random.Random(seed)
    parts = (SUBJECTS, VERBS, OBJECTS, ENDINGS)
    return [" ".join(rng.choice(options) for options in parts) for _ in range(count)]


def time_load(batch_size: int) -> tuple[LocalEmbedder, float]:
    """Seconds from constructing the embedder to its first (one-word) vector."""
    start = time.perf_counter()
    embedder = LocalEmbedder(batch_size=batch_size)
    embedder.embed(["warm-up"])
    return embedder, time.perf_counter() - start


def sentences_per_second(embedder: LocalEmbedder, call_size: int, seconds: float) -> float:
    """Median throughput of repeated ``embed()`` calls of ``call_size`` sentences each.

    The median, not the mean: on a shared 2-core machine a neighbour's burst
    of work can stall one call many times over.
    """
    texts = sentences(call_size)
    durations: list[float] = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or len(durations) < 3:
        began = time.perf_counter()
        embedder.embed(texts)
        durations.append(time.perf_counter() - began)
    return call_size / statistics.median(durations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=32, help="embedder's internal batch")
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum time per call size")
    args = parser.parse_args()

    embedder, load_seconds = time_load(args.batch_size)
    words = [len(s.split()) for s in sentences(256)]
    print(f"model load + first embed: {load_seconds:.2f} s")
    print(f"sentences: {min(words)}-{max(words)} words; internal batch size {args.batch_size}")
    for call_size in CALL_SIZES:
        rate = sentences_per_second(embedder, call_size, args.seconds)
        print(f"embed() of {call_size:>3} sentences: {rate:8.1f} sentences/s")


if __name__ == "__main__":
    main()
