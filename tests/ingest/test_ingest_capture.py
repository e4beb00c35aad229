"""The fast path: messages stored verbatim (after privacy), deduplicated, and a job queued."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.api.ingest import IngestRequest, ingest
from memctl.context import Context
from memctl.errors import InputError, UsageError
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.pending import capture_in_chunks
from memctl.ingest.pipeline import run_session
from memctl.memories.privacy import nothing_left, scrub
from memctl.model import Role
from memctl.store import jobs
from memctl.store.sessions import get_session, latest_messages
from tests.ingesting import SESSION, fixture, ingest_text, source


def stored(ctx: Context, session_id: str) -> list[tuple[int, str, str]]:
    return [(m.seq, str(m.role), m.content) for m in latest_messages(ctx.db, session_id, 0, 10_000)]


def test_claude_code_transcript_is_stored_scrubbed_with_a_job(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    report = capture(ctx, fixture("claude-code.jsonl"), IngestOptions(client="claude-code")).report
    assert (report.session_id, report.messages_read, report.messages_new) == (SESSION, 10, 9)
    assert report.private_messages_dropped == 1 and report.malformed == 1
    assert report.redactions.secrets == {"connection-string": 1, "github-token": 1}
    assert report.redactions.context_blocks == 1
    rows = stored(ctx, SESSION)
    assert [seq for seq, _, _ in rows] == list(range(1, 10))  # the sub-agent line included
    assert rows[0][2].startswith("Hi! My name is Alice")  # memctl-context block removed
    text = "\n".join(content for _, _, content in rows)
    for gone in ("hunter2secret", "ghp_Zx8", "salary", "Alice likes terse answers"):
        assert gone not in text
    assert "postgres://deploy:[REDACTED:connection-string]@db.internal" in text
    session = get_session(ctx.db, SESSION)
    assert session is not None and session.title == "Deploy pipeline and editor setup"
    assert session.client == "claude-code" and session.message_count == 9
    job = jobs.get_job(ctx.db, report.job_id)
    assert job is not None and (job.state, job.session_id) == ("queued", SESSION)


def test_the_same_transcript_again_adds_nothing_and_a_grown_one_only_its_tail(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    first = ingest_text(ctx, "user: one\nassistant: two\nuser: three\n").report
    again = ingest_text(ctx, "user: one\nassistant: two\nuser: three\n").report
    assert (first.messages_new, again.messages_new, again.job_id) == (3, 0, None)
    grown = ingest_text(ctx, "user: one\nassistant: two\nuser: three\nassistant: four\n").report
    assert grown.messages_new == 1 and grown.messages_total == 4
    assert [c for _, _, c in stored(ctx, "s1")] == ["one", "two", "three", "four"]
    # a rewritten transcript: what is new is added, what is still there is not again
    ingest_text(ctx, "user: one\nuser: inserted\nassistant: two\nuser: three\n")
    assert [c for _, _, c in stored(ctx, "s1")] == ["one", "two", "three", "four", "inserted"]


def test_one_queued_job_per_session_and_raw_mode_queues_none(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    a = ingest_text(ctx, "user: alpha\n").report
    b = ingest_text(ctx, "user: alpha\nuser: beta\n").report
    assert a.job_id == b.job_id
    raw = ingest_text(ctx, "user: gamma\n", session_id="raw", mode="raw").report
    assert raw.messages_new == 1 and raw.job_id is None
    assert jobs.job_counts(ctx.db) == {"queued": 1}


def test_session_ids_come_from_the_flag_the_transcript_or_the_content(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = make_ctx()
    flagged = capture(ctx, fixture("codex.jsonl"), IngestOptions(session_id="mine")).report
    assert flagged.session_id == "mine" and flagged.client == "codex"
    own = capture(ctx, fixture("codex.jsonl"), IngestOptions()).report
    assert own.session_id == "0199a3f1-5c2e-7a41-9b3d-2f6e8c1d4a57"
    piped = [capture(ctx, source("user: same start\n"), IngestOptions()).report for _ in range(2)]
    assert piped[0].session_id == piped[1].session_id and piped[1].messages_new == 0
    with pytest.raises(UsageError, match="session id"):
        capture(ctx, source("user: x\n"), IngestOptions(session_id="bad\nid"))


def test_scope_agent_and_tags_are_kept_on_the_session(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    ingest_text(ctx, "user: hi\n", agent_id="claude", scope="global", tags=("a,b", "c"))
    session = get_session(ctx.db, "s1")
    assert session is not None
    assert (session.scope, session.agent_id, session.tags) == ("global", "claude", ["a", "b", "c"])


def test_a_transcript_without_messages_is_an_error_and_stores_nothing(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    with pytest.raises(InputError, match="no messages"):
        capture(
            ctx, source('{"type": "summary", "summary": "x", "leafUuid": "y"}\n'), IngestOptions()
        )
    with pytest.raises(InputError, match="no messages"):
        ingest_text(ctx, "user: <private>all of it</private>\n")
    assert ctx.db.value("SELECT count(*) FROM sessions") == 0


def test_a_document_is_no_conversation_unless_its_client_is_given(
    make_ctx: Callable[..., Context],
) -> None:
    """A Markdown note given to ingest (not import) is refused, naming import; stored as
    one message only when the person says it is a generic transcript."""
    ctx = make_ctx()
    note = "# Payments on-call\n\nMaria carries the pager.\n\n## Runbook\n\nRestart it.\n"
    with pytest.raises(UsageError, match=r"^NOTES.md is not a conversation .*`memctl import"):
        capture(ctx, source(note, "NOTES.md"), IngestOptions())
    assert ctx.db.value("SELECT count(*) FROM sessions") == 0
    given = capture(ctx, source(note, "NOTES.md"), IngestOptions(client="generic"))
    assert given.report.messages_new == 1
    talk = capture(ctx, source("A preamble.\nuser: and a turn\n"), IngestOptions())
    assert talk.report.messages_new == 2  # someone speaks: a transcript, its preamble kept


def test_a_dry_run_writes_nothing(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    captured = capture(ctx, fixture("generic.txt"), IngestOptions(), dry_run=True)
    assert captured.report.messages_new == 4 and [m.seq for m in captured.recent] == [1, 2, 3, 4]
    assert ctx.db.value("SELECT count(*) FROM messages") == 0
    assert ctx.db.value("SELECT count(*) FROM jobs") == 0


def test_messages_are_found_by_full_text(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    capture(ctx, fixture("opencode.json"), IngestOptions())
    rows = ctx.db.rows(
        "SELECT m.role FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid "
        "WHERE messages_fts MATCH 'redis'"
    )
    assert {r["role"] for r in rows} == {str(Role.USER), str(Role.ASSISTANT)}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
        ("ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C", "github-token"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github-token"),
        ("sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56", "openai-key"),
        ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345", "anthropic-key"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "jwt"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n"
            "-----END OPENSSH PRIVATE KEY-----",
            "private-key",
        ),
        ("password=hunter2", "password"),
        ("DB_PASSWORD: 'correct horse battery'", "password"),
        ("my password is swordfish", "password"),
        ("mysql://root:toor-secret@10.0.0.5/app", "connection-string"),
        ("Authorization: Bearer abcdefghijklmnop1234567890", "bearer-token"),
        ("xoxb-1234567890-abcdefghij", "slack-token"),
    ],
)
def test_the_secret_scanner_redacts_each_common_format(text: str, kind: str) -> None:
    cleaned, found = scrub(f"before {text} after")
    assert found.secrets == {kind: 1}
    assert f"[REDACTED:{kind}]" in cleaned and cleaned.startswith("before")
    secret = text.split("=")[-1].split(":")[-1].split()[-1].strip("'")
    assert secret not in cleaned
    assert scrub(cleaned) == (cleaned, type(found)())  # idempotent, nothing counted twice


def test_private_blocks_and_ordinary_settings() -> None:
    cleaned, found = scrub("a <PRIVATE>x\ny</private> b <private>unclosed tail")
    assert cleaned == "a [REDACTED] b [REDACTED]" and found.private_blocks == 2
    assert nothing_left(scrub("<private>all</private> ")[0])
    assert scrub("max_tokens=4096 and token_budget: 20000")[1].secret_count == 0


def test_the_fast_path_imports_no_heavy_module(tmp_path: Path) -> None:
    transcript = tmp_path / "t.txt"
    transcript.write_text("user: I prefer tabs.\n")
    argv = ["-c", "ingest.spawn_worker=false", "ingest", "--transcript", str(transcript)]
    heavy = {"numpy", "ollama", "httpx", "typer", "rich", "sqlite_vec", "tokenizers", "yaml"}
    code = (
        "import sys\n"
        "from memctl.cli.entry import run_fast\n"
        f"code = run_fast({argv!r})\n"
        f"print('LOADED', code, sorted({heavy!r} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "LOADED 0 []"


def test_claims_skip_busy_sessions_and_retry_abandoned_jobs(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    first = jobs.enqueue(ctx.db, "ingest", "a", {})
    job = jobs.claim(ctx.db, "w1", "2000-01-01T00:00:00.000Z", 3)
    assert job is not None and (job.id, job.state, job.attempts) == (first, "running", 1)
    second = jobs.enqueue(ctx.db, "ingest", "a", {})  # the first is running: a new job
    other = jobs.enqueue(ctx.db, "ingest", "b", {})
    assert second != first
    claimed = jobs.claim(ctx.db, "w2", "2000-01-01T00:00:00.000Z", 3)
    assert claimed is not None and claimed.id == other  # session a is busy
    assert jobs.claim(ctx.db, "w2", "2000-01-01T00:00:00.000Z", 3) is None
    # w1 died: after the stale limit its job is taken again, until the attempts run out
    for attempt in (2, 3):
        again = jobs.claim(ctx.db, "w3", "2999-01-01T00:00:00.000Z", 3)
        assert again is not None and (again.id, again.attempts) == (first, attempt)
    # out of attempts: failed, and session a's next job may run
    after = jobs.claim(ctx.db, "w3", "2999-01-01T00:00:00.000Z", 3)
    assert after is not None and after.id == second
    failed = jobs.get_job(ctx.db, first)
    assert failed is not None and failed.state == "failed" and "abandoned" in (failed.error or "")


def _lines(texts: list[str]) -> str:
    return "".join(json.dumps({"role": "user", "content": t}) + "\n" for t in texts)


def _contents(ctx: Context, session_id: str) -> list[str]:
    return [m.content for m in latest_messages(ctx.db, session_id, 0, 1000)]


def test_a_file_is_read_on_from_its_last_capture(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = make_ctx()
    path = tmp_path / "t.jsonl"
    first = [f"message number {n} about the deploy" for n in range(5)]
    path.write_text(_lines(first))
    request = IngestRequest(transcript=str(path), session_id="grow", mode="raw")
    assert ingest(ctx, request).report.messages_new == 5
    again = ingest(ctx, request).report
    assert (again.messages_read, again.messages_new, again.messages_total) == (0, 0, 5)
    # What grew is read alone; a reply said before ("yes") is still a new message.
    with path.open("a") as out:
        out.write(_lines(["yes", "message number 0 about the deploy", "a half"])[:-7])
    grown = ingest(ctx, request).report
    assert (grown.messages_new, grown.malformed) == (2, 1)  # the half line: read again
    with path.open("a") as out:
        out.write('half"}\n')
    assert ingest(ctx, request).report.messages_new == 1
    assert _contents(ctx, "grow") == [*first, "yes", first[0], "a half"]
    # Rewritten from the start: read whole again, and only what is new is stored.
    path.write_text(_lines(["a new first line", *first]))
    rewritten = ingest(ctx, request).report
    assert rewritten.messages_read == 6 and rewritten.messages_new == 1


def test_bad_input_is_stored_counted_and_one_line_in_the_runs_notes(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()

    def line(kind: str, content: object, n: int) -> str:
        message = {"role": kind, "content": content}
        at = f"2025-06-01T10:00:0{n}Z"
        return json.dumps({"type": kind, "sessionId": "bad", "timestamp": at, "message": message})

    task = [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "review it"}}]
    report = "## Review\n" + "The parser is fine. " * 2500  # 50,000 characters
    result = [{"type": "tool_result", "tool_use_id": "t1", "content": report}]
    lines = [
        line("user", "Review the parser, please.", 1),
        "{not json",
        line("assistant", task, 2),
        line("user", result, 3),
    ]
    capture(ctx, source("\n".join(lines) + "\n"), IngestOptions(client="claude-code"))
    lines.append(line("assistant", "Done: the parser is fine.", 4))
    grown = source("\n".join(lines) + "\n\x00", "crashed-append.jsonl")  # a NUL byte
    captured = capture(ctx, grown, IngestOptions(client="claude-code"))
    assert captured.report.job_id is not None  # the same queued job covers both captures
    stored_ = [content for _, _, content in stored(ctx, "bad")]
    assert len(stored_) == 4 and stored_[2].endswith("[report cut at 32000 characters]")
    run = run_session(ctx, "bad", captured.report.job_id)
    assert run.record.status == "done"
    cut = "1 sub-agent reports cut to 32000 characters"
    assert [n for n in run.record.notes if n.startswith("input:")] == [
        f"input: 1 malformed records passed over (line 2: not JSON), {cut}",
        f"input: 1 malformed records passed over (line 2: not JSON), 1 NUL bytes left out, {cut}",
    ]


def test_a_big_file_is_captured_a_chunk_at_a_time_as_it_would_be_whole(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    """Chunks of about 4 KiB, each its own transaction, store what one capture stores; a
    chunk of records that hold no message is passed over; a cut last line waits."""
    texts = [f"message {n}: the build copies artefact {n} to the mirror" for n in range(300)]
    padding = json.dumps({"type": "progress", "note": "x" * 9000}) + "\n"
    path = tmp_path / "t.jsonl"
    path.write_text(_lines(texts[:150]) + 3 * padding + _lines(texts[150:]))  # one chunk alone
    ctx = make_ctx()
    done = capture_in_chunks(ctx, str(path), IngestOptions(session_id="big", mode="raw"), 4096)
    assert done.chunks > 5 and done.messages_new == 300
    assert _contents(ctx, "big") == texts
    with path.open("a") as out:
        out.write(_lines(["one more", "and a half"])[:-5])
    grown = capture_in_chunks(ctx, str(path), IngestOptions(session_id="big", mode="raw"), 4096)
    assert (grown.chunks, grown.messages_new) == (1, 1)  # the half line: read again
    with path.open("a") as out:
        out.write('lf"}\n')
    last = capture_in_chunks(ctx, str(path), IngestOptions(session_id="big", mode="raw"), 4096)
    assert last.messages_new == 1
    assert _contents(ctx, "big") == [*texts, "one more", "and a half"]
    whole = make_ctx()
    ingest(whole, IngestRequest(transcript=str(path), session_id="big", mode="raw"))
    assert _contents(whole, "big") == _contents(ctx, "big")
