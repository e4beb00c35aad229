"""The written profile against gold items, on the real sessions' projects (issue 38).

    .venv/bin/python benchmarks/profile_quality.py [--sessions DIR] [--lines] [--host-answers FILE]

Every session of the manifest (default ``benchmarks/sessions/real/``) is distilled by
the rules into one fresh store (as ``memctl ingest --wait``), or with ``--host-answers``
by the host path answered with recorded answers (``data/host_answers/gold-set.json``,
written by a model acting as the host; a task without one is answered empty), then
``maintain``'s graph and profile tasks run: the profile is the rules' (maintain writes it
with no model), over the memories either path made. A project's profile is the lines of
the scopes its sessions' memories are in. A gold item of ``data/profile_gold.json``
(written before this script first ran) is stated when one of those lines holds any of
its keywords; ``--lines`` prints every line with its section and sources, to read each
hit by hand. Also counted: lines citing no source, and lines citing a memory that is
not active.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memctl.api.distil import DistilRequest, PendingRequest, distil, pending  # noqa: E402
from memctl.api.ingest import IngestRequest, ingest  # noqa: E402
from memctl.api.maintain import MaintainRequest, maintain  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.model import State  # noqa: E402
from memctl.store.memories import MemoryFilter, get_memories, list_memories  # noqa: E402
from memctl.store.profile import ProfileLine, profile_lines  # noqa: E402

REAL = Path(__file__).resolve().parent / "sessions" / "real"
GOLD = Path(__file__).resolve().parent / "data" / "profile_gold.json"


def _answer(ctx: Context, file: str, answers: dict[tuple[str, int], list[Any]]) -> None:
    """Answer every waiting host task with the recorded answer of ``file``'s task."""
    while tasks := pending(ctx, PendingRequest(limit=100)).batches:
        for task in tasks:
            facts = answers.get((file, task.through_seq), [])
            distil(ctx, DistilRequest(task.session_id, task.through_seq, {"facts": facts}))


def _project_scopes(
    ctx: Context,
    directory: Path,
    sessions: list[dict],  # type: ignore[type-arg]
    answers: dict[tuple[str, int], list[Any]] | None,
) -> dict[str, set[str]]:
    """Distil each session; the scopes each manifest project's memories landed in."""
    scopes: dict[str, set[str]] = {}
    seen: set[str] = set()
    for entry in sessions:
        transcript = str(directory / entry["file"])
        ingest(ctx, IngestRequest(transcript=transcript, client=entry["client"], wait=True))
        if answers is not None:
            _answer(ctx, entry["file"], answers)
        for memory in list_memories(ctx.db, MemoryFilter(), None):
            if memory.id not in seen:
                seen.add(memory.id)
                scopes.setdefault(entry["project"], set()).add(memory.scope)
    return scopes


def _unsourced(ctx: Context, lines: list[ProfileLine]) -> int:
    """Lines citing no source, or a source that is not an active memory."""
    cited = get_memories(ctx.db, [m for line in lines for m in line.sources])
    return sum(
        1
        for line in lines
        if not line.sources
        or any(m not in cited or cited[m].state != State.ACTIVE for m in line.sources)
    )


def run(directory: Path, show_lines: bool, answers_file: Path | None) -> None:
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    gold = json.loads(GOLD.read_text(encoding="utf-8"))["projects"]
    answers = None
    if answers_file is not None:
        recorded = json.loads(answers_file.read_text(encoding="utf-8"))["answers"]
        answers = {(a["file"], a["through_seq"]): a["facts"] for a in recorded}
    overrides = {"ingest.spawn_worker": False, "ingest.host_distil": answers is not None}
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(Path(home), overrides={**overrides, "llm": "none"})
        with Context(settings) as ctx:
            scopes = _project_scopes(ctx, directory, manifest["sessions"], answers)
            began = time.process_time()
            maintain(ctx, MaintainRequest(only="graph,profile"))
            cpu = time.process_time() - began
            stated = total = unsourced = every = 0
            for project, items in gold.items():
                lines = profile_lines(ctx.db, tuple(sorted(scopes.get(project, set()))))
                every += len(lines)
                unsourced += _unsourced(ctx, lines)
                text = "\n".join(line.text for line in lines).casefold()
                hits = [i for i in items if any(k.casefold() in text for k in i["keywords"])]
                stated, total = stated + len(hits), total + len(items)
                print(f"{project}: {len(hits)}/{len(items)} stated, {len(lines)} lines")
                for item in items:
                    print(f"  [{'x' if item in hits else ' '}] {item['text']}")
                for line in lines if show_lines else []:
                    print(f"      {line.section}: {line.text}  <- {', '.join(line.sources)}")
    share = 100 * stated / total if total else 0.0
    print(f"stated {stated}/{total} = {share:.1f} %; {unsourced} of {every} lines lack a source")
    print(f"maintain graph,profile: {cpu:.2f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, default=REAL)
    parser.add_argument("--lines", action="store_true", help="print every profile line")
    parser.add_argument(
        "--host-answers", type=Path, help="distil by the host path with these recorded answers"
    )
    args = parser.parse_args()
    run(args.sessions, args.lines, args.host_answers)


if __name__ == "__main__":
    main()
