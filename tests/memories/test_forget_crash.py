"""A `sessions forget` killed midway, then run again, leaves no file naming the session's
transcript: not when the kill came right after the store forgot the session (nothing in
the store knows its transcript's path, or the id it had, any more), nor in the middle of
a log's rewrite (the new text over the start of the old, the end of the path after it).
A real `memctl` process, ended by ``os._exit`` at that point; then the real command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli_ok, files_holding, python_c
from tests.test_leaks_kept import _captured_by_the_hook

PLACE = "client-quokkaville"  # in the transcript's path: a project's name, say
SESSION = "cc-ferry-crossing"
KILLED = 137  # what the shell says of a process killed by SIGKILL

# Each point a crash was met, as a patch of the forget's own process (``os._exit``: no
# clean-up runs, as after a SIGKILL)
AFTER_THE_STORE = """
from memctl.maintain import forgetting
real = forgetting.apply_everywhere
def crashed(*args, **kwargs):
    real(*args, **kwargs)
    os._exit(KILLED)
forgetting.apply_everywhere = crashed
"""
IN_A_LOG = """
from memctl.maintain import everywhere
real = everywhere._overwrite
def torn(path, text):
    old = path.read_text()
    if PLACE not in old or PLACE in text:
        return real(path, text)
    with open(path, "r+", encoding="utf-8") as out:
        out.write(text[: old.index(PLACE)])  # the new text up to where the old held PLACE
        out.flush()
    os._exit(KILLED)
everywhere._overwrite = torn
"""
RUN = """
import os, sys
KILLED, PLACE = {killed}, {place!r}
{patch}
sys.argv = ["memctl", "sessions", "forget", {session!r}, "--yes"]
from memctl.cli.entry import main
main()
"""


@pytest.mark.parametrize("patch", [AFTER_THE_STORE, IN_A_LOG], ids=["after the store", "in a log"])
def test_a_forget_killed_midway_then_run_again_leaves_no_file_naming_the_session(
    patch: str, home: Path, tmp_path: Path
) -> None:
    early = tmp_path / PLACE / "app" / "t.jsonl"  # the hook before the file: a log line
    cli_ok("hook", "claude-code", "SessionEnd", input=json.dumps(_ended(early)))
    _captured_by_the_hook(tmp_path, PLACE, SESSION)
    worker = home / "logs" / "worker.log"  # a line of the worker naming what it distilled
    worker.write_text(f"distilled {SESSION}: 1 fact\n" + "x" * 4000 + "\n")
    assert "logs/hooks.log" in files_holding(home, PLACE)
    code = RUN.format(killed=KILLED, place=PLACE, patch=patch, session=SESSION)
    killed = python_c(code, env={"MEMCTL_EMBEDDER": "hash"})
    assert killed.returncode == KILLED, killed.stderr
    assert files_holding(home, PLACE) != []  # the test met the crash it means

    cli_ok("sessions", "forget", SESSION, "--yes")
    assert files_holding(home, PLACE) == []
    assert files_holding(home, SESSION) == []
    assert list((home / "logs").glob(".*")) == []  # the rewrite's journal was finished
    assert worker.read_text().endswith("x" * 4000 + "\n")


def _ended(transcript: Path) -> dict[str, str]:
    return {"session_id": SESSION, "transcript_path": str(transcript)}
