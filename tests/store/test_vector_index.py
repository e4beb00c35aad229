"""The memory-mapped vector index: the same answers as sqlite-vec, kept in step with the store."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memctl.context import Context
from memctl.maintain.reembed import reembed
from memctl.memories import operations as memories
from memctl.model import Memory, State
from memctl.store import database, vector_query
from memctl.store.memories import MemoryFilter, insert_memory, vector_search, vectors_for
from memctl.store.vector_index import MAX_SEGMENTS, VectorIndex, distinct, vector_index
from memctl.store.vector_query import Scores
from tests.conftest import ROOT
from tests.fakes import HashEmbedder

WORDS = [f"w{i}" for i in range(300)]


def fill(ctx: Context, count: int, start: int = 0) -> list[str]:
    """Memories of six seeded random words each: distances rarely tie."""
    rng = random.Random(start)
    ids = []
    for i in range(start, start + count):
        text = " ".join(rng.sample(WORDS, 6))
        scope = "global" if i % 3 == 0 else None
        ids.append(memories.remember(ctx, text, scope=scope).id)
    return ids


def query_vector(ctx: Context, text: str) -> np.ndarray:
    return ctx.embedder.embed([text])[0]


def nearest(ctx: Context, text: str, limit: int, where: MemoryFilter) -> list[tuple[str, float]]:
    index = vector_index(ctx.db)
    return vector_query.nearest(index, Scores(index, query_vector(ctx, text)), limit, where)


def manifest(ctx: Context) -> dict[str, object]:
    return json.loads((ctx.settings.home / "memctl.db.vectors" / "manifest.json").read_text())


@pytest.mark.parametrize(
    "where",
    [
        MemoryFilter(),
        MemoryFilter(scopes=("global",)),
        MemoryFilter(states=(State.ARCHIVED,)),
    ],
    ids=["all", "one scope", "a rare state"],
)
def test_nearest_matches_sqlite_vec(ctx: Context, where: MemoryFilter) -> None:
    ids = fill(ctx, 150)
    for memory_id in ids[::10]:
        memories.forget(ctx, memory_id)
    for text in ("w1 w2 w3", "w10 w200 w17 w5", "w299"):
        ours = nearest(ctx, text, 12, where)
        theirs = vector_search(ctx.db, query_vector(ctx, text).tobytes(), 12, where)
        assert [d for _, d in ours] == pytest.approx([d for _, d in theirs], abs=1e-5)
        # equal distances may come in either order: compare the ids strictly inside the cut
        last = theirs[-1][1]
        assert {i for i, d in ours if d < last - 1e-5} == {i for i, d in theirs if d < last - 1e-5}


def test_appends_and_changes_become_small_segments(ctx: Context) -> None:
    ids = fill(ctx, 20)
    assert len(nearest(ctx, "w1", 50, MemoryFilter())) == 20
    fill(ctx, 5, start=20)
    assert len(nearest(ctx, "w1", 50, MemoryFilter())) == 25
    assert len(manifest(ctx)["segments"]) == 2  # type: ignore[arg-type]
    old_text = memories.get(ctx, ids[3])[0].content
    memories.update(ctx, ids[3], "zebra crossing")
    assert nearest(ctx, "zebra crossing", 1, MemoryFilter())[0] == (
        ids[3],
        pytest.approx(0.0, abs=1e-6),
    )
    index = manifest(ctx)
    assert len(index["segments"]) == 3 and list(index["dead"].values()) == [[3]]  # type: ignore[arg-type]
    assert nearest(ctx, old_text, 1, MemoryFilter())[0][0] != ids[3]  # the old copy is dead
    assert len(nearest(ctx, "w1", 50, MemoryFilter())) == 25


def test_compact_copies_the_live_rows_into_one_segment(ctx: Context) -> None:
    ids = fill(ctx, 20)
    nearest(ctx, "w1", 3, MemoryFilter())
    fill(ctx, 5, start=20)
    memories.update(ctx, ids[3], "zebra crossing")

    def found(text: str) -> list[tuple[float, str]]:  # equal distances come in any order
        return sorted((round(d, 5), i) for i, d in nearest(ctx, text, 25, MemoryFilter()))

    before = {text: found(text) for text in ("w1 w2", "w150 w7")}
    assert len(manifest(ctx)["segments"]) == 2 and manifest(ctx)["dead"]  # type: ignore[arg-type]
    assert vector_index(ctx.db).compact()
    index = manifest(ctx)
    assert len(index["segments"]) == 1 and index["dead"] == {}  # type: ignore[arg-type]
    for text, expected in before.items():
        assert found(text) == expected
    assert nearest(ctx, "zebra crossing", 1, MemoryFilter())[0][0] == ids[3]
    assert not vector_index(ctx.db).compact()  # one segment, nothing dead: nothing to do


def test_forgotten_changes_rebuild_and_dead_rows_compact(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = fill(ctx, 10)
    nearest(ctx, "w1", 3, MemoryFilter())
    monkeypatch.setattr(database, "VECTORS_JOURNAL", 2)
    for i in range(3):  # one more change than the journal holds
        memories.update(ctx, ids[i], f"changed text number {i}")
    first = manifest(ctx)
    nearest(ctx, "w1", 3, MemoryFilter())
    rebuilt = manifest(ctx)
    assert rebuilt["dead"] == {} and set(rebuilt["segments"]).isdisjoint(first["segments"])  # type: ignore[arg-type]
    monkeypatch.setattr(database, "VECTORS_JOURNAL", 256)
    for i in range(3, 6):  # 3 dead of 10 rows: more than a fifth
        memories.update(ctx, ids[i], f"changed text number {i}")
    assert nearest(ctx, "changed text number 5", 1, MemoryFilter())[0][0] == ids[5]
    compacted = manifest(ctx)
    assert len(compacted["segments"]) == 1 and compacted["dead"] == {}  # type: ignore[arg-type]
    assert len(nearest(ctx, "w1", 50, MemoryFilter())) == 10


def test_a_reused_rowid_after_a_permanent_delete_gets_its_new_vector(ctx: Context) -> None:
    fill(ctx, 5)
    last = memories.remember(ctx, "the last one, deleted soon")
    nearest(ctx, "anything", 3, MemoryFilter())
    memories.delete(ctx, last.id, permanent=True)
    reborn = memories.remember(ctx, "purple elephants dance")  # SQLite reuses the rowid
    assert nearest(ctx, "purple elephants dance", 1, MemoryFilter())[0][0] == reborn.id
    assert last.id not in {i for i, _ in nearest(ctx, "the last one", 10, MemoryFilter())}


def test_many_appends_merge_into_one_segment(ctx: Context) -> None:
    for i in range(MAX_SEGMENTS + 1):
        fill(ctx, 1, start=i)
        nearest(ctx, "deploy", 1, MemoryFilter())
    assert len(manifest(ctx)["segments"]) == 1  # type: ignore[arg-type]
    assert len(nearest(ctx, "deploy", 50, MemoryFilter())) == MAX_SEGMENTS + 1


def test_a_new_model_rebuilds_the_index(ctx: Context) -> None:
    fill(ctx, 10)
    nearest(ctx, "deploy", 3, MemoryFilter())
    other = Context(ctx.settings, embedder=HashEmbedder(dim=32, name="test:small"))
    reembed(other)
    index = vector_index(other.db)
    assert index.manifest is not None and (index.manifest.model, index.manifest.dim) == (
        "test:small",
        32,
    )
    hits = vector_query.nearest(
        index, Scores(index, query_vector(other, "deploy")), 3, MemoryFilter()
    )
    assert len(hits) == 3
    other.close()


def test_another_process_writing_is_seen(ctx: Context, home: Path) -> None:
    fill(ctx, 3)
    nearest(ctx, "deploy", 3, MemoryFilter())
    code = (
        "from memctl.config import load_settings\nfrom memctl.context import Context\n"
        "from memctl.memories import operations as memories\nfrom tests.fakes import HashEmbedder\n"
        "ctx = Context(load_settings(), embedder=HashEmbedder())\n"
        "memories.remember(ctx, 'written by another process')\nctx.close()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=dict(os.environ))
    hit = nearest(ctx, "written by another process", 1, MemoryFilter())[0]
    assert hit[1] == pytest.approx(0.0, abs=1e-6)


def test_concurrent_syncs_agree(ctx: Context, home: Path) -> None:
    fill(ctx, 40)
    code = (
        "from pathlib import Path\nfrom memctl.store.database import Database\n"
        "from memctl.store.vector_index import vector_index\n"
        f"db = Database.open(Path({str(home / 'memctl.db')!r}))\n"
        "print(len(vector_index(db).rowids))\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    assert [p.communicate()[0].strip() for p in procs] == ["40"] * 3
    assert len(manifest(ctx)["segments"]) == 1  # type: ignore[arg-type]


def test_damaged_files_are_rebuilt(ctx: Context) -> None:
    fill(ctx, 10)
    nearest(ctx, "deploy", 3, MemoryFilter())
    directory = ctx.settings.home / "memctl.db.vectors"
    for segment in directory.glob("*.seg"):
        segment.write_bytes(b"garbage")
    (directory / "manifest.json").write_text("{not json")
    fresh = VectorIndex(ctx.db)
    fresh.refresh()
    assert len(fresh.rowids) == 10
    assert json.loads((directory / "manifest.json").read_text())["generation"] >= 10


def test_an_unwritable_home_searches_in_memory(ctx: Context) -> None:
    fill(ctx, 10)
    directory = ctx.settings.home / "memctl.db.vectors"
    directory.write_text("a file where the directory should be")
    index = VectorIndex(ctx.db)
    index.refresh()
    hits = vector_query.nearest(
        index, Scores(index, query_vector(ctx, "deploy")), 3, MemoryFilter()
    )
    assert len(hits) == 3 and len(index.rowids) == 10


def random_store(ctx: Context, count: int, dim: int = 16) -> np.ndarray:
    """``count`` memories with random unit vectors; one in a thousand in scope "rare"."""
    vectors = np.random.default_rng(3).standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ctx.db.ensure_vector_model("test:random", dim)
    with ctx.db.atomic():
        for i, vector in enumerate(vectors):
            memory = Memory(content=f"m{i}", scope="rare" if i % 1000 == 7 else "common")
            insert_memory(ctx.db, memory, vector.tobytes())
    return vectors


def test_a_filter_that_keeps_few_memories_is_applied_to_every_row(ctx: Context) -> None:
    vectors = random_store(ctx, 5000)
    where = MemoryFilter(scopes=("rare",))
    index = vector_index(ctx.db)
    query = vectors[8]
    ours = vector_query.nearest(index, Scores(index, query), 3, where)
    theirs = vector_search(ctx.db, query.tobytes(), 3, where)
    assert [i for i, _ in ours] == [i for i, _ in theirs]
    assert [d for _, d in ours] == pytest.approx([d for _, d in theirs], abs=1e-5)


@pytest.mark.parametrize("prefilter", [False, True], ids=["exact", "sign-bit prefilter"])
def test_large_indexes_prefilter_by_sign_bits_and_rescore_exactly(
    ctx: Context, monkeypatch: pytest.MonkeyPatch, prefilter: bool
) -> None:
    vectors = random_store(ctx, 3000, dim=128)
    if prefilter:  # the thresholds of a 100,000-memory store, scaled down
        monkeypatch.setattr(vector_query, "EXACT_UP_TO", 1000)
        monkeypatch.setattr(vector_query, "RESCORE_MIN", 300)
    index = vector_index(ctx.db)
    rng = np.random.default_rng(5)
    found = 0
    for target in rng.integers(0, 3000, 10):
        query = vectors[target] + 0.1 * rng.standard_normal(128).astype(np.float32)
        query /= np.linalg.norm(query)
        scores = Scores(index, query)
        assert scores.exact is not prefilter
        ours = dict(vector_query.nearest(index, scores, 5, MemoryFilter()))
        theirs = dict(vector_search(ctx.db, query.tobytes(), 5, MemoryFilter()))
        assert min(ours, key=ours.__getitem__) == min(theirs, key=theirs.__getitem__)
        for memory_id in ours.keys() & theirs.keys():  # rescored: exact distances
            assert ours[memory_id] == pytest.approx(theirs[memory_id], abs=1e-5)
        found += len(ours.keys() & theirs.keys())
    assert found >= (50 if not prefilter else 45)


def test_one_query_serves_several_filters_as_fresh_ones_would(ctx: Context) -> None:
    fill(ctx, 120)
    index = vector_index(ctx.db)
    vector = query_vector(ctx, "w1 w2 w3")
    shared = Scores(index, vector)  # recall's vector and time legs share one
    for where in (MemoryFilter(), MemoryFilter(scopes=("global",)), MemoryFilter()):
        alone = vector_query.nearest(index, Scores(index, vector), 8, where)
        assert vector_query.nearest(index, shared, 8, where) == alone
        assert vector_query.nearest(index, shared, 3, where) == alone[:3]


def three_segments(ctx: Context) -> tuple[list[str], list[str], VectorIndex]:
    """30 memories, then 10 more (a second segment), then the fifth changed to "zebra
    crossing" (a third, and a dead row in the first): both lists of ids, and the index."""
    ids = fill(ctx, 30)
    nearest(ctx, "w1", 3, MemoryFilter())
    later = fill(ctx, 10, start=30)
    nearest(ctx, "w1", 3, MemoryFilter())
    memories.update(ctx, ids[4], "zebra crossing")
    index = vector_index(ctx.db)
    assert len(index.segments) == 3 and index.dead.any()
    return ids, later, index


def test_similarities_of_named_memories_come_from_their_live_copies(ctx: Context) -> None:
    ids, later, index = three_segments(ctx)
    scores = Scores(index, query_vector(ctx, "zebra crossing"))
    wanted = [ids[4], ids[0], later[5], "not-a-memory"]
    found = vector_query.similarities_of(index, scores, wanted)
    assert set(found) == {ids[4], ids[0], later[5]}
    assert found[ids[4]] == pytest.approx(1.0, abs=1e-6)  # the changed vector, not the old
    for memory_id in (ids[0], later[5]):
        assert found[memory_id] == pytest.approx(
            1.0 - dict(nearest(ctx, "zebra crossing", 40, MemoryFilter()))[memory_id], abs=1e-6
        )


@pytest.mark.parametrize("limit", [3, 10], ids=["window holds enough", "window holds too few"])
def test_a_time_window_finds_the_nearest_memories_created_in_it(
    ctx: Context, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    vectors = random_store(ctx, 3000)  # created now
    monkeypatch.setattr(vector_query, "EXACT_UP_TO", 1000)  # the prefilter of a large store
    monkeypatch.setattr(vector_query, "RESCORE_MIN", 300)
    with ctx.db.atomic():
        for day in range(1, 6):
            memory = Memory(content=f"old {day}", created_at=f"2025-01-0{day}T12:00:00.000Z")
            insert_memory(ctx.db, memory, vectors[day].tobytes())
    week = MemoryFilter(since="2025-01-01T00:00:00.000Z", before="2025-01-08T00:00:00.000Z")
    index = vector_index(ctx.db)
    for query in vectors[100:105]:
        ours = vector_query.nearest(index, Scores(index, query), limit, week)
        theirs = vector_search(ctx.db, query.tobytes(), limit, week)
        assert len(ours) == min(limit, 5)
        assert [i for i, _ in ours] == [i for i, _ in theirs]


def test_vectors_of_named_memories_are_their_live_copies(ctx: Context) -> None:
    # what the possible matches' crowd is measured from (retrieve/density.py): a changed
    # memory's new vector, not its dead old row; an id with no vector is left out
    ids, later, index = three_segments(ctx)
    found = vector_query.vectors_of(index, [ids[4], later[5], "not-a-memory"])
    assert set(found) == {ids[4], later[5]}
    assert float(found[ids[4]] @ query_vector(ctx, "zebra crossing")) == pytest.approx(
        1.0, abs=1e-6
    )
    stored = {
        i: np.frombuffer(v, dtype=np.float32) for i, v in vectors_for(ctx.db, [later[5]]).items()
    }
    np.testing.assert_allclose(found[later[5]], stored[later[5]], atol=1e-6)


def test_distinct_rowids_are_numpys_unique_ones() -> None:
    """positions_of's distinct rowids, without np.unique (which imports numpy.ma)."""
    rng = np.random.default_rng(3)
    for size in (0, 1, 2, 50, 1_000):
        values = rng.integers(0, max(1, size // 3), size=size, dtype=np.int64)
        assert distinct(values).tolist() == np.unique(values).tolist()
