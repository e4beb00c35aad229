"""The two LLM services recall can use: relevance scores for reranking, and translation of
a non-English query for the dual pass. Both through Ollama's chat API with JSON output.

The ``ollama`` client takes ~350 ms to import, so it is imported on the first call.
"""

from __future__ import annotations

import json
from typing import Any

from memctl.errors import ModelError

RERANK_PROMPT = (
    "Rate how relevant each numbered memory is to the query, from 0 (unrelated) to 10 "
    '(answers it). Answer with JSON: {"scores": [{"id": <number>, "score": <0-10>}]}.'
)
TRANSLATE_PROMPT = (
    "Translate the user's search query into English. Keep names, identifiers and file "
    'paths as they are. Answer with JSON: {"english": "<translation>"}.'
)
SCORES_SCHEMA = {
    "type": "object",
    "properties": {
        "scores": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "score": {"type": "number"}},
                "required": ["id", "score"],
            },
        }
    },
    "required": ["scores"],
}
TRANSLATION_SCHEMA = {
    "type": "object",
    "properties": {"english": {"type": "string"}},
    "required": ["english"],
}


class OllamaJudge:
    """Reranking and translation with one Ollama chat model."""

    def __init__(self, host: str, model: str, timeout: float) -> None:
        self.host, self.model, self.timeout = host, model, timeout

    def relevance(self, query: str, passages: list[str]) -> list[float]:
        """A score in [0, 1] per passage; a passage the model skipped scores 0."""
        listing = "\n".join(f"[{i}] {' '.join(p.split())[:600]}" for i, p in enumerate(passages))
        answer = self._chat(RERANK_PROMPT, f"Query: {query}\n\nMemories:\n{listing}", SCORES_SCHEMA)
        scores = [0.0] * len(passages)
        try:
            for item in answer["scores"]:
                index, score = int(item["id"]), float(item["score"])
                if 0 <= index < len(passages):
                    scores[index] = min(max(score / 10.0, 0.0), 1.0)
        except (KeyError, TypeError, ValueError):
            raise ModelError(
                f"Ollama model '{self.model}' sent scores in the wrong shape"
            ) from None
        return scores

    def translate(self, text: str) -> str:
        answer = self._chat(TRANSLATE_PROMPT, text, TRANSLATION_SCHEMA)
        english = answer.get("english") if isinstance(answer, dict) else None
        if not isinstance(english, str) or not english.strip():
            raise ModelError(f"Ollama model '{self.model}' sent no translation")
        return english.strip()

    def _chat(self, system: str, user: str, schema: dict[str, Any]) -> Any:
        import httpx
        import ollama

        try:
            response = ollama.Client(host=self.host, timeout=self.timeout).chat(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                format=schema,
                options={"temperature": 0},
            )
            return json.loads(response.message.content or "")
        except ollama.ResponseError as exc:
            raise ModelError(f"Ollama could not answer with '{self.model}': {exc.error}") from None
        except (ConnectionError, httpx.TransportError):
            raise ModelError(f"cannot reach Ollama at {self.host}") from None
        except ValueError:
            raise ModelError(f"Ollama model '{self.model}' sent invalid JSON") from None
