"""The assistant's own CLI, run headless, as the LLM: ``claude -p`` (``llm: claude-code``) or
``codex exec`` (``llm: codex``).

Every assistant user already has one of these, signed in. The worker runs it
(never a hook: a hook only queues the work), once per extraction call, with
no tools, no MCP servers and no saved session, the stage's instructions and
the answer's JSON schema in the prompt, and reads the JSON answer and the
tokens it cost from the CLI's JSON output. The child gets ``MEMCTL_HEADLESS=1``:
memctl's own hooks then do nothing in it, so memctl's extraction sessions are
never captured as sessions (no loop) and no context block is injected into
them. It costs the user's own model quota: opt-in only (``memctl config set
llm claude-code``), never chosen by ``auto``.

A CLI that is missing fails at once (the stage falls back to the rules); a
timeout, a failed run or an answer that is not the JSON asked for is retried
as for the other providers (``retry``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from memctl.config.settings import HEADLESS_ENV
from memctl.llm import Completion, LLMError
from memctl.llm.retry import Answer, Retryable, complete_with_retries

T = TypeVar("T")
PROGRAMS = {"claude-code": "claude", "codex": "codex"}
ANSWER_FORMAT = (
    "\n\nAnswer with only a JSON object matching this JSON schema, no prose, no code fence:\n"
)
ERROR_CHARS = 200


class HeadlessLLM:
    """The LLM protocol over ``claude -p`` or ``codex exec``."""

    def __init__(
        self, client: str, model: str, timeout: float, retries: int = 2, backoff: float = 1.0
    ) -> None:
        self._client = client
        self._program = PROGRAMS[client]
        self._model = model
        self._timeout = timeout
        self._retries = retries
        self._backoff = backoff

    @property
    def name(self) -> str:
        return f"{self._client}:{self._model or 'default'}"

    def complete_json(
        self, system: str, prompt: str, schema: dict[str, Any], validate: Callable[[Any], T]
    ) -> Completion:
        program = shutil.which(self._program)
        if program is None:
            raise LLMError(f"{self._program} is not on PATH (llm: {self._client})", "unreachable")
        asked = prompt + ANSWER_FORMAT + json.dumps(schema, ensure_ascii=False)
        run = _claude if self._client == "claude-code" else _codex
        return complete_with_retries(
            self.name,
            lambda: run(program, system, asked, schema, self._model, self._timeout),
            validate,
            self._retries,
            self._backoff,
        )


def _run(argv: list[str], prompt: str, timeout: float, cwd: str) -> str:
    """The CLI's standard output; Retryable when it times out or fails. The prompt (the
    session's text) goes on its standard input: a command line is readable by every local
    user for as long as the process runs (``ps``, ``/proc/PID/cmdline``)."""
    env = {**os.environ, HEADLESS_ENV: "1"}
    try:
        done = subprocess.run(
            argv,
            input=prompt,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired:
        name = Path(argv[0]).name
        raise Retryable("timeout", f"{name} gave no answer in {timeout:g} s") from None
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[:ERROR_CHARS]
        raise Retryable("error", f"{Path(argv[0]).name} exited {done.returncode}: {said}")
    return done.stdout


def _claude(
    program: str, system: str, prompt: str, schema: dict[str, Any], model: str, timeout: float
) -> Answer:
    argv = [program, "-p", "--output-format", "json", "--no-session-persistence"]
    argv += ["--tools", "", "--strict-mcp-config", "--system-prompt", system]
    argv += ["--model", model] if model else []
    with tempfile.TemporaryDirectory(prefix="memctl-headless-") as where:
        out = _run(argv, prompt, timeout, where)  # claude -p reads the prompt from stdin
    try:
        result = json.loads(out)
    except ValueError:
        raise Retryable("invalid", "claude -p printed no JSON result") from None
    if not isinstance(result, dict) or result.get("is_error"):
        raise Retryable("error", f"claude -p: {str(result)[:ERROR_CHARS]}")
    usage = result.get("usage") or {}
    prompt_tokens = sum(
        int(usage.get(key) or 0)
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    output_tokens = int(usage.get("output_tokens") or 0)
    return Answer(_unfenced(str(result.get("result") or "")), prompt_tokens, output_tokens)


def _codex(
    program: str, system: str, prompt: str, schema: dict[str, Any], model: str, timeout: float
) -> Answer:
    with tempfile.TemporaryDirectory(prefix="memctl-headless-") as where:
        schema_file = Path(where) / "schema.json"
        schema_file.write_text(json.dumps(schema), encoding="utf-8")
        argv = [program, "exec", "--ephemeral", "--skip-git-repo-check", "--json"]
        argv += ["--sandbox", "read-only", "--output-schema", str(schema_file)]
        argv += ["--model", model] if model else []
        out = _run([*argv, "-"], f"{system}\n\n{prompt}", timeout, where)  # "-": from stdin
    text, prompt_tokens, output_tokens = "", 0, 0
    for line in out.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        item = event.get("item") if isinstance(event, dict) else None
        if isinstance(item, dict) and item.get("type") == "agent_message":
            text = str(item.get("text") or "")
        usage = event.get("usage") if isinstance(event, dict) else None
        if isinstance(usage, dict):
            prompt_tokens += int(usage.get("input_tokens") or 0)
            output_tokens += int(usage.get("output_tokens") or 0)
    if not text:
        raise Retryable("invalid", "codex exec gave no final message")
    return Answer(_unfenced(text), prompt_tokens, output_tokens)


def _unfenced(text: str) -> str:
    """The answer without a Markdown code fence around it, which models add anyway."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()
