"""`memctl maintain` over N realistic synthetic memories, without an LLM.

    .venv/bin/python benchmarks/maintain_speed.py --n 100000 [--cache DIR]

The memories are the recall benchmark's (benchmarks/bench_store.py records:
creation times over two years, episodic and semantic, three scopes, tiers,
importances, access counts). Embedding 100,000 texts with MiniLM takes far too
long on the benchmark machine, so the vectors come from ``WordEmbedder``: a
fixed random 384-d vector per word, summed and normalised (texts sharing words
are similar, as with a real model, only coarser). The store is built once and
cached under --cache (default /tmp/memctl-bench-cache/maintain-N); each run
copies it into a fresh home.

Each maintain runs in a child process (this script with --child), which calls
the same ``api.maintain`` as `memctl maintain` with the WordEmbedder. The
memories entered the store when they were made (over two years), so decay and
archive have their real work. Printed for a first run, a second right after
(incremental: dedup and merge compare only what is new or changed), and the
same second run with ``--full`` (on a copy of the store the first run left,
every memory compared again: what a run costs without the incremental
bookkeeping): wall time, CPU time, the child's peak RSS, the machine's load
average and what each task did. Nothing is asserted;
the targets (first <= 60 s and <= 500 MiB, second <= 5 s) and the figures are
in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_store import records  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.model import Memory  # noqa: E402
from memctl.store.memories import insert_memory  # noqa: E402

DIM = 384
BATCH = 5000
FIELDS = ("kind", "category", "tier", "importance", "confidence", "access_count", "scope")


class WordEmbedder:
    """Deterministic, fast: the normalised sum of a fixed random vector per word."""

    name = "bench:words-384"
    dim = DIM

    def __init__(self) -> None:
        self.words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        if word not in self.words:
            seed = int.from_bytes(word.encode()[:8].ljust(8, b"\0"), "little") ^ len(word)
            self.words[word] = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
        return self.words[word]

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()) or ["_"]:
                out[row] += self._word(word)
            out[row] /= np.linalg.norm(out[row]) or 1.0
        return out


def build(count: int, cache: Path) -> Path:
    """The cached store of ``count`` memories, built when missing."""
    database = cache / "memctl.db"
    if database.is_file():
        return database
    building = cache.with_name(cache.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    embedder = WordEmbedder()
    ctx = Context(load_settings(home=building, overrides={"llm": "none"}), embedder=embedder)
    ctx.vectors([])
    began = time.perf_counter()
    batch: list[Memory] = []
    for record in records(count):
        values = {k: record[k] for k in FIELDS}
        batch.append(
            Memory(
                content=str(record["content"]),
                id=str(record["id"]),
                created_at=str(record["created_at"]),
                stored_at=str(record["created_at"]),  # a store grown over two years
                **values,
            )
        )  # type: ignore[arg-type]
        if len(batch) == BATCH:
            _insert(ctx, embedder, batch)
            batch = []
    _insert(ctx, embedder, batch)
    print(f"built {count} memories in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    ctx.close()
    shutil.rmtree(cache, ignore_errors=True)
    building.rename(cache)
    return database


def _insert(ctx: Context, embedder: WordEmbedder, batch: list[Memory]) -> None:
    vectors = embedder.embed([m.content for m in batch])
    with ctx.db.atomic():
        for memory, vector in zip(batch, vectors, strict=True):
            insert_memory(ctx.db, memory, vector.tobytes())


def child(home: Path, full: bool) -> None:
    """One maintain, as `memctl maintain [--full] --json` runs it, printing its report."""
    from memctl.api.maintain import MaintainRequest, maintain

    settings = load_settings(home=home, overrides={"llm": "none"})
    with Context(settings, embedder=WordEmbedder()) as ctx:
        print(json.dumps(maintain(ctx, MaintainRequest(full=full)).to_dict()))


def maintain_process(home: Path, full: bool) -> tuple[float, float, float, dict[str, object]]:
    """(wall s, CPU s, peak RSS MiB, report) of one maintain in a child process."""
    began = time.perf_counter()
    command = [sys.executable, __file__, "--child", str(home), *(["--full"] if full else [])]
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - began
        if status != 0:
            raise SystemExit(f"maintain failed with status {status}")
        out.seek(0)
        report = json.loads(out.read())
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, report


def summary(report: dict[str, object]) -> str:
    tasks = report["tasks"]
    assert isinstance(tasks, list)
    return "; ".join(
        f"{t['task']}: " + (", ".join(f"{n} {k}" for k, n in t["counts"].items()) or "-")
        for t in tasks
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.full)
        return
    cache = args.cache or Path(tempfile.gettempdir()) / "memctl-bench-cache" / f"maintain-{args.n}"
    database = build(args.n, cache)
    with tempfile.TemporaryDirectory(prefix="memctl-maintain-") as root:
        home = Path(root) / "home"
        home.mkdir()
        shutil.copy(database, home / "memctl.db")
        print(f"{args.n} memories, database {database.stat().st_size / 2**20:.0f} MiB")
        show("first run", maintain_process(home, False))
        shutil.copytree(home, Path(root) / "full")  # the store as the first run left it
        show("second run right after", maintain_process(home, False))
        show("the same second run with --full", maintain_process(Path(root) / "full", True))


def show(label: str, figures: tuple[float, float, float, dict[str, object]]) -> None:
    wall, cpu, peak, report = figures
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{label}: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {peak:.0f} MiB "
        f"(load average after: {load})"
    )
    print(f"  {summary(report)}")


if __name__ == "__main__":
    main()
