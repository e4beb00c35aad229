"""The resident recall process answers nothing recall passes by or an identity file no
longer holds: after `forget` (an archive) and an edit of either identity file, the same
long-lived process's recall, context block and hooks show none of the old text, nor do
its log and socket answers, and it holds no descriptor of a database file. A command
that takes text out for good (`redact`, `sessions forget`, `delete --permanent`, `purge
--permanent`, a message's `forget`, the viewer's session forget) ends it, and has waited
for it to exit when it returns: neither the log it held open nor the requests it read
keep the text. Real `memctl` processes, a real Unix socket, a real SQLite file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memctl.ingest.run import alive
from memctl.integrations import resident
from memctl.ui.views import forget_session
from tests.conftest import run_cli
from tests.integrations.test_resident import OFF, ON, started, stop_every_daemon

# Words nobody else says, one for each way of taking a text away
REDACTED = "quokka7marmalade"
FORGOTTEN = "zebra4finchlantern"
DELETED = "heron9copperkettle"
SAID = "otter2velvetharbor"
MINE = "lynx5amberorchard"  # in the home's identity file
OURS = "ibis3pewtermeadow"  # in the project's identity file
GONE = (FORGOTTEN, DELETED, SAID, MINE, OURS)
HIDDEN = (FORGOTTEN, MINE, OURS)  # recall passes them by: the store keeps the archived one
ASKED = "backup phrase locker code ferry"  # none of them: not echoed


def _ok(*args: str, cwd: Path, input: str | None = None) -> str:
    done = run_cli(*args, cwd=cwd, input=input)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _answers(project: Path) -> str:
    """What the resident process says to a recall of every word, its context block, the
    session-start and prompt hooks; and `memctl context` in its own process."""
    asked = ASKED
    prompt = json.dumps({"session_id": "s9", "prompt": asked, "cwd": str(project)})
    start = json.dumps({"session_id": "s9", "source": "startup", "cwd": str(project)})
    return "".join(
        [
            _ok("recall", "--all-scopes", "--no-touch", "--json", asked, cwd=project),
            _ok("recall", "--all-scopes", "--no-touch", "-f", "context", asked, cwd=project),
            _ok("hook", "claude-code", "SessionStart", input=start, cwd=project),
            _ok("hook", "claude-code", "UserPromptSubmit", input=prompt, cwd=project),
            _ok("context", cwd=project),
        ]
    )


def _served(home: Path) -> tuple[int, int]:
    answer = resident.tell(home, "status") or {}
    return int(answer.get("pid", -1)), int(answer.get("served", -1))


def _stored(text: str, project: Path, *tags: str) -> str:
    return str(json.loads(_ok("remember", text, *tags, "--json", cwd=project))["id"])


def test_the_resident_process_shows_nothing_forgotten_since_it_started(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / ".memctl").mkdir()
    for name, value in {**ON, "MEMCTL_RECALL_RESIDENT_IDLE": "300"}.items():
        monkeypatch.setenv(name, value)
    forgotten = _stored(f"the backup phrase is {FORGOTTEN}", project)
    deleted = _stored(f"the locker code is {DELETED}", project)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"role": "user", "content": f"the ferry is {SAID}"}) + "\n")
    _ok("ingest", "--transcript", str(transcript), "--session-id", "ferry", cwd=project)
    (home / "identity.md").write_text(f"I am Dana; my badge is {MINE}.\n")
    (project / ".memctl" / "identity.md").write_text(f"Payments service, run by {OURS}.\n")
    (home / "logs").mkdir(exist_ok=True)
    log = home / "logs" / resident.LOG  # a line of its own naming the session's transcript
    log.write_text(f"2026-12-02T00:00:00 resident: an error quoting {transcript}\n")
    _ok("daemon", "start", cwd=project)
    try:
        pid = started(home)
        before = _answers(project)
        assert [w for w in GONE if w not in before] == []  # each was shown
        pid_then, served_then = _served(home)

        _ok("forget", forgotten, cwd=project)  # archived: the text stays in the store
        (home / "identity.md").write_text("I am Dana.\n")
        (project / ".memctl" / "identity.md").write_text("Payments service.\n")

        after = _answers(project)
        now, served = _served(home)
        assert (pid_then, now) == (pid, pid)  # the same process answered
        assert served > served_then
        assert [w for w in HIDDEN if w in after] == []
        assert "I am Dana" in after and "Payments service" in after
        status = json.dumps(resident.tell(home, "status"))
        assert [w for w in GONE if w in log.read_text() + status] == []
        assert [w for w in GONE if _kept(pid, w)] == []  # only its children read them
        held = [os.readlink(f) for f in Path(f"/proc/{pid}/fd").iterdir()]
        assert [f for f in held if str(home) in f and "resident" not in f] == []

        _ok("delete", deleted, "--permanent", cwd=project)  # each ends it
        _ok("sessions", "forget", "ferry", "--yes", cwd=project)
        assert not alive(pid)
        for name, value in OFF.items():  # each in its own process: none started meanwhile
            monkeypatch.setenv(name, value)
        assert [w for w in GONE if w in _answers(project)] == []
        assert str(transcript) not in log.read_text()
    finally:
        stop_every_daemon(home)


def _kept(pid: int, value: str) -> list[str]:
    """Where the process ``pid`` still holds ``value``: a file it has open (one replaced
    since, reached through /proc), its memory (where this user may read it); [] when the
    process is gone."""
    raw, found = value.encode(), []
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if raw in fd.read_bytes():
                    found.append(os.readlink(fd))
            except OSError:  # a socket, or it went meanwhile
                continue
        maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        with open(f"/proc/{pid}/mem", "rb", 0) as memory:
            for line in maps:
                span, mode = line.split()[:2]
                start, end = (int(at, 16) for at in span.split("-"))
                try:
                    memory.seek(start)
                    if "r" in mode and raw in memory.read(end - start):
                        found.append(f"memory {span}")
                except (OSError, OverflowError):  # one the kernel will not read ([vsyscall])
                    continue
    except (FileNotFoundError, ProcessLookupError):  # gone: it holds nothing
        return found
    except PermissionError:  # memory another process may not read here: its files were
        pass
    return found


def test_a_redacted_value_leaves_the_resident_process_s_log_and_memory(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memctl redact` rewrote logs/resident.log by replacing it, while the resident process
    kept writing to the old file (its stdout and stderr), the value in it and readable
    through /proc until it exited (20 minutes idle); and its memory kept the recall that
    found the value. A redact now ends it; the next recall is served by a new one."""
    for name, value in {**ON, "MEMCTL_RECALL_RESIDENT_IDLE": "300"}.items():
        monkeypatch.setenv(name, value)
    _stored(f"the vault combination is {REDACTED}", tmp_path)
    (home / "logs").mkdir(exist_ok=True)
    log = home / "logs" / resident.LOG
    log.write_text(f"2026-12-02T00:00:00 resident: an error quoting {REDACTED}\n")
    _ok("daemon", "start", cwd=tmp_path)
    try:
        pid = started(home)
        assert REDACTED in _ok("recall", "--no-touch", REDACTED, cwd=tmp_path)
        assert _served(home) == (pid, 1)
        assert _kept(pid, REDACTED) != []  # the test sees what it looks for
        _ok("redact", REDACTED, cwd=tmp_path)
        assert not alive(pid)  # gone when it returned
        assert _kept(pid, REDACTED) == []
        assert REDACTED not in log.read_text()
        again = _ok("recall", "--no-touch", "vault combination", cwd=tmp_path)
        assert "[REDACTED]" in again and REDACTED not in again
    finally:
        stop_every_daemon(home)


# Each command that takes text out for good, run on a resident process that showed that
# text: (what it is asked, the command; None: the viewer's session forget, in this process)
TAKEN = {
    "sessions forget": ("sessions", "forget", "ferry", "--yes"),
    "forget SESSION#N": ("forget", "ferry#1"),
    "delete --permanent SESSION#N": ("delete", "--permanent", "ferry#1"),
    "delete --permanent": ("delete", "--permanent", "{memory}"),
    "purge --permanent": ("purge", "--permanent", "--tag", "vault", "--yes"),
    "the viewer's session forget": None,
}


@pytest.mark.parametrize("command", list(TAKEN))
def test_a_forget_ends_the_resident_process_that_showed_the_text_before_it_returns(
    command: str, home: Path, tmp_path: Path, make_ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resident process kept what it read (the recall that showed the text, and asked
    for it) in its memory: a forget that takes text out ends it, and has waited for it to
    exit when it returns (it answered no more, yet ran a second and more after)."""
    for name, value in {**ON, "MEMCTL_RECALL_RESIDENT_IDLE": "300"}.items():
        monkeypatch.setenv(name, value)
    memory = _stored(f"the vault combination is {FORGOTTEN}", tmp_path, "--tag", "vault")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"role": "user", "content": f"the ferry is {SAID}"}) + "\n")
    _ok("ingest", "--transcript", str(transcript), "--session-id", "ferry", cwd=tmp_path)
    word = SAID if "SESSION" in command or "session" in command else FORGOTTEN
    _ok("daemon", "start", cwd=tmp_path)
    try:
        pid = started(home)
        assert word in _ok("recall", "--no-touch", "--all-scopes", word, cwd=tmp_path)
        assert _served(home) == (pid, 1)  # it showed the text
        args = TAKEN[command]
        if args is None:
            forget_session(make_ctx(), {"id": "ferry"})
        else:
            _ok(*(arg.format(memory=memory) for arg in args), cwd=tmp_path)
        assert not alive(pid)
        again = run_cli("recall", "--no-touch", "--all-scopes", word, cwd=tmp_path, env=OFF)
        assert again.returncode == 0 and word not in again.stdout  # (and starts no other)
    finally:
        stop_every_daemon(home)


def test_a_forget_that_takes_no_text_leaves_the_resident_process_running(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive (`forget ID`: the text stays, recall passes it by) and a forget of a
    session forgotten already take no text out: the process serves on."""
    for name, value in {**ON, "MEMCTL_RECALL_RESIDENT_IDLE": "300"}.items():
        monkeypatch.setenv(name, value)
    memory = _stored(f"the vault combination is {FORGOTTEN}", tmp_path)
    lines = [{"role": "user", "content": f"the ferry is {SAID}"}, {"role": "user", "content": "ok"}]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for session in ("ferry", "dock"):
        _ok("ingest", "--transcript", str(transcript), "--session-id", session, cwd=tmp_path)
    _ok("sessions", "forget", "ferry", "--yes", cwd=tmp_path)
    _ok("forget", "dock#1", cwd=tmp_path)
    _ok("daemon", "start", cwd=tmp_path)
    try:
        pid = started(home)
        _ok("forget", memory, cwd=tmp_path)
        _ok("sessions", "forget", "ferry", "--yes", cwd=tmp_path)
        _ok("forget", "dock#1", cwd=tmp_path)
        assert _served(home) == (pid, 0) and alive(pid)
    finally:
        stop_every_daemon(home)
