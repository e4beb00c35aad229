"""What `init` and `install` keep of a config file they edit: the keys they changed, not the file.

A whole copy of ``~/.claude.json`` is a copy of Claude Code's prompt history
(``projects[...].history``) and of other MCP servers' tokens (``mcpServers[...].env``)
in memctl's data directory. For a JSON or TOML file, memctl keeps instead the keys it
added (as absent before), replaced or removed (with the value they had), each with the
SHA-256 of what it wrote there. Undo applies that reversal to the file as it stands
then: what the user or the assistant changed elsewhere since stays. A key changed since
memctl wrote it is a conflict: the file is left alone (unless forced).

A list memctl changed (a hook event's groups) is kept as the items it took out (with
their places) and the digests of the items it added, not the whole list.

The reversal, simulated when the backup is made, must give back the file's data; the
lines of pure punctuation it does not give back as they were (a JSON file's spacing,
a blank line in TOML) are kept so an undo of an unchanged file is byte for byte.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from memctl.clients import formats

FORMATS = {".json": "json", ".toml": "toml"}
# a line holding no data: JSON's punctuation, spaces (a kept line must hold nothing of the user's)
_BARE = re.compile(r"^[\s{}\[\],:]*$")


class Conflict(Exception):
    """The file changed since memctl wrote it where memctl's reversal would apply."""


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _load(kind: str, path: Path, data: bytes) -> dict[str, Any]:
    return formats.load_json(path, data) if kind == "json" else formats.load_toml(path, data)


def diff(
    before: dict[str, Any], after: dict[str, Any], keys: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """The changes from ``before`` to ``after``, each with what undoing it needs."""
    ops: list[dict[str, Any]] = []
    for at, key in enumerate(before):
        if key not in after:
            ops.append({"keys": [*keys, key], "before": before[key], "at": at, "written": None})
    for key, value in after.items():
        path = (*keys, key)
        if key not in before:
            ops += _added(path, value)
        elif before[key] == value:
            continue
        elif isinstance(before[key], dict) and isinstance(value, dict):
            ops += diff(before[key], value, path)
        elif isinstance(before[key], list) and isinstance(value, list):
            ops.append(_list_op(path, before[key], value))
        else:
            ops.append({"keys": list(path), "before": before[key], "written": digest(value)})
    return ops


def _added(keys: tuple[str, ...], value: Any) -> list[dict[str, Any]]:
    """A key memctl added: a table it made is taken out once memctl's keys in it are."""
    if isinstance(value, dict) and value:
        made = [{"keys": list(keys), "made": True}]
        return made + [op for key, inner in value.items() for op in _added((*keys, key), inner)]
    return [{"keys": list(keys), "absent": True, "written": digest(value)}]


def _list_op(keys: tuple[str, ...], before: list[Any], after: list[Any]) -> dict[str, Any]:
    old, new = [digest(v) for v in before], [digest(v) for v in after]
    removed: list[list[Any]] = []
    added: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            removed += [[i, before[i]] for i in range(i1, i2)]
            added += new[j1:j2]
    return {"keys": list(keys), "list": {"removed": removed, "added": added}}


def reverse_data(doc: dict[str, Any], ops: list[dict[str, Any]], force: bool) -> dict[str, Any]:
    """``doc`` with ``ops`` undone (``Conflict`` where it changed since, unless ``force``)."""
    for op in reversed(ops):
        *parents, last = op["keys"]
        node: Any = doc
        for key in parents:
            child = node.get(key)
            if child is None and "before" in op:
                child = node[key] = {}
            if not isinstance(child, dict):
                if child is None:
                    break  # taken out since: nothing of memctl's left to take out
                raise Conflict(".".join(op["keys"]))
            node = child
        else:
            _reverse_op(node, last, op, force)
    return doc


def _reverse_op(node: dict[str, Any], last: str, op: dict[str, Any], force: bool) -> None:
    here = last in node
    if op.get("made"):
        if here and node[last] == {}:
            del node[last]
    elif op.get("absent"):
        if here and digest(node[last]) != op["written"] and not force:
            raise Conflict(".".join(op["keys"]))
        node.pop(last, None)
    elif "list" in op:
        node[last] = _reverse_list(node.get(last), op, force)
    elif here and node[last] != op["before"] and digest(node[last]) != op["written"] and not force:
        raise Conflict(".".join(op["keys"]))
    elif op["written"] is None and not here:  # memctl took it out: back in its place
        items = list(node.items())
        items.insert(min(op["at"], len(items)), (last, op["before"]))
        node.clear()
        node.update(items)
    else:
        node[last] = op["before"]


def _reverse_list(current: Any, op: dict[str, Any], force: bool) -> list[Any]:
    if not isinstance(current, list):
        if not force:
            raise Conflict(".".join(op["keys"]))
        current = []
    items = list(current)
    for wrote in op["list"]["added"]:
        found = [i for i, item in enumerate(items) if digest(item) == wrote]
        if not found and not force:
            raise Conflict(".".join(op["keys"]))
        if found:
            del items[found[-1]]
    for index, item in op["list"]["removed"]:
        items.insert(min(index, len(items)), item)
    return items


def reverse(
    kind: str, path: Path, data: bytes, ops: list[dict[str, Any]], force: bool, style: Any = None
) -> bytes:
    """The file's bytes with ``ops`` undone, edited as the format's own edits do (a JSON
    file written in ``style``, else in the one it has now)."""
    if kind == "json":
        doc = reverse_data(formats.load_json(path, data), ops, force)
        style = style or json_style(path, data)
        return _dump(doc, style) if style else formats.dump_json(doc, data) or b""
    current = formats.load_toml(path, data)
    wanted = reverse_data(formats.load_toml(path, data), ops, force)
    return _toml_towards(path, data, current, wanted, ops)


def _dump(doc: dict[str, Any], style: dict[str, Any]) -> bytes:
    separators = (",", ":") if style.get("tight") else None
    text = json.dumps(
        doc, indent=style["indent"], ensure_ascii=style["ascii"], separators=separators
    )
    return (text + ("\n" if style["newline"] else "")).encode()


def json_style(path: Path, data: bytes) -> dict[str, Any] | None:
    """How a JSON file is written (indent, escapes, a last newline), when json.dumps can
    write it so byte for byte (Claude Code's 2 spaces, one line, tabs...)."""
    try:
        doc = formats.load_json(path, data)
    except formats.MalformedConfig:
        return None
    found = re.search(rb"\n([ \t]+)\S", data)
    indents = [found.group(1).decode()] if found else [None]
    for indent in indents:
        for tight in (False, True) if indent is None else (False,):  # JSON.stringify's one line
            for ascii_only in (False, True):
                for newline in (True, False):
                    style = {"indent": indent, "tight": tight, "ascii": ascii_only}
                    style["newline"] = newline
                    if _dump(doc, style) == data:
                        return style
    return None


def _toml_towards(
    path: Path,
    data: bytes,
    current: dict[str, Any],
    wanted: dict[str, Any],
    ops: list[dict[str, Any]],
) -> bytes:
    """The TOML text edited key by key (tomlkit keeps every other byte) from ``current``'s
    data to ``wanted``'s at the keys ``ops`` name."""
    text: bytes | None = data
    for op in reversed(ops):
        keys = tuple(op["keys"])
        had, value = _at(current, keys), _at(wanted, keys)
        if had == value:
            continue
        if value is None:
            text = formats.remove_toml(path, text, keys)
        else:
            if isinstance(value, dict) and isinstance(had, dict):
                text = formats.remove_toml(path, text, keys)
            text = formats.set_toml(path, text, keys, value)
        current = formats.load_toml(path, text)
    return text or b""


def _at(doc: dict[str, Any], keys: tuple[str, ...]) -> Any:
    node: Any = doc
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def make(path: Path, before: bytes, after: bytes) -> dict[str, Any] | None:
    """What undoing memctl's edit of a config file needs, without the rest of the file
    (None: not a format memctl edits as data, or the reversal does not give the data back,
    and the file is kept whole)."""
    kind = FORMATS.get(path.suffix)
    if kind is None:
        return None
    try:
        old, new = _load(kind, path, before), _load(kind, path, after)
        ops = diff(old, new)
        style = json_style(path, before) if kind == "json" else None
        back = reverse(kind, path, after, ops, False, style)
        if _load(kind, path, back) != old:
            return None
    except (formats.MalformedConfig, Conflict, ValueError, TypeError):
        return None
    return {
        "style": style,
        "format": kind,
        "ops": ops,
        "reversed": digest(back.decode("utf-8", "replace")),
        "fix": _fix(back, before),
    }


def _fix(back: bytes, before: bytes) -> list[list[Any]] | None:
    """The punctuation-only lines that make ``back`` the file as it was (None: a line with
    data in it differs, so the undo gives back the data, not every byte)."""
    if back == before:
        return []
    old = back.decode("utf-8").splitlines(keepends=True)
    new = before.decode("utf-8").splitlines(keepends=True)
    head = 0  # the lines alike at both ends left out of the (quadratic) matcher
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_mid, new_mid = old[head : len(old) - tail], new[head : len(new) - tail]
    fix = []
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if not all(_BARE.match(line) for line in old_mid[i1:i2] + new_mid[j1:j2]):
            return None
        fix.append([head + i1, head + i2, new_mid[j1:j2]])
    return fix


def undo(path: Path, current: bytes, patch: dict[str, Any], unchanged: bool, force: bool) -> bytes:
    """The file with memctl's edit undone (raises ``Conflict``, or ``MalformedConfig`` when
    it no longer parses); byte for byte what it was when nothing changed since."""
    style = patch.get("style") if unchanged else None
    back = reverse(patch["format"], path, current, patch["ops"], force, style)
    fix = patch.get("fix")
    if (
        unchanged
        and fix is not None
        and digest(back.decode("utf-8", "replace")) == patch["reversed"]
    ):
        lines = back.decode("utf-8").splitlines(keepends=True)
        for i1, i2, new in reversed(fix):
            lines[i1:i2] = new
        back = "".join(lines).encode()
    return back
