"""Reading the graph again when the entity rules change, and aliases kept to their scope.

An older store (schema 18, as the last memctl left it) holds what older rules read:
persons named by the capitals of developer text and a triple they made, beside a triple
the host gave and a superseded one. After the upgrade, ``maintain`` reads every memory
again: the rules' junk goes, the host's triple and the superseded history stay. A store
written by this memctl keeps where each triple came from (rules, llm, host, sync)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memctl.api.distil import DistilRequest, PendingRequest, distil, pending
from memctl.api.graph import find_entity
from memctl.api.maintain import MaintainRequest, maintain
from memctl.context import Context
from memctl.ingest.entities import RULES_VERSION, key
from memctl.ingest.graph import Written, index, parse_triples
from memctl.model import Memory
from memctl.store import graph as store
from memctl.store.database import Database
from memctl.store.writes import Writer
from tests.conftest import run_cli, store_at_version
from tests.ingest.test_ingest_host import captured
from tests.ingesting import claude_work_session

# What the rules before 2f89a50 read in developer text: capitals of a path, a label and
# a word-shaped sentence start named persons ("Users" of /Users/dain, "Uses" after
# "Key points:", "Removed").
JUNK = ("Users", "Uses", "Removed")
PERSONS = ("Bob", *JUNK)


def _entity(db: Database, name: str, kind: str) -> int:
    return store.add_entity(db, name, key(name), kind, "2026-01-01T00:00:00Z")


def _old_triple(db: Database, memory_id: str, subject: int, predicate: str, obj: int) -> int:
    """A triple and its source as schema 18 stored them: no origin."""
    triple = store.add_triple(db, subject, predicate, obj, "2026-01-01T00:00:00Z")
    db.execute(
        "INSERT INTO triple_sources(triple_id, memory_id) VALUES (?, ?)", (triple, memory_id)
    )
    return triple


def _old_store(home: Path) -> dict[str, Any]:
    """An older memctl's store: four memories read by older rules, one written by a host
    run (with the triple the host gave), Paris superseded by Berlin."""
    connection, db = store_at_version(home, 18)
    writer, host = Writer(db), Writer(db, run_id="r-host")
    db.execute(
        "INSERT INTO runs(id, kind, status, llm, started_at) "
        "VALUES ('r-host', 'ingest', 'done', 'host', '2026-01-01T00:00:00Z')"
    )
    paris = writer.create(Memory(content="Bob lives in Paris."), None)
    berlin = writer.create(Memory(content="Bob lives in Berlin."), None)
    notes = writer.create(
        Memory(
            content="Key points: Uses the scripts in /Users/dain/bin. The SessionLive view renders."
        ),
        None,
    )
    billing = host.create(
        Memory(content="Removed the old hook; the billing service runs on Nomad."), None
    )
    bob, users, uses, steps, view = (_entity(db, n, "person") for n in (*PERSONS, "SessionLive"))
    city = {n: _entity(db, n, "place") for n in ("Paris", "Berlin")}
    service, nomad = _entity(db, "billing service", "thing"), _entity(db, "Nomad", "thing")
    old = _old_triple(db, paris.id, bob, "lives in", city["Paris"])
    new = _old_triple(db, berlin.id, bob, "lives in", city["Berlin"])
    store.supersede(db, old, new)
    junk = _old_triple(db, notes.id, uses, "uses", users)
    _old_triple(db, billing.id, service, "runs on", nomad)  # the host's
    store.add_mentions(db, [bob, city["Paris"]], paris.id)
    store.add_mentions(db, [bob, city["Berlin"]], berlin.id)
    store.add_mentions(db, [users, uses, view], notes.id)
    store.add_mentions(db, [steps, service, nomad], billing.id)
    for memory in (paris, berlin, notes, billing):
        db.execute(
            "INSERT INTO graph_indexed(memory_id, content_hash) VALUES (?, ?)",
            (memory.id, memory.content_hash),
        )
    connection.close()
    return {"paris": paris.id, "notes": notes.id, "billing": billing.id, "junk": junk}


def _graph(*args: str) -> dict[str, Any]:
    shown = run_cli("graph", *args, "--all-scopes", "--json")
    assert shown.returncode == 0, shown.stderr
    return dict(json.loads(shown.stdout))


def _maintain_graph(*flags: str) -> dict[str, int]:
    done = run_cli("maintain", "--only", "graph", *flags, "--json")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)["tasks"][0]["counts"])


def test_an_older_store_is_read_again_keeping_the_hosts_triple_and_the_history(
    home: Path,
) -> None:
    old = _old_store(home)
    listed = {e["name"] for e in _graph()["entities"]}  # opening it migrates it
    assert set(JUNK) <= listed
    planned = _maintain_graph("--dry-run")
    assert {e["name"] for e in _graph()["entities"]} == listed  # a dry run changes nothing
    counts = _maintain_graph()
    assert counts == planned
    assert (counts["read"], counts["dropped"]) == (4, 1)  # every memory; the junk triple
    after = {e["name"] for e in _graph()["entities"]}
    assert not set(JUNK) & after and {"Bob", "Berlin", "Nomad"} <= after
    # a code identifier the older rules took for a person is a thing now, as in a new store
    assert _graph("SessionLive")["entity"]["kind"] == "thing"
    # the host's triple stays: stored before origins were kept, by a host run's memory
    (runs_on,) = _graph("Nomad")["relations"]
    assert runs_on["subject"] == "billing service"
    assert [(s["memory_id"], s["origin"]) for s in runs_on["sources"]] == [
        (old["billing"], "unknown")
    ]
    bob = _graph("Bob")  # the rules still read Paris: it stays superseded by Berlin
    assert [t["object"] for t in bob["relations"]] == ["Berlin"]
    (was,) = bob["history"]
    assert (was["object"], was["state"], was["superseded_by"]) == (
        "Paris",
        "superseded",
        bob["relations"][0]["id"],
    )
    assert was["sources"][0]["memory_id"] == old["paris"]
    assert _maintain_graph() == {}  # read once: nothing left to read


def _host_fact(ctx: Context) -> str:
    """The host distils a session with one fact and the triple it gives; the fact's id."""
    session_id = captured(ctx, claude_work_session())
    (task,) = pending(ctx, PendingRequest()).batches
    fact = {
        "content": "The shop deploys with make ship, never by hand. Next Steps: tag it.",
        "l0_abstract": "deploy: make ship",
        "category": "patterns",
        "source_message": 1,
        "triples": [["shop", "deploys with", "make ship"]],
    }
    distil(ctx, DistilRequest(session_id, task.through_seq, {"facts": [fact]}))
    made = ctx.db.value("SELECT memory_id FROM triple_sources WHERE origin = 'host'")
    assert made, "the host's triple was not stored as the host's"
    return str(made)


def test_new_rules_take_back_their_own_junk_and_keep_the_hosts_triples(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx(ingest__host_distil=True)
    fact = _host_fact(ctx)
    db = ctx.db
    with db.atomic():  # what older rules read in the fact, and the version that read it
        steps, tag = _entity(db, "Next Steps", "person"), _entity(db, "tag", "thing")
        junk = store.add_triple(db, steps, "uses", tag, "2026-01-01T00:00:00Z")
        store.add_source(db, junk, fact, "", store.RULES)
        store.add_mentions(db, [steps, tag], fact)
        db.execute("UPDATE graph_indexed SET rules = ? WHERE memory_id = ?", (0, fact))
    counts = maintain(ctx, MaintainRequest(only="graph")).tasks[0].counts
    assert (counts["read"], counts["dropped"]) == (1, 1)
    assert store.entity_id(db, "next steps") is None
    (kept,) = store.triples_touching(db, [store.entity_id(db, "make ship") or 0])
    assert kept.text == "shop → deploys with → make ship"
    assert [(s.memory_id, s.origin) for s in kept.sources] == [(fact, store.HOST)]
    version = db.value("SELECT rules FROM graph_indexed WHERE memory_id = ?", (fact,))
    assert version == RULES_VERSION


def _given(db: Database, scope: str, text: str, given: list[list[str]]) -> str:
    """A memory of ``scope`` with the triples a model gave with it."""
    with db.atomic():
        memory = Writer(db).create(Memory(content=text, scope=scope), None)
        index(db, [Written(memory.id, text, extra=parse_triples(given), origin=store.HOST)])
    return memory.id


def test_an_alias_merge_in_one_project_renames_nothing_in_another(ctx: Context) -> None:
    a, b = "repo:example.com/a", "repo:example.com/b"
    _given(ctx.db, a, "Checkout moved.", [["checkout", "runs on", "Phoenix 2"]])
    _given(ctx.db, b, "Billing is served.", [["billing", "runs on", "Phoenix"]])
    maintain(ctx, MaintainRequest(only="graph"))
    # project A never says "Phoenix": its Phoenix 2 keeps its name, B's Phoenix its own
    assert find_entity(ctx, "Phoenix 2", (a,)).name == "Phoenix 2"
    assert find_entity(ctx, "Phoenix", (b,)).aliases == ("Phoenix",)
    _given(ctx.db, a, "Search runs too.", [["search", "runs on", "Phoenix"]])
    counts = maintain(ctx, MaintainRequest(only="graph")).tasks[0].counts
    assert counts.get("merged") == 1  # every scope naming Phoenix 2 names Phoenix now
    phoenix = find_entity(ctx, "Phoenix 2", (a,))
    assert phoenix.name == "Phoenix"
    moved = store.triples_touching(ctx.db, [phoenix.id], scopes=(a,))
    assert {s.origin for t in moved for s in t.sources} == {store.HOST}  # still the host's
