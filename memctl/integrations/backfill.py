"""Which past transcripts `memctl ingest --backfill` reads: each client's, as its module
in the registry says where it keeps them."""

from __future__ import annotations

from pathlib import Path

from memctl.clients import REGISTRY
from memctl.errors import UsageError
from memctl.ingest.backfill import Target
from memctl.memories.timeparse import parse_since
from memctl.model import parse_time


def since_time(text: str | None) -> float | None:
    """--since (an ISO date or time, or a span such as 30d) as a POSIX time."""
    return None if text is None else parse_time(parse_since(text)).timestamp()


def find_transcripts(client: str | None = None, since: float | None = None) -> list[Target]:
    """Every transcript file the clients keep (``client``'s only, when given), changed at
    or after ``since``, oldest first (so sessions are stored in the order they ran)."""
    if client is not None and client not in REGISTRY:
        known = ", ".join(REGISTRY)
        raise UsageError(f"unknown client {client!r} to backfill: expected one of {known}")
    found = _found(client, since)
    return [target for _, target in sorted(found.values(), key=lambda f: _order(f, found))]


def newest_transcript(client: str) -> float | None:
    """When the transcript ``client`` changed last was changed (None: it keeps none)."""
    return max((mtime for mtime, _ in _found(client, None).values()), default=None)


def _found(client: str | None, since: float | None) -> dict[str, tuple[float, Target]]:
    """Every transcript of ``client`` (of every client: None) by path: (mtime, target)."""
    found: dict[str, tuple[float, Target]] = {}
    for name, module in REGISTRY.items():
        if client not in (None, name):
            continue
        for folder in module.transcript_dirs():
            for pattern in module.TRANSCRIPT_GLOBS if folder.is_dir() else ():
                for path in folder.glob(pattern):
                    stat = path.stat() if _plain_file_in(path, folder) else None
                    if stat is None or (since is not None and stat.st_mtime < since):
                        continue
                    target = Target(name, module.TRANSCRIPT_FORMAT, path, stat.st_size)
                    found.setdefault(str(path), (stat.st_mtime, target))
        for stored in module.stored_sessions(since):
            target = Target(name, module.TRANSCRIPT_FORMAT, stored.where, 0, stored)
            found.setdefault(f"{stored.where}#{stored.id}", (stored.updated, target))
    return found


def _plain_file_in(path: Path, folder: Path) -> bool:
    """A regular file (a FIFO or a device is passed over), not a symbolic link leading out
    of ``folder`` (a link to ``~/.ssh/id_rsa`` is no transcript)."""
    if not path.is_file():
        return False
    return not path.is_symlink() or path.resolve().is_relative_to(folder.resolve())


def _order(
    entry: tuple[float, Target], found: dict[str, tuple[float, Target]]
) -> tuple[float, int, str]:
    """Oldest first; a transcript under a folder named after another (Claude Code and
    Cursor keep a session's sub-agents in ``<session>/subagents/``, beside
    ``<session>.jsonl`` or, in Cursor's editor, around ``<session>/<session>.jsonl``) right
    after that one, so a session's own messages come before its sub-agents' whatever the
    files' times."""
    mtime, target = entry
    for folder in target.path.parents:
        if not folder.name:
            break
        name = folder.name + target.path.suffix
        owner = found.get(str(folder.with_name(name))) or found.get(str(folder / name))
        if owner is not None and owner[1] is not target:
            return owner[0], 1, str(target.path)
    return mtime, 0, str(target.path)
