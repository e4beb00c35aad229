"""The resident recall process: real processes, a real Unix socket, a real SQLite file.

Through it, `memctl recall` and the prompt hook print what they print in their own
process; a write of another process is seen; a garbage request, a dead socket, a
daemon of another memctl copy and an idle one each leave recall working.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.synthetic import synthetic_memories
from memctl.api.memory import RememberRequest, remember
from memctl.api.recall import RecallRequest
from memctl.api.recall import recall as api_recall
from memctl.context import Context
from memctl.integrations import resident, resident_server
from memctl.model import Memory
from memctl.retrieve.density import LOCAL_ROWS
from memctl.store.memories import insert_memory
from tests.cli.test_recall_fastlane import FACTS, same_answer, without_scores
from tests.conftest import python_c, run_cli, said_in_session

ON = {"MEMCTL_RECALL_RESIDENT": "on", "MEMCTL_RECALL_RESIDENT_IDLE": "30"}
OFF = {"MEMCTL_RECALL_RESIDENT": "off"}
ASKED = "how do we deploy with make release?"  # words of the memory: the hash embedder
PROMPT = json.dumps({"session_id": "s1", "prompt": ASKED})


def served(home: Path) -> int:
    answer = resident.tell(home, "status") or {}
    return int(answer.get("served", -1))


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def daemon(home: Path, ctx: Context, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """Three memories and a running resident process (its pid); stopped at the end."""
    for fact in FACTS:
        remember(ctx, RememberRequest(fact))
    ctx.close()
    for name, value in ON.items():
        monkeypatch.setenv(name, value)
    started = run_cli("daemon", "start")
    assert started.returncode == 0, started.stderr
    pid = int((resident.tell(home, "status") or {})["pid"])
    yield pid
    stop_every_daemon(home)


def stop_every_daemon(home: Path) -> None:
    """Stop the resident processes this test started for ``home`` (a recall that fell back
    may have started one that is still loading): by their ids, found by their home."""
    deadline = time.monotonic() + 30
    while pids := [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _serves(entry / "cmdline", home)
    ]:
        assert time.monotonic() < deadline, f"resident processes {pids} would not stop"
        resident.tell(home, "stop")
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


def _serves(cmdline: Path, home: Path) -> bool:
    try:
        words = cmdline.read_bytes().split(b"\0")
    except OSError:
        return False
    return b"memctl.cli.resident" in words and str(home).encode() in words


@pytest.mark.fresh
def test_daemon_stop_ends_the_process_and_recall_answers_in_its_own(
    home: Path, daemon: int
) -> None:
    done = run_cli("daemon", "stop")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"stopped the resident recall process of {home}"
    assert gone(daemon)
    assert run_cli("daemon", "status").stdout.strip() == "not running"
    again = run_cli("daemon", "stop")
    assert again.returncode == 0
    assert again.stdout.strip() == f"no resident recall process serves {home}"
    answered = run_cli("recall", ASKED, env=OFF)  # in its own process now
    assert answered.returncode == 0, answered.stderr
    assert "make release" in answered.stdout


# Words no memory holds, marked private in a query
SECRET = "Quokkaville Zebrafinch Marmalade Hollowbrook"


def test_a_private_part_of_a_query_is_not_searched_nor_said_back(home: Path, daemon: int) -> None:
    """`memctl recall` searched a query's ``<private>`` part: its words reached the store's
    statements (``MEMCTL_DEBUG_SQL``'s log), the resident's embedder and the answer. Through
    the resident process and in its own, the rest is asked, and the private words are in no
    output, statement, log or file of the home."""
    query = f"<private>{SECRET} owes {SECRET}</private> {ASKED}"
    before = served(home)
    said = ""
    for env in ({}, OFF):
        done = run_cli(
            "recall", "--json", "--no-touch", query, env={"MEMCTL_DEBUG_SQL": "1", **env}
        )
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert answer["query"] == ASKED
        assert "make release" in answer["results"][0]["content"]
        assert "SQL: " in done.stderr  # the tracer ran
        said += done.stdout + done.stderr
    assert served(home) == before + 1
    refused = run_cli("recall", f"<private>{SECRET}</private>")  # nothing else asked
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("nothing else is asked")
    said += refused.stdout + refused.stderr
    kept = b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())
    for word in SECRET.split():
        assert word not in said and word.encode() not in kept


# What a resident process does before it answers: take the lock, write its id, load the
# model (here: wait to be ended)
LOADING = """
import fcntl, os, sys, time
lock = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(lock, fcntl.LOCK_EX)
os.write(lock, f"{os.getpid()}\\n".encode())
print("locked", flush=True)
time.sleep(60)
"""


def test_daemon_stop_ends_one_still_loading_the_model(home: Path) -> None:
    """A recall starts the resident process detached: a walk's `daemon status` and `daemon
    stop` right after met it loading the model (no socket yet), said "not running" and
    "none served the home", and left it."""
    directory = home / resident.DIRECTORY
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    argv = [sys.executable, "-c", LOADING, str(directory / resident.LOCK)]
    loading = subprocess.Popen(argv, stdout=subprocess.PIPE)
    try:
        assert loading.stdout is not None and loading.stdout.readline() == b"locked\n"
        said = run_cli("daemon", "status").stdout.strip()
        assert said == f"starting: process {loading.pid} is loading the model"
        done = run_cli("daemon", "stop")
        assert done.returncode == 0, done.stderr
        said = f"stopped the resident recall process of {home} (process {loading.pid}, starting)"
        assert done.stdout.strip() == said
        assert loading.wait(timeout=10) == -signal.SIGTERM
    finally:
        loading.kill()
        loading.wait()


def test_daemon_stop_ends_one_still_starting_python(home: Path) -> None:
    """A walk's `daemon stop` right after the recall that launched the resident process
    (1 run in 3) met it before it took its lock: "no resident recall process serves" it,
    and it served for 20 minutes. Here it is launched as a recall launches it and held
    (SIGSTOP) before its first line of Python."""
    argv = [sys.executable, "-m", "memctl.cli.resident", "--home", str(home.resolve())]
    starting = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        os.kill(starting.pid, signal.SIGSTOP)
        done = run_cli("daemon", "stop")
        assert done.returncode == 0, done.stderr
        said = f"stopped the resident recall process of {home} (process {starting.pid}, starting)"
        assert done.stdout.strip() == said
        os.kill(starting.pid, signal.SIGCONT)  # the SIGTERM it was sent ends it now
        assert starting.wait(timeout=10) == -signal.SIGTERM
    finally:
        starting.kill()
        starting.wait()


def resume_once_terminated(pid: int) -> None:
    """Continue the held process ``pid`` once a SIGTERM waits for it (its pending signals,
    /proc/PID/status), or after 20 s."""
    for _ in range(400):
        status = Path(f"/proc/{pid}/status").read_text()
        pending = re.search(r"^ShdPnd:\s*([0-9a-f]+)", status, re.M)
        if pending and int(pending.group(1), 16) & 1 << (signal.SIGTERM - 1):
            break
        time.sleep(0.05)
    os.kill(pid, signal.SIGCONT)


def test_a_purge_ends_one_still_starting_before_it_removes_the_home(
    home: Path, tmp_path: Path
) -> None:
    """One launched as the purge began took its lock after the purge: it made the data
    directory again, and served it."""
    user = tmp_path / "user"
    env = {"HOME": str(user), "XDG_CACHE_HOME": str(user / ".cache")}
    assert run_cli("remember", "We deploy on Fridays.", env=env).returncode == 0
    argv = [sys.executable, "-m", "memctl.cli.resident", "--home", str(home.resolve())]
    starting = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        os.kill(starting.pid, signal.SIGSTOP)
        resumed = threading.Thread(target=resume_once_terminated, args=(starting.pid,))
        resumed.start()  # so the purge sees it end, and waits no longer
        done = run_cli("uninstall", "--purge", "--yes", env=env)
        resumed.join()
        assert done.returncode == 0, done.stderr
        assert "stopped the resident recall process" in done.stdout, done.stdout
        assert starting.wait(timeout=10) == -signal.SIGTERM
        assert not home.exists()
    finally:
        starting.kill()
        starting.wait()


@pytest.mark.fresh
def test_doctor_names_the_running_resident_process(daemon: int) -> None:
    done = run_cli("doctor")
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("ok    resident")]
    assert f"process {daemon} serves" in line


def test_answers_through_the_resident_process_are_the_in_process_answers(
    home: Path, daemon: int, tmp_path: Path
) -> None:
    # Another project's memory, written by another process after the daemon started.
    other = tmp_path / "other"
    other.mkdir()
    wrote = run_cli("remember", "Deploys of the other project go through Jenkins.", cwd=other)
    assert wrote.returncode == 0
    lines = [
        ("recall", "--no-touch", "-"),  # the query on standard input, a table
        ("recall", "--no-touch", "--format", "context", "deploy"),
        ("recall", "--no-touch", "--json", "-n", "2", "--all-scopes", "deploy"),
        ("recall", "--no-touch", "--budget", "0", "deploy"),  # an error: one line, exit 2
    ]
    before = served(home)
    for cwd, some in ((Path.cwd(), lines), (other, lines[:2])):  # each project's scope
        for line in some:
            through = run_cli(*line, input="how do we deploy", cwd=cwd)
            alone = run_cli(*line, input="how do we deploy", cwd=cwd, env=OFF)
            assert (through.returncode, through.stderr) == (alone.returncode, alone.stderr)
            if "--json" in line:
                same_answer(json.loads(through.stdout), json.loads(alone.stdout))
            else:
                assert without_scores(through.stdout) == without_scores(alone.stdout)
    assert "Jenkins" in run_cli("recall", "--no-touch", "Jenkins", cwd=other).stdout  # its write
    hook = ("hook", "claude-code", "UserPromptSubmit")
    through = run_cli(*hook, input=PROMPT)
    assert "make release" in json.loads(through.stdout)["hookSpecificOutput"]["additionalContext"]
    again = run_cli(*hook, input=PROMPT)  # the session has it now: nothing new to add
    assert (again.returncode, again.stdout) == (0, "")
    fresh = json.dumps({"session_id": "s2", "prompt": ASKED})
    assert run_cli(*hook, input=fresh, env=OFF).stdout == through.stdout
    probe = (
        "import sys\nsys.argv = ['memctl', 'recall', '-f', 'ids', 'deploy']\n"
        "from memctl.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('numpy', 'memctl.config', 'memctl.cli.fastlane', 'typing', 'argparse',"
        " 'socket')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    client = python_c(probe)
    assert client.stdout.splitlines()[-1] == "[]"  # the client: _socket, json and os
    assert served(home) == before + len(lines) + 2 + 3 + 1


def test_a_usage_error_the_resident_process_answers_names_memctl(home: Path, daemon: int) -> None:
    """A recall with a mistyped option that the resident process answered told the user to
    run "`python -m memctl.cli.memctl recall -h` for help", a module there is none of (click
    named the program after the resident's own module); now it says `memctl recall -h`,
    as a recall in its own process does."""
    before = served(home)
    wrong = run_cli("recall", "--limt", "3", "deploy")
    assert served(home) == before + 1  # answered by the resident process
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == (
        "memctl: error: No such option: --limt (did you mean --limit?) (`memctl recall -h` "
        "for help)"
    )


def test_garbage_leaves_it_serving_and_another_memctl_stops_it(home: Path, daemon: int) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "memctl.cli.resident", "--home", str(home)],
        env={**os.environ, "MEMCTL_EMBEDDER": "hash"},
        timeout=60,
    )
    assert second.returncode == 0  # the lock is taken: it left at once
    mode = (home / resident.DIRECTORY).stat().st_mode & 0o777
    assert (mode, (home / resident.DIRECTORY / resident.SOCKET).stat().st_mode & 0o777) == (
        0o700,
        0o600,
    )
    wrong = json.dumps({"stamp": resident.stamp(), "argv": 5}).encode() + b"\n"
    for garbage in (b"not json\n", wrong, b"\xff" * 10 + b"\n"):
        assert "error" in said(home, garbage)
    assert (resident.tell(home, "status") or {}).get("pid") == daemon
    elsewhere = json.dumps({"stamp": "0.0.1 /elsewhere", "op": "status"}).encode() + b"\n"
    assert "stale" in said(home, elsewhere)
    assert gone(daemon)
    assert not (home / resident.DIRECTORY / resident.SOCKET).exists()
    alone = run_cli("recall", "--no-touch", "-f", "ids", "deploy", env=OFF)
    assert run_cli("recall", "--no-touch", "-f", "ids", "deploy").stdout == alone.stdout


def said(home: Path, request: bytes) -> dict[str, object]:
    """The server's answer to these bytes."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(home / resident.DIRECTORY / resident.SOCKET))
        conn.sendall(request)
        answer: dict[str, object] = json.loads(conn.makefile("rb").readline())
        return answer


def test_a_dead_socket_falls_back_and_a_new_daemon_replaces_it(home: Path, daemon: int) -> None:
    os.kill(daemon, signal.SIGKILL)  # a crash: the socket file stays, nobody listens
    assert gone(daemon)
    assert (home / resident.DIRECTORY / resident.SOCKET).exists()
    alone = run_cli("recall", "--no-touch", "deploy", env=OFF)
    through = run_cli("recall", "--no-touch", "deploy")  # refused: runs here, starts one
    assert (through.returncode, through.stderr) == (0, "")
    assert without_scores(through.stdout) == without_scores(alone.stdout)
    pid = started(home)
    assert pid != daemon
    resident.tell(home, "stop")
    assert gone(pid)
    start = run_cli("hook", "claude-code", "SessionStart", input='{"session_id": "s3"}')
    assert start.returncode == 0 and "make release" in start.stdout
    pid = started(home)  # the session-start hook starts one too
    resident.tell(home, "stop")
    assert gone(pid)


def started(home: Path, within: float = 30.0) -> int:
    """The pid of the resident process once it answers."""
    deadline = time.monotonic() + within
    while (answer := resident.tell(home, "status")) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert answer is not None
    return int(answer["pid"])


def test_an_idle_daemon_exits_by_itself(home: Path) -> None:
    env = {**os.environ, **ON, "MEMCTL_RECALL_RESIDENT_IDLE": "1", "MEMCTL_EMBEDDER": "hash"}
    done = subprocess.run(
        [sys.executable, "-m", "memctl.cli.resident", "--home", str(home)],
        env=env,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    assert "exiting: idle for 1 s; 0 requests served" in done.stderr
    assert not (home / resident.DIRECTORY / resident.SOCKET).exists()


def test_a_daemon_stopped_by_sigterm_logs_why_it_exits(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # in this process: serve() takes SIGTERM as `kill PID` (or systemd) sends it
    def terminate_once_listening() -> None:
        while not (home / resident.DIRECTORY / resident.SOCKET).exists():
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)

    unused = resident_server.Handlers(
        run=lambda *_: 0, needs=lambda _: [], embed=lambda _: ("", 0, b"")
    )
    before = signal.getsignal(signal.SIGTERM)
    killer = threading.Thread(target=terminate_once_listening)
    try:
        killer.start()
        with pytest.raises(SystemExit):
            resident_server.serve(home, 30.0, lambda: None, unused)
    finally:
        killer.join()
        signal.signal(signal.SIGTERM, before)
    assert "exiting: terminated (SIGTERM); 0 requests served" in capsys.readouterr().err
    assert not (home / resident.DIRECTORY / resident.SOCKET).exists()


def test_after_an_upgrade_not_one_command_runs_on_the_old_code(
    home: Path, daemon: int, tmp_path: Path
) -> None:
    # memctl installed in a copy of its own, serving; then the copy is upgraded in place.
    copy = tmp_path / "site"
    shutil.copytree(
        Path(resident.__file__).parents[1], copy / "memctl", ignore=shutil.ignore_patterns("*.pyc")
    )
    stop_every_daemon(home)
    from_copy = {**ON, "PYTHONPATH": str(copy)}
    assert run_cli("daemon", "start", env=from_copy).returncode == 0
    before = run_cli("recall", "--no-touch", "-f", "ids", "deploy", env=from_copy)
    status = run_cli("daemon", "status", env=from_copy).stdout  # asked by the copy's client
    assert before.returncode == 0 and "1 request served" in status, status
    pid = int(status.split("process ")[1].split(",")[0])
    printing = copy / "memctl" / "cli" / "recall_out.py"
    text = printing.read_text(encoding="utf-8")
    upgraded = text.replace('item.memory.id + "\\n"', '"upgraded " + item.memory.id + "\\n"')
    assert upgraded != text
    printing.write_text(upgraded, encoding="utf-8")
    after = run_cli("recall", "--no-touch", "-f", "ids", "deploy", env=from_copy)
    assert after.stdout.splitlines() == [f"upgraded {line}" for line in before.stdout.splitlines()]
    assert gone(pid)  # the old server left without running it


def test_a_module_imported_first_after_the_process_started_does_not_end_it(
    home: Path, daemon: int, tmp_path: Path
) -> None:
    # a new clone: scripts/setup installs without compiling, so a package's first import
    # makes its __pycache__ (the walk: `memctl maintain` after the Quick start's recalls)
    copy = tmp_path / "site"
    shutil.copytree(
        Path(resident.__file__).parents[1],
        copy / "memctl",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    stop_every_daemon(home)
    from_copy = {**ON, "PYTHONPATH": str(copy)}
    assert run_cli("daemon", "start", env=from_copy).returncode == 0
    assert run_cli("recall", "--no-touch", "deploy", env=from_copy).returncode == 0
    before = run_cli("daemon", "status", env=from_copy).stdout  # asked by the copy's client
    assert "1 request served" in before, before
    assert not (copy / "memctl" / "maintain" / "__pycache__").exists()
    imported = subprocess.run(
        [sys.executable, "-c", "import memctl.maintain"],
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        | {"PYTHONPATH": str(copy)},
        check=True,
    )
    assert imported.returncode == 0 and (copy / "memctl" / "maintain" / "__pycache__").is_dir()
    assert run_cli("recall", "--no-touch", "deploy", env=from_copy).returncode == 0
    after = run_cli("daemon", "status", env=from_copy).stdout
    assert after == before.replace("1 request served", "2 requests served"), after


@pytest.mark.parametrize(
    ("argv", "forwarded"),
    [
        (["recall", "deploy"], True),
        (["--home", "/h", "-c", "recall.limit=3", "recall", "-f", "ids", "x"], True),
        (["-c", "recall.resident=off", "recall", "deploy"], False),
        (["recall", "--help"], False),
        (["hook", "claude-code", "UserPromptSubmit"], True),
        (["hook", "cursor", "sessionStart"], True),
        (["hook", "claude-code", "Stop"], False),
        (["hook", "opencode", "session.created"], True),
        (["remember", "recall"], False),
        (["--version", "recall"], False),
    ],
)
def test_what_goes_to_the_resident_process(
    argv: list[str], forwarded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCTL_RECALL_RESIDENT", "on")
    assert resident.wanted(argv) is forwarded


def test_the_forwarded_hook_events_are_the_start_and_prompt_events() -> None:
    from memctl.integrations.hooks import PROMPT, START, _spelling

    assert set(resident.HOOK_EVENTS) == {_spelling(event) for _, event in START | PROMPT}


def test_the_variables_naming_the_asking_session_reach_the_resident_process() -> None:
    """`memctl recall` run by an assistant's shell tool forwards the session it runs in:
    "last time" is the session before it (each variable alone: the resident process's
    child reads its environment as the client's)."""
    from memctl.config.settings import PROCESS_VARIABLES, SESSION_VARIABLES, asking_session

    for name in (*SESSION_VARIABLES, *PROCESS_VARIABLES.values()):  # the hook's record too
        assert resident.environment({name: "s1", "SECRET_TOKEN": "x"}) == {name: "s1"}
    for name in SESSION_VARIABLES:
        assert asking_session({name: "s1"}) == "s1"
    assert asking_session({"CODEX_THREAD_ID": "t1", "CLAUDE_CODE_SESSION_ID": ""}) == "t1"
    assert asking_session({"HOME": "/home/a"}) is None


def test_a_child_of_the_resident_process_loads_nothing_a_recall_needs(ctx: Context) -> None:
    """The resident process loads, before it forks, every module a recall loads, and
    compiles every pattern a recall uses but those made of the question's words: a child
    spends its time on the question (each used to load argparse's locale module again, and
    numpy.ma through np.unique and np.median, about 30 ms of every recall; and to compile
    the clients' wrappers, a session message's test, and the secrets' patterns a shown row
    wakes, about 7 ms). The store is large enough for the crowd discount
    (density.LOCAL_ROWS memories), and holds session messages that answer."""
    for fact in FACTS:
        remember(ctx, RememberRequest(fact))
    said_in_session(
        ctx,
        [
            # found by the question's words: its whole text is what a client wraps
            "<system-reminder>a client's wrapper says how we deploy</system-reminder>",
            "we deploy with make release, then read its status: the health page",
        ],
    )
    notes = list(dict.fromkeys(synthetic_memories(LOCAL_ROWS)))
    ctx.vectors([])  # the vector table for the context's model
    with ctx.db.atomic():
        for note, vector in zip(notes, ctx.embedder.embed(notes), strict=True):
            insert_memory(ctx.db, Memory(content=note, scope="global"), vector.tobytes())
    # the vector indexes caught up with the writes, as the first recall after them does
    api_recall(ctx, RecallRequest(query=ASKED, all_scopes=True))
    ctx.close()
    probe = (
        "import io, json, re, sys\n"
        "from memctl.api.config import settings_from_flags\n"
        "from memctl.cli import entry\n"
        "from memctl.cli.resident import warm\n"
        "warm(settings_from_flags(None))\n"
        "loaded = set(sys.modules)\n"
        "compiled = []\n"
        "compile = re._compiler.compile  # what re.compile runs for a pattern not yet cached\n"
        "re._compiler.compile = lambda p, flags: compiled.append(p) or compile(p, flags)\n"
        "sys.argv = ['memctl', 'recall', '--all-scopes', 'how do we deploy?']\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        "entry.run_memctl(forward=False)\n"
        "answer, sys.stdout = sys.stdout.getvalue(), out\n"
        "print(answer.count('make release'), sorted(set(sys.modules) - loaded))\n"
        "print(json.dumps([p for p in compiled if 'deploy' not in str(p)]))\n"
    )
    done = python_c(
        probe,
        check=True,
        # message vectors on: their leg's module is loaded too
        env={"MEMCTL_EMBEDDER": "hash", "MEMCTL_RECALL_MESSAGE_VECTORS": "true"},
    )
    counts, compiled = done.stdout.strip().splitlines()
    found, _, new = counts.partition(" ")
    assert int(found) >= 1  # the recall ran, and answered
    assert new == "[]"
    assert json.loads(compiled) == []


@pytest.mark.parametrize("made", [(), ("resident",), ("resident", "resident/socket")])
def test_a_recall_with_no_resident_process_asks_it_nothing_and_loads_no_socket(
    home: Path, made: tuple[str, ...]
) -> None:
    """No resident process (no directory, or one holding no socket, as a server that exited
    leaves it; or a plain file where the socket was): the command runs in its own process,
    without loading ``_socket``."""
    for name in made:
        path = home / name
        if name.endswith("socket"):
            path.write_text("")
        else:
            path.mkdir(mode=0o700, parents=True)
    probe = (
        "import sys\n"
        "from memctl.integrations.resident import forward\n"
        "print(forward(['recall', 'how do we deploy?']), '_socket' in sys.modules)\n"
    )
    done = python_c(probe, check=True, env={"MEMCTL_RECALL_RESIDENT": "on"}, input="")
    assert done.stdout.split() == ["None", "False"]


def _serving(home: Path) -> list[int]:
    """The resident processes of ``home`` (started or loading)."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _serves(entry / "cmdline", home)
    ]


def test_a_cold_recall_with_explain_or_why_not_starts_one_for_the_next(
    home: Path, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They run in Typer, not the fast lane; a plain recall starts a resident process when
    none answered, and these now do too (unless recall.resident is off)."""
    ids = [remember(ctx, RememberRequest(fact)).memory.id for fact in FACTS]
    ctx.close()
    off = run_cli("recall", "--no-touch", "--explain", "deploy", env=OFF)
    assert off.returncode == 0, off.stderr
    assert _serving(home) == []  # the start is a Popen before the command returns
    for name, value in ON.items():
        monkeypatch.setenv(name, value)
    try:
        for args in (("--explain", "deploy"), ("--why-not", ids[1], "deploy")):
            done = run_cli("recall", "--no-touch", *args)
            assert done.returncode == 0, done.stderr
            pid = started(home)
            resident.tell(home, "stop")
            assert gone(pid)
    finally:
        stop_every_daemon(home)
