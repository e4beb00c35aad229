"""Whether the query's meaning can be evidence: the text the embedding model read says
something. all-MiniLM-L6-v2 maps text with nothing to read (one letter repeated, keyboard
mash "asdfgh", a lone emoji, punctuation, a pasted hash or base64 blob, a stack trace's hex
addresses) to vectors close to short or foreign-script memories: 5,000 "a"s (one word past
the tokenizer's 100 letters: [UNK]) reached cosine 0.46 against a Chinese rule and was a
clear match (docs/benchmarks.md, "Odd questions"). A query says something when a word of
what the model read is one the store holds (a memory writes it), or when it writes
``GRAMMAR_WORDS`` distinct function words of a language (English's ``STOPWORDS``, the
foreign ones ``FOREIGN_HINTS`` knows): a sentence, however few of its words the store holds.
The model reads a query's first ``MAX_TOKENS`` tokens and cuts the rest, so a longer query
is judged on that part: the question after a pasted dump is not what its vector says."""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import TYPE_CHECKING

from memctl.embed.model_files import MAX_TOKENS, MODEL_NAME
from memctl.retrieve.query import FOREIGN_HINTS, WORD, function_word, split_identifier
from memctl.retrieve.stages.pack import latin_widths

if TYPE_CHECKING:
    from memctl.retrieve.params import Params
    from memctl.retrieve.run import Run

# Two distinct function words make a sentence ("what is", "how do"): one alone is as often
# a lone letter ("a a a") or noise with an article ("the asdfgh")
GRAMMAR_WORDS = 2
# The embedder whose window is MAX_TOKENS (embed/local.py); another model's is unknown here
LOCAL_MODEL = f"local:{MODEL_NAME}"


def meaningless(run: Run) -> str:
    """Why the query's cosine is no evidence ("" when it is): the text the model read says
    nothing the store or a language knows (``says_something``)."""
    text = run.translation.text if run.translation is not None else run.query.text
    if run.ctx.embedder.name == LOCAL_MODEL:
        read = seen_by_model(text, run.params)
        if len(read) < len(text) and not says_something(read, run.held):
            return (
                f"the query's first {len(read)} characters, the model's window, say nothing known"
            )
    if says_something(text, run.held):
        return ""
    return "the query says nothing the store or a language knows"


def says_something(text: str, held: dict[str, int]) -> bool:
    """Whether ``text`` writes a word the store holds (``held``: memories holding each of
    the query's words) or ``GRAMMAR_WORDS`` distinct function words."""
    written = set(WORD.findall(text))
    words = {w.lower() for w in written}
    parts = words.union(*(split_identifier(w) for w in written))
    if any(held.get(w) for w in parts):
        return True
    grammar = {w for w in words if function_word(w) or w in FOREIGN_HINTS}
    return len(grammar) >= GRAMMAR_WORDS


def seen_by_model(text: str, p: Params) -> str:
    """About the part of ``text`` the model reads: its first ``MAX_TOKENS`` tokens less
    [CLS] and [SEP], at ``recall.chars_per_token`` characters a token (Chinese and the other
    scripts by their own rates, ``pack.latin_widths``)."""
    budget = (MAX_TOKENS - 2) * p.chars_per_token
    widths = latin_widths(text, p)
    if widths is None:
        return text[: int(budget)]
    return text[: bisect_right(list(accumulate(widths)), budget)]
