"""A deleted memory is not edited, and an undo that would put nothing back leaves its run
as it is: through the real CLI, one line on stderr, nothing changed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import cli_ok, run_cli


def test_update_of_a_deleted_memory_is_refused_and_changes_nothing(home: Path) -> None:
    made = json.loads(cli_ok("remember", "we deploy with make release", "--json"))["id"]
    cli_ok("delete", made)
    done = run_cli("update", made, "--text", "we deploy with fly deploy")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert f"memory {made[:8]} is deleted: a deleted memory is not updated" in done.stderr
    assert "undo the run that deleted it" in done.stderr
    kept = json.loads(cli_ok("get", made, "--json"))
    assert kept["content"] == "we deploy with make release" and kept["state"] == "deleted"
    assert "fly deploy" not in cli_ok("recall", "how do we deploy?", "--json")


def test_an_undo_that_reverts_nothing_leaves_its_run_undoable(home: Path) -> None:
    made = json.loads(cli_ok("remember", "backups run nightly", "--json"))["id"]
    run = json.loads(cli_ok("runs", "--json"))[0]["id"]
    cli_ok("update", made, "--text", "backups run hourly")
    done = run_cli("undo", run)
    assert done.returncode == 2
    assert f"is left as it is: the memory it changed was changed since ({made[:8]})" in (
        done.stderr
    )
    assert json.loads(cli_ok("get", made, "--json"))["content"] == "backups run hourly"
    runs = {r["id"]: r for r in json.loads(cli_ok("runs", "--json"))}
    assert runs[run]["status"] == "done" and not runs[run].get("undone_by")
    assert [r for r in runs.values() if r["kind"] == "undo"] == []
    cli_ok("undo", run, "--force")  # as the line says
    assert json.loads(cli_ok("get", made, "--json"))["state"] == "deleted"
