"""How long `memctl sync` takes, and how big the repository grows, at 10,000 memories.

    .venv/bin/python benchmarks/sync_speed.py [--n 10000] [--changed 10]

Two data directories (two machines) and a bare repository on local disk:

- machine A holds N shared memories (written straight into its store: its
  vectors play no part in sync); its first `memctl sync` exports them all;
- machine B's first `memctl sync` imports them all, with the local MiniLM
  embedder (whole process), and again in-process with a stand-in embedder
  (the sync's own work, embedding left out);
- A changes `--changed` memories and syncs, then B syncs them in;
- a sync with nothing to do; the repository's size (bare, as pushed, and the
  checkout's files).

Whole `memctl` processes (Python start-up included) unless said. Prints the
figures; asserts nothing.
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

from benchmarks.synthetic import synthetic_memories  # noqa: E402  (path above)
from memctl.config.settings import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.model import Action, Memory, Visibility, now_iso  # noqa: E402
from memctl.store import memories as store  # noqa: E402
from memctl.store.events import log_event  # noqa: E402
from memctl.sync.pipeline import SyncRequest, sync_now  # noqa: E402
from tests.fakes import HashEmbedder  # noqa: E402

ENV = {**os.environ, "MEMCTL_LLM": "none"}


def memctl(home: Path, *args: str) -> tuple[str, str]:
    """(wall and CPU seconds, stdout) of one whole `memctl` process (its git children too)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memctl", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return f"{wall:.2f} s wall, {cpu:.2f} s CPU", done.stdout


def in_process(home: Path) -> tuple[str, dict[str, int]]:
    """(wall and CPU seconds, what came in) of one sync in this process, stand-in embedder."""
    settings = load_settings(home=home, overrides={"llm": "none"})
    with Context(settings, embedder=HashEmbedder()) as ctx:
        began, cpu = time.perf_counter(), time.process_time()
        result = sync_now(ctx, SyncRequest())
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    return f"{wall:.2f} s wall, {cpu:.2f} s CPU in-process", result.came_in


def fill(home: Path, count: int) -> list[str]:
    """N shared memories in A's store, each with its create event."""
    ids = []
    with Context(load_settings(home=home), embedder=HashEmbedder()) as ctx:
        with ctx.db.atomic():
            for number, text in enumerate(synthetic_memories(count)):
                memory = Memory(
                    content=f"{text} (#{number})",
                    scope="global" if number % 3 else "github.com/acme/app",
                    visibility=Visibility.SHARED,
                    tags=["bench"],
                )
                store.insert_memory(ctx.db, memory, None)
                log_event(ctx.db, Action.CREATE, memory.id, {"source": "bench"})
                ids.append(memory.id)
    return ids


def change(home: Path, ids: list[str]) -> None:
    with Context(load_settings(home=home), embedder=HashEmbedder()) as ctx:
        with ctx.db.atomic():
            for memory_id in ids:
                store.update_memory(
                    ctx.db, memory_id, {"content": f"changed {memory_id}", "updated_at": now_iso()}
                )
                log_event(ctx.db, Action.UPDATE, memory_id, {"before": {}, "after": {}})


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument(
        "--embed", action="store_true", help="Also B's first sync with the MiniLM embedder."
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memctl-sync-bench-") as tmp:
        root = Path(tmp)
        remote = root / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        a, b, c = root / "a", root / "b", root / "c"
        memctl(a, "sync", "init", str(remote))
        began = time.perf_counter()
        ids = fill(a, args.n)
        print(f"setup: {args.n:,} shared memories in A in {time.perf_counter() - began:.1f} s")

        took, out = memctl(a, "sync", "--json")
        written = json.loads(out)["went_out"]["written"]
        print(f"A first sync (export {written:,} files, commit, push): {took}")
        checkout = a / "sync" / "repo" / "memories"
        subprocess.run(["git", "--git-dir", str(remote), "gc", "-q"], check=True)
        print(
            f"repository: {size(remote) / 2**20:.1f} MiB bare (after git gc), "
            f"{size(checkout) / 2**20:.1f} MiB of files in the checkout, "
            f"{size(checkout) // args.n} bytes a memory file"
        )
        memctl(c, "sync", "init", str(remote))
        took, came = in_process(c)
        print(f"C first sync (import {came['created']:,}; embedding left out): {took}")
        if args.embed:
            memctl(b, "sync", "init", str(remote))
            took, out = memctl(b, "sync", "--json")
            created = json.loads(out)["came_in"]["created"]
            print(f"B first sync, MiniLM (import {created:,}, embed each): {took}")

        took, _ = memctl(a, "sync")
        print(f"A sync with nothing to do: {took}")
        change(a, ids[: args.changed])
        took, out = memctl(a, "sync", "--json")
        written = json.loads(out)["went_out"]["written"]
        print(f"A sync with {args.changed} changed memories ({written} written): {took}")
        took, came = in_process(c)
        print(f"C sync bringing them in ({came['updated']} updated): {took}")


if __name__ == "__main__":
    main()
