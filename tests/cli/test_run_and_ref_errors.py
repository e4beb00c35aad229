"""Issue 34, item 8: `memctl runs <a maintain run's id>` printed the run, then exited 70
with "internal error: KeyError: 'verdict'"; a session reference of 50,000 characters was
quoted whole in its error. Real `memctl` processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

LONG_REF = "a" * 50_000


def test_a_maintain_runs_changes_are_shown_in_full(home: Path) -> None:
    assert run_cli("remember", "we deploy on fridays").returncode == 0
    assert run_cli("maintain").returncode == 0
    runs = json.loads(run_cli("runs", "--json", "--kind", "maintain").stdout)
    done = run_cli("runs", runs[0]["id"])
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    # the backup maintain made, named by its task and action, with its path
    row = next(line for line in done.stdout.splitlines() if "backup" in line)
    assert "upkeep" in row and "path" in done.stdout


def test_a_huge_session_reference_gets_a_short_one_line_error(home: Path) -> None:
    for ref in (LONG_REF, f"{LONG_REF}#3"):
        done = run_cli("sessions", "show", ref)
        assert done.returncode == 3
        assert done.stderr.startswith("memctl: error: no stored session 'aaaa")
        assert len(done.stderr) < 200 and done.stderr.count("\n") == 1


def test_a_huge_message_reference_gets_a_short_one_line_error(home: Path) -> None:
    done = run_cli("get", f"{LONG_REF}#3")
    assert done.returncode == 3
    assert done.stderr.startswith("memctl: error: no message 3 in session 'aaaa")
    assert len(done.stderr) < 200 and done.stderr.count("\n") == 1
