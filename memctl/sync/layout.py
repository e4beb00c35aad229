"""The sync repository's layout: where a memory's file lives, and the format version.

``memories/<scope>/<memory-id>_<host-id>.yaml``: the scope is the project's
normalised git remote (``github.com/acme/app``) or ``global``, with every
character but letters, digits and ``/ . _ - ~`` percent-encoded (``path:ab12``
is ``path%3Aab12``), so the same project is the same directory on every machine.
A path that does not match exactly is refused, never interpreted.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from memctl.errors import SyncError
from memctl.sync.untrusted import yaml_problem

FORMAT_VERSION = "1.0"
FORMAT_FILE = "memctl.yaml"
README_FILE = "README.md"
MEMORIES = "memories"
SEGMENT = re.compile(r"^[A-Za-z0-9._~%-]{1,200}$")
FILE_NAME = re.compile(r"^(?P<id>[0-9a-f]{32})_(?P<host>[0-9a-f]{16})\.yaml$")
MEMORY_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_SCOPE_CHARS = 400


def scope_dir(scope: str) -> str:
    """The directory of a scope under ``memories/``; ValueError when it cannot have one."""
    encoded = quote(scope, safe="/._-~")
    segments = encoded.split("/")
    if len(encoded) > MAX_SCOPE_CHARS or any(
        s in (".", "..") or not SEGMENT.match(s) for s in segments
    ):
        raise ValueError(f"scope {scope!r} cannot be a directory name")
    return encoded


def memory_path(scope: str, memory_id: str, host: str) -> str:
    if not MEMORY_ID.match(memory_id):
        raise ValueError(f"memory id {memory_id!r} is not 32 hexadecimal digits")
    return f"{MEMORIES}/{scope_dir(scope)}/{memory_id}_{host}.yaml"


def parse_path(path: str) -> tuple[str, str, str]:
    """(scope, memory id, host id) of a file path; ValueError says why it is refused."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != MEMORIES:
        raise ValueError("not memories/<scope>/<memory-id>_<host-id>.yaml")
    name = FILE_NAME.match(parts[-1])
    if name is None:
        raise ValueError("file name is not <memory-id>_<host-id>.yaml")
    directory = "/".join(parts[1:-1])
    scope = unquote(directory)
    try:
        canonical = scope_dir(scope)
    except ValueError:
        canonical = ""
    if canonical != directory or any(ord(c) < 32 for c in scope):
        raise ValueError("scope directory is not a valid scope name")
    return scope, name["id"], name["host"]


def format_text() -> str:
    return (
        "# A memctl sync repository: one YAML file per memory and machine (see README.md).\n"
        f'format: "{FORMAT_VERSION}"\n'
    )


def check_format(text: str | None, where: str) -> None:
    """Refuse a repository of a newer major format version (or an unreadable memctl.yaml)."""
    import yaml

    if text is None:
        return
    problem = yaml_problem(text)
    if problem:
        raise SyncError(f"{where}: {FORMAT_FILE} {problem}")
    try:
        found = yaml.safe_load(text)
        version = str(found["format"]) if isinstance(found, dict) else ""
        major = int(version.split(".")[0])
    except (yaml.YAMLError, KeyError, ValueError):
        raise SyncError(f"{where}: {FORMAT_FILE} does not name a format version") from None
    if major > int(FORMAT_VERSION.split(".")[0]):
        raise SyncError(
            f"{where} is in sync format {version}; this memctl reads format "
            f"{FORMAT_VERSION.split('.')[0]}.x: upgrade memctl"
        )


README_TEXT = """\
# Shared memories (memctl)

This repository is written by [memctl](https://github.com/) `sync`: long-term
memories of AI assistants, shared between machines and people.

- `memctl.yaml` names the format version (`format: "1.0"`). A memctl that
  reads an older major version refuses the repository.
- `memories/<scope>/<memory-id>_<host-id>.yaml` holds one memory as one
  machine last wrote it. The scope is the project's normalised git remote
  (`github.com/acme/app`) or `global`; characters other than letters, digits
  and `/ . _ - ~` are percent-encoded. A machine (host id) only ever writes
  its own files, so git never has a conflict to resolve.
- Each file holds, in this order: `id`, `state`, `kind`, `category`,
  `tier`, `importance`, `confidence`, `created_at`, `updated_at`,
  `invalidated_at`, `superseded_by`, `tags`, `source`, `content`,
  `l0_abstract`, `l1_overview`, `l2_content`, `relations` (a list of
  `dst_id`, `type`, `weight`, `created_at`). No vectors: each machine makes
  its own. A deleted memory is a tombstone: `id`, `state: deleted` and its
  timestamps, no content.
- When several files hold one memory, the newest `updated_at` wins (ties:
  the greater host id); the losing version is kept in the memory's event log.

Edit files by hand if you must: bump `updated_at`, keep the key names. Files
that do not parse, are too big, have the wrong types, or have a name that
does not match the pattern are skipped and reported by `memctl sync`.
"""
