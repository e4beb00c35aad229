"""The slow path's CPU for one session: embedding, and everything else.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/slow_path.py [--messages 200] [--runs 3]
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/slow_path.py --real [--max-parts N]

A Claude Code transcript of ``--messages`` messages (``benchmarks/transcripts.py``,
the one ``ingest_speed.py`` times as a whole process) is captured into a fresh
data directory, then its distillation (``run_session``: what the detached
worker runs; rules, no LLM, the local MiniLM embedder, loaded beforehand) runs
in this process. Printed per run: the CPU of the distillation and of the
embedder's calls, then that of embedding the session's messages (what the worker
does after the job when ``recall.message_vectors`` is on, maintain/queue.py), the
parts embedded and the bytes their rows take in SQLite.

With ``--real``, the real sessions of ``benchmarks/sessions/real`` instead, each captured
into a fresh store by its client's reader: the CPU of distilling them and of embedding
their messages, in total, per session and per 400 messages, and the parts and
characters embedded. ``--max-parts`` embeds at most that many parts of a message (a
cut tried: ingest/message_vectors.py MAX_PARTS). Asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import json
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
from memctl.ingest.capture import capture  # noqa: E402
from memctl.ingest.capture_report import IngestOptions  # noqa: E402
from memctl.ingest.message_vectors import embed_messages  # noqa: E402
from memctl.ingest.pipeline import run_session  # noqa: E402
from memctl.ingest.source import Input  # noqa: E402

# The pages of the messages' vectors (the table and its index; dbstat counts their b-tree
# overhead); the segment files recall reads are about 400 bytes a part more.
MESSAGE_VECTOR_PAGES = (
    "SELECT sum(pgsize) FROM dbstat WHERE name IN "
    "('message_vectors', 'sqlite_autoindex_message_vectors_1')"
)


# Messages a "long session" holds, the unit the slow path's targets are written in.
PER_SESSION = 400


def real(embedder: Timed) -> None:
    """Every real session distilled and its messages embedded, each in a fresh store."""
    from benchmarks.session_quality import GOLD
    from memctl.ingest.message_vectors import parts
    from memctl.store.message_vectors import unembedded

    sessions = json.loads((GOLD / "manifest.json").read_text(encoding="utf-8"))["sessions"]
    distil = embedding = 0.0
    messages = embedded = pieces = characters = 0
    for entry in sessions:
        with tempfile.TemporaryDirectory(prefix="memctl-slow-") as home:
            settings = load_settings(home=Path(home), overrides={"llm": "none"})
            with Context(settings, embedder=embedder) as ctx:
                options = IngestOptions(client=entry["client"], session_id=entry["file"])
                with (GOLD / entry["file"]).open("rb") as data:
                    capture(ctx, Input(data, entry["file"]), options)
                began = time.process_time()
                run = run_session(ctx, entry["file"])
                distil += time.process_time() - began
                said = [parts(text) for _, text in unembedded(ctx.db, 100_000, entry["file"])]
                pieces += sum(len(p) for p in said)
                characters += sum(len(piece) for p in said for piece in p)
                began = time.process_time()
                embedded += embed_messages(ctx.db, embedder, 100_000, entry["file"])
                embedding += time.process_time() - began
                messages += run.record.messages
    count = len(sessions)
    print(
        f"{count} real sessions, {messages:,} messages ({embedded:,} embedded in {pieces:,} "
        f"parts, {characters:,} characters): distilling {distil:.1f} s CPU "
        f"({distil / count:.2f} s a session), their messages' vectors {embedding:.1f} s CPU "
        f"({embedding / count:.2f} s a session, {embedding / messages * PER_SESSION:.2f} s per "
        f"{PER_SESSION} messages, {1000 * embedding / max(pieces, 1):.1f} ms a part)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--max-parts", type=int, default=None)
    args = parser.parse_args()
    if args.max_parts is not None:
        import memctl.ingest.message_vectors as message_vectors

        message_vectors.MAX_PARTS = args.max_parts
    embedder = Timed(LocalEmbedder())
    embedder.embed(["warm up"])  # the model's load is the worker's start, not the path's
    if args.real:
        real(embedder)
        return
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
