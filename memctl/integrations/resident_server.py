"""The resident recall process's server side (``memctl.integrations.resident`` has the
protocol and the client): a lock keeps one per home, a child per request runs it."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import memctl
from memctl.integrations.resident import (
    DIRECTORY,
    HANDSHAKE_SECONDS,
    LOCK,
    MAX_REQUEST,
    SOCKET,
    address,
    stamp,
    wanted,
)


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


def _code_seen() -> tuple[int, int]:
    """memctl's own files as they are now: how many, and the newest change."""
    files = list(Path(memctl.__file__).parent.rglob("*.py"))
    return len(files), max((p.stat().st_mtime_ns for p in files), default=0)


REAP_SECONDS = 0.05


class Server:
    """The accept loop: one child per request; exits when idle or stale."""

    def __init__(self, home: Path, idle: float, run: Callable[[Request], int]) -> None:
        self.home = home
        self.idle = idle
        self.run = run
        self.directory = home / DIRECTORY
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.children: set[int] = set()
        self.served = 0
        self.stopping = ""
        self.config = _config_seen(home)
        self.code = _code_seen()
        self.lock = -1  # the lock file's descriptor, closed in children

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
            finally:
                os.umask(mask)
        self.listener.listen(64)
        self.inode = os.stat(self.directory / SOCKET).st_ino

    def loop(self) -> None:
        import select
        import time

        last = time.monotonic()
        while not self.stopping:
            left = self.idle - (time.monotonic() - last)
            if left <= 0:
                self.stopping = f"idle for {self.idle:g} s"
                break
            # children are reaped within REAP_SECONDS of their end
            wait = REAP_SECONDS if self.children else 1.0
            ready, _, _ = select.select([self.listener], [], [], min(left, wait))
            self._reap()
            if ready:
                conn, _ = self.listener.accept()
                last = time.monotonic()
                with conn:
                    self._answer(conn)

    def _reap(self) -> None:
        for pid in list(self.children):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.children.discard(pid)

    def _receive(self, conn: socket.socket) -> tuple[Any, list[int]]:
        """The request's JSON and descriptors (ValueError for a malformed one)."""
        conn.settimeout(HANDSHAKE_SECONDS)
        data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 4)
        while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
            more = conn.recv(1 << 16)
            if not more:
                break
            data += more
        try:
            return json.loads(data), fds
        except ValueError:
            for fd in fds:
                os.close(fd)
            raise ValueError("not a JSON line") from None

    def _answer(self, conn: socket.socket) -> None:
        try:
            data, fds = self._receive(conn)
        except (OSError, ValueError) as exc:
            _send(conn, {"error": str(exc)})
            return
        try:
            pid = self._peer(conn)
            if not isinstance(data, dict) or data.get("stamp") != stamp():
                self.stopping = "asked by a client of another memctl"
                _send(conn, {"stale": stamp()})
            elif data.get("op") == "stop":
                self.stopping = "asked to stop"
                _send(conn, {"stopped": os.getpid()})
            elif data.get("op") == "status":
                _send(conn, self.status())
            elif _config_seen(self.home) != self.config:
                self.stopping = "the home's config.yaml changed"
                _send(conn, {"stale": "config"})
            else:
                self._fork(conn, _checked(data, fds, pid))
                if _code_seen() != self.code:
                    self.stopping = "memctl's files changed"
        except (OSError, ValueError) as exc:
            _send(conn, {"error": str(exc)})
        finally:
            for fd in fds:
                os.close(fd)

    def _peer(self, conn: socket.socket) -> int:
        """The client's process id; PermissionError when another user's process asks."""
        option = getattr(socket, "SO_PEERCRED", None)
        if option is None:
            return 0
        import struct

        pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, 12))
        if uid != os.getuid():
            raise PermissionError(f"a process of user {uid} is not served")
        return int(pid)

    def status(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "stamp": stamp(), "served": self.served, "idle": self.idle}

    def _fork(self, conn: socket.socket, request: Request) -> None:
        pid = os.fork()
        if pid:
            self.children.add(pid)
            self.served += 1
            return
        code = 70
        try:  # the child: never returns into the loop
            self.listener.close()
            os.close(self.lock)
            conn.settimeout(None)
            _send(conn, {"ok": os.getpid()})
            code = self.run(request)
            _send(conn, {"exit": code})
        except BaseException:  # noqa: B036 - nothing may escape a forked child
            import traceback

            traceback.print_exc(file=sys.__stderr__)
        finally:
            os._exit(code)

    def close(self) -> None:
        """Stop listening; the socket is removed when it is still this server's."""
        self.listener.close()
        try:
            if os.stat(self.directory / SOCKET).st_ino == self.inode:
                os.unlink(self.directory / SOCKET)
        except (OSError, AttributeError):
            pass


def _send(conn: socket.socket, answer: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(answer).encode() + b"\n")
    except OSError:
        pass  # the client gave up; it runs the command itself


def serve(home: Path, idle: float, warm: Callable[[], None], run: Callable[[Request], int]) -> int:
    """Be the resident process of ``home`` until idle for ``idle`` seconds or stale; 0 at
    once when another one holds the lock."""
    import fcntl
    import time

    directory = home / DIRECTORY
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    lock = os.open(directory / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return 0
    import signal

    began = time.monotonic()
    signal.signal(signal.SIGTERM, _terminated)  # exits through the clean-up below
    server = Server(home, idle, run)
    server.lock = lock
    try:
        os.ftruncate(lock, 0)
        os.write(lock, f"{os.getpid()}\n".encode())
        warm()
        server.bind()
        say(f"serving {home} (pid {os.getpid()}, ready in {time.monotonic() - began:.2f} s)")
        server.loop()
    finally:
        server.close()
        os.close(lock)
    say(f"exiting: {server.stopping or 'interrupted'}; {server.served} requests served")
    return 0


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(0)


def say(line: str) -> None:
    """A line of the log (the server's stderr is logs/resident.log)."""
    import time

    sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} resident: {line}\n")
    sys.stderr.flush()
