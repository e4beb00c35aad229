"""Stage 15, pack: with a token budget, results are added in order until it is reached.

Tokens are estimated, not counted, per script: about chars_per_token characters per
token for Latin text and code, cjk_chars_per_token for Chinese characters (and CJK
punctuation), KANA_CHARS_PER_TOKEN for Japanese kana and HANGUL_CHARS_PER_TOKEN for Korean
(which tokenizers split much finer). Each result also costs ITEM_TOKENS for its line.
"""

from __future__ import annotations

import math

from memctl.lazy_re import lazy
from memctl.retrieve.params import Params
from memctl.retrieve.query import CJK_RANGES, script, script_counts
from memctl.retrieve.run import DROPPED, KEPT, Candidate, Run

STAGE = "pack"
ITEM_TOKENS = 4
# Characters a token of o200k_base (the tokenizer of current OpenAI models), fitted on
# Japanese and Korean coding-session text by benchmarks/token_estimate.py
# (docs/benchmarks.md, "token estimate"); cl100k_base splits them finer (1.06 and 0.97).
KANA_CHARS_PER_TOKEN = 1.5
HANGUL_CHARS_PER_TOKEN = 1.6
# From the first code point of query.CJK_RANGES: a character below it is Latin (or other).
BEYOND_LATIN = lazy(f"[{chr(CJK_RANGES[0][0])}-\U0010ffff]")


def chars_per_token(p: Params) -> tuple[float, float, float, float]:
    """Characters a token in each of ``query.script_counts``' scripts, in its order."""
    return p.chars_per_token, p.cjk_chars_per_token, KANA_CHARS_PER_TOKEN, HANGUL_CHARS_PER_TOKEN


def estimate_tokens(text: str, p: Params) -> int:
    rates = chars_per_token(p)
    return math.ceil(sum(n / rate for n, rate in zip(script_counts(text), rates, strict=True)))


def latin_widths(text: str, p: Params) -> list[float] | None:
    """Each character of ``text`` as the Latin characters that make as many tokens (a
    Chinese character about 3.4 of them); None when every character is one."""
    found = [] if text.isascii() else [m.start() for m in BEYOND_LATIN.finditer(text)]
    if not found:
        return None
    width = [p.chars_per_token / rate for rate in chars_per_token(p)]
    widths = [1.0] * len(text)
    for at in found:
        widths[at] = width[script(text[at])]
    return widths


def item_tokens(candidate: Candidate, p: Params) -> int:
    return ITEM_TOKENS + estimate_tokens(candidate.memory.content, p)


def pack(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    if run.budget is None:
        return candidates
    used = 0
    for index, candidate in enumerate(candidates):
        cost = item_tokens(candidate, run.params)
        if used + cost > run.budget:
            for left in candidates[index:]:
                why = f"over the budget of {run.budget} tokens ({used} used, this needs {cost})"
                run.record(STAGE, left, DROPPED, why=why)
            return candidates[:index]
        used += cost
        run.record(STAGE, candidate, KEPT, why=f"{cost} tokens, {used} of {run.budget}")
    return candidates
