"""Record a host model's answers to the gold set's distillation tasks, through MCP.

    .venv/bin/python benchmarks/host_record.py fetch --home DIR --out TASKS.json
    (a model acting as the host reads TASKS.json and writes ANSWERS.json)
    .venv/bin/python benchmarks/host_record.py apply --home DIR --answers ANSWERS.json

``fetch`` captures every session of the gold set (``benchmarks/sessions/real/``)
into a fresh store at ``--home`` with ``ingest.host_distil`` on, then starts
``memctl mcp`` and asks ``memory_distill_tasks`` for every waiting task through
the MCP SDK's client, as an assistant would; it writes the instructions, the
schema and the tasks (each with its session's file name) to ``--out``. It
never reads the gold lists. ``apply`` sends each recorded answer back with
``memory_distill_apply`` (with the stamp the task has now) and prints what each call
answered (a refusal names its reasons). ``benchmarks/session_quality.py --host-answers
ANSWERS.json`` replays the recorded answers into a fresh store and scores them.

ANSWERS.json: ``{"about": ..., "answers": [{"file", "first_seq", "through_seq",
"facts": [...]}]}``, one entry a task, a session's tasks in order.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memctl.api.ingest import IngestRequest, ingest  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402

GOLD = ROOT / "benchmarks" / "sessions" / "real"
HOST = ["ingest.spawn_worker=false", "llm=none", "ingest.host_distil=true"]
ALL_TASKS = 10_000  # one call hands out every waiting task


def server(home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memctl", *(a for c in HOST for a in ("-c", c)), "mcp"],
        # no resident recall process: it would outlive the temporary home by 20 minutes
        env={
            "MEMCTL_HOME": str(home),
            "PATH": os.environ.get("PATH", ""),
            "MEMCTL_RECALL_RESIDENT": "off",
        },
        cwd=home,
    )


def files_by_session(home: Path) -> dict[str, str]:
    return json.loads((home / "host-record-sessions.json").read_text(encoding="utf-8"))


def fetch(gold: Path, home: Path, out: Path) -> None:
    manifest = json.loads((gold / "manifest.json").read_text(encoding="utf-8"))
    overrides = {key: value for key, _, value in (c.partition("=") for c in HOST)}
    settings = load_settings(home, overrides=overrides)
    files = {}
    with Context(settings) as ctx:
        for entry in manifest["sessions"]:
            request = IngestRequest(
                transcript=str(gold / entry["file"]), client=entry["client"], wait=True
            )
            files[ingest(ctx, request).report.session_id] = entry["file"]
    (home / "host-record-sessions.json").write_text(json.dumps(files), encoding="utf-8")

    async def ask() -> dict[str, Any]:
        async with Client(server(home)) as client:
            result = await client.call_tool("memory_distill_tasks", {"limit": ALL_TASKS})
            return dict(result.structured_content or {})

    answer = anyio.run(ask)
    for task in answer["tasks"]:
        task["file"] = files[task["session_id"]]
    out.write_text(json.dumps(answer, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(answer['tasks'])} tasks of {len(files)} sessions written to {out}")


ALL_TASKS = 10_000  # of memory_distill_tasks: every task waiting in the gold set's store


def apply(home: Path, answers: Path) -> None:
    sessions = {file: sid for sid, file in files_by_session(home).items()}
    recorded = json.loads(answers.read_text(encoding="utf-8"))["answers"]

    async def send() -> None:
        async with Client(server(home)) as client:
            for entry in recorded:
                waiting = await client.call_tool("memory_distill_tasks", {"limit": ALL_TASKS})
                stamps = {
                    (t["session_id"], t["through_seq"]): t["stamp"]
                    for t in (waiting.structured_content or {}).get("tasks", [])
                }
                where = (sessions[entry["file"]], entry["through_seq"])
                arguments = {
                    "session_id": where[0],
                    "through_seq": where[1],
                    "stamp": stamps.get(where, ""),  # the task as it is now
                    "answer": {"facts": entry["facts"]},
                }
                result = await client.call_tool("memory_distill_apply", arguments)
                said = result.structured_content or "".join(
                    getattr(block, "text", "") for block in result.content
                )
                print(f"{entry['file']} ..{entry['through_seq']}: {said}")

    anyio.run(send)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["fetch", "apply"])
    parser.add_argument("--home", type=Path, required=True, help="the store (fresh for fetch)")
    parser.add_argument("--gold", type=Path, default=GOLD, help="the gold set's directory")
    parser.add_argument("--out", type=Path, help="fetch: where the tasks go")
    parser.add_argument("--answers", type=Path, help="apply: the recorded answers")
    args = parser.parse_args()
    if args.step == "fetch":
        fetch(args.gold, args.home, args.out or args.home / "tasks.json")
    else:
        apply(args.home, args.answers)


if __name__ == "__main__":
    main()
