"""Stage 15, pack: with a token budget, results are added in order until it is reached.

Tokens are estimated, not counted: about chars_per_token characters per token,
and cjk_chars_per_token for Chinese, Japanese and Korean characters (which
tokenizers split much finer). Each result also costs ITEM_TOKENS for its line.
"""

from __future__ import annotations

import math

from memctl.retrieve.params import Params
from memctl.retrieve.query import cjk_count
from memctl.retrieve.run import DROPPED, KEPT, Candidate, Run

STAGE = "pack"
ITEM_TOKENS = 4


def estimate_tokens(text: str, p: Params) -> int:
    cjk = cjk_count(text)
    return math.ceil((len(text) - cjk) / p.chars_per_token + cjk / p.cjk_chars_per_token)


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
