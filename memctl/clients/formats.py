"""Editing the config formats the assistants use: JSON, TOML and marked text blocks.

Each edit takes the file's bytes (None when it does not exist) and returns the
new bytes. A file that does not parse raises ``MalformedConfig`` naming the file
and the problem; the caller reports it and leaves the file alone.

Config files (JSON, TOML) are edited as data: memctl sets or removes its own keys
and every other key stays. TOML is edited through tomlkit, which keeps the rest
of the file byte for byte (comments, order, spacing), and every edit is checked:
the file parsed before and after must hold the same data outside memctl's keys.
Only prose (instruction files) uses marked blocks. Codex appends its own tables
at the end of config.toml, so a marked block there would swallow them; the
markers older versions wrote are taken out of TOML files on the next edit.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a TOML file is edited: hooks never load it
    import tomlkit
    from tomlkit.items import Table

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


def _markers(comment: str) -> tuple[str, str]:
    """The begin and end lines of memctl's block in a file whose comments look like
    ``comment`` ("<!-- {} -->")."""
    return comment.format(BEGIN), comment.format(END)


def set_block(data: bytes | None, body: str, comment: str) -> bytes:
    """The text with memctl's block (between marker lines) replaced by ``body``, or added
    at the end; nothing else changes."""
    begin, end = _markers(comment)
    block = f"{begin}\n{body.rstrip()}\n{end}\n"
    text = (data or b"").decode("utf-8")
    found = re.search(rf"^{re.escape(begin)}\n.*?^{re.escape(end)}\n?", text, re.M | re.S)
    if found:
        return (text[: found.start()] + block + text[found.end() :]).encode()
    if text and not text.endswith("\n"):
        text += "\n"
    return (text + ("\n" if text else "") + block).encode()


def remove_block(data: bytes | None, comment: str) -> bytes | None:
    """The text without memctl's block (and the blank line set before it)."""
    if data is None:
        return None
    begin, end = _markers(comment)
    text = data.decode("utf-8")
    found = re.search(rf"\n?^{re.escape(begin)}\n.*?^{re.escape(end)}\n?", text, re.M | re.S)
    if not found:
        return data
    rest = text[: found.start()] + text[found.end() :]
    return rest.encode() if rest.strip() else None


def load_toml(path: Path, data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MalformedConfig(f"{path}: not valid TOML ({exc}); left untouched") from None


def _toml_text(path: Path, data: bytes | None) -> str:
    """The file's text without the marker lines older versions of memctl wrote (the
    lines alone: whatever a client wrote between them stays), ending in a newline."""
    load_toml(path, data)  # names the file when it does not parse
    text = (data or b"").decode("utf-8")
    text = re.sub(rf"^# {BEGIN}( \w+)?\n?|^# {END}( \w+)?(\n|$)", "", text, flags=re.M)
    return text if not text or text.endswith("\n") else text + "\n"


def _parse_toml(path: Path, text: str) -> tomlkit.TOMLDocument:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise MalformedConfig(f"{path}: not valid TOML ({exc}); left untouched") from None


def _without(doc: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """A copy of parsed data without the value at ``keys``."""
    rest = copy.deepcopy(doc)
    node: Any = rest
    for key in keys[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(keys[-1], None)
    parent = rest.get(keys[0]) if len(keys) > 1 else None
    if isinstance(parent, dict) and not parent:
        rest.pop(keys[0])
    return rest


def _checked(path: Path, data: bytes | None, text: str, keys: tuple[str, ...]) -> bytes | None:
    """The new text, once it parses to the same data as before outside ``keys``."""
    text = text.rstrip("\n") + "\n" if text.strip() else ""
    if _without(load_toml(path, data), keys) != _without(load_toml(path, text.encode()), keys):
        raise MalformedConfig(f"{path}: memctl's edit would change other settings; left untouched")
    return text.encode() if text else None


def _toml_item(value: Any) -> Any:
    """A table for a dict (its own ``[header]``, a blank line after it), else the value."""
    import tomlkit

    if not isinstance(value, dict):
        return value
    table = tomlkit.table()
    for key, inner in value.items():
        table[key] = inner
    table.add(tomlkit.nl())
    return table


def set_toml(path: Path, data: bytes | None, keys: tuple[str, ...], value: Any) -> bytes | None:
    """The file with ``value`` at ``keys`` (a dict becomes a table; keys of an existing
    table that memctl does not set stay); every other byte kept where TOML allows."""
    import tomlkit
    from tomlkit.items import Table

    text = _toml_text(path, data)
    doc = _parse_toml(path, text)
    node: Any = doc
    for depth, key in enumerate(keys[:-1]):
        child = node.get(key)
        if child is None:
            if depth == 0 and text.strip() and not text.endswith("\n\n"):
                doc.add(tomlkit.nl())
            child = node[key] = tomlkit.table(is_super_table=True)
        elif not isinstance(child, dict):
            raise MalformedConfig(f"{path}: {'.'.join(keys[: depth + 1])} is not a table")
        node = child
    current = node.get(keys[-1])
    if isinstance(value, dict) and isinstance(current, Table):
        _update_table(current, value)
    elif current != value:
        if current is None and isinstance(value, dict) and len(keys) == 1 and text.strip():
            doc.add(tomlkit.nl())
        node[keys[-1]] = _toml_item(value)
    return _checked(path, data, tomlkit.dumps(doc), keys)


def _update_table(table: Table, value: dict[str, Any]) -> None:
    """Set ``value``'s keys in ``table``, new ones after its last key (not after the
    comments and blank lines that end it, which belong above the next table)."""
    body = table.value.body
    trail: list[Any] = []
    while body and body[-1][0] is None:
        trail.insert(0, body.pop())
    for key, inner in value.items():
        if table.get(key) != inner:
            table[key] = inner
    body.extend(trail)


def remove_toml(path: Path, data: bytes | None, keys: tuple[str, ...]) -> bytes | None:
    """The file without the value at ``keys`` (and the table holding it, when memctl's
    was all it held and it had no header of its own)."""
    import tomlkit
    from tomlkit.items import Table

    if data is None:
        return None
    text = _toml_text(path, data)
    doc = _parse_toml(path, text)
    node: Any = doc
    parents = []
    for key in keys[:-1]:
        parents.append((node, key))
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict) or keys[-1] not in node:
        return data if text == data.decode("utf-8") else _checked(path, data, text, keys)
    del node[keys[-1]]
    for parent, key in reversed(parents):
        child = parent[key]
        if isinstance(child, Table) and child.is_super_table() and not child:
            del parent[key]
    return _checked(path, data, _keep_trailing_comments(text, tomlkit.dumps(doc)), keys)


def _keep_trailing_comments(before: str, after: str) -> str:
    """``after`` with the comment lines that ended a removed table put back: tomlkit
    counts a comment above the next table as the end of the one before it."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    kept: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("delete", "replace"):
            removed = old[i1:i2]
            last = max((i for i, line in enumerate(removed) if not _trivia(line)), default=-1)
            kept += [line for line in removed[last + 1 :] if line.strip()]
        if op in ("equal", "replace", "insert"):
            kept += new[j1:j2]
    return "".join(kept)


def _trivia(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def get_toml(path: Path, data: bytes | None, keys: tuple[str, ...]) -> Any:
    """The value at ``keys`` (None when absent)."""
    node: Any = load_toml(path, data)
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node
