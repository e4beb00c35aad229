"""memctl sync between two machines (two data directories) through a bare repository."""

from __future__ import annotations

import hashlib
import os
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memctl.api import ingest as ingest_api
from memctl.api import memory as memory_api
from memctl.api import sessions as sessions_api
from memctl.api import sync as sync_api
from memctl.api.maintain import MaintainRequest, maintain
from memctl.api.memory import EventsRequest, RememberRequest, UpdateRequest
from memctl.api.recall import RecallRequest, recall
from memctl.context import Context
from memctl.errors import NotFoundError, SyncError, UsageError
from memctl.model import (
    Action,
    Kind,
    Memory,
    State,
    Visibility,
    content_hash,
    format_time,
    now_iso,
)
from memctl.store import memories as store
from memctl.store.relations import relations_of
from memctl.store.sessions import keyed_session_id
from memctl.store.writes import Writer
from memctl.sync import memfile, pipeline
from memctl.sync.lock import sync_lock
from memctl.sync.repo import Clone
from memctl.ui.app import build_app
from memctl.ui.security import Keys
from tests.conftest import on_a_terminal, run_cli
from tests.fakes import HashEmbedder
from tests.syncing import bare_repo, git, history, machine, push_files, shared, work_clone

SYNC = sync_api.SyncRequest()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare_repo(tmp_path)


@pytest.fixture
def pair(tmp_path: Path, remote: Path):  # type: ignore[no-untyped-def]
    """Machines A and B, both initialised on the same empty repository."""
    a, b = machine(tmp_path, "a", remote), machine(tmp_path, "b", remote)
    sync_api.init(a, str(remote))
    sync_api.init(b, str(remote))
    yield a, b
    a.close()
    b.close()


def test_remember_on_a_is_recalled_on_b(pair: tuple[Context, Context], remote: Path) -> None:
    a, b = pair
    memory = shared(a, "We deploy to production with make ship, never on Fridays")
    out = sync_api.sync(a, SYNC)
    assert out.pushed and out.went_out["written"] == 1
    came = sync_api.sync(b, SYNC)
    assert came.came_in["created"] == 1
    found = recall(b, RecallRequest("how do we deploy to production?", touch=False))
    assert [r.memory.id for r in found.result.results][:1] == [memory.id]
    copy = store.get_memory(b.db, memory.id)
    assert copy is not None and copy.visibility == Visibility.SHARED
    assert copy.content == memory.content and copy.created_at == memory.created_at
    # The repository holds one readable file under the scope, named by memory and host.
    files = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD").split()
    assert f"memories/global/{memory.id[:2]}/{memory.id}_{a.db.meta('host_id')}.yaml" in files
    assert {"memctl.yaml", "README.md"} <= set(files)
    text = git("--git-dir", str(remote), "show", f"HEAD:{files[-1]}")
    assert "content: We deploy to production" in text and "embedding" not in text
    # Nothing more to do on either side.
    assert sync_api.sync(a, SYNC).went_out["written"] == 0
    assert sync_api.sync(b, SYNC).came_in["created"] == 0


def test_an_imported_files_path_goes_out_as_its_name_only(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path
) -> None:
    a, b = pair
    where = tmp_path / "bob" / "clients-acme" / "notes.md"
    with a.db.atomic():
        made = Writer(a.db).create(
            Memory(content="the acme invoices go out on the 3rd", source=f"file:{where}#chunk-2"),
            None,
        )
    sync_api.promote(a, sync_api.ShareRequest((made.id,)))
    assert sync_api.sync(a, SYNC).went_out["written"] == 1
    sent = history(remote)
    assert "source: file:notes.md#chunk-2" in sent and "clients-acme" not in sent
    assert str(tmp_path) not in sent
    assert store.get_memory(a.db, made.id).source == f"file:{where}#chunk-2"  # type: ignore[union-attr]
    assert sync_api.sync(b, SYNC).came_in["created"] == 1
    assert store.get_memory(b.db, made.id).source == "file:notes.md#chunk-2"  # type: ignore[union-attr]
    # Round trip: nothing to write again, nothing taken back, no conflict on either side.
    again_a, again_b = sync_api.sync(a, SYNC), sync_api.sync(b, SYNC)
    assert again_a.went_out["written"] == 0 and again_b.went_out["written"] == 0
    assert not again_a.incoming and not again_b.incoming
    assert history(remote).count("source: file:notes.md") == 1


def test_a_path_an_older_memctl_sent_leaves_the_head_at_the_next_sync(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    where = f"file:{tmp_path}/bob/clients-acme/notes.md"
    made = _sent_by_an_older_memctl(
        a,
        remote,
        monkeypatch,
        Memory(content="acme pays net 30", source=where),
        pipeline.META_SOURCES,
        "clients-acme",
    )
    assert sync_api.sync(b, SYNC).came_in["created"] == 1
    assert store.get_memory(b.db, made.id).source == "file:notes.md"  # type: ignore[union-attr]


def test_a_session_id_derived_from_a_path_goes_keyed_and_leaves_the_head_an_older_memctl_wrote(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session stored without an id of its own is named by a SHA-256 of its client and
    its file's path: a teammate tries guessed paths against it. It goes keyed, and a
    file an older memctl sent with it is sent again once."""
    a, b = pair
    path = f"{tmp_path}/ann/acme-layoffs/plan.txt"
    derived = hashlib.sha256(f"generic\0{path}".encode()).hexdigest()[:32]
    memory = Memory(content="Ann prefers tabs in Go code", source=f"session:{derived}#1:user")
    made = _sent_by_an_older_memctl(a, remote, monkeypatch, memory, pipeline.META_SESSIONS, derived)
    assert sync_api.sync(b, SYNC).came_in["created"] == 1
    there = store.get_memory(b.db, made.id)
    assert there is not None and re.fullmatch(r"session:local-[0-9a-f]{32}#1:user", there.source)
    # keyed here since (its first message forgotten): the same name goes, no churn
    since = f"session:{keyed_session_id(b'k', derived)}#1:user"
    assert memfile.shared_source(since, b"k") == memfile.shared_source(
        f"session:{derived}#1:user", b"k"
    )
    again_a, again_b = sync_api.sync(a, SYNC), sync_api.sync(b, SYNC)  # no churn either way
    assert again_a.went_out["written"] == 0 and again_b.went_out["written"] == 0
    assert not again_a.incoming and not again_b.incoming


def _sent_by_an_older_memctl(
    a: Context,
    remote: Path,
    monkeypatch: pytest.MonkeyPatch,
    memory: Memory,
    mark: str,
    leaked: str,
) -> Memory:
    """``memory`` shared and synced as a memctl before the fix sent it (``leaked`` in its
    file's source, ``mark`` not set): the next sync sends its file once more, without
    ``leaked``, and the one after sends nothing."""
    with a.db.atomic():
        made = Writer(a.db).create(memory, None)
    sync_api.promote(a, sync_api.ShareRequest((made.id,)))
    with monkeypatch.context() as older:
        older.setattr(memfile, "shared_source", lambda source, key: source)
        sync_api.sync(a, SYNC)
    with a.db.atomic():
        a.db.set_meta(mark, "")  # nor did it mark that it sends none
    assert leaked in git("--git-dir", str(remote), "grep", "-h", "source:", "HEAD")
    assert sync_api.sync(a, SYNC).went_out["written"] == 1  # once
    assert leaked not in git("--git-dir", str(remote), "grep", "-h", "source:", "HEAD")
    assert sync_api.sync(a, SYNC).went_out["written"] == 0
    return made


def test_scope_of_a_project_is_its_remote(pair: tuple[Context, Context], remote: Path) -> None:
    a, b = pair
    memory = shared(a, "The app's API lives in api/", scope="github.com/acme/app")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    files = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD")
    assert f"memories/github.com/acme/app/{memory.id[:2]}/{memory.id}_" in files
    copy = store.get_memory(b.db, memory.id)
    assert copy is not None and copy.scope == "github.com/acme/app"


def test_only_promoted_memories_leave_and_secrets_never(
    pair: tuple[Context, Context], remote: Path
) -> None:
    a, b = pair
    memory_api.remember(a, memory_api.RememberRequest("my private diary entry", scope="global"))
    secret = shared(a, "the deploy token is in the vault")
    private = shared(a, "the code is at the back")
    fine = shared(a, "lint with ruff before each commit")
    # remember scrubs what it stores: these two stand for a store written before the scanner
    with a.db.atomic():
        store.update_memory(a.db, secret.id, {"content": "the deploy token is ghp_" + "a1B2" * 10})
        store.update_memory(
            a.db, private.id, {"content": "the code is <private>hunter2 door</private> at the back"}
        )
    result = sync_api.sync(a, SYNC)
    refused = dict(result.refused)
    assert "secret" in refused[secret.id] and "private" in refused[private.id]
    log = history(remote)
    assert fine.id in log
    for text in ("diary", "ghp_", "hunter2", "door", secret.id, private.id):
        assert text not in log
    sync_api.sync(b, SYNC)
    assert store.get_memory(b.db, secret.id) is None


def test_include_all_publishes_all_but_the_withheld(tmp_path: Path, remote: Path) -> None:
    a = machine(tmp_path, "a", remote, sync__include="all")
    sync_api.init(a, str(remote))
    kept = memory_api.remember(
        a, memory_api.RememberRequest("I prefer tabs", scope="global")
    ).memory
    held = memory_api.remember(
        a, memory_api.RememberRequest("my salary is X", scope="global")
    ).memory
    sync_api.unpromote(a, sync_api.ShareRequest((held.id,)))
    sync_api.sync(a, SYNC)
    log = history(remote)
    assert kept.id in log and held.id not in log and "salary" not in log
    a.close()


def test_concurrent_updates_resolve_to_the_newer(pair: tuple[Context, Context]) -> None:
    a, b = pair
    memory = shared(a, "the staging host is stage-1")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    memory_api.update(a, UpdateRequest(memory.id, text="the staging host is stage-2"))
    time.sleep(0.01)
    memory_api.update(b, UpdateRequest(memory.id, text="the staging host is stage-3"))
    sync_api.sync(a, SYNC)
    on_b = sync_api.sync(b, SYNC)
    assert on_b.came_in["conflicts"] == 1
    on_a = sync_api.sync(a, SYNC)
    assert on_a.came_in["updated"] == 1
    for ctx in (a, b):
        copy = store.get_memory(ctx.db, memory.id)
        assert copy is not None and copy.content == "the staging host is stage-3"
    # The losing version is kept: in B's conflict event, and in A's update event.
    events_b = memory_api.events(b, EventsRequest(memory.id))
    lost = [e for e in events_b if e.action == Action.CONFLICT]
    assert lost and lost[0].data["lost"]["content"] == "the staging host is stage-2"
    events_a = memory_api.events(a, EventsRequest(memory.id))
    replaced = [e for e in events_a if e.action == Action.UPDATE and e.data.get("reason") == "sync"]
    assert replaced and replaced[0].data["before"]["content"] == "the staging host is stage-2"
    # Settled: a third round moves nothing.
    assert sync_api.sync(b, SYNC).went_out["written"] == 0
    assert sync_api.sync(a, SYNC).came_in == {
        "created": 0,
        "updated": 0,
        "conflicts": 0,
        "unshared": 0,
    }


def test_state_changes_travel(pair: tuple[Context, Context], remote: Path) -> None:
    a, b = pair
    forgotten = shared(a, "we used jenkins")
    deleted = shared(a, "the wifi is guest-5")
    gone = shared(a, "old build box is bx-9")
    old = shared(a, "node 18 is the runtime")
    new = shared(a, "node 22 is the runtime")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    memory_api.forget(a, forgotten.id)
    memory_api.delete(a, deleted.id)
    memory_api.delete(a, gone.id, permanent=True)
    with a.db.atomic():
        Writer(a.db).supersede(old, new.id, "test")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)

    def state(memory_id: str) -> State:
        copy = store.get_memory(b.db, memory_id)
        assert copy is not None
        return copy.state

    assert state(forgotten.id) == State.ARCHIVED
    assert state(deleted.id) == State.DELETED
    assert store.get_memory(b.db, gone.id) is None  # removed for good there too
    assert state(old.id) == State.SUPERSEDED
    assert store.get_memory(b.db, old.id).superseded_by == new.id  # type: ignore[union-attr]
    # A tombstone keeps no content.
    path = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD").split()
    tomb = next(p for p in path if gone.id in p)
    text = git("--git-dir", str(remote), "show", f"HEAD:{tomb}")
    assert "state: deleted" in text and "bx-9" not in text and "content" not in text


def test_a_forget_takes_the_text_off_every_machine_and_a_soft_delete_stays_restorable(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path
) -> None:
    a, b = pair
    kept = shared(a, "the coffee machine sits on floor qz3 by the lifts")
    gone = shared(a, "the nightly backups land in vault-qx81 on the old box")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    assert store.get_memory(b.db, gone.id) is not None
    memory_api.delete(a, gone.id, permanent=True)
    memory_api.delete(a, kept.id)  # the newest edit: undo takes it back below
    sync_api.sync(a, SYNC)
    head = git("--git-dir", str(remote), "grep", "-h", "forgotten", "HEAD", "--", "memories")
    assert head.splitlines() == ["forgotten: true"]  # the permanent one's tombstone only
    assert sync_api.sync(b, SYNC).came_in["forgotten"] == 1
    assert store.get_memory(b.db, gone.id) is None
    # Not a byte under B's data directory (database, WAL, vector indexes, the clone's
    # work tree) holds the forgotten text any more; the soft-deleted one keeps its own.
    files = [p for p in (tmp_path / "b").rglob("*") if p.is_file()]
    assert not [p for p in files if b"vault-qx81" in p.read_bytes()]
    copy = store.get_memory(b.db, kept.id)
    assert copy is not None and copy.state == State.DELETED and "qz3" in copy.content
    # A's undo of its soft delete brings the memory back on B.
    ingest_api.undo(a)
    sync_api.sync(a, SYNC)
    assert "forgotten" not in sync_api.sync(b, SYNC).came_in
    assert store.get_memory(b.db, kept.id).state == State.ACTIVE  # type: ignore[union-attr]


def test_a_teammate_s_edit_from_before_a_forget_brings_none_of_its_text_back(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path
) -> None:
    """B edited a shared memory; A then forgot it (a permanent delete here; a session's
    forget takes its memories the same way) before pulling B's edit. A's next sync took
    B's version in again, as a memory new to it: the forgotten text back in A's store, and
    pushed under A's own name. Now A keeps it out, and its tombstone takes it off B."""
    a, b = pair
    gone = shared(a, "the nightly backups land in vault-qx81 on the old box")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    memory_api.update(b, UpdateRequest(gone.id, text="the nightly backups land in vault-qx81"))
    sync_api.sync(b, SYNC)
    memory_api.delete(a, gone.id, permanent=True)
    sync_api.sync(a, SYNC)
    assert store.get_memory(a.db, gone.id) is None
    assert sync_api.sync(b, SYNC).came_in["forgotten"] == 1
    assert store.get_memory(b.db, gone.id) is None
    paths = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD").split()
    assert not [p for p in paths if "qx81" in git("--git-dir", str(remote), "show", f"HEAD:{p}")]
    sync_api.sync(a, SYNC)  # B's file, removed by B, leaves A's clone
    assert not [p for p in (tmp_path / "a").rglob("*") if p.is_file() and b"qx81" in p.read_bytes()]


def test_a_redaction_takes_the_value_off_every_machine(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path
) -> None:
    a, b = pair
    value = "qx81-7734-zeta"
    memory = shared(a, f"the lab door code is {value}, Maria changes it each quarter")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    assert value in store.get_memory(b.db, memory.id).content  # type: ignore[union-attr]
    memory_api.redact(a, value)
    sync_api.sync(a, SYNC)
    head = git("--git-dir", str(remote), "grep", "-h", "redacted", "HEAD", "--", "memories")
    assert "redacted: true" in head.splitlines()
    assert sync_api.sync(b, SYNC).came_in["redacted"] == 1
    copy = store.get_memory(b.db, memory.id)
    assert copy is not None and copy.content.startswith("the lab door code is [REDACTED],")
    # Not a byte under B's data directory (database, WAL, vector indexes, the clone) holds
    # the value: the update's "before" lost it as a local redact's does.
    files = [p for p in (tmp_path / "b").rglob("*") if p.is_file()]
    assert not [p for p in files if value.encode() in p.read_bytes()]
    # Done once: the next syncs both ways take nothing more out and move nothing.
    assert "redacted" not in sync_api.sync(a, SYNC).came_in
    again = sync_api.sync(b, SYNC)
    assert "redacted" not in again.came_in and again.came_in["updated"] == 0


def test_relations_travel(pair: tuple[Context, Context]) -> None:
    a, b = pair
    one, two = shared(a, "service a calls service b"), shared(a, "service b owns the queue")
    memory_api.link(a, memory_api.LinkRequest(one.id, two.id, "depends_on"))
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    relations = memory_api.get(b, one.id).relations
    assert [(r.dst_id, str(r.type)) for r in relations] == [(two.id, "depends_on")]


def test_unpromote_removes_the_file_and_others_keep_a_private_copy(
    pair: tuple[Context, Context], remote: Path
) -> None:
    a, b = pair
    memory = shared(a, "the team lunch is on thursday")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    sync_api.unpromote(a, sync_api.ShareRequest((memory.id,)))
    assert sync_api.sync(a, SYNC).went_out["removed"] == 1
    assert memory.id not in git("--git-dir", str(remote), "ls-tree", "-r", "HEAD")
    assert sync_api.sync(b, SYNC).came_in["unshared"] == 1
    copy = store.get_memory(b.db, memory.id)
    assert copy is not None and copy.visibility == Visibility.PRIVATE
    assert copy.content == memory.content
    # B does not publish it again.
    sync_api.sync(b, SYNC)
    assert memory.id not in git("--git-dir", str(remote), "ls-tree", "-r", "HEAD")


def test_a_hostile_repository_changes_nothing_it_should_not(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path
) -> None:
    a, b = pair
    good = shared(a, "a good memory stays importable")
    sync_api.sync(a, SYNC)
    hand = work_clone(tmp_path, remote)
    host, other = "f" * 16, "e" * 16
    outside = tmp_path / "outside"
    outside.mkdir()
    ids = [f"a{n:031x}" for n in range(1, 9)]
    base = (
        "state: active\ncreated_at: '2026-01-01T00:00:00.000Z'\n"
        "updated_at: '2026-01-01T00:00:00.000Z'\n"
    )
    push_files(
        hand,
        {
            f"memories/global/a0/{ids[0]}_{host}.yaml": (
                f"id: {ids[0]}\n{base}content: !!python/object/apply:os.system "
                f"['touch {tmp_path}/pwned']\n"
            ),
            f"memories/%2E%2E/a0/{ids[1]}_{host}.yaml": f"id: {ids[1]}\n{base}content: dots\n",
            f"memories/global/a0/{ids[2]}_{host}.yml": f"id: {ids[2]}\n{base}content: suffix\n",
            f"memories/global/a0/{ids[3]}_{host}.yaml": (
                f"id: {ids[3]}\n{base}content: typed\nimportance: high\ntags: notalist\n"
            ),
            f"memories/global/a0/{ids[4]}_{host}.yaml": f"id: {ids[5]}\n{base}content: wrong id\n",
            f"memories/global/a0/{ids[6]}_{host}.yaml": f"id: {ids[6]}\n{base}content: 42\n",
        },
    )
    big = hand / "memories" / "global" / "a0" / f"{ids[7]}_{host}.yaml"
    with big.open("wb") as stream:  # sparse, twice the default sync.max_file_bytes
        stream.truncate(2 * 1024 * 1024)
    (hand / "memories" / "global" / "a0" / f"{ids[5]}_{other}.yaml").symlink_to("/etc/passwd")
    (hand / "memories" / "github.com").symlink_to(outside)
    git("add", "-A", cwd=hand)
    git("commit", "--quiet", "-m", "hostile", cwd=hand)
    git("push", "--quiet", "origin", "HEAD", cwd=hand)

    result = sync_api.sync(b, SYNC)
    bad = dict(result.bad_files)
    assert len(bad) == 9, bad
    assert "YAML" in bad[f"memories/global/a0/{ids[0]}_{host}.yaml"]
    assert "symlink" in bad[f"memories/global/a0/{ids[5]}_{other}.yaml"]
    assert "limit" in bad[f"memories/global/a0/{ids[7]}_{host}.yaml"]
    assert "must be" in bad[f"memories/global/a0/{ids[3]}_{host}.yaml"]
    assert not (tmp_path / "pwned").exists()
    assert store.get_memories(b.db, ids) == {}
    assert store.get_memory(b.db, good.id) is not None
    # Writing into the symlinked scope directory is refused; nothing lands outside.
    project = shared(b, "written under a symlinked scope", scope="github.com/acme/app")
    written = sync_api.sync(b, SYNC)
    assert project.id in dict(written.refused)
    assert not any(outside.iterdir())
    runs = ingest_api.runs(b)
    assert any(f"skipped memories/global/a0/{ids[0]}" in note for r in runs for note in r.notes)


def test_a_newer_format_is_refused(pair: tuple[Context, Context], remote: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    a, _ = pair
    hand = work_clone(tmp_path, remote)
    push_files(hand, {"memctl.yaml": 'format: "3.0"\n'})
    with pytest.raises(SyncError, match="format 3.0; this memctl reads format 2.x: upgrade memctl"):
        sync_api.sync(a, SYNC)


def test_a_push_under_a_loose_umask_leaves_the_clone_private(tmp_path: Path, remote: Path) -> None:
    """git updates the clone's remote-tracking ref as it pushes (under the user's umask, as
    the remote wants): a walk's `memctl doctor` failed "modes" after the first sync."""
    from memctl.integrations.doctor import OK, modes_check

    loose = os.umask(0o022)
    try:
        a = machine(tmp_path, "a", remote)
        sync_api.init(a, str(remote))  # an empty remote: the layout is pushed
        shared(a, "the release train leaves every second Thursday")
        assert sync_api.sync(a, SYNC).pushed
        check = modes_check(a.settings.home)
        a.close()
    finally:
        os.umask(loose)
    assert check.status == OK, check.detail


def test_readonly_never_pushes(tmp_path: Path, remote: Path) -> None:
    a = machine(tmp_path, "a", remote)
    sync_api.init(a, str(remote))
    published = shared(a, "published: use the release checklist")
    sync_api.sync(a, SYNC)
    before = git("--git-dir", str(remote), "rev-parse", "HEAD")
    reader = machine(tmp_path, "r", remote, sync__readonly=True)
    sync_api.init(reader, str(remote))
    shared(reader, "a reader's own shared memory")
    result = sync_api.sync(reader, SYNC)
    assert result.came_in["created"] == 1 and not result.pushed
    assert store.get_memory(reader.db, published.id) is not None
    assert git("--git-dir", str(remote), "rev-parse", "HEAD") == before
    a.close()
    reader.close()


def test_an_offline_remote_keeps_the_commit_for_the_next_sync(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path
) -> None:
    a, b = pair
    memory = shared(a, "the vpn config is in the wiki")
    away = tmp_path / "away.git"
    remote.rename(away)
    with pytest.raises(SyncError, match="cannot reach .*next sync pushes them") as caught:
        sync_api.sync(a, SYNC)
    assert "\n" not in str(caught.value)
    clone = pipeline.clone_path(a.settings)
    assert memory.id in git("log", "--name-only", "HEAD", cwd=clone)
    away.rename(remote)
    assert sync_api.sync(a, SYNC).pushed
    sync_api.sync(b, SYNC)
    assert store.get_memory(b.db, memory.id) is not None


def test_two_syncs_never_run_at_once(pair: tuple[Context, Context], tmp_path: Path) -> None:
    a, _ = pair
    busy = machine(tmp_path, "a", Path(a.settings.sync_remote), sync__lock_wait=0)
    with sync_lock(a.settings.home / "sync" / "lock", 0):
        with pytest.raises(SyncError, match="another memctl sync is running"):
            sync_api.sync(busy, SYNC)
    busy.close()


def test_a_sync_killed_before_recording_is_recovered(
    pair: tuple[Context, Context], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    memory = shared(a, "the cache lives in redis")
    calls = {"n": 0}
    real = pipeline.put_files

    def dies(*args: object) -> None:
        calls["n"] += 1
        raise KeyboardInterrupt  # a kill after the commit, before the database knew

    monkeypatch.setattr(pipeline, "put_files", dies)
    with pytest.raises(KeyboardInterrupt):
        sync_api.sync(a, SYNC)
    monkeypatch.setattr(pipeline, "put_files", real)
    clone = pipeline.clone_path(a.settings)
    lock = clone / ".git" / "index.lock"
    lock.write_text("")  # git killed mid-command, a minute ago: no git holds it any more
    gone = time.time() - 60
    os.utime(lock, (gone, gone))
    (clone / "memories" / "global" / "half-written.yaml").write_text("id: [")
    assert sync_api.sync(a, SYNC).pushed
    sync_api.sync(a, SYNC)
    files = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD").split()
    assert [f for f in files if memory.id in f] and not [f for f in files if "half" in f]
    assert sync_api.sync(b, SYNC).came_in["created"] == 1
    assert len(store.list_memories(b.db, store.MemoryFilter(), None)) == 1


def test_each_import_is_a_run_that_undo_reverts_here_only(
    pair: tuple[Context, Context],
) -> None:
    a, b = pair
    memory = shared(a, "standup is at 9:30")
    sync_api.sync(a, SYNC)
    result = sync_api.sync(b, SYNC)
    assert result.run_id is not None
    run = ingest_api.run(b, result.run_id)
    assert run.kind == "sync" and run.counts["created"] == 1
    ingest_api.undo(b, result.run_id)
    copy = store.get_memory(b.db, memory.id)
    assert copy is not None and copy.state == State.DELETED
    after = sync_api.sync(b, SYNC)
    assert after.withheld == [memory.id] and after.went_out["written"] == 0
    sync_api.sync(a, SYNC)
    kept = store.get_memory(a.db, memory.id)
    assert kept is not None and kept.state == State.ACTIVE


def test_undo_of_an_import_puts_back_an_update_and_removes_an_edge(
    pair: tuple[Context, Context],
) -> None:
    a, b = pair
    memory = shared(a, "the build cache lives in /var/cache/build")
    other = shared(a, "the build runs on the ci-large runners")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    before = store.get_memory(b.db, memory.id)
    memory_api.update(a, UpdateRequest(memory.id, text="the build cache lives in /srv/cache"))
    memory_api.link(a, memory_api.LinkRequest(memory.id, other.id, "related"))
    sync_api.sync(a, SYNC)
    result = sync_api.sync(b, SYNC)
    assert result.came_in["updated"] == 1 and result.run_id is not None
    assert [r.dst_id for r in relations_of(b.db, memory.id)] == [other.id]
    ingest_api.undo(b, result.run_id)
    after = store.get_memory(b.db, memory.id)
    assert before is not None and after is not None
    assert (after.content, after.content_hash) == (before.content, before.content_hash)
    assert relations_of(b.db, memory.id) == []


def test_promote_needs_ids_or_all(pair: tuple[Context, Context]) -> None:
    a, _ = pair
    with pytest.raises(UsageError):
        sync_api.promote(a, sync_api.ShareRequest())
    memory_api.remember(a, memory_api.RememberRequest("one", scope="global"))
    memory_api.remember(a, memory_api.RememberRequest("two", scope="elsewhere"))
    changed = sync_api.promote(a, sync_api.ShareRequest(every=True, scope="global"))
    assert len(changed) == 1


def test_dry_run_and_status_change_nothing(pair: tuple[Context, Context], remote: Path) -> None:
    a, b = pair
    memory = shared(a, "releases are tagged vX.Y.Z")
    preview = sync_api.sync(a, sync_api.SyncRequest(dry_run=True))
    assert preview.went_out["written"] == 1 and preview.outgoing[0][1].endswith(".yaml")
    assert memory.id not in history(remote)
    assert sync_api.status(a).waiting_out == 1
    sync_api.sync(a, SYNC)
    assert sync_api.status(a).waiting_out == 0
    incoming = sync_api.sync(b, sync_api.SyncRequest(dry_run=True))
    assert incoming.incoming == [("new", memory.id)]
    assert store.get_memory(b.db, memory.id) is None


def test_a_rejected_push_is_fetched_rebased_and_retried(
    pair: tuple[Context, Context], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    first = shared(a, "the on-call rota is in pagerduty")
    second = shared(b, "the design docs live in docs/adr")
    sync_api.sync(a, SYNC)
    real = Clone.fetch
    skipped = {"n": 0}

    def stale_once(self: Clone) -> None:  # B misses A's push: its push gets rejected
        if skipped["n"] == 0:
            skipped["n"] += 1
            return
        real(self)

    monkeypatch.setattr(Clone, "fetch", stale_once)
    result = sync_api.sync(b, SYNC)
    assert result.pushed and skipped["n"] == 1 and result.push_retries == 1
    assert result.came_in["created"] == 1 and store.get_memory(b.db, first.id) is not None
    files = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD")
    assert first.id in files and second.id in files
    assert sync_api.sync(a, SYNC).came_in["created"] == 1


def test_a_tie_goes_to_the_greater_host_id(pair: tuple[Context, Context]) -> None:
    a, b = pair
    memory = shared(a, "the build cache is on s3")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    moment = now_iso()  # one moment for both (no later than now: later ones are refused)
    for ctx, text in ((a, "the build cache is on gcs"), (b, "the build cache is on minio")):
        memory_api.update(ctx, UpdateRequest(memory.id, text=text))
        with ctx.db.atomic():
            store.update_memory(ctx.db, memory.id, {"updated_at": moment})
    for ctx in (a, b, a, b):
        sync_api.sync(ctx, SYNC)
    winner = "minio" if b.db.meta("host_id") > a.db.meta("host_id") else "gcs"  # type: ignore[operator]
    for ctx in (a, b):
        copy = store.get_memory(ctx.db, memory.id)
        assert copy is not None and copy.content.endswith(winner)


def test_the_sync_package_offers_sync_now_lazily(pair: tuple[Context, Context]) -> None:
    import memctl.sync

    a, _ = pair
    shared(a, "maintain syncs when sync.auto is on")
    assert memctl.sync.sync_now(a).went_out["written"] == 1


def test_each_push_is_scanned_again(pair: tuple[Context, Context], remote: Path) -> None:
    a, _ = pair
    shared(a, "a fine memory")
    clone = pipeline.clone_path(a.settings)
    host = a.db.meta("host_id")
    name = f"memories/global/bb/{'b' * 32}_{host}.yaml"
    (clone / name).parent.mkdir(parents=True, exist_ok=True)
    (clone / name).write_text(
        f"id: {'b' * 32}\nstate: active\ncreated_at: '2026-01-01T00:00:00.000Z'\n"
        "updated_at: '2026-01-01T00:00:00.000Z'\ncontent: key AKIAABCDEFGHIJKLMNOP\n"
    )
    git("add", "-A", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "by hand", cwd=clone)
    with pytest.raises(SyncError, match=f"refusing to push {name}: holds a secret"):
        sync_api.sync(a, SYNC)
    assert "AKIA" not in history(remote)
    assert sync_api.sync(a, SYNC).pushed
    assert "AKIA" not in history(remote) and "a fine memory" in history(remote)


def test_a_sync_tells_its_progress(pair: tuple[Context, Context]) -> None:
    a, b = pair
    for n in range(3):
        shared(a, f"the build cache number {n} lives on the ci runner")
    seen: list[tuple[str, int, int]] = []
    sync_api.sync(a, SYNC, lambda *step: seen.append(step))
    assert [s for s in seen if s[0] in ("preparing memories", "writing files")] == [
        ("preparing memories", 0, 3),
        ("preparing memories", 1, 3),
        ("preparing memories", 2, 3),
        *(("writing files", n, 3) for n in range(3)),
    ]
    assert ("fetching", 0, 0) in seen and ("pushing", 0, 0) in seen
    seen.clear()
    sync_api.sync(b, SYNC, lambda *step: seen.append(step))
    assert ("reading files", 2, 3) in seen and ("embedding memories", 0, 3) in seen


def test_the_progress_bar_shows_on_a_terminal_only(
    pair: tuple[Context, Context], tmp_path: Path, remote: Path
) -> None:
    a, _ = pair
    for n in range(3):
        shared(a, f"the deploy key number {n} is rotated monthly")
    sync_api.sync(a, SYNC)
    env = {"MEMCTL_EMBEDDER": "hash", "MEMCTL_LLM": "none"}
    for name in ("tty", "pipe"):
        assert run_cli("--home", str(tmp_path / name), "sync", "init", str(remote)).returncode == 0
    shown = on_a_terminal("--home", str(tmp_path / "tty"), "sync", env=env)
    assert "\x1b[" in shown and "import 3 new" in shown  # the bar drawn, then cleared
    piped = run_cli("--home", str(tmp_path / "pipe"), "sync", env=env)
    assert piped.stdout.startswith(str(remote)) and "\x1b" not in piped.stdout + piped.stderr
    assert "import 3 new" in piped.stdout


def test_an_import_embeds_only_text_the_store_does_not_hold(pair: tuple[Context, Context]) -> None:
    a, b = pair
    known = "the staging cluster runs on arm64 nodes"
    memory_api.remember(b, RememberRequest(known))
    for text in (known, "the release train leaves on tuesdays", known.upper()):
        shared(a, text)
    shared(a, "the release train leaves on tuesdays", scope="github.com/acme/app")
    sync_api.sync(a, SYNC)
    embedder = b.embedder
    assert isinstance(embedder, HashEmbedder)
    embedder.calls.clear()
    assert sync_api.sync(b, SYNC).came_in["created"] == 4
    embedded = [text for call in embedder.calls for text in call]
    assert sorted(embedded) == sorted(["the release train leaves on tuesdays", known.upper()])
    assert store.vectors_for_hashes(b.db, {content_hash(known.upper())})  # every one has one


def test_a_teammates_maintain_keeps_an_episode_it_consolidates_the_senders(
    pair: tuple[Context, Context],
) -> None:
    """A consolidated an episode and shared it with its fact; B's maintain consolidates
    it again (the mark is not in the file): the mark is B's bookkeeping, not a new
    version, so B sends no file of it (B's would win: A's memory would become B's,
    withheld from A's own sessions as an untrusted host's) and the episode keeps its time
    for a later edit of A's to win on B."""
    a, b = pair
    said = format_time(datetime.now(UTC) - timedelta(days=30))
    text = "Long session today. We prefer pytest over unittest for every project."
    episode = Memory(text, kind=Kind.EPISODIC, created_at=said, stored_at=said)
    with a.db.atomic():
        store.insert_memory(a.db, episode, a.vectors([text])[0])
    maintain(a, MaintainRequest(only="consolidate"))
    sync_api.promote(a, sync_api.ShareRequest(every=True))
    sync_api.sync(a, SYNC)
    assert sync_api.sync(b, SYNC).came_in["created"] == 2  # the episode and its fact
    before = store.get_memory(b.db, episode.id)
    maintain(b, MaintainRequest(only="consolidate"))
    after = store.get_memory(b.db, episode.id)
    assert before is not None and after is not None and after.consolidated_at
    assert after.updated_at == before.updated_at
    assert sync_api.sync(b, SYNC).went_out["written"] == 0
    assert sync_api.sync(a, SYNC).came_in["updated"] == 0


def test_a_memory_from_another_machine_names_the_host_that_keeps_its_session(
    pair: tuple[Context, Context],
) -> None:
    """Sessions never sync: on B, a memory A distilled from A's session says that session is
    on A's host, not that it was forgotten ("no longer stored")."""
    a, b = pair
    text = "The staging database is called heron-stage."
    fact = Memory(text, source="session:9f2c-a-session#3:user")
    with a.db.atomic():
        store.insert_memory(a.db, fact, a.vectors([text])[0])
    sync_api.promote(a, sync_api.ShareRequest((fact.id,)))
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    (here,) = memory_api.get(a, fact.id).origins
    assert not here.host and "no longer stored" in here.text()
    (there,) = memory_api.get(b, fact.id).origins
    assert there.host == a.db.meta("host_id") and not there.stored
    assert f"on host {there.host[:8]}" in there.text() and "no longer" not in there.text()
    with pytest.raises(NotFoundError, match=f"on host {there.host[:8]}.*sessions do not sync"):
        sessions_api.expand(b, fact.id[:8])
    assert memory_api.get(b, fact.id).host == there.host and not memory_api.get(a, fact.id).host
    # this machine's own: null in `memctl get --json` and memory_get, as recall's JSON says
    own = memory_api.get(a, fact.id).to_dict()
    assert own["host"] is None and own["origin"]["host"] is None
    assert memory_api.get(b, fact.id).to_dict()["origin"]["host"] == there.host
    keys = Keys(frozenset({"testserver"}))
    app, viewer = build_app(b.settings, keys, HashEmbedder())
    with TestClient(app, base_url="http://testserver") as client:
        client.get(f"/login?token={keys.token}")
        page = client.get(f"/memories/{fact.id}").text
    viewer.close()
    assert f"host {there.host[:8]}, through sync" in page and "no longer stored" not in page
