"""Identity files: text a person writes and every session starts with, verbatim (layer L0).

Two files: ``$MEMCTL_HOME/identity.md`` (about you, for every project) and
``.memctl/identity.md`` at the project's root (about this project). ``memctl init``
creates them holding only a comment saying what belongs there; comments are never
injected. A file is read up to ``READ_LIMIT`` bytes; a binary one (a NUL byte) is
skipped; what does not fit the layer's budget is cut, with a note.

A project's file comes with whatever repository was cloned, so it is read as untrusted
input: only a regular file, opened without following a symbolic link (neither the file
nor its ``.memctl`` folder may be one: a link to ``~/.ssh/id_rsa`` would paste the key
into every session) and without waiting on a FIFO or a device; its text goes through the
privacy filter every memory goes through (``<private>`` blocks, secrets), and a line of it
that tells to run code fetched from the network (``curl ... | sh``) is left out, as such a
memory opens no session unless the person said it (``memories.provenance``). What is left
out, or redacted, is said in one line (a note of the block, ``memctl context --explain``
and ``memctl doctor``).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from memctl.config.files import create_new, read_untrusted, write_private
from memctl.config.scope import project_root
from memctl.lazy_re import lazy
from memctl.model import counted

FILE_NAME = "identity.md"
PROJECT_DIR = ".memctl"
# More than any budget can hold (a 3000-token layer is ~12 KB): a 10 MB file costs a read
# of its start, never the whole file.
READ_LIMIT = 64 * 1024
COMMENT = lazy(r"<!--.*?-->", re.S)
GLOBAL_TEMPLATE = """<!--
Your identity for memctl: every assistant session starts with this file, verbatim
(comments like this one are left out). Write who you are and how you like to work,
e.g. "I'm Dana, a backend engineer; answer briefly; British spelling".
Keep it short: it is cut to context.identity_budget tokens.
-->
"""
PROJECT_TEMPLATE = """<!--
This project's identity for memctl: every assistant session in this repository starts
with this file, verbatim (comments like this one are left out). Write what the project
is and the rules that always hold, e.g. "Payments service; Python 3.12; never edit
migrations in place". Keep it short: it is cut to context.identity_budget tokens.
-->
"""


@dataclass(frozen=True)
class IdentityFile:
    """One identity file as read: its text (comments removed) and a note when it was
    not usable as is."""

    path: Path
    text: str
    note: str = ""
    refused: bool = False  # a link, a FIFO, a device: never opened, and the session is told


def identity_paths(home: Path, cwd: Path) -> list[Path]:
    """The global file, then the project's."""
    return [home / FILE_NAME, project_root(cwd) / PROJECT_DIR / FILE_NAME]


KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


def read_identity(path: Path) -> IdentityFile | None:
    """The file's text without comments, private text and secrets; None when it is missing
    or says nothing; a note (and no text) when it is no regular file of its own."""
    refused = _not_plain(path)
    if refused:
        return IdentityFile(path, "", f"{path} is {refused}, not a regular file: left out", True)
    try:
        data = read_untrusted(path, READ_LIMIT)  # a link or FIFO put there since: refused
        size = os.lstat(path).st_size
    except FileNotFoundError:
        return None
    except OSError as exc:
        return IdentityFile(path, "", f"{path}: {exc.strerror}: left out", True)
    if b"\x00" in data:
        return IdentityFile(path, "", f"{path} is binary, not text: left out")
    return _text(path, data, size)


def _not_plain(path: Path) -> str:
    """What makes ``path`` or its folder no place to read from ('' when nothing does): a
    symbolic link (either), or a special file."""
    parts = [(path, "")]
    if path.parent.name == PROJECT_DIR:  # the home may be a link; a cloned .memctl may not
        parts.insert(0, (path.parent, "in a folder that is a symbolic link"))
    for part, what in parts:
        try:
            info = os.lstat(part)
        except OSError:
            return ""
        if stat.S_ISLNK(info.st_mode):
            return what or "a symbolic link"
        if part == path and not stat.S_ISREG(info.st_mode):
            return KINDS.get(stat.S_IFMT(info.st_mode), "no regular file")
    return ""


def _text(path: Path, data: bytes, size: int) -> IdentityFile | None:
    """The text a session may get: comments out, then private text and secrets."""
    from memctl.memories.privacy import scrub  # ~20 ms of patterns: only when a file is there
    from memctl.memories.provenance import fetches_and_runs

    text = COMMENT.sub("", data.decode("utf-8", errors="replace")).strip()
    if not text:
        return None
    text, found = scrub(text)
    notes = []
    if path.parent.name == PROJECT_DIR:  # it came with the repository, not from the person
        lines = text.splitlines()
        text = "\n".join(line for line in lines if not fetches_and_runs(line))
        fetching = len(lines) - len(text.splitlines())
        if fetching:
            notes.append(
                f"{path}: {counted(fetching, 'line')} telling to run code fetched from the network "
                "left out (the file came with the repository)"
            )
    if size > READ_LIMIT:
        notes.append(f"{path} is {size:,} bytes: only its first {READ_LIMIT // 1024} KiB were read")
    hidden = found.secret_count + found.private_blocks
    if hidden:
        what = counted(hidden, "secret or private block", "secrets or private blocks")
        notes.append(f"{path}: {what} redacted")
    return IdentityFile(path, text.strip(), "; ".join(notes))


@dataclass(frozen=True)
class Redacted:
    """What ``redact_identity`` did: the files it rewrote, and those holding a value it
    left (a project's, which is the repository's to change)."""

    rewritten: list[Path]
    left: list[Path]


def redact_identity(home: Path, cwd: Path, values: list[str], mark: str) -> Redacted:
    """Replace each of ``values`` by ``mark`` in the home's identity file (every session
    starts with it: ``memctl redact`` left the value there, sent to the assistant at each
    session start), and name the current project's file when it holds one."""
    rewritten, left = [], []
    for path in identity_paths(home, cwd):
        if _not_plain(path):
            continue
        try:
            text = read_untrusted(path, READ_LIMIT).decode("utf-8", errors="replace")
        except OSError:
            continue
        if not any(v in text for v in values):
            continue
        if path.parent.name == PROJECT_DIR:
            left.append(path)
            continue
        whole = path.read_text(encoding="utf-8", errors="replace")
        for value in sorted(values, key=len, reverse=True):
            whole = whole.replace(value, mark)
        write_private(path, whole)
        rewritten.append(path)
    return Redacted(rewritten, left)


def remove_project_template(project: Path) -> Path | None:
    """Remove the project's identity file when it still holds only the template ``memctl
    init`` wrote (and its ``.memctl`` folder, when that leaves it empty); the path removed.
    A file someone wrote in, a link or a special file is left alone."""
    path = project_root(project) / PROJECT_DIR / FILE_NAME
    if _not_plain(path) or not path.is_file():
        return None
    if path.read_bytes() != PROJECT_TEMPLATE.encode("utf-8"):
        return None
    path.unlink()
    try:
        path.parent.rmdir()
    except OSError:  # it holds the project's config.yaml or more: it stays
        pass
    return path


@dataclass(frozen=True)
class Created:
    """The identity files ``create_identity_files`` made, and why it left one alone."""

    made: list[Path]
    refused: list[str]  # one line each


def create_identity_files(home: Path, cwd: Path, project: bool) -> Created:
    """Create the missing identity files (the project's only when ``project``), each
    holding its explaining comment. The project's is made new, never through a symbolic
    link another user planted in a shared checkout (a dangling ``.memctl/identity.md``
    would have the file written where it points) nor in their ``.memctl`` folder."""
    made, refused = [], []
    paths = identity_paths(home, cwd)
    for path, template in zip(paths, (GLOBAL_TEMPLATE, PROJECT_TEMPLATE), strict=True):
        if path.exists() or (path != paths[0] and not project):
            continue
        if path == paths[0]:  # in the data directory: private, as everything there
            write_private(path, template)
        else:
            try:
                create_new(path, template)
            except OSError as exc:
                refused.append(f"left {path} alone: {exc.strerror}")
                continue
        made.append(path)
    return Created(made, refused)
