"""What a host model (the assistant, through MCP) is handed to distil the gold-set sessions.

    .venv/bin/python benchmarks/host_tasks.py [--gold DIR] [--limit N]

Every session of the gold set (``benchmarks/sessions/real/``) is captured with
``ingest.host_distil`` on, then its tasks are fetched and answered with no
facts, ``--limit`` sessions a call, as ``memory_distill_tasks`` and
``memory_distill_apply`` would (a call hands out up to ``--limit`` tasks, a
session's consecutive tasks together). Prints, per session and in total: the tasks,
the calls, the tasks that hold a user line and a tool outcome, and the
characters of instructions against the characters of conversation the host
reads. Asserts nothing; it measures the shape of the work, not its quality
(that needs a model answering the tasks).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from memctl.api.distil import DistilRequest, PendingRequest, distil, pending
from memctl.api.ingest import IngestRequest, ingest
from memctl.config import load_settings
from memctl.context import Context
from memctl.embed.hashed import HashEmbedder

GOLD = Path(__file__).resolve().parent / "sessions" / "real"
USER_LINE = re.compile(r"^\[\d+\] user: ", re.M)
OUTCOME_LINE = re.compile(r"^\[\d+\] tool: .*→ (?:error|refused)", re.M)


@dataclass
class Shape:
    name: str
    tasks: int = 0
    calls: int = 0
    with_user: int = 0
    with_failure: int = 0
    instructions: int = 0
    conversation: int = 0


def measure(ctx: Context, directory: Path, entry: dict[str, str], limit: int) -> Shape:
    shape = Shape(entry["file"])
    request = IngestRequest(transcript=str(directory / entry["file"]), client=entry["client"])
    session_id = ingest(ctx, request).report.session_id
    while True:
        result = pending(ctx, PendingRequest(limit=limit))
        mine = [b for b in result.batches if b.session_id == session_id]
        if not mine:
            return shape
        shape.calls += 1
        shape.instructions += len(result.instructions) + len(json.dumps(result.schema))
        for task in mine:
            shape.tasks += 1
            shape.with_user += bool(USER_LINE.search(task.conversation))
            shape.with_failure += bool(OUTCOME_LINE.search(task.conversation))
            shape.conversation += len(task.conversation)
            distil(ctx, DistilRequest(task.session_id, task.through_seq, {"facts": []}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gold", type=Path, default=GOLD, help="the gold set's directory")
    parser.add_argument("--limit", type=int, default=3, help="tasks a call (the tool's default)")
    args = parser.parse_args()
    manifest = json.loads((args.gold / "manifest.json").read_text(encoding="utf-8"))
    overrides = {"ingest.spawn_worker": False, "llm": "none", "ingest.host_distil": True}
    shapes = []
    for entry in manifest["sessions"]:  # one store a session: its tasks are its own
        with tempfile.TemporaryDirectory() as home:
            settings = load_settings(Path(home), overrides=overrides)
            with Context(settings, embedder=HashEmbedder()) as ctx:
                shapes.append(measure(ctx, args.gold, entry, args.limit))
    print("| session | tasks | calls | user line | failed call | instructions | conversation |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in shapes:
        print(
            f"| {s.name} | {s.tasks} | {s.calls} | {s.with_user} | {s.with_failure} | "
            f"{s.instructions} | {s.conversation} |"
        )
    total = Shape("total")
    for s in shapes:
        for field in ("tasks", "calls", "with_user", "with_failure", "instructions"):
            setattr(total, field, getattr(total, field) + getattr(s, field))
        total.conversation += s.conversation
    print(
        f"\n{len(shapes)} sessions: {total.tasks} tasks in {total.calls} calls; "
        f"{total.with_user} tasks hold a user line, {total.with_failure} a failed or refused "
        f"call; instructions {total.instructions} characters, conversation "
        f"{total.conversation} characters"
    )


if __name__ == "__main__":
    main()
