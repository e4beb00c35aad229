"""`memctl ui` page speed on a large store, in process (server time, no browser).

    .venv/bin/python benchmarks/ui_speed.py --memories 100000 --sessions 10000 \
        [--messages 10] [--cache DIR] [--repeat 20]

Builds (once, cached under --cache, default /tmp/memctl-bench-cache/ui-M-S-K) the
session store of benchmarks/sessions_grep_speed.py (S sessions of K messages over
4 clients and 20 projects), then M synthetic memories (benchmarks/synthetic.py)
spread over the same projects, embedded by the hash embedder (the recall page's
query embedding is therefore not the real model's: `benchmarks/recall_speed.py`
times that). Each run copies the store into a fresh home, signs in, and requests
every page --repeat times through Starlette's in-process client (routing, the
security checks, the view, the template and the response: all the server does),
printing p50 and p95 in milliseconds, the CPU p50 (the server runs in this process: its
CPU time, what a loaded machine does not inflate) and the page's size. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.sessions_grep_speed import PROJECTS, build  # noqa: E402
from benchmarks.synthetic import synthetic_memories  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.embed.hashed import HashEmbedder  # noqa: E402
from memctl.model import Category, Kind, Memory  # noqa: E402
from memctl.store.writes import Writer  # noqa: E402

WRITE_CHUNK = 2000  # memories a transaction while building


def add_memories(home: Path, count: int) -> None:
    embedder = HashEmbedder()
    ctx = Context(load_settings(home=home, overrides={"embedder": "hash"}), embedder)
    ctx.db.ensure_vector_model(embedder.name, embedder.dim)
    texts = list(synthetic_memories(count))
    with ctx.db.without_fsync():
        for start in range(0, count, WRITE_CHUNK):
            chunk = texts[start : start + WRITE_CHUNK]
            vectors = embedder.embed(chunk)
            with ctx.db.atomic():
                writer = Writer(ctx.db)
                for n, (text, vector) in enumerate(zip(chunk, vectors, strict=True)):
                    scope = f"path:project{(start + n) % PROJECTS:02d}"
                    memory = Memory(
                        content=text, kind=Kind.SEMANTIC, category=Category.PATTERNS, scope=scope
                    )
                    writer.create(memory, vector.tobytes())
            print(f"  wrote {start + len(chunk)} memories", file=sys.stderr, flush=True)
    ctx.close()


def pages(ctx: Context, sessions: int) -> dict[str, str]:
    """Each page's URL on this store."""
    from memctl.api import memory as memory_api
    from memctl.api.memory import ListRequest

    memory = memory_api.list_memories(ctx, ListRequest(limit=1))[0]
    return {
        "projects": "/projects",
        "sessions": "/sessions",
        "sessions of a project": "/sessions?project=path:project03",
        "timeline of a project": "/timeline?project=path:project05",
        "a session": f"/sessions/bench-{sessions // 2:06d}",
        "forget a session?": f"/sessions/bench-{sessions // 2:06d}/forget",
        "memories": "/memories",
        "memories of a project": "/memories?project=path:project07",
        "a memory": f"/memories/{memory.id}",
        "recall": "/recall?q=how+do+we+deploy+the+billing+service",
        "profile": "/profile",
        "graph": "/graph",
        "runs": "/runs",
        "health": "/health",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=10, help="per session")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    name = f"ui-{args.memories}-{args.sessions}-{args.messages}"
    cache = args.cache or Path("/tmp/memctl-bench-cache") / name
    if not (cache / "home" / "memctl.db").exists():
        began = time.perf_counter()
        build(cache, args.sessions, args.messages)
        add_memories(cache / "home", args.memories)
        print(f"built the store in {time.perf_counter() - began:.0f} s")
    from starlette.testclient import TestClient

    from memctl.ui.app import build_app
    from memctl.ui.security import Keys

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(cache / "home", home)
        settings = load_settings(home=home, overrides={"embedder": "hash"})
        keys = Keys(frozenset({"testserver"}))
        app, viewer = build_app(settings, keys, HashEmbedder())
        with TestClient(app, base_url="http://testserver") as client, Context(settings) as ctx:
            client.get(f"/login?token={keys.token}")
            print(f"{args.memories:,} memories, {args.sessions:,} sessions; ms per request:")
            print(f"{'page':<24}{'p50':>8}{'p95':>8}{'cpu p50':>9}{'kB':>8}")
            for label, url in pages(ctx, args.sessions).items():
                took, cpu = [], []
                for _ in range(args.repeat):
                    began, began_cpu = time.perf_counter(), time.process_time()
                    answer = client.get(url)
                    took.append((time.perf_counter() - began) * 1000)
                    cpu.append((time.process_time() - began_cpu) * 1000)
                    assert answer.status_code == 200, (url, answer.text[:200])
                took.sort()
                p95 = took[min(len(took) - 1, int(len(took) * 0.95))]
                size = len(answer.content) / 1000
                print(
                    f"{label:<24}{statistics.median(took):>8.1f}{p95:>8.1f}"
                    f"{statistics.median(cpu):>9.1f}{size:>8.0f}"
                )
        viewer.close()


if __name__ == "__main__":
    main()
