"""Errors a user sees: each is shown as one line on stderr with its exit code."""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Iterable


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the known word closest to a mistyped one, else ''."""
    import difflib  # only for an error: not on the way of a command that works

    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class MemctlError(Exception):
    """Base of every error memctl reports to a person instead of a traceback.

    The message is in the API's words: a request field is named as the API spells it
    (``budget``), and ``names`` lists the fields it names, so that a door with spellings
    of its own (the CLI's ``--budget``) shows its own (``worded``)."""

    exit_code = 1

    def __init__(self, message: str = "", names: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.names = tuple(names)

    def worded(self, spell: Callable[[str], str]) -> str:
        """The message with the first mention of each name in ``spell``'s spelling."""
        text = str(self)
        for name in self.names:
            text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", spell(name), text, count=1)
        return text


class UsageError(MemctlError):
    """The command line or an argument is wrong."""

    exit_code = 2


class ConfigError(MemctlError):
    """A config key or value is unknown or invalid."""

    exit_code = 2


class NotFoundError(MemctlError):
    """No memory (or other record) matches what was asked for."""

    exit_code = 3


class AmbiguousIdError(MemctlError):
    """An id prefix matches more than one memory."""

    exit_code = 3


class StoreError(MemctlError):
    """The database cannot be opened, is locked, or is damaged."""

    exit_code = 4


class DatabaseBusyError(StoreError):
    """Another process held the database's write lock for longer than this one could wait."""


class EmbedderMismatchError(StoreError):
    """The store's vectors were made by another model than the configured one."""


class ModelError(MemctlError):
    """An embedding or language model is missing, unreachable, or failed."""

    exit_code = 5


class InputError(MemctlError):
    """Input data (a file, stdin) is empty, binary, or malformed."""

    exit_code = 6


class NoMessagesError(InputError):
    """A transcript holds no message: one of a session that said nothing, or nothing yet
    (a client writes its transcript's first records as the session starts)."""


class SyncError(MemctlError):
    """The sync repository is unreachable, busy, refuses a push, or is of a newer format."""

    exit_code = 7


def os_error(exc: OSError) -> MemctlError:
    """The one-line error of an OSError no command caught: a full disk, or a file memctl was
    told to read or write that cannot be (a directory, missing, not allowed)."""
    where = f": {exc.filename}" if exc.filename else ""
    if exc.errno == errno.ENOSPC:
        return StoreError(f"disk full: no space left on the device{where}")
    return InputError(f"{exc.strerror or exc}{where}")
