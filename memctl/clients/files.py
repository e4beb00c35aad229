"""Changing other programs' files safely: a plan of changes, their diff, backups, and undo.

A ``Plan`` reads files through an overlay, so two changes to one file (Codex and
OpenCode both write ``AGENTS.md``) see each other. Applying a plan backs up
every file it changes under ``$MEMCTL_HOME/backups/<run>/`` with a manifest
(the path, whether it existed, the SHA-256 of what memctl wrote), then writes
each file atomically. Of a JSON or TOML config file only memctl's changes are kept
(``clients.patches``: the keys it added, replaced or removed, with their old values),
never the rest of it (``~/.claude.json`` holds Claude Code's prompt history and other
servers' tokens); other files (an instructions file memctl adds a block to) are kept
whole. Undo puts back the exact bytes that were there where the file still holds
what memctl wrote; from a config file changed since, it takes memctl's changes back
and keeps the others. A file changed since where memctl's keys are (or, kept whole,
anywhere) is named and left alone unless forced.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memctl.clients import formats, patches
from memctl.config.files import create_private, private_dir

BACKUPS = "backups"
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Change:
    path: Path
    before: bytes | None  # None: the file did not exist
    after: bytes | None  # None: remove the file
    client: str
    what: str  # "mcp server", "instructions", "hooks", "skill", ...


@dataclass
class Plan:
    """Changes to files, read through an overlay of the changes planned so far."""

    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # things left alone, and why
    _overlay: dict[Path, bytes | None] = field(default_factory=dict)

    def read(self, path: Path) -> bytes | None:
        if path in self._overlay:
            return self._overlay[path]
        try:
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def write(self, path: Path, after: bytes | None, client: str, what: str) -> None:
        before = self.read(path)
        if before == after:
            return
        self._overlay[path] = after
        self.changes.append(Change(path, before, after, client, what))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def files(self) -> list[tuple[Path, bytes | None, bytes | None]]:
        """(path, original bytes, final bytes) of each changed file, in first-change order."""
        seen: dict[Path, bytes | None] = {}
        for change in self.changes:
            seen.setdefault(change.path, change.before)
        return [(p, b, self._overlay[p]) for p, b in seen.items() if b != self._overlay[p]]

    def only(self, paths: set[Path]) -> Plan:
        """The same plan limited to ``paths``."""
        kept = Plan(notes=list(self.notes))
        owners = {c.path: c for c in self.changes}
        for path, _before, after in self.files():
            if path in paths:
                kept.write(path, after, owners[path].client, owners[path].what)
        return kept


def unified_diff(path: Path, before: bytes | None, after: bytes | None) -> str:
    old = (before or b"").decode("utf-8", "replace").splitlines(keepends=True)
    new = (after or b"").decode("utf-8", "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(
        old,
        new,
        "/dev/null" if before is None else f"a{path}",
        "/dev/null" if after is None else f"b{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def plan_diff(plan: Plan) -> str:
    return "".join(unified_diff(path, before, after) for path, before, after in plan.files())


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file, keeping the old file's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".memctl")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _missing_dirs(path: Path) -> list[str]:
    """The parents of ``path`` that do not exist yet, innermost first."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(str(parent))
    return missing


def apply(plan: Plan, home: Path, command: str) -> Path | None:
    """Back up and write every changed file; the run's backup directory (None: no change)."""
    files = plan.files()
    if not files:
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    run = home / BACKUPS / f"{stamp}-{command}"
    private_dir(run)
    clients = {c.path: c.client for c in plan.changes}
    entries = []
    for index, (path, before, after) in enumerate(files):
        backup = None
        patch = None if before is None or after is None else patches.make(path, before, after)
        if before is not None:
            backup = f"{index}.bak"
            with create_private(run / backup) as out:
                out.write(before if patch is None else json.dumps(patch, indent=1).encode())
        entries.append(
            {
                "path": str(path),
                "client": clients[path],
                "backup": backup,
                "kept": "whole" if patch is None else "changes",
                "written": sha256(after),
                "created_dirs": _missing_dirs(path),
                "undone": False,
            }
        )
    manifest = {"command": command, "created": stamp, "entries": entries}
    _save_manifest(run, manifest)
    for path, _before, after in files:
        if after is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, after)
    return run


def _save_manifest(run: Path, manifest: dict[str, Any]) -> None:
    write_atomic(run / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())


@dataclass
class UndoReport:
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # changed since memctl wrote them
    # changed since too: memctl's changes taken back, the others kept
    merged: list[str] = field(default_factory=list)


def runs(home: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Backup runs, newest first, with their manifests."""
    root = home / BACKUPS
    if not root.is_dir():
        return []
    found = []
    for run in sorted(root.iterdir(), reverse=True):
        try:
            found.append((run, json.loads((run / MANIFEST).read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue
    return found


def undo(
    home: Path, commands: tuple[str, ...], clients: set[str] | None, force: bool = False
) -> UndoReport:
    """Restore every file the given commands changed (for these clients), newest run first."""
    report = UndoReport()
    for run, manifest in runs(home):
        if manifest.get("command") not in commands:
            continue
        for entry in manifest["entries"]:
            if entry["undone"] or (clients is not None and entry["client"] not in clients):
                continue
            if _undo_entry(run, entry, force, report):
                entry["undone"] = True
        _save_manifest(run, manifest)
    return report


def _undo_entry(run: Path, entry: dict[str, Any], force: bool, report: UndoReport) -> bool:
    path = Path(entry["path"])
    current = path.read_bytes() if path.is_file() else None
    if entry.get("kept") == "changes":  # older runs: the file whole
        return _undo_changes(run, path, current, entry, force, report)
    if sha256(current) != entry["written"] and not force:
        report.left.append(str(path))
        return False
    if entry["backup"] is None:
        path.unlink(missing_ok=True)
        for directory in entry.get("created_dirs", []):
            try:
                Path(directory).rmdir()
            except OSError:
                break
        report.removed.append(str(path))
    else:
        try:
            kept = (run / entry["backup"]).read_bytes()
        except OSError:  # the backup is gone: memctl's part is taken out instead
            report.left.append(str(path))
            return False
        write_atomic(path, kept)
        report.restored.append(str(path))
    return True


def _undo_changes(
    run: Path,
    path: Path,
    current: bytes | None,
    entry: dict[str, Any],
    force: bool,
    report: UndoReport,
) -> bool:
    """memctl's changes to a config file taken back from the file as it stands now."""
    if current is None:  # taken away since: nothing of memctl's left in it
        report.left.append(str(path))
        return False
    unchanged = sha256(current) == entry["written"]
    try:
        patch = json.loads((run / entry["backup"]).read_text(encoding="utf-8"))
        back = patches.undo(path, current, patch, unchanged, force)
    except (OSError, ValueError, KeyError, TypeError, patches.Conflict, formats.MalformedConfig):
        # a conflict, or a backup gone or damaged: memctl's part is taken out instead
        report.left.append(str(path))
        return False
    if back != current:
        write_atomic(path, back)
    (report.restored if unchanged else report.merged).append(str(path))
    return True
