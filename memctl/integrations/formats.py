"""Editing the config formats the assistants use: JSON, TOML and marked text blocks.

Each edit takes the file's bytes (None when it does not exist) and returns the
new bytes. A file that does not parse raises ``MalformedConfig`` naming the file
and the problem; the caller reports it and leaves the file alone.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from memctl.errors import InputError

BEGIN = "memctl:begin"
END = "memctl:end"


class MalformedConfig(InputError):
    """An existing config file does not parse; memctl leaves it untouched."""


def load_json(path: Path, data: bytes | None) -> dict[str, Any]:
    if data is None or not data.strip():
        return {}
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MalformedConfig(f"{path}: not valid JSON ({exc}); left untouched") from None
    if not isinstance(doc, dict):
        raise MalformedConfig(f"{path}: expected a JSON object; left untouched")
    return doc


def _indent(data: bytes | None) -> int:
    match = re.search(rb"\n( +)\S", data or b"")
    return len(match.group(1)) if match else 2


def dump_json(doc: dict[str, Any], before: bytes | None) -> bytes | None:
    """The document in the indentation of the file it came from; None when it is empty
    and there was no file (so an undo-like removal leaves no empty file behind)."""
    if not doc and before is None:
        return None
    return (json.dumps(doc, indent=_indent(before), ensure_ascii=False) + "\n").encode()


def set_json(path: Path, data: bytes | None, keys: tuple[str, ...], value: Any) -> bytes | None:
    doc = load_json(path, data)
    node = doc
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            if child is not None:
                raise MalformedConfig(f"{path}: {'.'.join(keys[:-1])} is not an object")
            child = node[key] = {}
        node = child
    if node.get(keys[-1]) == value:
        return data
    node[keys[-1]] = value
    return dump_json(doc, data)


def remove_json(path: Path, data: bytes | None, keys: tuple[str, ...]) -> bytes | None:
    doc = load_json(path, data)
    node: Any = doc
    for key in keys[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict) or keys[-1] not in node:
        return data
    del node[keys[-1]]
    return dump_json(doc, data)


def _markers(comment: str, name: str) -> tuple[str, str]:
    """The begin and end lines of memctl's block ``name`` in a file whose comments look
    like ``comment`` ("<!-- {} -->" or "# {}")."""
    suffix = f" {name}" if name else ""
    return comment.format(BEGIN + suffix), comment.format(END + suffix)


def set_block(
    data: bytes | None, body: str, comment: str, top: bool = False, name: str = ""
) -> bytes:
    """The text with memctl's block (between marker lines) replaced by ``body``, or added
    at the end (``top``: at the start); nothing else changes."""
    begin, end = _markers(comment, name)
    block = f"{begin}\n{body.rstrip()}\n{end}\n"
    text = (data or b"").decode("utf-8")
    found = re.search(rf"^{re.escape(begin)}\n.*?^{re.escape(end)}\n?", text, re.M | re.S)
    if found:
        return (text[: found.start()] + block + text[found.end() :]).encode()
    if top:
        return (block + ("\n" + text if text else "")).encode()
    if text and not text.endswith("\n"):
        text += "\n"
    return (text + ("\n" if text else "") + block).encode()


def remove_block(data: bytes | None, comment: str, name: str = "") -> bytes | None:
    """The text without memctl's block (and the blank line set before it)."""
    if data is None:
        return None
    begin, end = _markers(comment, name)
    text = data.decode("utf-8")
    found = re.search(rf"\n?^{re.escape(begin)}\n.*?^{re.escape(end)}\n?", text, re.M | re.S)
    if not found:
        return data
    rest = text[: found.start()] + text[found.end() :]
    return rest.encode() if rest.strip() else None


def has_block(data: bytes | None, comment: str, name: str = "") -> bool:
    return data is not None and (_markers(comment, name)[0] + "\n").encode() in data


def load_toml(path: Path, data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MalformedConfig(f"{path}: not valid TOML ({exc}); left untouched") from None


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def toml_array(values: list[str]) -> str:
    return "[" + ", ".join(toml_string(v) for v in values) + "]"
