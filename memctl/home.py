"""Where memctl keeps its data and its per-user cache, from the environment alone.

Apart from ``memctl.config`` (which re-exports both) so that the resident recall's
client (``memctl.integrations.resident``) finds its home without loading the settings.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_home() -> Path:
    """``$MEMCTL_HOME``, else ``$XDG_DATA_HOME/memctl``, else ``~/.local/share/memctl``."""
    if os.environ.get("MEMCTL_HOME"):
        return Path(os.environ["MEMCTL_HOME"]).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg).expanduser() / "memctl"


def user_cache_dir() -> Path:
    """What memctl keeps per user, not per data directory (the model, its packed weights):
    ``$XDG_CACHE_HOME/memctl``, else ``~/.cache/memctl``."""
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "memctl"
