"""Stage 1 of a sync, read: the files of the repository that changed since this machine
last read them, each checked as untrusted input.

The repository's tree is compared with the index of files already read, by
blob id: when the index still holds exactly the files of a commit read before,
only the entries that differ from that commit's tree (``git diff-tree``, so the
cost follows what changed, not the repository's size); otherwise every entry
(``git ls-tree``). Only new and changed files are read, and only by
blob (never through the work tree, so a symlink leads nowhere). A file is
skipped, named and counted when it is a symlink or not a file, its name is not
UTF-8 (shown with ``\\xff`` escapes) or does not match
its format's pattern (``layout``), it is larger than
``sync.max_file_bytes``, or it does not parse (``memfile.parse``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memctl.store.sync import SyncFile
from memctl.sync.layout import FORMAT_MAJOR, parse_path
from memctl.sync.memfile import FORGOTTEN, BadFile, Version, parse, signature
from memctl.sync.repo import Clone, Entry

# A long sync's stages tell how far they are: (what, e.g. "reading files", done, total);
# a total of 0 is a step that cannot count (git fetching or pushing).
Progress = Callable[[str, int, int], None]


def quiet(stage: str, done: int, total: int) -> None:
    """The progress of a sync nobody watches."""


@dataclass
class Incoming:
    """What changed in the repository: the new versions, the files gone, the bad files."""

    versions: list[Version] = field(default_factory=list)
    files: list[SyncFile] = field(default_factory=list)  # index rows of ``versions``
    removed: list[SyncFile] = field(default_factory=list)
    bad: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    gone_own: list[str] = field(default_factory=list)  # memory ids whose own file vanished
    commit: str | None = None  # the commit read: the index holds its files once applied


def read_incoming(
    clone: Clone,
    ref: str,
    index_of: Callable[[list[str] | None], dict[str, SyncFile]],
    own_host: str,
    max_bytes: int,
    progress: Progress = quiet,
    major: int = FORMAT_MAJOR,
    since: tuple[str, list[tuple[str, str]]] | None = None,
) -> Incoming:
    """What changed in ``ref`` since the files of the index were read (``index_of``: its
    files at these paths, or all); ``since``: the commit whose tree the index holds and
    that tree's bad files, to compare with it alone (the bad files it still holds are
    named again)."""
    commit = clone.resolve(ref)
    incoming = Incoming(commit=commit)
    diff = clone.changes(since[0], commit) if since and commit else None
    if since is None or diff is None:
        entries = clone.tree(commit) if commit else []
        index = index_of(None)
        gone = set(index) - {e.path for e in entries}
    else:
        entries, removed = diff
        index = index_of([e.path for e in entries] + removed)
        gone = {path for path in removed if path in index}
        touched = {e.path for e in entries} | set(removed)
        incoming.bad = [(path, why) for path, why in since[1] if path not in touched]
    changed = []
    for entry in entries:
        known = index.get(entry.path)
        if known is None or known.blob != entry.blob or entry.symlink:
            changed.append((entry, known))
    for done, (entry, known) in enumerate(changed):
        progress("reading files", done, len(changed))
        try:
            version, (digest, mac) = _read(clone, entry, max_bytes, major)
        except BadFile as why:
            incoming.bad.append((entry.path, str(why)))
            if known is not None:
                incoming.removed.append(known)
            continue
        incoming.versions.append(version)
        incoming.files.append(
            SyncFile(
                entry.path,
                version.id,
                version.host,
                version.updated_at,
                FORGOTTEN if version.forgotten else str(version.values["state"]),
                entry.blob,
                digest,
                mac,
            )
        )
    for path in sorted(gone):
        known = index[path]
        incoming.removed.append(known)
        if known.host_id == own_host:
            incoming.gone_own.append(known.memory_id)
    return incoming


def _read(
    clone: Clone, entry: Entry, max_bytes: int, major: int
) -> tuple[Version, tuple[str, str | None]]:
    """The version a file holds, and its ``signature``."""
    if not entry.utf8:
        raise BadFile("its name is not UTF-8")
    if entry.symlink:
        raise BadFile("a symlink")
    if entry.type != "blob":
        raise BadFile(f"not a file ({entry.type})")
    try:
        scope, memory_id, host = parse_path(entry.path, major)
    except ValueError as why:
        raise BadFile(str(why)) from None
    if entry.size > max_bytes:
        raise BadFile(
            f"{entry.size:,} bytes, over the limit of {max_bytes:,} (sync.max_file_bytes)"
        )
    try:
        text = clone.read_blob(entry.blob).decode("utf-8")
    except UnicodeDecodeError:
        raise BadFile("not UTF-8 text") from None
    return parse(text, memory_id, host, scope), signature(text, entry.path)
