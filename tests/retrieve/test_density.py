"""Closeness in meaning less a memory's crowd (retrieve/density.py): among many notes of one
kind, the one a question in other words asks for stops losing to its crowded neighbours."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from benchmarks.synthetic import synthetic_memories
from memctl.context import Context
from memctl.model import Memory
from memctl.retrieve.density import (
    LOCAL_ROWS,
    NEIGHBOURS,
    crowded,
    densities,
    discounted,
    median,
)
from memctl.store.memories import insert_memory
from memctl.store.vector_index import vector_index
from tests.conftest import run_cli

FACTS = Path(__file__).resolve().parents[2] / "benchmarks" / "paraphrase" / "facts.jsonl"


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def store_vectors(ctx: Context, vectors: list[np.ndarray]) -> list[str]:
    """One memory per vector (their texts say nothing: the vectors are the point)."""
    ctx.vectors([])  # the vector table for the context's model
    ids = []
    with ctx.db.atomic():
        for n, vector in enumerate(vectors):
            memory = Memory(content=f"note number {n}", scope="global")
            insert_memory(ctx.db, memory, unit(vector).tobytes())
            ids.append(memory.id)
    return ids


def crowd_and_loner(dim: int, size: int) -> tuple[list[np.ndarray], np.ndarray]:
    """``size`` notes close together around one direction, and one note on its own."""
    rng = np.random.default_rng(3)
    centre = np.zeros(dim, dtype=np.float32)
    centre[0] = 1.0
    crowd = [unit(centre + 0.2 * rng.standard_normal(dim).astype(np.float32)) for _ in range(size)]
    loner = np.zeros(dim, dtype=np.float32)
    loner[1] = 1.0
    return crowd, loner


def test_a_note_in_a_crowd_is_denser_than_one_on_its_own(ctx: Context) -> None:
    dim = len(ctx.vectors(["x"])[0]) // 4  # float32 bytes
    crowd, loner = crowd_and_loner(dim, LOCAL_ROWS)
    ids = store_vectors(ctx, [*crowd, loner])
    index = vector_index(ctx.db)
    assert crowded(index)
    found = densities(index, {ids[0]: crowd[0], ids[-1]: loner})
    # the crowd's note is close to its neighbours (itself left out), the loner to none
    assert found[ids[0]] > 0.5 > found[ids[-1]]
    assert found[ids[0]] < 1.0 - 1e-3  # its own row, in the sample, is not a neighbour


def test_a_small_store_has_no_crowd_to_discount(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    dim = len(ctx.vectors(["x"])[0]) // 4
    crowd, loner = crowd_and_loner(dim, LOCAL_ROWS - 2)
    ids = store_vectors(ctx, [*crowd, loner])
    index = vector_index(ctx.db)
    assert not crowded(index)
    assert densities(index, {ids[-1]: loner}) == {}
    assert NEIGHBOURS < LOCAL_ROWS


def test_the_discount_reorders_on_the_raw_scale() -> None:
    raw = {"crowded": 0.40, "typical": 0.38, "alone": 0.36, "message": 0.37}
    density = {"crowded": 0.80, "typical": 0.60, "alone": 0.30}
    moved = discounted(raw, density, 0.25)
    # the crowded note falls below the one on its own; the median one keeps its cosine
    assert moved["alone"] > moved["crowded"]
    assert moved["typical"] == pytest.approx(0.38)
    # a candidate with no density of its own (a session message) keeps its cosine
    assert moved["message"] == pytest.approx(0.37)
    assert discounted(raw, {}, 0.25) == raw


@pytest.mark.parametrize("count", [1, 2, 7, 50])
def test_the_typical_density_is_numpys_median(count: int) -> None:
    """The median the discount is taken from is numpy's (numpy's own loads numpy.ma, 20 ms of
    every recall process), for an odd and an even number of candidates."""
    values = np.random.default_rng(count).random(count).tolist()
    assert median(values) == pytest.approx(float(np.median(values)), rel=1e-15)
    assert median([0.3, 0.1, 0.2, 0.9]) == pytest.approx(0.25)


def test_a_reworded_question_reaches_its_note_among_two_hundred(tmp_path: Path, home: Path) -> None:
    # a developer's 120 notes (the paraphrase benchmark's) and 80 more of the same kinds,
    # imported through the CLI: a store large enough to have crowds. The question shares no
    # word with its note (the tune half's f119); unnamed, by raw cosine the notes about the
    # developer's code and login crowded it out of the top 5, less their crowd it was 5th
    notes = [json.loads(line)["fact"] for line in FACTS.read_text("utf-8").splitlines()]
    notes += list(dict.fromkeys(synthetic_memories(81)))
    assert len(notes) >= LOCAL_ROWS
    lines = [json.dumps({"content": n, "category": "entities", "scope": "global"}) for n in notes]
    jsonl = tmp_path / "notes.jsonl"
    jsonl.write_text("\n".join(lines) + "\n", "utf-8")
    assert run_cli("import", str(jsonl), real_model=True).returncode == 0
    question = "what's my username on the code hosting site?"
    top = {}
    for weight in ("0", "0.25"):
        setting = f"recall.density_weight={weight}"
        done = run_cli("-c", setting, "recall", question, "-n", "5", "--json", real_model=True)
        assert done.returncode == 0, done.stderr
        top[weight] = [(r["content"], r["match"]) for r in json.loads(done.stdout)["results"]]
    note = ("GitHub handle: @anovak-dev.", "possible")
    # named at import ("GitHub (code management, ...)"), it is found without the discount
    # too (2nd either way, docs/benchmarks.md, "Imported memories named at once"); the
    # discount must not lose it
    assert note in top["0"] and note in top["0.25"]
    assert top["0.25"].index(note) <= top["0"].index(note)


def test_the_sample_is_drawn_again_once_the_store_changes(ctx: Context) -> None:
    dim = len(ctx.vectors(["x"])[0]) // 4
    crowd, loner = crowd_and_loner(dim, LOCAL_ROWS)
    ids = store_vectors(ctx, crowd)
    index = vector_index(ctx.db)
    first = densities(index, {ids[0]: crowd[0]})
    assert densities(vector_index(ctx.db), {ids[0]: crowd[0]}) == first  # unchanged store
    # a memory near the crowd's first note joins the store: it is a neighbour at once
    (twin,) = store_vectors(ctx, [unit(crowd[0] + 0.05 * loner)])
    again = densities(vector_index(ctx.db), {ids[0]: crowd[0], twin: crowd[0]})
    assert again[ids[0]] > first[ids[0]]
