"""Session messages' stored vectors (issue 33): made on the slow path, searched by recall's
sessions leg, made for a store from before them by maintain, and gone with what is
forgotten. Real SQLite files; the real model where meaning is what is tested."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.embed import Embedder
from memctl.ingest.message_vectors import (
    CHUNK_CHARS,
    MAX_PARTS,
    REPORT_PARTS,
    embed_messages,
    parts,
)
from memctl.ingest.parse.common import SUBAGENT_REPORT
from memctl.model import Category, Kind, Memory
from memctl.retrieve.pipeline import recall
from memctl.store.database import Database
from memctl.store.memories import MemoryFilter
from memctl.store.message_vectors import (
    message_vector_index,
    nearest_messages,
    quantised,
    unembedded_count,
)
from memctl.store.migrations import MIGRATIONS
from memctl.store.vector_query import Scores
from tests.conftest import run_cli, said_in_session, store_at_version

SAID = [
    "the staging database password rotates monthly",
    "I walked the dog in the park this morning",
    "Our CI pipeline takes forty minutes because the integration suite runs serially",
    "My sister moved to Lisbon last spring",
]
# more of a session: its digest's source spans more messages than a fact's
SESSION_END = ["ok, shard it", "done, pushed", "thanks!"]
# the slow path and maintain embed the messages only when recall reads their vectors
VECTORS_ON = ("-c", "recall.message_vectors=true")
VECTORS_OFF = ("-c", "recall.message_vectors=false")


def _digest(ctx: Context, content: str, session_id: str) -> Memory:
    """A session's digest, stored with its vector, its source the whole session's range."""
    from memctl.store.memories import insert_memory

    last = ctx.db.value("SELECT max(seq) FROM messages WHERE session_id = ?", (session_id,))
    digest = Memory(
        content=content,
        kind=Kind.EPISODIC,
        category=Category.EVENTS,
        tags=["digest", "session"],
        source=f"session:{session_id}#1-{last}",
        session_id=session_id,
    )
    with ctx.db.atomic():
        insert_memory(ctx.db, digest, ctx.vectors([content])[0])
    return digest


def _vector_rows(db: Database) -> int:
    return int(db.value("SELECT count(*) FROM message_vectors"))


def messages_with_vectors(ctx: Context, count: int, seed: int, unit: bool = False) -> np.ndarray:
    """``count`` messages of session s1, each with a random 64-d vector (of length 1 with
    ``unit``) stored int8, as the worker stores them: the vectors, as floats, in the
    messages' order."""
    from memctl.store.message_vectors import add_message_vectors, message_rowids

    said_in_session(ctx, [f"note {n}" for n in range(count)])
    floats = np.random.default_rng(seed).normal(size=(count, 64)).astype(np.float32)
    if unit:
        floats /= np.linalg.norm(floats, axis=1, keepdims=True)
    rowids = message_rowids(ctx.db)
    with ctx.db.atomic():
        ctx.db.ensure_vector_model(ctx.embedder.name, ctx.embedder.dim)
        add_message_vectors(
            ctx.db, [(rowids[("s1", n + 1)], 0, quantised(v)) for n, v in enumerate(floats)]
        )
    return floats


def test_a_long_message_is_embedded_in_parts_cut_between_words() -> None:
    text = " ".join(f"word{n}" for n in range(2_000))  # about 15,000 characters
    pieces = parts(text)
    assert len(pieces) == MAX_PARTS
    assert all(len(p) <= CHUNK_CHARS for p in pieces)
    assert " ".join(pieces).startswith("word0 word1 ") and pieces[1].startswith("word")
    assert parts("short and sweet") == ["short and sweet"]
    assert parts("[tool Edit: app.py]\nfixed the race in app.py") == ["fixed the race in app.py"]
    assert parts("x" * (CHUNK_CHARS + 5)) == ["x" * CHUNK_CHARS, "xxxxx"]


def test_a_sub_agents_report_is_embedded_in_more_parts_without_its_mark() -> None:
    sections = [
        f"## Section {n}\n" + " ".join(f"finding{n}x{k}" for k in range(90)) for n in range(12)
    ]
    report = f"{SUBAGENT_REPORT}\n" + "\n\n".join(sections)  # about 12,000 characters
    pieces = parts(report)
    assert len(pieces) == REPORT_PARTS > MAX_PARTS
    assert pieces[0].startswith("## Section 0") and "subagent" not in " ".join(pieces)
    assert any("finding5x0" in p for p in pieces)  # a section far past a message's two parts
    assert parts(f"{SUBAGENT_REPORT}\nAll 40 tests pass.") == ["All 40 tests pass."]


def test_of_the_tool_messages_only_a_sub_agents_report_waits_for_vectors(ctx: Context) -> None:
    from memctl.model import Message, Role
    from memctl.store import sessions

    _report_in_session(ctx, f"{SUBAGENT_REPORT}\nCorrupted archives are skipped with a warning.")
    with ctx.db.atomic():
        sessions.insert_messages(
            ctx.db,
            [
                Message(Role.TOOL, "[tool result Bash: 40 passed]", session_id="s1", seq=3),
                Message(Role.TOOL, "Corrupted archives are skipped.", session_id="s1", seq=4),
            ],
        )
    assert embed_messages(ctx.db, ctx.embedder, 100) == 2  # the user's message and the report
    embedded = ctx.db.tuples(
        "SELECT m.seq FROM message_vectors v JOIN messages m ON m.rowid = v.message_rowid"
    )
    assert sorted(int(seq) for (seq,) in embedded) == [1, 2]


def _report_in_session(ctx: Context, report: str) -> None:
    from memctl.model import Message, Role
    from memctl.store import sessions

    said_in_session(ctx, ["review the manifest generator"])
    with ctx.db.atomic():
        sessions.insert_messages(ctx.db, [Message(Role.TOOL, report, session_id="s1", seq=2)])


def test_a_reports_vectors_take_the_clear_label_from_its_words_said_in_another_sense(
    real_ctx: Context,
) -> None:
    modules = ("archive", "reader", "writer", "index", "cache", "checksum", "timestamp", "path")
    report = (
        f"{SUBAGENT_REPORT}\nI reviewed the manifest generator.\n\n"
        + " ".join(
            f"The {m} module reads its settings from the flat config file and writes the "
            "manifest entries in sorted order."
            for m in modules
        )
        + "\n\nOne change is needed: the nested archive reader must close its handles."
    )
    _report_in_session(real_ctx, report)
    unrelated = "how do I change a flat tyre"  # two of its three words, in another sense

    def label(query: str) -> bool | None:
        found = recall(real_ctx, query, touch=False, sessions=True).results
        return next((r.clear for r in found if r.memory.id == "s1#2"), None)

    assert label(unrelated) is True  # by its words alone, without a vector
    assert embed_messages(real_ctx.db, real_ctx.embedder, 100) == 2
    assert label(unrelated) is not True  # far in meaning: its words are no evidence alone
    assert label("which module writes the manifest entries in sorted order?") is True


def test_a_message_said_in_other_words_is_found_through_its_stored_vector(
    home: Path, local_embedder: Embedder
) -> None:
    on = load_settings(overrides={"recall.message_vectors": True})
    real_ctx = Context(on, embedder=local_embedder)
    said_in_session(real_ctx, SAID)
    question = "why are our builds so slow?"
    before = recall(real_ctx, question, touch=False, sessions=True)
    assert "s1#3" not in [r.memory.id for r in before.results]  # no word of it is said

    assert embed_messages(real_ctx.db, real_ctx.embedder, 100) == len(SAID)
    found = recall(real_ctx, question, touch=False, sessions=True)
    assert found.results[0].memory.id == "s1#3"
    assert found.results[0].memory.content == SAID[2]
    elsewhere = recall(real_ctx, "where does my sibling live now?", touch=False, sessions=True)
    assert elsewhere.results[0].memory.id == "s1#4"
    real_ctx.close()
    with Context(load_settings(), embedder=local_embedder) as auto:  # the default: auto
        assert recall(auto, question, touch=False, sessions=True).results[0].memory.id == "s1#3"
    off = load_settings(overrides={"recall.message_vectors": False})
    with Context(off, embedder=local_embedder) as words_only:
        alone = recall(words_only, question, touch=False, sessions=True)
    assert "s1#3" not in [r.memory.id for r in alone.results]


def test_a_message_found_by_its_meaning_lifts_its_sessions_digest(
    home: Path, local_embedder: Embedder
) -> None:
    """Found by its vector alone, a message of a distilled session gives its place to the
    session's digest (which says what the session did) and is named among its members; a
    session with no memory (not distilled) keeps its message as the answer."""

    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        said_in_session(on, [*SAID[:3], *SESSION_END], "s1")
        said_in_session(on, SAID[3:], "s2")
        digest = _digest(on, "Session: the integration suite; Outcome: split into shards", "s1")
        assert embed_messages(on.db, on.embedder, 100) == len(SAID) + len(SESSION_END)
        slow = recall(on, "why are our builds so slow?", touch=False, sessions=True)
        ids = [r.memory.id for r in slow.results]
        assert ids[0] == digest.id and "s1#3" not in ids
        assert "s1#3" in slow.results[0].members
        sister = recall(on, "where does my sibling live now?", touch=False, sessions=True)
        assert sister.results[0].memory.id == "s2#1"
        assert sister.results[0].memory.content == SAID[3]


def test_the_message_a_memory_came_from_takes_no_lead_from_it(
    home: Path, local_embedder: Embedder
) -> None:
    """The memory closest in meaning to a question in other words is a clear match when it
    leads the other memories; the message it was distilled from, as close as it, is no
    rival (with message vectors on, the two used to tie and the memory was only possible)."""
    from memctl.store.memories import insert_memory

    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        said_in_session(on, SAID)
        memories = [
            Memory(content=SAID[2], source="session:s1#3:user", session_id="s1"),
            Memory(content="Grandma's lasagne needs three layers of pasta"),
            Memory(content="the office plant gets water on Mondays"),
        ]
        with on.db.atomic():
            vectors = on.vectors([m.content for m in memories])
            for memory, vector in zip(memories, vectors, strict=True):
                insert_memory(on.db, memory, vector)
        embed_messages(on.db, on.embedder, 100)
        found = recall(on, "why are our builds so slow?", touch=False, sessions=True)
    first = found.results[0]
    assert first.memory.id == memories[0].id and first.clear
    assert "s1#3" in first.members


def test_the_int8_search_keeps_the_float_order(ctx: Context) -> None:
    """Quantised vectors rank as their floats do: the nearest 3 of 300 random ones in order
    (the 5th and 6th of these differ in the third decimal: a tie for int8)."""
    floats = messages_with_vectors(ctx, 300, seed=7, unit=True)
    query = floats[42] + 0.5 * floats[7]
    query /= np.linalg.norm(query)
    index = message_vector_index(ctx.db)
    found = nearest_messages(index, Scores(index, query), 3, MemoryFilter())
    expected = [f"s1#{n + 1}" for n in np.argsort(-(floats @ query))[:3]]
    assert [hit.key for hit, _ in found] == expected


def test_rows_rescored_a_block_at_a_time_score_as_the_whole_matrix(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above EXACT_UP_TO rows only the sign-bit prefilter's best are rescored, gathered and
    cast CAST_ROWS at a time into one buffer: each gets its whole-matrix similarity (here
    blocks of 7 over 300 rows, some rows asked for out of order, one twice)."""
    from memctl.store import vector_query

    monkeypatch.setattr(vector_query, "CAST_ROWS", 7)
    monkeypatch.setattr(vector_query, "EXACT_UP_TO", 10)
    floats = messages_with_vectors(ctx, 300, seed=11)
    index = message_vector_index(ctx.db)
    query = floats[5] / np.linalg.norm(floats[5])
    scores = Scores(index, query)
    assert not scores.exact
    positions = np.array([*range(0, 300, 3), 299, 4, 4])
    (segment,) = index.segments
    rows = segment.matrix.astype(np.float32)
    expected = (rows @ query) / np.linalg.norm(rows, axis=1)
    assert np.allclose(scores.of(positions), expected[positions], atol=1e-6)
    found = nearest_messages(index, scores, 1, MemoryFilter())
    assert found[0][0].key == "s1#6"


def test_the_sign_bit_prefilter_never_brings_back_a_replaced_row(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above EXACT_UP_TO rows the prefilter keeps the rows nearest by sign bits; a row
    replaced or removed since its segment was written (dead) is never among them, even
    when it is the query itself."""
    from memctl.store import vector_query

    monkeypatch.setattr(vector_query, "EXACT_UP_TO", 10)
    monkeypatch.setattr(vector_query, "RESCORE_MIN", 40)
    floats = messages_with_vectors(ctx, 300, seed=5)
    index = message_vector_index(ctx.db)
    index.dead[[5, 9]] = True  # as after those two messages' vectors were replaced
    query = floats[5] + 0.8 * floats[7]
    query /= np.linalg.norm(query)
    found = nearest_messages(index, Scores(index, query), 20, MemoryFilter())
    keys = [hit.key for hit, _ in found]
    assert keys[0] == "s1#8" and len(keys) == 20
    assert "s1#6" not in keys and "s1#10" not in keys


def test_int8_rows_keep_their_lengths_and_a_segment_from_before_ranks_the_same(
    ctx: Context,
) -> None:
    """The segment stores each int8 row's length (rescoring need not measure it); a segment
    written before lengths were kept (its header's flag 0) is still read, and ranks alike."""
    from memctl.store.vector_index import HEADER, MESSAGE_VECTORS, VectorIndex

    floats = messages_with_vectors(ctx, 50, seed=3)
    index = message_vector_index(ctx.db)
    (segment,) = index.segments
    assert segment.lengths is not None
    expected = np.linalg.norm(segment.matrix.astype(np.float32), axis=1)
    assert np.allclose(segment.lengths, expected, rtol=1e-5)
    query = floats[9] / np.linalg.norm(floats[9])
    with_lengths = nearest_messages(index, Scores(index, query), 5, MemoryFilter())
    assert with_lengths[0][0].key == "s1#10"

    path = index.directory / segment.name
    data = bytearray(path.read_bytes())
    data[32:40] = bytes(8)  # the flag "lengths follow the vectors", as before it existed
    assert len(data) > HEADER
    path.write_bytes(bytes(data))
    before = VectorIndex(ctx.db, MESSAGE_VECTORS)
    before.refresh()
    assert before.segments[0].lengths is None
    found = nearest_messages(before, Scores(before, query), 5, MemoryFilter())
    assert [h.key for h, _ in found] == [h.key for h, _ in with_lengths]
    assert np.allclose([d for _, d in found], [d for _, d in with_lengths], atol=1e-6)


def _transcript(tmp_path: Path) -> Path:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        "".join(
            json.dumps({"role": role, "content": text}) + "\n"
            for role, text in [
                ("user", SAID[0]),
                ("assistant", "[tool Bash: ls -la]"),
                ("tool", "total 0"),
                ("assistant", SAID[2]),
            ]
        ),
        encoding="utf-8",
    )
    return transcript


def test_the_worker_embeds_a_sessions_messages_after_its_job(home: Path, tmp_path: Path) -> None:
    """By default (auto, a store of a few messages) the worker embeds them."""
    done = run_cli("ingest", "--transcript", str(_transcript(tmp_path)), "--wait")
    assert done.returncode == 0, done.stderr
    db = Database.open(home / "memctl.db")
    # the user's and the assistant's words; a tool call's note and its output are not said
    assert _vector_rows(db) == 2
    assert unembedded_count(db) == 0
    db.close()


def test_past_autos_limit_the_worker_drops_the_vectors_and_makes_none(
    home: Path, tmp_path: Path
) -> None:
    """auto: a store holding more messages than recall.message_vectors_up_to has none (its
    cost stays words alone); on, maintain embeds whatever the store holds."""
    first = run_cli("ingest", "--transcript", str(_transcript(tmp_path)), "--wait")
    assert first.returncode == 0, first.stderr
    db = Database.open(home / "memctl.db")
    assert _vector_rows(db) == 2
    said = run_cli("status").stdout
    assert "messages: 2 parts (auto: kept while the store holds at most 100,000" in said
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"role": "user", "content": SAID[1]}) + "\n", encoding="utf-8")
    limit = ("-c", "recall.message_vectors_up_to=4")  # the store now holds 5 messages
    grown = run_cli(*limit, "ingest", "--transcript", str(more), "--wait")
    assert grown.returncode == 0, grown.stderr
    assert _vector_rows(db) == 0 and unembedded_count(db) == 3
    said = " ".join(run_cli(*limit, "status").stdout.split())
    assert "messages: 0 parts (auto: more than 4 messages: found by their words alone)" in said
    again = run_cli(*limit, *VECTORS_ON, "maintain", "--only", "upkeep")
    assert again.returncode == 0, again.stderr
    assert _vector_rows(db) == 3 and unembedded_count(db) == 0
    db.close()


def _store_from_before(home: Path) -> Path:
    """A store at the schema before message vectors (m016), holding a session of SAID."""
    connection, old = store_at_version(home, 16)
    at = "2026-01-05T10:00:00Z"
    old.execute(
        "INSERT INTO sessions (id, client, scope, created_at, updated_at) "
        "VALUES ('old', 'generic', 'global', ?, ?)",
        (at, at),
    )
    for n, text in enumerate(SAID, 1):
        old.execute(
            "INSERT INTO messages (session_id, seq, role, content, created_at, content_hash) "
            "VALUES ('old', ?, 'user', ?, ?, ?)",
            (n, text, at, f"hash{n}"),
        )
    connection.close()
    return home / "memctl.db"


def test_a_store_from_before_has_its_messages_embedded_by_maintain(home: Path) -> None:
    path = _store_from_before(home)
    off = run_cli(*VECTORS_OFF, "maintain", "--json")  # recall does not read them: none made
    assert off.returncode == 0 and "messages_embedded" not in off.stdout
    done = run_cli("maintain", "--json")  # auto: a store of a few messages has them
    assert done.returncode == 0, done.stderr
    assert "messages_embedded" in done.stdout
    db = Database.open(path)
    assert db.value("PRAGMA user_version") == len(MIGRATIONS)
    assert _vector_rows(db) == len(SAID) and unembedded_count(db) == 0
    db.close()
    again = run_cli(*VECTORS_ON, "maintain", "--json")  # nothing left: nothing embedded twice
    assert again.returncode == 0 and "messages_embedded" not in again.stdout


def test_maintain_embeds_a_bounded_number_of_messages_per_run(
    make_ctx: Callable[..., Context], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memctl.maintain import upkeep
    from memctl.maintain.pipeline import maintain

    ctx = make_ctx(recall__message_vectors=True)
    said_in_session(ctx, SAID)
    monkeypatch.setattr(upkeep, "MESSAGES_PER_RUN", 3)
    first = maintain(ctx, only="upkeep")
    report = first.task("upkeep")
    assert report is not None
    assert report.counts["messages_embedded"] == 3
    assert any("1 session messages wait" in note for note in report.notes)
    assert unembedded_count(ctx.db) == 1
    maintain(ctx, only="upkeep")
    assert unembedded_count(ctx.db) == 0


def test_maintain_drops_the_vectors_of_a_store_grown_past_autos_limit(
    make_ctx: Callable[..., Context],
) -> None:
    """auto: maintain backfills a store within recall.message_vectors_up_to; grown past it,
    a dry run says how many vectors would go, a run drops them, and recall finds the
    messages by their words alone; off leaves the vectors it finds."""
    from memctl.maintain.pipeline import maintain

    ctx = make_ctx(recall__message_vectors_up_to=len(SAID))
    said_in_session(ctx, SAID)
    first = maintain(ctx, only="upkeep").task("upkeep")
    assert first is not None and first.counts["messages_embedded"] == len(SAID)
    said_in_session(ctx, ["we ship the billing service on Fridays"], "s2")
    planned = maintain(ctx, only="upkeep", dry_run=True).task("upkeep")
    assert planned is not None and planned.counts["message_vectors_dropped"] == len(SAID)
    assert _vector_rows(ctx.db) == len(SAID)
    off = make_ctx(recall__message_vectors=False, recall__message_vectors_up_to=1)  # same store
    maintain(off, only="upkeep")
    assert _vector_rows(ctx.db) == len(SAID)
    done = maintain(ctx, only="upkeep").task("upkeep")
    assert done is not None and done.counts["message_vectors_dropped"] == len(SAID)
    assert "messages_embedded" not in done.counts
    assert _vector_rows(ctx.db) == 0 and unembedded_count(ctx.db) == len(SAID) + 1
    found = recall(ctx, "billing service", touch=False, sessions=True)
    assert found.results[0].memory.id == "s2#1"


def test_the_switch_takes_auto_on_off_and_true_false(home: Path) -> None:
    from memctl.errors import ConfigError

    for given, meant in [("auto", "auto"), (True, "on"), ("true", "on"), ("OFF", "off")]:
        settings = load_settings(overrides={"recall.message_vectors": given})
        assert settings.recall_message_vectors == meant
    with pytest.raises(ConfigError, match="expected one of auto, on, off"):
        load_settings(overrides={"recall.message_vectors": "sometimes"})
    bad = run_cli("-c", "recall.message_vectors=sometimes", "recall", "anything")
    assert bad.returncode != 0 and "expected one of auto, on, off" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_forgotten_messages_take_their_vectors_with_them(ctx: Context) -> None:
    from memctl.store.forget import erase_quotes, forget_messages

    said_in_session(ctx, SAID)
    said_in_session(ctx, ["we ship the billing service on Fridays"], "s2")
    embed_messages(ctx.db, ctx.embedder, 100)
    assert _vector_rows(ctx.db) == 5
    index = message_vector_index(ctx.db)
    assert len(index.rowids) == 5
    with ctx.db.atomic():
        forget_messages(ctx.db, "s1", [2], "2026-01-01T00:00:00Z", bytes(32))  # one message
    assert _vector_rows(ctx.db) == 4
    with ctx.db.atomic():
        erase_quotes(ctx.db, ["integration suite"], "[REDACTED]")  # a redaction
    assert _vector_rows(ctx.db) == 3
    assert embed_messages(ctx.db, ctx.embedder, 100) == 1  # the redacted text, made again
    with ctx.db.atomic():
        forget_messages(ctx.db, "s1", None, "2026-01-01T00:00:00Z", bytes(32))  # the whole session
    assert _vector_rows(ctx.db) == 1
    rebuilt = message_vector_index(ctx.db)  # made again from the table: no copy stays
    assert len(rebuilt.rowids) == 1 and not rebuilt.dead.any()
    query = ctx.embedder.embed([SAID[0]])[0]
    hits = nearest_messages(rebuilt, Scores(rebuilt, query), 10, MemoryFilter())
    assert [hit.key for hit, _ in hits] == ["s2#1"]


QUESTION = "how do we rotate the staging database password?"


def _answer_past_the_words_leg(
    make_ctx: Callable[..., Context], digest_says: str
) -> tuple[Context, Memory]:
    """A store whose messages' BM25 leg (limit x 1 deep) holds only tool notes (never
    clear), and whose session s2 says the answer in its message 2, which only its stored
    vector finds (the closest message); s2's digest (returned) says ``digest_says``."""
    from memctl.store.message_vectors import add_message_vectors, message_rowids

    ctx = make_ctx(**{"recall.message_vectors": True, "recall.candidates": 1})
    notes = [f"[tool Bash: rotate staging database password {n}]" for n in range(15)]
    said_in_session(ctx, notes, "s1")
    answer = "Every month we rotate the staging database password with the vault command line"
    said_in_session(ctx, ["ok", answer, *SESSION_END], "s2")
    digest = _digest(ctx, digest_says, "s2")
    with ctx.db.atomic():
        ctx.db.ensure_vector_model(ctx.embedder.name, ctx.embedder.dim)
        close = quantised(np.frombuffer(ctx.vectors([QUESTION])[0], dtype=np.float32))
        add_message_vectors(ctx.db, [(message_rowids(ctx.db)[("s2", 2)], 0, close)])
    return ctx, digest


def test_a_message_clear_by_its_words_and_closest_in_meaning_stands_for_itself(
    make_ctx: Callable[..., Context],
) -> None:
    """The messages' BM25 leg missed the answer only for its depth: clear by its words and
    the closest message in meaning, it is shown itself, not its session's digest, which
    does not say it (provenance.leads_by_meaning; docs/benchmarks.md, "Answers said in
    other words")."""
    ctx, _ = _answer_past_the_words_leg(make_ctx, "Session: how the vault rotates keys")
    found = recall(ctx, QUESTION, touch=False, sessions=True)
    (first, *_) = [r for r in found.results if r.clear]
    assert first.memory.id == "s2#2" and first.is_message


def test_a_short_sessions_digest_is_not_folded_into_its_message(
    make_ctx: Callable[..., Context],
) -> None:
    """A session of two messages: its digest's source spans no more than a fact's may, yet
    it sums up the whole session and stands beside the message that holds more of the
    question's words, not folded into it (provenance.distilled_from)."""
    ctx = make_ctx()
    said_in_session(ctx, [QUESTION, "ok, doing it now"], "s3")
    digest = _digest(ctx, "Session: vault write -f database/rotate-root/staging", "s3")
    found = recall(ctx, QUESTION, touch=False, sessions=True)
    shown = [r.memory.id for r in found.results]
    assert "s3#1" in shown and digest.id in shown
    assert not any(digest.id in r.members for r in found.results)


@pytest.mark.parametrize(
    ("digest_says", "clear"),
    [
        ("Session: tidied the garden shed and sorted the seed packets", False),
        ("Session: how the vault rotates keys", True),
    ],
)
def test_a_message_found_by_its_meaning_lends_its_clear_label_only_to_a_memory_with_evidence(
    make_ctx: Callable[..., Context],
    monkeypatch: pytest.MonkeyPatch,
    digest_says: str,
    clear: bool,
) -> None:
    """A message its stored vector found and its words did not, clear by its words but not
    among the closest messages (``MEANING_LEADS`` 0 here): its session's digest stands for
    it. The digest is labelled clear only when it has some evidence of its own (one of the
    query's words, or a cosine above ``support_floor``): one that says nothing of the
    question is no clear match (docs/benchmarks.md, "A lent clear label needs evidence of
    the memory's own")."""
    from memctl.retrieve.stages import provenance

    monkeypatch.setattr(provenance, "MEANING_LEADS", 0)
    ctx, digest = _answer_past_the_words_leg(make_ctx, digest_says)
    found = recall(ctx, QUESTION, touch=False, sessions=True)
    shown = [r.memory.id for r in found.results]
    assert "s2#2" not in shown  # its session's digest stands for it
    clear_ones = [r for r in found.results if r.clear]
    if clear:
        assert [r.memory.id for r in clear_ones] == [digest.id]
        assert "s2#2" in clear_ones[0].members
        # its own evidence beside its session's clear message (fuse.corroborated)
        assert "a message of its session shows it" in clear_ones[0].match_why
    else:
        assert clear_ones == []
