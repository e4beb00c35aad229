"""Configuration: the keys and their defaults, typed settings, the files that set them.

``keys`` holds the key registry, ``settings`` the layering (defaults < home config <
project config < ``MEMCTL_*`` < ``-c KEY=VALUE``); ``writing`` sets a key in a config
file and writes the template; ``scope`` names the project a directory belongs to.
"""

from memctl.config.keys import KEYS, USER_KEYS
from memctl.config.settings import (
    ENV_NOT_KEYS,
    PROJECT_CONFIG,
    Settings,
    load_settings,
    settings_from_flags,
    split_assignments,
)
from memctl.config.writing import template, write_config_value
from memctl.home import default_home, user_cache_dir

__all__ = [
    "ENV_NOT_KEYS",
    "KEYS",
    "PROJECT_CONFIG",
    "USER_KEYS",
    "Settings",
    "default_home",
    "load_settings",
    "settings_from_flags",
    "split_assignments",
    "template",
    "user_cache_dir",
    "write_config_value",
]
