"""A fake Ollama server on loopback, spoken to through the real ``ollama`` client.

Tests cannot rely on a running Ollama (nor on the internet), and mocking the
client would not catch mistakes in how we call it or in how it parses answers.
So this module serves the parts of the Ollama HTTP API that memctl uses, with
response shapes copied from the real server, deterministic embeddings and
scripted chat answers. Every request is recorded for assertions.

It also serves Ollama's OpenAI-compatible ``/v1/chat/completions`` (memctl's
``llm: openai`` provider speaks it). Use the ``ollama_server`` and
``dead_ollama_url`` fixtures, or ``FakeOllama`` directly as a context manager.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

HOST = "127.0.0.1"
DEFAULT_MODELS = ("nomic-embed-text", "all-minilm", "llama3.2", "qwen2.5:3b")
DEFAULT_EMBED_DIM = 64
VERSION = "0.9.0"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


@dataclass(frozen=True)
class Fail:
    """Answer with HTTP ``status`` and Ollama's error body ``{"error": message}``."""

    status: int
    message: str


@dataclass(frozen=True)
class Delay:
    """Sleep ``seconds`` before answering, long enough to make a client time out.

    ``then`` is what to send afterwards. Left as None, an intercepted request
    proceeds as usual and a scripted chat answer is empty content. In an
    intercept ``then`` must be an Action, since content only fits chat.
    """

    seconds: float
    then: ScriptItem | None = None


@dataclass(frozen=True)
class Malformed:
    """Answer 200 with a body that is not valid JSON."""

    body: str = '{"model": "broken", "message": {'


@dataclass(frozen=True)
class Reply:
    """Answer with exactly this JSON body, e.g. a wrong number of embeddings."""

    body: Any
    status: int = 200


Action = Fail | Delay | Malformed | Reply
ScriptItem = dict[str, Any] | list[Any] | str | Action
EmbedFn = Callable[[str, int], list[float]]
ChatFn = Callable[[list[dict[str, Any]]], ScriptItem]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it; ``body`` is the parsed JSON (raw text if invalid)."""

    method: str
    path: str
    body: Any
    authorization: str = ""  # the Authorization header, when one was sent


def hashed_bag_of_words(text: str, dim: int) -> list[float]:
    """Deterministic, deliberately unnormalised vector: shared words share components.

    Each lower-cased word adds +1 or -1 at a position chosen by its hash, so
    equal texts give equal vectors and overlapping texts point the same way. A
    text without words hashes as a whole so no vector is all zeros.
    """
    vector = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()) or [text]:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "big") % dim
        vector[index] += 1.0 if digest[4] % 2 else -1.0
    return vector


def canonical_model(name: str) -> str:
    """Ollama treats ``llama3.2`` and ``llama3.2:latest`` as the same model."""
    return name if ":" in name else f"{name}:latest"


def now_iso() -> str:
    """A timestamp in the form Ollama puts in ``created_at``."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class FakeOllama:
    """A scripted Ollama HTTP server on 127.0.0.1 with a free port."""

    def __init__(
        self, models: Iterable[str] = DEFAULT_MODELS, embed_dim: int = DEFAULT_EMBED_DIM
    ) -> None:
        self.requests: list[RecordedRequest] = []
        self.embed_fn: EmbedFn = hashed_bag_of_words
        # Answers a chat request when nothing is scripted (None: an error, as before).
        self.chat_fn: ChatFn | None = None
        self._models = {canonical_model(name) for name in models}
        self._embed_dim = embed_dim
        self._chat_script: deque[ScriptItem] = deque()
        self._intercepts: deque[Action] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer((HOST, 0), _handler_for(self))
        # A short poll interval lets stop() return in milliseconds, not half a second.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL to give ``ollama.Client(host=...)`` or OLLAMA_HOST."""
        return f"http://{HOST}:{self._httpd.server_port}"

    def start(self) -> FakeOllama:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; wakes handlers still sleeping in a Delay so tests end fast."""
        self._stopping.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def add_model(self, name: str) -> None:
        """Make ``name`` known, as if it had been pulled."""
        self._models.add(canonical_model(name))

    def set_embed_dim(self, dim: int) -> None:
        """Length of the vectors /api/embed returns from now on."""
        self._embed_dim = dim

    def script_chat(self, *items: ScriptItem) -> None:
        """Queue answers for /api/chat and /api/generate, consumed one per request.

        A dict or list is sent as JSON-encoded content (what a model asked for a
        ``format`` schema answers), a str as is, and an Action as described on it.
        """
        with self._lock:
            self._chat_script.extend(items)

    def intercept_next(self, *actions: Action) -> None:
        """Apply ``actions`` to the next requests on any endpoint, one each."""
        for action in actions:
            if isinstance(action, Delay) and not isinstance(action.then, Action | None):
                raise TypeError(f"an intercepted Delay can only be followed by an Action: {action}")
        with self._lock:
            self._intercepts.extend(actions)

    def fail_next(self, status: int, message: str) -> None:
        """Make the next request, whatever its endpoint, fail with this status."""
        self.intercept_next(Fail(status, message))

    def delay_next(self, seconds: float) -> None:
        """Make the next request, whatever its endpoint, answer only after ``seconds``."""
        self.intercept_next(Delay(seconds))

    def requests_to(self, path: str) -> list[Any]:
        """Bodies of the requests made to ``path``, in order."""
        return [request.body for request in self.requests if request.path == path]

    def has_model(self, name: str) -> bool:
        return canonical_model(name) in self._models

    def sleep(self, seconds: float) -> None:
        """Sleep, but wake as soon as the server stops."""
        self._stopping.wait(seconds)

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def pop_intercept(self) -> Action | None:
        with self._lock:
            return self._intercepts.popleft() if self._intercepts else None

    def pop_chat_item(self) -> ScriptItem | None:
        with self._lock:
            return self._chat_script.popleft() if self._chat_script else None

    def embed_body(self, model: str, texts: list[str], dim: int | None) -> dict[str, Any]:
        """The /api/embed answer; ``dim`` mirrors the request's ``dimensions`` option."""
        size = dim or self._embed_dim
        return {
            "model": model,
            "embeddings": [self.embed_fn(text, size) for text in texts],
            "total_duration": 14_143_917,
            "load_duration": 1_019_500,
            "prompt_eval_count": sum(len(text.split()) for text in texts),
        }

    def tags_body(self) -> dict[str, Any]:
        """The /api/tags answer listing every known model."""
        return {"models": [_model_entry(name) for name in sorted(self._models)]}


def _model_entry(name: str) -> dict[str, Any]:
    """One model as /api/tags describes it."""
    return {
        "name": name,
        "model": name,
        "modified_at": "2025-01-01T00:00:00.000000000Z",
        "size": 274_302_450,
        "digest": hashlib.sha256(name.encode()).hexdigest(),
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": name.split(":")[0],
            "families": [name.split(":")[0]],
            "parameter_size": "137M",
            "quantization_level": "F16",
        },
    }


def _generation_stats(prompt: Any, content: str) -> dict[str, Any]:
    """The bookkeeping fields every finished chat or generate answer carries."""
    return {
        "created_at": now_iso(),
        "done": True,
        "done_reason": "stop",
        "total_duration": 5_043_500_667,
        "load_duration": 5_025_959,
        "prompt_eval_count": len(json.dumps(prompt).split()),
        "prompt_eval_duration": 325_953_000,
        "eval_count": max(1, len(content.split())),
        "eval_duration": 4_709_213_000,
    }


def _content(item: dict[str, Any] | list[Any] | str) -> str:
    return item if isinstance(item, str) else json.dumps(item)


def _handler_for(server: FakeOllama) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``server``'s state."""

    class Handler(_OllamaHandler):
        fake = server

    return Handler


class _OllamaHandler(BaseHTTPRequestHandler):
    """Routes one HTTP request to the fake's endpoints."""

    fake: FakeOllama
    server_version = "FakeOllama/" + VERSION

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean."""

    def do_GET(self) -> None:
        self._handle(None)

    def do_POST(self) -> None:
        """Parse the JSON body; an unparsable one is kept as text for the record."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode()
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw
        self._handle(body)

    def _handle(self, body: Any) -> None:
        """Record, apply any intercept, then route; a client that gave up is no error."""
        authorization = self.headers.get("Authorization") or ""
        self.fake.record(RecordedRequest(self.command, self.path, body, authorization))
        try:
            action = self.fake.pop_intercept()
            if action is None or not self._act(action):
                self._route(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _act(self, action: Action) -> bool:
        """Carry out an intercept; False means the request should proceed normally."""
        if isinstance(action, Delay):
            self.fake.sleep(action.seconds)
            return isinstance(action.then, Action) and self._act(action.then)
        else:
            self._send_action(action)
        return True

    def _route(self, body: Any) -> None:
        routes: dict[tuple[str, str], Callable[[Any], None]] = {
            ("GET", "/api/version"): lambda _: self._send_json(200, {"version": VERSION}),
            ("GET", "/api/tags"): lambda _: self._send_json(200, self.fake.tags_body()),
            ("POST", "/api/embed"): self._embed,
            ("POST", "/api/chat"): self._chat,
            ("POST", "/api/generate"): self._generate,
            ("POST", "/v1/chat/completions"): self._openai_chat,
        }
        route = routes.get((self.command, self.path))
        if route is None:
            self._send(404, b"404 page not found", "text/plain")
        elif self._model_ok(body):
            route(body)

    def _model_ok(self, body: Any) -> bool:
        """Answer as Ollama does when a POST names no model or an unpulled one."""
        if self.command != "POST":
            return True
        if not isinstance(body, dict):
            self._send_json(400, {"error": "invalid request body"})
            return False
        model = body.get("model")
        if not model:
            self._send_json(400, {"error": "model is required"})
            return False
        if not self.fake.has_model(model):
            error = f'model "{model}" not found, try pulling it first'
            self._send_json(404, {"error": error})
            return False
        return True

    def _embed(self, body: dict[str, Any]) -> None:
        texts = body.get("input", [])
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send_json(400, {"error": "invalid input type"})
            return
        answer = self.fake.embed_body(body["model"], texts, body.get("dimensions"))
        self._send_json(200, answer)

    def _chat(self, body: dict[str, Any]) -> None:
        if not self._non_streaming(body):
            return

        def shape(content: str) -> dict[str, Any]:
            return {
                "model": body["model"],
                "message": {"role": "assistant", "content": content},
                **_generation_stats(body.get("messages"), content),
            }

        item = self.fake.pop_chat_item()
        if item is None and self.fake.chat_fn is not None:
            item = self.fake.chat_fn(body.get("messages") or [])
        self._answer_item(item, shape)

    def _openai_chat(self, body: dict[str, Any]) -> None:
        """Ollama's OpenAI-compatible endpoint: the same scripted answers, OpenAI's shape."""

        def shape(content: str) -> dict[str, Any]:
            stats = _generation_stats(body.get("messages"), content)
            return {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": stats["prompt_eval_count"],
                    "completion_tokens": stats["eval_count"],
                    "total_tokens": stats["prompt_eval_count"] + stats["eval_count"],
                },
            }

        item = self.fake.pop_chat_item()
        if item is None and self.fake.chat_fn is not None:
            item = self.fake.chat_fn(body.get("messages") or [])
        self._answer_item(item, shape)

    def _generate(self, body: dict[str, Any]) -> None:
        if not self._non_streaming(body):
            return

        def shape(content: str) -> dict[str, Any]:
            return {
                "model": body["model"],
                "response": content,
                "context": [1, 2, 3],
                **_generation_stats(body.get("prompt"), content),
            }

        item = self.fake.pop_chat_item()
        if item is None and self.fake.chat_fn is not None:
            item = self.fake.chat_fn(body.get("messages") or [])
        self._answer_item(item, shape)

    def _non_streaming(self, body: dict[str, Any]) -> bool:
        """Refuse streaming loudly rather than answer in a shape the caller won't expect."""
        if body.get("stream"):
            self._send_json(400, {"error": "fake ollama does not stream; pass stream=False"})
            return False
        return True

    def _answer_item(self, item: ScriptItem | None, shape: Callable[[str], Any]) -> None:
        """Send a scripted answer, with ``shape`` wrapping plain content for the endpoint."""
        if item is None:
            self._send_json(500, {"error": "fake ollama: no scripted answer left"})
        elif isinstance(item, Delay):
            self.fake.sleep(item.seconds)
            self._answer_item("" if item.then is None else item.then, shape)
        elif isinstance(item, Fail | Malformed | Reply):
            self._send_action(item)
        else:
            self._send_json(200, shape(_content(item)))

    def _send_action(self, action: Fail | Malformed | Reply) -> None:
        if isinstance(action, Fail):
            self._send_json(action.status, {"error": action.message})
        elif isinstance(action, Malformed):
            self._send(200, action.body.encode(), "application/json; charset=utf-8")
        else:
            self._send_json(action.status, action.body)

    def _send_json(self, status: int, body: Any) -> None:
        self._send(status, json.dumps(body).encode(), "application/json; charset=utf-8")

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _bypass_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx honours proxy variables even for loopback; the fake must be reached directly."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def ollama_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOllama]:
    """A fresh running fake Ollama per test, stopped afterwards."""
    _bypass_proxies(monkeypatch)
    with FakeOllama() as server:
        yield server


@pytest.fixture
def dead_ollama_url(monkeypatch: pytest.MonkeyPatch) -> str:
    """A loopback URL where nothing listens, so connecting fails at once."""
    _bypass_proxies(monkeypatch)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port = sock.getsockname()[1]
    return f"http://{HOST}:{port}"
