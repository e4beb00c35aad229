"""Synced triples follow their file: what a sender's newer entity rules took back leaves
the receiver too (two data directories, a bare repository on disk, ``memctl`` processes).

Machine A's memory was read by older rules: beside "Dana → works at → Globex" they stated
two junk triples, and the host gave one. A shares it; B takes all four from A's file
(origin ``sync``), and a memory of B's own states one of the junk triples too (B's
model). A's ``maintain`` reads the memory again with the current rules and drops the
junk: A's next sync sends the file again with the triples left, and B's next sync takes
back what A's file no longer lists, but not what B's own memory states, nor Globex, nor
the host's triple."""

from __future__ import annotations

import json
import re
from pathlib import Path

from memctl.api.memory import RememberRequest, remember
from memctl.ingest.entities import RULES_VERSION, key
from memctl.ingest.graph import Reading, Written, parse_triples, read
from memctl.model import now_iso
from memctl.store import graph as graph_store
from memctl.store import memories as memory_store
from memctl.store.database import Database
from memctl.store.graph import HOST, LLM, RULES, SYNC
from tests.conftest import run_cli
from tests.syncing import bare_repo, git, machine, push_files, work_clone

NO_LLM = {"MEMCTL_LLM": "none"}
TEXT = "Dana works at Globex. The deploy notes live in the ops wiki."
AT = "2026-01-01T00:00:00Z"


def cli(home: Path, *args: str, code: int = 0) -> str:
    done = run_cli("--home", str(home), *args, env=NO_LLM)
    assert done.returncode == code, done.stderr
    return done.stdout


def _state(
    db: Database, subject: str, predicate: str, obj: str, memory_id: str, origin: str
) -> int:
    """``memory_id`` states the triple, by ``origin``."""
    ends = [graph_store.add_entity(db, n, key(n), "person", AT) for n in (subject, obj)]
    triple = graph_store.add_triple(db, ends[0], predicate, ends[1], AT)
    graph_store.add_source(db, triple, memory_id, "", origin)
    graph_store.add_mentions(db, ends, memory_id)
    return triple


def _read_by_older_rules(db: Database, memory_id: str) -> None:
    db.execute(
        "UPDATE graph_indexed SET rules = ? WHERE memory_id = ?", (RULES_VERSION - 1, memory_id)
    )


def _relations(home: Path, name: str) -> dict[str, set[str]]:
    """``memctl graph NAME``: each relation's text with the origins of its sources."""
    found = json.loads(cli(home, "graph", name, "--all-scopes", "--json"))
    return {
        f"{t['subject']} → {t['predicate']} → {t['object']}": {s["origin"] for s in t["sources"]}
        for t in found["relations"]
    }


def _two_machines(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare repository on disk and two data directories, A and B, syncing with it."""
    remote = bare_repo(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    cli(a, "sync", "init", str(remote))
    cli(b, "sync", "init", str(remote))
    return remote, a, b


def test_junk_a_sender_took_back_leaves_the_receiver(tmp_path: Path) -> None:
    remote, a, b = _two_machines(tmp_path)
    with machine(tmp_path, "a", remote) as ctx, ctx.db.atomic():
        memory_id = remember(ctx, RememberRequest(TEXT, scope="global")).memory.id
        # what older rules read in it, and what the host gave
        _state(ctx.db, "Deploy Notes", "live in", "Ops", memory_id, RULES)
        _state(ctx.db, "Dana", "uses", "Wiki", memory_id, RULES)
        _state(ctx.db, "Dana", "maintains", "Deploy Runbook", memory_id, HOST)
        _read_by_older_rules(ctx.db, memory_id)
    cli(a, "promote", memory_id)
    cli(a, "sync")
    cli(b, "sync")
    with machine(tmp_path, "b", remote) as ctx, ctx.db.atomic():
        own = remember(ctx, RememberRequest("Dana is on the platform team.", scope="global"))
        _state(ctx.db, "Dana", "uses", "Wiki", own.memory.id, LLM)  # B's model says so too
    dana = _relations(b, "Dana")
    assert dana == {
        "Dana → works at → Globex": {SYNC},
        "Dana → uses → Wiki": {SYNC, LLM},
        "Dana → maintains → Deploy Runbook": {SYNC},
    }
    assert _relations(b, "Ops") == {"Deploy Notes → live in → Ops": {SYNC}}

    report = json.loads(cli(a, "maintain", "--only", "graph", "--json"))
    assert report["tasks"][0]["counts"]["dropped"] == 2
    out = json.loads(cli(a, "sync", "--json"))
    assert out["went_out"]["written"] == 1
    text = git("--git-dir", str(remote), "show", f"HEAD:{_file_of(remote, memory_id)}")
    assert "Globex" in text and "Deploy Runbook" in text
    assert "Wiki" not in text and "Ops" not in text
    assert "Ops" in git("--git-dir", str(remote), "log", "-p")  # the old file: git's history

    came = json.loads(cli(b, "sync", "--json"))
    assert came["came_in"]["updated"] == 1
    assert _relations(b, "Dana") == {
        "Dana → works at → Globex": {SYNC},
        "Dana → uses → Wiki": {LLM},  # B's model stated it too: kept, by B's memory
        "Dana → maintains → Deploy Runbook": {SYNC},
    }
    assert _relations(b, "Ops") == {}  # nothing states it any more
    cli(b, "maintain", "--only", "graph")
    cli(b, "graph", "Ops", "--all-scopes", code=3)  # and nothing names it: gone
    runs = json.loads(cli(b, "runs", "--json"))
    assert any(r.get("counts", {}).get("triples_withdrawn") == 2 for r in runs)


def test_a_receivers_own_reread_sends_no_file(tmp_path: Path) -> None:
    """B's newer rules reading A's memory again change B's view (where B's model also gave
    it a triple A's file lacks), not A's file: only the host whose version won sends it
    again."""
    remote, a, b = _two_machines(tmp_path)
    with machine(tmp_path, "a", remote) as ctx:
        memory_id = remember(ctx, RememberRequest(TEXT, scope="global")).memory.id
    cli(a, "promote", memory_id)
    cli(a, "sync")
    cli(b, "sync")
    with machine(tmp_path, "b", remote) as ctx, ctx.db.atomic():
        _state(ctx.db, "Deploy Notes", "live in", "Ops", memory_id, RULES)
        _state(ctx.db, "Dana", "mentors", "Sam", memory_id, LLM)  # B's view differs from A's
        _read_by_older_rules(ctx.db, memory_id)
    report = json.loads(cli(b, "maintain", "--only", "graph", "--json"))
    assert report["tasks"][0]["counts"]["dropped"] == 1
    assert json.loads(cli(b, "sync", "--json"))["went_out"].get("written", 0) == 0


def _file_of(remote: Path, memory_id: str) -> str:
    files = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD").split()
    return next(f for f in files if memory_id in f)


def _synced(db: Database, memory_id: str, given: list[list[str]]) -> int:
    """A sync's read of ``memory_id`` whose file lists ``given``; how many it took back."""
    memory = memory_store.get_memory(db, memory_id)
    assert memory is not None
    item = Written(memory_id, memory.content, extra=parse_triples(given), origin=SYNC)
    return read(db, [item], Reading(AT)).withdrawn


def test_what_the_rules_read_or_history_stays_when_a_file_drops_it(tmp_path: Path) -> None:
    """A triple the file no longer lists but the receiver's rules read becomes the rules';
    a superseded one stays superseded (a file lists only its sender's active triples)."""
    with machine(tmp_path, "c", bare_repo(tmp_path)) as ctx:
        db: Database = ctx.db
        memory_id = remember(ctx, RememberRequest(TEXT, scope="global")).memory.id
        with db.atomic():
            given = [["Dana", "works at", "Globex"], ["Dana", "lives in", "Paris"]]
            assert _synced(db, memory_id, [*given, ["Dana", "uses", "Wiki"]]) == 0
            paris = graph_store.find_triple(
                db,
                graph_store.entity_id(db, key("Dana")) or 0,
                "lives in",
                graph_store.entity_id(db, key("Paris")) or 0,
            )
            assert paris is not None
            graph_store.supersede(db, paris, None)
            assert _synced(db, memory_id, []) == 1  # Wiki went
        origins = graph_store.sources_of(db, memory_id)
        assert origins[paris] == SYNC  # history kept, superseded
        works = [t for t, o in origins.items() if o == RULES]
        assert len(works) == 1 and len(origins) == 2  # Globex: the rules read it here


def test_a_file_without_triples_takes_nothing_back_and_an_empty_list_takes_all(
    tmp_path: Path,
) -> None:
    """A newer version of A's file from an older memctl (no `triples` key: it says nothing of
    the graph) leaves B's statements from A's earlier file; `triples: []` takes them back."""
    remote, a, b = _two_machines(tmp_path)
    with machine(tmp_path, "a", remote) as ctx, ctx.db.atomic():
        memory_id = remember(ctx, RememberRequest(TEXT, scope="global")).memory.id
        _state(ctx.db, "Dana", "maintains", "Deploy Runbook", memory_id, HOST)
    cli(a, "promote", memory_id)
    cli(a, "sync")
    cli(b, "sync")
    runbook = {"Dana → maintains → Deploy Runbook": {SYNC}}
    assert _relations(b, "Deploy Runbook") == runbook

    hand = work_clone(tmp_path, remote)
    path = _file_of(remote, memory_id)
    text = (hand / path).read_text()
    assert "triples:" in text
    lines = text.splitlines(keepends=True)
    kept = "".join(lines[: next(i for i, x in enumerate(lines) if x.startswith("triples:"))])
    older = re.sub(r"updated_at: \S+", f"updated_at: '{now_iso()}'", kept)
    push_files(hand, {path: older.replace("ops wiki", "ops handbook")}, "an older memctl")
    came = json.loads(cli(b, "sync", "--json"))
    assert came["came_in"]["updated"] == 1
    assert "ops handbook" in cli(b, "get", memory_id)
    assert _relations(b, "Deploy Runbook") == runbook  # not told otherwise: kept

    newer = re.sub(r"updated_at: \S+", f"updated_at: '{now_iso()}'", older)
    push_files(hand, {path: newer + "triples: []\n"}, "no triples any more")
    assert json.loads(cli(b, "sync", "--json"))["came_in"]["updated"] == 1
    assert _relations(b, "Deploy Runbook") == {}
