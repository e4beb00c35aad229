"""Questions a memory answers, written by rule for a memory stored without a host's: the
ways a person might ask for it, from what the note is (its category) and how it is said
(a label and its value, a subject and its verb, a command, a reason, a fix).

A host model stores 2-3 questions with a memory it writes (MCP ``memory_store``,
memories/questions.py); a memory distilled by rule, remembered at the terminal or
imported has none. ``derived_questions`` gives it 1-3 in the same shape, from templates
keyed on the note's structure, never on its topic: "Deploys: `make ship`" -> "how do I
do deploys?"; "Nadia Okafor owns the billing service" -> "who owns the billing service?";
"We chose Postgres over MongoDB because ..." -> "why we chose Postgres over MongoDB?".
They are stored and searched as host questions are (store/questions.py: a memory found
by its best vector, boosted and never made clear by them alone) and never shown.

A stored chat turn (``[8 May 2023] Caroline: ...``) gets none: it is someone's words in
a conversation, not a note of what is so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from memctl.embed import Embedder
from memctl.lazy_re import lazy
from memctl.memories.questions import MAX_QUESTIONS, on_topic
from memctl.model import Category
from memctl.retrieve.answers import COMMAND, PERSON, PLACE, STAMP, TIME, TIME_WORDS, states
from memctl.retrieve.software_kinds import kinds_named
from memctl.store.database import Database
from memctl.store.memories import content_vectors_for
from memctl.store.questions import questions_count
from memctl.store.writes import Writer

# A label is a few words before a colon ("Deploys: `make ship`", "Engineering manager: Sam
# Oduya"); longer, the colon ends a sentence's first half, which says more than a label.
LABEL_WORDS = 6
# A subject is at most this many words before its verb ("The on-prem build machine sits").
SUBJECT_WORDS = 6
# A note longer than this many words is read by its first sentence only.
FIRST_CLAUSE = lazy(r"^(.*?)(?:;|\s[-—]\s|\.(?:\s|$)|,\s(?:with|so|and|but)\s)")
LABEL = lazy(r"^\s*([^:`\n]{2,60}?)\s*:\s+(\S.*)$", re.S)
# A command stated after the task it does ("Seed test data locally with `./seed.sh`").
TASK_WITH_COMMAND = lazy(
    r"^\s*(?:to\s+)?([^`:]{3,80}?)\s+(?:with|using|via|by running|run)\s+`", re.I
)
# A decision and its reason: what was decided, then why ("because", "since", "for", ";").
DECISION = lazy(
    r"\b(?:chose|choose|decided|agreed|switched|picked|went with|moved to|migrated|"
    r"rewrote|dropped|adopted|we use|not\b)",
    re.I,
)
REASON = lazy(r"\s+(?:because|since|as|for|so that|due to)\s+|;\s*|:\s+", re.I)
# A preference: the user's liking, or a rule to keep ("Avoid lodash", "Keep replies short").
PREFERS = lazy(
    r"^\s*(?:i\s+)?(?:prefer|like|love|want|use|avoid|never|always|don'?t|do not)\b\s*(.*)$",
    re.I | re.S,
)
AVOIDS = lazy(r"^\s*(?:avoid|never|don'?t|do not)\b", re.I)
# A fix: what broke, then how it was mended.
FIXED = lazy(
    r"\b(?:fixed|resolved|solved|mitigated|root cause|traced to|caused by|outage|broke|failed)\b",
    re.I,
)
# What broke: the note's start before the verb that says what it did.
BROKE = lazy(r"^\s*(.{3,60}?)\s+(?:was|were|is|are|kept|had|returned|ran|failed|broke)\b", re.I)
# A subject and its verb ("Backend runs Python 3.11", "Primary database is PostgreSQL 15").
SUBJECT_VERB = lazy(
    rf"^\s*((?:[\w'./+-]+\s+){{0,{SUBJECT_WORDS - 1}}}?[\w'./+-]+)\s+"
    r"(is|are|was|were|runs|run|lives|live|sits|happens|rotates|goes|go|owns|sets|uses|"
    r"handles|leads|manages|starts|needs|lands)\s+(.+)$",
    re.I | re.S,
)
# Verbs that say where a thing is ("The build machine sits in the server room").
PLACE_VERBS = frozenset({"sits", "lives", "live", "happens"})
PREFERENCES, CASES = str(Category.PREFERENCES), str(Category.CASES)
COPULAS = frozenset({"is", "are", "was", "were"})
TRAILING_PREPOSITION = lazy(r"\s+(?:in|at|on|as|for|by)\s*$", re.I)
TO = lazy(r"^to\s+", re.I)
OWN = lazy(r"^(?:my|i)\b", re.I)
ARTICLE = lazy(r"^(?:the|a|an|our|my)\s+", re.I)


def derived_questions(content: str, category: str | None = None) -> list[str]:
    """1-3 questions a person might ask to be given ``content`` (none for a chat turn)."""
    if STAMP.match(content):
        return []
    text = " ".join(content.split())
    first = _first_clause(text)
    found: list[str] = []
    for question in (
        *_label_questions(text),
        *_command_questions(text),
        *_person_questions(first),
        *_decision_questions(first, text),
        *_preference_questions(first, category),
        *_fix_questions(first, text, category),
        *_subject_questions(first),
    ):
        if question not in found:
            found.append(question)
    found = found or _when_questions(first)
    return [*found[:1], *_kind_questions(text), *found[1:]][:MAX_QUESTIONS]


def _kind_questions(text: str) -> list[str]:
    """The software a note names, asked by what it is ("PostgreSQL" -> "which database
    system do we use?"; retrieve/software_kinds.py): a person asks for the kind, not the
    name they may not know. The first named, its most specific kind (the table's last)."""
    named = kinds_named(text)
    return [f"which {kinds[-1]} do we use?" for kinds in list(named.values())[:1] if kinds]


def _first_clause(text: str) -> str:
    match = FIRST_CLAUSE.match(text)
    return (match.group(1) if match else text).strip().rstrip(".")


def _bare(phrase: str) -> str:
    """A phrase as a question holds it: lower-cased first letter but for a name, no article."""
    phrase = phrase.strip().rstrip(".,;:")
    head, _, tail = phrase.partition(" ")
    word = head.rstrip(",;:")
    if word.isalpha() and word[1:].islower():  # "Deploys", not "GitHub" or "E2E"
        phrase = " ".join((head.lower(), tail)).strip()
    return phrase


def _kind_of(text: str, order: tuple[str, ...] = (COMMAND, PERSON, TIME, PLACE)) -> str | None:
    for kind in order:
        if states(kind, text):
            return kind
    return None


def _label_questions(text: str) -> list[str]:
    """ "X: Y" asks for Y by X, with the question word of the kind of answer Y is, and
    "what is X?" beside it."""
    match = LABEL.match(text)
    if not match or len(match.group(1).split()) > LABEL_WORDS:
        return []
    label, value = _bare(match.group(1)), match.group(2)
    task = TO.sub("", label)
    what = f"what is {task if OWN.match(task) else 'the ' + ARTICLE.sub('', task)}?"
    kind = _kind_of(value)
    if kind == COMMAND:
        return [f"how do I {task}?" if task != label else f"how do I run {label}?"]
    if kind == PERSON:
        return [f"who handles {ARTICLE.sub('', label)}?", what]
    if kind == TIME:
        return [f"when is {label}?", what]
    if kind == PLACE:
        return [f"where is {label}?", what]
    return [what]


def _command_questions(text: str) -> list[str]:
    match = TASK_WITH_COMMAND.match(text)
    if not match or ":" in match.group(1):
        return []
    return [f"how do I {_bare(match.group(1))}?"]


def _person_questions(first: str) -> list[str]:
    """A named person and what they do: "who <does it>?"."""
    match = SUBJECT_VERB.match(first)
    if not match or not states(PERSON, match.group(1)):
        return []
    return [f"who {match.group(2).lower()} {match.group(3)}?"]


def _decision_questions(first: str, text: str) -> list[str]:
    if not DECISION.search(first):
        return []
    decided = REASON.split(text, maxsplit=1)[0].strip().rstrip(".")
    if not decided or decided == text.rstrip("."):
        return []
    what = re.sub(r"^we\s+", "", _bare(decided), flags=re.I)
    return [f"why did we {what}?", f"what did we decide about {what}?"]


def _preference_questions(first: str, category: str | None) -> list[str]:
    """A liking asks what is preferred; a rule against a thing ("Avoid lodash", "Never
    force-push") asks whether to use it and what to avoid."""
    match = PREFERS.match(first)
    if match and match.group(1):
        thing = _bare(match.group(1))
        if AVOIDS.match(first):
            return [f"should I use {thing}?", "what should I avoid?"]
        return [f"what do I prefer for {thing}?"]
    return [f"what do I prefer about {_bare(first)}?"] if category == PREFERENCES else []


def _fix_questions(first: str, text: str, category: str | None) -> list[str]:
    if not FIXED.search(text) and category != CASES:
        return []
    label = LABEL.match(text)
    broke = label.group(1) if label and len(label.group(1).split()) <= LABEL_WORDS else None
    if broke is None and (match := BROKE.match(first)):
        broke = match.group(1)
    if not broke:
        return []
    subject = _bare(broke)
    return [f"what happened with {subject}?", f"what broke with {subject} and how was it fixed?"]


def _subject_questions(first: str) -> list[str]:
    match = SUBJECT_VERB.match(first)
    if not match:
        return []
    subject, verb, rest = _bare(match.group(1)), match.group(2).lower(), match.group(3)
    kind = _kind_of(rest, (COMMAND, TIME, PLACE, PERSON))
    if kind == TIME:
        return [f"when is {subject}?"]
    if kind == PLACE or verb in PLACE_VERBS:
        return [f"where is {subject}?"]
    if kind == PERSON and not OWN.match(subject):
        return [f"who is {subject}?" if verb in COPULAS else f"who handles {subject}?"]
    if verb in COPULAS:
        return [f"what {verb} {subject}?"]
    return [f"what does {subject} {verb.removesuffix('s')}?"]


def _when_questions(first: str) -> list[str]:
    """A thing and when it is, said without a verb ("Demo day with stakeholders every
    fourth Friday"): "when is <the thing>?"; asked only of a note no other rule read."""
    at = TIME_WORDS.search(first)
    thing = TRAILING_PREPOSITION.sub("", first[: at.start()]).strip() if at else ""
    if not at or len(thing.split()) < 2 or any(mark in thing for mark in ":()"):
        return []
    return [f"when is {_bare(thing)}?"]


def give_questions(
    db: Database, embedder: Embedder, memories: Sequence[tuple[str, str, str | None]], floor: float
) -> int:
    """Each (id, content, category) with no stored question gets its derived ones that are
    about it (``on_topic``: cosine to its content's vector >= ``floor``). Returns how many
    questions were stored. The content's vector is the one the store holds (``content_vectors``),
    embedded again only for a memory that has none of this model's; a text is embedded once."""
    wanted = [
        (i, asked)
        for i, content, category in memories
        if (asked := derived_questions(content, category)) and not questions_count(db, i)
    ]
    if not wanted:
        return 0
    contents = dict((i, c) for i, c, _ in memories)
    own = content_vectors(db, embedder, [i for i, _ in wanted])
    missing = [i for i, _ in wanted if i not in own]
    texts = [contents[i] for i in missing] + [q for _, asked in wanted for q in asked]
    once = list(dict.fromkeys(texts))  # a question many notes ask ("when is retro?"): once
    made = dict(
        zip(once, [v.astype(np.float32).tobytes() for v in embedder.embed(once)], strict=True)
    )
    vectors = [made[text] for text in texts]
    own.update(zip(missing, vectors[: len(missing)], strict=True))
    rest = iter(vectors[len(missing) :])
    stored = 0
    with db.atomic():
        writer = Writer(db)
        for i, asked in wanted:
            kept = on_topic(asked, [next(rest) for _ in asked], own[i], floor).kept
            stored += writer.add_questions(i, kept, embedder.name)
    return stored


def content_vectors(db: Database, embedder: Embedder, ids: list[str]) -> dict[str, bytes]:
    """The vectors of these memories' content alone as the store holds them, when they are
    ``embedder``'s (``content_vectors_for``: a named memory's kept beside its searched one).
    Embedding the content again gave the same vector, for one forward pass more a memory."""
    if db.vector_model() != (embedder.name, embedder.dim):
        return {}
    return content_vectors_for(db, ids)
