"""Files and directories memctl makes: private to the user (0600 / 0700) whatever the umask.

Modes are given at creation (``os.open``, ``mkdir``), where the umask can only
take bits away; a directory's missing parents are made one by one, each 0700,
since ``mkdir(parents=True)`` makes them 0777 minus the umask.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """``path`` as a directory, it and every parent it had to make being 0700."""
    missing = []
    for directory in (path, *path.parents):
        if directory.exists():
            break
        missing.append(directory)
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass  # another process made it meanwhile
    return path


# Never through a symbolic link (a link planted at a log or lock would have memctl write,
# truncate or chmod its target), and not into a child process.
PRIVATE_FLAGS = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def open_private(path: Path, flags: int) -> int:
    """``os.open`` a file inside a private directory, never through a symbolic link (an
    OSError, ELOOP); a file it makes is 0600, and one of this user's that an older memctl
    left readable by others (a 0644 ``hooks.log``) is made 0600."""
    private_dir(path.parent)
    descriptor = os.open(path, flags | PRIVATE_FLAGS, FILE_MODE)
    try:
        info = os.fstat(descriptor)
        if stat.S_ISREG(info.st_mode) and info.st_mode & 0o077 and info.st_uid == os.geteuid():
            os.fchmod(descriptor, FILE_MODE)
    except OSError:
        os.close(descriptor)
        raise
    return descriptor


def create_private(path: Path) -> BinaryIO:
    """A new (or emptied) file open for binary writing, 0600."""
    return os.fdopen(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb")


def write_private(path: Path, data: str | bytes) -> None:
    """Write ``data`` (a text in UTF-8) to ``path`` (0600) all at once: a reader sees the
    old file or the new."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    descriptor = open_private(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(data.encode() if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


# The key of the digests a forgotten or redacted message keeps (``model.keyed_hash``):
# beside the database, never in it, so that a copy of the database (a backup sent on, a
# file attached to a bug report) cannot have its forgotten texts guessed.
FORGET_KEY = "forget.key"
FORGET_KEY_BYTES = 32  # RFC 2104: a key no shorter than the hash's output (SHA-256's)


def known_forget_key(home: Path) -> bytes | None:
    """The home's key for forgotten text's digests; None when no forget made one (a
    capture reads it, and makes no file) or the file holds no key."""
    return _known_key(home / FORGET_KEY)


def forget_key(home: Path) -> bytes:
    """The home's key for forgotten text's digests, made (0600) when there is none."""
    return _home_key(home / FORGET_KEY)


# This machine's key for the files it writes into the sync repository (``sync.signing``):
# beside ``forget.key``, never in the database, an export or the repository. Another
# machine holds it only when the user gives it there (``memctl sync trust HOST:KEY``).
SYNC_KEY = "sync.key"
# The keys of the other machines the user trusts, one ``HOST KEY`` a line (hex).
HOST_KEYS = "sync-hosts.keys"


def sync_key(home: Path) -> bytes:
    """This machine's key for its sync files, made (0600) when there is none."""
    return _home_key(home / SYNC_KEY)


def known_sync_key(home: Path) -> bytes | None:
    """This machine's key for its sync files; None when no sync made one. What reads
    (recall, ``sync trust``'s listing) makes no file: a home it may not write (the viewer,
    a read-only mount) would fail the read, and a key made then signed nothing."""
    return _known_key(home / SYNC_KEY)


def host_keys(home: Path) -> dict[str, bytes]:
    """The other machines' sync keys the user gave (host id -> key); lines that are not a
    host and a key are skipped."""
    try:
        with os.fdopen(open_private(home / HOST_KEYS, os.O_RDONLY), "rb") as handle:
            text = handle.read(1 << 20).decode("ascii", "replace")
    except FileNotFoundError:
        return {}
    found: dict[str, bytes] = {}
    for line in text.splitlines():
        host, _, key = line.strip().partition(" ")
        try:
            value = bytes.fromhex(key.strip())
        except ValueError:
            continue
        if host and len(value) == FORGET_KEY_BYTES:
            found[host] = value
    return found


def write_host_keys(home: Path, keys: dict[str, bytes]) -> None:
    """Keep ``keys`` (host id -> key) as the other machines' sync keys (0600)."""
    write_private(home / HOST_KEYS, "".join(f"{h} {k.hex()}\n" for h, k in sorted(keys.items())))


def _known_key(path: Path) -> bytes | None:
    """The key a home file holds; None when there is none or it holds no key."""
    try:
        with os.fdopen(open_private(path, os.O_RDONLY), "rb") as handle:
            key = bytes.fromhex(handle.read(4 * FORGET_KEY_BYTES).decode("ascii"))
    except (FileNotFoundError, ValueError):
        return None
    return key if len(key) == FORGET_KEY_BYTES else None


def _home_key(path: Path) -> bytes:
    """The key a home file holds, made (0600) when there is none, or made again when the
    file holds none. Made whole, then linked in place: a process reading it meanwhile
    never sees it half written."""
    found = _known_key(path)
    if found is not None:
        return found
    key = os.urandom(FORGET_KEY_BYTES)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    write_private(partial, key.hex())
    try:
        os.link(partial, path)
    except FileExistsError:  # another process made it meanwhile, or it holds no key
        found = _known_key(path)
        if found is None:
            os.replace(partial, path)
            return key
        return found
    finally:
        partial.unlink(missing_ok=True)
    return key


class NotOwned(OSError):
    """A file that came with a repository and belongs to another user: never read."""


def home_problem(home: Path) -> str | None:
    """Why the data directory ``home`` is refused, if it is: another user's (a folder another
    local user made in /tmp before memctl first ran there: its ``config.yaml`` would say
    where this user's sessions go, and a ``memctl.db`` of theirs what this user's
    assistants are told), or one every user may write in (anyone could put those files
    there, or move this user's away). None when it is this user's, or is yet to be made."""
    try:
        info = os.stat(home)
    except (FileNotFoundError, NotADirectoryError):  # to be made (or its making fails, saying why)
        return None
    if info.st_uid != os.geteuid():
        return (
            f"{home} belongs to user {info.st_uid}, not to this one: refused "
            "(set MEMCTL_HOME to a folder of your own)"
        )
    if info.st_mode & stat.S_IWOTH:
        return f"{home} may be written by every user: refused (chmod 700 {home})"
    return None


# Opened without following a link, without waiting for a writer (a FIFO) or a device.
UNTRUSTED_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_untrusted(path: Path, limit: int) -> bytes:
    """The first ``limit`` bytes of a file that came with a cloned repository (a project's
    ``.memctl/`` files): only a regular file of this user's, never through a symbolic link,
    never waiting on a FIFO or a device. FileNotFoundError when there is none; another
    OSError, whose ``strerror`` says why in words, when it is refused.

    Another user's file is refused as git refuses another owner's repository
    (CVE-2022-24765): a ``/tmp/.git`` and ``/tmp/.memctl/`` another local user made
    would otherwise speak to every session run below ``/tmp``."""
    try:
        descriptor = os.open(path, UNTRUSTED_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link: not read") from None
        raise
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file: not read")
        if info.st_uid != os.geteuid():
            raise NotOwned(errno.EPERM, f"owned by another user (uid {info.st_uid}): not read")
        return handle.read(limit)


# A file made new where another user may have planted a link: never through one (at the
# path, or at its folder), never over a file already there. Readable by others: it is
# meant to be committed with the repository.
NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
SHARED_FILE_MODE = 0o644


def create_new(path: Path, text: str) -> None:
    """Write ``text`` to a new file at ``path`` in a folder of this user's (made when
    missing). An OSError, whose ``strerror`` says why in words, when the file or its folder
    is a symbolic link (a dangling link would have the file written where it points), the
    folder is another user's, or a file is there already."""
    folder = path.parent
    if folder.is_symlink():
        raise OSError(errno.ELOOP, f"{folder.name} is a symbolic link: nothing written")
    folder.mkdir(parents=True, exist_ok=True)
    if folder.stat().st_uid != os.geteuid():
        raise NotOwned(errno.EPERM, f"{folder.name} is another user's: nothing written")
    try:
        descriptor = os.open(path, NEW_FLAGS, SHARED_FILE_MODE)
    except FileExistsError:
        reason = "a symbolic link" if path.is_symlink() else "already there"
        raise OSError(errno.EEXIST, f"{reason}: nothing written") from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(text)
