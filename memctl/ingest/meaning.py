"""A memory's searched vector names what it mentions (``document_text``: the software
vocabulary's other names for its terms, retrieve/vocabulary.py; what its software is and
what its technical terms mean, retrieve/software_kinds.py and retrieve/glossary.py); the
vector of its content alone is kept beside it for the relevance gate (store/meaning.py).

``give_names`` turns memories written with the vector of their content alone (as every
write path stores them) into that pair: one more embedding for each memory the vocabulary
has names for, none for the others. ``remember``, distillation and imports call it for
what they write; ``maintain`` for every memory it has not seen (upkeep, ``embed_meaning``):
existing stores, synced memories, and those written by the other paths.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memctl.embed import Embedder
from memctl.ingest.entities import common_words
from memctl.retrieve.glossary import glosses_named
from memctl.retrieve.software_kinds import kinds_named
from memctl.retrieve.vocabulary import expand
from memctl.store.database import Database
from memctl.store.meaning import drop_plain_vectors_of, plain_vectors_for, put_plain_vectors
from memctl.store.memories import vectors_for
from memctl.store.writes import Writer

# The vocabulary's names a memory's vector is also made of, at most (docs/benchmarks.md,
# "A memory's vector names what it mentions": 10, 16 and all gave the same paraphrases;
# past MiniLM's 256 tokens the tail is cut anyway).
NAMES_EMBEDDED = 16
# What the terms a memory writes mean, at most: a cap, not tuned (a gloss is a clause of up
# to 14 words, scripts/gen_glossary.py: three fill a fifth of MiniLM's 256 word pieces).
GLOSSES_EMBEDDED = 3


def document_text(content: str) -> str:
    """What a memory's searched vector is made of: its content and, in brackets, the other
    names the vocabulary gives the terms it mentions ("Retro is the last Friday of each
    sprint. (postmortem, post-mortem, incident review, retrospective, ...)"). MiniLM places
    a question put in other words ("when do we look back on what went well?") near the
    names it knows; the memory names one it may not. A word of everyday English ("project",
    "team", "history") names nothing: in a chat line it is the word, not the term. Only the
    vector sees this text: it is never stored or shown."""
    common = common_words()
    found = expand(content)
    added = set(found.phrases)  # not the phrases the memory writes itself
    lower = content.lower()
    names = {
        kind: None for kinds in kinds_named(content).values() for kind in kinds if kind not in lower
    }
    for phrase, mates in found.by_phrase.items():
        if len(phrase) > 1 or phrase[0] not in common:
            names.update(dict.fromkeys(" ".join(mate) for mate in mates if mate in added))
    shown = list(names)[:NAMES_EMBEDDED]
    shown += list(dict.fromkeys(glosses_named(content).values()))[:GLOSSES_EMBEDDED]
    return f"{content} ({', '.join(shown)})" if shown else content


def give_names(
    db: Database, embedder: Embedder, memories: Sequence[tuple[str, str]], again: bool = False
) -> int:
    """For each (id, content) the vocabulary has names for: its searched vector made of
    ``document_text``, its content-alone vector kept (the one it had, or the one kept
    already). One named already is named ``again`` only when asked (a new vocabulary).
    Memories without a vector are left to ``maintain``. Returns how many changed."""
    texts = {i: text for i, content in memories if (text := document_text(content)) != content}
    if db.vector_model() is None:
        return 0
    if again:  # one the vocabulary no longer names is searched by its content alone
        _unname(db, [i for i, _ in memories if i not in texts])
    if not texts:
        return 0
    kept = plain_vectors_for(db, list(texts))
    if not again:
        texts = {i: text for i, text in texts.items() if i not in kept}
    current = vectors_for(db, [i for i in texts if i not in kept])
    plain = {**current, **kept}
    ids = [i for i in texts if i in plain]
    if not ids:
        return 0
    made = embedder.embed([texts[i] for i in ids])
    with db.atomic():
        Writer(db).put_vectors(
            [(i, v.astype(np.float32).tobytes()) for i, v in zip(ids, made, strict=True)],
            named=True,
        )
        put_plain_vectors(db, [(i, plain[i]) for i in ids])
    return len(ids)


def _unname(db: Database, ids: list[str]) -> None:
    """Their content-alone vectors become their searched ones again."""
    kept = plain_vectors_for(db, ids)
    if kept:
        with db.atomic():
            Writer(db).put_vectors(list(kept.items()), named=True)
            drop_plain_vectors_of(db, list(kept))
