"""Where a `memctl recall` in a process of its own spends its time (issue 33: <= 150 ms):
the floor under it (Python, numpy, the other modules it loads), memctl's modules, the work.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.process_floor --home DIR [--runs 10]

Against the store in ``--home`` (a copy of the message_speed store, or any), as whole
processes taking turns, ``--runs`` times each: ``python -c pass``; ``import numpy``; every
module a recall loads but memctl's (found by running the recall once); every module it
loads; the whole `memctl recall` with the resident process off; and with it on but none
running (the recall asks for one, then starts one: stopped after each run). Each line's
median wall and CPU time (user + system), and the CPU it adds to the line before. The code
measured is the one ``PYTHONPATH`` names (default: this checkout).

Then, in one process per run with every module loaded first, the CPU of each step of the
recall (medians): the settings and the database, the model's vocabulary and weights, the
vocabulary and kinds tables, the query's embedding, the recall (which embeds the query
again), the table printed, the store closed. And the cost of what a recall makes at import: its
dataclasses and its regular expressions (compiled at import or first use).

Nothing is asserted: the figures depend on what else the machine runs (say the load).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "memctl"
QUERY = "how do we deploy to production"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["MEMCTL_LLM"] = "none"
ENV.setdefault("PYTHONPATH", str(ROOT))
# Runs the recall in this interpreter and prints the modules it loaded (JSON).
MODULES = f"""
import contextlib, io, json, sys
sys.argv = ["memctl", "recall", "--all-scopes", {QUERY!r}]
from memctl.cli.entry import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
# Each import line leaves as a recall does (memctl.cli.entry.QUICK_EXIT): without the cyclic
# garbage collector and without the interpreter's teardown.
QUICK = "import gc, os\ngc.disable()\n{}\nos._exit(0)"
IMPORT = QUICK.format(
    "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)"
)
# How long the started resident process may take to load, before it is stopped (loaded).
RESIDENT_LOADS = 120.0
# One recall step by step, every module loaded first; prints [{step: CPU seconds}, {kind:
# how many were made}] (JSON).
STEPS = f"""
import contextlib, dataclasses, io, json, re._compiler, sys, time
clock, spent = time.process_time, {{"dataclasses": 0.0, "patterns": 0.0}}
made = {{"dataclasses": 0, "patterns": 0}}
def timed(kind, original):
    def run(*args, **kwargs):
        began = clock()
        try:
            return original(*args, **kwargs)
        finally:
            spent[kind] += clock() - began
            made[kind] += 1
    return run
dataclasses._process_class = timed("dataclasses", dataclasses._process_class)
re._compiler.compile = timed("patterns", re._compiler.compile)
import importlib
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
from memctl.api.config import Context, settings_from_flags
from memctl.api.recall import RecallRequest, recall
from memctl.cli.recall_out import elsewhere_hint, render
from memctl.retrieve.vocabulary import kinds, vocabulary
steps, began = {{}}, clock()
def step(name):
    global began
    now = clock()
    steps[name], began = now - began, now
ctx = Context(settings_from_flags(None, []))
ctx.db
step("settings and database")
ctx.embedder._model()
step("model: vocabulary and weights")
vocabulary(), kinds()
step("vocabulary and kinds tables")
ctx.embedder.embed([{QUERY!r}])
step("the query's embedding")
done = recall(ctx, RecallRequest(query={QUERY!r}, all_scopes=True))
step("the recall (its embedding again included)")
with contextlib.redirect_stdout(io.StringIO()):
    render(done.result, "table", False, elsewhere_hint(done.elsewhere, "add --all-scopes"))
step("the table")
ctx.close()
step("the store closed")
steps.update({{f"{{k}} made at import or first use": v for k, v in spent.items()}})
print(json.dumps([steps, made]))
"""


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one process."""
    began = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if status:
        raise SystemExit(f"{command[:3]} failed ({status})")
    return time.perf_counter() - began, usage.ru_utime + usage.ru_stime


def recall_modules(env: dict[str, str]) -> list[str]:
    """Every module a recall loads (the top-level name of each package included)."""
    done = subprocess.run(
        [sys.executable, "-c", MODULES], env=env, capture_output=True, text=True, check=True
    )
    before = set(sys.builtin_module_names) | {"__main__"}
    return [m for m in json.loads(done.stderr.splitlines()[-1]) if m not in before]


def lines(modules: list[str], env: dict[str, str]) -> dict[str, tuple[list[str], dict[str, str]]]:
    python = sys.executable
    others = [m for m in modules if m.split(".")[0] != "memctl"]
    recall = [str(SCRIPT), "recall", "--all-scopes", QUERY]
    return {
        "python -c pass": ([python, "-c", QUICK.format("pass")], env),
        "import numpy": ([python, "-c", QUICK.format("import numpy")], env),
        "+ every other module a recall loads": ([python, "-c", IMPORT, *others], env),
        "+ memctl's modules": ([python, "-c", IMPORT, *modules], env),
        "memctl recall (resident off)": (recall, {**env, "MEMCTL_RECALL_RESIDENT": "off"}),
        "memctl recall (resident on, none running)": (
            recall,
            {**env, "MEMCTL_RECALL_RESIDENT": "on"},
        ),
    }


def stop_resident(env: dict[str, str]) -> None:
    """Stop the resident process the recall started, once it answers (one still loading
    holds its lock and cannot be asked to stop yet)."""
    socket = Path(env["MEMCTL_HOME"]) / "resident" / "socket"
    deadline = time.monotonic() + RESIDENT_LOADS
    while not socket.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    subprocess.run([str(SCRIPT), "daemon", "stop"], env=env, capture_output=True)
    while socket.exists() and time.monotonic() < deadline:
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="the store to recall from")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    env = {**ENV, "MEMCTL_HOME": str(args.home.resolve()), "MEMCTL_RECALL_RESIDENT": "off"}
    modules = recall_modules(env)
    own = sum(m.split(".")[0] == "memctl" for m in modules)
    print(f"a recall loads {len(modules)} modules, {own} of them memctl's")
    commands = lines(modules, env)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    steps: list[tuple[dict[str, float], dict[str, int]]] = []
    for command, command_env in commands.values():
        timed(command, command_env)  # the page cache and the bytecode
        if command_env["MEMCTL_RECALL_RESIDENT"] == "on":
            stop_resident(command_env)
    for _ in range(args.runs):  # taking turns: a change in the load hits every line
        for name, (command, command_env) in commands.items():
            times[name].append(timed(command, command_env))
            if command_env["MEMCTL_RECALL_RESIDENT"] == "on":
                stop_resident(command_env)
        step = [sys.executable, "-c", STEPS, json.dumps(modules)]
        done = subprocess.run(step, env=env, capture_output=True, text=True, check=True)
        steps.append(json.loads(done.stdout))
    previous = 0.0
    print(f"{'process':45} {'wall p50':>9} {'CPU p50':>8} {'+CPU':>8}")
    for name, measured in times.items():
        wall = statistics.median(t[0] for t in measured) * 1000
        cpu = statistics.median(t[1] for t in measured) * 1000
        print(f"{name:45} {wall:7.1f}ms {cpu:6.1f}ms {cpu - previous:+6.1f}ms")
        previous = cpu
    print("one recall's steps, CPU p50 (every module loaded first):")
    for name in steps[0][0]:
        made = [m[name.split()[0]] for _, m in steps if name.split()[0] in m]
        count = f" ({statistics.median(made):.0f})" if made else ""
        print(f"  {name + count:60} {statistics.median(s[name] for s, _ in steps) * 1000:6.1f}ms")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load}; {os.cpu_count()} cores; {args.runs} runs")


if __name__ == "__main__":
    main()
