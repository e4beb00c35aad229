"""An import is one run, whatever its files: `memctl runs` lists one, `memctl undo` takes
every file back, and undoing that undo puts them all back; `sessions list` leaves the
files' text out unless asked (real memctl processes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memctl.context import Context
from memctl.imports.files import expand
from memctl.imports.pipeline import ImportOptions, import_files
from memctl.ingest.batches import one_run
from memctl.store.runs import RunRecord, batch_runs, get_run
from tests.conftest import run_cli

NOTES = {
    "deploys.md": "# Deploys\n\nWe deploy the billing service with make release from main.\n",
    "backups.md": "# Backups\n\nThe production database is backed up every six hours.\n",
    "oncall.md": "# On-call\n\nOn-call rotates weekly, on Mondays.\n",
}
ENV = {"MEMCTL_LLM": "none"}


def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def cli_json(*args: str) -> Any:
    done = run_cli(*args, "--json", env=ENV)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def active() -> int:
    return len(cli_json("list"))


def test_an_import_of_three_files_is_one_run_undone_and_redone_as_one(tmp_path: Path) -> None:
    assert run_cli("remember", "Releases are cut on Mondays", env=ENV).returncode == 0
    assert run_cli("import", str(notes(tmp_path)), env=ENV).returncode == 0
    assert active() == 4

    runs = cli_json("runs")
    imported = runs[0]
    assert imported["kind"] == "import" and imported["notes"][0] == "one import of 3 files"
    assert imported["counts"] == {"create": 3} and imported["status"] == "done"
    assert [r["kind"] for r in runs] == ["import", "edit"]  # not one run a file
    whole = cli_json("runs", imported["id"][:8])  # in full: every file's decisions
    assert len(whole["decisions"]) == 3 and whole["notes"][0] == "one import of 3 files"
    listed = run_cli("sessions", "list", env=ENV)  # nor one session a file in the list
    assert listed.stdout.splitlines() == [
        "no sessions stored in this project",
        "3 imported files left out: --client import lists them",
    ]
    assert len(cli_json("sessions", "list", "--client", "import")) == 3
    assert cli_json("sessions", "grep", "billing")  # their text is still searched

    undone = run_cli("undo", imported["id"][:8], env=ENV)
    assert undone.returncode == 0 and "3 changes reverted" in undone.stdout, undone.stderr
    assert active() == 1  # the remembered one stays
    runs = cli_json("runs")
    assert [r["kind"] for r in runs] == ["undo", "import", "edit"]
    assert runs[1]["status"] == "undone" and runs[0]["notes"][0] == "one undo of 3 files"
    again = run_cli("undo", imported["id"][:8], env=ENV)
    assert again.returncode == 2 and "already undone" in again.stderr

    redone = run_cli("undo", runs[0]["id"][:8], env=ENV)  # undoing the undo: all three back
    assert redone.returncode == 0 and "3 changes reverted" in redone.stdout, redone.stderr
    assert active() == 4
    assert cli_json("runs")[1]["status"] == "undone"  # the undo, undone


def test_each_file_keeps_its_run_under_one_batch(ctx: Context, tmp_path: Path) -> None:
    """Per file: the run a crashed import is recovered by; one batch for all of them."""
    report = import_files(ctx, expand([str(notes(tmp_path))]), ImportOptions())
    run_ids = {file.run_id for file in report.files}
    assert len(run_ids) == 3 and None not in run_ids
    first = get_run(ctx.db, sorted(i for i in run_ids if i)[0])
    assert first is not None and first.batch is not None
    assert {m.id for m in batch_runs(ctx.db, first.batch)} == run_ids


def test_a_batch_shows_its_least_settled_status_and_sums_its_counts() -> None:
    runs = [
        RunRecord("a", "import", "done", counts={"create": 2}, facts=2, finished_at="2026-01-01"),
        RunRecord("b", "import", "failed", counts={"create": 1}, facts=1, finished_at="2026-01-02"),
        RunRecord("c", "import", "running", counts={"merge": 1}, facts=1),
    ]
    whole = one_run(runs)
    assert (whole.id, whole.status, whole.facts) == ("a", "running", 4)
    assert whole.counts == {"create": 3, "merge": 1} and whole.finished_at is None
    settled = one_run(runs[:2])
    assert (settled.status, settled.finished_at) == ("failed", "2026-01-02")
    assert one_run(runs[:1]) is runs[0]


def test_a_batch_says_each_note_once_and_no_count_none_of_its_files_made(tmp_path: Path) -> None:
    """Two chats that fell back to the rules say why in the same words; a memctl export's
    run counts "0 skipped": `memctl runs ID` shows the note once and no zero count."""
    folder = tmp_path / "chats"
    folder.mkdir()
    for name, said in (("a.txt", "We deploy with make release."), ("b.txt", "I use helix.")):
        (folder / name).write_text(f"user: {said}\nassistant: ok\nuser: thanks\n", encoding="utf-8")
    (folder / "c.jsonl").write_text('{"content": "Releases are cut on Mondays"}\n')
    # Ollama on the discard port, no retry: each file falls back to the rules at once
    unreachable = (
        "-c",
        "llm=ollama",
        "-c",
        "ollama.host=http://127.0.0.1:9",
        "-c",
        "llm.retries=0",
    )
    assert run_cli(*unreachable, "import", str(folder)).returncode == 0
    run_id = cli_json("runs")[0]["id"][:8]
    shown = run_cli("runs", run_id)
    assert shown.returncode == 0, shown.stderr
    notes = [line for line in shown.stdout.splitlines() if line.startswith("note: ")]
    assert notes[0] == "note: one import of 3 files" and len(notes) == 2, shown.stdout
    assert "cannot reach Ollama" in shown.stdout and "0 skipped" not in shown.stdout
