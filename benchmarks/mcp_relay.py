"""A stdio relay between an MCP client and its server that notes when each message passed
(benchmarks/client_first_search.py puts it in front of `memctl mcp` inside the real
clients, to tell memctl's share of a tool call from the client's).

    python benchmarks/mcp_relay.py LOG COMMAND [ARG...]

Runs COMMAND with pipes for its stdin and stdout, passes every line through unchanged
and appends to LOG one JSON line per message: {"at": time.monotonic(), "way": "in" |
"out", "id": ..., "method": ...}.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import IO, Any


def note(log: IO[str], lock: threading.Lock, way: str, line: bytes) -> None:
    try:
        message: Any = json.loads(line)
    except ValueError:
        return
    if not isinstance(message, dict):
        return
    entry = {"at": time.monotonic(), "way": way, "id": message.get("id")}
    entry["method"] = message.get("method")
    with lock:
        log.write(json.dumps(entry) + "\n")
        log.flush()


def pump(source: IO[bytes], sink: IO[bytes], log: IO[str], lock: threading.Lock, way: str) -> None:
    for line in iter(source.readline, b""):
        sink.write(line)
        sink.flush()
        note(log, lock, way, line)
    sink.close()


def main() -> int:
    log_path, *command = sys.argv[1:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:
        inward = threading.Thread(
            target=pump, args=(sys.stdin.buffer, child.stdin, log, lock, "in"), daemon=True
        )
        inward.start()
        pump(child.stdout, sys.stdout.buffer, log, lock, "out")
        return child.wait()


if __name__ == "__main__":
    sys.exit(main())
