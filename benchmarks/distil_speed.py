"""How much CPU the rules path spends distilling a session, real-sized and huge.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/distil_speed.py [--gold DIR]

The worker's slow path (``run_session``: privacy again, rules extraction,
admission, reconciliation, embedding with the local MiniLM model, the digest)
on sessions already captured, no LLM, CPU seconds (``time.process_time``):

- real sessions: the longest of the gold set (``benchmarks/sessions/real/``),
  Claude Code sessions of 397 and 647 messages (the issue's target: a
  400-message session distils in <= 3 s CPU);
- huge sessions: synthetic user and assistant messages of 6,000 characters of
  prose, with no sentence end (the shape that made the digest's rule patterns
  slow) or a sentence every 12 words, 200 to 1,600 messages (1.2 to 9.8 MB):
  the CPU should grow with the size, not faster; the digest's share is
  printed apart.

Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.ingest import pipeline  # noqa: E402
from memctl.ingest.capture import IngestOptions, capture  # noqa: E402
from memctl.ingest.source import Input  # noqa: E402

GOLD = ROOT / "benchmarks" / "sessions" / "real"
REAL = ("cc2-cctrace-132b2f66.jsonl", "cc2-spotter-ae4a77f8.jsonl")
HUGE = (200, 400, 800, 1600)  # messages of MESSAGE_CHARS
MESSAGE_CHARS = 6000
# words a sentence: none (one 6,000-character run-on sentence a message), or 12 (~80 characters)
SHAPES = {0: "run-on sentences", 12: "short sentences"}
WORDS = (
    "the billing service keeps every invoice in the ledger and we checked the totals "
    "against the export"
).split()


def prose(n: int, sentence_words: int) -> str:
    """MESSAGE_CHARS of words, a sentence end every ``sentence_words`` (0: none)."""
    words: list[str] = []
    size = 0
    while size < MESSAGE_CHARS:
        word = WORDS[(n + 7 * len(words)) % len(WORDS)]
        if sentence_words and len(words) % sentence_words == 0:
            word = word.capitalize()
            if words:
                words[-1] += "."
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def huge_lines(count: int, sentence_words: int) -> Iterator[str]:
    for n in range(count):
        kind = "user" if n % 2 == 0 else "assistant"
        yield json.dumps(
            {
                "type": kind,
                "sessionId": f"huge-{count}-{sentence_words}",
                "cwd": "/home/ann/shop",
                "timestamp": f"2025-06-01T10:{n // 60 % 60:02d}:{n % 60:02d}Z",
                "message": {"role": kind, "content": prose(n, sentence_words)},
            }
        )


class Timed:
    """CPU spent inside one function of the pipeline, by wrapping it."""

    def __init__(self, name: str) -> None:
        self.name, self.cpu = name, 0.0
        self.inner = getattr(pipeline, name)

    def __enter__(self) -> Timed:
        def timed(*args: object, **kwargs: object) -> object:
            started = time.process_time()
            try:
                return self.inner(*args, **kwargs)
            finally:
                self.cpu += time.process_time() - started

        setattr(pipeline, self.name, timed)
        return self

    def __exit__(self, *_: object) -> None:
        setattr(pipeline, self.name, self.inner)


def distil(ctx: Context, session_id: str, job_id: int | None) -> tuple[float, float]:
    """CPU of the slow path on a captured session, and of its digest."""
    with Timed("session_digest") as digest:
        started = time.process_time()
        pipeline.run_session(ctx, session_id, job_id)
        return time.process_time() - started, digest.cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gold", type=Path, default=GOLD, help="the gold set's directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        overrides = {"ingest.spawn_worker": False, "llm": "none"}
        settings = load_settings(Path(home), overrides=overrides)
        with Context(settings) as ctx:
            ctx.vectors(["load the embedder before the clock starts"])
            print("| session | messages | MB | slow path CPU s | of it the digest |")
            print("| --- | ---: | ---: | ---: | ---: |")
            for name in REAL:
                raw = (args.gold / name).read_bytes()
                measure(ctx, name, raw, "claude-code")
            for sentence_words, shape in SHAPES.items():
                for count in HUGE:
                    raw = "\n".join(huge_lines(count, sentence_words)).encode()
                    measure(ctx, f"synthetic, {shape}", raw, None)


def measure(ctx: Context, name: str, raw: bytes, client: str | None) -> None:
    options = IngestOptions(client=client)
    report = capture(ctx, Input(io.BytesIO(raw), name), options).report
    cpu, digest = distil(ctx, report.session_id, report.job_id)
    print(f"| {name} | {report.messages_total} | {len(raw) / 1e6:.1f} | {cpu:.2f} | {digest:.2f} |")


if __name__ == "__main__":
    main()
