"""Reading JSON and YAML from outside (transcripts, exports, config files) without a crash.

Python's parsers recurse once per level of nesting: a document nested a
hundred thousand deep raises RecursionError, which is not a ValueError and
so slipped past every ``except ValueError`` into an internal error. Here it is
a ValueError like any other malformed input.
"""

from __future__ import annotations

import json
from typing import Any

TOO_DEEP = "nested too deeply to read"


def json_value(text: str) -> Any:
    """``json.loads``; a ValueError for anything unreadable, depth included."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def yaml_value(text: str) -> Any:
    """``yaml.safe_load``; a ValueError for anything unreadable, depth included."""
    import yaml  # ~10 ms to import: only when YAML is read

    try:
        return yaml.safe_load(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    except yaml.YAMLError as exc:
        raise ValueError(str(exc).splitlines()[0] if str(exc) else "not valid YAML") from None
