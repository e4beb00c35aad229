"""Does `memctl maintain` keep recall working? LoCoMo turns stored as episodes, recall before
and after maintenance (rules; and an LLM through the scripted Ollama server).

    .venv/bin/python benchmarks/maintain_quality.py --data locomo-dev.json \
        [--conversations 1] [--cache /tmp/memctl-bench]

Per conversation a fresh store holds every dialog turn as an episodic memory
(benchmarks/haystack.py), embedded with the local MiniLM through the embedding
cache. Recall@k of the questions' evidence turns is measured (the full recall
pipeline, no as-of date, so memories maintain creates are visible), then
maintain runs with its clock one day after the last session, again and again
with the default per-run limits until a run changes nothing, and recall is
measured again. A memory maintain made from an episode counts as that turn (its
``source`` names the episode). Three variants: every task, every task but
archive (both with the rules), and every task but archive with an LLM: the
scripted Ollama server of the tests (tests/ollama_server.py, on loopback,
through the real client), whose "model" restates each user line it is asked to
extract from as one fact (speaker kept, date dropped), answers reconcile with no
decision (the rules decide) and merges notes by joining them. It measures the
LLM path's plumbing, not a model's judgement. Prints the active memory counts
and Recall@k before and after.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.embedcache import open_cache  # noqa: E402
from benchmarks.haystack import BenchStores, Turn  # noqa: E402
from benchmarks.locomo import Conversation, load  # noqa: E402
from benchmarks.metrics import distinct, recall_at  # noqa: E402
from memctl.api.maintain import MaintainRequest, maintain  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.retrieve.pipeline import recall  # noqa: E402
from memctl.store.memories import counts_by, get_memories  # noqa: E402
from tests.ollama_server import FakeOllama  # noqa: E402

KS = (10, 50)
MAX_RUNS = 300
SOURCE = "memory:"
USER_LINE = re.compile(r"^\[(\d+)\] user: (?:\[[^\]]*\] )?(.+)$")
RULES = {"every task": "jobs,upkeep,sync", "every task but archive": "jobs,upkeep,sync,archive"}
LLM_VARIANT = ("every task but archive, LLM (scripted)", "jobs,upkeep,sync,archive")


def scripted_llm(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The scripted model's answer to one chat request (see the module docstring)."""
    system, prompt = messages[0]["content"], messages[-1]["content"]
    if system.startswith("You extract"):
        lines = [m for m in map(USER_LINE.match, prompt.splitlines()) if m]
        facts = [
            {
                "content": m[2],
                "l0_abstract": m[2][:120],
                "category": "entities",
                "importance": 0.7,
                "confidence": 0.9,
                "source_message": int(m[1]),
            }
            for m in lines
        ]
        return {"facts": facts}
    if system.startswith("You merge"):
        notes = [line[2:] for line in prompt.splitlines() if line.startswith("- ")]
        return {"content": " ".join(dict.fromkeys(notes))}
    return {"decisions": []}


def keys(ctx: Context, ids: list[str], turns: dict[str, Turn]) -> list[str]:
    """The turn each recalled memory stands for: its own, or the episode it came from."""
    found = get_memories(ctx.db, ids)
    out = []
    for memory_id in ids:
        origin = found[memory_id].source.removeprefix(SOURCE) if memory_id in found else ""
        turn = turns.get(memory_id) or turns.get(origin)
        out.append(turn.key if turn else memory_id)
    return distinct(out)


def score(ctx: Context, conversation: Conversation, turns: dict[str, Turn]) -> dict[int, float]:
    totals = dict.fromkeys(KS, 0.0)
    for case in conversation.cases:
        found = recall(ctx, case.question.text, max(KS), touch=False)
        ranked = keys(ctx, [r.memory.id for r in found.results if not r.is_message], turns)
        for k in KS:
            totals[k] += recall_at(ranked, case.evidence, k)
    return {k: v / max(1, len(conversation.cases)) for k, v in totals.items()}


def maintain_until_quiet(ctx: Context, conversation: Conversation, skip: str) -> int:
    """Runs until one changes nothing; how many ran."""
    now = max(t.at for t in conversation.turns) + timedelta(days=1)
    for number in range(1, MAX_RUNS + 1):
        report = maintain(ctx, MaintainRequest(skip=skip, now=now))
        if not any(t.changes for t in report.tasks if t.task != "decay"):
            return number
    return MAX_RUNS


def active(ctx: Context) -> int:
    return counts_by(ctx.db, "state").get("active", 0)


def row(
    conversation: Conversation, name: str, ctx: Context, turns: dict[str, Turn], runs: str
) -> str:
    scores = score(ctx, conversation, turns)
    cells = " | ".join(f"{scores[k]:.3f}" for k in KS)
    return f"| {conversation.sample_id} | {name} | {active(ctx)} | {cells} | {runs} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "memctl-bench")
    args = parser.parse_args()
    settings = load_settings(overrides={"llm": "none"})
    cache = open_cache(settings, args.cache)
    header = " | ".join(f"R@{k}" for k in KS)
    print(f"| conversation | variant | active memories | {header} | runs |")
    with FakeOllama() as server:
        server.chat_fn = scripted_llm
        llm = load_settings(overrides={"llm": "ollama", "ollama.host": server.url})
        with BenchStores(settings, cache) as stores, BenchStores(llm, cache) as llm_stores:
            for conversation in load(args.data)[: args.conversations]:
                source = f"locomo:{conversation.sample_id}"
                variants = [(n, skip, stores) for n, skip in RULES.items()]
                variants.append((*LLM_VARIANT, llm_stores))
                for number, (name, skip, where) in enumerate(variants):
                    ctx, turns = where.haystack(conversation.turns, source)
                    if number == 0:
                        print(row(conversation, "before", ctx, turns, "-"), flush=True)
                    runs = maintain_until_quiet(ctx, conversation, skip)
                    print(row(conversation, name, ctx, turns, str(runs)), flush=True)
                    where.discard(ctx)


if __name__ == "__main__":
    main()
