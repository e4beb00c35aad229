"""A forget that lands while another process works from the text: the worker distilling or
embedding the session, maintain merging or backing up. The worker read the
messages before the forget and writes what it made of them after (an LLM call takes
seconds; embedding a long session too). What it made must not come back: the facts, the
digest and the decisions quoting the text, nor the vectors of forgotten messages. Real
processes: ``memctl ingest --wait`` held inside its model call (a real HTTP server on
loopback that answers only when the test says), ``memctl sessions forget`` and ``memctl
redact`` run meanwhile in processes of their own."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memctl.ingest.message_vectors import parts
from memctl.store.database import Database
from tests.conftest import files_holding, memctl_command, run_cli
from tests.holding import FILE_LOCK, held
from tests.memories.test_forget_everywhere import _published
from tests.ollama_server import FakeOllama, _bypass_proxies, hashed_bag_of_words

WORD = "quokka7marmalade"
SAID = f"the vault combination is {WORD} under the blue heron"
FACT = {
    "content": f"The vault combination is {WORD}.",
    "category": "entities",
    "importance": 0.9,
    "confidence": 0.9,
    "source_message": 1,
}
WAIT = 60  # seconds a held call waits for the test at most


class Held:
    """A model server whose chat (or embedding of ``SAID``) waits until ``release``."""

    def __init__(self, server: FakeOllama, hold_embedding: bool) -> None:
        self.server = server
        self.asked = threading.Event()
        self.release = threading.Event()
        if hold_embedding:
            server.embed_fn = self._embed
        server.chat_fn = self._chat

    def _chat(self, messages: list[dict[str, Any]]) -> Any:
        if self.server.embed_fn is not self._embed and not self.asked.is_set():
            self.asked.set()
            self.release.wait(WAIT)
            return {"facts": [FACT]}
        said = WORD in json.dumps(messages)  # a model answers from what it was given
        return {"facts": [FACT] if said else [], "decisions": []}

    def _embed(self, text: str, dim: int) -> list[float]:
        if text == parts(f"remember this: {SAID}")[0] and not self.release.is_set():
            self.asked.set()
            self.release.wait(WAIT)
        return hashed_bag_of_words(text, dim)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOllama]:
    _bypass_proxies(monkeypatch)
    with FakeOllama() as fake:
        yield fake


def _ingesting(home: Path, tmp_path: Path, settings: list[str]) -> subprocess.Popen[str]:
    transcript = tmp_path / "t.jsonl"
    lines = [("user", f"remember this: {SAID}"), ("assistant", "Noted.")]
    transcript.write_text("".join(json.dumps({"role": r, "content": c}) + "\n" for r, c in lines))
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("".join(f"{s}\n" for s in settings))
    env = {**os.environ, **({} if "embedder: ollama" in settings else {"MEMCTL_EMBEDDER": "hash"})}
    command = memctl_command(["ingest", "--transcript", str(transcript), "--wait"], env)
    return subprocess.Popen(command, env=env, text=True, stdout=subprocess.PIPE)


def _meanwhile(held: Held, ingest: subprocess.Popen[str], *args: str) -> None:
    """Run ``args`` while the ingest waits on the model, then let the model answer."""
    assert held.asked.wait(WAIT), "the ingest never asked the model"
    try:
        session = json.loads(run_cli("sessions", "list", "--all-scopes", "--json").stdout)[0]["id"]
        done = run_cli(*(a.replace("SESSION", session) for a in args))
        assert done.returncode == 0, done.stderr
    finally:
        held.release.set()
    ingest.communicate(timeout=120)


def test_a_session_forgotten_while_it_is_distilled_leaves_nothing(
    home: Path, tmp_path: Path, server: FakeOllama
) -> None:
    held = Held(server, hold_embedding=False)
    ingest = _ingesting(home, tmp_path, ["llm: ollama", f"ollama.host: {server.url}"])
    _meanwhile(held, ingest, "sessions", "forget", "SESSION", "--yes")
    assert WORD not in run_cli("list", "--all-scopes").stdout
    assert files_holding(home, WORD) == []


def test_a_value_redacted_while_it_is_distilled_is_not_written_back(
    home: Path, tmp_path: Path, server: FakeOllama
) -> None:
    held = Held(server, hold_embedding=False)
    ingest = _ingesting(home, tmp_path, ["llm: ollama", f"ollama.host: {server.url}"])
    _meanwhile(held, ingest, "redact", WORD)
    assert files_holding(home, WORD) == []
    assert "blue heron" in run_cli("sessions", "grep", "heron", "--all-scopes").stdout  # kept


def test_a_message_forgotten_while_it_is_embedded_keeps_no_vector(
    home: Path, tmp_path: Path, server: FakeOllama
) -> None:
    held = Held(server, hold_embedding=True)
    settings = ["embedder: ollama", f"ollama.host: {server.url}", "recall.message_vectors: on"]
    settings.append("llm: none")
    ingest = _ingesting(home, tmp_path, settings)
    _meanwhile(held, ingest, "forget", "SESSION#1")
    with Database.open(home / "memctl.db") as db:
        parts_of_first = db.value(
            "SELECT count(*) FROM message_vectors v JOIN messages m ON m.rowid = v.message_rowid "
            "WHERE m.seq = 1"
        )
        assert db.value("SELECT content FROM messages WHERE seq = 1") == "[forgotten]"
    assert parts_of_first == 0  # no vector of what it said before it was forgotten


def test_a_memory_deleted_while_maintain_merges_it_is_not_written_back(
    make_ctx: Any, server: FakeOllama, home: Path
) -> None:
    """``maintain`` merging two near-duplicates asks the model for one text; a `delete
    --permanent` of one of them meanwhile must not come back inside the merged text."""
    from memctl.api.maintain import MaintainRequest, maintain
    from tests.maintain.test_maintain import put

    ctx = make_ctx(llm_url=server.url, maintain__merge_similarity=0.7)
    put(ctx, "The deploy script lives in ops/deploy.sh", 10)
    full = put(ctx, f"The deploy script lives in ops/deploy.sh and needs {WORD}", 10)
    held = Held(server, hold_embedding=False)
    merged = f"Deploy with ops/deploy.sh; it needs {WORD}."
    server.chat_fn = lambda messages: (held.asked.set(), held.release.wait(WAIT), merged)[2]
    done: list[Any] = []
    worker = threading.Thread(
        target=lambda: done.append(maintain(ctx, MaintainRequest(only="consolidate")))
    )
    worker.start()
    try:
        assert held.asked.wait(WAIT), "maintain never asked the model"
        deleted = run_cli("delete", full.id, "--permanent")
        assert deleted.returncode == 0, deleted.stderr
    finally:
        held.release.set()
        worker.join(120)
    assert done, "maintain did not finish"  # it crashed: FOREIGN KEY constraint failed
    ctx.close()
    assert files_holding(home, WORD) == []
    notes = done[0].task("consolidate").notes
    assert any("a forget or redact meanwhile" in n for n in notes), notes


def test_a_backup_taken_while_a_session_is_forgotten_keeps_none_of_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``maintain``'s backup copies the store from a snapshot (``VACUUM INTO``) under a
    temporary name: a forget that commits while it copies does not see it among the
    backups, so the copy must not become one with the text in it."""
    from memctl.api.config import load_settings
    from memctl.context import Context
    from memctl.maintain import backup

    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"role": "user", "content": SAID}) + "\n")
    assert run_cli("ingest", "--transcript", str(transcript), "--wait").returncode == 0
    listed = run_cli("sessions", "list", "--all-scopes", "--json").stdout
    session = str(json.loads(listed)[0]["id"])
    copy = backup.vacuum_into

    forgets = [session]

    def copy_then_forget(db: object, target: Path) -> None:
        copy(db, target)  # the snapshot holds the session
        while forgets:  # another process, meanwhile (once)
            assert run_cli("sessions", "forget", forgets.pop(), "--yes").returncode == 0

    monkeypatch.setattr(backup, "vacuum_into", copy_then_forget)
    with Context(load_settings()) as ctx:
        backup.make_backup(ctx.settings, ctx.db)
    made = list((home / "backups").iterdir())
    assert [p.stat().st_mode & 0o777 for p in made] == [0o600]  # made all the same, private
    assert files_holding(home, WORD) == []


def test_a_forget_waits_for_a_running_sync_and_says_so_when_it_cannot(tmp_path: Path) -> None:
    """A sync reads the memories, writes their files, commits and pushes; a forget landing
    in between would be pushed after it, unsaid. So a forget takes the sync lock: while a
    sync holds it past ``sync.lock_wait`` the forget refuses in one line, forgetting
    nothing; once the sync is done it goes through."""
    remote, ctx, memory = _published(tmp_path)
    home = ctx.settings.home
    ctx.close()
    at_home = ("--home", str(home), "-c", f"sync.remote={remote}", "-c", "sync.lock_wait=0")
    with held(home / "sync" / "lock", FILE_LOCK):
        refused = run_cli(*at_home, "delete", memory.id, "--permanent")
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1
    assert "sync is running" in refused.stderr
    assert WORD in run_cli(*at_home, "get", memory.id).stdout  # nothing was forgotten
    gone = run_cli(*at_home, "delete", memory.id, "--permanent")
    assert gone.returncode == 0 and "shared through sync" in gone.stdout
    assert files_holding(home, WORD) == []
