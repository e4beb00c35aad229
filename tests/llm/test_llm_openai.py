"""``llm: openai``: an OpenAI-compatible chat endpoint (here Ollama's ``/v1``, served by the
fake Ollama on loopback) through a real HTTP client: JSON-schema answers, the key from the
environment variable the config names, retries, failures, and extraction end to end."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memctl.context import Context
from memctl.llm import LLMError
from memctl.llm.openai import OpenAILLM
from memctl.memories import operations as memories
from tests import ollama_server as fake
from tests.ingesting import distil
from tests.llm.test_llm import SCHEMA, fact, number
from tests.ollama_server import Fail, FakeOllama, Malformed

ollama_server = fake.ollama_server
dead_ollama_url = fake.dead_ollama_url
MODEL = "llama3.2"
CHAT = "/v1/chat/completions"


def llm(url: str, **kwargs: Any) -> OpenAILLM:
    options = {"timeout": 5.0, "retries": 2, "backoff": 0.0, "api_key_env": "MEMCTL_TEST_KEY"}
    return OpenAILLM(base_url=f"{url}/v1", model=MODEL, **{**options, **kwargs})


def test_a_schema_answer_is_validated_and_the_key_comes_from_the_named_variable(
    ollama_server: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCTL_TEST_KEY", "sk-local-test")
    ollama_server.script_chat({"n": 7})
    answer = llm(ollama_server.url).complete_json("be brief", "seven?", SCHEMA, number)
    assert answer.value == 7 and answer.prompt_tokens > 0 and answer.output_tokens > 0
    (request,) = [r for r in ollama_server.requests if r.path == CHAT]
    assert request.authorization == "Bearer sk-local-test"
    assert request.body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert request.body["messages"][0] == {"role": "system", "content": "be brief"}


def test_no_key_sends_no_authorization(
    ollama_server: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMCTL_TEST_KEY", raising=False)
    ollama_server.script_chat({"n": 1})
    llm(ollama_server.url).complete_json("", "one", SCHEMA, number)
    assert [r.authorization for r in ollama_server.requests if r.path == CHAT] == [""]


def test_invalid_answers_and_server_errors_are_retried_then_given_up(
    ollama_server: FakeOllama,
) -> None:
    ollama_server.script_chat(Malformed("{not json"), Fail(503, "busy"), {"n": 2})
    assert llm(ollama_server.url).complete_json("", "", SCHEMA, number).value == 2
    ollama_server.script_chat("no json at all", {"m": 1}, "[]")
    with pytest.raises(LLMError, match="after 3 attempts") as failed:
        llm(ollama_server.url).complete_json("", "", SCHEMA, number)
    assert failed.value.reason == "invalid"


@pytest.mark.parametrize(("status", "reason"), [(401, "auth"), (404, "missing-model")])
def test_a_refused_key_or_an_unknown_model_is_not_retried(
    ollama_server: FakeOllama, status: int, reason: str
) -> None:
    ollama_server.script_chat(Fail(status, "no"), {"n": 1})
    with pytest.raises(LLMError) as failed:
        llm(ollama_server.url).complete_json("", "", SCHEMA, number)
    assert failed.value.reason == reason
    assert len([r for r in ollama_server.requests if r.path == CHAT]) == 1


def test_a_server_that_is_not_there(dead_ollama_url: str) -> None:
    with pytest.raises(LLMError, match="openai.base_url") as failed:
        llm(dead_ollama_url).complete_json("", "", SCHEMA, number)
    assert failed.value.reason == "unreachable"


def test_extraction_through_the_openai_provider(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm="openai", openai__base_url=f"{ollama_server.url}/v1", openai__model=MODEL)
    ollama_server.script_chat({"facts": [fact("Alice prefers Helix as her editor")]})
    run = distil(ctx, "user: I use Helix these days.\nassistant: Nice.\n")
    assert run.record.llm == f"openai:{MODEL}" and run.record.counts["create"] == 1
    (made,) = memories.list_memories(ctx, memories.make_filter(ctx))
    assert made.content == "Alice prefers Helix as her editor"
