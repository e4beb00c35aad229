"""What a running `memctl mcp` does when the resident recall process ends under it (a forget
that takes text out, `memctl daemon stop`, its idle time): the search after, the one after
that, the server's resident set size, and whether a resident process serves the home.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/mcp_search_after_stop.py [--runs 3]

A data directory holds a few memories (the real local model). Each run starts a resident
process and `memctl mcp` through the MCP SDK's client, searches once, stops the resident
process (`memctl daemon stop`), then times two more searches (other words each: the same
query again reuses its vector) and reads the server's VmRSS. Prints the median of each.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from benchmarks.mcp_first_search import ENV, FACTS, memctl

QUERIES = ("how do we deploy to production?", "who reviews billing changes?", "staging restore")


def server_rss_mb() -> float:
    """VmRSS of this process's child (the MCP server the client started), in MB."""
    me = os.getpid()
    children = Path(f"/proc/{me}/task/{me}/children").read_text().split()
    for line in Path(f"/proc/{children[0]}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def session(home: Path) -> tuple[float, float, float, bool]:
    """Seconds of the search after the stop and of the next, the server's RSS (MB) at the
    end, and whether a resident process serves the home then."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memctl", "--home", str(home), "mcp"], env=ENV
    )
    times = []
    async with Client(params, mode="legacy") as client:
        await client.call_tool("memory_search", {"query": QUERIES[0]})
        memctl(home, "daemon", "stop")
        for query in QUERIES[1:]:
            began = time.perf_counter()
            await client.call_tool("memory_search", {"query": query})
            times.append(time.perf_counter() - began)
        rss = server_rss_mb()
    from memctl.integrations import resident

    return times[0], times[1], rss, resident.tell(home, "status") is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    seen = []
    with tempfile.TemporaryDirectory(prefix="memctl-mcp-stop-") as tmp:
        home = Path(tmp) / "home"
        for fact in FACTS:
            memctl(home, "-c", "recall.resident=off", "remember", fact)
        try:
            for _ in range(runs):
                memctl(home, "daemon", "start")
                seen.append(anyio.run(session, home))
        finally:
            memctl(home, "daemon", "stop")
    load = os.getloadavg()[0]
    print(f"{runs} MCP sessions; load {load:.2f} at the end")
    after = statistics.median(t[0] for t in seen) * 1000
    following = statistics.median(t[1] for t in seen) * 1000
    rss = statistics.median(t[2] for t in seen)
    served = sum(t[3] for t in seen)
    print(f"search after the stop p50 {after:.0f} ms; the next p50 {following:.0f} ms")
    print(f"server VmRSS p50 {rss:.0f} MB; a resident process serves the home in {served}/{runs}")


if __name__ == "__main__":
    main()
