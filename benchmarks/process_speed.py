"""How long a person waits for whole `memctl` processes: `--version`, `recall`, `list`,
`status`, and the hooks an assistant runs (session start, each prompt).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/process_speed.py [--runs 30] [--memories 200]

Each command (and, to compare with, a bare ``python -c pass``) is run
``--runs`` times as a real process (Python start-up included, the installed
``.venv/bin/memctl`` script when it exists, else ``python -m memctl``)
against a data directory holding ``--memories`` remembered memories (the
model already loaded once, so its packed cache exists), the commands taking
turns. ``recall`` also runs "before": the same command line through the Typer
command (``memctl.cli.entry.run_typer``), as every recall ran before its fast
lane (issue 25). ``recall`` and the hooks run twice more: "in process"
(``recall.resident`` off: each loads the model itself) and "resident" (answered
by the resident recall process, started once before the runs and stopped
after); for those the CPU the resident process spent on each request (its
forked child, from /proc) is printed apart, and the sum. Prints, per command,
the median and 95th percentile of the wall time and of the CPU time (user +
system of the child), and the CPU time as a multiple of ``python -c pass``'s:
on a machine other processes keep busy, the CPU time is the steadier figure.
Asserts nothing.

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
ENV["MEMCTL_RECALL_RESIDENT_IDLE"] = "3600"
IN_PROCESS = {**ENV, "MEMCTL_RECALL_RESIDENT": "off"}
RESIDENT = {**ENV, "MEMCTL_RECALL_RESIDENT": "on"}
COMMANDS: dict[str, tuple[str, ...]] = {
    "--version": ("--version",),
    "recall": ("recall", "how do we deploy to production"),
    "recall --format context": ("recall", "--format", "context", "deploy"),
    "list": ("list",),
    "status": ("status",),
}
BEFORE = ("recall", "recall --format context")  # also timed through Typer, and resident
TYPER = "from memctl.cli.entry import main, run_typer; main(lambda: run_typer(None))"
HOOKS = {  # event: its JSON on stdin
    "SessionStart": {"session_id": "bench"},
    "UserPromptSubmit": {"session_id": "bench", "prompt": "how do we deploy to production?"},
}


def memctl(home: Path, *args: str) -> list[str]:
    prefix = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "memctl"]
    return [*prefix, "--home", str(home), *args]


def timed(
    command: list[str], stdin: bytes | None, env: dict[str, str], server: int | None
) -> tuple[float, float, float]:
    """Wall seconds and CPU seconds (user + system) of one process, and the CPU seconds
    the resident process ``server`` spent on it (0 without one)."""
    spent = server_cpu(server)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True, input=stdin)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, server_cpu(server) - spent


def server_cpu(pid: int | None) -> float:
    """CPU seconds of the resident process and its reaped children (a request's child is
    reaped within 50 ms of its end: waited for)."""
    if pid is None:
        return 0.0
    deadline = time.monotonic() + 2
    children = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        while children.read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.005)
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:  # it exits when memctl's files change: edited during the run?
        raise SystemExit(f"the resident process {pid} exited during the run") from None
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


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


def measure(
    lines: dict[str, tuple[list[str], bytes | None, dict[str, str]]], runs: int, server: int
) -> dict[str, list[tuple[float, float, float]]]:
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in lines}
    for line, stdin, env in lines.values():
        timed(line, stdin, env, None)  # warm the page cache and the bytecode
    for _ in range(runs):  # taking turns: a change in the load hits every command
        for name, (line, stdin, env) in lines.items():
            times[name].append(timed(line, stdin, env, server if env is RESIDENT else None))
    return times


def report(times: dict[str, list[tuple[float, float, float]]]) -> None:
    bare = statistics.median(cpu for _, cpu, _ in times["python -c pass"])
    print(
        f"{'command':40} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>8} {'cpu p95':>8}"
        f" {'x pass':>7} {'+resident':>10} {'total':>7}"
    )
    for name, measured in times.items():
        walls, cpus = [t[0] for t in measured], [t[1] for t in measured]
        served = [t[1] + t[2] for t in measured]
        extra = (
            f" {statistics.median(t[2] for t in measured) * 1000:8.0f}ms"
            f" {statistics.median(served) / bare:6.1f}x"
            if any(t[2] for t in measured)
            else ""
        )
        print(
            f"{name:40} {statistics.median(walls) * 1000:7.0f}ms"
            f" {percentile(walls, 0.95) * 1000:7.0f}ms"
            f" {statistics.median(cpus) * 1000:6.0f}ms"
            f" {percentile(cpus, 0.95) * 1000:6.0f}ms"
            f" {statistics.median(cpus) / bare:6.1f}x" + extra
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
        Line = tuple[list[str], bytes | None, dict[str, str]]
        lines: dict[str, Line] = {"python -c pass": ([sys.executable, "-c", "pass"], None, ENV)}
        for name, command in COMMANDS.items():
            lines[name + (" (in process)" if name in BEFORE else "")] = (
                memctl(home, *command),
                None,
                IN_PROCESS,
            )
            if name in BEFORE:
                typer = [sys.executable, "-c", TYPER, "--home", str(home), *command]
                lines[f"{name} (Typer: before)"] = (typer, None, IN_PROCESS)
                lines[f"{name} (resident)"] = (memctl(home, *command), None, RESIDENT)
        for event, payload in HOOKS.items():
            hook = memctl(home, "hook", "claude-code", event)
            given = json.dumps({**payload, "cwd": os.getcwd()}).encode()
            lines[f"hook {event} (in process)"] = (hook, given, IN_PROCESS)
            lines[f"hook {event} (resident)"] = (hook, given, RESIDENT)
        subprocess.run(memctl(home, "daemon", "start"), env=RESIDENT, check=True)
        status = subprocess.run(
            memctl(home, "daemon", "status", "--json"), env=RESIDENT, capture_output=True
        )
        server = int(json.loads(status.stdout)["pid"])
        try:
            times = measure(lines, args.runs, server)
        finally:
            subprocess.run(memctl(home, "daemon", "stop"), env=RESIDENT, check=True)
        report(times)
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
