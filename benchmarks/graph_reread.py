"""An older store's graph read again by the current entity rules (issue 38).

    # 1. two stores built by an older checkout's code (a tree of its files, e.g.
    #    mkdir OLD && git archive 80acb62 | tar -x -C OLD)
    .venv/bin/python benchmarks/graph_reread.py build --code OLD --home DIR
    # 2. read again by this checkout's code
    .venv/bin/python benchmarks/graph_reread.py reread --home DIR

``build`` takes every session of ``sessions/real/`` (its manifest) into ``DIR/rules`` by the
rules (the default path, as ``memctl ingest --wait``) and into ``DIR/host`` by the host path,
answered with the recorded answers of ``data/host_answers/gold-set.json`` (written by a
model acting as the host). Those answers give no triples, so the first fact of each is
sent with one scripted triple (the session's file → "states" → the fact's abstract): it
stands for a triple a host gave, and must survive. ``maintain --only graph`` then runs,
as the older memctl's cron would have.

``reread`` opens each store with this code (the migration marks a triple of a memory a
model wrote as of unknown origin), counts the person, place and organisation names the
graph holds and the triples by origin, runs ``maintain --only graph`` (which reads every
memory again, as the rules' version changed), and counts again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REAL = HERE / "sessions" / "real"
ANSWERS = HERE / "data" / "host_answers" / "gold-set.json"
NAMED = ("person", "place", "organisation")
SCRIPTED = "states"  # the scripted host triples' predicate


def _answers(file: str, through: int, recorded: dict[tuple[str, int], list[Any]]) -> list[Any]:
    facts = [dict(f) for f in recorded.get((file, through), [])]
    if facts:
        facts[0]["triples"] = [[file, SCRIPTED, facts[0]["l0_abstract"][:100]]]
    return facts


def build(home: Path) -> None:
    from memctl.api.distil import DistilRequest, PendingRequest, distil, pending
    from memctl.api.ingest import IngestRequest, ingest
    from memctl.api.maintain import MaintainRequest, maintain
    from memctl.config import load_settings
    from memctl.context import Context

    manifest = json.loads((REAL / "manifest.json").read_text(encoding="utf-8"))["sessions"]
    recorded = {
        (a["file"], a["through_seq"]): a["facts"]
        for a in json.loads(ANSWERS.read_text(encoding="utf-8"))["answers"]
    }
    for path, host in (("rules", False), ("host", True)):
        overrides = {"ingest.spawn_worker": False, "ingest.host_distil": host, "llm": "none"}
        with Context(load_settings(home / path, overrides=overrides)) as ctx:
            for entry in manifest:
                transcript = str(REAL / entry["file"])
                ingest(ctx, IngestRequest(transcript=transcript, client=entry["client"], wait=True))
                while host and (tasks := pending(ctx, PendingRequest(limit=100)).batches):
                    for task in tasks:
                        facts = _answers(entry["file"], task.through_seq, recorded)
                        request = DistilRequest(task.session_id, task.through_seq, {"facts": facts})
                        distil(ctx, request)
            maintain(ctx, MaintainRequest(only="graph"))
        print(f"built {home / path}")


def _counts(home: Path) -> dict[str, Any]:
    from memctl.config import load_settings
    from memctl.context import Context
    from memctl.store import graph as store

    with Context(load_settings(home, overrides={"ingest.spawn_worker": False})) as ctx:
        every = store.entities_like(ctx.db, "", 1_000_000)
        named = sorted(e.name for e in every if e.kind in NAMED)
        found = store.triples_touching(ctx.db, [e.id for e in every], False, 1_000_000)
        origins: dict[str, int] = {}
        for triple in {t.id: t for t in found}.values():
            for source in triple.sources:
                origins[source.origin] = origins.get(source.origin, 0) + 1
        scripted = sum(t.predicate == SCRIPTED for t in {t.id: t for t in found}.values())
        return {
            "entities": len(every),
            "named": len(named),
            "names": named,
            "triples": len({t.id for t in found}),
            "superseded": sum(t.state == "superseded" for t in {t.id: t for t in found}.values()),
            "sources by origin": origins,
            "scripted host triples": scripted,
        }


def reread(home: Path, show: bool) -> None:
    from memctl.api.maintain import MaintainRequest, maintain
    from memctl.config import load_settings
    from memctl.context import Context

    for path in ("rules", "host"):
        before = _counts(home / path)
        with Context(load_settings(home / path, overrides={"ingest.spawn_worker": False})) as ctx:
            began = time.process_time()
            task = maintain(ctx, MaintainRequest(only="graph")).tasks[0]
            cpu = time.process_time() - began
        after = _counts(home / path)
        print(f"## {path}: maintain --only graph {task.counts}, {cpu:.2f} s CPU")
        for key in before:
            if key != "names":
                print(f"  {key}: {before[key]} -> {after[key]}")
        gone = sorted(set(before["names"]) - set(after["names"]))
        print(f"  names gone ({len(gone)}): {', '.join(gone) if show else gone[:40]}")
        if show:
            print(f"  names left ({after['named']}): {', '.join(after['names'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("build", "reread"))
    parser.add_argument("--home", type=Path, required=True, help="where the two stores go")
    parser.add_argument("--code", type=Path, help="build: the older checkout's files")
    parser.add_argument("--names", action="store_true", help="reread: print every name")
    args = parser.parse_args()
    sys.path.insert(0, str(args.code.resolve() if args.code else HERE.parent))
    if args.step == "build":
        build(args.home)
    else:
        reread(args.home, args.names)


if __name__ == "__main__":
    main()
