"""A realistic synthetic store for the recall benchmarks, built once and cached.

Embedding 100,000 memories takes minutes, so the finished database is kept
under ``--cache`` (default /tmp/memctl-bench-cache/N) and each run copies it
into a fresh home. Memories have the spread a real store has: creation times
over two years, several categories, tiers and importances, three scopes, and
a sparse relation graph.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.synthetic import synthetic_memories
from memctl.config import load_settings
from memctl.context import Context
from memctl.model import format_time
from memctl.sync.records import import_lines

PROJECT = "github.com/acme/platform"
SCOPES = [(PROJECT, 0.7), ("global", 0.2), ("github.com/acme/website", 0.1)]
CATEGORIES = [
    ("cases", 0.25),
    ("patterns", 0.2),
    ("entities", 0.2),
    ("events", 0.15),
    ("preferences", 0.15),
    ("profile", 0.05),
]
TIERS = [("working", 0.6), ("peripheral", 0.3), ("core", 0.1)]
RELATION_TYPES = ["supports", "related", "contextualizes", "depends_on", "contradicts"]


def _pick(rng: random.Random, weighted: list[tuple[str, float]]) -> str:
    return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]


def records(count: int, seed: int = 11) -> Iterator[dict[str, object]]:
    """``count`` memctl JSONL records with realistic metadata and a sparse graph."""
    rng = random.Random(seed)
    ids = [f"{rng.getrandbits(128):032x}" for _ in range(count)]
    now = datetime(2026, 6, 1, tzinfo=UTC)
    for index, text in enumerate(synthetic_memories(count)):
        created = now - timedelta(seconds=rng.uniform(0, 2 * 365 * 86400))
        relations = [
            {
                "dst_id": ids[rng.randrange(count)],
                "type": rng.choice(RELATION_TYPES),
                "weight": round(rng.uniform(0.3, 1.0), 2),
            }
            for _ in range(rng.choice([0, 0, 0, 0, 1, 2]))
        ]
        yield {
            "id": ids[index],
            "content": text,
            "kind": rng.choice(["episodic", "semantic"]),
            "category": _pick(rng, CATEGORIES),
            "tier": _pick(rng, TIERS),
            "importance": round(rng.uniform(0.2, 1.0), 2),
            "confidence": round(rng.uniform(0.5, 1.0), 2),
            "access_count": rng.choice([0, 0, 0, 1, 2, 5]),
            "created_at": format_time(created),
            "scope": _pick(rng, SCOPES),
            "relations": [r for r in relations if r["dst_id"] != ids[index]],
        }


def cached_store(count: int, cache: Path) -> Path:
    """The cached database of ``count`` memories, built (and timed) when missing."""
    database = cache / "memctl.db"
    if database.is_file():
        return database
    # An interrupted build resumes: the import skips the (seeded) ids already stored.
    building = cache.with_name(cache.name + ".building")
    resumed = (building / "memctl.db").is_file()
    ctx = Context(load_settings(home=building))
    lines = ((i, json.dumps(r)) for i, r in enumerate(records(count), start=1))
    began = time.perf_counter()
    report = import_lines(ctx, lines)
    elapsed = time.perf_counter() - began
    ctx.close()
    (building / "build.json").write_text(
        json.dumps(
            {
                "count": count,
                "seconds": elapsed,
                "resumed": resumed,
                "relations": report.relations,
            }
        )
    )
    shutil.rmtree(cache, ignore_errors=True)
    building.rename(cache)
    return database


def fresh_home(count: int, cache: Path, target: Path) -> Path:
    """A new home holding a copy of the cached store (so runs never share caches)."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(cached_store(count, cache), target / "memctl.db")
    return target


def build_info(cache: Path) -> dict[str, float]:
    return json.loads((cache / "build.json").read_text())
