"""Settings for the front doors: the settings a door's options select (defaults < config
files < MEMCTL_* < the door's own overrides), the Context on them, and the edits of
``memctl config``."""

from __future__ import annotations

from pathlib import Path

from memctl.config import (
    KEYS,
    Settings,
    load_settings,
    settings_from_flags,
    split_assignments,
    template,
    write_config_value,
)
from memctl.config.files import write_private
from memctl.config.settings import DEFAULT_SOURCE, check_project_key
from memctl.context import Context

__all__ = [
    "DEFAULT_SOURCE",
    "KEYS",
    "Context",
    "Settings",
    "check_project_key",
    "load_settings",
    "settings_from_flags",
    "split_assignments",
    "write_config_value",
    "write_private",
    "write_template",
]


def write_template(target: Path, project: bool = False) -> None:
    """A commented config file listing every key at its default (``settings.template``),
    readable by its owner only."""
    write_private(target, template(project))
