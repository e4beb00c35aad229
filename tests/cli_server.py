"""A fork server for the suite's ``memctl`` processes (``tests.conftest.run_cli``).

Started once by a test worker (``python tests/cli_server.py SOCKET``), it imports memctl,
Typer and numpy once, then for each request forks a child that becomes ``python -m memctl
ARGS``: the test's stdin, stdout and stderr (passed as file descriptors), its environment,
working directory and umask, and ``sys.argv``, ``sys.path[0]`` and ``__main__`` as ``-m``
sets them; the child then runs the ``memctl`` module (``runpy``) and leaves with its code
(``leave``). A command is the same process it would be, without Python's start-up and
memctl's imports (about 0.15-0.25 s of CPU each, for the ~1,000 memctl processes of the
suite). Each child is forked from a server that has imported modules and read memctl's own
patterns and word lists (``warm``: ~15-85 ms of CPU less a command that uses them), and
nothing of a home, so no test's state reaches another's.

The request is one JSON line (args, env, cwd, umask) with the three descriptors; the server
answers the child's pid, then its return code (``subprocess``'s: minus the signal), one line
each. It serves many requests at once (a test may run several memctl processes in threads)
and exits when the worker that started it closes its standard input.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

# What a command imports; the rest it imports itself, as a fresh process would.
PRELOAD = (
    "memctl.cli.entry",
    "memctl.cli.fastlane",
    "memctl.cli.main",
    "memctl.cli.memory_out",
    "memctl.cli.sessions_out",
    "memctl.integrations.hooks",
    "memctl.api.memory",
    "memctl.api.recall",
    "memctl.api.ingest",
    "typer",
    "numpy",
    # the tables and progress bars of Typer's commands (six in ten of the suite's commands
    # imported ~45 rich modules: ~20 ms of CPU each time)
    "rich.console",
    "rich.table",
    "rich.progress",
)
# What commands load besides (a remember, an ingest, an import, a maintain, a sync), for
# ``warm``: the rules' patterns of every module loaded by then are compiled once. No
# ``memctl.cli`` module: some make their console on import, at the server's width.
WARMED = (
    "memctl.api.maintain",
    "memctl.api.projects",
    "memctl.api.sync",
    "memctl.embed.hashed",
    "memctl.imports.pipeline",
    "memctl.ingest.graph",
    "memctl.ingest.meaning",
    "memctl.ingest.pipeline",
    "memctl.ingest.reconcile_rules",
    "memctl.ingest.run",
    "memctl.llm.probe",
    "memctl.maintain.pipeline",
    "memctl.store.vector_index",
    "memctl.store.vector_query",
    "memctl.sync.pipeline",
    "memctl.sync.records",
)
# What `memctl mcp` loads besides, for a server of MCP processes (``Server(mcp=True)``): the
# MCP SDK (~0.8 s of CPU of a ~1.2 s start). Not in the commands' server: the tests of the
# front (tests/integrations/test_mcp_front_search.py) prove a start that never loads it.
PRELOAD_MCP = ("memctl.integrations.mcp_front", "memctl.integrations.mcp_server")
MAX_REQUEST = 1 << 22  # bytes of one request line (the environment is most of it)


@dataclass(frozen=True)
class Request:
    args: list[str]
    env: dict[str, str]
    cwd: str
    umask: int
    fds: list[int]
    typer: str | None  # through this Typer command, as ``tests.conftest.through_typer`` runs it


def preload(mcp: bool) -> None:
    import importlib

    for name in (*PRELOAD, *(PRELOAD_MCP if mcp else ())):
        importlib.import_module(name)


def warm() -> None:
    """Read now what commands read from memctl's package on first use and never change:
    the rules' patterns and the word lists. Each child starts with them, as the resident
    recall process's children do (``memctl.api.recall.warm``); nothing of a home is read."""
    import importlib

    from memctl.ingest import entities, extract_rules
    from memctl.lazy_re import compile_loaded
    from memctl.memories import privacy
    from memctl.retrieve import glossary, software_kinds, vocabulary

    for name in WARMED:
        importlib.import_module(name)
    for pattern in extract_rules.PATTERNS:
        pattern.regex  # noqa: B018 - compiled on first read
    for detector in privacy.DETECTORS:
        detector.pattern  # noqa: B018 - compiled on first read
    for word_list in (
        vocabulary.vocabulary,
        vocabulary.kinds,
        vocabulary.verbs,
        vocabulary.spellings_text,
        glossary.glossary,
        software_kinds.software_kinds,
        entities.software,
        entities.common_words,
        entities.everyday_aliases,
    ):
        word_list()
    compile_loaded()


def read_request(conn: socket.socket) -> Request:
    data, fds, _flags, _addr = socket.recv_fds(conn, MAX_REQUEST, 3)
    while not data.endswith(b"\n"):
        more = conn.recv(MAX_REQUEST)
        if not more:
            raise EOFError("the request ended early")
        data += more
    fields: dict[str, Any] = json.loads(data)
    return Request(
        fields["args"], fields["env"], fields["cwd"], fields["umask"], fds, fields.get("typer")
    )


def serve(path: str) -> Request:
    """Answer requests until the worker goes; in a forked child, return its request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    running: dict[int, socket.socket] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        readable, _, _ = select.select([listener, wake_read, sys.stdin], [], [])
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            os._exit(0)  # the worker is gone; its children's processes end on their own
        if wake_read in readable:
            os.read(wake_read, 4096)
        reap(running)
        if listener not in readable:
            continue
        conn, _ = listener.accept()
        request = read_request(conn)
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for sock in (listener, conn, *running.values()):
                sock.close()
            os.close(wake_read)
            os.close(wake_write)
            return request
        for fd in request.fds:
            os.close(fd)
        conn.sendall(f"{pid}\n".encode())
        running[pid] = conn


def reap(running: dict[int, socket.socket]) -> None:
    while running:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = running.pop(pid)
        try:
            conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
        except OSError:
            pass  # the test gave up waiting (its timeout) and went
        conn.close()


def become(request: Request) -> None:
    """This forked child becomes ``python -m memctl ARGS`` in the request's place (or, for a
    request ``typer``, ARGS through that Typer command, as ``through_typer``'s probe runs)."""
    for target, fd in enumerate(request.fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request.cwd)
    os.umask(request.umask)
    os.environ.clear()
    os.environ.update(request.env)
    time.tzset()
    sys.argv = ["-m", *request.args]  # runpy puts the module's file first, as -m does
    sys.path[0] = request.cwd
    if request.typer is not None:
        from memctl.cli.entry import main, run_typer

        sys.argv[0] = "__main__.py"  # click names the program from ``__main__``, as -m sets it
        sys.modules["__main__"].__package__ = "memctl"
        main(lambda: run_typer(request.typer))
    import runpy

    runpy.run_module("memctl", run_name="__main__", alter_sys=True)


def leave(code: object) -> None:
    """The forked command ends as the interpreter ends it, up to the teardown: its threads
    joined, its atexit handlers run and its output flushed (``Py_FinalizeEx``'s order), then
    it exits at once, as a memctl recall does (``memctl.cli.entry.script``). Freeing every
    module and object the server loaded took ~23 ms of CPU a command (`memctl --version`
    29 -> 6 ms), ~30 s of the suite's ~1,300 commands; the store is closed by then (the
    command's ``with Context``), and the tests marked ``fresh`` keep the whole teardown.
    A code the interpreter words (a message) or a flush that fails leaves through it."""
    if code is not None and not isinstance(code, int):
        raise SystemExit(code)
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()  # runs each handler once: the interpreter finds none left
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        raise SystemExit(code) from None
    os._exit(code or 0)


# --- the worker's half -------------------------------------------------------------------

# Variables Python, numpy or Typer read once at start-up (the encoding of the standard
# streams, bytecode, BLAS threads, Typer's rich help): a command given other values than the
# server started with runs in a fresh process.
STARTUP_PREFIXES = ("PYTHON", "LC_", "LANG", "TYPER", "_TYPER", "OPENBLAS", "OMP_")
STARTUP_NAMES = frozenset({"TERMINAL_WIDTH", "GITHUB_ACTIONS", "FORCE_COLOR", "PY_COLORS"})


def startup(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(STARTUP_PREFIXES) or k in STARTUP_NAMES}


class Server:
    """This worker's fork server, started on its first command."""

    def __init__(self, mcp: bool = False) -> None:
        import atexit
        import shutil
        import subprocess
        import tempfile

        self.directory = tempfile.mkdtemp(prefix="memctl-cli-")
        self.path = os.path.join(self.directory, "socket")
        self.startup = startup(dict(os.environ))
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), self.path, *(["--mcp"] if mcp else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        if ready != b"ready\n":
            raise RuntimeError(f"the memctl fork server did not start: {ready!r}")
        atexit.register(shutil.rmtree, self.directory, True)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)

    def serves(self, env: dict[str, str]) -> bool:
        return self.process.poll() is None and startup(env) == self.startup

    def run(
        self,
        args: list[str],
        data: bytes | None,
        env: dict[str, str],
        cwd: str,
        timeout: float,
        typer: str | None = None,
    ) -> tuple[int, bytes, bytes]:
        """``python -m memctl ARGS`` forked (through the Typer command ``typer``, if given):
        its return code, stdout and stderr, as ``subprocess.run(..., capture_output=True)``
        gives them (stdin the worker's own when ``data`` is None)."""
        import subprocess
        import threading

        mask = os.umask(0o077)
        os.umask(mask)
        fields = {"args": args, "env": env, "cwd": cwd, "umask": mask, "typer": typer}
        header = json.dumps(fields).encode()
        stdin_read, stdin_write = os.pipe() if data is not None else (0, -1)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        deadline = time.monotonic() + timeout
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self.path)
            socket.send_fds(conn, [header[:1]], [stdin_read, out_write, err_write])
            conn.sendall(header[1:] + b"\n")
            for fd in (out_write, err_write, *([stdin_read] if data is not None else [])):
                os.close(fd)
            replies = conn.makefile("rb")
            pid = int(replies.readline())
            outputs: dict[int, bytes] = {}

            def drain(fd: int) -> None:
                with os.fdopen(fd, "rb") as stream:
                    outputs[fd] = stream.read()

            def feed() -> None:
                # the command need not read it all, as subprocess allows: the pipe may
                # break on the write or on the flush that closing the stream does
                try:
                    with os.fdopen(stdin_write, "wb") as stream:
                        stream.write(data or b"")
                except BrokenPipeError:
                    pass

            threads = [threading.Thread(target=drain, args=(fd,)) for fd in (out_read, err_read)]
            if data is not None:
                threads.append(threading.Thread(target=feed))
            for thread in threads:
                thread.start()
            try:
                for thread in threads:
                    thread.join(max(0.0, deadline - time.monotonic()))
                    if thread.is_alive():
                        raise subprocess.TimeoutExpired(args, timeout)
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                code = int(replies.readline())
            except (subprocess.TimeoutExpired, TimeoutError):
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(["memctl", *args], timeout) from None
        return code, outputs[out_read], outputs[err_read]

    def command(self, args: list[str]) -> list[str]:
        """A command line that is ``python -m memctl ARGS`` forked from this server, for a
        process the test does not start itself (an MCP client starts its server): a small
        process (``forward``) hands the server its standard streams, environment, directory
        and umask, and ends as the command ends."""
        return [sys.executable, "-S", os.path.abspath(__file__), "--forward", self.path, *args]


def forward(path: str, args: list[str]) -> None:
    """``python -m memctl ARGS`` forked by the server at ``path`` in this process's place:
    its streams are the command's (closed here, so a reader sees the command's end, not
    this process's); a signal to end this process ends the command; its code is this one's."""
    mask = os.umask(0o077)
    os.umask(mask)
    header = json.dumps({"args": args, "env": dict(os.environ), "cwd": os.getcwd(), "umask": mask})
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        socket.send_fds(conn, [header[:1].encode()], [0, 1, 2])
        conn.sendall(header[1:].encode() + b"\n")
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        replies = conn.makefile("rb")
        pid = int(replies.readline())
        for ending in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(ending, lambda number, _frame: os.kill(pid, number))
        code = int(replies.readline())
    if code < 0:  # ended by a signal: so is this process, as subprocess reports it
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


if __name__ == "__main__" and sys.argv[1] == "--forward":
    forward(sys.argv[2], sys.argv[3:])
elif __name__ == "__main__":
    preload(mcp=sys.argv[2:] == ["--mcp"])
    warm()
    gc.freeze()  # what the server loaded is never collected: each child's pages stay shared
    request = serve(sys.argv[1])
    try:
        become(request)
    except SystemExit as done:  # how `python -m memctl` ends, whatever its code
        leave(done.code)
    leave(0)
