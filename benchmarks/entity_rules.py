"""The knowledge graph's rules, measured: entities found in English and CJK sentences, and
a sample of the triples distillation stores from real sessions, for a hand check.

    .venv/bin/python benchmarks/entity_rules.py [--sessions DIR] [--sample N] [--seed S]
        [--judged benchmarks/data/triple_judgements.jsonl]

Part 1: each sentence of ``data/entity_sentences.jsonl`` with the entities a reader
names in it (written before the rules ran on it), and the Chinese messages of a session
(``data/entity_session_zh.jsonl``); recall = the share of those the
rules find, precision = the share of what they find that is one of those, per language.
Part 2 (``--sessions``, default ``benchmarks/sessions/real/``): every session of the
manifest is distilled by the rules into one fresh store (as ``memctl ingest --wait``),
then ``--sample`` triples of the real sessions (``origin`` real in the manifest) are
drawn and printed with the session and the memory that states each one: judge each by
hand (does the memory say it, and does its transcript bear it out?). With ``--judged``,
the judgements written so (one JSON line each: ``triple``, ``session``, ``right``,
``why``) are read back instead: the drawn triples' precision, each wrong one with its
reason, and any drawn triple not judged yet (a rule changed since). CPU seconds of the
ingest are printed.
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
from memctl.store.memories import MemoryFilter, get_memories, list_memories  # noqa: E402

REAL = Path(__file__).resolve().parent / "sessions" / "real"
# One sentence a line: its language, its text and the entities a reader names in it.
SENTENCES = Path(__file__).resolve().parent / "data" / "entity_sentences.jsonl"
# The same for every short Chinese text message of the written Chinese session
# (sessions/real/cc2-written-zh-order.jsonl), the entities written after a first run.
SESSION_LINES = Path(__file__).resolve().parent / "data" / "entity_session_zh.jsonl"


def entity_scores() -> None:
    tally: dict[str, list[int]] = {}
    lines = [*SENTENCES.read_text(encoding="utf-8").splitlines()]
    lines += SESSION_LINES.read_text(encoding="utf-8").splitlines()
    for line in lines:
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


def _distilled(ctx: Context, directory: Path, sessions: list[dict]) -> dict[str, str]:  # type: ignore[type-arg]
    """Each session distilled by the rules into ``ctx``'s store; the file each memory came from."""
    origin: dict[str, str] = {}
    for entry in sessions:
        transcript = str(directory / entry["file"])
        ingest(ctx, IngestRequest(transcript=transcript, client=entry["client"], wait=True))
        for memory in list_memories(ctx.db, MemoryFilter(), None):
            origin.setdefault(memory.id, entry["file"])
    return origin


def _sampled(ctx: Context, origin: dict[str, str], real: set[str]) -> list[dict[str, str]]:
    """Every triple with its first source memory from a real session, as a judgement row."""
    every = store.triples_touching(
        ctx.db, [e.id for e in store.entities_like(ctx.db, "", 100_000)], False, 100_000
    )
    memories = get_memories(ctx.db, [t.sources[0].memory_id for t in every])
    rows = []
    for triple in every:
        memory = memories[triple.sources[0].memory_id]
        if origin.get(memory.id) in real:
            text = " ".join(memory.content.split())
            rows.append({"triple": triple.text, "session": origin[memory.id], "memory": text})
    return sorted(rows, key=lambda row: (row["session"], row["triple"]))


def triple_sample(directory: Path, sample: int, seed: int, judged: Path | None) -> None:
    """Distil every session of the manifest, draw ``sample`` triples of the real ones and
    print them; with ``judged`` (JSONL of ``triple``, ``session``, ``right``, ``why``),
    the precision of the judged triples the rules still state, and the ones not judged."""
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    real = {e["file"] for e in manifest["sessions"] if e.get("origin") == "real"}
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(Path(home), overrides={"ingest.spawn_worker": False})
        with Context(settings) as ctx:
            began = time.process_time()
            origin = _distilled(ctx, directory, manifest["sessions"])
            cpu = time.process_time() - began
            counts = store.graph_counts(ctx.db)
            rows = _sampled(ctx, origin, real)
    print(f"{len(manifest['sessions'])} sessions, ingest {cpu:.1f} s CPU: {counts}")
    print(f"{len(rows)} triples from the {len(real)} real sessions")
    chosen = random.Random(seed).sample(rows, min(sample, len(rows)))
    if judged is None:
        for number, row in enumerate(chosen, 1):
            print(f"{number:3}. {row['triple']}  [{row['session']}]\n     <- {row['memory'][:220]}")
        return
    verdicts = {
        (j["session"], j["triple"]): j
        for j in map(json.loads, judged.read_text(encoding="utf-8").splitlines())
    }
    drawn = [(row["session"], row["triple"]) for row in chosen]
    kept = [verdicts[key] for key in drawn if key in verdicts]
    right = sum(1 for j in kept if j["right"])
    for j in kept:
        if not j["right"]:
            print(f"  wrong: {j['triple']} [{j['session']}]: {j['why']}")
    for session, triple in drawn:
        if (session, triple) not in verdicts:
            print(f"  not judged: {triple} [{session}]")
    precision = 100 * right / len(kept) if kept else 0.0
    print(f"judged {len(kept)} of {len(chosen)} drawn: {right} right, precision {precision:.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, default=REAL)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--judged", type=Path, help="judgements to re-check (JSONL)")
    args = parser.parse_args()
    entity_scores()
    if args.sample:
        triple_sample(args.sessions, args.sample, args.seed, args.judged)


if __name__ == "__main__":
    main()
