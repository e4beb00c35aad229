"""The sync repository's layout: where a memory's file lives, and the format version.

Format 2: ``memories/<scope>/<shard>/<memory-id>_<host-id>.yaml``, the shard being
the memory id's first two digits. The scope is the project's normalised git
remote (``github.com/acme/app``) or ``global``, with every character but
letters, digits and ``/ . _ - ~`` percent-encoded (``path:ab12`` is
``path%3Aab12``), so the same project is the same directory on every machine; a
project named by a folder of its machine (a remote that is a directory, ``file:...``, or
none, ``path:...``) is named by a digest of that scope keyed with the home's key
(``local:`` and 32 hex digits), never the path nor a digest anyone can try paths against.
Format 1 had no shard (``memories/<scope>/<memory-id>_<host-id>.yaml``): every
commit rewrote a tree listing the whole scope, so a team's year of history was
~310 MiB against 34 MiB sharded (docs/benchmarks.md). A 2.0 memctl reads format
1 (a read-only machine, a migration) and writes only format 2. A path that does
not match its format exactly is refused, never interpreted.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from urllib.parse import quote, unquote

from memctl.config.scope import KEYED_DIGITS, KEYED_PATH, LOCAL_REMOTE, PATH_SCOPE
from memctl.errors import SyncError
from memctl.sync.untrusted import yaml_problem

FORMAT_VERSION = "2.0"
FORMAT_MAJOR = 2
FLAT_MAJOR = 1  # format 1.0: no shard directory
SHARD_DIGITS = 2  # 256 directories a scope: ~70 files each after a team's year
FORMAT_FILE = "memctl.yaml"
README_FILE = "README.md"
MEMORIES = "memories"
SEGMENT = re.compile(r"^[A-Za-z0-9._~%-]{1,200}$")
FILE_NAME = re.compile(r"^(?P<id>[0-9a-f]{32})_(?P<host>[0-9a-f]{16})\.yaml$")
MEMORY_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_SCOPE_CHARS = 400
SHARED_LOCAL = "local:"  # such a project's scope as the repository names it
# hexadecimal digits of the plain digest an older memctl named a ``file:`` scope by, as
# ``path:`` scopes have
LOCAL_DIGITS = 16
# Where an older memctl put such a project's files: under its folder's path, under a
# plain digest of it, under its ``path:`` scope.
FOLDER_SCOPES = tuple(
    f"{MEMORIES}/{quote(prefix)}" for prefix in (LOCAL_REMOTE, SHARED_LOCAL, PATH_SCOPE)
)


def scope_dir(scope: str) -> str:
    """The directory of a scope under ``memories/``; ValueError when it cannot have one."""
    encoded = quote(scope, safe="/._-~")
    segments = encoded.split("/")
    if len(encoded) > MAX_SCOPE_CHARS or any(
        s in (".", "..") or not SEGMENT.match(s) for s in segments
    ):
        raise ValueError(f"scope {scope!r} cannot be a directory name")
    return encoded


def shared_scope(scope: str, home_key: bytes) -> str:
    """``scope`` as the repository names it: a project named by a folder of this machine,
    its git remote a directory (``file:/home/bob/clients/acme.git``,
    ``config.scope.normalise_remote``) or none (``path:`` and a plain digest of its
    folder), by an HMAC-SHA256 of the scope under ``home_key`` (``local:`` and 32
    hexadecimal digits), so no user name or folder goes to teammates and none can be
    guessed and tried against the name; any other scope as it is. A pure function of the
    scope and the key, and ``shared_scope(shared_scope(s, k), k) == shared_scope(s, k)``:
    the same directory each sync."""
    if not scope.startswith((LOCAL_REMOTE, PATH_SCOPE)):
        return scope
    if KEYED_PATH.fullmatch(scope):  # keyed already: the HMAC an older memctl's name was
        return SHARED_LOCAL + scope.removeprefix(PATH_SCOPE)
    digest = hmac.new(home_key, scope.encode(), hashlib.sha256).hexdigest()
    return SHARED_LOCAL + digest[:KEYED_DIGITS]


def plain_shared_scope(scope: str) -> str:
    """The name an older memctl gave a ``file:`` scope in the repository (``local:`` and
    16 digits of its plain SHA-256): a teammate's older memctl still writes a file of it
    there, which comes back into its project here."""
    return SHARED_LOCAL + hashlib.sha256(scope.encode()).hexdigest()[:LOCAL_DIGITS]


def memory_path(scope: str, memory_id: str, host: str, major: int = FORMAT_MAJOR) -> str:
    """The path of a memory's file in format ``major`` under the repository's name of
    its scope (``shared_scope``'s, for this machine's own memories); ValueError when it
    cannot have one."""
    if not MEMORY_ID.match(memory_id):
        raise ValueError(f"memory id {memory_id!r} is not 32 hexadecimal digits")
    shard = "" if major == FLAT_MAJOR else memory_id[:SHARD_DIGITS] + "/"
    return f"{MEMORIES}/{scope_dir(scope)}/{shard}{memory_id}_{host}.yaml"


def parse_path(path: str, major: int = FORMAT_MAJOR) -> tuple[str, str, str]:
    """(scope, memory id, host id) of a file path in format ``major``; ValueError says why
    it is refused."""
    parts = path.split("/")
    flat = major == FLAT_MAJOR
    if len(parts) < (3 if flat else 4) or parts[0] != MEMORIES:
        raise ValueError(f"not {pattern(major)}")
    name = FILE_NAME.match(parts[-1])
    if name is None:
        raise ValueError("file name is not <memory-id>_<host-id>.yaml")
    if not flat and parts[-2] != name["id"][:SHARD_DIGITS]:
        raise ValueError("not in the directory of its memory id's first two digits")
    directory = "/".join(parts[1 : -1 if flat else -2])
    scope = unquote(directory)
    try:
        canonical = scope_dir(scope)
    except ValueError:
        canonical = ""
    if canonical != directory or any(ord(c) < 32 for c in scope):
        raise ValueError("scope directory is not a valid scope name")
    return scope, name["id"], name["host"]


def pattern(major: int = FORMAT_MAJOR) -> str:
    shard = "" if major == FLAT_MAJOR else "<shard>/"
    return f"memories/<scope>/{shard}<memory-id>_<host-id>.yaml"


def moved(path: str, major: int, to_major: int) -> str:
    """The path of a format-``major`` file in format ``to_major``; ValueError when it is
    not a valid path of its format."""
    scope, memory_id, host = parse_path(path, major)
    return memory_path(scope, memory_id, host, to_major)


def format_text(version: str = FORMAT_VERSION) -> str:
    return (
        "# A memctl sync repository: one YAML file per memory and machine (see README.md).\n"
        f'format: "{version}"\n'
    )


def read_format(text: str | None, where: str) -> int | None:
    """The major format version ``memctl.yaml`` names (None without one); SyncError for a
    newer major version than this memctl's, or an unreadable file."""
    import yaml

    if text is None:
        return None
    problem = yaml_problem(text)
    if problem:
        raise SyncError(f"{where}: {FORMAT_FILE} {problem}")
    try:
        found = yaml.safe_load(text)
        version = str(found["format"]) if isinstance(found, dict) else ""
        major = int(version.split(".")[0])
    except (yaml.YAMLError, KeyError, ValueError):
        raise SyncError(f"{where}: {FORMAT_FILE} does not name a format version") from None
    if major > FORMAT_MAJOR:
        raise SyncError(
            f"{where} is in sync format {version}; this memctl reads format "
            f"{FORMAT_MAJOR}.x: upgrade memctl"
        )
    if major < FLAT_MAJOR:
        raise SyncError(f"{where}: {FORMAT_FILE} names format {version}, which never existed")
    return major


README_TEXT = """\
# Shared memories (memctl)

This repository is written by [memctl](https://github.com/) `sync`: long-term
memories of AI assistants, shared between machines and people.

- `memctl.yaml` names the format version (`format: "2.0"`). A memctl that
  reads an older major version refuses the repository.
- `memories/<scope>/<shard>/<memory-id>_<host-id>.yaml` holds one memory as
  one machine last wrote it; the shard is the memory id's first two digits.
  The scope is the project's normalised git remote (`github.com/acme/app`) or
  `global`; characters other than letters, digits and `/ . _ - ~` are
  percent-encoded. A machine (host id) only ever writes its own files, so
  git never has a conflict to resolve. (Format 1.0 had no shard directory; the
  first memctl 2 to sync such a repository moves every file in one commit.)
- Each file holds, in this order: `id`, `state`, `kind`, `category`,
  `tier`, `importance`, `confidence`, `created_at`, `updated_at`,
  `invalidated_at`, `superseded_by`, `tags`, `source`, `content`,
  `l0_abstract`, `l1_overview`, `l2_content`, `relations` (a list of
  `dst_id`, `type`, `weight`, `created_at`). No vectors: each machine makes
  its own. A deleted memory is a tombstone: `id`, `state: deleted` and its
  timestamps, no content; `forgotten: true` when it was removed for good
  (`delete --permanent`, `sessions forget`): each machine that reads it forgets
  the text too. Without it the memory is only marked deleted (restorable).
  A live memory's file says `redacted: true` when it took text out of the
  version before (`memctl redact`): each machine that reads it takes the old
  text out of its history too. The last line, `mac: ...`, signs the rest
  with a key of the machine that wrote it: a machine that trusts that host
  by its key (`memctl sync trust HOST:KEY`) takes a file it did not sign
  (edited by hand, or naming a host it was not written by) as a teammate's.
- When several files hold one memory, the newest `updated_at` wins (ties:
  the greater host id); the losing version is kept in the memory's event log.

Edit files by hand if you must: bump `updated_at`, keep the key names. Files
that do not parse, are too big, have the wrong types, or have a name that
does not match the pattern are skipped and reported by `memctl sync`.
"""
