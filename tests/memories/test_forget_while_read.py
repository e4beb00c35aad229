"""A forget while another process reads the store (a distil worker, the resident process):
its read transaction keeps SQLite from emptying the WAL, so the file and the WAL hold the
old pages. The forget says so, the store keeps a mark, `doctor` warns, and the next
`maintain` (once the reader is done) rewrites the file. Real SQLite files; a second real
connection holds the read; every byte of the home searched (the file, its -wal and -shm,
the vector segments)."""

from __future__ import annotations

from pathlib import Path

import apsw

from memctl.api import ingest as ingest_api
from memctl.api import sessions as sessions_api
from memctl.config import load_settings
from memctl.context import Context
from memctl.embed.hashed import HashEmbedder
from memctl.integrations.doctor import forgotten_check
from memctl.maintain.pipeline import maintain
from memctl.store.forget import forgotten_in_file
from tests.conftest import files_holding

WORD = "quokka7marmalade"
SAID = f"the vault combination is {WORD} under the blue heron"
WAIT_MS = 50  # the checkpoint's wait for readers here (store.busy_timeout_ms: 5 s)


def test_a_forget_a_reader_blocks_is_finished_by_the_next_maintain(
    ctx: Context, home: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.txt"
    transcript.write_text(f"user: {SAID}\nassistant: noted, for the night shift\n")
    request = ingest_api.IngestRequest(str(transcript), session_id="s1", mode="raw")
    assert ingest_api.ingest(ctx, request).report.messages_new == 2
    reader = apsw.Connection(str(ctx.settings.db_path))
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM messages").fetchone() == (2,)  # holds a read
    with ctx.lock_wait(WAIT_MS):
        done = sessions_api.forget(ctx, "s1")
        assert done.messages == 2 and "until the next `memctl maintain`" in done.file_note()
        assert forgotten_in_file(ctx.db) is not None
        assert files_holding(home, WORD) != []  # the old pages, as the reader sees them
        assert [c.name for c in forgotten_check(ctx)] == ["forgotten"]
        upkeep = maintain(ctx, only="upkeep").task("upkeep")
        assert upkeep is not None and "still holds forgotten text" in " ".join(upkeep.notes)
        reader.execute("COMMIT")  # the reader is done, its connection stays open
        upkeep = maintain(ctx, only="upkeep").task("upkeep")
    assert upkeep is not None and upkeep.counts.get("forgotten_compacted") == 1
    assert files_holding(home, WORD) == []
    assert forgotten_in_file(ctx.db) is None and forgotten_check(ctx) == []
    reader.close()


def test_a_path_an_older_store_kept_is_compacted_away_once_the_reader_is_done(
    ctx: Context, home: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.txt"
    transcript.write_text("user: the night shift deploys with make ship\n")
    request = ingest_api.IngestRequest(str(transcript), session_id="s1")
    assert ingest_api.ingest(ctx, request).report.messages_new == 1
    ctx.close()
    old = apsw.Connection(str(ctx.settings.db_path))  # an older memctl's mark: the path itself
    old.execute(
        "INSERT INTO transcript_reads (path, session_id, client, offset, digest, messages) "
        "VALUES (?, 's1', 'generic', 0, '', 1)",
        (str(tmp_path / WORD / "t.txt"),),
    )
    old.execute("PRAGMA user_version = 21")
    old.close()
    assert files_holding(home, WORD) == ["memctl.db"]
    with Context(load_settings(), embedder=HashEmbedder()) as again, again.lock_wait(WAIT_MS):
        assert forgotten_in_file(again.db) is not None  # m022 took the path out
        reader = apsw.Connection(str(again.settings.db_path))
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM messages").fetchone()
        assert maintain(again, only="upkeep").task("upkeep").notes  # type: ignore[union-attr]
        reader.execute("COMMIT")
        maintain(again, only="upkeep")
        assert files_holding(home, WORD) == [] and forgotten_in_file(again.db) is None
        reader.close()
