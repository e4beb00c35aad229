"""Recall speed with session messages in the ranking (issue 33): M memories plus N messages.

    .venv/bin/python benchmarks/message_speed.py --memories 100000 --messages 1000000

The store is built once and cached under --cache (default
/tmp/memctl-bench-cache/turns-M-N: a cache of another shape is not read), shaped as real
sessions are: sessions of SESSION_MESSAGES messages in turns (TURN) of a said message
(synthetic texts, benchmarks/synthetic.py), a call's note, its result's and a read's, and
each memory distilled from a turn of a session (its session named, its source the turn; the
turn says its text), so that provenance folds, the answering part and the turn's call run
as on a real store. Vectors are *random* under the real model's name (a float32 one per
memory and per call shown, an int8 one per said message: embedding a million messages
takes hours here, and the search costs the same whatever the vectors hold). Queries are
embedded by the real MiniLM. Prints:

- the build: rows a second, the database's size and the message index's segment size;
- the message vector index: its first build from SQLite, and the catch-up after a
  session of new messages is embedded;
- the sessions leg alone (the messages' sign-bit prefilter and rescoring), and the
  messages' BM25;
- in-process recall p50/p95 (CPU p50/p90) with the messages in the ranking (asked as
  `memctl recall --all-scopes` asks, ``api.recall``, and the ranking alone,
  ``pipeline.recall``), their vectors off, on and auto (``recall.message_vectors``; auto, the
  default, after the store is settled as the worker and maintain settle it: past
  ``recall.message_vectors_up_to`` messages its vectors are dropped, and both full-text
  indexes are optimized into one segment), and without them
  (`--no-sessions`), query embedding included, touch off;
- the whole `memctl recall` process, each one loading everything itself, then answered
  by the resident process (``recall.resident``, the default): the client's wall and CPU
  time, and the CPU time of the resident process's child that ran the recall (the
  resident process's reaped children, a mean), its vectors off, on and auto
  (``--processes 0``: none of these, the in-process figures only);
- with ``--questions``, last: the stored questions' vector index, its first build from
  SQLite and its catch-up after a memory is deleted.

``--questions N`` first gives every memory of the cached store N stored questions (once;
random float32 vectors, each near its memory's, and a short question naming the memory's
first words), as a store written through MCP holds them (its tool description asks for 2-3
a memory): recall searches them on two legs of their own (store/questions.py).

``--dump FILE`` also writes every recall's rows of each timed configuration (its
configuration, query, row, id, ``repr(score)``, label), over the timed queries and
``DUMP_QUERIES``, at the default limit and at ``DUMP_LIMIT``: two runs' files are the
same when a change leaves the results as they were (``cmp``).

The package is byte-compiled first and Python may write bytecode, as an installed
memctl would (PYTHONDONTWRITEBYTECODE is removed for the processes).

Nothing is asserted: the figures depend on what else the machine runs (say the load).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one query at a time, as the CLI runs
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.recall_speed import EXTRA_QUERIES, ms, percentiles, process_line  # noqa: E402
from benchmarks.synthetic import QUERIES, SERVICES, TOOLS, synthetic_memories  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.ingest.calls_shown import calls_shown  # noqa: E402
from memctl.ingest.message_vectors import drop_unkept  # noqa: E402
from memctl.model import Memory, Message, Role, Session, State, now_iso, parse_time  # noqa: E402
from memctl.store.call_vectors import add_call_vectors  # noqa: E402
from memctl.store.database import MEMORIES_FTS, MESSAGES_FTS  # noqa: E402
from memctl.store.maintenance import optimize_fts  # noqa: E402
from memctl.store.memories import MemoryFilter, get_memories, insert_memory  # noqa: E402
from memctl.store.message_search import count_message_terms, search_messages  # noqa: E402
from memctl.store.message_vectors import (  # noqa: E402
    add_message_vectors,
    message_vector_index,
    nearest_messages,
)
from memctl.store.questions import add_questions  # noqa: E402
from memctl.store.sessions import insert_messages, save_session  # noqa: E402
from memctl.store.vector_index import VectorIndex  # noqa: E402
from memctl.store.vector_query import Scores  # noqa: E402

SESSION_MESSAGES = 40  # messages a synthetic session holds
# A synthetic turn's messages, as the dev store's sessions hold them (3,142 messages: a
# quarter said, three quarters tool notes; 733 calls shown in 2,361 messages of notes): what
# was said, a call's note, its result's, and a read's note, which shows no call.
TURN = ("said", "call", "result", "read")
TURNS = SESSION_MESSAGES // len(TURN)
# One said message in USER_TURNS is the person's (the dev store: 114 of 823 said messages),
# and a said message holds SAID_SENTENCES[...] sentences (about 75 characters each; the dev
# store's said messages: median 90 characters, mean 432).
USER_TURNS = 5
SAID_SENTENCES = (1, 1, 1, 4, 13)
# The call a turn's note records: a command run or a file written (ingest/calls_shown.py shows
# both), filled with a service and a tool of benchmarks/synthetic.py.
CALLS = (
    "Bash: pytest -q tests/test_{service}.py",
    "Bash: {tool} deploy {service} --env staging",
    "Bash: git commit -am 'fix the {service} service'",
    "Edit: services/{service}/config.yaml",
    "Write: docs/{service}/runbook.md",
)
BATCH = 20_000  # rows written per transaction
DIM = 384  # MiniLM's
EVERYWHERE = MemoryFilter()
MESSAGE_VECTORS = "recall.message_vectors"  # timed off, on, then auto (the default)
CHOICES = ("off", "on", "auto")  # auto last: settling the store may drop its vectors
# The processes' environment: bytecode may be written, as an installed memctl has it.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
NOW = datetime.now(UTC)
# Questions only --dump asks, beside the timed ones: the vocabulary's words (expanded),
# a kind ("pets"), names, a time, a common word alone, and a question about nothing stored.
DUMP_QUERIES = [
    *EXTRA_QUERIES,
    "how big should my PRs be?",
    "when do we release to customers?",
    "what broke last time?",
    "k8s config for the db",
    "CI env settings for the repo",
    "what pets does Nate have?",
    "what did we decide last week about the gateway?",
    "service",
    "recipe for banana bread",
]
DUMP_LIMIT = 30  # a deeper recall than the default, for --dump


def _memories(ctx: Context, texts: list[str], sessions: int, rng: np.random.Generator) -> None:
    """A memory for each of ``texts``, each with a random float32 vector; with ``sessions``,
    each distilled from one turn of a session (``_distilled_from``), as the worker leaves a
    fact: its session named, its source the turn's said message and its calls."""
    count = len(texts)
    for start in range(0, count, BATCH):
        vectors = rng.normal(size=(min(BATCH, count - start), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with ctx.db.atomic():
            for number, (text, vector) in enumerate(
                zip(texts[start : start + BATCH], vectors, strict=False), start=start
            ):
                memory = Memory(content=text, scope="global")
                if sessions:
                    session, seq = _distilled_from(number, sessions)
                    memory.session_id = session
                    memory.source = f"session:{session}#{seq}-{seq + 1}"
                insert_memory(ctx.db, memory, vector.tobytes())


def _session_id(number: int) -> str:
    return f"bench-{number:06d}"


def _distilled_from(memory: int, sessions: int) -> tuple[str, int]:
    """The session and said message the ``memory``-th memory was distilled from: the
    memories spread over the sessions, each session's over its turns in order."""
    turn = (memory // sessions) % TURNS
    return _session_id(memory % sessions), turn * len(TURN) + 1


def _said(rng: random.Random, texts: Iterator[str], number: int) -> tuple[Role, str]:
    """A turn's said message: the person's (one turn in USER_TURNS) or the assistant's, of
    SAID_SENTENCES[...] sentences."""
    role = Role.USER if number % USER_TURNS == 0 else Role.ASSISTANT
    return role, " ".join(next(texts) for _ in range(rng.choice(SAID_SENTENCES)))


def _turn(
    rng: random.Random, texts: Iterator[str], said_as: str | None, number: int
) -> list[tuple[Role, str]]:
    """One turn's messages (TURN): said (``said_as``, a memory's text, when one was
    distilled from it), a call's note, its result's, and a read's note."""
    role, said = _said(rng, texts, number)
    service, tool = rng.choice(SERVICES), rng.choice(TOOLS)
    call = rng.choice(CALLS).format(service=service, tool=tool.lower().replace(" ", "-"))
    name = call.partition(":")[0]
    return [
        (role, said_as or said),
        (Role.ASSISTANT, f"[tool {call}]"),
        (Role.TOOL, f"[tool result {name}: ok]"),
        (Role.ASSISTANT, f"[tool Read: services/{service}/config.yaml]"),
    ]


def _messages(ctx: Context, count: int, memories: list[str], rng: np.random.Generator) -> None:
    """``count`` messages in sessions of SESSION_MESSAGES, in turns shaped as a real
    session's (TURN), the said ones with a random int8 vector each, the calls with a random
    float32 one each (a fresh store numbers its messages' rowids from 1, in order)."""
    texts = synthetic_memories(sys.maxsize, seed=13)  # as many as the turns say
    words = random.Random(13)
    sessions = -(-count // SESSION_MESSAGES)
    distilled = {_distilled_from(n, sessions): text for n, text in enumerate(memories)}
    done = 0
    while done < count:
        size = min(BATCH, count - done)
        batch: list[Message] = []
        at = now_iso()
        while len(batch) < size:
            number = done + len(batch)
            session, seq = _session_id(number // SESSION_MESSAGES), number % SESSION_MESSAGES + 1
            turn = _turn(words, texts, distilled.get((session, seq)), number // len(TURN))
            batch += [
                Message(role, text, at, session, seq + n)
                for n, (role, text) in enumerate(turn[: size - len(batch)])
            ]
        with ctx.db.atomic():
            for session in dict.fromkeys(m.session_id for m in batch):
                save_session(ctx.db, Session(id=session, client="generic", scope="global"))
            insert_messages(ctx.db, batch)
        rowids = range(done + 1, done + size + 1)
        said = [r for r, m in zip(rowids, batch, strict=True) if not m.content.startswith("[")]
        called = [r for r, m in zip(rowids, batch, strict=True) if calls_shown(m.content)]
        said_vectors = rng.integers(-127, 128, size=(len(said), DIM), dtype=np.int8)
        call_vectors = rng.normal(size=(len(called), DIM)).astype(np.float32)
        with ctx.db.atomic():
            add_message_vectors(
                ctx.db, [(r, 0, v.tobytes()) for r, v in zip(said, said_vectors, strict=True)]
            )
            add_call_vectors(
                ctx.db, [(r, v.tobytes()) for r, v in zip(called, call_vectors, strict=True)]
            )
        done += size
        print(f"  {done:,} messages", file=sys.stderr, end="\r")


def build(home: Path, memories: int, messages: int) -> None:
    """The cached store: memories, then messages with their vectors (timed)."""
    if (home / "memctl.db").is_file():
        return
    building = home.with_name(home.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    ctx = Context(load_settings(home=building))
    rng = np.random.default_rng(5)
    ctx.db.ensure_vector_model(ctx.embedder.name, DIM)
    texts = list(synthetic_memories(memories, seed=11))
    began = time.perf_counter()
    with ctx.db.without_fsync():
        _memories(ctx, texts, -(-messages // SESSION_MESSAGES), rng)
        memory_seconds = time.perf_counter() - began
        began = time.perf_counter()
        _messages(ctx, messages, texts, rng)
    message_seconds = time.perf_counter() - began
    ctx.close()
    print(
        f"built: {memories:,} memories at {memories / memory_seconds:,.0f}/s, "
        f"{messages:,} messages with vectors at {messages / message_seconds:,.0f}/s"
    )
    building.rename(home)


def add_questions_to(home: Path, per_memory: int) -> None:
    """Give every memory of the store at ``home`` ``per_memory`` questions (timed), unless
    it holds some already."""
    if per_memory <= 0:
        return
    ctx = Context(load_settings(home=home))
    try:
        if ctx.db.value("SELECT count(*) FROM memory_questions"):
            return
        rng = np.random.default_rng(17)
        rows = ctx.db.tuples(
            "SELECT m.id, m.content, v.embedding FROM memories m "
            "JOIN memories_vec v ON v.rowid = m.rowid"
        )
        began = time.perf_counter()
        with ctx.db.without_fsync():
            for start in range(0, len(rows), BATCH):
                with ctx.db.atomic():
                    for memory_id, content, vector in rows[start : start + BATCH]:
                        add_questions(
                            ctx.db,
                            memory_id,
                            _questions(content, vector, per_memory, rng),
                            ctx.embedder.name,
                        )
        took = time.perf_counter() - began
        print(f"questions: {per_memory} for each of {len(rows):,} memories ({took:,.0f} s)")
    finally:
        ctx.close()


def _questions(
    content: str, vector: bytes, count: int, rng: np.random.Generator
) -> list[tuple[str, bytes]]:
    """``count`` (text, vector) questions of one memory: each vector its memory's plus as
    much random noise (normalised)."""
    words = " ".join(content.split()[:4])
    own = np.frombuffer(vector, dtype=np.float32)
    out = []
    for n in range(count):
        noise = rng.normal(size=DIM).astype(np.float32)
        mixed = own + noise / np.linalg.norm(noise)
        out.append(
            (
                f"what did we note about {words} ({n + 1})?",
                (mixed / np.linalg.norm(mixed)).tobytes(),
            )
        )
    return out


def question_index_figures(home: Path) -> None:
    """The questions' vector index (store/vector_index.py QUESTION_VECTORS): its first build
    from SQLite, and its catch-up after a memory is deleted (its questions' rows marked
    dead). Last: the deletion changes the store."""
    from memctl.store.vector_index import QUESTION_VECTORS, vector_index
    from memctl.store.writes import Writer

    with Context(load_settings(home=home)) as ctx:
        index = vector_index(ctx.db, QUESTION_VECTORS)
        shutil.rmtree(index.directory)
        began = time.perf_counter()
        index = VectorIndex(ctx.db, QUESTION_VECTORS)
        index.refresh()
        took = ms(time.perf_counter() - began)
        print(f"question index, first build from SQLite: {took} ({len(index.rowids):,} vectors)")
        memory = get_memories(ctx.db, [str(ctx.db.value("SELECT min(id) FROM memories"))])
        with ctx.db.atomic():
            Writer(ctx.db).set_state(next(iter(memory.values())), State.DELETED, "bench")
        began = time.perf_counter()
        index.refresh()
        took = ms(time.perf_counter() - began)
        print(f"question index, catch-up after a memory is deleted: {took}")


def index_figures(ctx: Context) -> None:
    began = time.perf_counter()
    index = message_vector_index(ctx.db)
    print(f"message index, first build from SQLite: {ms(time.perf_counter() - began)}")
    size = sum(p.stat().st_size for p in index.directory.glob("*.seg"))
    print(f"message index segments: {size / 2**20:,.0f} MiB for {len(index.rowids):,} vectors")
    rng = np.random.default_rng(9)
    last = int(ctx.db.value("SELECT max(rowid) FROM messages"))
    at = _newest_memory(ctx)  # a fixed time: the recalls --dump writes weigh their age
    with ctx.db.atomic():
        save_session(ctx.db, Session(id="bench-new", client="generic", scope="global"))
        insert_messages(
            ctx.db,
            [
                Message(Role.USER, f"new message {n}", at, session_id="bench-new", seq=n)
                for n in range(1, 41)
            ],
        )
        add_message_vectors(
            ctx.db,
            [
                (last + n, 0, rng.integers(-127, 128, DIM, dtype=np.int8).tobytes())
                for n in range(1, 41)
            ],
        )
    began = time.perf_counter()
    message_vector_index(ctx.db)
    print(
        "message index, catch-up after a session of 40 new messages: "
        f"{ms(time.perf_counter() - began)}"
    )


def part_figures(ctx: Context, repeat: int) -> None:
    from memctl.retrieve.query import analyse

    index = message_vector_index(ctx.db)
    vectors = [ctx.embedder.embed([q])[0] for q in QUERIES]
    timed: dict[str, tuple[list[float], list[float]]] = {
        "sessions leg, stored vectors": ([], []),
        "sessions leg, BM25": ([], []),
    }
    for _ in range(repeat):
        for query, vector in zip(QUERIES, vectors, strict=True):
            phrases = analyse(query, NOW).alternatives
            began, began_cpu = time.perf_counter(), time.process_time()
            nearest_messages(index, Scores(index, vector), 30, EVERYWHERE)
            _took(timed["sessions leg, stored vectors"], began, began_cpu)
            began, began_cpu = time.perf_counter(), time.process_time()
            search_messages(ctx.db, phrases, 30, EVERYWHERE)
            _took(timed["sessions leg, BM25"], began, began_cpu)
    for name, (wall, cpu) in timed.items():
        p50, p95 = percentiles(wall)
        print(f"{name}: p50 {ms(p50)}, p95 {ms(p95)}; CPU time p50 {ms(percentiles(cpu)[0])}")


def _took(samples: tuple[list[float], list[float]], began: float, began_cpu: float) -> None:
    samples[0].append(time.perf_counter() - began)
    samples[1].append(time.process_time() - began_cpu)


def recall_figures(ctx: Context, repeat: int, choice: str, dump: Path | None) -> None:
    """In-process recall CPU, asked as `memctl recall --all-scopes` asks (``api.recall``:
    the projects the question names, each row's answering part and turn call), and the
    ranking alone (``pipeline.recall``, what this benchmark timed until s36)."""
    for sessions in (True, False) if choice == "on" else (True,):
        if dump is not None:
            dump_recalls(ctx, dump, f"{choice} sessions={sessions}", sessions)
        asked: dict[str, Callable[[str], object]] = {
            "asked as `memctl recall`": partial(_asked, ctx, sessions),
            "the ranking alone": partial(_ranked, ctx, sessions),
        }
        for how, ask in asked.items():
            ask("warm up")
            wall, cpu = [], []
            for _ in range(repeat):
                for query in QUERIES:
                    began, began_cpu = time.perf_counter(), time.process_time()
                    ask(query)
                    wall.append(time.perf_counter() - began)
                    cpu.append(time.process_time() - began_cpu)
            p50, p95 = percentiles(wall)
            label = "memories only (--no-sessions)"
            if sessions:
                label = f"with session messages, their vectors {choice}"
            print(
                f"in-process recall, {label}, {how}: p50 {ms(p50)}, p95 {ms(p95)}; CPU time "
                f"p50 {ms(percentiles(cpu)[0])}, p90 {ms(sorted(cpu)[int(0.9 * len(cpu))])} "
                f"({len(wall)} recalls)"
            )


def _asked(ctx: Context, sessions: bool, query: str) -> object:
    from memctl.api.recall import RecallRequest, recall

    return recall(ctx, RecallRequest(query, all_scopes=True, touch=False, sessions=sessions))


def _ranked(ctx: Context, sessions: bool, query: str) -> object:
    from memctl.retrieve.pipeline import recall

    return recall(ctx, query, touch=False, sessions=sessions)


def dump_recalls(ctx: Context, path: Path, config: str, sessions: bool) -> None:
    """Append each recall's rows (tab-separated) to ``path``, asked a day after the newest
    memory (a fixed clock: a memory's age weighs in its score)."""
    from memctl.retrieve.pipeline import recall

    now = parse_time(_newest_memory(ctx)) + timedelta(days=1)
    with path.open("a") as out:
        for limit in (None, DUMP_LIMIT):
            for query in (*QUERIES, *DUMP_QUERIES):
                result = recall(ctx, query, limit, touch=False, sessions=sessions, now=now)
                for row, item in enumerate(result.results, start=1):
                    fields = (config, limit, query, row, item.memory.id, repr(item.score))
                    out.write("\t".join(map(str, (*fields, item.match))) + "\n")


def _newest_memory(ctx: Context) -> str:
    """When the cached store's newest memory was made (the same in every run)."""
    return str(ctx.db.value("SELECT max(created_at) FROM memories"))


def process_figures(home: Path, runs: int) -> None:
    """Each `memctl recall` loading everything itself, then answered by the resident
    process (started once before its runs, as the first recall of a session starts it:
    the client process only forwards the request), message vectors off, on and auto (the
    default; the store settled first)."""
    for choice in CHOICES:
        env = {**ENV, "MEMCTL_HOME": str(home), "MEMCTL_RECALL_RESIDENT": "off"}
        env["MEMCTL_RECALL_MESSAGE_VECTORS"] = choice
        if choice == "auto":
            _settle(home)
        print(f"message vectors {choice}:")
        for extra in ((), ("--no-sessions",)):
            print("  " + process_line(env, runs, extra))
        resident = {**env, "MEMCTL_RECALL_RESIDENT": "on", "MEMCTL_RECALL_RESIDENT_IDLE": "3600"}
        daemon = [sys.executable, "-m", "memctl", "daemon"]
        subprocess.run([*daemon, "start"], env=resident, check=True, capture_output=True)
        try:
            process_line(resident, 2)  # the resident process loads the model and the indexes
            pid = json.loads(
                subprocess.run(
                    [*daemon, "status", "--json"], env=resident, check=True, capture_output=True
                ).stdout
            )["pid"]
            before = _children_cpu(pid)
            line = process_line(resident, runs)
            time.sleep(1.0)  # the last child reaped
            child = (_children_cpu(pid) - before) / runs
            print(f"  {line} (the resident process answering; its child's CPU {ms(child)})")
        finally:
            subprocess.run([*daemon, "stop"], env=resident, check=True, capture_output=True)


def _settle(home: Path) -> None:
    """The store as the worker and maintain leave it under auto (the default): past
    ``recall.message_vectors_up_to`` messages, without message vectors, and each full-text
    index in one segment (maintain's upkeep)."""
    with Context(load_settings(home=home, overrides={MESSAGE_VECTORS: "auto"})) as ctx:
        began = time.perf_counter()
        dropped = drop_unkept(ctx.db, ctx.settings)
        up_to = ctx.settings.recall_message_vectors_up_to
        print(
            f"auto, at most {up_to:,} messages with vectors: {dropped:,} message vectors "
            f"dropped ({ms(time.perf_counter() - began)})"
        )
        began = time.perf_counter()
        for table in (MEMORIES_FTS, MESSAGES_FTS):
            optimize_fts(ctx.db, table)
        took = ms(time.perf_counter() - began)
        print(f"both full-text indexes optimized, as maintain leaves them ({took})")
        began = time.perf_counter()
        words = count_message_terms(ctx.db)
        took = ms(time.perf_counter() - began)
        print(f"{words:,} words' messages counted, as maintain leaves them ({took})")


def _children_cpu(pid: int) -> float:
    """Seconds of CPU the process's reaped children used (/proc: user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[13]) + int(fields[14])) / CLOCK_TICKS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--dump", type=Path, default=None, help="write every recall's rows here")
    parser.add_argument("--questions", type=int, default=0, help="stored questions a memory")
    args = parser.parse_args()
    name = f"turns-{args.memories}-{args.messages}"
    cached = args.cache or Path(tempfile.gettempdir()) / "memctl-bench-cache" / name
    build(cached, args.memories, args.messages)
    add_questions_to(cached, args.questions)
    database = cached / "memctl.db"
    print(f"database: {database.stat().st_size / 2**20:,.0f} MiB")
    if args.dump is not None:
        args.dump.write_text("")
    home = Path(tempfile.mkdtemp(prefix="memctl-bench-"))
    try:
        shutil.copy(database, home / "memctl.db")
        for choice in CHOICES:
            if choice == "auto":
                _settle(home)
            ctx = Context(load_settings(home=home, overrides={MESSAGE_VECTORS: choice}))
            try:
                if choice == "on":
                    index_figures(ctx)
                    part_figures(ctx, args.repeat)
                recall_figures(ctx, args.repeat, choice, args.dump)
            finally:
                ctx.close()
        if args.processes > 0:  # 0: the in-process figures only
            shutil.copy(database, home / "memctl.db")  # the vectors again, for the processes
            with Context(load_settings(home=home)) as ctx:
                message_vector_index(ctx.db)  # made again, as the first run of `on` left it
            compileall.compile_dir(ROOT / "memctl", quiet=1)
            process_figures(home, args.processes)
        if args.questions > 0:
            question_index_figures(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)  # a copy of the store: 1.5 GB at 1,000,000


if __name__ == "__main__":
    main()
