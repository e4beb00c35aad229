"""Start the detached worker (``python -m memctl.maintain.worker``) without importing it.

The hook's fast lane calls this; the worker's own imports (the ingest
pipeline) stay out of the hook's process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memctl.config import Settings
from memctl.config.files import open_private

LOG_DIR = "logs"
LOG_FILE = "worker.log"
# How much memctl's background work lowers its CPU priority (the worker's ``os.nice``, the
# scheduled maintain's ``nice`` and ``Nice=``): it distils and embeds session messages
# (about a second of CPU a long session, minutes for a backfill or a maintain run's 5,000:
# docs/benchmarks.md, "Message vectors by the store's size") and must not slow the
# assistant and the person it works for (reasoned: the usual background niceness).
NICENESS = 10


def log_path(settings: Settings) -> Path:
    return settings.home / LOG_DIR / LOG_FILE


def spawn(settings: Settings, overrides: dict[str, str]) -> int:
    """Start a detached worker for this home and config overrides; its process id."""
    path = log_path(settings)
    output = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    args = [sys.executable, "-m", "memctl.maintain.worker", "--home", str(settings.home)]
    for name, value in overrides.items():
        args += ["--config", f"{name}={value}"]
    try:
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=settings.cwd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(output)
    return process.pid
