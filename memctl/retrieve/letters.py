"""A question's Chinese, Japanese or Korean runs in a text's share of its words: the bigram
between two words the text holds counts too.

A run is searched as its overlapping bigrams (store/cjk.py), and a run of n two-letter words
has 2n - 1 of them: the n words and the n - 1 that span two words ("导出文件" holds 导出 and
文件, and 出文, which no text about exports writes). Counted as words, those bigrams held
even the best answer to half the question's words. So a bigram the text does not hold
counts half for each of its two letters that a bigram beside it, which the text holds,
covers: each letter of the run that the text writes in a bigram counts, and a bigram
beside nothing the text holds counts nothing, as a word it does not hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set


def letters_between(
    runs: Sequence[Sequence[str]], weights: Mapping[str, float], held: Set[str]
) -> float:
    """What the bigrams of ``runs`` (each a run's bigrams in order) that the text does not
    hold (``held``: the query's words it holds) add by their letters covered: half a
    bigram's weight for each, its best place counting when the query writes it twice."""
    credit: dict[str, float] = {}
    for grams in runs:
        for i, gram in enumerate(grams):
            if gram in held or gram not in weights:
                continue
            covered = (i > 0 and grams[i - 1] in held) + (
                i + 1 < len(grams) and grams[i + 1] in held
            )
            credit[gram] = max(credit.get(gram, 0.0), weights[gram] * covered / 2)
    return sum(credit.values())
