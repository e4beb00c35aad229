"""What a process killed midway leaves is finished, failed or undone by the next one."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

from memctl.api.ingest import recover
from memctl.context import Context
from memctl.imports.files import expand
from memctl.imports.pipeline import WRITING, ImportOptions, import_files
from memctl.ingest.run import start_run
from memctl.model import State
from memctl.store import memories as store
from memctl.store.imports import STORED, find_import, save_import
from memctl.store.runs import get_run, save_run
from tests.conftest import run_cli


def dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def active(ctx: Context) -> list[str]:
    found = store.list_memories(ctx.db, store.MemoryFilter(states=(State.ACTIVE,)), None)
    return sorted(m.content for m in found)


def test_a_run_whose_process_died_is_marked_failed(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    run = start_run(ctx, "ingest", None, "global")
    run.record.holder = f"ingest@{socket.gethostname()}:{dead_pid()}"
    alive = start_run(ctx, "ingest", None, "global")  # this process: still running
    with ctx.db.atomic():
        save_run(ctx.db, run.record)
        save_run(ctx.db, alive.record)
    recover(ctx)
    assert [get_run(ctx.db, r.id).status for r in (run.record, alive.record)] == [  # type: ignore[union-attr]
        "failed",
        "running",
    ]


def _deploy_note(tmp_path: Path) -> Path:
    """A Markdown note of two facts, for the import tests."""
    note = tmp_path / "deploy.md"
    note.write_text(
        "# Deploys\n\nWe deploy the API with GitHub Actions every Friday.\n\n"
        "The staging database is Postgres 16 on port 5433.\n"
    )
    return note


def test_an_import_killed_midway_and_run_again_makes_no_duplicates(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = make_ctx()
    note = _deploy_note(tmp_path)
    options = ImportOptions(force=True)
    import_files(ctx, expand([str(note)]), options)
    once = active(ctx)
    assert once
    # What kill -9 leaves: the file's record not done, its run running in a dead process.
    (record,) = [
        r
        for r in (find_import(ctx.db, s, ctx.settings.project_scope, None) for s in _hashes(ctx))
        if r is not None
    ]
    run = get_run(ctx.db, record.run_id or "")
    assert run is not None
    run.status, run.holder = "running", f"import@{socket.gethostname()}:{dead_pid()}"
    record.status = STORED
    with ctx.db.atomic():
        save_run(ctx.db, run)
        save_import(ctx.db, record)
    import_files(ctx, expand([str(note)]), options)
    assert active(ctx) == once
    reverted = get_run(ctx.db, run.id)  # what the killed run wrote went before the rerun
    assert reverted is not None and reverted.undone_by is not None


def _hashes(ctx: Context) -> list[str]:
    return [r["sha256"] for r in ctx.db.rows("SELECT sha256 FROM imports")]


def test_a_memctl_jsonl_import_is_a_run_undo_reverts(home: Path, tmp_path: Path) -> None:
    lines = [{"content": f"Imported fact {n}."} for n in range(3)]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run_cli("import", str(path)).returncode == 0
    (run,) = json.loads(run_cli("runs", "--json").stdout)
    assert run["kind"] == "import" and run["status"] == "done"
    assert run_cli("undo", run["id"]).returncode == 0
    listed = json.loads(run_cli("list", "--json").stdout)
    assert listed == []


def test_ctrl_c_during_an_import_marks_its_run_interrupted_and_a_rerun_resumes(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = make_ctx()
    note = _deploy_note(tmp_path)

    def ctrl_c(stage: str, done: int, total: int) -> None:
        if stage == WRITING and done:  # Ctrl-C as the first facts are written
            raise KeyboardInterrupt

    try:
        import_files(ctx, expand([str(note)]), ImportOptions(), ctrl_c)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the Ctrl-C did not reach the caller")
    (run,) = [r for r in ctx.db.rows("SELECT id, status FROM runs WHERE kind = 'import'")]
    assert run["status"] == "interrupted"
    import_files(ctx, expand([str(note)]), ImportOptions())  # again: resumes
    facts = active(ctx)
    assert len(facts) == len(set(facts))  # nothing twice
    assert any("GitHub Actions" in f for f in facts) and any("Postgres 16" in f for f in facts)
