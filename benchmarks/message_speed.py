"""Recall speed with session messages in the ranking (issue 33): M memories plus N messages.

    .venv/bin/python benchmarks/message_speed.py --memories 100000 --messages 1000000

The store is built once and cached under --cache (default
/tmp/memctl-bench-cache/messages-M-N): realistic synthetic texts (benchmarks/synthetic.py)
in sessions of SESSION_MESSAGES messages, with *random* vectors under the real model's
name (a float32 one per memory, an int8 one per message: embedding a million messages
takes hours here, and the search costs the same whatever the vectors hold). Queries
are embedded by the real MiniLM. Prints:

- the build: rows a second, the database's size and the message index's segment size;
- the message vector index: its first build from SQLite, and the catch-up after a
  session of new messages is embedded;
- the sessions leg alone (the messages' sign-bit prefilter and rescoring), and the
  messages' BM25;
- in-process recall p50/p95 with the messages in the ranking (as `memctl recall` runs
  by default), their vectors off, on and auto (``recall.message_vectors``; auto, the
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
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one query at a time, as the CLI runs
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.recall_speed import EXTRA_QUERIES, ms, percentiles, process_line  # noqa: E402
from benchmarks.synthetic import QUERIES, synthetic_memories  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.ingest.message_vectors import drop_unkept  # noqa: E402
from memctl.model import Memory, Message, Role, Session, State, now_iso, parse_time  # noqa: E402
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


def _memories(ctx: Context, count: int, rng: np.random.Generator) -> None:
    texts = list(synthetic_memories(count, seed=11))
    for start in range(0, count, BATCH):
        vectors = rng.normal(size=(min(BATCH, count - start), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with ctx.db.atomic():
            for text, vector in zip(texts[start : start + BATCH], vectors, strict=False):
                insert_memory(ctx.db, Memory(content=text, scope="global"), vector.tobytes())


def _messages(ctx: Context, count: int, rng: np.random.Generator) -> None:
    """``count`` messages, each with one random int8 vector (a fresh store numbers its
    messages' rowids from 1, in order)."""
    texts = synthetic_memories(count, seed=13)
    done = 0
    while done < count:
        size = min(BATCH, count - done)
        batch = [next(texts) for _ in range(size)]
        ids = [
            (f"bench-{(done + i) // SESSION_MESSAGES:06d}", (done + i) % SESSION_MESSAGES + 1)
            for i in range(size)
        ]
        at = now_iso()
        with ctx.db.atomic():
            for session in dict.fromkeys(s for s, _ in ids):
                save_session(ctx.db, Session(id=session, client="generic", scope="global"))
            insert_messages(
                ctx.db,
                [
                    Message(Role.USER if seq % 2 else Role.ASSISTANT, text, at, session, seq)
                    for (session, seq), text in zip(ids, batch, strict=True)
                ],
            )
        vectors = rng.integers(-127, 128, size=(size, DIM), dtype=np.int8)
        with ctx.db.atomic():
            add_message_vectors(
                ctx.db,
                [
                    (rowid, 0, v.tobytes())
                    for rowid, v in zip(range(done + 1, done + size + 1), vectors, strict=True)
                ],
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
    began = time.perf_counter()
    with ctx.db.without_fsync():
        _memories(ctx, memories, rng)
        memory_seconds = time.perf_counter() - began
        began = time.perf_counter()
        _messages(ctx, messages, rng)
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
    from memctl.retrieve.pipeline import recall

    for sessions in (True, False) if choice == "on" else (True,):
        if dump is not None:
            dump_recalls(ctx, dump, f"{choice} sessions={sessions}", sessions)
        recall(ctx, "warm up", touch=False, sessions=sessions)
        wall, cpu = [], []
        for _ in range(repeat):
            for query in QUERIES:
                began, began_cpu = time.perf_counter(), time.process_time()
                recall(ctx, query, touch=False, sessions=sessions)
                wall.append(time.perf_counter() - began)
                cpu.append(time.process_time() - began_cpu)
        p50, p95 = percentiles(wall)
        label = "memories only (--no-sessions)"
        if sessions:
            label = f"with session messages, their vectors {choice}"
        print(
            f"in-process recall, {label}: p50 {ms(p50)}, p95 {ms(p95)}; CPU time p50 "
            f"{ms(percentiles(cpu)[0])} ({len(wall)} recalls)"
        )


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
    name = f"messages-{args.memories}-{args.messages}"
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
