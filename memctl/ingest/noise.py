"""Stage: drop facts that are noise, not memories.

Three filters, in order: regular expressions for greetings, thanks,
meta-questions, refusals, a bare request to remember and a bare request to resume
(English and Chinese); vector prototypes of such noise, at cosine similarity >=
``noise.similarity``; and learned noise vectors, from memories a person
marked with ``memctl forget --noise``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memctl.ingest.facts import Fact
from memctl.ingest.run import Run
from memctl.ingest.title import RESUMED_SOURCE
from memctl.lazy_re import lazy
from memctl.store.noise import noise_vectors

if TYPE_CHECKING:
    import numpy as np

    from memctl.embed import Embedder

_EN, _ZH = re.I, 0
NOISE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, lazy(regex, flags))
    for kind, regex, flags in (
        (
            "greeting",
            r"^\W*(?:hi|hello|hey|howdy|good (?:morning|afternoon|evening|night)|"
            r"bye|goodbye|see you)\b[\w ,!.]{0,20}$",
            _EN,
        ),
        ("thanks", r"^\W*(?:thanks?|thank you|thx|ty|cheers|much appreciated)\b.{0,40}$", _EN),
        (
            "meta-question",
            r"^\W*(?:can|could|would|will) you (?:help|explain|tell|show|do|"
            r"please)\b|^\W*what (?:can|do) you (?:do|know|remember)\b|"
            r"^\W*(?:are you|who are you|do you remember)\b",
            _EN,
        ),
        (
            "refusal",
            r"^\W*(?:(?:I'm|I am) sorry|sorry|unfortunately|I (?:can't|cannot|am unable to|"
            r"won't)(?: help)?)\b|\bas an (?:AI|language model)\b",
            _EN,
        ),
        (
            "acknowledgement",
            r"^\W*(?:ok(?:ay)?|sure|yes|no|yep|nope|got it|sounds good|great|"
            r"cool|nice|perfect|lgtm)\W*$",
            _EN,
        ),
        (  # the request alone, its fact in the sentence before ("Please remember that.")
            "request to remember",
            r"^\W*(?:please,? )?(?:remember|note|keep in mind|don't forget|make a note of)"
            r"(?: (?:that|this|it))?(?: for (?:later|me|next time))?,?(?: please)?\W*$",
            _EN,
        ),
        ("resume", RESUMED_SOURCE, _EN),  # "pick up where we left off": no request, no fact
        ("greeting", r"^\W*(?:你好|您好|嗨|哈喽|早上好|晚上好|再见|拜拜)", _ZH),
        ("thanks", r"^\W*(?:谢谢|多谢|感谢|辛苦了)", _ZH),
        (
            "meta-question",
            r"^\W*(?:你能|你可以|能不能|可不可以)(?:帮|告诉|解释)|你是谁|你会什么",
            _ZH,
        ),
        ("refusal", r"^\W*(?:抱歉|对不起|很遗憾)|我(?:无法|不能)(?:帮|回答)", _ZH),
        ("acknowledgement", r"^\W*(?:好的|好|行|可以|没问题|收到|明白了?)\W*$", _ZH),
        ("request to remember", r"^\W*请?(?:记住|记下)(?:这个|这一点|这些)?吧?\W*$", _ZH),
    )
)
PROTOTYPES = (
    "hello, how are you?",
    "hi there, good morning",
    "thanks a lot, that was helpful",
    "thank you for your help",
    "can you help me with something?",
    "what can you do for me?",
    "do you remember what we talked about?",
    "I'm sorry, I can't help with that",
    "as an AI language model I cannot",
    "ok, sounds good",
    "got it, let's continue",
    "please continue",
    "你好，最近怎么样",
    "谢谢你的帮助",
    "你能帮我一个忙吗",
    "抱歉，我无法帮助你",
)


def noise_kind(text: str) -> str | None:
    """Which noise pattern a text matches, if any."""
    return next((kind for kind, pattern in NOISE_PATTERNS if pattern.search(text.strip())), None)


_PROTOTYPES: dict[str, np.ndarray] = {}


def _prototype_vectors(embedder: Embedder) -> np.ndarray:
    """The prototypes' vectors, made once per process and model."""
    if embedder.name not in _PROTOTYPES:
        _PROTOTYPES[embedder.name] = embedder.embed(list(PROTOTYPES))
    return _PROTOTYPES[embedder.name]


def drop_noise(run: Run, facts: list[Fact]) -> list[Fact]:
    """The facts that are not noise; each dropped one is traced with its reason."""
    import numpy as np

    trace = run.stage("noise")
    threshold = run.settings.noise_similarity
    embedder = run.ctx.embedder
    learned = [np.frombuffer(v, dtype=np.float32) for v in noise_vectors(run.db, embedder.name)]
    references = [
        ("noise prototype", _prototype_vectors(embedder)),
        ("learned noise", np.array(learned).reshape(-1, embedder.dim)),
    ]
    kept = []
    for fact in facts:
        reason = noise_kind(fact.content)
        if reason:
            trace.drop(fact, f"noise pattern: {reason}")
            continue
        for name, vectors in references:
            similarity = float((vectors @ fact.vector).max()) if len(vectors) else 0.0
            if similarity >= threshold:
                reason = f"{name} (cosine {similarity:.2f})"
                break
        if reason:
            trace.drop(fact, reason)
        else:
            kept.append(fact)
    trace.kept = len(kept)
    return kept
