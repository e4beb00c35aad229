"""An LLM served by Ollama: ``/api/chat`` with a JSON schema as ``format``.

Each call is tried once plus ``retries`` more times, waiting ``backoff``
seconds before the first retry and twice as long before each next one (1 s,
2 s by default), when a connected server does not answer within the timeout,
loses the connection, fails with a server error, or answers with JSON that is
invalid or does not validate. A server that cannot be reached at all (refused,
or no connection within ``connect_timeout``) is not retried: nothing listens,
and waiting will not change that this run; nor is a missing model: pulling it
takes a person.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from memctl.config.urls import shown_url
from memctl.llm import Completion, LLMError, unreachable_hint
from memctl.llm.retry import Answer, Retryable, complete_with_retries

if TYPE_CHECKING:
    import ollama

T = TypeVar("T")


class OllamaLLM:
    """The LLM protocol over an Ollama server."""

    def __init__(
        self,
        host: str,
        model: str,
        timeout: float,
        retries: int = 2,
        backoff: float = 1.0,
        temperature: float = 0.0,
        connect_timeout: float = 2.0,
    ) -> None:
        self._host = host
        self._shown = shown_url(host)  # in messages, which runs keep: no credentials
        self._connect_timeout = min(connect_timeout, timeout)
        self._model = model
        self._timeout = timeout
        self._retries = retries
        self._backoff = backoff
        self._temperature = temperature
        self._client: ollama.Client | None = None

    @property
    def name(self) -> str:
        return f"ollama:{self._model}"

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

    def _chat(self, system: str, prompt: str, schema: dict[str, Any]) -> ollama.ChatResponse:
        """One request; failures worth retrying become Retryable, the rest LLMError."""
        import httpx
        import ollama

        try:
            return self._get_client().chat(
                model=self._model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt},
                ],
                format=schema,
                options={"temperature": self._temperature},
                stream=False,
            )
        except ollama.ResponseError as error:
            message = " ".join(str(error.error).split())
            if error.status_code == 404:
                raise LLMError(
                    f"Ollama has no model '{self._model}': run `ollama pull {self._model}`",
                    "missing-model",
                ) from None
            raise Retryable(
                "server", f"Ollama failed: {message} (HTTP {error.status_code})"
            ) from None
        except (ConnectionError, httpx.ConnectTimeout):
            raise LLMError(unreachable_hint(self._host), "unreachable") from None
        except httpx.TimeoutException:
            raise Retryable(
                "timeout", f"Ollama at {self._shown} did not answer within {self._timeout:g} s"
            ) from None
        except httpx.TransportError as error:
            raise Retryable("unreachable", f"lost connection to Ollama: {error}") from None
        except ValueError:  # a body that is not JSON, or not a chat answer
            raise Retryable(
                "invalid", f"Ollama at {self._shown} sent an unreadable answer"
            ) from None

    def _get_client(self) -> ollama.Client:
        import ollama

        if self._client is None:
            import httpx

            self._client = ollama.Client(
                host=self._host, timeout=httpx.Timeout(self._timeout, connect=self._connect_timeout)
            )
        return self._client


def _answer(reply: ollama.ChatResponse) -> Answer:
    return Answer(reply.message.content or "", reply.prompt_eval_count or 0, reply.eval_count or 0)
