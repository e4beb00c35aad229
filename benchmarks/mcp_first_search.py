"""How long an assistant waits for the first `memory_search` of a session (issue 37: 4.7-5.3 s
on a loaded machine, the MCP server loading the embedding model itself).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/mcp_first_search.py [--runs 5] [--pause 0]

A data directory holds a few memories (embedded with the real local model, whose packed
cache then exists). Each run starts `memctl mcp` through the MCP SDK's client, as an
assistant does, waits for the handshake and the tool list (answered early by
``mcp_front`` while the SDK is still importing), waits ``--pause`` seconds (an
assistant's first turn: the SDK has loaded by then), then times the first and the
second `memory_search` (the second for comparison: the model is loaded by then, in one
process or the other). With no pause the first search waits for the store to open and
the server's warm-up (``mcp_front`` answers it without the SDK). Two set-ups take
turns: "in process" (`recall.resident` off: the server loads
the model) and "resident" (a resident recall process started once before the runs,
stopped after: the server asks it for the query's vector). Prints the median and the
largest wall time of each. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

FACTS = (
    "We deploy with make release from the main branch.",
    "The staging database is restored every night at two.",
    "Alice reviews every change to the billing code.",
    "Integration tests need the fake payment server on port 8088.",
)
QUERIES = ("how do we deploy to production?", "who reviews billing changes?")
ENV = {**os.environ, "MEMCTL_LLM": "none", "MEMCTL_RECALL_RESIDENT_IDLE": "3600"}
SETUPS = {"in process": {"MEMCTL_RECALL_RESIDENT": "off"}, "resident": {}}


def memctl(home: Path, *args: str) -> None:
    command = [sys.executable, "-m", "memctl", "--home", str(home), *args]
    subprocess.run(command, env=ENV, check=True, capture_output=True)


async def session(home: Path, env: dict[str, str], pause: float) -> tuple[float, float]:
    """Seconds of the first and the second memory_search of one MCP session."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memctl", "--home", str(home), "mcp"],
        env={**ENV, **env},
    )
    times = []
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        await anyio.sleep(pause)
        for query in QUERIES:
            began = time.perf_counter()
            found = await client.call_tool("memory_search", {"query": query})
            times.append(time.perf_counter() - began)
            assert json.loads(found.content[0].text)["results"]  # type: ignore[union-attr]
    return times[0], times[1]


@contextmanager
def home_with_facts(prefix: str) -> Iterator[Path]:
    """A new data directory holding FACTS, its resident recall process running (as the
    session-start hook leaves one); stopped and removed after."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        home = Path(tmp) / "home"
        for fact in FACTS:
            memctl(home, "-c", "recall.resident=off", "remember", fact)
        memctl(home, "daemon", "start")
        try:
            yield home
        finally:
            memctl(home, "daemon", "stop")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds before the first")
    args = parser.parse_args()
    runs = args.runs
    with home_with_facts("memctl-mcp-bench-") as home:
        seen: dict[str, list[tuple[float, float]]] = {name: [] for name in SETUPS}
        for _ in range(runs):
            for name, env in SETUPS.items():
                seen[name].append(anyio.run(session, home, env, args.pause))
    load = os.getloadavg()[0]
    print(f"{runs} MCP sessions each, {args.pause:g} s pause; load {load:.2f} at the end")
    print(f"{'set-up':<12} {'first p50':>10} {'first max':>10} {'second p50':>11}")
    for name, times in seen.items():
        first = [t[0] * 1000 for t in times]
        second = [t[1] * 1000 for t in times]
        print(
            f"{name:<12} {statistics.median(first):>8.0f} ms {max(first):>7.0f} ms"
            f" {statistics.median(second):>8.0f} ms"
        )


if __name__ == "__main__":
    main()
