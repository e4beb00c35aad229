"""`memctl sessions grep` speed over many stored sessions, in process.

    .venv/bin/python benchmarks/sessions_grep_speed.py --sessions 10000 --messages 100 \
        [--cache DIR] [--repeat 5]

Builds (once, cached under --cache, default /tmp/memctl-bench-cache/grep-S-M) a
store of S sessions of M messages each: user, assistant and tool turns made of
words drawn (Zipf-like) from this repository's README, with an error code, a
path and a command in some messages, a CJK message now and then, over 4 clients
and 20 projects. Each run copies the store into a fresh home, then times
``memctl.api.sessions.grep`` (the function the command and the MCP tool call,
neighbours included) for each query kind, --repeat times, and prints p50 and
p95 (wall clock) and the hits. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memctl.api import sessions as api  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.model import Message, Role, Session, format_time  # noqa: E402
from memctl.store.sessions import count_sessions, insert_messages, save_session  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ("claude-code", "codex", "opencode", "cursor")
PROJECTS = 20
CJK_LINES = ("数据库迁移失败了，需要回滚。", "测试用pnpm test运行。", "部署脚本在scripts目录下。")
QUERIES = (
    ("rare code", "E4821", {}),
    ("one common word", "memory", {}),
    ("two words", "deploy database", {}),
    ("question", "why did the migration fail on staging", {}),
    ("FTS syntax", '"release AND (NOT deploy* NEAR', {}),
    ("role user", "config", {"role": "user"}),
    ("client codex", "recall", {"client": "codex"}),
    ("last 30 days", "session", {"since": "30d"}),
)
CJK_QUERY = ("CJK substring", "迁移失败", {})


def vocabulary() -> tuple[list[str], list[float]]:
    words = re.findall(r"[a-z]{3,}", (ROOT / "README.md").read_text(encoding="utf-8").lower())
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: -counts[w])
    return ranked, [1.0 / (rank + 1) for rank in range(len(ranked))]


def message_text(rng: random.Random, words: list[str], weights: list[float], n: int) -> str:
    text = " ".join(rng.choices(words, weights, k=rng.randint(8, 40)))
    roll = rng.random()
    if roll < 0.02:
        text += f" error E{n % 5000 + 1000} in src/module_{n % 97}.py"
    elif roll < 0.04:
        text += f" ran `make test TARGET={n % 31}`"
    elif roll < 0.045:
        text = rng.choice(CJK_LINES) + " " + text
    return text


def build(path: Path, sessions: int, per_session: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    words, weights = vocabulary()
    home = path / "home"
    ctx = Context(load_settings(home=home, overrides={"embedder": "hash"}))
    start = time.time() - 365 * 86400
    roles = (Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT)
    with ctx.db.without_fsync():
        for s in range(sessions):
            at = start + s * (365 * 86400 / sessions)
            session = Session(
                id=f"bench-{s:06d}",
                client=CLIENTS[s % len(CLIENTS)],
                scope=f"path:project{s % PROJECTS:02d}",
                title=" ".join(rng.choices(words[:300], k=4)),
                started_at=format_time_at(at),
                created_at=format_time_at(at),
                message_count=per_session,
            )
            messages = [
                Message(
                    role=roles[n % len(roles)],
                    content=message_text(rng, words, weights, s * per_session + n),
                    created_at=format_time_at(at + n * 20),
                    session_id=session.id,
                    seq=n + 1,
                )
                for n in range(per_session)
            ]
            with ctx.db.atomic():
                save_session(ctx.db, session)
                insert_messages(ctx.db, messages)
            if s % 1000 == 999:
                print(f"  built {s + 1} sessions", file=sys.stderr, flush=True)
    ctx.close()


def format_time_at(seconds: float) -> str:
    from datetime import UTC, datetime

    return format_time(datetime.fromtimestamp(seconds, UTC))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=100, help="per session")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cjk", action="store_true", help="time the CJK substring scan too")
    args = parser.parse_args()
    cache = args.cache or Path(f"/tmp/memctl-bench-cache/grep-{args.sessions}-{args.messages}")
    if not (cache / "home" / "memctl.db").exists():
        began = time.perf_counter()
        build(cache, args.sessions, args.messages)
        print(f"built the store in {time.perf_counter() - began:.0f} s")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(cache / "home", home)
        settings = load_settings(home=home, overrides={"embedder": "hash"})
        with Context(settings) as ctx:
            total = count_sessions(ctx.db)[1]
            print(f"{args.sessions:,} sessions, {total:,} messages; --repeat {args.repeat}")
            print(f"{'query':<18} {'p50 ms':>8} {'p95 ms':>8} {'hits':>5}")
            for label, query, options in (*QUERIES, *((CJK_QUERY,) if args.cjk else ())):
                where = api.Where(all_scopes=True, **options)
                api.grep(ctx, query, where)  # warm the page cache for this query
                times = []
                for _ in range(args.repeat):
                    began = time.perf_counter()
                    found = api.grep(ctx, query, where)
                    times.append((time.perf_counter() - began) * 1000)
                times.sort()
                p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
                print(f"{label:<18} {statistics.median(times):8.1f} {p95:8.1f} {len(found):5d}")


if __name__ == "__main__":
    main()
