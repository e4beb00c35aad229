"""The resident process's client talks only to its own user's listener (issue 34, item 2).

A real listener process sits where the resident socket would be, in a place another
user could have put it: a directory others may write, a symbolic link, a socket others
may write, the home of another local user, a socket file of the user's own that another
user's process listens on. `memctl recall` must answer in its own process and the
listener must hear nothing: not a byte of the environment (a secret is set in it), not a
descriptor.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memctl.api.memory import RememberRequest, remember
from memctl.context import Context
from memctl.integrations import resident
from tests.cli.test_recall_fastlane import FACTS, without_scores
from tests.conftest import run_cli
from tests.integrations.test_resident import ON, stop_every_daemon

SECRET = "AKIA-not-for-the-listener-7f3a9c"
OTHER_USER = "memctl-other"  # and the pytest process id
# A listener that takes every connection and prints, for each, how many bytes and
# descriptors it was sent (it answers nothing: a client that sent would wait, then fall
# back). Given a descriptor number, it listens on that already-bound socket.
LISTENER = """
import json, socket, sys
if sys.argv[1].isdigit():
    server = socket.socket(fileno=int(sys.argv[1]))
else:
    server = socket.socket(socket.AF_UNIX)
    server.bind(sys.argv[1])
server.listen(8)
print("listening", flush=True)
while True:
    conn, _ = server.accept()
    conn.settimeout(3)
    got, fds = b"", 0
    try:
        while True:
            data, passed, _, _ = socket.recv_fds(conn, 1 << 16, 8)
            got, fds = got + data, fds + len(passed)
            if not data:
                break
    except OSError:
        pass
    print(json.dumps({"bytes": len(got), "fds": fds, "secret": b"AKIA" in got}), flush=True)
"""


@pytest.fixture
def memories(home: Path, ctx: Context, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Three memories; the resident process on; a secret in the environment."""
    for fact in FACTS:
        remember(ctx, RememberRequest(fact))
    ctx.close()
    for name, value in ON.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    yield home
    stop_every_daemon(home)  # a recall that fell back starts one (that one is checked too)


class Listener:
    """A listener process; ``heard`` is what each connection sent it."""

    def __init__(self, where: str, user: str | None = None, fd: int | None = None) -> None:
        # another user runs the system's Python: the test's may be in a private directory
        python = sys.executable if user is None else shutil.which("python3", path="/usr/bin")
        assert python is not None
        self.process = subprocess.Popen(
            [python, "-c", LISTENER, where if fd is None else str(fd)],
            stdout=subprocess.PIPE,
            text=True,
            user=user,
            cwd="/",
            pass_fds=() if fd is None else (fd,),
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "listening"

    def heard(self) -> list[dict[str, object]]:
        """What it heard, once it has stopped (a connection still open counts too)."""
        self.process.terminate()
        out, _ = self.process.communicate(timeout=30)
        return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def listen() -> Iterator[Callable[..., Listener]]:
    """Start listeners; each is stopped at the end, whatever the test did."""
    started: list[Listener] = []

    def start(where: str, user: str | None = None, fd: int | None = None) -> Listener:
        started.append(Listener(where, user, fd))
        return started[-1]

    yield start
    for listener in started:
        listener.process.kill()
        listener.process.wait()


def in_process(home: Path, *args: str) -> str:
    done = run_cli(*args, "recall", "--no-touch", "deploy", env={"MEMCTL_RECALL_RESIDENT": "off"})
    assert done.returncode == 0, done.stderr
    return without_scores(done.stdout)


def recall_answers_alone(home: Path, *args: str) -> None:
    """`memctl recall` prints the in-process answer, at once, as if nothing listened."""
    done = run_cli(*args, "recall", "--no-touch", "deploy")
    assert (done.returncode, done.stderr) == (0, "")
    assert without_scores(done.stdout) == in_process(home, *args)


def _others_may_write_the_directory(directory: Path, elsewhere: Path) -> str:
    directory.mkdir(mode=0o700)
    os.chmod(directory, 0o777)
    return str(directory / resident.SOCKET)


def _directory_is_a_link(directory: Path, elsewhere: Path) -> str:
    elsewhere.mkdir(mode=0o700)
    directory.symlink_to(elsewhere)
    return str(elsewhere / resident.SOCKET)


def _socket_is_a_link(directory: Path, elsewhere: Path) -> str:
    directory.mkdir(mode=0o700)
    elsewhere.mkdir(mode=0o700)
    (directory / resident.SOCKET).symlink_to(elsewhere / resident.SOCKET)
    return str(elsewhere / resident.SOCKET)


def _others_may_write_the_socket(directory: Path, elsewhere: Path) -> str:
    directory.mkdir(mode=0o700)
    return str(directory / resident.SOCKET)  # bound with umask 0: 0777


@pytest.mark.parametrize(
    "place",
    [
        _others_may_write_the_directory,
        _directory_is_a_link,
        _socket_is_a_link,
        _others_may_write_the_socket,
    ],
)
def test_a_socket_another_user_could_have_placed_hears_nothing(
    memories: Path,
    tmp_path: Path,
    place: Callable[[Path, Path], str],
    listen: Callable[..., Listener],
) -> None:
    where = place(memories / resident.DIRECTORY, tmp_path / "elsewhere")
    mask = os.umask(0) if place is _others_may_write_the_socket else os.umask(0o077)
    try:
        listener = listen(where)
    finally:
        os.umask(mask)
    assert resident.tell(memories, "status") is None  # `daemon status` asks it nothing
    recall_answers_alone(memories)
    assert listener.heard() == []  # not even a connection


@pytest.fixture
def other_user() -> Iterator[pwd.struct_passwd]:
    """A second local user of this test alone (useradd, userdel after); root only."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd to make a second local user")
    name = f"{OTHER_USER}-{os.getpid()}"  # each pytest worker its own
    subprocess.run(["useradd", "--no-create-home", name], check=True)
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], check=False)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory both users can reach (pytest's tmp_path is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="memctl-two-users-"))
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_root_with_another_users_home_hears_nothing_from_their_listener(
    memories: Path, other_user: pwd.struct_passwd, shared_dir: Path, listen: Callable[..., Listener]
) -> None:
    theirs = shared_dir / "their-home"
    shutil.copytree(memories, theirs)
    directory = theirs / resident.DIRECTORY
    directory.mkdir(mode=0o700)
    for path in (theirs, directory, *theirs.rglob("*")):
        os.chown(path, other_user.pw_uid, other_user.pw_gid)
    listener = listen(str(directory / resident.SOCKET), user=other_user.pw_name)
    # their home is refused whole (config.files.home_problem): its config.yaml and
    # memctl.db are theirs to write, and would say what root's sessions are told
    for args in (("recall", "--no-touch", "deploy"), ("doctor",)):
        done = run_cli("--home", str(theirs), *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert f"belongs to user {other_user.pw_uid}, not to this one: refused" in done.stderr
    assert listener.heard() == []
    assert (os.stat(directory).st_uid, os.stat(directory).st_mode & 0o777) == (
        other_user.pw_uid,
        0o700,
    )  # untouched: no server was started for it


def test_a_listener_of_another_user_on_the_users_own_socket_hears_nothing(
    memories: Path, other_user: pwd.struct_passwd, listen: Callable[..., Listener]
) -> None:
    directory = memories / resident.DIRECTORY
    directory.mkdir(mode=0o700)
    # The socket file is root's, 0600, in root's directory: only the kernel knows that
    # the process listening on it is the other user's (SO_PEERCRED).
    with socket.socket(socket.AF_UNIX) as bound:
        mask = os.umask(0o177)
        bound.bind(str(directory / resident.SOCKET))
        os.umask(mask)
        listener = listen("", user=other_user.pw_name, fd=bound.fileno())
    recall_answers_alone(memories)
    heard = listener.heard()
    assert heard and heard[0] == {"bytes": 0, "fds": 0, "secret": False}


# Another user's client: it sends a whole request (its stdout among the descriptors) and
# prints the server's answer (given at once, before the request is read).
INTRUDER = """
import json, socket, sys
with socket.socket(socket.AF_UNIX) as conn:
    conn.connect(sys.argv[1])
    request = {"stamp": sys.argv[2], "argv": ["recall", "deploy"], "env": {},
               "umask": 18, "streams": [["utf-8", "strict"]] * 3}
    try:  # the server may have answered and closed already
        socket.send_fds(conn, [json.dumps(request).encode() + b"\\n"], [0, 1, 2, 0])
    except OSError:
        pass
    print(conn.makefile().readline().strip())
"""


def test_another_users_client_is_not_served(
    other_user: pwd.struct_passwd, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = shared_dir / "home"
    for name, value in ON.items():
        monkeypatch.setenv(name, value)
    assert run_cli("--home", str(home), "daemon", "start").returncode == 0
    try:
        before = int((resident.tell(home, "status") or {})["served"])
        socket_path = home / resident.DIRECTORY / resident.SOCKET
        os.chmod(home, 0o755)  # as if the user had opened everything up
        os.chmod(socket_path.parent, 0o755)
        os.chmod(socket_path, 0o777)
        python = shutil.which("python3", path="/usr/bin")
        assert python is not None
        done = subprocess.run(
            [python, "-c", INTRUDER, str(socket_path), resident.stamp()],
            capture_output=True,
            text=True,
            user=other_user.pw_name,
            cwd="/",
            timeout=60,
        )
        assert json.loads(done.stdout) == {
            "error": f"a process of user {other_user.pw_uid} is not served"
        }
        assert resident.tell(home, "status") is None  # a socket others may write: not asked
        os.chmod(socket_path, 0o600)
        assert (resident.tell(home, "status") or {})["served"] == before  # nothing ran
    finally:
        resident.tell(home, "stop")
        stop_every_daemon(home)


def test_only_what_a_command_reads_of_the_environment_is_sent() -> None:
    given = {
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "GITHUB_TOKEN": "ghp_not_sent",
        "SSH_AUTH_SOCK": "/run/agent",
        "MEMCTL_HOME": "/h",
        "HOME": "/root",
        "LC_ALL": "C.UTF-8",
        "XDG_DATA_HOME": "/d",
        "COLUMNS": "80",
        "OPENAI_API_KEY": "asked for by name when the settings name it",
    }
    assert resident.environment(given) == {
        "MEMCTL_HOME": "/h",
        "HOME": "/root",
        "LC_ALL": "C.UTF-8",
        "XDG_DATA_HOME": "/d",
        "COLUMNS": "80",
    }
