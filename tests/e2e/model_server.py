"""A scripted model on loopback for the real clients: Anthropic Messages (Claude Code),
OpenAI Responses (Codex), OpenAI Chat Completions (GitHub Copilot CLI with its own
provider) and Gemini's generateContent (Gemini CLI), streamed as server-sent events.

The model's script is simple and deterministic:
- a request whose latest user turn holds a tool result gets a text answer quoting it;
- a prompt containing ``SEARCH: <query>`` makes the model call the first offered tool
  whose name ends in ``memory_search`` with that query; with ``AGAIN: <query>`` too, it
  calls it a second time, with that query, once the first result is in;
- a prompt containing ``STORE: <fact>`` makes the model call the offered tool whose name
  ends in ``memory_store`` with that text first; with ``SEARCH: <query>`` after it, the
  search follows once the store's result is in;
- a prompt containing ``RUN: <command>`` makes the model run that shell command with the
  client's own shell tool (Claude Code's ``Bash``, OpenCode's ``bash``, Codex's
  ``exec_command`` or ``shell``), then quote its output;
- a prompt containing ``DELEGATE: <task>`` makes the model start a sub-agent (Claude
  Code's Agent tool, OpenCode's ``task``, Codex's ``spawn_agent``) with that task, which
  the sub-agent answers ``ok``;
- a prompt asking for JSON matching a schema with numbered ``[n] user: ...`` lines (memctl's
  extraction, run through the CLI headless) gets ``{"facts": [...]}``, one fact per user line;
- a prompt containing ``HOLD`` is answered only once the server shuts down (or after
  ``HOLD_SECONDS``): a turn in progress, for a test to interrupt;
- anything else gets the answer ``ok``.
Every request body is kept (``server.requests``) for the tests to look into, with when it
arrived and when its answer was sent (``server.times``, ``time.monotonic()``) for the
benchmarks.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SEARCH = re.compile(r"SEARCH: ([^\n\"]+?)(?= AGAIN:|$|\n|\")")
STORE = re.compile(r"STORE: ([^\n\"]+?)(?= SEARCH:|$|\n|\")")
AGAIN = re.compile(r"AGAIN: ([^\n\"]+)")
DELEGATE = re.compile(r"DELEGATE: ([^\n\"]+)")
RUN = re.compile(r"RUN: ([^\n\"]+)")
SHELL_TOOLS = ("Bash", "bash")  # Claude Code's, OpenCode's and Copilot CLI's shell tool
RUN_ID = "toolu_run"
# Each answer its own message id, each tool call its own id: Claude Code rebuilds a resumed
# session's history by them (answers sharing one id lose their turns on --resume)
MESSAGE_IDS = itertools.count(1)
AGENT_TOOLS = ("Agent", "Task", "task")  # Claude Code's sub-agent tool, by version; OpenCode's
# the general-purpose agent, as each client names it (OpenCode 1.18's task tool lists "general")
AGENT_TYPES = {"task": "general"}
SPAWN_TOOL = "spawn_agent"  # Codex's (0.171, namespace multi_agent_v1)
EXTRACTION = "matching this JSON schema"
USER_LINE = re.compile(r"^\[(\d+)\] user: (.+)$", re.M)
WAIT_TOOL, WAIT_ID = "WaitForMcpServers", "toolu_wait"
SEARCH_ID, AGAIN_ID, STORE_ID = "toolu_search", "toolu_again", "toolu_store"
HOLD = "HOLD"
HOLD_SECONDS = 120.0


def _texts(value: Any) -> str:
    """Every string inside a JSON value, joined (to look for markers in a request)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_texts(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_texts(v) for v in value)
    return ""


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def extraction(text: str) -> str | None:
    """memctl's extraction answer for a prompt that asks for one: each user line a fact."""
    if EXTRACTION not in text:
        return None
    facts = [
        {
            "content": line,
            "l0_abstract": line[:80],
            "category": "patterns",
            "source_message": int(n),
        }
        for n, line in USER_LINE.findall(text)
    ]
    return json.dumps({"facts": facts})


# -- Anthropic Messages --------------------------------------------------------------


def anthropic_plan(body: dict[str, Any]) -> dict[str, Any]:
    """{"text": ...} or {"tool": name, "input": {...}, "id": ...} for this request.

    Claude Code may still be connecting to an MCP server when it sends the first
    request; it then offers ``WaitForMcpServers``, which this model calls first."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    last = users[-1] if users else {}  # a hook's context comes as a later system message
    content = last.get("content") if isinstance(last.get("content"), list) else []
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    tools = [t.get("name", "") for t in body.get("tools") or []]
    search = next((t for t in tools if t.endswith("memory_search")), None)
    store = next((t for t in tools if t.endswith("memory_store")), None)
    said = "\n".join(_texts(u) for u in users)
    again = AGAIN.search(said)
    found = SEARCH.search(said)
    stored = STORE.search(said)
    answered = str(results[-1].get("tool_use_id")) if results else ""
    if answered.startswith(SEARCH_ID) and again and search:
        return {"tool": search, "input": {"query": again.group(1).strip()}, "id": AGAIN_ID}
    if answered.startswith(STORE_ID) and found and search:
        return {"tool": search, "input": {"query": found.group(1).strip()}, "id": SEARCH_ID}
    if results and not answered.startswith(WAIT_ID):
        return {"text": "Memory says: " + _texts(results[-1])[:2000]}
    answer = extraction(_texts(last))
    if answer is not None:
        return {"text": answer}
    task = DELEGATE.search(said)
    agent = next((t for t in tools if t in AGENT_TOOLS), None)
    if task and agent and not results:
        kind = AGENT_TYPES.get(agent, "general-purpose")
        job = {"description": "a task", "prompt": task.group(1), "subagent_type": kind}
        job["run_in_background"] = False  # the session waits for it (2.1.330 would not)
        return {"tool": agent, "input": job, "id": "toolu_agent"}
    command = RUN.search(_texts(last))
    shell = next((t for t in tools if t in SHELL_TOOLS), None)
    if command and shell and not results:
        job = {"command": command.group(1).strip(), "description": "a command"}
        return {"tool": shell, "input": job, "id": RUN_ID}
    if stored and store and not answered.startswith(STORE_ID):
        return {"tool": store, "input": {"text": stored.group(1).strip()}, "id": STORE_ID}
    if found and search:
        return {"tool": search, "input": {"query": found.group(1).strip()}, "id": SEARCH_ID}
    if (found or stored) and WAIT_TOOL in tools and not results:
        return {"tool": WAIT_TOOL, "input": {}, "id": WAIT_ID}
    return {"text": "ok"}


def anthropic_stream(body: dict[str, Any]) -> Iterator[bytes]:
    plan = anthropic_plan(body)
    message = {
        "id": f"msg_scripted{next(MESSAGE_IDS)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "scripted"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    yield sse("message_start", {"type": "message_start", "message": message})
    if "tool" in plan:
        # each call its own id (the plan's kind of call, numbered): a resumed session
        # holding two calls of one id never ended (Claude Code 2.1.332)
        ident = f"{plan['id']}_{next(MESSAGE_IDS)}"
        block = {"type": "tool_use", "id": ident, "name": plan["tool"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(plan["input"])}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": plan["text"]}
        stop = "end_turn"
    yield sse(
        "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    )
    yield sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield sse("message_stop", {"type": "message_stop"})


def anthropic_message(body: dict[str, Any]) -> dict[str, Any]:
    plan = anthropic_plan(body)
    return {
        "id": f"msg_scripted{next(MESSAGE_IDS)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "scripted"),
        "content": [{"type": "text", "text": plan.get("text", "ok")}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


# -- OpenAI Responses ----------------------------------------------------------------


def responses_plan(body: dict[str, Any]) -> dict[str, Any]:
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    users = [i for i in items if i.get("role") == "user"]
    # this turn's tool results: a resumed session's input holds every earlier turn's too
    turn = max((n for n, i in enumerate(items) if i.get("role") == "user"), default=-1)
    outputs = [i for i in items[turn + 1 :] if i.get("type") == "function_call_output"]
    prompt = _texts(users[-1]) if users else ""
    search = next(
        (name for name in responses_tools(body.get("tools") or []) if name[1] == "memory_search"),
        None,
    )
    store = next(
        (name for name in responses_tools(body.get("tools") or []) if name[1] == "memory_store"),
        None,
    )
    again = AGAIN.search(prompt)
    found = SEARCH.search(prompt)
    stored = STORE.search(prompt)
    if len(outputs) == 1 and again and search:
        return {"tool": search, "input": {"query": again.group(1).strip()}, "call": 2}
    if len(outputs) == 1 and stored and store and found and search:
        return {"tool": search, "input": {"query": found.group(1).strip()}, "call": 2}
    if outputs:
        return {"text": "Memory says: " + _texts(outputs[-1].get("output"))[:2000]}
    answer = extraction(prompt)
    if answer is not None:
        return {"text": answer}
    if stored and store:
        return {"tool": store, "input": {"text": stored.group(1).strip()}, "call": 1}
    if found and search:
        return {"tool": search, "input": {"query": found.group(1).strip()}, "call": 1}
    task = DELEGATE.search(prompt)
    spawn = next((t for t in responses_tools(body.get("tools") or []) if t[1] == SPAWN_TOOL), None)
    if task and spawn:
        return {"tool": spawn, "input": {"message": task.group(1).strip()}, "call": 1}
    command = RUN.search(prompt)
    shell = shell_call(body)
    if command and shell:
        return {"tool": (None, shell[0]), "input": shell[1](command.group(1).strip()), "call": 1}
    return {"text": "ok"}


def shell_call(body: dict[str, Any]) -> tuple[str, Any] | None:
    """Codex's shell tool, by version, and how it takes a command line."""
    names = {name for _, name in responses_tools(body.get("tools") or [])}
    if "exec_command" in names:
        return "exec_command", lambda line: {"cmd": line}
    if "shell_command" in names:
        return "shell_command", lambda line: {"command": line}
    if "shell" in names:
        return "shell", lambda line: {"command": ["bash", "-lc", line]}
    return None


def responses_tools(tools: list[Any]) -> Iterator[tuple[str | None, str]]:
    """(namespace, name) of each function tool; Codex puts MCP tools in a namespace
    ``mcp__<server>``."""
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                yield tool.get("name"), inner.get("name") or ""
        elif tool.get("type") == "function":
            yield None, tool.get("name") or ""


def held(body: dict[str, Any]) -> bool:
    """Whether a request's latest user turn (Responses' ``input``, Messages' ``messages``)
    asks the answer to wait (``HOLD``)."""
    turns = body.get("input") or body.get("messages") or []
    users = [i for i in turns if isinstance(i, dict) and i.get("role") == "user"]
    return bool(users) and HOLD in _texts(users[-1])


def responses_stream(body: dict[str, Any]) -> Iterator[bytes]:
    plan = responses_plan(body)
    if "tool" in plan:
        namespace, name = plan["tool"]
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_scripted{plan['call']}",
            "call_id": f"call_scripted{plan['call']}",
            "name": name,
            "arguments": json.dumps(plan["input"]),
            "status": "completed",
        }
        if namespace:
            item["namespace"] = namespace
    else:
        item = {
            "type": "message",
            "id": f"msg_scripted{next(MESSAGE_IDS)}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": plan["text"], "annotations": []}],
        }
    response = {
        "id": "resp_scripted",
        "object": "response",
        "status": "in_progress",
        "model": body.get("model", "scripted"),
        "output": [],
    }
    yield sse("response.created", {"type": "response.created", "response": response})
    yield sse(
        "response.output_item.added",
        {"type": "response.output_item.added", "output_index": 0, "item": item},
    )
    if item["type"] == "message":
        yield sse(
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": plan["text"],
            },
        )
    yield sse(
        "response.output_item.done",
        {"type": "response.output_item.done", "output_index": 0, "item": item},
    )
    done = {
        **response,
        "status": "completed",
        "output": [item],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    yield sse("response.completed", {"type": "response.completed", "response": done})


# -- OpenAI Chat Completions -----------------------------------------------------------


def chat_plan(body: dict[str, Any]) -> dict[str, Any]:
    """{"text": ...} or {"tool": name, "input": {...}} for a Chat Completions request: a
    tool's result (the last message) is quoted; ``SEARCH:`` calls the offered function
    whose name ends in ``memory_search`` (Copilot CLI names it ``memctl-memory_search``)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    users = [m for m in messages if m.get("role") == "user"]
    prompt = _texts(users[-1].get("content")) if users else ""
    names = [(t.get("function") or {}).get("name") or "" for t in body.get("tools") or []]
    search = next((n for n in names if n.endswith("memory_search")), None)
    store = next((n for n in names if n.endswith("memory_store")), None)
    found = SEARCH.search(prompt)
    stored = STORE.search(prompt)
    if messages and messages[-1].get("role") == "tool":
        called = _texts(messages[-2]) if len(messages) > 1 else ""
        if found and search and store and store in called:  # the store's: now the search
            return {"tool": search, "input": {"query": found.group(1).strip()}}
        return {"text": "Memory says: " + _texts(messages[-1].get("content"))[:2000]}
    if stored and store:
        return {"tool": store, "input": {"text": stored.group(1).strip()}}
    if found and search:
        return {"tool": search, "input": {"query": found.group(1).strip()}}
    command = RUN.search(prompt)
    shell = next((n for n in names if n in SHELL_TOOLS), None)
    if command and shell:
        return {
            "tool": shell,
            "input": {"command": command.group(1).strip(), "description": "a command"},
        }
    return {"text": "ok"}


def chat_message(plan: dict[str, Any]) -> dict[str, Any]:
    """The assistant's message for a plan: its text, or one call of a function."""
    if "tool" not in plan:
        return {"role": "assistant", "content": plan["text"]}
    call = {
        "id": f"call_scripted{next(MESSAGE_IDS)}",
        "type": "function",
        "function": {"name": plan["tool"], "arguments": json.dumps(plan["input"])},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def chat_answer(body: dict[str, Any]) -> dict[str, Any]:
    message = chat_message(chat_plan(body))
    return {
        "id": f"chatcmpl-scripted{next(MESSAGE_IDS)}",
        "object": "chat.completion",
        "model": body.get("model", "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": chat_finish(message)}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_finish(message: dict[str, Any]) -> str:
    return "tool_calls" if message.get("tool_calls") else "stop"


def chat_stream(body: dict[str, Any]) -> Iterator[bytes]:
    """The answer as two chunks (the whole message, then why it stopped) and ``[DONE]``."""
    answer = chat_answer(body)
    message = answer["choices"][0]["message"]
    delta = dict(message)
    if "tool_calls" in message:  # a streamed call says which of the message's calls it is
        delta["tool_calls"] = [{**call, "index": 0} for call in message["tool_calls"]]
    first = {"index": 0, "delta": delta, "finish_reason": None}
    last = {"index": 0, "delta": {}, "finish_reason": chat_finish(message)}
    chunk = {key: answer[key] for key in ("id", "model")} | {"object": "chat.completion.chunk"}
    yield f"data: {json.dumps(chunk | {'choices': [first]})}\n\n".encode()
    yield f"data: {json.dumps(chunk | {'choices': [last], 'usage': answer['usage']})}\n\n".encode()
    yield b"data: [DONE]\n\n"


# -- Gemini generateContent ------------------------------------------------------------


def gemini_plan(body: dict[str, Any]) -> dict[str, Any]:
    """The model's turn (``{"parts": [...]}``) for a Gemini request: a function's result
    is quoted; ``SEARCH:`` calls the offered function named ``mcp_<server>_memory_search``."""
    contents = body.get("contents") or []
    parts = (contents[-1].get("parts") or []) if contents else []
    results = [
        p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p
    ]
    if results:
        return {"parts": [{"text": "Memory says: " + _texts(results[-1])[:2000]}]}
    names = [
        d.get("name", "")
        for tool in body.get("tools") or []
        for d in tool.get("functionDeclarations") or []
    ]
    search = next((n for n in names if n.endswith("memory_search")), None)
    found = SEARCH.search(_texts(contents[-1]) if contents else "")
    if found and search:
        return {"parts": [{"functionCall": {"name": search, "args": {"query": found.group(1)}}}]}
    return {"parts": [{"text": "ok"}]}


def gemini_answer(body: dict[str, Any]) -> dict[str, Any]:
    content = {"role": "model", **gemini_plan(body)}
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    return {
        "candidates": [{"content": content, "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage,
    }


# -- the server ----------------------------------------------------------------------


class ScriptedModel(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.times: list[list[float]] = []  # per request: [arrived, answered]
        self.lock = threading.Lock()
        self.released = threading.Event()  # set at shutdown: the held answers go

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def bodies(self, path: str) -> list[dict[str, Any]]:
        with self.lock:
            return [body for p, body in self.requests if p.startswith(path)]


class Handler(BaseHTTPRequestHandler):
    server: ScriptedModel
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._json({"data": [], "object": "list"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        with self.server.lock:
            self.server.requests.append((path, body))
            times = [time.monotonic(), 0.0]
            self.server.times.append(times)
        if path.endswith("/messages/count_tokens"):
            self._json({"input_tokens": 10})
        elif path.endswith("/messages"):
            if held(body):
                self.server.released.wait(HOLD_SECONDS)
            if body.get("stream"):
                self._stream(anthropic_stream(body))
            else:
                self._json(anthropic_message(body))
        elif path.endswith("/responses"):
            if held(body):
                self.server.released.wait(HOLD_SECONDS)
            self._stream(responses_stream(body))
        elif path.endswith("/chat/completions"):
            if body.get("stream"):
                self._stream(chat_stream(body))
            else:
                self._json(chat_answer(body))
        elif path.endswith(":countTokens"):
            self._json({"totalTokens": 10})
        elif path.endswith(":streamGenerateContent"):
            self._stream(iter([f"data: {json.dumps(gemini_answer(body))}\r\n\r\n".encode()]))
        elif path.endswith(":generateContent"):
            self._json(gemini_answer(body))
        else:
            self._json({})
        times[1] = time.monotonic()

    def _json(self, data: Any) -> None:
        payload = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, events: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for chunk in events:
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client went (interrupted)
            return


@contextmanager
def scripted_model() -> Iterator[ScriptedModel]:
    server = ScriptedModel()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.released.set()
        server.shutdown()
        server.server_close()
