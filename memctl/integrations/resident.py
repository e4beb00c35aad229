"""The resident recall process: one per home, answering ``memctl recall`` and the start and
prompt hooks with numpy, the tokenizer, the model and memctl's retrieval already loaded,
and the MCP server's query vectors (``embed``).

A recall in its own process spends most of its time importing and loading (issue 25:
~230 ms CPU, 11x ``python -c pass``); the search itself takes ~20 ms. The resident
process pays the loading once. For each request it forks a child that takes the client's
standard streams (passed over the socket), environment, working directory and umask, and
runs the command line as ``memctl`` would, so the output is the same by construction;
the child opens the database itself, so it sees every write made before it.

Client (``forward``): imports json and os, and _socket once a resident process's socket is
there (and select, time, stat, array: built in). ``_socket``, not ``socket``: the socket
module builds its enums of every address family, kind and flag when imported, ~3 ms of a
client's CPU (the server, loaded once, uses ``socket``).
It talks only to its own user's process: ``$MEMCTL_HOME/resident`` must be a directory
(not a symbolic link) and ``socket`` in it a socket, both the user's and written by no
one else, and after connecting the kernel must say the listener is the user's
(SO_PEERCRED; where it cannot say, nothing is forwarded). Anything else and nothing is
sent: the command runs in the client's process. It sends one JSON line with its stamp
(memctl's version and where it is installed), command line, the part of its environment
a command reads (``environment``), umask and stream encodings, with the file
descriptors of stdin, stdout, stderr and the working directory (stdin a pipe of its own
when the client's is a pipe: the client relays it and keeps a copy). The child answers
``{"ok": pid, "need": [names]}``; only a client that had it within HANDSHAKE_SECONDS says
``{"go": true, "env": {name: value}}`` (the variables asked for, such as the one
``openai.api_key_env`` names), and only then does the child run the command: a client
that gave up and ran the command itself never gets a second answer. The child says
``{"writing": true}`` before its first byte of output and ``{"exit": code}`` at the end.
A child that dies before writing leaves the command to the client (stdin replayed from
the copy); one that dies after is one line on stderr and exit DIED.

Server (``memctl.integrations.resident_server``): a lock file keeps one per home; a socket
left by a dead one is replaced. A request with another stamp, or after the home's
config.yaml changed, or after a change of memctl's own files (an upgrade), is answered
``stale`` and the server exits: the client runs that command itself, and the next session
start or fallback starts a server with the new code and settings. With no request for
``recall.resident_idle`` seconds it exits. A malformed request gets ``{"error": ...}``
and the server carries on.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import memctl

TYPE_CHECKING = False  # typing itself is not imported: the client stays small
if TYPE_CHECKING:
    import _socket  # loaded when a resident process is asked: not by a recall with it off
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
# How long a process that started one waits for the resident process to load the model
# and answer (1-2 s on an idle machine; loading the model itself would take as long).
START_SECONDS = 10.0
START_POLL = 0.05  # seconds between its tries
MAX_REQUEST = 4 << 20  # bytes of one request line (the environment is most of it)
COMMANDS = ("recall", "hook")  # the command words a client forwards
# Hook events worth forwarding (their spelling without case or separators, as
# ``hooks.canonical`` compares them): those that recall; captures stay in their process.
HOOK_EVENTS = (
    "sessionstart",
    "sessioncreated",
    "userpromptsubmit",
    "beforeagent",
    "userpromptsubmitted",  # Copilot CLI's
)
OFF = ("0", "false", "no", "off")  # recall.resident's false values (config.settings)
RESIDENT_KEY = "recall.resident"
RESIDENT_ENV = "MEMCTL_RECALL_RESIDENT"
# In a child of the resident process, or of a hook that outlives its client
# (hooks.outlive_the_client): the process the client started (hooks time from its start).
CLIENT_PID: int | None = None
SUN_PATH_MAX = 100  # an AF_UNIX address longer than this is reached through /proc/self/fd
GROUP_OTHER_WRITE = 0o022  # mode bits that would let another user replace the socket
# The environment a forwarded command reads: memctl's own settings, where the user's data,
# config and caches are (HOME, XDG_*, the assistants' homes), the terminal (rich: TERM,
# COLORTERM, NO_COLOR, FORCE_COLOR, COLUMNS, LINES), the locale and time zone, what the
# embedder, git and Ollama read, and how HTTP reaches a model server (proxies and CA
# certificates, as httpx reads them), and the assistants' variables naming the session a
# command runs in (config.settings.SESSION_VARIABLES: recall's "last time") and the
# client's own process (PROCESS_VARIABLES: the session-start hook's record of the sessions
# it started). Nothing else leaves the client.
ENV_NAMES = frozenset(
    {
        "HOME", "USER", "LOGNAME", "PATH", "TMPDIR", "LANG", "LANGUAGE", "TZ",
        "TERM", "COLORTERM", "TERM_PROGRAM", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES",
        "TTY_COMPATIBLE", "TTY_INTERACTIVE", "OLLAMA_HOST", "OPENBLAS_NUM_THREADS",
        "GIT_PYTHON_GIT_EXECUTABLE", "CODEX_HOME", "CLAUDE_CONFIG_DIR",
        "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "COPILOT_AGENT_SESSION_ID", "CLAUDE_PID",
        "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
        "http_proxy", "https_proxy", "all_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
    }
)  # fmt: skip
ENV_PREFIXES = ("MEMCTL_", "LC_", "XDG_")
MAX_TEXTS = 64  # texts of one embed request (a query, or a recall's session messages)
DIED = 70  # the child died after it began to write: the command's output is cut short


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
    """The socket's address for the server's bind: its path, or through an open descriptor
    of its directory when the path is too long for AF_UNIX (a deep home)."""
    path = os.path.join(directory, SOCKET)
    if len(path.encode()) <= SUN_PATH_MAX:
        yield path
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{SOCKET}"
    finally:
        os.close(fd)


def peer(conn: _socket.socket) -> tuple[int, int]:
    """(process id, user id) of the process at the other end of ``conn``, as the kernel
    recorded them (SO_PEERCRED); PermissionError where the kernel cannot say (not Linux):
    then no request goes out and none is served."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        raise PermissionError("this system cannot say who is at the other end of a socket")
    import struct

    pid, uid, _ = struct.unpack("3i", conn.getsockopt(_socket.SOL_SOCKET, option, 12))
    return pid, uid


def _owned(info: os.stat_result, kind: int, what: str) -> None:
    """PermissionError unless ``info`` is a ``kind`` (``stat.S_IFDIR``, ``S_IFSOCK``) of
    this user's that no one else may write."""
    import stat

    if stat.S_IFMT(info.st_mode) != kind:
        raise PermissionError(f"{what} is of the wrong kind (mode {info.st_mode:o})")
    if info.st_uid != os.getuid():
        raise PermissionError(f"{what} belongs to user {info.st_uid}")
    if info.st_mode & GROUP_OTHER_WRITE:
        raise PermissionError(f"{what} may be written by others (mode {info.st_mode & 0o777:o})")


@contextmanager
def connected(home: str) -> Iterator[_socket.socket]:
    """A connection to the resident process of ``home``, made only when its directory
    (never a symbolic link) and its socket are this user's and written by no one else,
    and kept only when the process listening is this user's (the kernel's word, not the
    file's). PermissionError otherwise, before a byte is sent: a listener of another user
    (root running ``--home`` of someone's home) hears nothing. With no socket (none runs:
    the recall of a process of its own) nothing more is loaded: ``_socket`` costs ~1 ms."""
    import stat

    where = os.path.join(home, DIRECTORY)
    directory = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        _owned(os.fstat(directory), stat.S_IFDIR, where)
        _owned(os.stat(SOCKET, dir_fd=directory, follow_symlinks=False), stat.S_IFSOCK, SOCKET)
        import _socket

        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(HANDSHAKE_SECONDS)
            conn.connect(f"/proc/self/fd/{directory}/{SOCKET}")  # the directory checked
            _, uid = peer(conn)
            if uid != os.getuid():
                raise PermissionError(f"the process listening at {where} is user {uid}'s")
            yield conn
        finally:
            conn.close()
    finally:
        os.close(directory)


def environment(environ: dict[str, str]) -> dict[str, str]:
    """What of the environment a command needs (``ENV_NAMES``, ``ENV_PREFIXES``); a
    variable the settings name (openai.api_key_env) the server asks for by name."""
    return {k: v for k, v in environ.items() if k in ENV_NAMES or k.startswith(ENV_PREFIXES)}


class _Exchange:
    """One request's answers, a JSON object a line, read while the client's standard input
    (a pipe) is relayed to the child through a pipe of its own, and kept: a child that
    dies before it wrote anything leaves the input to the command run here."""

    def __init__(self, conn: _socket.socket, relay: int | None) -> None:
        self.conn = conn
        self.relay = relay  # the write end of the child's stdin; None: stdin went as it is
        self.relaying = False  # only once the child was told to go
        self.pending = b""
        self.kept = bytearray()
        self.buffer = b""

    def answer(self, deadline: float | None) -> dict[str, Any] | None:
        """The next answer; None at the end of the connection or past ``deadline``."""
        import select
        import time

        while b"\n" not in self.buffer:
            relay = self.relay if self.relaying else None
            readers: list[Any] = [self.conn] + (
                [0] if relay is not None and not self.pending else []
            )
            writers = [relay] if relay is not None and self.pending else []
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            readable, writable, _ = select.select(readers, writers, [], left)
            if not (readable or writable):
                return None
            if 0 in readable:
                self._read_stdin()
            if writable:
                self._write_relay()
            if self.conn in readable:
                data = self.conn.recv(1 << 16)
                if not data:
                    return None
                self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        answer = json.loads(line)
        if not isinstance(answer, dict):
            raise ValueError("an answer that is not a JSON object")
        return answer

    def _read_stdin(self) -> None:
        chunk = os.read(0, 1 << 16)
        if chunk:
            self.kept += chunk
            self.pending = chunk
        else:
            self.close()

    def _write_relay(self) -> None:
        assert self.relay is not None
        try:
            self.pending = self.pending[os.write(self.relay, self.pending) :]
        except BrokenPipeError:  # the child closed its stdin: it reads no more
            self.close()

    def close(self) -> None:
        """Stop relaying: the child's stdin ends."""
        if self.relay is not None:
            os.close(self.relay)
        self.relay, self.pending = None, b""

    def restore(self) -> None:
        """Standard input as it was before the request: what was relayed, then the rest."""
        self.close()
        if not self.kept:
            return
        rest = bytearray(self.kept)
        while chunk := os.read(0, 1 << 16):
            rest += chunk
        copy = os.memfd_create("memctl-stdin")
        os.write(copy, rest)
        os.lseek(copy, 0, os.SEEK_SET)
        os.dup2(copy, 0)
        os.close(copy)


def _stdin() -> tuple[int, int | None, int | None]:
    """(the descriptor the child reads as stdin, the write end to relay stdin into or None,
    the offset to go back to in a file or None): a pipe or socket is relayed and kept, a
    terminal or a file goes as it is."""
    import stat

    mode = os.fstat(0).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        read, write = os.pipe()
        os.set_blocking(write, False)
        return read, write, None
    try:
        return 0, None, os.lseek(0, 0, os.SEEK_CUR) if stat.S_ISREG(mode) else None
    except OSError:
        return 0, None, None


def forward(argv: list[str]) -> int | None:
    """The exit code of the command line run by the resident process, or None when it
    did not run there (then nothing was written: the caller runs it itself)."""
    if not wanted(argv):
        return None
    try:
        streams = [sys.stdin, sys.stdout, sys.stderr]
        fds = [s.fileno() for s in streams]  # AttributeError for None, ValueError if closed
        encodings = [[s.encoding, s.errors] for s in streams]
        stdin, relay, offset = _stdin()
    except (AttributeError, ValueError, OSError):
        return None
    mask = os.umask(0o077)
    os.umask(mask)
    request = {
        "stamp": stamp(),
        "argv": argv,
        "env": environment(dict(os.environ)),
        "umask": mask,
        "streams": encodings,
    }
    exchange: _Exchange | None = None
    try:
        with connected(home_of(argv)) as conn:
            exchange = _Exchange(conn, relay)
            code = _run(conn, exchange, request, [stdin, *fds[1:]])
    except (OSError, ValueError, TypeError):
        code = None
    finally:
        if stdin != 0:
            os.close(stdin)
    if exchange is None:
        if relay is not None:
            os.close(relay)
    elif code is None:
        exchange.restore()
    else:
        exchange.close()
    if code is None and offset is not None:
        os.lseek(0, offset, os.SEEK_SET)
    return code


def _run(
    conn: _socket.socket, exchange: _Exchange, request: dict[str, Any], fds: list[int]
) -> int | None:
    """The command's exit code, or None when it is to run here: the server did not take it
    within HANDSHAKE_SECONDS (then the child runs nothing: it is never told to go), or the
    child died before it wrote a byte."""
    import _socket
    import array
    import time

    cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:  # socket.send_fds, spelled out
        rights = array.array("i", [*fds, cwd])
        line = json.dumps(request).encode() + b"\n"
        conn.sendmsg([line], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
    finally:
        os.close(cwd)
    first = exchange.answer(time.monotonic() + HANDSHAKE_SECONDS)
    if first is None or "ok" not in first:
        return None
    asked = first.get("need") or []
    extra = {n: os.environ[n] for n in asked if isinstance(n, str) and n in os.environ}
    conn.sendall(json.dumps({"go": True, "env": extra}).encode() + b"\n")
    exchange.relaying = True
    wrote = False
    while (answer := exchange.answer(None)) is not None:
        if "exit" in answer:
            return int(answer["exit"])
        wrote = wrote or "writing" in answer
    if not wrote:
        return None
    sys.stderr.write("memctl: the resident process's child died in the middle of its answer\n")
    return DIED


def tell(home: Path, op: str, **fields: Any) -> dict[str, Any] | None:
    """Ask the resident process of ``home`` to ``stop``, for its ``status`` or to ``embed``;
    None when none of this user's answers within HANDSHAKE_SECONDS."""
    import time

    try:
        with connected(str(home)) as conn:
            conn.sendall(json.dumps({"stamp": stamp(), "op": op, **fields}).encode() + b"\n")
            return _Exchange(conn, None).answer(time.monotonic() + HANDSHAKE_SECONDS)
    except (OSError, ValueError):
        return None


def unsafe(home: Path) -> str | None:
    """Why the home's resident directory cannot be used (a symbolic link, not a
    directory, another user's), or None: then a server would refuse to start."""
    import stat

    where = os.path.join(home, DIRECTORY)
    try:
        info = os.lstat(where)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return f"{where} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{where} is not a directory"
    if info.st_uid != os.getuid():
        return f"{where} belongs to user {info.st_uid}"
    return None


def starting(home: Path) -> bool:
    """Whether a resident process of ``home`` holds its lock but does not answer yet
    (it is loading the model). Only a safe directory's lock, never through a link."""
    import fcntl

    lock = None if unsafe(home) is not None else _lock_file(home)
    if lock is None:
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(lock)  # a lock taken here goes with the descriptor
    return False


def _lock_file(home: Path) -> int | None:
    """The resident process's lock file of ``home``, opened to read (never through a link),
    or None when there is none."""
    try:
        return os.open(os.path.join(home, DIRECTORY, LOCK), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None


def loading(home: Path) -> int | None:
    """The id of the resident process of ``home`` that is still loading the model (it holds
    the lock and wrote its id there, but has no socket yet), or None."""
    lock = _lock_file(home) if starting(home) else None
    if lock is None:
        return None
    try:
        pid = int(os.read(lock, 32).strip() or 0)
    except (OSError, ValueError):
        return None
    finally:
        os.close(lock)
    if pid <= 0 or not starting(home):  # not written yet, or it went meanwhile
        return None
    return pid


def launched(home: Path) -> int | None:
    """The id of a process of this user's that ``start`` launched for ``home`` (its command
    line says so, in /proc) and that has not taken the lock yet, or None: a `daemon stop`
    right after the recall that launched it met Python still starting (1 in 3 in a walk)."""
    argv = [b"-m", b"memctl.cli.resident", b"--home", os.path.realpath(home).encode()]
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc here
        return None
    for name in names:
        entry = os.path.join("/proc", name)
        try:
            if os.stat(entry).st_uid != os.getuid() or int(name) == os.getpid():
                continue
            with open(os.path.join(entry, "cmdline"), "rb") as cmdline:
                words = cmdline.read().split(b"\0")
        except OSError:  # it went meanwhile
            continue
        if words[1:-1] == argv:  # the command line ends in a NUL
            return int(name)
    return None


def stop_starting(home: Path) -> int | None:
    """End the resident process of ``home`` that is still loading the model, or still
    starting Python: its id, or None. A recall starts one detached, so a `memctl daemon
    stop` right after met it."""
    import signal

    pid = loading(home) or launched(home)
    if pid is None:
        return None
    try:
        os.kill(pid, signal.SIGTERM)  # its handler (or, before it has one, SIGTERM) ends it
    except OSError:
        return None
    return pid


def start(home: Path) -> bool:
    """Start a resident process for ``home``, detached (it exits at once when one runs);
    none when its directory is ``unsafe`` (``memctl doctor`` says why): whether started."""
    import subprocess

    from memctl.config.files import open_private

    if unsafe(home) is not None:
        return False

    try:
        log = open_private(home / "logs" / LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    except OSError:  # a home nothing is written in (a read-only disk): each recall alone
        return False
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
    return True


class ResidentEmbedder:
    """The embedder of a long-lived process that rarely embeds (the MCP server): each
    call asks the home's resident process, whose model is loaded, for the vectors (a
    query's in a few milliseconds, where loading the model takes seconds); when none of
    this user's answers in time, or it embeds with another model, ``local`` loads and
    answers from then on. While one is starting (it holds its lock, loading the model), it
    is waited for (``START_SECONDS``), as is one this process started (``launched``); the
    session-start hook and the MCP server start it, and a call that finds none running (a
    forget that took text out, ``memctl daemon stop`` or its idle time ended it) starts it
    again, as a recall that none answered does: the model stays out of this process."""

    def __init__(self, home: Path, local: Any, launched: bool = False) -> None:
        self.home = home
        # this process started one: waited for even before it takes its lock
        self.launched = launched
        self.local = local  # the settings' embedder (memctl.embed.Embedder), not yet loaded
        self.alone = False  # the local model answers (it is loaded: no need to ask)

    @property
    def name(self) -> str:
        return str(self.local.name)

    @property
    def dim(self) -> int:
        return int(self.local.dim)

    def embed(self, texts: list[str]) -> Any:
        """A float32 array of shape (len(texts), dim), each row L2-normalised."""
        if not self.alone and texts:
            rows = [
                self._asked(texts[at : at + MAX_TEXTS]) for at in range(0, len(texts), MAX_TEXTS)
            ]
            if all(r is not None for r in rows):
                import numpy as np

                return np.concatenate(rows)
            self.alone = True
        return self.local.embed(texts)

    def _asked(self, texts: list[str]) -> Any:
        """The resident process's vectors for ``texts``, or None; while one is starting
        (the MCP server or a session-start hook started it), waited for; with none, one
        started and waited for."""
        import time

        answer = tell(self.home, "embed", texts=texts)
        waited = time.monotonic() + START_SECONDS
        restarted = False
        while answer is None and time.monotonic() < waited:
            if not (self.launched or starting(self.home)):
                # none runs (one stopped may still hold its lock for a moment): started
                # once, then waited for like the first
                if restarted or not start(self.home):
                    break
                self.launched = restarted = True
            time.sleep(START_POLL)
            answer = tell(self.home, "embed", texts=texts)
        self.launched = False
        answer = answer or {}
        if answer.get("name") != self.name or not isinstance(answer.get("dim"), int):
            return None
        import base64

        import numpy as np

        try:
            rows = np.frombuffer(base64.b64decode(str(answer.get("vectors"))), dtype=np.float32)
            return rows.reshape(len(texts), answer["dim"]).copy()
        except ValueError:  # not base64, or not as many rows as texts
            return None
