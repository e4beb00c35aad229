"""``memctl mcp``'s first answers, given before the MCP SDK is imported.

Importing the SDK costs about 0.6 s of CPU (its pydantic protocol types), more than
some clients wait for a server to answer ``initialize`` (issue 25: ``claude -p``
started without memctl's tools). The SDK still speaks the protocol: every message
the client sends goes to it, in order, and it answers every one. While it loads,
this front answers the requests whose answer depends only on memctl's and the
SDK's code (``EARLY_METHODS``: the handshake and the lists) with the answer the SDK
gave to the same request in an earlier start, kept in ``ANSWERS_FILE`` under the
data directory with the code's ``stamp``, or else in ``SHIPPED_FILE``, the SDK's answers
for every protocol version it speaks, made with memctl (``scripts/gen_mcp_answers.py``)
and used with the SDK release they were made with: so a first start after an install
or an upgrade is answered at once too. The SDK's own answer to such a request is then
not sent again; when it differs from the one given, the kept file is corrected. A
request never seen before waits for the SDK, as it did before this front.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from memctl import __version__
from memctl.config.files import write_private

# Answers that are a function of the code alone: the handshake (initialize, or
# server/discover in the 2026-07-28 protocol), and the lists of tools, resources and
# prompts (fixed when the server is built).
EARLY_METHODS = (
    "initialize",
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "subscriptions/listen",  # answered by a notification: the subscription acknowledged
)
MODERN_VERSION = "io.modelcontextprotocol/protocolVersion"  # _meta keys of 2026-07-28
MODERN_CLIENT = "io.modelcontextprotocol/clientInfo"
MODERN_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
LISTEN, ACKNOWLEDGED = "subscriptions/listen", "notifications/subscriptions/acknowledged"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"  # the listen request's id
ANSWERS_FILE = "mcp-answers.json"
SHIPPED_FILE = Path(__file__).with_name("mcp_answers.json")
SDK_PACKAGES = ("mcp", "mcp_types")
MAX_REQUEST_BYTES = 1 << 16  # longer lines are tool calls, never an early method
EOF_GRACE, EOF_POLL = 2.0, 0.01  # seconds the SDK may take to answer them at the end
MAX_ANSWERS = 64  # a few per client version; a full file starts over


def stamp() -> str:
    """What the kept answers depend on: memctl's version, the server module and this one,
    the SDK's and its protocol types' packages (their files' sizes and change times)."""
    parts = [__version__]
    origins = [str(Path(__file__).with_name("mcp_server.py")), str(Path(__file__))]
    for package in SDK_PACKAGES:
        spec = importlib.util.find_spec(package)
        origins.append(str(spec.origin) if spec and spec.origin else package)
    for origin in origins:
        try:
            info = os.stat(origin)
        except OSError:
            parts.append(f"{origin}:missing")
        else:
            parts.append(f"{origin}:{info.st_size}:{info.st_mtime_ns}")
    return " ".join(parts)


def sdk_release() -> str:
    """The SDK's installed releases, as their ``.dist-info`` folders name them
    (``mcp-2.3.0 mcp_types-2.3.0``; importlib.metadata takes ~0.1 s to import)."""
    found = []
    for package in SDK_PACKAGES:
        spec = importlib.util.find_spec(package)
        where = Path(spec.origin).parent.parent if spec and spec.origin else None
        names = [p.name for p in where.glob(f"{package}-*.dist-info")] if where else []
        found.append(names[0].removesuffix(".dist-info") if len(names) == 1 else f"{package}-?")
    return " ".join(found)


def shipped(path: Path = SHIPPED_FILE) -> dict[str, Any]:
    """The answers made with memctl, when they were made with the SDK installed here."""
    try:
        made = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(made, dict) or made.get("sdk") != sdk_release():
        return {}
    answers = made.get("answers")
    return answers if isinstance(answers, dict) else {}


class Front:
    """Reads the client's messages (from ``wire_in``) for the SDK, answering early the
    ones it can; writes the SDK's answers (to ``wire_out``) but those already given."""

    def __init__(self, answers_path: Path, wire_in: Any, wire_out: int) -> None:
        self.path = answers_path
        self.stamp = stamp()
        self.answers: dict[str, Any] = self._read()
        self.shipped = shipped()
        self.wire_in = wire_in
        self.wire_out = wire_out
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.write_lock = threading.Lock()
        self.sdk_reading = False  # set once the SDK reads its first message
        self.handshake: Any = None  # the params of the client's initialize
        self.pending: dict[Any, str] = {}  # request id -> its key, for early methods
        self.answered = Counter[Any]()  # ids answered early, whose SDK answer is dropped
        self.given: dict[Any, Any] = {}  # request id -> the result answered early

    def _read(self) -> dict[str, Any]:
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(kept, dict) or kept.get("stamp") != self.stamp:
            return {}
        answers = kept.get("answers")
        return answers if isinstance(answers, dict) else {}

    def _save(self) -> None:
        if len(self.answers) > MAX_ANSWERS:
            self.answers = {}
        try:
            write_private(self.path, json.dumps({"stamp": self.stamp, "answers": self.answers}))
        except OSError:
            pass  # an answer not kept only makes the next start wait for the SDK

    def start(self) -> None:
        threading.Thread(target=self._read_wire, name="mcp-front", daemon=True).start()

    def _read_wire(self) -> None:
        for line in self.wire_in:
            if not self.sdk_reading:
                self._answer_early(line)
            else:
                self._note(line)
            self.lines.put(line)
        self.lines.put(None)

    def _key(self, message: Any) -> tuple[Any, str] | None:
        """(id, key) of a request the front may answer, or None. The SDK's answers to
        memctl's server read the protocol version alone, not who the client is nor what
        it can do (memctl offers nothing that depends on the client's capabilities): a
        client's new version, or another client, gets the early answers too."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, ident = message.get("method"), message.get("id")
        if method not in EARLY_METHODS or not isinstance(ident, str | int):
            return None
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(params, dict) and isinstance(meta, dict) and MODERN_VERSION in meta:
            # the 2026-07-28 protocol (Claude Code 2.1.330): no handshake, every request
            # carries the protocol version and the client in its _meta
            if not all(isinstance(meta.get(k), dict) for k in (MODERN_CLIENT, MODERN_CAPABILITIES)):
                return None  # the SDK refuses a half-built envelope
            shown = {MODERN_VERSION: meta[MODERN_VERSION]}
            return ident, json.dumps(["modern", method, {**params, "_meta": shown}], sort_keys=True)
        if method == "initialize":
            version = _handshake_version(params)
            if self.handshake is not None or version is None:
                return None
            self.handshake = {"protocolVersion": version}
        elif self.handshake is None:
            return None
        asked = None if method == "initialize" else params or None  # initialize's: the handshake
        return ident, json.dumps([self.handshake, method, asked], sort_keys=True)

    def _note(self, line: bytes) -> tuple[Any, str] | None:
        """Remember an early-method request, so the SDK's answer can be kept."""
        if len(line) > MAX_REQUEST_BYTES:
            return None
        try:
            found = self._key(json.loads(line))
        except ValueError:
            return None
        if found is not None:
            self.pending[found[0]] = found[1]
        return found

    def _answer_early(self, line: bytes) -> None:
        found = self._note(line)
        if found is None:
            return
        ident, key = found
        result = self.answers.get(key, self.shipped.get(key))
        if result is None:
            return
        if '"subscriptions/listen"' in key:  # its answer: the acknowledgement, for this id
            meta = {SUBSCRIPTION: ident, **result.get("_meta", {})}
            self._send(
                {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {**result, "_meta": meta}}
            )
        else:
            self._send({"jsonrpc": "2.0", "id": ident, "result": result})
        self.answered[ident] += 1
        self.given[ident] = result

    def _send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        with self.write_lock:
            os.write(self.wire_out, data)  # small messages: one write each

    # The SDK's side: its stdin and stdout (anyio wraps these in threads).

    def readline(self) -> str:
        self.sdk_reading = True
        line = self.lines.get()
        if line is None:
            self.lines.put(None)  # every later read is at the end too
            # The SDK cancels what it has not answered when its input ends: the answers of
            # the early methods are let through first, so the kept ones can be checked.
            ends = time.monotonic() + EOF_GRACE
            while self.pending and time.monotonic() < ends:
                time.sleep(EOF_POLL)
            return ""
        return line.decode("utf-8", errors="replace")

    def write(self, text: str) -> int:
        """One message of the SDK (a JSON line): sent, unless its answer was given early."""
        try:
            message = json.loads(text) if self.pending else None
        except ValueError:
            message = None
        answer = answer_of(message)
        if answer is not None and self.answered[answer[0]] > 0:
            self.answered[answer[0]] -= 1
        else:
            data = text.encode()
            with self.write_lock:
                while data:
                    data = data[os.write(self.wire_out, data) :]
        if answer is not None:
            self._learn(*answer)
        return len(text)

    def _learn(self, ident: Any, result: Any) -> None:
        """Keep the SDK's result for an early-method request; drop a kept one it no longer
        gives (the client had the old one: say so on stderr)."""
        key = self.pending.pop(ident, None) if isinstance(ident, str | int) else None
        if key is None:
            return
        if ident in self.given and self.given.pop(ident) != result:
            sys.stderr.write(f"memctl mcp: an early answer to request {ident} was stale\n")
        if self.answers.get(key) != result:
            if result is None:
                self.answers.pop(key, None)
            else:
                self.answers[key] = result
            self._save()

    def flush(self) -> None:
        pass


def _handshake_version(params: Any) -> str | None:
    """The protocol version ``initialize`` asks for, when its params have the shape the
    SDK accepts (else the SDK answers with an error, never the front)."""
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return None
    if not all(isinstance(params.get(k), dict) for k in ("capabilities", "clientInfo")):
        return None
    return str(params["protocolVersion"])


def answer_of(message: Any) -> tuple[Any, Any] | None:
    """(request id, result) of an SDK message that answers a request: a response (its
    result, None for an error), or the acknowledgement of a subscription (its params
    without the subscription's id); None for anything else."""
    if not isinstance(message, dict):
        return None
    if "method" not in message:
        return message.get("id"), message.get("result")
    params = message.get("params")
    if message["method"] != ACKNOWLEDGED or not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict) or SUBSCRIPTION not in meta:
        return None
    rest = {k: v for k, v in meta.items() if k != SUBSCRIPTION}
    return meta[SUBSCRIPTION], {**params, "_meta": rest}


def claim_wire() -> tuple[Any, int]:
    """The client's pipe, in and out, on private descriptors; fd 0 then reads nothing and
    fd 1 goes to stderr, so nothing a tool or a child prints can corrupt the wire (the
    SDK's stdio transport does the same)."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return os.fdopen(wire_in, "rb"), wire_out


def main(options: dict[str, Any]) -> int:
    """``memctl [--home DIR] [-c K=V] mcp`` from the fast lane (no Typer): the front
    starts answering, then the SDK loads and serves."""
    from memctl.config import settings_from_flags

    settings = settings_from_flags(options.get("home"), options.get("config", []))
    wire_in, wire_out = claim_wire()
    front = Front(settings.home / ANSWERS_FILE, wire_in, wire_out)
    front.start()
    from memctl.integrations.mcp_server import open_context, serve

    with open_context(settings) as ctx:
        serve(ctx, front)
    return 0
