"""How long the assistants wait for memctl's hooks, and for its MCP server.

    .venv/bin/python benchmarks/hooks_speed.py [--runs 10] [--n 10000] [--skip-hooks]

Wall-clock of real processes (Python start-up included), as a client meets them:

- the capture hook: `memctl hook claude-code Stop` with a 200-message Claude Code
  transcript on its JSON (a new session each run; no worker started);
- the session-start hook: `memctl hook claude-code SessionStart`, which recalls
  the context block for the project (the local MiniLM embedder loads each time);
  (CPU time of each hook process is printed too: on a busy machine it says more
  than the wall-clock);
- `memctl mcp`: from start to the answers to the handshake (`initialize`; in the
  2026-07-28 protocol Claude Code speaks, `server/discover`) and to `tools/list`,
  through the SDK's client, at a first start (no answers kept in the data directory:
  `memctl.integrations.mcp_front` answers from the ones memctl ships, if any; before
  them, the SDK answered) and with kept answers, taking turns; run it with
  PYTHONPATH=<an older checkout> for that code's figures;
- a warm `memory_search` over the server (the embedder loaded by a first search),
  p50 and p95 over --runs searches, with --n synthetic memories (the store of
  benchmarks/bench_store.py, built once and cached).

Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from bench_store import PROJECT, fresh_home  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from benchmarks.synthetic import QUERIES  # noqa: E402
from benchmarks.transcripts import claude_code_lines  # noqa: E402
from memctl.integrations.mcp_front import ANSWERS_FILE  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# the SDK client's modes: the initialize handshake (Codex), or the 2026-07-28 protocol
HANDSHAKES = {"legacy": "initialize", "auto": "server/discover"}
ENV["MEMCTL_LLM"] = "none"
ENV["MEMCTL_RECALL_RESIDENT"] = "off"  # hooks in their own process (process_speed.py: resident)


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def hook(home: Path, event: str, payload: dict[str, object], cwd: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one hook process. No worker is started: since the slow
    path distils every message it runs for tens of seconds, and would compete with the
    timing (starting one is a fork, timed by benchmarks/ingest_speed.py)."""
    cpu = child_cpu()
    began = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memctl",
            "--home",
            str(home),
            "-c",
            "ingest.spawn_worker=false",
            "hook",
            "claude-code",
            event,
        ],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=ENV,
        cwd=cwd,
    )
    elapsed = time.perf_counter() - began
    assert done.returncode == 0 and not done.stderr, done.stderr
    return elapsed, child_cpu() - cpu


def report(name: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(f"{name:<42} p50 {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms   n={len(ms)}")


def time_hooks(runs: int, work: Path) -> None:
    home, project = work / "hooks-home", work / "project"
    project.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "memctl",
            "--home",
            str(home),
            "import",
            str(ROOT / "examples" / "memories.jsonl"),
        ],
        check=True,
        capture_output=True,
        env=ENV,
        cwd=project,
    )
    capture = []
    for run in range(runs):
        transcript = work / f"session-{run}.jsonl"
        transcript.write_text("\n".join(claude_code_lines(200, f"bench-{run}")) + "\n")
        payload = {
            "session_id": f"bench-{run}",
            "transcript_path": str(transcript),
            "cwd": str(project),
        }
        capture.append(hook(home, "Stop", payload, project))
    start = [
        hook(home, "SessionStart", {"session_id": "s", "cwd": str(project)}, project)
        for _ in range(runs)
    ]
    report("capture hook (Stop, 200 messages)", [wall for wall, _ in capture])
    report("  its CPU time", [cpu for _, cpu in capture])
    report("session-start hook (context block)", [wall for wall, _ in start])
    report("  its CPU time", [cpu for _, cpu in start])


async def time_mcp(home: Path, runs: int) -> dict[str, list[float]]:
    """Seconds from spawn to the handshake answered and to ``tools/list`` answered, at a
    first start (no kept answers) and with kept answers, in both protocols; then warm
    searches."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memctl", "--home", str(home), "mcp"], env=ENV
    )
    figures: dict[str, list[float]] = {}
    for _ in range(runs):
        for mode, kept in (("legacy", False), ("legacy", True), ("auto", False), ("auto", True)):
            if not kept:
                (home / ANSWERS_FILE).unlink(missing_ok=True)
            began = time.perf_counter()
            async with Client(params, mode=mode) as client:
                started = time.perf_counter() - began
                await client.list_tools()
                listed = time.perf_counter() - began
            name = f"{HANDSHAKES[mode]}, {'kept answers' if kept else 'first start'}"
            figures.setdefault(f"handshake, {name}", []).append(started)
            figures.setdefault(f"tools/list, {name}", []).append(listed)
    async with Client(params, mode="legacy") as client:
        await client.call_tool("memory_search", {"query": "warm up", "all_scopes": True})
        for i in range(max(runs, 20)):
            began = time.perf_counter()
            result = await client.call_tool(
                "memory_search", {"query": QUERIES[i % len(QUERIES)], "all_scopes": True}
            )
            figures.setdefault("search", []).append(time.perf_counter() - began)
            assert not result.is_error, result
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--n", type=int, default=10_000, help="memories for memory_search")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--skip-hooks", action="store_true", help="only the MCP figures")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "memctl", quiet=1)
    work = Path(tempfile.mkdtemp(prefix="memctl-hooks-bench-"))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; project scope {PROJECT}")
    if not args.skip_hooks:
        time_hooks(args.runs, work)
    cache = args.cache or Path(tempfile.gettempdir()) / "memctl-bench-cache" / str(args.n)
    home = fresh_home(args.n, cache, work / "mcp-home")
    figures = anyio.run(time_mcp, home, args.runs)
    for handshake in HANDSHAKES.values():
        for start in ("first start", "kept answers"):
            name = f"{handshake}, {start}"
            report(f"memctl mcp: {name}: answered", figures[f"handshake, {name}"])
            report("  tools/list answered", figures[f"tools/list, {name}"])
    report(f"warm memory_search over {args.n:,} memories", figures["search"])


if __name__ == "__main__":
    main()
