"""Identity files: text a person writes and every session starts with, verbatim (layer L0).

Two files: ``$MEMCTL_HOME/identity.md`` (about you, for every project) and
``.memctl/identity.md`` at the project's root (about this project). ``memctl init``
creates them holding only a comment saying what belongs there; comments are never
injected. A file is read up to ``READ_LIMIT`` bytes; a binary one (a NUL byte) is
skipped; what does not fit the layer's budget is cut, with a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from memctl.config.files import write_private
from memctl.config.scope import project_root

FILE_NAME = "identity.md"
PROJECT_DIR = ".memctl"
# More than any budget can hold (a 3000-token layer is ~12 KB): a 10 MB file costs a read
# of its start, never the whole file.
READ_LIMIT = 64 * 1024
COMMENT = re.compile(r"<!--.*?-->", re.S)
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


def identity_paths(home: Path, cwd: Path) -> list[Path]:
    """The global file, then the project's."""
    return [home / FILE_NAME, project_root(cwd) / PROJECT_DIR / FILE_NAME]


def read_identity(path: Path) -> IdentityFile | None:
    """The file's text without comments; None when it is missing or says nothing."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            data = handle.read(READ_LIMIT)
    except OSError:
        return None
    if b"\x00" in data:
        return IdentityFile(path, "", f"{path} is binary, not text: left out")
    text = COMMENT.sub("", data.decode("utf-8", errors="replace")).strip()
    if not text:
        return None
    note = ""
    if size > READ_LIMIT:
        note = f"{path} is {size:,} bytes: only its first {READ_LIMIT // 1024} KiB were read"
    return IdentityFile(path, text, note)


def create_identity_files(home: Path, cwd: Path, project: bool) -> list[Path]:
    """Create the missing identity files (the project's only when ``project``), each
    holding its explaining comment; the paths created."""
    made = []
    paths = identity_paths(home, cwd)
    for path, template in zip(paths, (GLOBAL_TEMPLATE, PROJECT_TEMPLATE), strict=True):
        if path.exists() or (path != paths[0] and not project):
            continue
        if path == paths[0]:  # in the data directory: private, as everything there
            write_private(path, template)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(template, encoding="utf-8")
        made.append(path)
    return made
