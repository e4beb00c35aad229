"""The slow path's CPU for one session: embedding, and everything else.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/slow_path.py [--messages 200] [--runs 3]

A Claude Code transcript of ``--messages`` messages (``benchmarks/transcripts.py``,
the one ``ingest_speed.py`` times as a whole process) is captured into a fresh
data directory, then its distillation (``run_session``: what the detached
worker runs; rules, no LLM, the local MiniLM embedder, loaded beforehand) runs
in this process. Printed per run: the CPU of the distillation and of the
embedder's calls, then that of embedding the session's messages (what the worker
does after the job when ``recall.message_vectors`` is on, maintain/queue.py), the
parts embedded and the bytes their rows take in SQLite. Asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.import_memories import Timed  # noqa: E402  (path above)
from benchmarks.transcripts import claude_code_lines  # noqa: E402
from memctl.config.settings import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.embed.local import LocalEmbedder  # noqa: E402
from memctl.ingest.capture import IngestOptions, Input, capture  # noqa: E402
from memctl.ingest.message_vectors import embed_messages  # noqa: E402
from memctl.ingest.pipeline import run_session  # noqa: E402

# The pages of the messages' vectors (the table and its index; dbstat counts their b-tree
# overhead); the segment files recall reads are about 400 bytes a part more.
MESSAGE_VECTOR_PAGES = (
    "SELECT sum(pgsize) FROM dbstat WHERE name IN "
    "('message_vectors', 'sqlite_autoindex_message_vectors_1')"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    embedder = Timed(LocalEmbedder())
    embedder.embed(["warm up"])  # the model's load is the worker's start, not the path's
    for number in range(args.runs):
        session = f"session-{number}"
        data = "\n".join(claude_code_lines(args.messages, session=session)).encode()
        with tempfile.TemporaryDirectory(prefix="memctl-slow-") as home:
            settings = load_settings(home=Path(home), overrides={"llm": "none"})
            with Context(settings, embedder=embedder) as ctx:
                options = IngestOptions(client="claude-code", session_id=session)
                capture(ctx, Input(io.BytesIO(data), "transcript.jsonl"), options)
                embedder.cpu, embedder.texts = 0.0, 0
                began = time.process_time()
                run = run_session(ctx, session)
                cpu = time.process_time() - began
                embedder.cpu, embedder.texts = 0.0, 0
                began = time.process_time()
                embedded = embed_messages(ctx.db, embedder, args.messages * 2, session)
                vectors_cpu = time.process_time() - began
                size = ctx.db.value(MESSAGE_VECTOR_PAGES)
        print(
            f"run {number + 1}: {cpu:.2f} s CPU, of which embedding {embedder.cpu:.2f} s "
            f"({embedder.texts} texts), the rest {cpu - embedder.cpu:.2f} s; "
            f"{run.record.messages} messages, {run.record.facts} facts; "
            f"their vectors {vectors_cpu:.2f} s CPU ({embedded} messages, "
            f"{embedder.texts} parts, about {int(size or 0) // max(embedded, 1)} bytes a message)"
        )


if __name__ == "__main__":
    main()
