"""How long memctl's hooks take inside the real clients: Claude Code, Codex and OpenCode
run headless against the scripted model on loopback (as tests/e2e does), each session
firing memctl's hooks; the durations are what each hook recorded (from its process's
start), read back through `memctl install status --json`.

    python -m benchmarks.client_hooks [--runs N] [--clients DIR]

Needs node and the clients from scripts/install-clients (or --clients DIR).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SAY = "I prefer tabs over spaces in Makefiles. We deploy with make release from main."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="sessions per client")
    parser.add_argument("--clients", type=Path, help="where scripts/install-clients put them")
    args = parser.parse_args()
    if args.clients:
        os.environ["MEMCTL_CLIENTS_DIR"] = str(args.clients)
    from tests.e2e import test_clients as e2e  # reads MEMCTL_CLIENTS_DIR when imported
    from tests.e2e.model_server import scripted_model

    os.environ.pop("MEMCTL_CLIENTS_DIR", None)  # not a memctl setting: read once, above

    print(flush=True)
    print(f"{'client':<12} {'hook':<18} {'runs':>4} {'last ms':>8} {'p95 ms':>7}  <= 300 ms")
    for name, session in SESSIONS.items():
        binary = e2e.BIN / BINARIES[name]
        if not binary.exists():
            print(f"{name:<12} not installed in {e2e.CLIENTS}")
            continue
        with (
            tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp,
            scripted_model() as model,
        ):
            world = e2e.World(Path(tmp), model)
            session(world, binary, args.runs, e2e)
            world.memories()  # the worker the hooks started is done
            status = json.loads(world.memctl("install", "status", "--json").stdout)
            mine = next(s for s in status if s["client"] == name)
            for event, took in mine["timings"].items():
                verdict = "no" if took["slow"] else "yes"
                print(
                    f"{name:<12} {event:<18} {took['runs']:>4} {took['last_ms']:>8} "
                    f"{took['p95_ms']:>7}  {verdict}",
                    flush=True,
                )


def claude(world: Any, binary: Path, runs: int, e2e: Any) -> None:
    world.memctl("init", "--tool", "claude-code")
    world.memctl("install", "claude-code")
    for _ in range(runs):
        world.run(binary, "-p", SAY, "--output-format", "json")


def codex(world: Any, binary: Path, runs: int, e2e: Any) -> None:
    world.memctl("init", "--tool", "codex")
    world.memctl("install", "codex")
    argv = e2e.codex_args(world, "--dangerously-bypass-hook-trust")
    for _ in range(runs):
        world.run(binary, *argv, SAY)


def opencode(world: Any, binary: Path, runs: int, e2e: Any) -> None:
    home = world.home
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    url = world.model.url
    provider = {"options": {"baseURL": f"{url}/v1", "apiKey": "scripted"}}
    config.write_text(
        json.dumps({"provider": {"anthropic": provider}, "model": "anthropic/claude-sonnet-4-5"})
    )
    world.memctl("init", "--tool", "opencode")
    world.memctl("install", "opencode")
    for _ in range(runs):
        world.run(binary, "run", SAY)
    world.memories_soon("make release")


SESSIONS = {"claude-code": claude, "codex": codex, "opencode": opencode}
BINARIES = {"claude-code": "claude", "codex": "codex", "opencode": "opencode"}

if __name__ == "__main__":
    main()
