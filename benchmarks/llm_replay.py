"""Recorded LLM answers replayed through a loopback Ollama server: an LLM stage measured
where no LLM runs.

The answers file is JSON, ``{"about": "...", "answers": {KEY: ANSWER}}``: KEY is
``request_key`` of the chat request's messages, ANSWER the JSON the model answered
(for the recall judge, ``{"scores": [{"id": 0, "score": 7}, ...]}``). The server is
tests/ollama_server.py's, spoken to through memctl's real Ollama client. A request
with no recorded answer is answered with an error (memctl then goes on as if Ollama
were unreachable), counted, and kept with its messages so that it can be answered
and added to the file (``write_missing``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memctl.errors import InputError

NO_ANSWER = "no recorded answer for this request"


def request_key(messages: list[dict[str, Any]]) -> str:
    """The key of a chat request: a hash of its messages (roles and texts), nothing else."""
    text = json.dumps([[m.get("role"), m.get("content")] for m in messages], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def read_answers(path: Path) -> dict[str, Any]:
    """The answers of ``path``; a file that does not exist yet has none (record mode)."""
    if not path.exists():
        return {}
    try:
        answers = json.loads(path.read_text("utf-8"))["answers"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputError(f"{path} is not an answers file ({{'answers': {{...}}}}): {exc}") from None
    if not isinstance(answers, dict):
        raise InputError(f"{path}: 'answers' is not an object")
    return answers


@dataclass
class Replay:
    """The loopback server and what it was asked: ``answered`` and ``missing`` requests."""

    answers: dict[str, Any]
    answered: int = 0
    missing: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    url: str = ""

    def chat(self, messages: list[dict[str, Any]]) -> Any:
        from tests.ollama_server import Fail

        key = request_key(messages)
        if key in self.answers:
            self.answered += 1
            return self.answers[key]
        self.missing[key] = messages
        return Fail(500, NO_ANSWER)

    def write_missing(self, path: Path) -> None:
        """The unanswered requests, by key: the user's message (the query and memories)."""
        requests = {
            key: next((m["content"] for m in messages if m.get("role") == "user"), "")
            for key, messages in self.missing.items()
        }
        path.write_text(json.dumps(requests, indent=1, ensure_ascii=False) + "\n", "utf-8")


def start(answers_file: Path) -> tuple[Replay, Any]:
    """A replay of ``answers_file`` on a fresh loopback server; stop the server when done."""
    from tests.ollama_server import FakeOllama

    replay = Replay(read_answers(answers_file))
    server = FakeOllama().start()
    server.chat_fn = replay.chat
    replay.url = server.url
    return replay, server
