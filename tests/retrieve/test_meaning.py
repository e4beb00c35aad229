"""A memory's searched vector names what it mentions; its content-alone vector is kept
beside it for the relevance gate, and goes wherever the memory's text goes
(ingest/meaning.py, store/meaning.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memctl.api.maintain import MaintainRequest, maintain
from memctl.api.memory import RememberRequest, UpdateRequest, remember, update
from memctl.context import Context
from memctl.ingest.meaning import document_text
from memctl.maintain.reembed import reembed
from memctl.memories import operations
from memctl.model import Category, Kind, Memory, Tier
from memctl.retrieve.pipeline import recall
from memctl.store.meaning import MEANING_MARK, plain_vectors_for
from memctl.store.memories import insert_memory, vectors_for

# The first 30 notes of benchmarks/paraphrase/facts.jsonl: a new user's store.
FACTS = Path(__file__).parents[2] / "benchmarks" / "paraphrase" / "facts.jsonl"
NAMED = "Retro is the last Friday of each sprint."  # the vocabulary names "retro"
PLAIN = "Has a dog called Biscuit."  # nothing the vocabulary names


def plain_rows(ctx: Context) -> int:
    return int(ctx.db.value("SELECT count(*) FROM memory_plain_vectors") or 0)


def test_document_text_adds_the_vocabularys_names_and_nothing_else() -> None:
    assert document_text(PLAIN) == PLAIN
    named = document_text(NAMED)
    assert named.startswith(NAMED + " (") and "retrospective" in named
    # a word of everyday English is the word in a chat line, not the term
    chat = "We finished the project with the team, then I had to review my history notes."
    assert document_text(chat) == chat
    assert "pull request" in document_text("Open a PR for every change.")
    assert "outage" in document_text("The API went down twice in March.")


def test_remember_keeps_the_content_alone_vector_beside_the_searched_one(ctx: Context) -> None:
    named = remember(ctx, RememberRequest(NAMED)).memory
    plain = remember(ctx, RememberRequest(PLAIN)).memory
    kept = plain_vectors_for(ctx.db, [named.id, plain.id])
    assert list(kept) == [named.id]  # a memory the vocabulary names nothing in has none
    searched = vectors_for(ctx.db, [named.id])[named.id]
    assert kept[named.id] == ctx.embedder.embed([NAMED])[0].tobytes()
    assert searched == ctx.embedder.embed([document_text(NAMED)])[0].tobytes()


def test_the_content_alone_vector_goes_with_its_text(ctx: Context) -> None:
    """Edited, its old text's vector goes; deleted for good, nothing of it stays."""
    edited = remember(ctx, RememberRequest(NAMED)).memory
    gone = remember(ctx, RememberRequest("Deploys: `make ship` from main, needs VPN.")).memory
    assert plain_rows(ctx) == 2
    before = plain_vectors_for(ctx.db, [edited.id])[edited.id]
    update(ctx, UpdateRequest(edited.id, text="Monorepo, not polyrepo: shared types drift."))
    after = plain_vectors_for(ctx.db, [edited.id])[edited.id]
    assert after != before and after == ctx.embedder.embed([memory_text(ctx, edited)])[0].tobytes()
    update(ctx, UpdateRequest(edited.id, text=PLAIN))
    assert edited.id not in plain_vectors_for(ctx.db, [edited.id])
    operations.delete(ctx, gone.id, permanent=True)
    assert plain_rows(ctx) == 0


def test_a_redacted_value_leaves_no_vector_made_of_it(ctx: Context) -> None:
    from memctl.maintain.redaction import redact

    secret = "hunter2-zebra-9931"
    said = f"Retro is the last Friday of each sprint; the room code is {secret}."
    memory = remember(ctx, RememberRequest(said)).memory
    made_of_it = {ctx.embedder.embed([t])[0].tobytes() for t in (said, document_text(said))}
    redact(ctx, secret)
    left = [*plain_vectors_for(ctx.db, [memory.id]).values()]
    left += vectors_for(ctx.db, [memory.id]).values()
    assert left and not made_of_it & set(left)


def memory_text(ctx: Context, memory: Memory) -> str:
    found = operations.get(ctx, memory.id)[0]
    return found.content


def stored(ctx: Context, content: str) -> Memory:
    """A memory written as sync, undo or an older memctl write them: one plain vector."""
    memory = Memory(
        content=content, kind=Kind.SEMANTIC, category=Category.EVENTS, tier=Tier.WORKING
    )
    insert_memory(ctx.db, memory, ctx.vectors([content])[0])
    return memory


def test_maintain_names_the_memories_written_without_names_once(ctx: Context) -> None:
    old = stored(ctx, NAMED)
    stored(ctx, PLAIN)
    before = vectors_for(ctx.db, [old.id])[old.id]
    first = maintain(ctx, MaintainRequest(only="upkeep"))
    assert plain_vectors_for(ctx.db, [old.id]) == {old.id: before}
    assert vectors_for(ctx.db, [old.id])[old.id] != before
    assert first.task("upkeep").counts.get("memories_named") == 1
    again = maintain(ctx, MaintainRequest(only="upkeep"))
    assert "memories_named" not in again.task("upkeep").counts
    later = stored(ctx, "Tail prod logs: `aws logs tail /ecs/api --follow`.")
    maintain(ctx, MaintainRequest(only="upkeep"))
    assert later.id in plain_vectors_for(ctx.db, [later.id])


def test_a_new_model_drops_the_old_models_vectors_and_maintain_names_again(
    ctx: Context,
) -> None:
    memory = remember(ctx, RememberRequest(NAMED)).memory
    reembed(ctx)
    assert plain_rows(ctx) == 0 and ctx.db.meta(MEANING_MARK) is None
    maintain(ctx, MaintainRequest(only="upkeep"))
    assert memory.id in plain_vectors_for(ctx.db, [memory.id])


@pytest.fixture(scope="module")
def notes(real_store: Context) -> Context:
    """The first 30 notes, remembered with the real model (one store for the module)."""
    for text in paraphrase_facts()[:30]:
        remember(real_store, RememberRequest(text, scope="global"))
    return real_store


def paraphrase_facts() -> list[str]:
    return [json.loads(line)["fact"] for line in FACTS.read_text("utf-8").splitlines()]


def top(ctx: Context, question: str, clear_only: bool = False) -> list[str]:
    found = recall(ctx, question, 10, touch=False, possible=0 if clear_only else None)
    return [r.memory.content for r in found.results]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("command for the quick isolated per-function suite?", "Run the unit tests"),
        ("what language are the pipelines that pull in raw events coded in?", "ingestion"),
    ],
)
def test_a_reworded_question_finds_its_note(notes: Context, question: str, answer: str) -> None:
    """No word in common with the note: its vector's names ("unit test", "etl") bring it
    into the top 5 (6th to 10th without them)."""
    assert any(answer in content for content in top(notes, question)[:5])


def test_the_names_never_make_an_unrelated_question_clear(notes: Context) -> None:
    assert top(notes, "who handles app store submissions for the ios build?", True) == []


def test_distillation_names_what_it_writes_and_merges(ctx: Context) -> None:
    from memctl.ingest.apply import apply, prepare_writes
    from memctl.ingest.facts import Decision, Fact, Verdict
    from memctl.ingest.pipeline import embed
    from memctl.ingest.run import start_run
    from tests.ingesting import distil

    distil(ctx, "user: We deploy with make release once the CI passes.\n")
    (made,) = operations.list_memories(ctx, operations.make_filter(ctx))
    assert made.id in plain_vectors_for(ctx.db, [made.id])
    pinned = remember(ctx, RememberRequest("We deploy the billing service on Fridays.")).memory
    run = start_run(ctx, "ingest", None, pinned.scope)
    fact = Fact("We deploy the billing service on Fridays, after the CI passes.", Category.EVENTS)
    embed(run, [fact])
    decisions = [Decision(Verdict.MERGE, fact, target_id=pinned.id)]
    prepare_writes(run, decisions)
    with ctx.db.atomic():
        apply(run, decisions)
    merged = memory_text(ctx, pinned)
    assert "CI passes" in merged
    kept = plain_vectors_for(ctx.db, [pinned.id])[pinned.id]
    assert kept == ctx.embedder.embed([merged])[0].tobytes()


def test_a_new_vocabulary_names_again_and_unnames_what_it_no_longer_names(
    ctx: Context,
) -> None:
    from memctl.ingest.meaning import give_names

    memory = remember(ctx, RememberRequest(NAMED)).memory
    plain = plain_vectors_for(ctx.db, [memory.id])[memory.id]
    assert give_names(ctx.db, ctx.embedder, [(memory.id, PLAIN)], again=True) == 0
    assert vectors_for(ctx.db, [memory.id])[memory.id] == plain
    assert plain_rows(ctx) == 0


def test_memctls_own_jsonl_import_names_what_it_writes(ctx: Context, tmp_path: Path) -> None:
    from memctl.sync.records import import_lines

    lines = [json.dumps({"id": f"m{i}", "content": text}) for i, text in enumerate([NAMED, PLAIN])]
    report = import_lines(ctx, enumerate(lines, 1))
    assert report.imported == 2 and not report.errors
    kept = plain_vectors_for(ctx.db, ["m0", "m1"])
    assert list(kept) == ["m0"]  # the vocabulary names nothing in the other
    assert kept["m0"] == ctx.embedder.embed([NAMED])[0].tobytes()
    searched = vectors_for(ctx.db, ["m0"])["m0"]
    assert searched == ctx.embedder.embed([document_text(NAMED)])[0].tobytes()
