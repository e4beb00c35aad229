"""``memctl uninstall --purge``: after every file memctl wrote to the assistants (and the
launcher, man page and completions) is put back, stop the resident process and remove
the data directory (memories, sessions, backups, logs) and the per-user model cache,
and the directories above them that this leaves empty, up to the home directory."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memctl.errors import UsageError
from memctl.home import user_cache_dir

if TYPE_CHECKING:
    from memctl.maintain.everywhere import Forgotten

STOP_WAIT_SECONDS = 5.0  # a resident process answers a stop within a request's time


def targets(home: Path) -> list[Path]:
    """The directories a purge removes, those that exist; a data directory that holds the
    user's home (``--home ~``) is refused."""
    if Path.home().resolve().is_relative_to(home.resolve()):
        raise UsageError(f"a purge would remove {home}, which holds your home directory")
    return [path for path in (home, user_cache_dir()) if path.exists()]


def stop_resident(home: Path) -> bool:
    """Tell the resident process of ``home`` to stop and wait until it has exited (its
    memory, which kept the requests it read, goes with it): whether one was running. Its
    socket went before it did: it still ran, memory and all, a second and more after."""
    from memctl.ingest.run import alive
    from memctl.integrations import resident

    deadline = time.monotonic() + STOP_WAIT_SECONDS
    answer = resident.tell(home, "stop")
    if answer is None:
        # one still starting (a recall just launched it) would make the data directory
        # again as it takes its lock: it is ended, and gone, before anything is removed
        pid = resident.stop_starting(home)
    elif isinstance(answer.get("stopped"), int):
        pid = answer["stopped"]
    else:  # one of another memctl (a stale stamp) says no id: gone once it stops answering
        while time.monotonic() < deadline and resident.tell(home, "status") is not None:
            time.sleep(0.1)
        return True
    while pid is not None and time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    return pid is not None


def stop_resident_after(home: Path, done: Forgotten) -> bool:
    """End the resident process of ``home`` when a forget took text out of the store
    (``done``): its memory keeps the requests it read (a recall that showed the text, or
    quoted it), and each child it forks gets a copy; the next recall or session start
    starts another. A forget of what was forgotten already leaves it running. Whether one
    was ended."""
    return done.took_text and stop_resident(home)


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
