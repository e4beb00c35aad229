"""Where a bulk import of memories spends its CPU: embedding, and everything else.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/import_memories.py [--n 300] [--chars 700]

Writes a memctl JSONL file of ``--n`` memories of about ``--chars`` characters
(``benchmarks/synthetic.py`` sentences joined), then imports it in this process
as `memctl import FILE` does (``api.import_files``), with the local MiniLM
embedder, into a fresh data directory. Prints the CPU of the whole import and
of the embedder's calls (so the rest is memctl's own work: reading, checking,
writing the store and its indexes). Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic import synthetic_memories  # noqa: E402  (path above)
from memctl.api.ingest import ImportRequest, import_files, plan_import  # noqa: E402
from memctl.config.settings import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.embed import Embedder  # noqa: E402
from memctl.embed.local import LocalEmbedder  # noqa: E402


class Timed:
    """An embedder that adds up the CPU time of its calls."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.cpu, self.texts = inner, 0.0, 0
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        began = time.process_time()
        try:
            return self.inner.embed(texts)
        finally:
            self.cpu += time.process_time() - began
            self.texts += len(texts)


def memories_file(path: Path, count: int, chars: int) -> None:
    sentences = synthetic_memories(count * (chars // 60 + 2))
    with path.open("w", encoding="utf-8") as out:
        for number in range(count):
            text = f"Note {number}:"
            while len(text) < chars:
                text += " " + next(sentences)
            out.write(json.dumps({"content": text[:chars]}) + "\n")


def one_import(home: Path, path: Path, embedder: Timed) -> tuple[float, float, dict[str, int]]:
    """(wall, CPU) of one import in this process, and what it did."""
    embedder.cpu, embedder.texts = 0.0, 0
    settings = load_settings(home=home, overrides={"llm": "none"})
    began, cpu = time.perf_counter(), time.process_time()
    with Context(settings, embedder=embedder) as ctx:
        report = import_files(ctx, plan_import(ImportRequest((str(path),))))
    file = report.files[0]
    done = {"imported": file.imported, "skipped": file.skipped, "embedded": embedder.texts}
    return time.perf_counter() - began, time.process_time() - cpu, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--chars", type=int, default=700)
    args = parser.parse_args()
    embedder = Timed(LocalEmbedder())
    embedder.embed(["warm up"])  # the model's load is not the import's
    with tempfile.TemporaryDirectory(prefix="memctl-import-") as tmp:
        path = Path(tmp) / "memories.jsonl"
        memories_file(path, args.n, args.chars)
        print(f"{args.n:,} memories of {args.chars} characters, {path.stat().st_size:,} bytes")
        wall, cpu, done = one_import(Path(tmp) / "home", path, embedder)
        rest = cpu - embedder.cpu
        print(
            f"import: {wall:.1f} s wall, {cpu:.2f} s CPU: embedding {embedder.cpu:.2f} s "
            f"({done['embedded']} texts, {1000 * embedder.cpu / max(1, done['embedded']):.0f} ms "
            f"each), the rest {rest:.2f} s ({1000 * rest / max(1, args.n):.1f} ms a memory); "
            f"{done['imported']} imported, {done['skipped']} skipped"
        )


if __name__ == "__main__":
    main()
