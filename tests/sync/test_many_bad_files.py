"""Issue 34, item 8: 10,000 bad files in the sync repository added 1.5 MB of warnings and
1.3 MB of database (one run note a file) on every sync. The first LISTED_BAD_FILES are
named, the rest counted, at the terminal and in the run. A real bare repository and real
`memctl` processes."""

from __future__ import annotations

import json
from pathlib import Path

from memctl.sync import layout
from memctl.sync.pipeline import LISTED_BAD_FILES
from tests.conftest import run_cli
from tests.syncing import bare_repo, plant

BAD = 300


def test_many_bad_files_are_named_up_to_a_limit_then_counted(home: Path, tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    assert run_cli("sync", "init", str(remote)).returncode == 0
    files = {
        layout.memory_path("global", f"{n:032x}", "e" * 16).encode(): b"content: [unclosed\n"
        for n in range(BAD)
    }
    plant(remote, files)
    for _ in range(2):  # the same bad files on every sync
        done = run_cli("sync", "--json")
        assert done.returncode == 0, done.stderr
        assert len(json.loads(done.stdout)["bad_files"]) == BAD  # --json lists them all
        done = run_cli("sync")
        assert done.returncode == 0, done.stderr
        skipped = [line for line in done.stderr.splitlines() if "skipped" in line]
        assert len(skipped) == LISTED_BAD_FILES + 1
        assert f"skipped {BAD - LISTED_BAD_FILES:,} more bad files" in skipped[-1]
        assert f"{BAD} bad files skipped" in " ".join(done.stdout.split())  # folded at 80
    runs = json.loads(run_cli("runs", "--json", "--kind", "sync").stdout)
    assert runs and all(len(run["notes"]) <= LISTED_BAD_FILES + 1 for run in runs)
    assert all(run["counts"]["bad_files"] == BAD for run in runs)
