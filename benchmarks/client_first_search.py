"""How long the first `memory_search` of a session takes inside the real Claude Code and
Codex (issue 37: at most 300 ms on a quiet machine): each client runs headless against the
scripted model of tests/e2e, which calls `memory_search` twice in one session; a search's
time is from the model's answer holding the tool call (its last byte sent) to the next
request, which carries the tool's result, reaching the model server. So it holds the
client's own work around the call (its MCP client, permission checks) as well as memctl's.

    python -m benchmarks.client_first_search [--runs N] [--clients DIR] [--only NAME]

Two starts take turns: "resident warm" (the resident recall process already runs, as
after an earlier session) and "cold" (it was stopped: the session-start hook starts it
while the session starts). Prints, per client and start, the median and the largest
first search, the median second search (memctl warm: the client's own share), and how
long after the client started the first call came; asserts nothing. Needs node and
the clients from scripts/install-clients (or --clients DIR).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FACTS = (
    "We deploy with make release from the main branch.",
    "Alice reviews every change to the billing code.",
    "The staging database is restored every night at two.",
)
PROMPT = "SEARCH: how do we deploy AGAIN: who reviews billing changes?"
STARTS = ("resident warm", "cold")
IDLE = "600"  # seconds the resident process stays: through every run of a client


def claude_argv(e2e: Any, world: Any) -> list[str]:
    tool = "mcp__memctl__memory_search"
    return ["-p", PROMPT, "--output-format", "json", "--allowedTools", tool]


def codex_argv(e2e: Any, world: Any) -> list[str]:
    return [*e2e.codex_args(world, "--dangerously-bypass-hook-trust"), PROMPT]


def anthropic_step(plan: dict[str, Any]) -> str:
    """Which step of the script a request's answer is: search, again, answer or other."""
    if plan.get("id") == "toolu_search":
        return "search"
    if plan.get("id") == "toolu_again":
        return "again"
    return "answer" if str(plan.get("text", "")).startswith("Memory says:") else "other"


def responses_step(plan: dict[str, Any]) -> str:
    call = plan.get("call")
    if call:
        return "search" if call == 1 else "again"
    return "answer" if str(plan.get("text", "")).startswith("Memory says:") else "other"


def timeline(model: Any, path: str, start: int, began: float) -> dict[str, float] | None:
    """The session's two searches (ms) and when the first was asked for (s after the
    client started), from the scripted model's requests after ``start``; None when the
    session did not make both calls."""
    from tests.e2e import model_server

    plan, step = (
        (model_server.anthropic_plan, anthropic_step)
        if path == "/v1/messages"
        else (model_server.responses_plan, responses_step)
    )
    with model.lock:
        seen = list(zip(model.requests[start:], model.times[start:], strict=True))
    steps = [(step(plan(body)), times) for (p, body), times in seen if p.startswith(path)]
    order = [name for name, _ in steps]
    if not all(name in order for name in ("search", "again", "answer")):
        return None
    at = {name: times for name, times in reversed(steps)}  # each step's first request
    return {
        "first": (at["again"][0] - at["search"][1]) * 1000,
        "second": (at["answer"][0] - at["again"][1]) * 1000,
        "asked": at["search"][1] - began,
    }


def sessions(
    e2e: Any, binary: Path, argv: Callable[[Any, Any], list[str]], tool: str, runs: int
) -> dict[str, list[dict[str, float]]]:
    """``runs`` sessions of each start, taking turns, in one temporary home."""
    from tests.e2e.model_server import scripted_model

    path = "/v1/messages" if tool == "claude-code" else "/v1/responses"
    found: dict[str, list[dict[str, float]]] = {start: [] for start in STARTS}
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp, scripted_model() as model:
        world = e2e.World(Path(tmp), model)
        world.env["MEMCTL_RECALL_RESIDENT_IDLE"] = IDLE
        world.memctl("init", "--tool", tool)
        world.memctl("install", tool)
        for fact in FACTS:
            world.memctl("-c", "recall.resident=off", "remember", fact)
        try:
            for _ in range(runs):
                for start in STARTS:
                    world.memctl("daemon", "stop" if start == "cold" else "start")
                    first = len(model.requests)
                    began = time.monotonic()
                    done = world.run(binary, *argv(e2e, world))
                    times = timeline(model, path, first, began)
                    if done.returncode or times is None:
                        print(f"  {tool} {start}: no two searches ({done.stderr[-300:]!r})")
                        continue
                    found[start].append(times)
                    world.memories()  # the capture the session's end queued is done
        finally:
            world.memctl("daemon", "stop")
    return found


CLIENTS = {"claude-code": ("claude", claude_argv), "codex": ("codex", codex_argv)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="sessions per client and start")
    parser.add_argument("--clients", type=Path, help="where scripts/install-clients put them")
    parser.add_argument("--only", choices=sorted(CLIENTS), help="one client")
    args = parser.parse_args()
    if args.clients:
        os.environ["MEMCTL_CLIENTS_DIR"] = str(args.clients)
    from tests.e2e import test_clients as e2e  # reads MEMCTL_CLIENTS_DIR when imported

    os.environ.pop("MEMCTL_CLIENTS_DIR", None)  # not a memctl setting: read once, above
    print(f"load {os.getloadavg()[0]:.2f} at the start", flush=True)
    header = f"{'client':<12} {'start':<14} {'runs':>4} {'first p50':>10} {'first max':>10}"
    print(f"{header} {'second p50':>11} {'asked at':>9}", flush=True)
    for tool, (name, argv) in CLIENTS.items():
        if args.only and tool != args.only:
            continue
        binary = e2e.BIN / name
        if not binary.exists():
            print(f"{tool:<12} not installed in {e2e.CLIENTS}")
            continue
        for start, seen in sessions(e2e, binary, argv, tool, args.runs).items():
            if not seen:
                continue
            first = [s["first"] for s in seen]
            print(
                f"{tool:<12} {start:<14} {len(seen):>4} {statistics.median(first):>7.0f} ms"
                f" {max(first):>7.0f} ms {statistics.median(s['second'] for s in seen):>8.0f} ms"
                f" {statistics.median(s['asked'] for s in seen):>7.1f} s",
                flush=True,
            )
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
