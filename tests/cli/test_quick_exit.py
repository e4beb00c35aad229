"""A `memctl recall` process leaves without the interpreter's teardown (memctl.cli.entry
``script``): everything it prints still arrives, and its exit codes and errors are those of
the same command run through ``main`` with the normal exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Shared, python_c, run_cli, shared

# The same command line through ``main``, leaving the normal way (the teardown included).
THROUGH_MAIN = "import sys\nsys.argv[0] = 'memctl'\nfrom memctl.cli.entry import main\nmain()"
# Buffered output, as a user's shell gives it (PYTHONUNBUFFERED would write every line at once).
BUFFERED = {"PYTHONUNBUFFERED": ""}
HASHED = {"MEMCTL_EMBEDDER": "hash", "COLUMNS": "200", **BUFFERED}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Shared:
    """300 stored notes on deploying, imported once for the module (the tests recall with
    --no-touch: they only read): a JSON answer of 200 results is ~200 kB, more than any
    buffer of the standard output holds."""
    notes = "\n".join(
        json.dumps({"content": f"note {n}: the deploy step number {n} needs a review"})
        for n in range(300)
    )
    with shared(tmp_path_factory, user_cache, "many") as place:
        made = run_cli("import", "-", input=notes)
        assert made.returncode == 0, made.stderr
    return place


@pytest.fixture
def many(stored: Shared, monkeypatch: pytest.MonkeyPatch) -> Shared:
    """The test runs memctl in ``stored`` (its home, from its project)."""
    monkeypatch.setenv("MEMCTL_HOME", str(stored.home))
    monkeypatch.chdir(stored.project)
    return stored


@pytest.mark.fresh
@pytest.mark.parametrize(
    "output",
    [("--json", "-n", "200"), ("--json", "-n", "2"), ("-f", "ids", "-n", "3"), ("-f", "context")],
)
def test_a_recall_prints_all_it_found_and_exits_as_through_main(
    many: Shared, output: tuple[str, ...]
) -> None:
    asked = ("recall", "--no-touch", *output, "deploy step review")
    quick = run_cli(*asked, env=BUFFERED)
    normal = python_c(THROUGH_MAIN, *asked, env=HASHED)
    assert (quick.returncode, quick.stderr) == (normal.returncode, normal.stderr) == (0, "")
    assert quick.stdout == normal.stdout and quick.stdout.endswith("\n")
    if output[-1] == "200":
        assert len(json.loads(quick.stdout)["results"]) == 200 and len(quick.stdout) > 100_000


@pytest.mark.parametrize(
    "asked",
    [("recall", " "), ("recall", "--mode", "sideways", "deploy"), ("recall", "--budget", "0", "x")],
)
def test_a_failing_recall_says_why_and_exits_as_through_main(
    home: Path, asked: tuple[str, ...]
) -> None:
    quick = run_cli(*asked, env=BUFFERED)
    normal = python_c(THROUGH_MAIN, *asked, env=HASHED)
    assert quick.returncode == normal.returncode == 2
    assert quick.stderr == normal.stderr and quick.stderr.count("\n") == 1


@pytest.mark.parametrize("output", ["--json", "--format=ids"])
def test_output_nobody_reads_is_a_one_line_error(many: Shared, output: str) -> None:
    """A closed pipe: the write that fails, in the command or at its end, is the one-line
    error of a failed write (at the end it was Python's two lines and exit code 120)."""
    read, write = os.pipe()
    os.close(read)  # nobody reads
    asked = ["recall", "--no-touch", "-n", "5", output, "deploy step review"]
    env = {**os.environ, **HASHED}
    done = subprocess.run(
        [sys.executable, "-m", "memctl", *asked], stdout=write, stderr=subprocess.PIPE, env=env
    )
    os.close(write)
    assert (done.returncode, done.stderr.decode()) == (6, "memctl: error: Broken pipe\n")
