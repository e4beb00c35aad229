"""The profile's stack over conversations (LoCoMo): does a chat about films and trainers
give its user a "Stack" of YouTube, Netflix and Nike? (issue 38)

    .venv/bin/python benchmarks/profile_stacks.py --data locomo.json [--limit N]

Per conversation a fresh store, every dialog turn one memory as the LoCoMo benchmark
stores it (``[8 May 2023] Caroline: ...``, benchmarks/haystack.py), then ``maintain``'s
graph and profile tasks. Printed: each conversation's stack lines, each name marked
``brand`` when only simple-icons lists it (ingest/entities.py ``brand_only``), and
the totals: stack lines, brand lines, and the CPU of the two tasks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.haystack import BENCH_SCOPE, turn_memory  # noqa: E402
from benchmarks.locomo import load  # noqa: E402
from memctl.api.maintain import MaintainRequest, maintain  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.ingest.entities import brand_only  # noqa: E402
from memctl.store.memories import insert_memory  # noqa: E402
from memctl.store.profile import profile_lines  # noqa: E402


def stack(turn_memories: list, home: Path) -> tuple[list[str], float]:  # type: ignore[type-arg]
    """The stack lines of a store holding these memories, and the CPU of graph and profile."""
    settings = load_settings(home, overrides={"llm": "none", "ingest.spawn_worker": False})
    with Context(settings) as ctx:
        with ctx.db.atomic():
            for memory in turn_memories:
                insert_memory(ctx.db, memory, None)
        began = time.process_time()
        maintain(ctx, MaintainRequest(only="graph,profile"))
        cpu = time.process_time() - began
        lines = profile_lines(ctx.db, (BENCH_SCOPE,))
    return [line.text for line in lines if line.section == "stack"], cpu


def run(data: Path, limit: int | None) -> None:
    total = brands = 0
    cpu = 0.0
    for conversation in load(data)[:limit]:
        memories = [turn_memory(turn, f"locomo:{turn.key}") for turn in conversation.turns]
        with tempfile.TemporaryDirectory() as home:
            names, spent = stack(memories, Path(home))
        cpu += spent
        marked = [f"{n} (brand)" if brand_only(n) else n for n in names]
        print(f"{conversation.sample_id}: {len(memories)} turns; stack: {', '.join(marked) or '-'}")
        total += len(names)
        brands += sum(1 for n in names if brand_only(n))
    print(f"stack lines {total}, brands {brands}; maintain graph,profile {cpu:.2f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo JSON file")
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    args = parser.parse_args()
    run(args.data, args.limit)


if __name__ == "__main__":
    main()
