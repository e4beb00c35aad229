"""What memctl kept after the user took it out (a third pass over the surfaces the brief
says leak): a memory deleted for good leaves no tag in its event log. Real SQLite files
and real `memctl` processes."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.memories.test_forget_everywhere import _files_holding

TAG = "acme-layoffs-q3"  # a tag naming what the memory was about


def _ok(*args: str) -> str:
    done = run_cli(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_memory_deleted_for_good_leaves_no_tag_in_its_events(home: Path) -> None:
    """An edit's event records the tags before and after; a permanent delete blanked the
    texts there and left the tags, so the database and every backup kept them."""
    memory = _ok("remember", "Talk to HR before Friday about the reorg.", "-t", TAG).strip()
    _ok("update", memory, "-t", "hr")
    _ok("maintain")  # a backup holding the edit
    assert _files_holding(home, TAG)
    _ok("delete", memory, "--permanent")
    assert _files_holding(home, TAG) == []
    assert TAG not in _ok("events", "--json")
