"""The maintain lock: one ``memctl maintain`` (or restore, or a forget's clean-up of the
copies they leave) at a time."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from memctl.config import Settings
from memctl.config.files import open_private, private_dir

LOCK_FILE = "maintain.lock"


@contextlib.contextmanager
def maintain_lock(settings: Settings) -> Iterator[str | None]:
    """Hold the maintain lock; yields None, or the holder's pid when another has it."""
    path: Path = settings.home / LOCK_FILE
    private_dir(path.parent)
    handle: IO[str] = open(  # noqa: SIM115 (held across the yield); private, as every file
        path, "a+", encoding="utf-8", opener=lambda name, flags: open_private(Path(name), flags)
    )
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            yield handle.read().strip() or "unknown"
            return
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield None
    finally:
        handle.close()
