"""``memctl uninstall --purge``: after every file memctl wrote to the assistants (and the
launcher, man page and completions) is put back, stop the resident process and remove
the data directory (memories, sessions, backups, logs) and the per-user model cache,
and the directories above them that this leaves empty, up to the home directory."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from memctl.errors import UsageError
from memctl.home import user_cache_dir

STOP_WAIT_SECONDS = 5.0  # a resident process answers a stop within a request's time


def targets(home: Path) -> list[Path]:
    """The directories a purge removes, those that exist; a data directory that holds the
    user's home (``--home ~``) is refused."""
    if Path.home().resolve().is_relative_to(home.resolve()):
        raise UsageError(f"a purge would remove {home}, which holds your home directory")
    return [path for path in (home, user_cache_dir()) if path.exists()]


def stop_resident(home: Path) -> bool:
    """Tell the resident process of ``home`` to stop and wait until it no longer answers;
    whether one was running."""
    from memctl.ingest.run import alive
    from memctl.integrations import resident

    deadline = time.monotonic() + STOP_WAIT_SECONDS
    if resident.tell(home, "stop") is None:
        # one still starting (a recall just launched it) would make the data directory
        # again as it takes its lock: it is ended, and gone, before anything is removed
        pid = resident.stop_starting(home)
        while pid is not None and time.monotonic() < deadline and alive(pid):
            time.sleep(0.05)
        return pid is not None
    while time.monotonic() < deadline and resident.tell(home, "status") is not None:
        time.sleep(0.1)
    return True


def purge(home: Path) -> tuple[bool, list[str]]:
    """Stop the resident process, remove the data directory and the model cache: whether
    a resident process was stopped, and the directories removed."""
    stopped = stop_resident(home)
    removed = []
    for path in targets(home):
        shutil.rmtree(path)
        removed.append(str(path))
        prune(path.parent)
    return stopped, removed


def prune(directory: Path) -> None:
    """Remove ``directory`` and those above it while empty, up to the home directory
    (``~/.local/share``, ``~/.cache`` when memctl's were all they held)."""
    top = Path.home().resolve()
    for path in (directory, *directory.parents):
        if path.resolve() == top or not path.resolve().is_relative_to(top):
            return
        try:
            path.rmdir()
        except OSError:  # not empty (or not ours to remove): what is above stays too
            return
