"""Whatever the umask, what memctl writes under its home is the user's alone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.conftest import run_memctl


def run_under_umask(home: Path, *args: str, input: str = "") -> None:
    env = {**os.environ, "MEMCTL_HOME": str(home), "MEMCTL_EMBEDDER": "hash", "MEMCTL_LLM": "none"}
    mask = os.umask(0o022)  # the command's (run_memctl passes this process's on)
    try:
        done = run_memctl(list(args), env, input=input)
    finally:
        os.umask(mask)
    assert done.returncode == 0, done.stderr


def test_home_backups_and_hooks_are_private_under_umask_022(tmp_path: Path) -> None:
    home = tmp_path / "deep" / "memctl"
    run_under_umask(home, "remember", "a private note")
    run_under_umask(home, "maintain", "--only", "upkeep")
    run_under_umask(home, "hook", "claude-code", "Stop", input="{}")
    made = [home, home / "backups", *(home / "backups").iterdir(), home / "hooks"]
    made += [home / "hooks" / "fired", home / "memctl.db"]
    modes = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode)) for p in made}
    assert all(m in ("0o700", "0o600") for m in modes.values()), modes
