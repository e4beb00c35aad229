"""memctl ingest, runs, undo, maintain and forget --noise as a user runs them: real processes,
the detached worker, the raw bytes of the database files and the log; big inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import typer

from benchmarks.transcripts import claude_code_lines
from memctl.cli.entry import run_fast
from memctl.cli.fastlane import INGEST_OPTIONS, ingest_parser, split_command
from memctl.context import Context
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.known import INSERT_BATCH
from memctl.ingest.pipeline import run_session
from memctl.ingest.source import Input
from memctl.store.database import Database
from tests.conftest import python_c, run_cli
from tests.ingesting import FRESH2_SESSIONS, FRESH_SESSIONS, SESSION, TRANSCRIPTS, ingest_text

NO_LLM = {"MEMCTL_LLM": "none"}
SECRETS = (b"hunter2secret", b"ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C", b"salary", b"140k")


def ok(*args: str, **kwargs: object) -> str:
    done = run_cli(*args, env=NO_LLM, **kwargs)  # type: ignore[arg-type]
    assert done.returncode == 0, done.stderr
    return done.stdout


def one_error(code: int, *args: str, **kwargs: object) -> str:
    done = run_cli(*args, env=NO_LLM, **kwargs)  # type: ignore[arg-type]
    assert done.returncode == code, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memctl: error:"), done.stderr
    return lines[0]


def gone(pid: int) -> bool:
    """The process has exited (a zombie nobody reaped yet counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True


def wait_for(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_detached_worker_distils_and_no_secret_reaches_the_files(home: Path) -> None:
    home.mkdir(mode=0o700)
    watcher = Database.open(home / "memctl.db")  # held open, so the WAL file stays to be read
    try:
        transcript = TRANSCRIPTS / "claude-code.jsonl"
        report = json.loads(
            ok("ingest", "--transcript", str(transcript), "--client", "claude-code", "--json")
        )
        assert report["session_id"] == SESSION and report["messages_new"] == 9
        assert report["redactions"]["secrets"] == 2 and report["private_messages_dropped"] == 1
        pid = report["worker_pid"]
        assert pid and report["log"] == str(home / "logs" / "worker.log")
        job = report["job_id"]
        wait_for(lambda: watcher.value("SELECT state FROM jobs WHERE id = ?", (job,)) == "done")
        wait_for(lambda: gone(pid))
        contents = [
            r["content"] for r in watcher.rows("SELECT content FROM memories ORDER BY content")
        ]
        assert "Never push to prod on Fridays." in contents
        raw = {
            p.name: p.read_bytes() for p in [*home.glob("memctl.db*"), home / "logs" / "worker.log"]
        }
        assert {"memctl.db", "memctl.db-wal", "worker.log"} <= set(raw)
        for name, data in raw.items():
            for secret in SECRETS:
                assert secret not in data, (name, secret)
        log = raw["worker.log"].decode()
        assert f"job {job} session {SESSION}" in log and "jobs done, 0 failed" in log
    finally:
        watcher.close()


def test_a_session_that_stored_no_memory_has_nothing_to_undo(home: Path, tmp_path: Path) -> None:
    """A session of small talk is stored, its run changes no memory: `undo` of it (the
    viewer's Undo button, which it no longer offers) made an undo run of 0 changes."""
    said = [("user", "hi"), ("assistant", [{"type": "text", "text": "Hello! What now?"}])]
    transcript = tmp_path / "quiet.jsonl"
    transcript.write_text(
        "".join(
            json.dumps(
                {
                    "type": role,
                    "sessionId": "quiet",
                    "uuid": f"u{n}",
                    "timestamp": f"2026-12-01T10:00:0{n}.000Z",
                    "message": {"role": role, "content": content},
                }
            )
            + "\n"
            for n, (role, content) in enumerate(said)
        )
    )
    assert "no changes" in ok("ingest", "--transcript", str(transcript), "--wait")
    runs = json.loads(ok("runs", "--json"))
    assert [(r["kind"], r["counts"]) for r in runs] == [("ingest", {})]
    refused = one_error(2, "undo", runs[0]["id"][:8])
    assert refused.endswith(
        f"ingest {runs[0]['id'][:8]} cannot be undone: nothing is left to put back; "
        "`memctl undo RUN_ID` takes back an earlier run (`memctl runs`)"
    )
    assert json.loads(ok("runs", "--json")) == runs  # no undo run, the run not undone


def test_wait_runs_undo_and_errors(home: Path) -> None:
    out = ok("ingest", "--transcript", str(TRANSCRIPTS / "codex.jsonl"), "--wait")
    assert "session 0199a3f1-5c2e-7a41-9b3d-2f6e8c1d4a57 (codex)" in out and "run " in out
    runs = json.loads(ok("runs", "--json"))
    assert len(runs) == 1 and runs[0]["status"] == "done" and runs[0]["counts"]["create"] >= 2
    shown = ok("runs", runs[0]["id"][:8])
    assert "We decided to use SQLite" in shown and "create" in shown
    listed = json.loads(ok("list", "--json"))
    undone = json.loads(ok("undo", runs[0]["id"][:8], "--json"))
    assert undone["reverted"] == len(listed)
    assert json.loads(ok("list", "--json")) == []
    assert "already undone" in one_error(2, "undo", runs[0]["id"][:8])
    redone = json.loads(ok("undo", undone["undo_run_id"][:8], "--json"))  # a redo
    assert redone["kind"] == "undo" and redone["reverted"] == len(listed)
    back = [(m["id"], m["content"], m["state"]) for m in json.loads(ok("list", "--json"))]
    assert back == [(m["id"], m["content"], m["state"]) for m in listed]  # all put back
    assert "already undone" in one_error(2, "undo", undone["undo_run_id"][:8])
    assert json.loads(ok("undo", runs[0]["id"][:8], "--json"))["reverted"] == len(listed)
    assert json.loads(ok("list", "--json")) == []  # the ingest run undone once more
    assert "no run" in one_error(3, "undo", "abcdef12")
    ok("remember", "Deploys go out on Tuesdays.")  # an edit: a run of its own
    runs = json.loads(ok("runs", "--json"))
    assert {r["kind"] for r in runs} == {"ingest", "undo", "edit"}
    assert {r["door"] for r in runs if r["kind"] in ("edit", "undo")} == {"cli"}
    assert [r["kind"] for r in json.loads(ok("runs", "--kind", "ingest", "--json"))] == ["ingest"]
    assert "no sync runs" in ok("runs", "--kind", "sync")


def test_a_store_another_model_embedded_is_named_once_not_a_numpy_error(home: Path) -> None:
    ok("remember", "The billing service runs on PostgreSQL 16")  # hash vectors, 64-d
    transcript = str(TRANSCRIPTS / "codex.jsonl")
    done = run_cli("ingest", "--transcript", transcript, "--wait", real_model=True)
    assert done.returncode == 0  # the transcript is stored; only the distilling waits
    warnings = [line for line in done.stderr.splitlines() if "failed" in line]
    assert len(warnings) == 1 and "memctl reembed" in warnings[0], done.stderr
    assert "matmul" not in done.stderr
    shown = json.loads(ok("sessions", "list", "--all-scopes", "--json"))
    assert [s["message_count"] > 0 for s in shown] == [True]


def test_maintain_drains_what_the_worker_did_not(home: Path) -> None:
    ok(
        "-c",
        "ingest.spawn_worker=false",
        "ingest",
        "--transcript",
        str(TRANSCRIPTS / "generic.txt"),
    )
    assert "`memctl maintain` will process it" in ok(
        "-c",
        "ingest.spawn_worker=false",
        "ingest",
        "--session-id",
        "other",
        input="user: I prefer tea.\n",
    )
    status = json.loads(ok("status", "--json"))
    assert (status["sessions"], status["messages"], status["jobs"]) == (2, 5, {"queued": 2})
    first = json.loads(ok("maintain", "--only", "jobs", "--json"))["tasks"][0]
    assert first["counts"] == {"job": 2}
    assert json.loads(ok("maintain", "--only", "jobs", "--json"))["tasks"][0]["changes"] == []
    memory = json.loads(ok("list", "--json"))[0]["id"]
    assert "learned it as noise" in ok("forget", memory[:8], "--noise")


@pytest.mark.parametrize(
    ("args", "data", "code", "message"),
    [
        (("--transcript", "nowhere.jsonl"), None, 6, "no such transcript file"),
        ((), b"", 6, "empty"),
        ((), b"\x7fELF\x02\x01\x01\x00\x00", 6, "binary"),
        ((), b'{"type": "summary", "summary": "s", "leafUuid": "x"}\n', 6, "no messages"),
        (("--session-id", "a\tb"), b"user: hi\n", 2, "session id"),
    ],
)
def test_bad_input_is_one_clear_line(
    args: tuple[str, ...], data: bytes | None, code: int, message: str
) -> None:
    assert message in one_error(code, "ingest", *args, input=data)


def test_a_bad_option_value_is_refused_by_the_full_parser() -> None:
    done = run_cli("ingest", "--client", "vim", input="user: hi\n", env=NO_LLM)
    assert done.returncode == 2 and "claude-code" in done.stderr


def test_dry_run_prints_decisions_and_writes_nothing(home: Path) -> None:
    out = ok("ingest", "--dry-run", "--transcript", str(TRANSCRIPTS / "generic.txt"))
    assert "dry run: 4 messages" in out and "create" in out and "我喜欢喝星巴克拿铁" in out
    db = Database.open(home / "memctl.db")
    assert (
        db.value("SELECT count(*) FROM messages") == 0 == db.value("SELECT count(*) FROM memories")
    )
    db.close()


def test_the_fast_parser_and_the_typer_command_take_the_same_options() -> None:
    from memctl.cli.main import app

    command = typer.main.get_command(app).commands["ingest"]  # type: ignore[attr-defined]
    options = [p for p in command.params if p.param_type_name == "option"]
    typer_flags = {name for p in options for name in p.opts if name != "--help"}
    fast_flags = {f for action in ingest_parser()._actions for f in action.option_strings}
    every = {f for o in INGEST_OPTIONS.values() for f in (*o.flags, *o.aliases)}
    assert typer_flags == fast_flags == every
    # and both take the transcript as a FILE argument too
    typer_arguments = [p.name for p in command.params if p.param_type_name == "argument"]
    fast_arguments = [a.dest for a in ingest_parser()._actions if not a.option_strings]
    assert typer_arguments == fast_arguments == ["file"]
    hidden = {name for p in command.params if getattr(p, "hidden", False) for name in p.opts}
    assert hidden == {a for o in INGEST_OPTIONS.values() for a in o.aliases} == {"--tags"}
    args = ingest_parser().parse_args(
        ["--client", "codex", "-t", "a", "--tags", "b", "-s", "global"]
    )
    assert (args.client, args.tags, args.scope, args.mode) == ("codex", ["a", "b"], "global", None)


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["ingest", "--help"],
        ["ingest", "--wait"],
        ["ingest", "--dry-run"],
        ["-c", "no-equals-sign", "ingest"],
        ["--verbose", "ingest"],
        ["ingest", "--client", "vim"],
        ["ingest", "a-file", "a-stray-argument"],
    ],
)
def test_the_fast_lane_takes_only_plain_ingests(argv: list[str]) -> None:
    assert run_fast(argv) is None


def test_global_options_before_the_command() -> None:
    argv = ["--home=/x", "-c", "a=b", "--config=c=d", "--home", "/y", "ingest", "-t", "x"]
    assert split_command(argv) == ({"home": "/y", "config": ["a=b", "c=d"]}, "ingest", ["-t", "x"])


# Capture writes INSERT_BATCH messages at a time and the slow path reads `select.messages`
# (20) a batch: a session past one insert batch crosses both kinds of boundary (2,000
# messages, the old size, showed nothing more for four times the CPU).
BIG_SESSION = INSERT_BATCH + 100


@pytest.mark.slow  # hundreds of messages through the slow path
def test_a_long_session_is_stored_and_the_slow_path_reads_it_all_in_batches(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(claude_code_lines(BIG_SESSION)) + "\n")
    ctx = make_ctx()
    report = capture(ctx, Input(path.open("rb"), str(path)), IngestOptions()).report
    assert report.messages_new == BIG_SESSION
    run = run_session(ctx, "big-session", report.job_id)
    assert run.record.messages == BIG_SESSION and run.record.status == "done"
    batches = -(-BIG_SESSION // ctx.settings.select_messages)
    assert sum(entry.stage == "select" for entry in run.trace) == batches
    assert ctx.db.value("SELECT extracted_through FROM sessions") == BIG_SESSION


def test_a_50_mb_transcript_is_streamed_not_loaded(tmp_path: Path, home: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("w") as out:
        for line in claude_code_lines(1000, filler=100_000):
            out.write(line + "\n")
    assert path.stat().st_size > 50_000_000
    # VmHWM, not ru_maxrss: Linux carries the forking parent's (pytest's) size into the
    # child's ru_maxrss across exec, while VmHWM belongs to the new process alone.
    code = (
        "from memctl.config import load_settings\n"
        "from memctl.context import Context\n"
        "from memctl.ingest.capture import IngestOptions, capture\n"
        "from memctl.ingest.source import Input\n"
        f"stream = Input(open({str(path)!r}, 'rb'), 'huge')\n"
        "with Context(load_settings()) as ctx:\n"
        "    report = capture(ctx, stream, IngestOptions()).report\n"
        "status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        "print(report.messages_new, int(status) // 1024)\n"
    )
    done = python_c(code, env=NO_LLM, timeout=120)
    assert done.returncode == 0, done.stderr
    messages, peak_mib = map(int, done.stdout.split())
    assert messages == 1500  # 500 user, 500 assistant, 500 tool results
    assert peak_mib < 64, f"peak RSS {peak_mib} MiB for a {path.stat().st_size >> 20} MiB file"


def test_two_workers_at_once_run_each_job_once(
    make_ctx: Callable[..., Context], home: Path
) -> None:
    ctx = make_ctx()
    for n in range(6):
        ingest_text(ctx, f"user: I prefer tool number {n} for task {n}.\n", session_id=f"s{n}")
    ctx.close()
    command = [sys.executable, "-m", "memctl.maintain.worker"]
    env = {**os.environ, **NO_LLM}
    workers = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE) for _ in range(2)]
    logs = [worker.communicate(timeout=120)[0].decode() for worker in workers]
    assert all(worker.returncode == 0 for worker in workers), logs
    db = Database.open(home / "memctl.db")
    try:
        rows = db.rows("SELECT state, run_id, attempts FROM jobs")
        assert [(r["state"], r["attempts"]) for r in rows] == [("done", 1)] * 6
        assert len({r["run_id"] for r in rows}) == 6 == db.value("SELECT count(*) FROM runs")
        assert db.value("SELECT count(*) FROM memories") == 6
    finally:
        db.close()
    assert sum(line.count(" jobs done") for line in logs) == 2


def test_the_transcript_is_given_as_a_file_argument_or_with_transcript_not_both(
    tmp_path: Path,
) -> None:
    """`memctl ingest FILE`, as a person types it, stores the session as --transcript does,
    on the fast lane and through Typer (--wait); both at once is one clear error; a scope
    given again with nothing new is said to change nothing."""
    fixture_file = str(TRANSCRIPTS / "claude-code.jsonl")
    stored = json.loads(ok("ingest", fixture_file, "--mode", "raw", "--json"))
    assert stored["session_id"] == SESSION and stored["messages_new"] == 9
    again = json.loads(ok("ingest", fixture_file, "--wait", "--json"))
    assert again["session_id"] == SESSION and again["messages_new"] == 0  # nothing new
    # -s on a stored session with nothing new files nothing elsewhere, and says so
    moved = ok("ingest", fixture_file, "-s", "global")
    assert f"the session stays filed under {stored['scope']}" in moved
    error = one_error(2, "ingest", fixture_file, "--transcript", fixture_file)
    assert "as FILE or with --transcript, not both" in error
    assert "not both" in one_error(
        2, "ingest", fixture_file, "--transcript", fixture_file, "--wait"
    )


ID_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
ID_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"


@pytest.mark.parametrize(
    ("flag", "value", "kind"),
    [
        ("--session-id", ID_TOKEN, "github-token"),
        ("--agent-id", ID_KEY, "openai-key"),
        ("--scope", ID_TOKEN, "github-token"),  # taken as typed: a scope no project has
    ],
)
def test_an_id_holding_a_secret_is_refused_and_nothing_stored(
    home: Path, flag: str, value: str, kind: str
) -> None:
    line = one_error(2, "ingest", "--mode", "raw", flag, value, input="user: I prefer tea.\n")
    assert kind in line and value not in line
    assert json.loads(ok("status", "--json"))["sessions"] == 0
    assert all(value.encode() not in p.read_bytes() for p in home.rglob("*") if p.is_file())


def test_a_scope_holding_private_text_is_refused_and_nothing_stored(home: Path) -> None:
    line = one_error(2, "remember", "we ship on Fridays", "-s", "acme/<private>falcon</private>")
    assert "private text" in line and "falcon" not in line
    assert all(b"falcon" not in p.read_bytes() for p in home.rglob("*") if p.is_file())


def test_uuid_and_hex_ids_are_stored_as_typed() -> None:
    uuid, hex_id = "b536a1c3-5b57-45f7-b3c1-40ae9a03f9cd", "2d7116" * 10 + "4881"
    raw = ("ingest", "--mode", "raw")
    ok(*raw, "--session-id", uuid, "--agent-id", hex_id, input="user: tea\n")
    ok(*raw, "--session-id", hex_id, "--agent-id", "my-agent", input="user: hi\n")
    stored = {s["id"] for s in json.loads(ok("sessions", "list", "--json"))}
    assert stored == {uuid, hex_id}


def test_every_fresh_real_session_is_read_whole_by_memctl_ingest() -> None:
    """The fresh splits' real sessions (benchmarks/sessions/fresh and fresh2: Claude Code
    1.x and 2.x, Gemini CLI, Amp, Copilot Chat) through `memctl ingest` as a user runs it,
    their client guessed: each is stored with no malformed record and no record of an
    unknown kind, its turns kept."""
    for path in sorted([*FRESH_SESSIONS.glob("*.json*"), *FRESH2_SESSIONS.glob("*.json*")]):
        if path.name in ("manifest.json", "questions.json"):
            continue
        report = json.loads(ok("ingest", str(path), "--mode", "raw", "--json", "-s", "fresh"))
        assert report["malformed"] == 0 and report["problems"] == [], (path.name, report)
        kept = report["lines"]
        assert kept["kept user"] > 0 and kept["kept assistant"] > 0, (path.name, kept)
