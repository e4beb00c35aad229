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


HOOKS = "hooks"  # what the hooks remember between runs (integrations/hooks_state.py)


def hook_file(home: Path, kind: str, name: str) -> Path:
    """One of the files the hooks keep, ``hooks/<kind>/<name>``, its name made safe."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return home / HOOKS / kind / safe


# The hooks' records of the memories each session was given (``injected_file``).
INJECTED = "injected"


def injected_file(home: Path, session_id: str) -> Path:
    """The record of the memories a session was given (``hooks_state.add_injected``):
    a forget of the session takes it out."""
    return hook_file(home, INJECTED, f"session.{session_id}")


def user_cache_dir() -> Path:
    """What memctl keeps per user, not per data directory (the model, its packed weights):
    ``$XDG_CACHE_HOME/memctl``, else ``~/.cache/memctl``."""
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "memctl"
