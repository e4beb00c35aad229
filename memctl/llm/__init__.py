"""Language models: only this package talks to them.

A stage asks for JSON matching a schema and gets it parsed and validated, with
the tokens it cost, or an ``LLMError`` after the retries: then the stage uses
its rule-based fallback. Providers: Ollama (``ollama``), any
OpenAI-compatible chat endpoint (``openai``), and the assistant's own CLI run
headless (``claude-code``, ``codex``: ``headless``). Their HTTP clients are imported
only when a call is made, so nothing on the fast path pays for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from memctl.errors import ModelError

if TYPE_CHECKING:
    from memctl.config import Settings

T = TypeVar("T")


class LLMError(ModelError):
    """An LLM call failed for good: unreachable, too slow, or no valid JSON after retries.

    ``tokens`` is what the failed attempts cost, so the run can still count them.
    """

    def __init__(self, message: str, reason: str, tokens: int = 0) -> None:
        super().__init__(message)
        self.reason = reason
        self.tokens = tokens


@dataclass(frozen=True)
class Completion:
    """A validated answer and what it cost (every attempt's tokens, failed ones too)."""

    value: Any
    prompt_tokens: int
    output_tokens: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens


class LLM(Protocol):
    """What the ingest stages need from a language model."""

    @property
    def name(self) -> str:
        """e.g. ``ollama:llama3.2``: recorded on each run."""
        ...

    def complete_json(
        self, system: str, prompt: str, schema: dict[str, Any], validate: Callable[[Any], T]
    ) -> Completion:
        """Ask for JSON matching ``schema``; ``validate`` turns it into the value or raises
        ValueError, which counts as an invalid answer (and is retried)."""
        ...


def estimate_tokens(*texts: str) -> int:
    """A rough token count (4 characters a token) for checking a budget before a call."""
    return sum(len(text) for text in texts) // 4 + 1


def unreachable_hint(host: str) -> str:
    """What a person reads when no Ollama answers, in one line: what happened, and the two
    ways out (``memctl doctor`` says how to set Ollama up)."""
    from memctl.config.urls import shown_url

    return (
        f"cannot reach Ollama at {shown_url(host)}: rules used (fix: `memctl doctor`; "
        "silence: `memctl config set llm none`)"
    )


def setup_hint(model: str) -> str:
    """How to give memctl an LLM: ``memctl doctor``'s fix when Ollama does not answer."""
    return (
        f"install Ollama (https://ollama.com), run `ollama serve` and `ollama pull {model}` "
        "(or set ollama.host), or `memctl config set llm none`"
    )


@dataclass(frozen=True)
class LLMChoice:
    """The LLM a run uses, or None and, when that is not what the config asked for, why."""

    llm: LLM | None
    note: str | None = None


def choose_llm(settings: Settings) -> LLMChoice:
    """The configured LLM: none; Ollama; an OpenAI-compatible endpoint; the assistant's CLI
    run headless; or (``auto``) Ollama when it answers a quick check."""
    if settings.llm == "none":
        return LLMChoice(None)
    if settings.llm == "openai":
        from memctl.llm.openai import OpenAILLM

        return LLMChoice(
            OpenAILLM(
                base_url=settings.openai_base_url,
                model=settings.openai_model,
                api_key_env=settings.openai_api_key_env,
                timeout=settings.llm_timeout,
                retries=settings.llm_retries,
                backoff=settings.llm_backoff_seconds,
                temperature=settings.llm_temperature,
                connect_timeout=settings.ollama_connect_timeout,
            )
        )
    if settings.llm in ("claude-code", "codex"):
        from memctl.llm.headless import HeadlessLLM

        return LLMChoice(
            HeadlessLLM(
                settings.llm,
                model=settings.llm_headless_model,
                timeout=settings.llm_timeout,
                retries=settings.llm_retries,
                backoff=settings.llm_backoff_seconds,
            )
        )
    if settings.llm == "auto":
        from memctl.llm.probe import reachable

        timeout, ttl = settings.ollama_connect_timeout, settings.llm_probe_cache_seconds
        if not reachable(settings.ollama_host, timeout, settings.home, ttl):
            return LLMChoice(None, f"llm auto: {unreachable_hint(settings.ollama_host)}")
    from memctl.llm.ollama import OllamaLLM

    return LLMChoice(
        OllamaLLM(
            host=settings.ollama_host,
            model=settings.ollama_chat_model,
            timeout=settings.llm_timeout,
            retries=settings.llm_retries,
            backoff=settings.llm_backoff_seconds,
            temperature=settings.llm_temperature,
            connect_timeout=settings.ollama_connect_timeout,
        )
    )
