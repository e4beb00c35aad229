"""How long the first `memory_search` of a session takes inside the real Claude Code and
Codex (issue 37: at most 300 ms on a quiet machine): each client runs headless against the
scripted model of tests/e2e, which calls `memory_search` twice in one session; a search's
time is from the model's answer holding the tool call (its last byte sent) to the next
request, which carries the tool's result, reaching the model server. So it holds the
client's own work around the call (its MCP client, permission checks) as well as memctl's.
memctl's share ("in memctl") is timed by a relay (benchmarks/mcp_relay.py) that the
client's MCP entry starts in front of `memctl mcp`: from the call's line reaching the
server to its answer's line leaving it.

    python -m benchmarks.client_first_search [--runs N] [--clients DIR] [--only NAME]

Two starts take turns: "resident warm" (the resident recall process already runs, as
after an earlier session) and "cold" (it was stopped: the session-start hook starts it
while the session starts). Prints, per client and start, the median and the largest
first search (in the client and in memctl), the median second search (memctl warm), and
how long after the client started the first call came; asserts nothing. Needs node and
the clients from scripts/install-clients (or --clients DIR).
"""

from __future__ import annotations

import argparse
import json
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
RELAY = Path(__file__).with_name("mcp_relay.py")


def relayed(world: Any, tool: str, log: Path) -> None:
    """Put the relay in front of memctl's MCP server in the client's config."""
    if tool == "claude-code":
        path = world.home / ".claude.json"
        config = json.loads(path.read_text())
        entry = config["mcpServers"]["memctl"]
        entry["args"] = [str(RELAY), str(log), entry["command"], *entry["args"]]
        entry["command"] = sys.executable
        path.write_text(json.dumps(config))
        return
    path = world.home / ".codex" / "config.toml"
    text = path.read_text()
    program = text.split('command = "', 1)[1].split('"', 1)[0]
    text = text.replace(f'command = "{program}"', f'command = "{sys.executable}"', 1)
    text = text.replace("args = [", f'args = ["{RELAY}", "{log}", "{program}", ', 1)
    path.write_text(text)


def served(log: Path, start: int) -> list[float]:
    """ms each tools/call took in memctl, in order, from the relay's lines after ``start``."""
    lines = [json.loads(line) for line in log.read_text().splitlines()[start:]]
    asked = {e["id"]: e["at"] for e in lines if e["way"] == "in" and e["method"] == "tools/call"}
    return [
        (e["at"] - asked[e["id"]]) * 1000
        for e in lines
        if e["way"] == "out" and e["method"] is None and e["id"] in asked
    ]


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
        log = Path(tmp) / "relay.jsonl"
        log.touch()
        relayed(world, tool, log)
        for fact in FACTS:
            world.memctl("-c", "recall.resident=off", "remember", fact)
        try:
            for _ in range(runs):
                for start in STARTS:
                    world.memctl("daemon", "stop" if start == "cold" else "start")
                    first = len(model.requests)
                    logged = len(log.read_text().splitlines())
                    began = time.monotonic()
                    done = world.run(binary, *argv(e2e, world))
                    times = timeline(model, path, first, began)
                    inside = served(log, logged)
                    if done.returncode or times is None or len(inside) != 2:
                        print(f"  {tool} {start}: no two searches ({done.stderr[-300:]!r})")
                        continue
                    found[start].append({**times, "memctl": inside[0], "memctl2": inside[1]})
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
    print(f"{header} {'in memctl':>10} {'max':>7} {'second':>8} {'in memctl':>10} {'asked at':>9}")
    print(f"{'':<32} {'(p50 ms)':>21} {'':>18} {'(p50 ms)':>19}", flush=True)
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
            ms = {key: [s[key] for s in seen] for key in seen[0]}
            print(
                f"{tool:<12} {start:<14} {len(seen):>4} {statistics.median(ms['first']):>10.0f}"
                f" {max(ms['first']):>10.0f} {statistics.median(ms['memctl']):>10.0f}"
                f" {max(ms['memctl']):>7.0f} {statistics.median(ms['second']):>8.0f}"
                f" {statistics.median(ms['memctl2']):>10.0f}"
                f" {statistics.median(ms['asked']):>7.1f} s",
                flush=True,
            )
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
