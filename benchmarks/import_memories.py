"""Where a bulk import of memories spends its time: embedding, and everything else.

    .venv/bin/python benchmarks/import_memories.py [--n 300] [--chars 700]
        [--threads auto|N] [--against REV] [--int8]

Writes a memctl JSONL file of ``--n`` memories of about ``--chars`` characters
(``benchmarks/synthetic.py`` sentences joined), then imports it in this process
as `memctl import FILE` does (``api.import_files``), with the local MiniLM
embedder, into a fresh data directory. Prints the wall and CPU time of the whole
import and of the embedder's calls (so the rest is memctl's own work: reading,
checking, writing the store and its indexes), with the load average before and
after: the embedder runs two forward passes at once only while the load leaves
two cores idle (``--threads auto``, memctl's default; ``--threads 1`` fixes one).
``--against REV`` then imports the same file again with memctl's embedder as it
was at git revision REV (``benchmarks/embed_compare.py``), after today's, so that
today's own threads do not count as other people's load. ``--int8`` then
imports it again with ONNX Runtime's int8 (dynamic, per channel) forward on two
threads (``benchmarks/embed_compare.py``'s graph; needs onnx and onnxruntime),
the variant measured in docs/benchmarks.md. Asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.embed_compare import (  # noqa: E402  (path above)
    VARIANTS,
    build_graph,
    embedder_at,
    named_projections,
    onnx_embedder,
    session,
)
from benchmarks.synthetic import synthetic_memories  # noqa: E402
from memctl.api.ingest import ImportRequest, import_files, plan_import  # noqa: E402
from memctl.config.settings import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.embed import Embedder  # noqa: E402
from memctl.embed.local import LocalEmbedder  # noqa: E402


class Timed:
    """An embedder that adds up the wall and CPU time of its calls."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.wall, self.cpu, self.texts = inner, 0.0, 0.0, 0
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        began, cpu = time.perf_counter(), time.process_time()
        try:
            return self.inner.embed(texts)
        finally:
            self.wall += time.perf_counter() - began
            self.cpu += time.process_time() - cpu
            self.texts += len(texts)


class Int8:
    """ONNX Runtime's int8 forward (dynamic, per channel) behind memctl's tokenizer."""

    def __init__(self, embedder: LocalEmbedder, scratch: Path) -> None:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        fp32, int8 = scratch / "fp32.onnx", scratch / "int8.onnx"
        onnx.save(named_projections(build_graph(embedder._load()[1])), str(fp32))
        options = VARIANTS["int8 dynamic, per channel"]
        quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8, **options)  # type: ignore[arg-type]
        self.forward = onnx_embedder(embedder, session(str(int8)), threads=2)
        self.name, self.dim = f"onnxruntime-int8:{embedder.name}", embedder.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.forward(list(texts)) if texts else np.zeros((0, self.dim), np.float32)


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
    embedder.wall, embedder.cpu, embedder.texts = 0.0, 0.0, 0
    settings = load_settings(home=home, overrides={"llm": "none"})
    began, cpu = time.perf_counter(), time.process_time()
    with Context(settings, embedder=embedder) as ctx:
        report = import_files(ctx, plan_import(ImportRequest((str(path),))))
    file = report.files[0]
    done = {"imported": file.imported, "skipped": file.skipped, "embedded": embedder.texts}
    return time.perf_counter() - began, time.process_time() - cpu, done


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def report(label: str, home: Path, path: Path, embedder: Timed, count: int) -> None:
    print(f"{label}: {load()} before", flush=True)
    wall, cpu, done = one_import(home, path, embedder)
    rest = cpu - embedder.cpu
    texts = max(1, done["embedded"])
    print(
        f"  import: {wall:.1f} s wall, {cpu:.2f} s CPU; embedding {embedder.wall:.1f} s wall, "
        f"{embedder.cpu:.2f} s CPU ({done['embedded']} texts: "
        f"{1000 * embedder.wall / texts:.1f} ms wall, {1000 * embedder.cpu / texts:.1f} ms CPU "
        f"each); the rest {rest:.2f} s CPU ({1000 * rest / max(1, count):.1f} ms a memory); "
        f"{done['imported']} imported, {done['skipped']} skipped; {load()} after",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--chars", type=int, default=700)
    parser.add_argument("--threads", default="auto", help="forward passes at once: auto or N")
    parser.add_argument("--against", metavar="REV", help="then the same with the embedder at REV")
    parser.add_argument("--int8", action="store_true", help="then the same with ORT int8")
    args = parser.parse_args()
    if args.int8 and not all(importlib.util.find_spec(m) for m in ("onnx", "onnxruntime")):
        parser.error("--int8 needs onnx and onnxruntime: pip install onnx onnxruntime onnx-ir")
    threads = None if args.threads == "auto" else int(args.threads)
    embedder = Timed(LocalEmbedder(threads=threads))
    embedder.embed(["warm up"])  # the model's load is not the import's
    with tempfile.TemporaryDirectory(prefix="memctl-import-") as tmp:
        path = Path(tmp) / "memories.jsonl"
        memories_file(path, args.n, args.chars)
        print(
            f"{args.n:,} memories of {args.chars} characters, {path.stat().st_size:,} bytes; "
            f"{os.cpu_count()} cores, OPENBLAS_NUM_THREADS="
            f"{os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}"
        )
        report(f"today, threads {args.threads}", Path(tmp) / "home", path, embedder, args.n)
        if args.against:
            then = Timed(embedder_at(args.against, Path(tmp)))
            then.embed(["warm up"])
            report(f"embedder at {args.against}", Path(tmp) / "then", path, then, args.n)
        if args.int8:
            int8 = Timed(Int8(embedder.inner, Path(tmp)))  # type: ignore[arg-type]
            int8.embed(["warm up"])
            report("onnxruntime int8, 2 threads", Path(tmp) / "int8", path, int8, args.n)


if __name__ == "__main__":
    main()
