"""The resident recall process's server side (``memctl.integrations.resident`` has the
protocol and the client): a lock keeps one per home, a child per request runs it.

Nothing in the home's ``resident`` directory is followed through a symbolic link: the
directory and its lock file are opened with O_NOFOLLOW and must be this user's (else the
server refuses to start, and changes nothing). Every connection's request is read at
once, each within READ_SECONDS, so one slow client stalls no other; a child whose
client hung up is killed.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import memctl
from memctl.errors import StoreError
from memctl.integrations.resident import (
    DIRECTORY,
    HANDSHAKE_SECONDS,
    LOCK,
    MAX_REQUEST,
    MAX_TEXTS,
    SOCKET,
    address,
    peer,
    stamp,
    wanted,
)
from memctl.model import counted

CODE = Path(memctl.__file__).parent  # the modules a serving process runs


@dataclass(frozen=True)
class Request:
    """One command line to run as the client would have: descriptors are the child's."""

    argv: list[str]
    env: dict[str, str]
    umask: int
    streams: list[list[str]]  # encoding and errors of stdin, stdout, stderr
    fds: list[int]  # stdin, stdout, stderr, working directory
    client_pid: int


def _checked(data: Any, fds: list[int], client_pid: int) -> Request:
    """The request in ``data``, or ValueError saying what is wrong with it."""
    if not isinstance(data, dict) or len(fds) != 4:
        raise ValueError("expected a JSON object and 4 descriptors")
    argv, env, mask, streams = (data.get(k) for k in ("argv", "env", "umask", "streams"))
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        raise ValueError("argv: expected a list of strings")
    if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        raise ValueError("env: expected an object of strings")
    if not isinstance(mask, int) or not 0 <= mask <= 0o777:
        raise ValueError("umask: expected a number from 0 to 0o777")
    if not (
        isinstance(streams, list)
        and len(streams) == 3
        and all(isinstance(s, list) and all(isinstance(p, str) for p in s) for s in streams)
    ):
        raise ValueError("streams: expected 3 [encoding, errors] pairs")
    if not wanted(argv):
        raise ValueError("not a command the resident process runs")
    return Request(argv, env, mask, streams, fds, client_pid)


def _config_seen(home: Path) -> tuple[int, int, int] | None:
    """The home's config.yaml as it is now (None: there is none)."""
    from memctl.config.settings import CONFIG_FILE

    try:
        config = home.joinpath(CONFIG_FILE).stat()
    except OSError:
        return None
    return config.st_ino, config.st_size, config.st_mtime_ns


CodeSeen = tuple[tuple[str, int, int], ...] | None


def _code_seen(directory: Path) -> CodeSeen:
    """Each of memctl's own modules under ``directory`` by path, inode and last change,
    found afresh (a module added, removed or replaced by a rename changes it; None: one
    went while it was read). Not a directory's own time: Python makes a module's
    ``__pycache__`` on its first import (scripts/setup installs without compiling), and on
    a new clone that changed the package's directories under a serving process, which
    then exited (the README's second recall loaded the model itself)."""
    seen: list[tuple[str, int, int]] = []
    try:
        _modules(directory, seen)
    except OSError:
        return None
    return tuple(sorted(seen))


def _modules(directory: Path, seen: list[tuple[str, int, int]]) -> None:
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name == "__pycache__":
                continue
            if entry.is_dir(follow_symlinks=False):
                _modules(Path(entry.path), seen)
            elif entry.name.endswith(".py"):
                found = entry.stat()
                seen.append((entry.path, found.st_ino, found.st_mtime_ns))


REAP_SECONDS = 0.05
# A request line must arrive whole within this; a client that trickles it is dropped, and
# meanwhile every other connection is served (the client waits as long for its answer).
READ_SECONDS = HANDSHAKE_SECONDS
MAX_WAITING = 64  # connections still sending their request; past it: busy, run it yourself
MAX_CHILDREN = 32  # requests running at once; past it: busy
HUNG_UP = select.POLLHUP | select.POLLRDHUP | select.POLLERR | select.POLLNVAL
TERMINATED = "terminated (SIGTERM)"  # why it stopped, in the log


@dataclass(frozen=True)
class Handlers:
    """What a child does: run a request's command line (told how to announce its first
    byte of output), name the environment variables its settings read that the client
    did not send, and embed texts (the embedder's name, dimension and float32 rows)."""

    run: Callable[[Request, Callable[[], None]], int]
    needs: Callable[[Request], list[str]]
    embed: Callable[[list[str]], tuple[str, int, bytes]]


@dataclass
class Waiting:
    """A connection still sending its request."""

    data: bytes
    fds: list[int]
    deadline: float
    pid: int


class Server:
    """The accept loop: reads every connection's request at once, each within
    READ_SECONDS; one child per request, killed when its client hangs up; exits when idle
    or stale."""

    def __init__(self, home: Path, idle: float, handlers: Handlers) -> None:
        self.home = home
        self.idle = idle
        self.handlers = handlers
        self.directory = home / DIRECTORY
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.waiting: dict[socket.socket, Waiting] = {}
        # each child's connection, until it ends or its client hangs up
        self.children: dict[int, socket.socket | None] = {}
        self.poll = select.poll()
        self.served = 0
        self.stopping = ""
        self.config = _config_seen(home)
        self.code = _code_seen(CODE)
        self.lock = -1  # the lock file's descriptor, closed in children
        self.socket_id: tuple[int, int] | None = None  # (device, inode) once bound

    def bind(self) -> None:
        """Listen on the socket, replacing one a dead server left."""
        with address(str(self.directory)) as where:
            try:
                os.unlink(where)
            except FileNotFoundError:
                pass
            mask = os.umask(0o177)
            try:
                self.listener.bind(where)
                self.socket_id = _file_id(self.directory / SOCKET)
            finally:
                os.umask(mask)
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.poll.register(self.listener, select.POLLIN)

    def bound(self) -> bool:
        """Whether the home's socket is still this server's: a home deleted, moved or
        replaced leaves no one to serve (a client there starts a server of its own)."""
        return _file_id(self.directory / SOCKET) == self.socket_id

    def loop(self) -> None:
        last = time.monotonic()
        while not self.stopping:
            now = time.monotonic()
            left = self.idle - (now - last)
            if left <= 0 and not self.waiting:
                self.stopping = f"idle for {self.idle:g} s"
                break
            # children are reaped within REAP_SECONDS of their end
            wait = min([left, REAP_SECONDS if self.children else 1.0])
            wait = min([wait, *(w.deadline - now for w in self.waiting.values())])
            events = self.poll.poll(max(0.0, wait) * 1000)
            self._reap()
            if not self.bound():
                self.stopping = "its socket is gone: the home was deleted, moved or replaced"
                break
            for fd, event in events:
                if fd == self.listener.fileno():
                    last = time.monotonic()
                    self._accept()
                else:
                    self._event(fd, event)
            self._expire()

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return
        try:
            pid, uid = peer(conn)
        except OSError:
            conn.close()
            return
        if uid != os.getuid():
            _answer(conn, {"error": f"a process of user {uid} is not served"})
            return
        if len(self.waiting) >= MAX_WAITING or len(self.children) >= MAX_CHILDREN:
            _answer(conn, {"busy": len(self.children)})
            return
        conn.setblocking(False)
        self.waiting[conn] = Waiting(b"", [], time.monotonic() + READ_SECONDS, pid)
        self.poll.register(conn, select.POLLIN)

    def _event(self, fd: int, event: int) -> None:
        """A request's bytes, or a running request's client hanging up: it is cancelled."""
        for pid, conn in list(self.children.items()):
            if conn is not None and conn.fileno() == fd:
                self._forget_child(pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                return
        for conn, waiting in list(self.waiting.items()):
            if conn.fileno() == fd:
                self._read(conn, waiting)
                return

    def _read(self, conn: socket.socket, waiting: Waiting) -> None:
        """More of a request; when it is whole, its answer."""
        try:
            data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 4)
        except BlockingIOError:
            return
        except OSError:
            data, fds = b"", []
        waiting.data += data
        waiting.fds += fds
        if len(waiting.fds) > 4:
            self._drop(conn, {"error": "more than 4 descriptors"})
        elif not data:
            self._drop(conn, None)  # gone before it said what it wanted
        elif waiting.data.endswith(b"\n") or len(waiting.data) >= MAX_REQUEST:
            del self.waiting[conn]
            self.poll.unregister(conn)
            conn.setblocking(True)
            conn.settimeout(HANDSHAKE_SECONDS)
            self._answer(conn, waiting)

    def _expire(self) -> None:
        now = time.monotonic()
        for conn, waiting in list(self.waiting.items()):
            if waiting.deadline <= now:
                self._drop(conn, {"error": f"no whole request within {READ_SECONDS:g} s"})

    def _drop(self, conn: socket.socket, answer: dict[str, Any] | None) -> None:
        waiting = self.waiting.pop(conn)
        self.poll.unregister(conn)
        _close(waiting.fds)
        if answer is None:
            conn.close()
        else:
            conn.setblocking(True)
            conn.settimeout(HANDSHAKE_SECONDS)
            _answer(conn, answer)

    def _reap(self) -> None:
        for pid in list(self.children):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self._forget_child(pid)
                del self.children[pid]

    def _forget_child(self, pid: int) -> None:
        """Let go of a child's connection (the child stays, to be reaped)."""
        conn, self.children[pid] = self.children[pid], None
        if conn is not None:
            self.poll.unregister(conn)
            conn.close()

    def _answer(self, conn: socket.socket, waiting: Waiting) -> None:
        """Answer a whole request; a child takes the connection, else it is closed."""
        fds = waiting.fds
        try:
            data = json.loads(waiting.data)
        except ValueError:
            data = None
        try:
            if data is None:
                raise ValueError("not a JSON line")
            if not isinstance(data, dict) or data.get("stamp") != stamp():
                self.stopping = "asked by a client of another memctl"
                _answer(conn, {"stale": stamp()})
            elif data.get("op") == "stop":
                self.stopping = "asked to stop"
                _answer(conn, {"stopped": os.getpid()})
            elif data.get("op") == "status":
                _answer(conn, self.status())
            elif _config_seen(self.home) != self.config:
                self.stopping = "the home's config.yaml changed"
                _answer(conn, {"stale": "config"})
            elif _code_seen(CODE) != self.code:
                # checked before the request is run: after an upgrade, not even one
                # command runs on the old code (the client runs it itself)
                self.stopping = "memctl's files changed"
                _answer(conn, {"stale": "code"})
            elif data.get("op") == "embed":
                texts = _texts(data)
                self._fork(conn, lambda: self._embed(conn, texts))
            else:
                request = _checked(data, fds, waiting.pid)
                self._fork(conn, lambda: self._run(conn, request))
        except (OSError, ValueError) as exc:
            _answer(conn, {"error": str(exc)})
        finally:
            _close(fds)

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "stamp": stamp(),
            "served": self.served,
            "idle": self.idle,
            "running": len(self.children),
        }

    def _fork(self, conn: socket.socket, work: Callable[[], int]) -> None:
        """``work`` in a child that has only ``conn`` of the server's descriptors."""
        pid = os.fork()
        if pid:
            self.children[pid] = conn
            self.poll.register(conn, HUNG_UP)  # never POLLIN: the child reads the connection
            self.served += 1
            return
        code = 70
        try:  # the child: never returns into the loop
            self.listener.close()
            os.close(self.lock)
            for other in [*self.waiting, *self.children.values()]:
                if other is not None:
                    other.close()
            _close([fd for waiting in self.waiting.values() for fd in waiting.fds])
            code = work()
        except BaseException:  # noqa: B036 - nothing may escape a forked child
            import traceback

            traceback.print_exc(file=sys.__stderr__)
        finally:
            os._exit(code)

    def _run(self, conn: socket.socket, request: Request) -> int:
        """In the child: the command, once the client says go (else nothing: it gave up)."""
        _send(conn, {"ok": os.getpid(), "need": self.handlers.needs(request)})
        go = _line(conn)
        if not go or go.get("go") is not True:
            return 0
        extra = go.get("env") or {}
        if isinstance(extra, dict):
            request.env.update({k: v for k, v in extra.items() if isinstance(v, str)})
        conn.settimeout(None)
        code = self.handlers.run(request, lambda: _send(conn, {"writing": True}))
        _send(conn, {"exit": code})
        return code

    def _embed(self, conn: socket.socket, texts: list[str]) -> int:
        import base64

        name, dim, rows = self.handlers.embed(texts)
        _send(conn, {"name": name, "dim": dim, "vectors": base64.b64encode(rows).decode()})
        return 0

    def close(self) -> None:
        """Stop listening; the socket is removed when it is still this server's, or when
        a SIGTERM came before its bind was recorded: the lock this server holds says no
        other serves the home, so the file there is this server's or a dead one's."""
        self.listener.close()
        try:
            if self.socket_id is None or self.bound():
                os.unlink(self.directory / SOCKET)
        except OSError:
            pass


def _file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of ``path``, not followed if a link; None when it is gone."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _texts(data: dict[str, Any]) -> list[str]:
    """An embed request's texts (ValueError unless 1 to MAX_TEXTS strings)."""
    texts = data.get("texts")
    if not (
        isinstance(texts, list)
        and 0 < len(texts) <= MAX_TEXTS
        and all(isinstance(t, str) for t in texts)
    ):
        raise ValueError(f"texts: expected a list of 1 to {MAX_TEXTS} strings")
    return texts


def _line(conn: socket.socket) -> dict[str, Any] | None:
    """The client's next JSON object (within the connection's time limit); None when it
    hung up, said nothing in time or said something else."""
    data = b""
    try:
        while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
            more = conn.recv(1 << 16)
            if not more:
                return None
            data += more
        answer = json.loads(data)
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _send(conn: socket.socket, answer: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(answer).encode() + b"\n")
    except OSError:
        pass  # the client gave up; it runs the command itself


def _answer(conn: socket.socket, answer: dict[str, Any]) -> None:
    """The last word on a connection the server keeps no child on."""
    _send(conn, answer)
    conn.close()


def _runtime_directory(home: Path) -> int:
    """A descriptor of the home's resident directory, made 0700 when absent; StoreError
    when it is a symbolic link, not a directory, or another user's (nothing is changed
    through it then)."""
    home.mkdir(parents=True, exist_ok=True)
    directory = home / DIRECTORY
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    _refuse_link(directory)
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise StoreError(f"{directory} cannot be opened: {exc.strerror}") from None
    owner = os.fstat(fd).st_uid
    if owner != os.getuid():
        os.close(fd)
        raise StoreError(f"{directory} belongs to user {owner}, not to this one: refused")
    os.fchmod(fd, 0o700)
    return fd


def _refuse_link(path: Path) -> None:
    if os.path.islink(path):
        raise StoreError(f"{path} is a symbolic link: refused (remove it, memctl makes its own)")


def _lock_file(directory: int, path: Path) -> int:
    """The lock file ``path``, opened in the resident directory without following a link;
    a regular file of this user's (StoreError otherwise)."""
    _refuse_link(path)
    try:
        lock = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=directory)
    except OSError as exc:
        raise StoreError(f"{path} cannot be opened: {exc.strerror}") from None
    info = os.fstat(lock)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        os.close(lock)
        raise StoreError(f"{path} is not a regular file of this user's: refused")
    return lock


def serve(home: Path, idle: float, warm: Callable[[], None], handlers: Handlers) -> int:
    """Be the resident process of ``home`` until idle for ``idle`` seconds or stale; 0 at
    once when another one holds the lock. StoreError when the resident directory or its
    lock file is a symbolic link or another user's."""
    import fcntl

    directory = _runtime_directory(home)
    try:
        lock = _lock_file(directory, home / DIRECTORY / LOCK)
    finally:
        os.close(directory)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return 0
    began = time.monotonic()
    signal.signal(signal.SIGTERM, _terminated)  # exits through the clean-up below
    server = Server(home, idle, handlers)
    server.lock = lock
    try:
        os.ftruncate(lock, 0)
        os.write(lock, f"{os.getpid()}\n".encode())
        warm()
        # what warm() loaded is never collected: a child's collections then skip it, and
        # do not write to (copy) the pages it shares with this process
        gc.freeze()
        server.bind()
        say(f"serving {home} (pid {os.getpid()}, ready in {time.monotonic() - began:.2f} s)")
        server.loop()
    except SystemExit:
        server.stopping = server.stopping or TERMINATED
        raise
    finally:
        server.close()
        os.close(lock)
        # in the clean-up: a SIGTERM's SystemExit passes by any line after it
        served = counted(server.served, "request")
        say(f"exiting: {server.stopping or 'interrupted'}; {served} served")
    return 0


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(0)


def say(line: str) -> None:
    """A line of the log (the server's stderr is logs/resident.log)."""
    import time

    sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} resident: {line}\n")
    sys.stderr.flush()
