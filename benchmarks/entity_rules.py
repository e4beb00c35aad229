"""The knowledge graph's rules, measured: entities found in English and CJK sentences, and
a sample of the triples distillation stores from real sessions, for a hand check.

    .venv/bin/python benchmarks/entity_rules.py [--sessions DIR] [--sample N] [--seed S]

Part 1: each sentence of ``data/entity_sentences.jsonl`` with the entities a reader
names in it (written before the rules ran on it); recall = the share of those the
rules find, precision = the share of what they find that is one of those, per language.
Part 2 (``--sessions``, default ``benchmarks/sessions/real/``): every session of the
manifest is distilled by the rules into one fresh store (as ``memctl ingest --wait``),
then ``--sample`` triples are drawn and printed with the memory that states each one:
judge each by hand (does the memory say it?). CPU seconds of the ingest are printed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memctl.api.ingest import IngestRequest, ingest  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.ingest.entities import entities  # noqa: E402
from memctl.store import graph as store  # noqa: E402
from memctl.store.memories import get_memories  # noqa: E402

REAL = Path(__file__).resolve().parent / "sessions" / "real"
# One sentence a line: its language, its text and the entities a reader names in it.
SENTENCES = Path(__file__).resolve().parent / "data" / "entity_sentences.jsonl"


def entity_scores() -> None:
    tally: dict[str, list[int]] = {}
    for line in SENTENCES.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        language, sentence, gold = record["language"], record["text"], set(record["entities"])
        found = {e.name for e in entities(sentence)}
        counts = tally.setdefault(language, [0, 0, 0, 0])  # gold, hit, found, right
        counts[0] += len(gold)
        counts[1] += len(gold & found)
        counts[2] += len(found)
        counts[3] += len(found & gold)
        missed, extra = gold - found, found - gold
        if missed or extra:
            print(f"  [{language}] {sentence}  missed {sorted(missed)} extra {sorted(extra)}")
    for language, (gold, hit, found, right) in tally.items():
        recall = 100 * hit / gold if gold else 0.0
        precision = 100 * right / found if found else 0.0
        print(f"{language}: recall {recall:.1f} % ({hit}/{gold}), precision {precision:.1f} %")


def triple_sample(directory: Path, sample: int, seed: int) -> None:
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(Path(home), overrides={"ingest.spawn_worker": False})
        with Context(settings) as ctx:
            began = time.process_time()
            for entry in manifest["sessions"]:
                transcript = str(directory / entry["file"])
                ingest(ctx, IngestRequest(transcript=transcript, client=entry["client"], wait=True))
            cpu = time.process_time() - began
            every = store.triples_touching(
                ctx.db, [e.id for e in store.entities_like(ctx.db, "", 100_000)], False, 100_000
            )
            counts = store.graph_counts(ctx.db)
            print(f"{len(manifest['sessions'])} sessions, ingest {cpu:.1f} s CPU: {counts}")
            chosen = random.Random(seed).sample(every, min(sample, len(every)))
            memories = get_memories(ctx.db, [t.sources[0].memory_id for t in chosen])
            for number, triple in enumerate(chosen, 1):
                memory = memories[triple.sources[0].memory_id]
                text = " ".join(memory.content.split())[:220]
                print(f"{number:3}. {triple.text}\n     <- {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, default=REAL)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    entity_scores()
    if args.sample:
        triple_sample(args.sessions, args.sample, args.seed)


if __name__ == "__main__":
    main()
