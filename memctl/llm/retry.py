"""One JSON completion, tried once plus ``retries`` more times: the loop every provider
shares (a provider supplies one request; this counts tokens, waits and validates)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from memctl.llm import Completion, LLMError

T = TypeVar("T")


class Retryable(Exception):
    """A failed request worth trying again; ``reason`` is LLMError's."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class Answer(NamedTuple):
    """What one request brought back: the text and the tokens it cost."""

    content: str
    prompt_tokens: int
    output_tokens: int


def complete_with_retries(
    name: str,
    request: Callable[[], Answer],
    validate: Callable[[Any], T],
    retries: int,
    backoff: float,
) -> Completion:
    """``validate(json of request())``, waiting ``backoff`` x 2^n between attempts; an
    answer that is not valid JSON is retried too. Raises LLMError after the last."""
    prompt_tokens = output_tokens = 0
    failure = Retryable("unknown", "no attempt made")
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        try:
            answer = request()
        except Retryable as error:
            failure = error
            continue
        prompt_tokens += answer.prompt_tokens
        output_tokens += answer.output_tokens
        try:
            value = validate(json.loads(answer.content))
        except ValueError as error:
            failure = Retryable("invalid", f"invalid JSON from {name}: {error}")
            continue
        return Completion(value, prompt_tokens, output_tokens)
    raise LLMError(
        f"{failure} (after {retries + 1} attempts)", failure.reason, prompt_tokens + output_tokens
    )
