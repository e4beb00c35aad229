"""The resident recall process: one per home, answering ``memctl recall`` and the start and
prompt hooks with numpy, the tokenizer, the model and memctl's retrieval already loaded.

A recall in its own process spends most of its time importing and loading (issue 25:
~230 ms CPU, 11x ``python -c pass``); the search itself takes ~20 ms. The resident
process pays the loading once. For each request it forks a child that takes the client's
standard streams (passed over the socket), environment, working directory and umask, and
runs the command line as ``memctl`` would, so the output is the same by construction;
the child opens the database itself, so it sees every write made before it.

Client (``forward``): imports socket, json and os only; connects to
``$MEMCTL_HOME/resident/socket`` (directory 0700, socket 0600), sends one JSON line
with its stamp (memctl's version and where it is installed), command line, environment,
umask and stream encodings, with the file descriptors of stdin, stdout, stderr and the
working directory. The server answers ``{"ok": pid}`` and, when the command is done,
``{"exit": code}``. Anything else (no socket, refused, no answer within
``HANDSHAKE_SECONDS``, ``{"stale": ...}``, the child dying) is None: the caller runs the
command itself, as it did before this process existed.

Server (``serve``): a lock file keeps one per home; a socket left by a dead one is
replaced. A request with another stamp, or after the home's config.yaml changed, is
answered ``stale`` and the server exits (the next session start or fallback starts one
with the new code and settings); so does a change of memctl's own files, noticed after
the request that saw it. With no request for ``recall.resident_idle`` seconds it exits.
A malformed request gets ``{"error": ...}`` and the server carries on.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import memctl

TYPE_CHECKING = False  # typing itself is not imported: the client stays small
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

DIRECTORY = "resident"  # in the home, 0700: the socket and the lock
SOCKET = "socket"
LOCK = "lock"
LOG = "resident.log"  # in the home's logs/
# How long a client waits for the server's first answer before running the command itself:
# the server answers before it runs anything, in well under 10 ms on an idle machine, but
# it shares the cores with everything else (load 10-14 on the 2 shared cores here).
HANDSHAKE_SECONDS = 2.0
MAX_REQUEST = 4 << 20  # bytes of one request line (the environment is most of it)
COMMANDS = ("recall", "hook")  # the command words a client forwards
# Hook events worth forwarding (their spelling without case or separators, as
# ``hooks.canonical`` compares them): those that recall; captures stay in their process.
HOOK_EVENTS = ("sessionstart", "sessioncreated", "userpromptsubmit")
OFF = ("0", "false", "no", "off")  # recall.resident's false values (config.settings)
RESIDENT_KEY = "recall.resident"
RESIDENT_ENV = "MEMCTL_RECALL_RESIDENT"
# In a child of the resident process: the client's process id (hooks time the client).
CLIENT_PID: int | None = None
SUN_PATH_MAX = 100  # an AF_UNIX address longer than this is reached through /proc/self/fd


def stamp() -> str:
    """What a client and a server must share: memctl's version and installed copy."""
    return f"{memctl.__version__} {os.path.dirname(os.path.abspath(memctl.__file__))}"


def split_globals(argv: list[str]) -> tuple[str | None, list[str], list[str]]:
    """(``--home``, the ``-c`` assignments, the rest from the first other word) of a command
    line: memctl's global options, read without Typer (this client and the fast lane,
    ``memctl.cli.fastlane.split_command``). The rest starts with the command, or with an
    option no global one is."""
    home: str | None = None
    config: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in ("--home", "-c", "--config") and index + 1 < len(argv):
            name, value, index = word, argv[index + 1], index + 2
        elif word.startswith(("--home=", "--config=")):
            (name, _, value), index = word.partition("="), index + 1
        else:
            return home, config, argv[index:]
        if name == "--home":
            home = value
        else:
            config.append(value)
    return home, config, []


def _command(argv: list[str]) -> tuple[str | None, list[str], list[str]]:
    """``split_globals``, with no command when an option comes before it."""
    home, config, rest = split_globals(argv)
    return home, config, [] if rest[:1] and rest[0].startswith("-") else rest


def home_of(argv: list[str]) -> str:
    """The home a command line names (``--home``), else the environment's (``memctl.home``)."""
    home = split_globals(argv)[0]
    if home is not None:
        return home
    from memctl.home import default_home

    return str(default_home())


def _off(value: str) -> bool:
    return value.strip().lower() in OFF


def wanted(argv: list[str]) -> bool:
    """Whether this command line goes to the resident process: a recall or a recalling
    hook, unless ``recall.resident`` is off in the environment or a ``-c``."""
    _, config, command = _command(argv)
    if _off(os.environ.get(RESIDENT_ENV, "yes")) or any(
        name.strip() == RESIDENT_KEY and _off(value)
        for name, _, value in (pair.partition("=") for pair in config)
    ):
        return False
    if command[:1] == ["recall"]:
        return not {"-h", "--help"} & set(command)
    if command[:1] == ["hook"] and len(command) >= 3:
        return "".join(c for c in command[2].lower() if c.isalnum()) in HOOK_EVENTS
    return False


@contextmanager
def address(directory: str) -> Iterator[str]:
    """The socket's address: its path, or through an open descriptor of its directory when
    the path is too long for AF_UNIX (a deep home)."""
    path = os.path.join(directory, SOCKET)
    if len(path.encode()) <= SUN_PATH_MAX:
        yield path
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{SOCKET}"
    finally:
        os.close(fd)


def _ask(home: str, request: dict[str, Any], fds: list[int]) -> Iterator[dict[str, Any]]:
    """The server's answers to one request, one JSON object a line; the first within
    HANDSHAKE_SECONDS, the rest as long as the command runs."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(HANDSHAKE_SECONDS)
        with address(os.path.join(home, DIRECTORY)) as where:
            conn.connect(where)
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], fds)
        with conn.makefile("rb") as answers:
            first = json.loads(answers.readline())
            yield first
            conn.settimeout(None)
            for line in answers:
                yield json.loads(line)


def forward(argv: list[str]) -> int | None:
    """The exit code of the command line run by the resident process, or None when it
    did not run there (then nothing was written: the caller runs it itself)."""
    if not wanted(argv):
        return None
    try:
        streams = [sys.stdin, sys.stdout, sys.stderr]
        fds = [s.fileno() for s in streams]  # AttributeError for None, ValueError if closed
        encodings = [[s.encoding, s.errors] for s in streams]
        cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    except (AttributeError, ValueError, OSError):
        return None
    mask = os.umask(0o077)
    os.umask(mask)
    request = {
        "stamp": stamp(),
        "argv": argv,
        "env": dict(os.environ),
        "umask": mask,
        "streams": encodings,
    }
    try:
        answers = _ask(home_of(argv), request, [*fds, cwd])
        if "ok" not in next(answers):
            return None
        for answer in answers:
            if "exit" in answer:
                return int(answer["exit"])
        return None  # the child died before it said how the command ended
    except (OSError, ValueError, TypeError, StopIteration):
        return None
    finally:
        os.close(cwd)


def tell(home: Path, op: str) -> dict[str, Any] | None:
    """Ask the resident process of ``home`` to ``stop`` or for its ``status``; None when
    none answers."""
    try:
        return next(_ask(str(home), {"stamp": stamp(), "op": op}, []))
    except (OSError, ValueError, StopIteration):
        return None


def start(home: Path) -> None:
    """Start a resident process for ``home``, detached (it exits at once when one runs)."""
    import subprocess

    from memctl.config.files import open_private

    log = open_private(home / "logs" / LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        subprocess.Popen(
            [sys.executable, "-m", "memctl.cli.resident", "--home", str(home.resolve())],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=home,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log)
