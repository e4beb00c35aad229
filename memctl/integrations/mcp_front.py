"""``memctl mcp``'s first answers, given without the MCP SDK.

Importing the SDK costs about 0.6-0.9 s of CPU (its pydantic protocol types), more than
some clients wait for a server to answer ``initialize`` (issue 25: ``claude -p``
started without memctl's tools), and most of a session that only searches. So the SDK
loads only when a request comes that this front does not answer (``Front.wait``); a
session of the handshake, the lists and searches never imports it. Once it loads, the
SDK speaks the protocol: every message the client sent goes to it, in order, and it
answers every one. The front answers the requests whose answer depends only on
memctl's and the SDK's code (``EARLY_METHODS``: the handshake and the lists) with the
answer the SDK gave to the same request in an earlier start, kept in ``ANSWERS_FILE``
under the data directory with the code's ``stamp``, or else in ``SHIPPED_FILE``, the
SDK's answers for every protocol version it speaks, made with memctl
(``scripts/gen_mcp_answers.py``) and used with the SDK and pydantic releases they were
made with: so a first start after an install or an upgrade is answered at once too.
Once the SDK has loaded, its own answer to such a request is not sent again; when it
differs from the one given, the kept file is corrected. A request never seen before
loads the SDK and waits for it, as it did before this front.

A search (``memory_search``, ``session_search``) is answered by the front too (issue 37:
the first search of a session waited 1.4-4 s for the SDK's import on a loaded
machine), as the SDK would answer it: the same function (``mcp_search``) on the same
``Context``, one call at a time with the SDK's tools (``lock``), its result wrapped as
the SDK wraps a tool's. Such a call never reaches the SDK, unless its arguments are not
exactly right (``mcp_search.early_call``) or the search fails: then the SDK answers it,
or names what is wrong, as before. Once another request goes to the SDK
(``handed_over``), every later search goes to it too, in order, and the SDK reads
nothing before the front's searches are answered: a search sent after a
``memory_store`` finds what it stored. (The handshake and the lists are still answered
early until the SDK reads: their answers depend on the code alone.)
Once the store is open, a search that records nothing loads what the first one needs
(``mcp_search.warm``).
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

TYPE_CHECKING = False  # typing's names only for the checker: the front starts small
if TYPE_CHECKING:
    from memctl.context import Context

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
SERVER_INFO = "io.modelcontextprotocol/serverInfo"  # in a 2026-07-28 result's _meta
READY_SECONDS = 60.0  # a search waits this long for the server's Context, then the SDK
ANSWERS_FILE = "mcp-answers.json"
SHIPPED_FILE = Path(__file__).with_name("mcp_answers.json")
SDK_PACKAGES = ("mcp", "mcp_types")
# What the SDK's answers are also made of: pydantic writes the tools' input schemas. The
# kept answers are checked against the SDK only in a session that loads it, so a change
# of these releases must change the stamp and the shipped answers' release.
SCHEMA_PACKAGES = ("pydantic", "pydantic_core")
MAX_REQUEST_BYTES = 1 << 16  # longer lines are tool calls, never an early method
EOF_GRACE, EOF_POLL = 2.0, 0.01  # seconds the SDK may take to answer them at the end
MAX_ANSWERS = 64  # a few per client version; a full file starts over


def stamp() -> str:
    """What the kept answers depend on: memctl's version, the server modules and this one,
    the SDK's, its protocol types' and pydantic's packages (their files' sizes and change
    times)."""
    parts = [__version__]
    here = Path(__file__)
    origins = [str(here.with_name(name)) for name in ("mcp_server.py", "mcp_search.py")]
    origins.append(str(here))
    for package in (*SDK_PACKAGES, *SCHEMA_PACKAGES):
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
    """The SDK's and pydantic's installed releases, as their ``.dist-info`` folders name
    them (``mcp-2.3.0 mcp_types-2.3.0 pydantic-2.14.4 pydantic_core-2.50.5``;
    importlib.metadata takes ~0.1 s to import)."""
    found = []
    for package in (*SDK_PACKAGES, *SCHEMA_PACKAGES):
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
        self.ctx: Context | None = None  # the server's, once open: searches answered early
        self.ready = threading.Event()  # set with ctx
        self.lock = threading.Lock()  # one call at a time on ctx: the front's and the SDK's
        # What the server's main thread waits on (``wait``), under ``state``:
        self.state = threading.Condition()
        self.searching = 0  # searches the front is answering
        self.wanted = False  # a request came that the front does not answer: load the SDK
        self.handed_over = False  # a request went to the SDK: every later search goes too
        self.reading = True  # the reader thread has not met the wire's end
        self.ended = False  # the end (None) is in the queue, after every search's line
        self.gone = False  # a read or a write failed: the client is gone

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

    def attach(self, ctx: Context) -> None:
        """The server's context: searches are answered from now on (earlier ones wait,
        as they do while it warms: ``mcp_search.warm`` in a thread of its own)."""
        self.lock.acquire()  # the warm-up's, released by its thread: it comes first
        self.ctx = ctx
        self.ready.set()
        threading.Thread(target=self._warm, args=(ctx,), name="mcp-warm", daemon=True).start()

    def _warm(self, ctx: Context) -> None:
        from memctl.integrations.mcp_search import warm

        try:
            if not self.ended:  # a client gone already asks nothing
                warm(ctx)
        except Exception:  # a search that finds what failed says so itself
            pass
        finally:
            self.lock.release()

    def wait(self) -> bool:
        """Wait for what comes first: a request the front does not answer (True: load the
        SDK) or the wire's end with every search answered (False: the session is over,
        and the SDK was never needed). False too when the client went while the SDK was
        wanted: nothing the SDK says would reach it."""
        with self.state:
            self.state.wait_for(lambda: self.wanted or self.ended)
            return self.wanted and not self.gone

    def _want(self, hand_over: bool) -> None:
        """The SDK is needed (``hand_over``: and every later line is its to answer)."""
        with self.state:
            self.wanted = True
            self.handed_over = self.handed_over or hand_over
            self.state.notify_all()

    def _end(self) -> None:
        """The wire's end to the SDK's queue, once the reader met it and every search the
        front took is answered (or queued for the SDK: before the end). Under ``state``."""
        if not self.reading and not self.searching and not self.ended:
            self.ended = True
            self.lines.put(None)
            self.state.notify_all()

    def _read_wire(self) -> None:
        """The client's lines, to the SDK's queue, then its end (None): however the
        connection ends. Node and Bun give a server socketpairs, not pipes (Claude Code,
        Copilot CLI, OpenCode): a client that leaves with an answer unread makes the read
        fail with ECONNRESET, not EOF, and a write to it fails (EPIPE). Without the end in
        the queue the SDK waited for a line forever: a server idle, the store open, after
        its client had gone."""
        try:
            for line in self.wire_in:
                if not self.sdk_reading:
                    if not self.handed_over and self._search_early(line):
                        continue  # answered by the front, never by the SDK
                    early = self._answer_early(line)
                    if not early and _is_request(line):
                        # a request only the SDK answers: load it now; an early method
                        # not answered (a handshake not seen before) changes nothing, so
                        # the searches after it are still the front's
                        self._want(hand_over=early is None)
                else:
                    self._note(line)
                self.lines.put(line)
        except OSError:  # the client is gone: the SDK, if it loads, reads the end
            self.gone = True
        finally:
            with self.state:
                self.reading = False
                self._end()

    def _search_early(self, line: bytes) -> bool:
        """Whether ``line`` is a search the front answers (in a thread of its own)."""
        if len(line) > MAX_REQUEST_BYTES or b'"tools/call"' not in line:
            return False
        try:
            work = search_call(json.loads(line), self.handshake is not None)
        except ValueError:
            return False
        if work is None:
            return False
        with self.state:
            self.searching += 1
        threading.Thread(
            target=self._search, args=(line, *work), name="mcp-search", daemon=True
        ).start()
        return True

    def _search(
        self, line: bytes, ident: Any, name: str, arguments: dict[str, Any], modern: bool
    ) -> None:
        """Answer one search as the SDK would; a search that fails goes to the SDK."""
        from memctl.integrations.mcp_search import SEARCHES, purge_if_forgotten

        try:
            if not self.ready.wait(READY_SECONDS) or self.ctx is None:
                raise TimeoutError("the server's context did not open")
            with self.lock:
                purge_if_forgotten(self.ctx)  # as the SDK's calls do (mcp_server.Door)
                answer = SEARCHES[name](self.ctx, **arguments)
            result = tool_result(answer, modern)
        except Exception:  # a memctl error or any other: the SDK answers, and says what it is
            self.lines.put(line)
            self._want(hand_over=True)
        else:
            try:
                self._send({"jsonrpc": "2.0", "id": ident, "result": result})
            except OSError:  # the client is gone (EPIPE): no reason to load the SDK
                self.gone = True
        finally:
            with self.state:
                self.searching -= 1
                self._end()
                self.state.notify_all()  # the SDK's first read waits for the searches

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
        # initialize's params are the handshake; a request's _meta (Codex: a progress token,
        # its thread and session, new each request) asks nothing of a list's answer
        asked = None if method == "initialize" else _without_meta(params) or None
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

    def _answer_early(self, line: bytes) -> bool | None:
        """Whether ``line``, an early-method request, was answered here; None for any
        other line."""
        found = self._note(line)
        if found is None:
            return None
        ident, key = found
        result = self.answers.get(key, self.shipped.get(key))
        if result is None:
            return False
        if '"subscriptions/listen"' in key:  # its answer: the acknowledgement, for this id
            meta = {SUBSCRIPTION: ident, **result.get("_meta", {})}
            self._send(
                {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {**result, "_meta": meta}}
            )
        else:
            self._send({"jsonrpc": "2.0", "id": ident, "result": result})
        self.answered[ident] += 1
        self.given[ident] = result
        return True

    def _send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        with self.write_lock:
            os.write(self.wire_out, data)  # small messages: one write each

    # The SDK's side: its stdin and stdout (anyio wraps these in threads).

    def readline(self) -> str:
        if not self.sdk_reading:
            self.sdk_reading = True  # no search starts in the front from now on
            with self.state:  # the searches taken before a request handed over come first
                self.state.wait_for(lambda: not self.searching)
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
                try:
                    while data:
                        data = data[os.write(self.wire_out, data) :]
                except OSError:
                    pass  # the client is gone (EPIPE): its end is read next, and the SDK exits
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


def search_call(message: Any, handshaken: bool) -> tuple[Any, str, dict[str, Any], bool] | None:
    """(id, tool, arguments, modern) of a search the front may answer (a ``tools/call``
    of ``mcp_search.early_call``'s, after the handshake, or in a whole 2026-07-28
    envelope on a connection without one: the SDK refuses the other era's requests);
    None for any other message."""
    from memctl.integrations.mcp_search import call_session, early_call

    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    params, ident = message.get("params"), message.get("id")
    if message.get("method") != "tools/call" or not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    modern = isinstance(meta, dict) and MODERN_VERSION in meta
    if isinstance(meta, dict) and modern:
        if not all(isinstance(meta.get(k), dict) for k in (MODERN_CLIENT, MODERN_CAPABILITIES)):
            return None  # the SDK refuses a half-built envelope
    if not isinstance(ident, str | int) or modern == handshaken:  # one era a connection
        return None
    name = params.get("name")
    given, session = call_session(params.get("arguments"), meta)
    arguments = early_call(name, given)
    if arguments is not None and session is not None and name == "memory_search":
        arguments["session"] = session  # the session asking, as the call names it
    return None if arguments is None else (ident, str(name), arguments, modern)


def _is_request(line: bytes) -> bool:
    """Whether ``line`` is a JSON-RPC request (a method and an id), not a notification."""
    try:
        message = json.loads(line)
    except ValueError:
        return True  # the SDK answers it with an error
    return isinstance(message, dict) and "method" in message and "id" in message


def tool_result(answer: dict[str, Any], modern: bool) -> dict[str, Any]:
    """A tool's ``answer`` as the SDK's ``MCPServer`` sends it: as JSON text and as
    structured content (and, in the 2026-07-28 protocol, who answered)."""
    import pydantic_core  # the SDK's own JSON writer (compiled: no pydantic models)

    from memctl.integrations.mcp_search import SERVER_NAME

    text = pydantic_core.to_json(answer, fallback=str, indent=2).decode()
    result: dict[str, Any] = {
        "content": [{"text": text, "type": "text"}],
        "isError": False,
        "structuredContent": answer,
    }
    if modern:
        result["resultType"] = "complete"
        result["_meta"] = {SERVER_INFO: {"name": SERVER_NAME, "version": __version__}}
    return result


def _without_meta(params: Any) -> Any:
    """``params`` without its ``_meta``, as the SDK reads it to answer a list."""
    if not isinstance(params, dict):
        return params
    return {name: value for name, value in params.items() if name != "_meta"}


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
    answers; the SDK loads and serves only once a request comes that the front does not
    answer."""
    from memctl.config import settings_from_flags

    settings = settings_from_flags(options.get("home"), options.get("config", []))
    wire_in, wire_out = claim_wire()
    front = Front(settings.home / ANSWERS_FILE, wire_in, wire_out)
    front.start()
    from memctl.integrations.mcp_search import open_context

    with open_context(settings) as ctx:
        front.attach(ctx)
        if front.wait():
            from memctl.integrations.mcp_server import serve  # the SDK: a second or more

            serve(ctx, front, front.lock)
        with front.lock:  # the warm-up is done with the store before it closes
            pass
    return 0
