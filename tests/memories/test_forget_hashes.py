"""A forgotten or redacted text leaves no plain SHA-256 of itself: a short secret's hash is
found by trying every value (a PIN, a dictionary password in the text around the
[REDACTED] mark). Real SQLite files; every byte of the home searched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from memctl.api import ingest as ingest_api
from memctl.api import memory as memory_api
from memctl.api import sessions as sessions_api
from memctl.api.ingest import ImportRequest, IngestRequest
from memctl.api.memory import RememberRequest, UpdateRequest
from memctl.config import load_settings
from memctl.context import Context
from memctl.embed.hashed import HashEmbedder
from memctl.imports.report import FileReport
from memctl.model import content_hash, path_key
from tests.conftest import store_at_version
from tests.ingesting import claude_record
from tests.memories.test_forget_everywhere import _files_holding

PASSWORD = "hunter2024"  # one a dictionary holds: the scanner leaves it (no label)
SAID = f"the lab wifi works with {PASSWORD} for the night shift"
ANSWER = "noted, I will keep that in mind for the night shift"
LATER = "also the staging deploy uses make ship from the tools folder"


def _message_hash(role: str, text: str) -> str:
    return content_hash(f"{role}\n{text}")


def _ingest(ctx: Context, transcript: Path) -> int:
    """Ingest (store only) the whole transcript again; how many messages were new."""
    done = ingest_api.ingest(ctx, IngestRequest(str(transcript), session_id="s1", mode="raw"))
    return done.report.messages_new


def _session(tmp_path: Path) -> Path:
    transcript = tmp_path / "night.txt"
    transcript.write_text(f"user: {SAID}\nassistant: {ANSWER}\nuser: {LATER}\n")
    return transcript


def test_a_memory_deleted_for_good_leaves_no_hash_of_any_of_its_texts(
    ctx: Context, home: Path
) -> None:
    first, second = "the door code is 4417 for the lab", "the door code is 5521 for the lab"
    memory = memory_api.remember(ctx, RememberRequest(first)).memory
    memory_api.update(ctx, UpdateRequest(memory.id, second))
    assert _files_holding(home, content_hash(first))  # the edit's event
    memory_api.delete_for_good(ctx, memory.id)
    ctx.close()
    assert _files_holding(home, content_hash(first)) == []
    assert _files_holding(home, content_hash(second)) == []


def test_a_redacted_message_keeps_no_hash_of_its_text_and_is_not_stored_again(
    ctx: Context, home: Path, tmp_path: Path
) -> None:
    transcript = _session(tmp_path)
    assert _ingest(ctx, transcript) == 3
    memory = memory_api.remember(ctx, RememberRequest(f"the lab wifi takes {PASSWORD}")).memory
    memory_api.update(ctx, UpdateRequest(memory.id, f"the lab wifi takes {PASSWORD} at night"))
    memory_api.redact(ctx, PASSWORD)
    assert _ingest(ctx, transcript) == 0  # the transcript read whole again: nothing new
    ctx.close()
    assert _files_holding(home, PASSWORD) == []
    assert _files_holding(home, _message_hash("user", SAID)) == []
    assert _files_holding(home, content_hash(f"the lab wifi takes {PASSWORD}")) == []
    assert _files_holding(home, content_hash(f"the lab wifi takes {PASSWORD} at night")) == []
    assert _files_holding(home, _message_hash("user", LATER))  # the rest as it was


def test_a_forgotten_message_keeps_no_hash_of_its_text_and_is_not_stored_again(
    ctx: Context, home: Path, tmp_path: Path
) -> None:
    transcript = _session(tmp_path)
    _ingest(ctx, transcript)
    sessions_api.forget(ctx, "s1#1")
    assert _ingest(ctx, transcript) == 0
    ctx.close()
    assert _files_holding(home, SAID) == []
    assert _files_holding(home, _message_hash("user", SAID)) == []
    key = home / "forget.key"
    assert key.stat().st_mode & 0o077 == 0  # the key is the user's alone


def test_a_forgotten_session_s_read_mark_keeps_no_plain_digest_of_its_path(
    ctx: Context, home: Path, tmp_path: Path
) -> None:
    """The read mark is kept under a SHA-256 of the transcript's path, and a Claude Code
    transcript's path names the project's folder (the forget blanks the session's
    directory): a digest anyone holding the database tries guessed folders against."""
    folder = tmp_path / "claude" / "-home-ann-acme-layoffs"
    folder.mkdir(parents=True)
    transcript = folder / "cc-host.jsonl"
    lines = [claude_record("user", "plan the acme layoffs memo", 1)]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    request = IngestRequest(str(transcript), mode="raw")
    assert ingest_api.ingest(ctx, request).report.messages_new == 1
    sessions_api.forget(ctx, "cc-host")
    assert _files_holding(home, path_key(str(transcript))) == []
    lines.append(claude_record("assistant", "drafted the acme layoffs memo", 2))
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    again = ingest_api.ingest(ctx, request).report
    assert again.messages_new == 0 and again.forgotten_at
    ctx.close()
    assert _files_holding(home, path_key(str(transcript))) == []
    assert _files_holding(home, "acme") == []


def test_a_forgotten_import_keeps_no_plain_digest_of_its_file(
    ctx: Context, home: Path, tmp_path: Path
) -> None:
    """The import's record knows the file by its SHA-256, so that it is not imported
    again: a short note's digest confirms a guess of all it said."""
    note = tmp_path / "note.md"
    note.write_text("# Reorg\n\nThe acme layoffs are on Friday.\n")
    digest = hashlib.sha256(note.read_bytes()).hexdigest()
    imported = _import(ctx, note)
    assert imported.status == "imported" and imported.sha256 == digest
    sessions_api.forget(ctx, str(imported.session_id))
    assert "forgotten" in _import(ctx, note).why  # known still: not imported again
    ctx.close()
    assert _files_holding(home, digest) == []


def _import(ctx: Context, path: Path) -> FileReport:
    return ingest_api.import_files(ctx, ingest_api.plan_import(ImportRequest((str(path),)))).files[
        0
    ]


def test_an_older_store_s_events_lose_the_hashes_of_texts_taken_out(home: Path) -> None:
    """Events an older memctl wrote: an edit whose texts a forget or a redact rewrote
    (their hashes kept), a permanent delete's hash; m026 takes those out, and leaves the
    hash of a text still there."""
    connection, old = store_at_version(home, 25)
    said, kept = "the door code is 4417 for the lab", "the lab opens at nine"
    events = [
        {"before": {"content": "[forgotten]", "content_hash": content_hash(said)}},
        {"permanent": True, "content_hash": content_hash(said), "reason": "delete --permanent"},
        {"after": {"content": kept, "content_hash": content_hash(kept)}},
    ]
    for data in events:
        old.execute(
            "INSERT INTO events(at, action, data) VALUES ('2026-01-01', 'update', ?)",
            (json.dumps(data),),
        )
    connection.close()
    ctx = Context(load_settings(), embedder=HashEmbedder())
    assert ctx.db.value("SELECT count(*) FROM events") == 3  # opened: migrated
    ctx.close()
    assert _files_holding(home, content_hash(said)) == []
    assert _files_holding(home, content_hash(kept)) == ["memctl.db"]
