"""The words developers use: a query's abbreviations and synonyms, searched at a lower weight.

``vocabulary.txt`` (beside this module; its header names its sources and their
licences) holds groups of words and phrases that mean the same thing to a
developer: "PR", "pull request", "merge request"; "outage", "went down",
"incident". A query holding a member of a group also searches the group's other
members, at ``recall.vocabulary_weight`` of its own words' weight (BM25 and the
share of the query's words a memory holds): "how big should my PRs be?" finds
"Sam prefers small pull requests".

Words that are both an ordinary word and a name ("go", "rust", "make") count as
the name only when written as one (``written_as_name``): capitalised where a
sentence would not capitalise it ("mostly Go"), or beside a word that says so
("go modules", "written in rust", "make test"). Otherwise they are ordinary
words: "why did the API go down?" does not search the language, and its "go
down" searches "outage" and "incident" instead.

Kinds (``kinds.txt``, written from WordNet by ``scripts/gen_kinds.py``): a query word
naming an everyday kind ("pets", "instruments", "sports", "cities") also searches the
kind's common instances ("dog", "violin", "basketball", "Rome") at the same lower weight,
one way only: "what pets does Nate have?" finds "this is Max, my dog", while "dog" does
not search "pets" or "cat".

Verbs (``verbs.txt``): a query word that is a form of an irregular verb also searches the
verb's forms the stemmer does not join to it, at the same lower weight: "how long did I
spend driving?" finds "I drove for five hours", "what did the team win?" finds "we won".

Pure functions over the query text; nothing here is FTS syntax.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memctl.lazy_re import lazy

Phrase = tuple[str, ...]  # as retrieve/query.py's: words in a row, lower case

VOCABULARY_FILE = Path(__file__).with_name("vocabulary.txt")
KINDS_FILE = Path(__file__).with_name("kinds.txt")
VERBS_FILE = Path(__file__).with_name("verbs.txt")
SPELLINGS_FILE = Path(__file__).with_name("spellings.txt")
NOUN_FORM = "-"  # verbs.txt's mark for an -ing form that is mostly a noun
NAME_TAG, VERB_TAG = "name", "verb"
# vocabulary.txt's tag for a word that is the term only in capitals ("MR", not "Mr.")
CAPITALS_TAG = "caps"
WORD = lazy(r"[^\W_]+(?:'[^\W_]+)?")
SENTENCE_END = lazy(r"[.!?]+(?:\s+|$)|\n+")
POSSESSIVE = "'s"  # the only apostrophe WORD keeps inside a word

# Words after an ordinary-looking word that make it a language or tool ("go modules",
# "rust crate", "make test"), and words before it ("using rust", "written in go").
NAME_AFTER = frozenset(
    """api app apps backend binary build builds code codebase compiler crate crates dev
    developer developers devs docs file files framework gem gems generics install lang
    language library libraries lint linter module modules package packages program
    programmer programming programs project projects release repo runtime script scripts
    sdk server service services stack syntax target targets test tests toolchain version
    versions workspace""".split()
)
# Words before a kind named in the singular that ask for one of its instances ("what sport",
# "favorite hobby", "kind of dance"); "of" after SORT_OF.
ASKS_WHICH = frozenset("what which favorite favourite favorites favourites any".split())
SORT_OF = frozenset("kind kinds type types sort sorts".split())
NAME_BEFORE = frozenset("using use uses used write writes wrote learn learning via".split())
NAME_BEFORE_IN = frozenset(
    "written write writes wrote code coded built implemented rewrite rewritten port ported".split()
)


@dataclass(frozen=True)
class Vocabulary:
    """The groups (each a tuple of phrases), the groups each phrase belongs to, the words
    that are also ordinary words (their group: the name's other spellings) and those of
    them that are verbs."""

    groups: tuple[tuple[Phrase, ...], ...]
    by_phrase: dict[Phrase, tuple[int, ...]]
    names: frozenset[str]
    longest: int
    verbs: frozenset[str] = frozenset()
    capitals: frozenset[str] = frozenset()


def phrase_of(text: str) -> Phrase:
    """A vocabulary entry as the words the query analysis compares (lower case). ASCII text
    is lowered first, the same words (a fourth less CPU for the ~7,500 entries every recall
    process reads: ~1 ms); other text word by word, as lowering may change a word's
    letters ("İ" is "i" and a combining dot)."""
    if text.isascii():
        return tuple(WORD.findall(text.lower()))
    return tuple(w.lower() for w in WORD.findall(text))


def parse(text: str) -> Vocabulary:
    """The vocabulary written in ``text`` (the format of ``vocabulary.txt``)."""
    groups: list[tuple[Phrase, ...]] = []
    names: set[str] = set()
    verbs: set[str] = set()
    capitals: set[str] = set()
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        tag, _, members = line.partition("\t")
        phrases = tuple(dict.fromkeys(p for m in members.split("|") if (p := phrase_of(m))))
        if tag in (NAME_TAG, VERB_TAG) and phrases:
            names.add(phrases[0][0])
            if tag == VERB_TAG:
                verbs.add(phrases[0][0])
        if tag == CAPITALS_TAG:
            capitals.update(p[0] for p in phrases)
            continue
        if len(phrases) > 1:
            groups.append(phrases)
    by_phrase: dict[Phrase, list[int]] = {}
    for index, group in enumerate(groups):
        for phrase in group:
            by_phrase.setdefault(phrase, []).append(index)
    return Vocabulary(
        tuple(groups),
        {p: tuple(i) for p, i in by_phrase.items()},
        frozenset(names),
        max((len(p) for p in by_phrase), default=1),
        frozenset(verbs),
        frozenset(capitals),
    )


@functools.cache
def vocabulary() -> Vocabulary:
    """The shipped vocabulary (read once a process)."""
    return parse(VOCABULARY_FILE.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Kinds:
    """Each way a question names a kind ("pets", "martial arts") -> the kind's instances."""

    instances: dict[Phrase, tuple[Phrase, ...]]
    longest: int


def parse_kinds(text: str) -> Kinds:
    """The kinds written in ``text`` (the format of ``kinds.txt``)."""
    instances: dict[Phrase, dict[Phrase, None]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        _, names, members = line.split("\t")
        found = {p: None for m in members.split("|") if (p := phrase_of(m))}
        for name in names.split("|"):
            if phrase := phrase_of(name):
                instances.setdefault(phrase, {}).update(found)
    return Kinds(
        {kind: tuple(found) for kind, found in instances.items()},
        max((len(p) for p in instances), default=1),
    )


@functools.cache
def kinds() -> Kinds:
    """The shipped kinds (read once a process)."""
    return parse_kinds(KINDS_FILE.read_text(encoding="utf-8"))


def parse_verbs(text: str) -> dict[str, tuple[Phrase, ...]]:
    """Each form of a verb of ``text`` (the format of ``verbs.txt``) -> the verb's forms of
    another stem: "driving" -> drove, driven; "drove" -> drive, driven. A past the stemmer
    joins to the verb ("showed") is none."""
    others: dict[str, dict[Phrase, None]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        verb, doing, *pasts = line.split()
        irregular = [p for p in dict.fromkeys(pasts) if p not in (verb, f"{verb}d", f"{verb}ed")]
        own = [f for f in (verb, f"{verb}s", f"{verb}es", doing) if f != NOUN_FORM]
        for form in own:
            others.setdefault(form, {}).update(dict.fromkeys((p,) for p in irregular))
        for form in irregular:
            mates = (w for w in (verb, *irregular) if w != form)
            others.setdefault(form, {}).update(dict.fromkeys((w,) for w in mates))
    return {form: tuple(found) for form, found in others.items() if found}


@functools.cache
def verbs() -> dict[str, tuple[Phrase, ...]]:
    """The shipped verbs (read once a process)."""
    return parse_verbs(VERBS_FILE.read_text(encoding="utf-8"))


def verb_forms(
    text: str, table: Mapping[str, tuple[Phrase, ...]] | None = None
) -> dict[str, tuple[Phrase, ...]]:
    """Each word of ``text`` that is a form of a verb of ``verbs.txt``, and the verb's forms
    of another stem."""
    table = verbs() if table is None else table
    said = dict.fromkeys(w.lower() for w in WORD.findall(text))
    return {word: table[word] for word in said if word in table}


@functools.cache
def spellings_text() -> str:
    """``spellings.txt`` (a line a British spelling, a tab and the American one; "#" opens
    a comment line), each line between newlines (read once a process)."""
    return "\n" + SPELLINGS_FILE.read_text(encoding="utf-8").rstrip("\n") + "\n"


def other_spellings(word: str, text: str | None = None) -> tuple[Phrase, ...]:
    """``word``'s other spellings in ``text`` (``spellings_text``'s form), in the order of
    its lines: "colours" -> colors, "colors" -> colours. Found by searching for the word
    rather than by reading every pair into a table: a question asks for a few words, and
    the table's ~3,400 entries cost a recall's own process ~20 M instructions (~4 ms)."""
    text = spellings_text() if text is None else text
    lines = []  # (where the line starts, the other spelling)
    for needle, british in ((f"\n{word}\t", True), (f"\t{word}\n", False)):
        at = text.find(needle)
        while at >= 0:
            start = at + 1 if british else text.rfind("\n", 0, at) + 1
            line = text[start : text.index("\n", at + 1)]
            if not line.startswith("#"):
                lines.append((start, line.partition("\t")[2 if british else 0]))
            at = text.find(needle, at + 1)
    return tuple(dict.fromkeys((other,) for _, other in sorted(lines)))


def spelling_forms(text: str) -> dict[str, tuple[Phrase, ...]]:
    """Each word of ``text`` spelt the British or the American way, and its other spelling
    (``spellings.txt``): searched as a verb's other forms are."""
    said = dict.fromkeys(w.lower() for w in WORD.findall(text))
    return {word: others for word in said if (others := other_spellings(word))}


def asks_for_instances(words: list[str], index: int, size: int) -> bool:
    """Whether the kind named by ``words[index:index + size]`` asks for its instances: named
    in the plural ("what pets", "his hobbies"), or in the singular right after a word that
    asks which one ("what sport", "favorite hobby", "kind of dance"), not as a thing of
    its own ("a good hobby", "Jon's dance")."""
    if words[index + size - 1].lower().endswith("s"):
        return True
    before = words[index - 1].lower() if index > 0 else ""
    return before in ASKS_WHICH or (
        before == "of" and index > 1 and words[index - 2].lower() in SORT_OF
    )


def kind_instances(text: str, table: Kinds | None = None) -> dict[str, tuple[Phrase, ...]]:
    """Each word of ``text`` that names a kind and asks for its instances, alone or in a
    phrase ("pets", "martial arts"; ``asks_for_instances``), and the kind's instances."""
    table = table or kinds()
    found: dict[str, dict[Phrase, None]] = {}
    for sentence in SENTENCE_END.split(text):
        said = WORD.findall(sentence)
        # a possessive names its owner ("my pet's name" asks of the pet, "pet" to search):
        # matched without its "'s", which then reads as a plural does (it asks which one)
        words = [w[:-2] if w.lower().endswith(POSSESSIVE) else w for w in said]
        index = 0
        while index < len(words):
            match = _match(table.instances, table.longest, words, index)
            if match is None or not asks_for_instances(said, index, match[1]):
                index += 1
                continue
            phrase, size = match
            for word in words[index : index + size]:
                found.setdefault(word.lower(), {}).update(dict.fromkeys(table.instances[phrase]))
            index += size
    return {word: tuple(instances) for word, instances in found.items()}


@dataclass(frozen=True)
class Expansion:
    """What the vocabulary adds to one query.

    - ``phrases``: the other members of every group the query names, to search at the
      lower weight (not the query's own phrases);
    - ``by_word``: each query word that is part of a group's member (function words too:
      the caller keeps its content words), and those members' group-mates (a memory
      holding one of them holds that word, at the lower weight);
    - ``ordinary``: words that are also names, used here as ordinary words (no name's
      spellings searched for them); ``left_out``: those of them that are verbs ("go",
      "make": left out of the search when the query has other words).
    """

    phrases: tuple[Phrase, ...] = ()
    by_word: dict[str, tuple[Phrase, ...]] = field(default_factory=dict)
    ordinary: frozenset[str] = frozenset()
    left_out: frozenset[str] = frozenset()
    # each phrase of the text a group holds -> its group-mates
    by_phrase: dict[Phrase, tuple[Phrase, ...]] = field(default_factory=dict)


def forms(word: str) -> tuple[str, ...]:
    """``word`` and its singular guesses ("PRs" -> prs, pr; "caches" -> caches, cache, cach)."""
    lower = word.lower()
    found = [lower]
    if lower.endswith("s") and len(lower) > 2:
        found.append(lower[:-1])
    if lower.endswith("es") and len(lower) > 3:
        found.append(lower[:-2])
    return tuple(found)


def is_term(word: str) -> bool:
    """Whether ``word`` (any case, a plural too) is one of the vocabulary's phrases: "CI",
    "PRs", "repo" are software terms, not names of people or places."""
    return any((form,) in vocabulary().by_phrase for form in forms(word))


def written_as_name(words: list[str], index: int) -> bool:
    """Whether ``words[index]`` (of one sentence, as written) is a name: capitalised and
    not the sentence's first word, or beside a word that says it is a language or tool."""
    word = words[index]
    if index > 0 and word != word.lower():
        return True
    after = words[index + 1].lower() if index + 1 < len(words) else ""
    before = words[index - 1].lower() if index > 0 else ""
    before_in = words[index - 2].lower() if index > 1 and before in ("in", "to") else ""
    return after in NAME_AFTER or before in NAME_BEFORE or before_in in NAME_BEFORE_IN


def _match(
    table: Mapping[Phrase, object], longest: int, words: list[str], start: int
) -> tuple[Phrase, int] | None:
    """The longest phrase of ``table`` at ``words[start]`` (its last word may be plural)."""
    for size in range(min(longest, len(words) - start), 0, -1):
        head = tuple(w.lower() for w in words[start : start + size - 1])
        for last in forms(words[start + size - 1]):
            phrase = (*head, last)
            if phrase in table:
                return phrase, size
    return None


def _not_in_capitals(vocab: Vocabulary, word: str, found: tuple[Phrase, int] | None) -> bool:
    """Whether ``word`` is one of the terms only capitals make ("MR", "MRs": a merge request)
    written otherwise ("Mr." is a title)."""
    if found is None or found[1] > 1 or found[0][0] not in vocab.capitals:
        return False
    return not word.removesuffix("s").isupper()


def _ordinary(
    vocab: Vocabulary, words: list[str], index: int, found: tuple[Phrase, int] | None
) -> bool:
    """Whether ``words[index]``, a word that is also a name, is used as the ordinary word:
    not written as a name, or the start of a longer phrase of another group ("go down")."""
    word = words[index].lower()
    if word not in vocab.names:
        return False
    if found is not None and found[1] > 1:
        return not any(vocab.groups[g][0] == (word,) for g in vocab.by_phrase[found[0]])
    return not written_as_name(words, index)


def expand(text: str, vocab: Vocabulary | None = None) -> Expansion:
    """The vocabulary's additions to the query ``text``."""
    vocab = vocab or vocabulary()
    own: dict[Phrase, None] = {}
    added: dict[Phrase, None] = {}
    by_word: dict[str, dict[Phrase, None]] = {}
    by_phrase: dict[Phrase, dict[Phrase, None]] = {}
    ordinary: set[str] = set()
    for sentence in SENTENCE_END.split(text):
        words = WORD.findall(sentence)
        index = 0
        while index < len(words):
            found = _match(vocab.by_phrase, vocab.longest, words, index)
            if _ordinary(vocab, words, index, found):
                ordinary.add(words[index].lower())
                if found is None or found[1] == 1:
                    index += 1
                    continue
            if found is None or _not_in_capitals(vocab, words[index], found):
                index += 1
                continue
            phrase, size = found
            own[phrase] = None
            mates = {m: None for g in vocab.by_phrase[phrase] for m in vocab.groups[g]}
            mates.pop(phrase, None)
            added.update(mates)
            by_phrase.setdefault(phrase, {}).update(mates)
            for w in words[index : index + size]:
                by_word.setdefault(w.lower(), {}).update(mates)
            index += size
    return Expansion(
        tuple(p for p in added if p not in own),
        {w: tuple(m) for w, m in by_word.items()},
        frozenset(ordinary),
        frozenset(ordinary & vocab.verbs),
        {p: tuple(m) for p, m in by_phrase.items()},
    )
