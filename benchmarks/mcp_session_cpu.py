"""What one `memctl mcp` session costs: the server's CPU (user + sys) and wall, for a
session of the handshake, the tool list and one `memory_search`, and for one that then
stores a memory (`memory_store`, which only the MCP SDK answers).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/mcp_session_cpu.py [--runs 10]

A data directory holds a few memories (those of benchmarks/mcp_first_search.py), and a
resident recall process runs (started once, stopped after), as the session-start hook
leaves one. Each run starts `python -m memctl mcp` and speaks to it in JSON lines, as a
client does, on pipes (Codex, the SDK's own client) and on a socketpair (Node and Bun
give their servers sockets: Claude Code, OpenCode, Copilot CLI): initialize, the
initialized notification, tools/list, memory_search, each waited for, then (the "store"
sessions) memory_store; then it closes its end and waits for the server to end. The CPU
is the server's own (``os.wait4``); the wall runs from the start to its end; "store wait"
is the time from sending memory_store to its answer. Prints the median and the largest of
each; asserts only that every answer came and none is an error.

The SDK client of mcp_first_search.py cannot speak on a socketpair nor say what its
server cost, hence a client of its own here.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.mcp_first_search import ENV, home_with_facts

HANDSHAKE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}
SEARCH = {"name": "memory_search", "arguments": {"query": "how do we deploy to production?"}}


class Session:
    """One `memctl mcp` process and its client's end: ``way`` "pipes" or "socket"."""

    def __init__(self, home: Path, way: str) -> None:
        command = [sys.executable, "-m", "memctl", "--home", str(home), "mcp"]
        env = {**ENV, "OPENBLAS_NUM_THREADS": "1"}
        self.began = time.perf_counter()
        self.sock: socket.socket | None = None
        if way == "socket":
            self.sock, theirs = socket.socketpair()
            with theirs:
                self.process = subprocess.Popen(
                    command, stdin=theirs, stdout=theirs, stderr=subprocess.DEVNULL, env=env
                )
            self.reader = self.sock.makefile("rb")
        else:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            assert self.process.stdout is not None
            self.reader = self.process.stdout

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        if self.sock is not None:
            self.sock.sendall(data)
        else:
            assert self.process.stdin is not None
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def ask(self, ident: int, method: str, params: dict[str, Any] | None = None) -> float:
        """Send a request and wait for its answer: the seconds it took."""
        began = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}})
        while True:
            line = self.reader.readline()
            assert line, f"the server ended before answering {method}"
            answer = json.loads(line)
            if answer.get("id") == ident:
                break
        assert "result" in answer and not answer["result"].get("isError"), answer
        return time.perf_counter() - began

    def close(self) -> tuple[float, float]:
        """Close the client's end; the server's CPU seconds and the session's wall."""
        self.reader.close()
        if self.sock is not None:
            self.sock.close()
        else:
            assert self.process.stdin is not None
            self.process.stdin.close()
        _, status, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        assert self.process.returncode == 0, self.process.returncode
        return usage.ru_utime + usage.ru_stime, time.perf_counter() - self.began


def session(home: Path, way: str, store: int | None) -> tuple[float, float, float | None]:
    """CPU, wall and (with ``store``, a number for a new fact) memory_store's wait."""
    client = Session(home, way)
    client.ask(0, "initialize", HANDSHAKE)
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    client.ask(1, "tools/list")
    client.ask(2, "tools/call", SEARCH)
    waited = None
    if store is not None:
        fact = f"Bench note {store}: the nightly build runs at {store % 24:02d}:00."
        waited = client.ask(3, "tools/call", {"name": "memory_store", "arguments": {"text": fact}})
    cpu, wall = client.close()
    return cpu, wall, waited


def line(name: str, values: list[float]) -> str:
    return f"{name:<28} {statistics.median(values):>8.3f} {max(values):>8.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    kinds = [(way, store) for way in ("pipes", "socket") for store in (False, True)]
    seen: dict[str, list[float]] = {}
    with home_with_facts("memctl-mcp-cpu-") as home:
        session(home, "pipes", None)  # the first start keeps the SDK's answers
        for run in range(args.runs):
            for way, store in kinds:
                name = f"{way}, {'+ store' if store else 'search'}"
                cpu, wall, waited = session(home, way, run * 10 + len(seen) if store else None)
                seen.setdefault(f"{name}: CPU s", []).append(cpu)
                seen.setdefault(f"{name}: wall s", []).append(wall)
                if waited is not None:
                    seen.setdefault(f"{name}: store wait s", []).append(waited)
    load = os.getloadavg()[0]
    print(f"{args.runs} sessions of each kind; load {load:.2f} at the end")
    print(f"{'':<28} {'median':>8} {'max':>8}")
    for name, values in seen.items():
        print(line(name, values))


if __name__ == "__main__":
    main()
