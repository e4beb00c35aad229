"""The resident process runs a request only while its client waits for it (issue 34,
item 6): real processes, a real socket, a real SQLite file.

A client that gave up and answered by itself never gets a second answer; one client
trickling its request stalls nobody else; a child that dies leaves the command to its
client, input included; a client that goes cancels its request; symbolic links in the
runtime directory are refused, never followed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memctl.integrations import resident
from tests.cli.test_recall_fastlane import without_scores
from tests.conftest import run_cli
from tests.integrations.test_resident import OFF, PROMPT, daemon, gone, served

__all__ = ["daemon"]  # the fixture, used by name below

WITHIN = 30.0  # seconds a test waits for a process to reach a state (never a timing assert)


def command_request(home: Path, *argv: str) -> dict[str, Any]:
    """What a resident client sends to run ``memctl ARGV`` in ``home`` on the hash embedder,
    its three streams UTF-8 (the file descriptors go beside it)."""
    return {
        "stamp": resident.stamp(),
        "argv": list(argv),
        "env": {"MEMCTL_HOME": str(home), "MEMCTL_EMBEDDER": "hash", "PATH": os.defpath},
        "umask": 0o22,
        "streams": [["utf-8", "strict"]] * 3,
    }


def memctl(*args: str, **popen: Any) -> subprocess.Popen[bytes]:
    """``memctl ARGS`` as a real process with the test's environment (hash embedder)."""
    env = {**os.environ, "COLUMNS": "200", "MEMCTL_EMBEDDER": "hash"}
    return subprocess.Popen([sys.executable, "-m", "memctl", *args], env=env, **popen)


def children(pid: int) -> list[int]:
    """The processes ``pid`` forked that still run."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(word) for word in text.split()]


def until(check: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + WITHIN
    while not check():
        assert time.monotonic() < deadline, f"waited {WITHIN:g} s for {what}"
        time.sleep(0.05)


def blocked_reading_stdin(pid: int) -> bool:
    """Whether ``pid`` sleeps in read(2) on its descriptor 0 (/proc/PID/syscall; where
    that is not readable, as without root under Yama, whether it sleeps at all)."""
    try:
        words = Path(f"/proc/{pid}/syscall").read_text().split()
    except PermissionError:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "S"
        except OSError:
            return False
    except OSError:
        return False
    return words[:2] == ["0", "0x0"]


def test_a_client_that_gave_up_gets_one_answer(home: Path, daemon: int, tmp_path: Path) -> None:
    alone = run_cli("recall", "--no-touch", "deploy", env=OFF)
    before = served(home)
    out = tmp_path / "out.txt"
    os.kill(daemon, signal.SIGSTOP)  # a loaded machine: it answers after the client's wait
    try:
        with out.open("wb") as stdout:
            client = memctl(
                "recall", "--no-touch", "deploy", stdin=subprocess.DEVNULL, stdout=stdout
            )
            assert client.wait(timeout=120) == 0  # it waited, then answered by itself
    finally:
        os.kill(daemon, signal.SIGCONT)
    until(lambda: served(home) == before + 1, "the server to take the queued request")
    until(lambda: not children(daemon), "the request's child to end")
    assert without_scores(out.read_text()) == without_scores(alone.stdout)  # once


def test_a_client_trickling_its_request_stalls_no_one(home: Path, daemon: int) -> None:
    stop = threading.Event()
    with socket.socket(socket.AF_UNIX) as slow:
        slow.connect(str(home / resident.DIRECTORY / resident.SOCKET))

        def trickle() -> None:
            for byte in b'{"stamp": "' + b"x" * 1000:
                if stop.wait(0.2):
                    return
                try:
                    slow.send(bytes([byte]))
                except OSError:
                    return  # dropped

        trickler = threading.Thread(target=trickle)
        trickler.start()
        try:
            before = served(home)
            through = run_cli("recall", "--no-touch", "deploy")
            assert (through.returncode, through.stderr) == (0, "")
            assert "make release" in through.stdout
            assert served(home) == before + 1  # answered by the resident process meanwhile
            answer = json.loads(slow.makefile("rb").readline())  # the slow one is dropped
            assert answer == {"error": "no whole request within 2 s"}
        finally:
            stop.set()
            trickler.join()


def test_a_dying_child_leaves_the_hook_to_its_client(home: Path, daemon: int) -> None:
    alone = run_cli("hook", "claude-code", "UserPromptSubmit", input=PROMPT, env=OFF)
    assert "make release" in alone.stdout
    hook = memctl(
        "hook",
        "claude-code",
        "UserPromptSubmit",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert hook.stdin is not None
    hook.stdin.write(PROMPT.replace("s1", "s2").encode())  # another session: a fresh answer
    hook.stdin.flush()  # not closed: the child has read the payload and waits for the end
    until(lambda: children(daemon), "the request's child")
    (child,) = children(daemon)
    until(lambda: blocked_reading_stdin(child), "the child to wait for the rest of stdin")
    os.kill(child, signal.SIGKILL)
    assert gone(child)
    out, err = hook.communicate(timeout=120)  # closes stdin: the input ends
    assert (hook.returncode, err) == (0, b"")
    assert out.decode() == alone.stdout  # run by the client itself, with the same input


def test_a_client_that_goes_cancels_its_request(home: Path, daemon: int) -> None:
    read, write = os.pipe()  # the command's stdin, held open: it waits for its query
    request = command_request(home, "recall", "--no-touch", "-")
    with open(os.devnull, "wb") as sink, socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(home / resident.DIRECTORY / resident.SOCKET))
        fds = [read, sink.fileno(), sink.fileno(), os.open(".", os.O_RDONLY)]
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], fds)
        os.close(fds[3])
        os.close(read)
        assert "ok" in json.loads(conn.makefile("rb").readline())
        conn.sendall(b'{"go": true, "env": {}}\n')
        until(lambda: children(daemon), "the request's child")
        (child,) = children(daemon)
        until(lambda: blocked_reading_stdin(child), "the child to wait for the query")
    assert gone(child)  # the client hung up: killed, though its input is still open
    os.close(write)
    assert (resident.tell(home, "status") or {}).get("running") == 0


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Path]:
    """Someone's file and directory, which a link in the runtime directory points at."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    os.chmod(elsewhere, 0o755)
    (elsewhere / "precious").write_text("keep me\n")
    yield elsewhere


@pytest.mark.fresh
def test_a_link_as_the_lock_file_is_refused(home: Path, target: Path) -> None:
    (home / resident.DIRECTORY).mkdir(mode=0o700, parents=True)
    (home / resident.DIRECTORY / resident.LOCK).symlink_to(target / "precious")
    done = run_cli("daemon", "run", env={"MEMCTL_RECALL_RESIDENT": "on"})
    assert done.returncode == 4  # StoreError
    link = home / resident.DIRECTORY / resident.LOCK
    assert done.stderr.strip().splitlines() == [
        f"memctl: error: {link} is a symbolic link: refused (remove it, memctl makes its own)"
    ]
    assert (target / "precious").read_text() == "keep me\n"


def test_a_link_as_the_runtime_directory_is_refused(home: Path, target: Path) -> None:
    home.mkdir(exist_ok=True)
    (home / resident.DIRECTORY).symlink_to(target)
    done = run_cli("daemon", "run", env={"MEMCTL_RECALL_RESIDENT": "on"})
    assert done.returncode == 4  # StoreError
    link = home / resident.DIRECTORY
    assert done.stderr.strip().splitlines() == [
        f"memctl: error: {link} is a symbolic link: refused (remove it, memctl makes its own)"
    ]
    assert target.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in target.iterdir()) == ["precious"]  # no lock, no socket
    alone = run_cli("recall", "--no-touch", "deploy", env=OFF)
    through = run_cli("recall", "--no-touch", "deploy", env={"MEMCTL_RECALL_RESIDENT": "on"})
    assert (through.returncode, through.stdout) == (alone.returncode, alone.stdout)
    doctor = run_cli("doctor", env={"MEMCTL_RECALL_RESIDENT": "on"}).stdout
    assert f"not started: {link} is a symbolic link" in doctor


@pytest.mark.parametrize(
    ("config", "asked"),
    [(["-c", "llm=openai", "-c", "openai.api_key_env=MY_LLM_KEY"], ["MY_LLM_KEY"]), ([], [])],
)
def test_the_child_asks_for_the_key_its_settings_name(
    home: Path, daemon: int, config: list[str], asked: list[str]
) -> None:
    request = command_request(home, *config, "recall", "--no-touch", "deploy")
    with open(os.devnull, "rb+") as null, socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(home / resident.DIRECTORY / resident.SOCKET))
        fds = [null.fileno()] * 3 + [os.open(".", os.O_RDONLY)]
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], fds)
        os.close(fds[3])
        assert json.loads(conn.makefile("rb").readline())["need"] == asked
    # not told to go: it ran nothing
    until(lambda: not children(daemon), "the child to leave")


def test_a_command_writing_to_both_streams_tells_its_client_once(
    home: Path, daemon: int, tmp_path: Path
) -> None:
    """The child says ``writing`` before its first byte of output, once for stdout and
    stderr together (each answer wakes the client), then its exit code: a recall from a
    directory of no project warns on stderr and prints its table on stdout."""
    request = command_request(home, "recall", "--no-touch", "deploy")
    out, err = tmp_path / "out", tmp_path / "err"
    with (
        open(os.devnull, "rb") as null,
        out.open("wb") as stdout,
        err.open("wb") as stderr,
        socket.socket(socket.AF_UNIX) as conn,
    ):
        conn.connect(str(home / resident.DIRECTORY / resident.SOCKET))
        fds = [null.fileno(), stdout.fileno(), stderr.fileno(), os.open(tmp_path, os.O_RDONLY)]
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], fds)
        os.close(fds[3])
        answers = conn.makefile("rb")
        assert "ok" in json.loads(answers.readline())
        conn.sendall(json.dumps({"go": True, "env": {}}).encode() + b"\n")
        said = [json.loads(line) for line in answers]
    assert "make release" in out.read_text() and "no project" in err.read_text()
    assert said == [{"writing": True}, {"exit": 0}]
