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
)
from memctl.config.files import write_private
from memctl.config.keys import key_named
from memctl.config.settings import DEFAULT_SOURCE
from memctl.config.urls import shown_url
from memctl.config.writing import check_project_key, template, write_config_value
from memctl.context import Context

__all__ = [
    "DEFAULT_SOURCE",
    "KEYS",
    "Context",
    "Settings",
    "check_project_key",
    "key_named",
    "load_settings",
    "scrubbed",
    "settings_from_flags",
    "shown_value",
    "split_assignments",
    "write_config_value",
    "write_private",
    "write_template",
]


def scrubbed(line: str) -> str:
    """A line memctl prints (an error quoting a value it was given) without the secrets
    or private text in it (``memories.privacy.scrub``, loaded only when called)."""
    from memctl.memories.privacy import scrub

    return scrub(line)[0]


def shown_value(value: object) -> object:
    """A setting's value as ``memctl config`` prints it: a URL (``ollama.host``,
    ``openai.base_url``, ``sync.remote``) without its credentials, as every other output
    shows one (``config.urls.shown_url``); the file keeps them."""
    return shown_url(value) if isinstance(value, str) else value


def write_template(target: Path, project: bool = False) -> None:
    """A commented config file listing every key at its default (``config.writing.template``),
    readable by its owner only."""
    write_private(target, template(project))
