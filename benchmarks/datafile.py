"""Reading a benchmark's JSON file (plain or gzipped), with one-line errors for bad input."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memctl.errors import InputError


def read_json_list(path: Path, what: str) -> list[Any]:
    """The JSON list in ``path`` (``.gz`` is decompressed); InputError when it is not one."""
    if not path.is_file():
        raise InputError(f"no {what} file at {path}")
    opener: Callable[..., Any] = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as stream:
            data = json.load(stream)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path} is not a {what} file: {exc}") from None
    if not isinstance(data, list) or not data:
        raise InputError(f"{path} is not a {what} file: expected a non-empty JSON list")
    return data


@contextmanager
def record_errors(path: Path, what: str, index: int) -> Iterator[None]:
    """Turn a malformed record's KeyError/TypeError/ValueError into one InputError line."""
    try:
        yield
    except KeyError as exc:
        raise InputError(f"{path}: {what} {index} has no {exc} field") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"{path}: {what} {index} is malformed: {exc}") from None
