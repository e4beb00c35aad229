"""A forgotten text in a memory it was not distilled from: an ingest MERGE adds a fact of
one session to a memory of another, a maintain merge writes a folded memory's text into
its survivor, and maintain consolidates an episode into facts. Forgetting the session (or
deleting the folded memory for good) puts the survivor back as it was before that merge
and deletes the consolidated fact; the text is in no file of the data directory. Real
SQLite files; real `memctl` processes, and a real HTTP server speaking the Ollama API for
what a model writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memctl.api.memory import delete_for_good
from memctl.context import Context
from memctl.ingest.corrections import CORRECTED_CONFIDENCE
from memctl.maintain.forgetting import forget_session
from memctl.model import Category, Kind, Relation, RelationType, State
from memctl.store import memories as store
from memctl.store.memories import MemoryFilter, session_memories
from memctl.store.relations import relations_of
from memctl.store.writes import Writer
from tests.conftest import run_cli, said_in_session
from tests.ingest.test_ingest_corrections import first_session, ingested, second_session
from tests.maintain.test_maintain import get, put, run
from tests.memories.test_forget_everywhere import BACKUPS, _files_holding, _ok, _transcript
from tests.ollama_server import FakeOllama

WORD = "quokka7marmalade"
TAG = "heronbridge"  # a tag a model gave a forgotten fact
KEPT = "I always use the vim editor for writing Python code at work."
ADDED = f"I always use the vim editor for writing Python code at work, with the {WORD} plugin."


def test_forgetting_a_session_takes_its_fact_out_of_the_memory_it_was_merged_into(
    home: Path, tmp_path: Path
) -> None:
    first = _transcript(tmp_path / "a.jsonl", [("user", KEPT), ("assistant", "Noted.")])
    second = _transcript(tmp_path / "b.jsonl", [("user", ADDED), ("assistant", "Noted.")])
    _ok("ingest", str(first), "--session-id", "first", "--wait")
    merged = json.loads(_ok("ingest", str(second), "--session-id", "second", "--wait", "--json"))
    assert merged["runs"][0]["counts"] == {"merge": 1}  # the fact went into the first's memory
    (memory,) = json.loads(_ok("list", "--json"))
    assert WORD in memory["content"]
    _ok(*BACKUPS, "maintain")

    done = json.loads(_ok("sessions", "forget", "second", "--yes", "--json"))

    got = json.loads(_ok("get", memory["id"], "--json"))
    assert got["content"] == KEPT
    assert [o["session_id"] for o in got["origins"]] == ["first"]  # no more from "second"
    assert _files_holding(home, WORD) == []  # nor in its events, the backup or the WAL
    assert done["reverted"] == [memory["id"]] and done["memories"] == []
    # the forget's run cannot be undone: it would write `[forgotten]` back as the text
    undone = run_cli("undo")
    assert undone.returncode == 2 and "forgot text for good" in undone.stderr, undone.stderr
    assert json.loads(_ok("get", memory["id"], "--json"))["content"] == KEPT


def test_deleting_a_memory_for_good_takes_its_text_out_of_the_merge_that_folded_it(
    make_ctx: Any, home: Path, ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url, maintain__merge_similarity=0.7)
    short = put(ctx, f"The deploy script lives in ops/deploy.sh next to {WORD}", 10)
    full = put(ctx, "The deploy script lives in ops/deploy.sh and needs AWS credentials", 10)
    ollama_server.script_chat({"content": f"Deploy with ops/deploy.sh ({WORD}); it needs AWS."})
    run(ctx, only="consolidate")
    assert WORD in get(ctx, full).content and get(ctx, short).superseded_by == full.id

    _, done = delete_for_good(ctx, short.id)

    assert get(ctx, full).content == full.content
    ctx.db.close()
    assert _files_holding(home, WORD) == []
    assert done.reverted == [full.id]


@pytest.mark.parametrize("how", ["sessions forget", "delete --permanent"])
def test_forgetting_an_episode_deletes_the_fact_maintain_consolidated_from_it(
    make_ctx: Any, home: Path, ollama_server: FakeOllama, how: str
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    said = f"Yesterday we moved billing to the {WORD} cluster."
    said_in_session(ctx, [said, "we deploy with make release"], "s9")
    source = {"source": "session:s9#1:user", "session_id": "s9"}
    episode = put(ctx, said, 5, kind=Kind.EPISODIC, category=Category.EVENTS, **source)
    fact = {"content": f"Billing runs on the {WORD} cluster.", "category": "entities"}
    ollama_server.script_chat({"facts": [fact]}, {"decisions": []})
    (change,) = run(ctx, only="consolidate").task("consolidate").changes
    (made,) = change["memories"]

    if how == "sessions forget":
        done = forget_session(ctx, "s9#1")
    else:
        done = delete_for_good(ctx, episode.id)[1]

    assert store.get_memory(ctx.db, made) is None and made in done.memories
    if how == "delete --permanent":  # the session's message stays: it was not forgotten
        left = store.list_memories(ctx.db, MemoryFilter(), None)
        assert WORD not in " ".join(m.content for m in left)
        return
    ctx.db.close()
    assert _files_holding(home, WORD) == []


def test_forgetting_a_session_takes_out_the_alias_it_gave_an_entity_others_name(
    home: Path, tmp_path: Path
) -> None:
    """ "PostgreSQL 16.9" became an alias of PostgreSQL, which another session names: the
    entity stays, the alias only the forgotten session said goes."""
    first = _transcript(
        tmp_path / "a.jsonl", [("user", "We deploy the billing service on PostgreSQL.")]
    )
    second = _transcript(
        tmp_path / "b.jsonl", [("user", "We upgraded billing to PostgreSQL 16.9 yesterday.")]
    )
    _ok("ingest", str(first), "--session-id", "first", "--wait")
    _ok("ingest", str(second), "--session-id", "second", "--wait")
    _ok("maintain")
    # the alias as said and as its key (case folded); not "16.9" alone: a time stored in
    # second 16 at .900 to .999 ("...T23:44:16.939Z": a job's, a run's) holds it too
    said = ["PostgreSQL 16.9", "postgresql 16.9"]
    assert all(_files_holding(home, alias) for alias in said)  # an alias of the entity

    _ok("sessions", "forget", "second", "--yes")

    assert [_files_holding(home, alias) for alias in said] == [[], []]
    assert "PostgreSQL" in _ok("graph", "postgresql")  # found by its own name still


def test_forgetting_the_session_that_superseded_a_memory_makes_it_current_again(
    ctx: Context,
) -> None:
    """ "I live in Porto now" (a SUPERSEDE of "I live in Lisbon") said in a session the user
    then forgets: Lisbon was superseded by a memory that is gone, so recall never showed it
    again. Nothing is lost: it is current again."""
    said_in_session(ctx, ["I live in Lisbon."], "old")
    said_in_session(ctx, ["I live in Porto now."], "new")
    lisbon = put(ctx, "I live in Lisbon.", 10, source="session:old#1:user", session_id="old")
    porto = put(ctx, "I live in Porto now.", 1, source="session:new#1:user", session_id="new")
    writer = Writer(ctx.db)
    with ctx.db.atomic():  # as ingest's SUPERSEDE writes it (ingest.apply)
        writer.supersede(lisbon, porto.id, "supersede", superseded_by=porto.id)
        writer.link(Relation(porto.id, lisbon.id, RelationType.SUPERSEDES))

    done = forget_session(ctx, "new")

    back = get(ctx, lisbon)
    assert (back.state, back.superseded_by, back.invalidated_at) == (State.ACTIVE, None, None)
    assert done.revived == [lisbon.id] and done.memories == [porto.id]


def test_undoing_the_ingest_of_a_forgotten_session_puts_back_nothing_and_says_so(
    home: Path, tmp_path: Path
) -> None:
    """After `sessions forget`, the run that stored the session can still be undone with
    --force, and has nothing left to put back: it says 0 changes, not one per memory the
    forget took for good."""
    said = _transcript(tmp_path / "a.jsonl", [("user", KEPT), ("assistant", "Noted.")])
    stored = json.loads(_ok("ingest", str(said), "--session-id", "first", "--wait", "--json"))
    assert stored["runs"][0]["counts"] == {"create": 1}
    _ok("sessions", "forget", "first", "--yes")
    undone = json.loads(_ok("undo", stored["runs"][0]["run"], "--force", "--json"))
    assert undone["reverted"] == 0
    assert json.loads(_ok("list", "--all-scopes", "--json")) == []


def test_a_forgotten_fact_leaves_the_memory_its_merge_was_folded_into_next(
    make_ctx: Any, home: Path, ollama_server: FakeOllama
) -> None:
    """Two steps: ingest merged session "second"'s fact into a memory of "first", then
    maintain folded that memory into another and wrote their text anew. Forgetting
    "second" puts both back as they were before, the folded one current again, and the
    text is in no file (events, backup, WAL)."""
    ctx = make_ctx(llm_url=ollama_server.url, maintain__merge_similarity=0.7)
    said_in_session(ctx, ["The deploy script lives in ops/deploy.sh"], "first")
    said_in_session(ctx, [f"The deploy script sits next to {WORD}"], "second")
    short = put(ctx, "The deploy script lives in ops/deploy.sh", 10, source="session:first#1:user")
    grown = f"The deploy script lives in ops/deploy.sh next to {WORD}"
    with ctx.db.atomic():  # as ingest's MERGE writes it (ingest.apply)
        Writer(ctx.db).update(
            short, {"content": grown}, ctx.vectors([grown])[0], source="session:second#1:user"
        )
    full = put(ctx, "The deploy script lives in ops/deploy.sh and needs AWS credentials", 10)
    other = put(ctx, "Our cat Miso sleeps on the warm router all afternoon", 10)
    with ctx.db.atomic():
        Writer(ctx.db).link(Relation(short.id, other.id, RelationType.RELATED))
    ollama_server.script_chat({"content": f"Deploy with ops/deploy.sh ({WORD}); it needs AWS."})
    run(ctx, only="consolidate")
    assert WORD in get(ctx, full).content and get(ctx, short).superseded_by == full.id
    assert {(r.dst_id, r.type) for r in relations_of(ctx.db, full.id)} == {
        (other.id, RelationType.RELATED),  # the fold moved it
        (short.id, RelationType.SUPERSEDES),
    }
    ctx.db.close()
    _ok(*BACKUPS, "maintain", "--only", "upkeep")

    done = json.loads(_ok("sessions", "forget", "second", "--yes", "--json"))

    assert _files_holding(home, WORD) == []
    assert done["reverted"] == sorted([short.id, full.id]) and done["revived"] == [short.id]
    assert len(done["backups_rewritten"]) == 1
    back = json.loads(_ok("get", short.id, "--json"))
    assert (back["content"], back["state"]) == (short.content, "active")
    got = json.loads(_ok("get", full.id, "--json"))
    assert (got["content"], got["relations"]) == (full.content, [])  # the fold's links went
    assert [(r["src_id"], r["dst_id"]) for r in back["relations"]] == [(short.id, other.id)]


def test_a_fact_maintain_drew_from_a_memory_after_it_took_in_the_text_goes_too(
    make_ctx: Any, home: Path, ollama_server: FakeOllama
) -> None:
    """Ingest merged session "second"'s message into an episode of "first", with the tags
    the model gave it; maintain then consolidated the episode into a fact stating the
    merged part. Forgetting "second" puts the episode back, its tags too, and the fact goes
    with it: it was drawn from the text that goes."""
    ctx = make_ctx(llm_url=ollama_server.url)
    said = "Yesterday we moved billing to the new cluster."
    said_in_session(ctx, [said], "first")
    said_in_session(ctx, [f"The new cluster is called {WORD}."], "second")
    source = {"source": "session:first#1:user", "session_id": "first"}
    episode = put(ctx, said, 5, kind=Kind.EPISODIC, category=Category.EVENTS, **source)
    grown = f"Yesterday we moved billing to the new cluster, called {WORD}."
    with ctx.db.atomic():  # as ingest's MERGE writes it (ingest.apply)
        Writer(ctx.db).update(
            episode,
            {"content": grown, "tags": ["billing", TAG]},  # the model tagged the merged fact
            ctx.vectors([grown])[0],
            source="session:second#1:user",
        )
    fact = {"content": f"Billing runs on the {WORD} cluster.", "category": "entities"}
    ollama_server.script_chat({"facts": [fact]}, {"decisions": []})
    (change,) = run(ctx, only="consolidate").task("consolidate").changes
    (made,) = change["memories"]

    done = forget_session(ctx, "second")

    back = get(ctx, episode)
    assert done.reverted == [episode.id] and (back.content, back.tags) == (said, [])
    assert store.get_memory(ctx.db, made) is None and made in done.memories
    ctx.db.close()
    assert _files_holding(home, WORD) == [] and _files_holding(home, TAG) == []


def test_forgetting_the_session_that_corrected_a_digest_gives_it_back_its_weight(
    make_ctx: Any,
) -> None:
    """A later session said the earlier one's claim was wrong ("/init did not create
    CLAUDE.md"): the digest was linked and weighed less. Once the correcting session is
    forgotten, nothing says so any more: the digest weighs as before."""
    ctx = make_ctx()
    first = ingested(ctx, first_session())
    (old,) = [m for m in session_memories(ctx.db, first) if "digest" in m.tags]
    second = ingested(ctx, second_session())
    assert get(ctx, old).confidence == pytest.approx(CORRECTED_CONFIDENCE)

    forget_session(ctx, second)

    assert get(ctx, old).confidence == pytest.approx(old.confidence)
    assert relations_of(ctx.db, old.id) == []
