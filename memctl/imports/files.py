"""What to import: paths, directories and globs expanded, standard input spooled, and each
file opened as a stream as often as the pipeline reads it (hashed and counted as it goes).

A directory is walked in name order, hidden files and directories (``.git``,
``.obsidian``) left out. A glob the shell did not expand (``'notes/**/*.md'``)
is expanded here. Standard input is copied to a spooled temporary file (in
memory up to 1 MiB), so it can be read more than once too.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from memctl.errors import InputError, UsageError
from memctl.ingest.source import Input

STDIN = "-"
SPOOL_BYTES = 1 << 20
COPY_BYTES = 1 << 16
WHAT = "text or a known export format"

Progress = Callable[[int], None]


@dataclass
class Target:
    """A file to import: a path, or standard input's spooled copy."""

    name: str  # as shown to people
    path: Path | None = None
    explicit: bool = True  # named on the command line, not found in a directory
    spool: IO[bytes] | None = None
    problem: str | None = None  # why it cannot be read at all
    passed_over: str | None = None  # why a file found in a directory is left out

    def __post_init__(self) -> None:
        """What people see (the import's table and JSON, its errors and warnings) holds no
        secret or ``<private>`` text a file's path holds, as ``source`` does not."""
        from memctl.memories.privacy import scrub  # its patterns: only when a file is named

        self.name = scrub(self.name)[0]
        self.problem = self.problem and scrub(self.problem)[0]
        self.passed_over = self.passed_over and scrub(self.passed_over)[0]  # a link's target

    @property
    def source(self) -> str:
        """How memories, the import's record and its session name where they came from:
        the absolute path, or ``stdin``; a secret or ``<private>`` text in the path (a
        folder named after a token) is scrubbed, as the file's text is."""
        if self.path is None:
            return "stdin"
        from memctl.memories.privacy import scrub  # its patterns: only when a file is named

        return scrub(str(resolved(self.path) or self.path.absolute()))[0]

    @property
    def size(self) -> int:
        if self.spool is not None:
            return self.spool.seek(0, os.SEEK_END)
        if self.path is None or self.problem or self.passed_over:
            return 0
        return self.path.stat().st_size

    def open(self, progress: Progress | None = None) -> Reading:
        """A fresh read of the whole file (an InputError if it is empty or binary)."""
        if self.spool is not None:
            self.spool.seek(0)
            return Reading(self.spool, self.name, progress, close=False)
        assert self.path is not None
        try:
            stream = self.path.open("rb")
        except OSError as exc:
            raise OSError(f"cannot read {self.name}: {exc.strerror}") from None
        return Reading(stream, self.name, progress)


class _Tap:
    """A byte stream that hashes and counts what is read through it."""

    def __init__(self, raw: IO[bytes], progress: Progress | None, close: bool) -> None:
        self._raw, self._progress, self._close = raw, progress, close
        self.sha256 = hashlib.sha256()
        self.bytes = 0

    def _seen(self, data: bytes) -> bytes:
        self.sha256.update(data)
        self.bytes += len(data)
        if self._progress is not None and data:
            self._progress(len(data))
        return data

    def read(self, size: int = -1) -> bytes:
        return self._seen(self._raw.read(size))

    def readline(self, size: int = -1) -> bytes:
        return self._seen(self._raw.readline(size))

    def __iter__(self) -> Iterator[bytes]:
        for line in self._raw:
            yield self._seen(line)

    def close(self) -> None:
        if self._close:
            self._raw.close()


class Reading(Input):
    """One read of a target: the ``Input`` (sniffed head, then the rest) over a tap that
    hashes every byte; ``digest()`` is the file's SHA-256 once it has been read to the end."""

    def __init__(
        self, raw: IO[bytes], name: str, progress: Progress | None, close: bool = True
    ) -> None:
        self.tap = _Tap(raw, progress, close)
        try:
            super().__init__(cast(IO[bytes], self.tap), name, WHAT)
        except BaseException:
            self.tap.close()
            raise

    def __enter__(self) -> Reading:
        return self

    def digest(self) -> str:
        for _ in iter(lambda: self.tap.read(COPY_BYTES), b""):
            pass
        return self.tap.sha256.hexdigest()


def spool(stdin: Any) -> IO[bytes]:
    """Standard input copied to a spooled temporary file."""
    if stdin is None or stdin.isatty():
        raise UsageError("'-' reads standard input, but nothing is piped in")
    copy = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    source = stdin.buffer if hasattr(stdin, "buffer") else stdin
    for block in iter(lambda: source.read(COPY_BYTES), b""):
        copy.write(block)
    return cast(IO[bytes], copy)


def _walk(directory: Path) -> Iterator[Path]:
    """The files under ``directory``; symlinked directories are not followed (no loops)."""
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(root) / name


def resolved(path: Path) -> Path | None:
    """The real path of ``path``; None for a symlink loop or a link to nothing."""
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):  # RuntimeError: "Symlink loop" (Python < 3.13)
        return None


def _found(path: Path) -> Target:
    """A file met in a directory; a broken symlink is passed over with the reason."""
    if resolved(path) is not None:
        return Target(str(path), path, explicit=False)
    if _loops(path):
        why = "a symlink loop"
    elif path.is_symlink():
        why = f"a symlink to {os.readlink(path)}, which does not exist"
    else:
        why = "unreadable"
    return Target(str(path), path, explicit=False, passed_over=why)


def _loops(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _targets(argument: str, stdin: Any) -> Iterator[Target]:
    if argument == STDIN:
        yield Target("standard input", spool=spool(stdin))
        return
    path = Path(argument).expanduser()
    bundled = _slack(argument, path)
    if bundled is not None:
        yield bundled
    elif path.is_dir():
        yield from (_found(p) for p in _walk(path))
    elif path.is_file():
        yield Target(argument, path)
    elif _stream(path):  # `memctl import <(...)`: read as standard input is
        with path.open("rb") as stream:
            yield Target(argument, spool=spool(stream))
    elif path.exists():
        yield Target(argument, problem=f"{argument} is a device or a socket, not a file to read")
    elif glob.has_magic(argument):
        matches = sorted(glob.glob(os.path.expanduser(argument), recursive=True))
        if not matches:
            yield Target(argument, problem=f"no file matches {argument}")
        for match in matches:
            yield from (
                _targets(match, stdin) if Path(match).is_dir() else [Target(match, Path(match))]
            )
    else:
        yield Target(argument, problem=f"no such file or directory: {argument}")


def _stream(path: Path) -> bool:
    """A pipe (a shell's process substitution, ``/dev/fd/N``, or a named pipe): read once,
    as standard input is."""
    try:
        return stat.S_ISFIFO(path.stat().st_mode)
    except OSError:
        return False


def _slack(argument: str, path: Path) -> Target | None:
    """A Slack export (its zip, the folder it unpacks to, or a channel's folder) as one
    target: read here into the JSON lines the ``slack`` format reads; a malformed one is
    a target with its problem."""
    if not (path.is_dir() or (path.is_file() and path.suffix.lower() == ".zip")):
        return None
    from memctl.imports.formats import slack  # the formats: only once a folder or zip is named

    try:
        copy = slack.bundle(path, argument)
    except (InputError, OSError) as error:
        return Target(argument, path, problem=str(error))
    return None if copy is None else Target(argument, path, spool=copy)


def expand(arguments: list[str], stdin: Any = None) -> list[Target]:
    """The files the arguments name, each once, in order."""
    if arguments.count(STDIN) > 1:
        raise UsageError("standard input ('-') can be imported only once")
    seen: set[Path] = set()
    found = []
    for argument in arguments:
        for target in _targets(argument, stdin):
            key = resolved(target.path) if target.path is not None else None
            if key is not None and key in seen:
                continue
            if key is not None:
                seen.add(key)
            found.append(target)
    return found
