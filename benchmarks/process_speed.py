"""How long a person waits for whole `memctl` processes: `--version`, `recall`, `list`,
`status`, and the hooks an assistant runs (session start, each prompt).

    .venv/bin/python benchmarks/process_speed.py [--runs 30] [--memories 200]

Each command (and, to compare with, a bare ``python -c pass``) is run
``--runs`` times as a real process (Python start-up included, the installed
``.venv/bin/memctl`` script when it exists, else ``python -m memctl``)
against a data directory holding ``--memories`` remembered memories (the
model already loaded once, so its packed cache exists), the commands taking
turns. ``recall`` also runs "before": the same command line through the Typer
command (``memctl.cli.entry.run_typer``), as every recall ran before its fast
lane (issue 25). Prints, per command, the median and 95th percentile of the
wall time and of the CPU time (user + system of the child), and the CPU time
as a multiple of ``python -c pass``'s: on a machine other processes keep busy,
the CPU time is the steadier figure. Asserts nothing.

The package is byte-compiled first and Python may write bytecode, as an
installed memctl would.
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
SCRIPT = Path(sys.executable).parent / "memctl"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["MEMCTL_LLM"] = "none"
COMMANDS: dict[str, tuple[str, ...]] = {
    "--version": ("--version",),
    "recall": ("recall", "how do we deploy to production"),
    "recall --format context": ("recall", "--format", "context", "deploy"),
    "list": ("list",),
    "status": ("status",),
}
BEFORE = ("recall", "recall --format context")  # also timed through Typer
TYPER = "from memctl.cli.entry import main, run_typer; main(lambda: run_typer(None))"
HOOKS = {  # event: its JSON on stdin
    "SessionStart": {"session_id": "bench"},
    "UserPromptSubmit": {"session_id": "bench", "prompt": "how do we deploy to production?"},
}


def memctl(home: Path, *args: str) -> list[str]:
    prefix = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "memctl"]
    return [*prefix, "--home", str(home), *args]


def timed(command: list[str], stdin: bytes | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(command, env=ENV, check=True, capture_output=True, input=stdin)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def fill(home: Path, count: int) -> None:
    topics = ("deploy", "database", "editor", "tests", "release", "backup", "review")
    lines = "\n".join(
        f"note {i}: the {topics[i % len(topics)]} step number {i} needs care" for i in range(count)
    )
    subprocess.run(
        memctl(home, "import", "-", "--strategy", "document"),
        input=lines.encode(),
        env=ENV,
        check=True,
        capture_output=True,
    )
    for i in range(count):
        if i % 20 == 0:
            subprocess.run(
                memctl(home, "remember", f"we deploy with make ship, step {i}"),
                env=ENV,
                check=True,
                capture_output=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--memories", type=int, default=200)
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "memctl", quiet=1)
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        fill(home, args.memories)
        lines: dict[str, tuple[list[str], bytes | None]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], None)
        }
        for name, command in COMMANDS.items():
            lines[name] = (memctl(home, *command), None)
            if name in BEFORE:
                typer = [sys.executable, "-c", TYPER, "--home", str(home), *command]
                lines[f"{name} (Typer: before)"] = (typer, None)
        for event, payload in HOOKS.items():
            hook = memctl(home, "hook", "claude-code", event)
            lines[f"hook {event}"] = (hook, json.dumps({**payload, "cwd": os.getcwd()}).encode())
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in lines}
        for line, stdin in lines.values():
            timed(line, stdin)  # warm the page cache and the bytecode
        for _ in range(args.runs):  # taking turns: a change in the load hits every command
            for name, (line, stdin) in lines.items():
                times[name].append(timed(line, stdin))
        bare = statistics.median(cpu for _, cpu in times["python -c pass"])
        print(f"{'command':40} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>8} {'cpu p95':>8}")
        for name, measured in times.items():
            walls, cpus = [t[0] for t in measured], [t[1] for t in measured]
            print(
                f"{name:40} {statistics.median(walls) * 1000:7.0f}ms"
                f" {percentile(walls, 0.95) * 1000:7.0f}ms"
                f" {statistics.median(cpus) * 1000:6.0f}ms"
                f" {percentile(cpus, 0.95) * 1000:6.0f}ms"
                f"  {statistics.median(cpus) / bare:4.1f}x pass"
            )
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
