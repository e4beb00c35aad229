"""OllamaEmbedder through the real ollama client against the fake server in tests/ollama_server."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import numpy as np
import ollama
import pytest

from memctl.embed.ollama import OllamaEmbedder
from memctl.errors import ModelError
from tests import ollama_server as fake
from tests.conftest import python_c
from tests.ollama_server import DEFAULT_EMBED_DIM, Delay, Fail, FakeOllama, Malformed, Reply

# Bound by assignment, not imported by name, so pyflakes does not take the
# fixture arguments below for redefinitions.
ollama_server = fake.ollama_server
dead_ollama_url = fake.dead_ollama_url

MODEL = "nomic-embed-text"
REPO_ROOT = Path(__file__).resolve().parents[2]


def embedder(url: str, *, timeout: float = 5.0, batch_size: int = 32) -> OllamaEmbedder:
    return OllamaEmbedder(host=url, model=MODEL, timeout=timeout, batch_size=batch_size)


def embed_error(emb: OllamaEmbedder, texts: list[str]) -> str:
    """The ModelError message, checked to be the single line users will see."""
    with pytest.raises(ModelError) as caught:
        emb.embed(texts)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_name_records_the_model() -> None:
    assert embedder("http://127.0.0.1:1").name == f"ollama:{MODEL}"


def test_vectors_are_float32_unit_rows_of_the_server_dimension(ollama_server: FakeOllama) -> None:
    vectors = embedder(ollama_server.url).embed(["alpha beta", "gamma", "delta epsilon zeta"])

    assert vectors.shape == (3, DEFAULT_EMBED_DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


def test_normalising_is_ours_not_the_servers(ollama_server: FakeOllama) -> None:
    ollama_server.intercept_next(Reply({"model": MODEL, "embeddings": [[3.0, 4.0], [0.0, 0.0]]}))

    vectors = embedder(ollama_server.url).embed(["a", "b"])

    np.testing.assert_allclose(vectors, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)


def test_equal_texts_give_equal_vectors_and_similar_texts_similar_ones(
    ollama_server: FakeOllama,
) -> None:
    texts = ["the cat sat on the mat", "the cat sat on the mat", "the cat sat", "stock prices"]
    vectors = embedder(ollama_server.url).embed(texts)

    np.testing.assert_array_equal(vectors[0], vectors[1])
    assert vectors[0] @ vectors[2] > vectors[0] @ vectors[3]


def test_batches_split_the_input_in_order(ollama_server: FakeOllama) -> None:
    texts = [f"text number {i}" for i in range(7)]

    vectors = embedder(ollama_server.url, batch_size=3).embed(texts)

    assert [body["input"] for body in ollama_server.requests_to("/api/embed")] == [
        texts[0:3],
        texts[3:6],
        texts[6:7],
    ]
    single = embedder(ollama_server.url)
    one_by_one = np.vstack([single.embed([text]) for text in texts])
    np.testing.assert_array_equal(vectors, one_by_one)


def test_dim_comes_from_the_first_embedding_without_a_probe(ollama_server: FakeOllama) -> None:
    ollama_server.set_embed_dim(16)
    emb = embedder(ollama_server.url)

    emb.embed(["hello"])

    assert emb.dim == 16
    assert len(ollama_server.requests_to("/api/embed")) == 1


def test_dim_read_first_probes_once(ollama_server: FakeOllama) -> None:
    ollama_server.set_embed_dim(24)
    emb = embedder(ollama_server.url)

    assert (emb.dim, emb.dim) == (24, 24)
    assert len(ollama_server.requests_to("/api/embed")) == 1


def test_empty_input_needs_no_request_once_dim_is_known(ollama_server: FakeOllama) -> None:
    emb = embedder(ollama_server.url)
    emb.embed(["warm up"])

    assert emb.embed([]).shape == (0, DEFAULT_EMBED_DIM)
    assert len(ollama_server.requests_to("/api/embed")) == 1


def test_empty_input_probes_for_its_shape(ollama_server: FakeOllama) -> None:
    empty = embedder(ollama_server.url).embed([])

    assert empty.shape == (0, DEFAULT_EMBED_DIM)
    assert empty.dtype == np.float32
    assert len(ollama_server.requests_to("/api/embed")) == 1


def test_server_down_fails_fast_with_a_hint(dead_ollama_url: str) -> None:
    started = time.monotonic()

    message = embed_error(embedder(dead_ollama_url), ["hello"])

    assert time.monotonic() - started < 2
    assert message.startswith(f"cannot reach Ollama at {dead_ollama_url}: is `ollama serve`")
    assert "memctl config set ollama.host" in message


def test_timeout_names_the_limit(ollama_server: FakeOllama) -> None:
    ollama_server.delay_next(3)
    started = time.monotonic()

    message = embed_error(embedder(ollama_server.url, timeout=0.3), ["hello"])

    assert time.monotonic() - started < 2
    assert message == f"Ollama at {ollama_server.url} did not answer within 0.3 s"


def test_unknown_model_says_how_to_pull_it(ollama_server: FakeOllama) -> None:
    emb = OllamaEmbedder(host=ollama_server.url, model="no-such-model", timeout=5)

    message = embed_error(emb, ["hello"])

    assert message == "Ollama has no model 'no-such-model': run `ollama pull no-such-model`"


def test_other_server_errors_pass_on_ollamas_reason(ollama_server: FakeOllama) -> None:
    ollama_server.fail_next(500, "llama runner process has\nterminated")

    message = embed_error(embedder(ollama_server.url), ["hello"])

    assert message == (
        f"Ollama could not embed with '{MODEL}': llama runner process has terminated (HTTP 500)"
    )


def test_wrong_number_of_vectors_is_an_error(ollama_server: FakeOllama) -> None:
    ollama_server.intercept_next(Reply({"model": MODEL, "embeddings": [[1.0, 0.0]]}))

    message = embed_error(embedder(ollama_server.url), ["one", "two"])

    assert message == f"Ollama model '{MODEL}' returned 1 vectors for 2 texts"


def test_ragged_vectors_are_an_error(ollama_server: FakeOllama) -> None:
    ollama_server.intercept_next(Reply({"model": MODEL, "embeddings": [[1.0, 0.0], [1.0]]}))

    message = embed_error(embedder(ollama_server.url), ["one", "two"])

    assert "vectors of unequal lengths" in message


def test_a_changed_dimension_is_an_error(ollama_server: FakeOllama) -> None:
    emb = embedder(ollama_server.url)
    emb.embed(["first"])
    ollama_server.set_embed_dim(8)

    message = embed_error(emb, ["second"])

    assert message == f"Ollama model '{MODEL}' returned 8-dim vectors after 64-dim ones"


def test_malformed_answer_is_an_error(ollama_server: FakeOllama) -> None:
    ollama_server.intercept_next(Malformed())

    host = ollama_server.url.replace("://", "://bob:tok-s3cret@")  # shown without the token
    message = embed_error(embedder(host), ["hello"])

    shown = ollama_server.url.replace("://", "://bob:***@")
    assert message == f"Ollama at {shown} sent an unreadable answer"


def test_fake_server_serves_added_models_with_custom_vectors(ollama_server: FakeOllama) -> None:
    ollama_server.add_model("custom-embed:v1")
    ollama_server.embed_fn = lambda text, dim: [0.0, float(len(text))]
    emb = OllamaEmbedder(host=ollama_server.url, model="custom-embed:v1", timeout=5)

    np.testing.assert_array_equal(emb.embed(["abc"]), [[0.0, 1.0]])


def test_importing_and_building_the_embedder_does_not_import_ollama() -> None:
    code = (
        "import sys\n"
        "from memctl.embed.ollama import OllamaEmbedder\n"
        "OllamaEmbedder(host='http://127.0.0.1:1', model='m', timeout=1)\n"
        "print(sorted(m for m in ('ollama', 'httpx') if m in sys.modules))\n"
    )
    result = python_c(code, cwd=REPO_ROOT, check=True)

    assert result.stdout.strip() == "[]"


def test_fake_server_scripts_chat_answers_for_json_schema_requests(
    ollama_server: FakeOllama,
) -> None:
    schema = {"type": "object", "properties": {"facts": {"type": "array"}}}
    ollama_server.script_chat({"facts": ["likes tea"]}, "plain text")
    client = ollama.Client(host=ollama_server.url, timeout=5)
    messages = [{"role": "user", "content": "extract facts"}]

    first = client.chat(model="llama3.2", messages=messages, format=schema, stream=False)
    second = client.generate(model="llama3.2", prompt="say something", stream=False)

    assert first.message.content == '{"facts": ["likes tea"]}'
    assert (first.message.role, first.done, first.done_reason) == ("assistant", True, "stop")
    assert second.response == "plain text"
    [request] = ollama_server.requests_to("/api/chat")
    assert (request["format"], request["stream"], request["messages"]) == (schema, False, messages)


def test_fake_server_scripts_failures_for_chat(ollama_server: FakeOllama) -> None:
    ollama_server.script_chat(Fail(503, "server busy"), Malformed(), Delay(3))
    client = ollama.Client(host=ollama_server.url, timeout=0.3)

    def chat() -> ollama.ChatResponse:
        return client.chat(model="llama3.2", messages=[], stream=False)

    with pytest.raises(ollama.ResponseError) as failed:
        chat()
    assert (failed.value.status_code, failed.value.error) == (503, "server busy")
    with pytest.raises(ValueError):
        chat()
    with pytest.raises(httpx.ReadTimeout):
        chat()
    with pytest.raises(ollama.ResponseError, match="no scripted answer left"):
        chat()
