"""Query analysis: what the full-text leg searches for, and the time window a query names.

- Identifiers are split and added as alternatives: ``parseUserId`` also searches
  the phrase "parse user id" (which is how ``parse_user_id`` is indexed) and its
  parts; ``parse_user_id``, ``parse-user-id`` and ``a.b.c`` also search the joined
  form, as a CamelCase spelling is indexed.
- File paths and quoted phrases stay whole, as phrases.
- Common English function words are left out of the full-text search when the
  query has other words (they match most memories and carry no weight in BM25).
- A run of Chinese, Japanese or Korean letters is searched as its overlapping bigrams, each
  a word of its own (store/cjk.py, which indexes them so); bigrams of function letters or
  holding a particle (我们, 什么, 的原, です) are function words.
- A time expression becomes a window (``when.py``) and leaves the full-text search; so do
  words asking for the latest work ("last time", "where did I leave off"), whose window
  the run reads from the store, and, in a question naming either, the words that only
  say it asks about work done ("working on", "get done").
- Names: words the query writes capitalised where a sentence would not (``Caroline``,
  ``PostgreSQL``, ``New York``; not a sentence's first word); recall takes a name
  the store writes the same way as a sign the query is about it.

Nothing here is FTS syntax: ``store/fts.py`` quotes every alternative.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime

from memctl.lazy_re import lazy
from memctl.retrieve.vocabulary import (
    SENTENCE_END,
    expand,
    kind_instances,
    spelling_forms,
    verb_forms,
)
from memctl.retrieve.when import Window, latest_phrase, time_window
from memctl.store import cjk

QUOTED = lazy(r'"([^"]+)"|“([^”]+)”')
PATH = lazy(r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+")
IDENTIFIER = lazy(r"\w+(?:[.\-]\w+)+|\w+")
WORD = lazy(r"\w+")
CAMEL_PART = lazy(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Chinese, Japanese and Korean: punctuation, kana, ideographs, hangul, full-width forms.
# Tested by code points: a regex class of these ranges takes ~4 ms to compile.
CJK_RANGES = (
    (0x3000, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xFF00, 0xFFEF),
)

# Function words: they match most memories and carry no meaning of their own. Left out of
# the full-text search and of the words a memory must share with the query to count as
# relevant (measured: docs/benchmarks.md, "function words").
STOPWORDS = frozenset(
    """a about after again all also am an and any are as at be been before being both but by
    can could d did do does doing done during each ever for from had has have having he her
    here hers him his how i if in into is it its just ll m me might more most my no nor not
    now of on once only or other our out over own re s same she should so some such t than
    that the their them then there these they this those through to too under until up ve
    very was we were what when where which while who whom why will with would you your""".split()
)
# In a question naming a time or the latest work, the words that say it asks what was done
# then ("what was I working on yesterday?", "what did I get done last night?"): they name no
# subject, and searched they find any turn that says "working" or "done".
WORK_FRAME = lazy(
    r"\b(?:working|worked|work) on\b(?=\s*(?:[?.!,]|$))|\b(?:get|got|gotten) done\b"
    r"|\b(?:leave|left) off\b|\bbeen up to\b"
    r"|\b(?:in|on|for) this (?:project|repo|repository|codebase)\b",
    re.I,
)
FOREIGN_HINTS = frozenset(
    """le la les des est une dans pour avec der die das und ist nicht ein eine mit el los las
    una por para con que como il lo gli della sono het een niet voor""".split()
)

Phrase = tuple[str, ...]


@dataclass(frozen=True)
class Analysed:
    """A query as the legs see it."""

    text: str
    alternatives: list[Phrase] = field(default_factory=list)
    window: Window | None = None
    # the words asking for the latest work, when no time is named: the run gives the window
    latest: str | None = None
    names: tuple[str, ...] = ()
    # the vocabulary's additions (vocabulary.py): phrases searched at recall.vocabulary_weight,
    # and each query word's group-mates, or the instances of the kind it names ("pets": dog)
    expansions: tuple[Phrase, ...] = ()
    synonyms: dict[str, tuple[Phrase, ...]] = field(default_factory=dict)
    kinds: frozenset[str] = frozenset()  # the words of synonyms that name a kind
    # the words of synonyms that are a verb's forms or a word spelt the British or the
    # American way
    verbs: frozenset[str] = frozenset()
    # their kinds' instances and their verbs' other forms, searched at that weight
    instances: tuple[Phrase, ...] = ()
    # each run of CJK letters it writes, as its bigrams in order (fuse weighs their letters)
    runs: tuple[tuple[str, ...], ...] = ()

    @property
    def english(self) -> bool:
        return is_english(self.text)

    @property
    def only_latest(self) -> bool:
        """It asks for the latest work and nothing else ("what did we do last time?",
        "where did I leave off?"): its other words are all function words."""
        return self.latest is not None and all(
            function_word(w) for phrase in self.alternatives for w in phrase
        )

    @property
    def unread_script(self) -> bool:
        return in_unread_script(self.text)

    @property
    def words(self) -> list[str]:
        """The distinct content words the full-text leg searches for (an identifier's
        parts, not also their joined spelling)."""
        joined = {"".join(phrase) for phrase in self.alternatives if len(phrase) > 1}
        seen = {
            w: None
            for phrase in self.alternatives
            for w in phrase
            if not function_word(w) and w not in joined
        }
        return list(seen)


def names(text: str) -> tuple[str, ...]:
    """The names ``text`` writes capitalised where a sentence would not, as written, in
    order: runs of capitalised words ("New York Stock Exchange") other than a sentence's
    first word and function words; none from a sentence in title case, where capitals
    mark no name."""
    found: dict[str, None] = {}
    for sentence in SENTENCE_END.split(text):
        rest = WORD.findall(sentence)[1:]
        if len(rest) >= 2 and all(w != w.lower() or w.isdigit() for w in rest):
            continue
        run: list[str] = []
        for word in [*rest, ""]:
            if word != word.lower() and word.lower() not in STOPWORDS:
                run.append(word)
            elif run:
                found.setdefault(" ".join(run), None)
                run = []
    return tuple(found)


def without_names(text: str, left_out: frozenset[str]) -> str:
    """``text`` without the names of ``left_out`` (each as written, whole words, a
    possessive "'s" with it: "What are Joanna's hobbies?" -> "What are hobbies?"); ``text``
    itself when nothing but function words would be left."""
    if not left_out:
        return text
    shorter = text
    for name in sorted(left_out, key=len, reverse=True):
        words = r"\s+".join(re.escape(w) for w in name.split())
        shorter = re.sub(rf"(?<!\w){words}(?:['’]s)?(?!\w)", " ", shorter)
    shorter = " ".join(shorter.split())
    if not any(w.lower() not in STOPWORDS for w in WORD.findall(shorter)):
        return text
    return shorter


# An acronym's plural is one word, not two parts: "PRs", "APIs", "URLs".
ACRONYM_PLURAL = lazy(r"[A-Z]{2,}s")


def mixed_case(parts: list[str]) -> bool:
    """Whether a word's capitals split it into one letter and a word ("OTel", "iOS")."""
    return len(parts) > 1 and len(parts[0]) == 1 and parts[1][0].isalpha()


def split_identifier(token: str) -> list[str]:
    """``parseUserId`` -> [parse, user, id]; ``parse_user_id``, ``a-b``, ``a.b`` likewise.
    A name whose capitals would leave one letter first ("OTel", "iOS", "eBPF", "jQuery")
    is a name spelled in mixed case, not an identifier: one word, as the index holds it
    ("o" and "tel" are no words the store writes)."""
    parts: list[str] = []
    for piece in re.split(r"[_.\-]+", token):
        found = CAMEL_PART.findall(piece)
        if ACRONYM_PLURAL.fullmatch(piece) or mixed_case(found):
            parts.append(piece)
            continue
        parts.extend(found or ([piece] if piece else []))
    return [p.lower() for p in parts if p]


def _words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def function_word(word: str) -> bool:
    """An English function word (``STOPWORDS``), or a CJK bigram of function letters or a
    lone CJK letter (``cjk.function_gram``)."""
    return word in STOPWORDS or cjk.function_gram(word)


def _identifier_alternatives(token: str) -> list[Phrase]:
    parts = split_identifier(token)
    if len(parts) < 2:
        return [(token.lower(),)]
    joined = "".join(parts)
    return [tuple(parts), (joined,), *((p,) for p in parts)]


def lexical_alternatives(text: str) -> list[Phrase]:
    """Every phrase the full-text leg should match, in order, without duplicates."""
    found: dict[Phrase, None] = {}
    rest = text
    for match in QUOTED.finditer(text):
        words = _words(match.group(1) or match.group(2))
        if words:
            found.setdefault(tuple(words), None)
    rest = QUOTED.sub(" ", rest)
    for match in PATH.finditer(rest):
        found.setdefault(tuple(_words(match.group(0))), None)
    rest = PATH.sub(" ", rest)
    plain: list[Phrase] = []
    for match in IDENTIFIER.finditer(rest):
        for piece in cjk.split_word(match.group(0)):
            if cjk.is_gram(piece):  # each bigram is a word of its own
                plain.append((piece,))
            else:
                plain.extend(_identifier_alternatives(piece))
    content = [p for p in plain if not (len(p) == 1 and function_word(p[0]))]
    for phrase in content if content or found else plain:
        found.setdefault(phrase, None)
    return [phrase for phrase in found if phrase]


def analyse(text: str, now: datetime) -> Analysed:
    """The query's full-text alternatives and its time window, read against ``now``."""
    window = time_window(text, now)
    latest = None if window else latest_phrase(text)
    named = window.phrase if window else latest
    lexical = WORK_FRAME.sub(" ", text.replace(named, " ")) if named else text
    alternatives = lexical_alternatives(lexical)
    if not alternatives and window:  # a query that is only a time: search its words too
        alternatives = lexical_alternatives(text)
    vocabulary = expand(lexical)
    instances = {w: m for w, m in kind_instances(lexical).items() if w not in STOPWORDS}
    # a verb that is also a name, used as the verb ("go down"), is not searched
    kept = [p for p in alternatives if not (len(p) == 1 and p[0] in vocabulary.left_out)]
    synonyms = {w: m for w, m in vocabulary.by_word.items() if w not in STOPWORDS}
    # a verb's forms of another stem and a word's other spelling: the same word, so neither
    # is a software term no memory holds (candidates.py, the unknown-term veto)
    forms = {**verb_forms(lexical), **spelling_forms(lexical)}
    verbs = {w: f for w, f in forms.items() if w not in STOPWORDS}
    for word, found in (*instances.items(), *verbs.items()):
        synonyms[word] = tuple(dict.fromkeys((*synonyms.get(word, ()), *found)))
    return Analysed(
        text=text,
        alternatives=kept or alternatives,
        window=window,
        latest=latest,
        names=names(lexical),
        expansions=tuple(p for p in vocabulary.phrases if p not in kept),
        synonyms=synonyms,
        kinds=frozenset(instances),
        verbs=frozenset(verbs),
        instances=tuple(
            p
            for p in dict.fromkeys(p for m in (*instances.values(), *verbs.values()) for p in m)
            if p not in kept
        ),
        runs=tuple(tuple(cjk.bigrams(run)) for run in cjk.runs(lexical.lower())),
    )


def cjk_count(text: str) -> int:
    """How many CJK characters ``text`` has."""
    if text.isascii():
        return 0
    return sum(any(low <= ord(c) <= high for low, high in CJK_RANGES) for c in text)


KANA = (0x3040, 0x30FF)
HANGUL = (0xAC00, 0xD7AF)


OTHER, HAN, KANA_SCRIPT, HANGUL_SCRIPT = range(4)


def script(letter: str) -> int:
    """Which of ``script_counts``' scripts ``letter`` is written in."""
    code = ord(letter)
    if code < CJK_RANGES[0][0]:
        return OTHER
    if KANA[0] <= code <= KANA[1]:
        return KANA_SCRIPT
    if HANGUL[0] <= code <= HANGUL[1]:
        return HANGUL_SCRIPT
    return HAN if any(low <= code <= high for low, high in CJK_RANGES) else OTHER


def script_counts(text: str) -> tuple[int, int, int, int]:
    """How many characters of ``text`` are not CJK, Chinese (and other CJK: punctuation,
    full-width forms), Japanese kana, and Korean hangul."""
    if text.isascii():
        return len(text), 0, 0, 0
    counts = [0, 0, 0, 0]
    for letter in text:
        counts[script(letter)] += 1
    other, han, kana, hangul = counts
    return other, han, kana, hangul


def is_english(text: str) -> bool:
    """A cheap guess: mostly non-Latin letters, or foreign function words and no English ones,
    mean another language."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return True
    if cjk_count(text) or sum(c.isascii() for c in letters) < 0.7 * len(letters):
        return False
    words = set(_words(text))
    return bool(words & STOPWORDS) or not words & FOREIGN_HINTS


@functools.lru_cache(maxsize=256)  # the gate asks it of the same query for every candidate
def in_unread_script(text: str) -> bool:
    """Whether most of ``text``'s letters are of a script other than Latin (Chinese,
    Japanese, Korean, Cyrillic, ...). The embedding model (all-MiniLM-L6-v2) learnt from
    English: two texts in such a script lie close whatever they say. Measured on Chinese:
    unrelated questions ("明天北京的天气怎么样") reach cosines of 0.44-0.75 to a project's
    Chinese memories, and a real question reaches its answer at 0.18-0.54, below its cosine
    to everyday sentences (docs/benchmarks.md, "A question in a script the model does not
    read")."""
    if text.isascii():
        return False
    letters = [c for c in text if c.isalpha()]
    latin = sum(c.isascii() or unicodedata.name(c, "").startswith("LATIN") for c in letters)
    return latin * 2 < len(letters)
