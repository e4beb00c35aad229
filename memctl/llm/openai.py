"""An LLM behind any OpenAI-compatible chat endpoint: ``POST {base}/chat/completions``.

llama.cpp's server, LM Studio, vLLM, Ollama's ``/v1``, OpenAI and OpenRouter
all speak it. The answer is asked for as JSON matching the stage's schema
(``response_format: json_schema``). The API key is read from the environment
variable that ``openai.api_key_env`` names, never from the config file; a
local server needs none. Retries as for Ollama (see ``ollama``): a timeout,
a lost connection, a rate limit or a server error, and an answer that is not
valid JSON are retried with backoff; a refused connection, a rejected key
and an unknown model are not.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from memctl.config.urls import shown_url
from memctl.llm import Completion, LLMError
from memctl.llm.retry import Answer, Retryable, complete_with_retries

T = TypeVar("T")
RETRIED_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class OpenAILLM:
    """The LLM protocol over an OpenAI-compatible chat endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str,
        timeout: float,
        retries: int = 2,
        backoff: float = 1.0,
        temperature: float = 0.0,
        connect_timeout: float = 2.0,
    ) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._shown = shown_url(self._url)  # in messages, which runs keep: no credentials
        self._model = model
        self._key_env = api_key_env
        self._timeout = timeout
        self._connect_timeout = min(connect_timeout, timeout)
        self._retries = retries
        self._backoff = backoff
        self._temperature = temperature

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    def complete_json(
        self, system: str, prompt: str, schema: dict[str, Any], validate: Callable[[Any], T]
    ) -> Completion:
        return complete_with_retries(
            self.name,
            lambda: _answer(self._chat(system, prompt, schema)),
            validate,
            self._retries,
            self._backoff,
        )

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self._key_env, "") if self._key_env else ""
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _body(self, system: str, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": self._model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt},
            ],
            "temperature": self._temperature,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema},
            },
        }

    def _chat(self, system: str, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        """One request; failures worth retrying become Retryable, the rest LLMError."""
        import httpx

        timeout = httpx.Timeout(self._timeout, connect=self._connect_timeout)
        try:
            response = httpx.post(
                self._url,
                json=self._body(system, prompt, schema),
                headers=self._headers(),
                timeout=timeout,
            )
        except httpx.ConnectError:
            raise LLMError(
                f"cannot reach an OpenAI-compatible server at {self._shown} (openai.base_url)",
                "unreachable",
            ) from None
        except httpx.ConnectTimeout:
            raise LLMError(f"no connection to {self._shown} in time", "unreachable") from None
        except httpx.TimeoutException:
            raise Retryable(
                "timeout", f"{self._shown} did not answer within {self._timeout:g} s"
            ) from None
        except httpx.TransportError as error:
            raise Retryable("unreachable", f"lost connection to {self._shown}: {error}") from None
        return self._answer(response)

    def _answer(self, response: Any) -> dict[str, Any]:
        status = response.status_code
        if status in (401, 403):
            raise LLMError(
                f"{self._shown} refused the key (HTTP {status}): set the environment variable "
                f"{self._key_env} (openai.api_key_env)",
                "auth",
            )
        if status == 404:
            raise LLMError(
                f"{self._shown} has no model '{self._model}' (HTTP 404)", "missing-model"
            )
        if status in RETRIED_STATUS or status >= 500:
            raise Retryable("server", f"{self._shown} failed (HTTP {status})")
        if status >= 400:
            raise LLMError(f"{self._shown} rejected the request (HTTP {status})", "rejected")
        try:
            answer = response.json()
        except ValueError:
            raise Retryable("invalid", f"{self._shown} sent an unreadable answer") from None
        if not isinstance(answer, dict):
            raise Retryable("invalid", f"{self._shown} sent an unreadable answer")
        return answer


def _content(answer: dict[str, Any]) -> str:
    """The first choice's message text; ValueError when the answer has none."""
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("no choices[0].message.content in the answer") from None
    if not isinstance(content, str):
        raise ValueError("the message content is not text")
    return content


def _answer(reply: dict[str, Any]) -> Answer:
    try:
        content = _content(reply)
    except ValueError as error:
        raise Retryable("invalid", f"invalid answer from the endpoint: {error}") from None
    usage = reply.get("usage") or {}
    return Answer(
        content,
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
    )
