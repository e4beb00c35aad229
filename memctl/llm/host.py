"""The host assistant as the LLM: its answers, given through MCP, replayed to the stages.

With no local LLM, the assistant that is already running (Claude, GPT...) can do
the extraction: ``memory_distill_tasks`` hands it the extraction prompt and the
numbered conversation, and ``memory_distill_apply`` runs the normal slow path
with this LLM, which answers the extraction calls with the host's facts in
order. Any other call (reconcile) has no host answer: the run notes it and goes
on with the rule-based stages, as with any LLM that gives out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from memctl.llm import Completion, LLMError, estimate_tokens

T = TypeVar("T")


class HostAnswers:
    """An LLM whose answers to the extraction calls were written by the host model."""

    def __init__(self, answers: list[Any], extract_schema: dict[str, Any]) -> None:
        self._answers = list(answers)
        self._schema = extract_schema

    @property
    def name(self) -> str:
        return "host"

    def complete_json(
        self, system: str, prompt: str, schema: dict[str, Any], validate: Callable[[Any], T]
    ) -> Completion:
        if schema is not self._schema or not self._answers:
            raise LLMError("the host model answered only the extraction", "no host answer")
        answer = self._answers.pop(0)
        try:
            value = validate(answer)
        except (ValueError, TypeError, KeyError) as exc:
            raise LLMError(f"the host model's facts are not usable: {exc}", "invalid") from exc
        return Completion(
            value, estimate_tokens(system, prompt), estimate_tokens(json.dumps(answer))
        )
