"""Stored texts read again when the privacy filter improves (``maintain.rescrub``): a
password an older memctl kept (a detector added since finds it) leaves the messages, the
memories, their indexes, the event log, the backups and the sync repository at the next
``memctl maintain``; the next one reads nothing. Real ``memctl`` processes, a real SQLite
file, a real bare git repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.api import memory as memory_api
from memctl.api import sync as sync_api
from memctl.api.ingest import IngestRequest, ingest
from memctl.context import Context
from memctl.errors import UsageError
from memctl.ingest import pending
from memctl.ingest.entities import RULES_VERSION
from memctl.integrations import hooks_state
from memctl.maintain.backup import make_backup
from memctl.maintain.pipeline import configured_tasks, maintain
from memctl.maintain.rescrub import filter_digest
from memctl.memories.privacy import Redactions
from memctl.store import graph
from memctl.store.database import Database
from memctl.store.rescrub import RESCRUBBED_WITH
from memctl.store.writes import Writer
from tests.conftest import files_holding, run_cli
from tests.ingesting import claude_record
from tests.syncing import bare_repo, git, machine, shared

VALUE = "Tr0ub4dor3xyz"
# A password on a command line an older filter kept (s35-leak's rabbitmqctl detector)
SAID = f"To add the user run rabbitmqctl add_user orders {VALUE} on the broker."


def _ok(*args: str, input: str | None = None) -> str:
    done = run_cli(*args, input=input)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _an_older_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sync exports as an older memctl did, whose filter did not know the password."""
    monkeypatch.setattr("memctl.sync.records.scrub", lambda text: (text, Redactions()))
    monkeypatch.setattr("memctl.sync.outgoing.privacy_problem", lambda values: None)
    monkeypatch.setattr("memctl.sync.memfile.privacy_problem", lambda values: None)


def test_a_password_an_older_filter_kept_leaves_every_copy_at_the_next_maintain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = bare_repo(tmp_path)
    ctx = machine(tmp_path, "laptop", remote)
    home = ctx.settings.home
    at_home = ("--home", str(home), "-c", f"sync.remote={remote}", "-c", "llm=none")
    sync_api.init(ctx, str(remote))
    memory = shared(ctx, "The orders user on the broker is added with rabbitmqctl.")
    said = {"messages": [{"role": "user", "content": "how do I add the orders user?"}]}
    _ok(*at_home, "ingest", "--mode", "raw", "--session-id", "s-orders", input=json.dumps(said))
    # what an older memctl kept: the command's password in a message and in the memory
    with ctx.db.atomic():
        ctx.db.execute("UPDATE messages SET content = ? WHERE session_id = 's-orders'", (SAID,))
        Writer(ctx.db).update(memory, {"content": SAID}, ctx.vectors([SAID])[0])
        ctx.db.execute("DELETE FROM meta WHERE key = ?", (RESCRUBBED_WITH,))
    with monkeypatch.context() as older:
        _an_older_filter(older)
        sync_api.sync(ctx, sync_api.SyncRequest())
    make_backup(ctx.settings, ctx.db)
    ctx.close()
    assert VALUE in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    assert "memctl.db" in files_holding(home, VALUE) and any(
        "backups/" in p for p in files_holding(home, VALUE)
    )
    assert VALUE in _ok(*at_home, "recall", "orders user broker", "--json")

    report = json.loads(_ok(*at_home, "maintain", "--json"))

    (task,) = [t for t in report["tasks"] if t["task"] == "rescrub"]
    assert task["counts"]["messages"] == 1 and task["counts"]["memories"] == 1
    assert task["counts"]["hidden.password"] >= 2 and task["counts"]["backups"] == 1
    assert VALUE not in json.dumps(report)
    assert files_holding(home, VALUE) == []  # store, WAL, backups, the sync clone, logs
    _ok(*at_home, "sync")  # the memory's file now says it was redacted
    assert VALUE not in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    got = json.loads(_ok(*at_home, "get", memory.id, "--json"))
    assert "add_user orders [REDACTED:password]" in got["content"]
    shown = _ok(*at_home, "sessions", "show", "s-orders")
    assert "[REDACTED:password]" in shown and VALUE not in shown
    events = _ok(*at_home, "events", "--json")
    assert "today's privacy filter" in events and VALUE not in events

    # the rescrub writes no memory event an undo could revert: nothing to undo, and
    # nothing brought back
    undone = run_cli(*at_home, "undo", report["run"])
    assert undone.returncode == 2 and "nothing is left to put back" in undone.stderr
    assert files_holding(home, VALUE) == []
    again = json.loads(_ok(*at_home, "maintain", "--only", "rescrub", "--json"))
    assert again["tasks"][0]["status"] == "skipped"


def test_a_store_already_scrubbed_by_today_s_filter_changes_nothing(tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    ctx = machine(tmp_path, "laptop", remote)
    home = ctx.settings.home
    said = {"messages": [{"role": "user", "content": SAID}, {"role": "assistant", "content": "ok"}]}
    at_home = ("--home", str(home), "-c", "llm=none")
    _ok(*at_home, "ingest", "--mode", "raw", "--session-id", "s-clean", input=json.dumps(said))
    _ok(*at_home, "remember", SAID)
    ctx.close()
    dry = json.loads(_ok(*at_home, "maintain", "--only", "rescrub", "--dry-run", "--json"))
    assert dry["tasks"][0]["counts"] == {"messages": 0, "sessions": 0, "memories": 0}
    report = json.loads(_ok(*at_home, "maintain", "--only", "rescrub", "--json"))
    assert report["tasks"][0]["counts"] == {"messages": 0, "sessions": 0, "memories": 0}
    ctx = machine(tmp_path, "laptop", remote)
    assert ctx.db.meta(RESCRUBBED_WITH) == filter_digest()


def test_an_imported_document_s_last_line_break_is_not_a_rescrub(tmp_path: Path) -> None:
    """The walk: a new store's first maintain said "6 messages" rescrubbed, every one an
    imported document's text whose last line break the rescrub dropped: nothing hidden."""
    note = tmp_path / "runbook.md"
    note.write_text("# Deploys\n\nWe deploy with make release from main.\n", encoding="utf-8")
    _ok("-c", "llm=none", "import", str(note))
    report = json.loads(_ok("maintain", "--only", "rescrub", "--json"))
    assert report["tasks"][0]["status"] == "done"
    assert report["tasks"][0]["counts"]["messages"] == 0, report


def test_the_session_s_next_capture_hides_a_value_only_the_rescrub_found(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """Capture reads a transcript on from where it stopped: a password the rescrub found
    in an earlier turn (an older filter kept it), repeated bare in the next turn, was
    stored there (the label is in no turn the next capture reads). The rescrub keeps the
    session's followed digests as capture does."""
    said = [claude_record("user", "Add the orders user.", 0, "s-later")]
    said.append(claude_record("assistant", [{"type": "text", "text": SAID}], 1, "s-later"))
    later = [
        claude_record(
            "assistant", [{"type": "text", "text": f"Log in with {VALUE}."}], 2, "s-later"
        )
    ]
    transcript = tmp_path / "s-later.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in said))
    ctx = make_ctx()
    ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    with ctx.db.atomic():  # what an older memctl kept
        ctx.db.execute("UPDATE messages SET content = ? WHERE seq = 2", (SAID,))
        ctx.db.execute("DELETE FROM followed_secrets")  # it knew no value to follow
    assert maintain(ctx, only="rescrub").tasks[0].counts["messages"] == 1
    with transcript.open("a") as file:
        file.write("".join(json.dumps(line) + "\n" for line in later))
    ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    assert ctx.db.value("SELECT count(*) FROM messages WHERE session_id = 's-later'") == 3
    ctx.close()
    assert files_holding(home, VALUE) == []


SHORT = "Pw0rd7"  # shorter than any value taken out of every text (store.forget.MIN_NEEDLE)
POWER = f"The bmc is checked with ipmitool -H bmc1 -U admin -P {SHORT} power status."


def test_a_short_password_leaves_the_memory_s_questions_and_events(
    make_ctx: Callable[..., Context], home: Path
) -> None:
    """A value under 8 characters is taken out of no text but its own rows: the memory's
    own questions quoting it, and the events quoting its old text, go with it."""
    ctx = make_ctx()
    asked = (f"how is the bmc checked with ipmitool -P {SHORT}?",)
    request = memory_api.RememberRequest("The bmc is checked with ipmitool.", questions=asked)
    memory = memory_api.remember(ctx, request).memory
    with ctx.db.atomic():  # what an older memctl kept
        ctx.db.execute("UPDATE memory_questions SET text = ?", asked)
        Writer(ctx.db).update(memory, {"content": POWER}, ctx.vectors([POWER])[0])
    assert ctx.db.value("SELECT count(*) FROM memory_questions") == 1
    assert maintain(ctx, only="rescrub").tasks[0].counts["memories"] == 1
    assert ctx.db.value("SELECT count(*) FROM memory_questions") == 0
    ctx.close()
    assert files_holding(home, SHORT) == []


TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape


def test_an_mcp_client_s_name_or_session_an_older_memctl_kept_is_dropped(
    make_ctx: Callable[..., Context], home: Path
) -> None:
    """Before s37-leak, MCP ``memory_store`` kept a client's name and a call's session
    verbatim, a token in them too: the rescrub drops such an id (the memory stays)."""
    ctx = make_ctx()
    memory = memory_api.remember(ctx, memory_api.RememberRequest("The shop uses make.")).memory
    with ctx.db.atomic():
        ctx.db.execute(
            "UPDATE memories SET agent_id = ?, session_id = ?", (f"bot {TOKEN}", f"s-{TOKEN}")
        )
    counts = maintain(ctx, only="rescrub").tasks[0].counts
    assert counts["memories"] == 1 and counts["hidden.secret"] == 2
    got = memory_api.get(ctx, memory.id).memory
    assert got.agent_id is None and got.session_id is None and got.content == memory.content
    ctx.close()
    assert files_holding(home, TOKEN) == []


OTHER = "Zebra9Quartz7"
OTHER_SAID = f"To add the user run rabbitmqctl add_user billing {OTHER} on the broker."


def test_a_backup_s_own_text_is_read_and_what_the_store_read_clean_is_not_needed_again(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """A backup is read only where its texts differ from what the store read clean: a
    password the backup alone holds (a session the store no longer has as it was) still
    leaves it, and the store's own leaves every backup."""
    ctx = make_ctx()
    for name in ("s-kept", "s-older"):
        said = [claude_record("user", f"Add the {name} user.", 0, name)]
        said.append(claude_record("assistant", [{"type": "text", "text": "Done."}], 1, name))
        transcript = tmp_path / f"{name}.jsonl"
        transcript.write_text("".join(json.dumps(line) + "\n" for line in said))
        ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    with ctx.db.atomic():  # what an older memctl kept
        ctx.db.execute(
            "UPDATE messages SET content = ? WHERE session_id = 's-kept' AND seq = 1", (SAID,)
        )
        ctx.db.execute("DELETE FROM meta WHERE key = ?", (RESCRUBBED_WITH,))
    backup = make_backup(ctx.settings, ctx.db)
    copy = Database.open(backup, home=home)
    with copy.atomic():  # the backup alone holds this one
        copy.execute(
            "UPDATE messages SET content = ? WHERE session_id = 's-older' AND seq = 1",
            (OTHER_SAID,),
        )
    copy.close()
    counts = maintain(ctx, only="rescrub").tasks[0].counts
    assert counts["messages"] == 1 and counts["backups"] == 1
    ctx.close()
    assert files_holding(home, VALUE) == [] and files_holding(home, OTHER) == []
    copy = Database.open(backup, home=home)
    held = copy.value("SELECT count(*) FROM messages WHERE content LIKE '%[REDACTED:password]%'")
    copy.close()
    assert held == 2


@pytest.mark.parametrize(
    ("tasks", "rescrubbed"),
    [("decay,upkeep", True), ("decay,-rescrub", False), ("rescrub,decay", True)],
)
def test_a_user_s_own_task_list_rescrubs_unless_it_names_the_rescrub_off(
    make_ctx: Callable[..., Context], home: Path, tasks: str, rescrubbed: bool
) -> None:
    """A list written before the rescrub existed still has an older filter's secret taken
    out; only ``-rescrub`` in it turns that off."""
    ctx = make_ctx(maintain__tasks=tasks)
    memory_api.remember(ctx, memory_api.RememberRequest("The broker takes users."))
    with ctx.db.atomic():  # what an older memctl kept
        ctx.db.execute("UPDATE memories SET content = ?", (SAID,))
    ran = [t.task for t in maintain(ctx).tasks]
    assert ("rescrub" in ran) is rescrubbed and ran[-1] in tasks and "jobs" not in ran
    ctx.close()
    assert (files_holding(home, VALUE) == []) is rescrubbed


def test_a_task_named_off_must_be_one() -> None:
    with pytest.raises(UsageError, match="unknown maintain task 'rescrb'"):
        configured_tasks("decay,-rescrb")


AT = "2026-12-01T00:00:00Z"


def _a_model_states(db: Database, memory_id: str, subject: str, said: str, obj: str) -> None:
    """A triple an LLM wrote of the memory, its ends found or made by their names."""
    ends = [graph.add_entity(db, name, name.casefold(), "thing", AT) for name in (subject, obj)]
    graph.add_source(db, graph.add_triple(db, ends[0], said, ends[1], AT), memory_id, "", "llm")


def test_the_graph_s_texts_and_the_hooks_records_leave_their_secrets(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """What an LLM or the host wrote into the graph (a triple naming a short password, an
    entity of a labelled value) and the hooks' records of a failed capture (a pending
    mark's error, a missed record's session) go through today's filter too; the pending
    mark stays, naming its transcript."""
    ctx = make_ctx()
    memory = memory_api.remember(ctx, memory_api.RememberRequest("The bmc is checked.")).memory
    with ctx.db.atomic():  # what an older memctl kept, and a model wrote of it
        Writer(ctx.db).update(memory, {"content": POWER}, ctx.vectors([POWER])[0])
        _a_model_states(ctx.db, memory.id, "bmc1", "logs in with", SHORT)
        graph.add_entity(ctx.db, f"password={OTHER}", f"password={OTHER}".casefold(), "thing", AT)
        ctx.db.execute("DELETE FROM meta WHERE key = ?", (RESCRUBBED_WITH,))
    transcript = str(tmp_path / "t.jsonl")
    failed = f"OSError: rabbitmqctl add_user orders {VALUE} failed"
    pending.remember(
        home,
        pending.Pending(transcript, "claude-code", "s-1", str(tmp_path), -1, 0.0, error=failed),
    )
    hooks_state.mark_missed(home, "cursor", "stop", f"no transcript of session 's-{TOKEN}' found")

    counts = maintain(ctx, only="rescrub").tasks[0].counts

    assert counts["memories"] == 1 and counts["graph"] == 1
    assert counts["pending_marks"] == 1 and counts["missed"] == 1
    assert ctx.db.value("SELECT count(*) FROM entities WHERE name = 'bmc1'") == 1
    ctx.close()
    for value in (SHORT, SHORT.casefold(), OTHER, OTHER.casefold(), VALUE, TOKEN):
        assert files_holding(home, value) == [], value  # an alias's key is case folded
    assert pending.marked(home, transcript)


def test_what_an_older_filter_left_of_a_two_line_secret_or_a_passphrase_goes(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """s38-leak's shapes as main stored them: an answer alone to a question naming the
    password, a value on the line under its label, and the words a passphrase kept beside
    its first word's mark."""
    kept = [
        "What is the staging database password?",
        "Granite6Basalt1",
        "config:\n  password:\n    Birch3Cedar7Ash",
        "wifi password: [REDACTED:password] battery staple",
    ]
    said = [claude_record("user", f"turn {n}", n, "s-two-lines") for n in range(len(kept))]
    transcript = tmp_path / "s-two-lines.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in said))
    ctx = make_ctx()
    ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    with ctx.db.atomic():  # what an older memctl kept
        for seq, text in enumerate(kept, 1):
            ctx.db.execute("UPDATE messages SET content = ? WHERE seq = ?", (text, seq))
    assert maintain(ctx, only="rescrub").tasks[0].counts["messages"] == 3
    ctx.close()
    for value in ("Granite6Basalt1", "Birch3Cedar7Ash", "battery"):
        assert files_holding(home, value) == []


def test_a_value_s_head_an_older_memctl_stored_cut_short_goes_with_it(
    make_ctx: Callable[..., Context], home: Path
) -> None:
    """A digest an older memctl wrote quotes the password's head cut short ("Tr0ub4dor…"),
    where today's filter sees no value: the head goes with the value its message holds."""
    said = {"messages": [{"role": "user", "content": "how do I add the orders user?"}]}
    _ok("ingest", "--mode", "raw", "--session-id", "s-orders", input=json.dumps(said))
    ctx = make_ctx()
    cut = f"Asked: log in as orders with {VALUE[:9]}…"
    memory = memory_api.remember(ctx, memory_api.RememberRequest(cut)).memory
    with ctx.db.atomic():  # what an older memctl kept
        ctx.db.execute("UPDATE messages SET content = ?", (SAID,))
        ctx.db.execute("DELETE FROM meta WHERE key = ?", (RESCRUBBED_WITH,))
    ctx.close()
    assert files_holding(home, VALUE[:9])

    report = json.loads(_ok("maintain", "--only", "rescrub", "--json"))

    assert report["tasks"][0]["counts"]["memories"] == 1
    assert files_holding(home, VALUE[:6]) == []
    got = json.loads(_ok("get", memory.id, "--json"))
    assert got["content"] == "Asked: log in as orders with [REDACTED:password]"


def test_a_short_password_leaves_a_predicate_memctl_lower_cased(
    make_ctx: Callable[..., Context], home: Path
) -> None:
    """A model's triple keeps its predicate lower-cased (``ingest.graph.parse_triples``):
    the short password a changed memory states ("-P Pw0rd7") stayed in "uses pw0rd7 for"."""
    ctx = make_ctx()
    memory = memory_api.remember(ctx, memory_api.RememberRequest("The bmc is checked.")).memory
    with ctx.db.atomic():  # what an older memctl kept, and a model wrote of it
        Writer(ctx.db).update(memory, {"content": POWER}, ctx.vectors([POWER])[0])
        _a_model_states(ctx.db, memory.id, "bmc1", f"logs in with {SHORT} for".lower(), "ops team")
        ctx.db.execute("DELETE FROM meta WHERE key = ?", (RESCRUBBED_WITH,))
    ctx.close()

    report = json.loads(_ok("maintain", "--only", "rescrub", "--json"))

    assert report["tasks"][0]["counts"]["memories"] == 1
    assert files_holding(home, SHORT.casefold()) == []


def test_a_shared_memory_whose_triple_held_a_secret_is_sent_again_by_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's triple names a password in its predicate and an entity of a labelled
    value, the memory's text neither: the rescrub dropped those graph rows but changed no
    text of the memory, so no sync sent its file again and the remote (and the clone) kept
    the triples."""
    remote = bare_repo(tmp_path)
    ctx = machine(tmp_path, "laptop", remote)
    home = ctx.settings.home
    at_home = ("--home", str(home), "-c", f"sync.remote={remote}", "-c", "llm=none")
    sync_api.init(ctx, str(remote))
    memory = shared(ctx, "The bmc is checked before each release.")
    other = shared(ctx, "The broker's admin user is kept by the ops team.")
    with ctx.db.atomic():  # what an older memctl's graph read of a model's facts
        _a_model_states(
            ctx.db, memory.id, "bmc1", f"is checked with ipmitool -P {SHORT} by", "ops team"
        )
        _a_model_states(ctx.db, other.id, "ops team", "keeps", f"password={OTHER}")
        for each in (memory, other):
            graph.mark_indexed(ctx.db, each.id, each.content_hash, RULES_VERSION)
        ctx.db.execute("DELETE FROM meta WHERE key = ?", (RESCRUBBED_WITH,))
    with monkeypatch.context() as older:
        _an_older_filter(older)
        older.setattr("memctl.sync.outgoing.triples_problem", lambda triples: None)
        sync_api.sync(ctx, sync_api.SyncRequest())
    ctx.close()
    for value in (SHORT, OTHER):
        assert value in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD"), value

    report = json.loads(_ok(*at_home, "maintain", "--only", "rescrub", "--json"))

    assert report["tasks"][0]["counts"]["graph"] == 2
    for value in (SHORT, OTHER):
        assert files_holding(home, value) == [], value  # the clone's files too
    _ok(*at_home, "sync")
    shared_now = git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    assert SHORT not in shared_now and OTHER not in shared_now
    assert "The bmc is checked before each release." in shared_now  # its file is still there
