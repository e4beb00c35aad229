"""A team sharing one sync repository: clone size, sync time, conflicts, and what was lost.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/team_sync.py \
        [--hosts 50] [--days 3] [--per-day 3] [--edits 5] [--parallel 4] [--migrate-day 2]
        [--year-days 365] [--flat-days 90] [--push-retries N]

One bare repository on local disk and ``--hosts`` data directories (machines).

Part 1, real syncs (``--days`` simulated days): every day each host promotes
``--per-day`` new memories, ``--edits`` memories are each edited by two hosts
before either syncs (a real version conflict), then every host runs one sync
(``sync_now``, what `memctl sync` runs, in-process with the test suite's
stand-in embedder: embedding is not sync's cost), in random order,
``--parallel`` at a time, so pushes race. Before day ``--migrate-day`` the
repository and every host's index are turned into what memctl 1.0 left (sync
format 1.0, no shard directories), so that day's racing syncs migrate it: one
migration commit must land, whatever the race. Then every host syncs twice
more, in turn, and the stores are compared: every memory any host made must be
in every store with the same text (lost: 0), and every losing edit kept as a
``conflict`` event or as the ``before`` of the update that replaced it.

Part 2, ``--year-days`` (365 by default): the repository the same team builds
in that many days, in today's format, made with ``git fast-import`` (each host
commits once a day, its files rendered by memctl's own ``render``, the same
rates as part 1; the size is printed at 30, 90, 180 days on the way), then:
its size (as pushed, and after ``git gc``), a clone (``git clone``, whole
process), a new member's first sync (every file imported), and a caught-up
member's sync of one more day (the other hosts' files of that day).

Part 3, ``--flat-days`` (90 by default; 0 leaves it out): the same in sync
format 1.0 (flat scope directories, the layout before 2.0: its year takes git
fast-import tens of minutes to write, for the reason its size grows), its size
at 30 and 90 days, and a memctl 2 newcomer's first sync of it, which migrates
it (one commit moving every file) before importing.

Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic import synthetic_memories  # noqa: E402  (path above)
from memctl.config.settings import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.model import Action, Memory, Visibility, format_time, new_id  # noqa: E402
from memctl.store import memories as store  # noqa: E402
from memctl.store.events import list_events, log_event  # noqa: E402
from memctl.store.memories import MemoryFilter  # noqa: E402
from memctl.store.sync import set_read_commit  # noqa: E402
from memctl.sync.layout import (  # noqa: E402
    FLAT_MAJOR,
    FORMAT_FILE,
    FORMAT_MAJOR,
    README_FILE,
    README_TEXT,
    format_text,
    memory_path,
)
from memctl.sync.memfile import render  # noqa: E402
from memctl.sync.migrate import MESSAGE  # noqa: E402
from memctl.sync.pipeline import SyncRequest, sync_now  # noqa: E402
from memctl.sync.setup import init  # noqa: E402
from tests.fakes import HashEmbedder  # noqa: E402
from tests.syncing import as_format_1  # noqa: E402

SCOPES = ("global", "github.com/acme/platform", "github.com/acme/website")
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
EVERY = MemoryFilter(states=None)
CHECKPOINTS = (30, 90, 180)  # days after which part 2 and 3 print the repository's size


OVERRIDES: dict[str, object] = {"llm": "none"}  # --push-retries adds sync.push_retries


def context(home: Path) -> Context:
    return Context(load_settings(home=home, overrides=OVERRIDES), embedder=HashEmbedder())


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def timed_sync(home: Path) -> dict[str, Any]:
    """One sync of ``home`` in this (worker) process: its figures, or the error."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    git_dir = home / "sync" / "repo" / ".git"
    before = tree_bytes(git_dir)
    began, cpu = time.perf_counter(), time.process_time()
    figures: dict[str, Any] = {}
    with context(home) as ctx:
        try:
            result = sync_now(ctx, SyncRequest())
        except Exception as error:  # noqa: BLE001 (a sync that failed is a figure too)
            figures["error"] = str(error)
        else:
            figures.update(
                came_in=result.came_in,
                retries=result.push_retries,
                pushed=result.pushed,
                migrated=result.migrated,
            )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    git_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    figures.update(
        wall=time.perf_counter() - began,
        cpu=time.process_time() - cpu + git_cpu,
        fetched=max(0, tree_bytes(git_dir) - before),
    )
    return figures


@dataclass
class Team:
    homes: list[Path]
    texts: Any  # an endless supply of synthetic sentences
    made: dict[str, str] = field(default_factory=dict)  # memory id -> who made it
    edits: list[tuple[str, str]] = field(default_factory=list)  # (memory id, text)
    syncs: list[dict[str, Any]] = field(default_factory=list)

    def promote_new(self, home: Path, count: int) -> None:
        with context(home) as ctx, ctx.db.atomic():
            for _ in range(count):
                memory = Memory(
                    content=next(self.texts),
                    scope=random.choice(SCOPES),
                    visibility=Visibility.SHARED,
                )
                store.insert_memory(ctx.db, memory, None)
                log_event(ctx.db, Action.CREATE, memory.id, {"source": "bench"})
                self.made[memory.id] = home.name

    def edit(self, home: Path, memory_id: str) -> None:
        text = f"{next(self.texts)} (edited on {home.name})"
        with context(home) as ctx, ctx.db.atomic():
            memory = store.get_memory(ctx.db, memory_id)
            assert memory is not None
            changes = {"content": text, "updated_at": format_time(datetime.now(UTC))}
            store.update_memory(ctx.db, memory_id, changes)
            log_event(
                ctx.db,
                Action.UPDATE,
                memory_id,
                {"before": {"content": memory.content}, "after": {"content": text}},
            )
        self.edits.append((memory_id, text))

    def held_by_all(self) -> list[str]:
        """Memories every host has (candidates for conflicting edits)."""
        held = None
        for home in self.homes:
            with context(home) as ctx:
                ids = {m.id for m in store.list_memories(ctx.db, EVERY, None)}
            held = ids if held is None else held & ids
        return sorted(held or ())

    def sync_all(self, parallel: int) -> list[dict[str, Any]]:
        order = random.sample(self.homes, len(self.homes))
        with ProcessPoolExecutor(parallel) as pool:
            done = list(pool.map(timed_sync, order))
        self.syncs += done
        return done


def real_syncs(root: Path, args: argparse.Namespace) -> None:
    remote = root / "team.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "--initial-branch=main", str(remote)], check=True
    )
    homes = [root / f"host{n:02d}" for n in range(args.hosts)]
    for home in homes:
        with context(home) as ctx:
            init(ctx, str(remote))
    team = Team(homes, iter(synthetic_memories(10**7)))
    began = time.perf_counter()
    for day in range(args.days):
        if day + 1 == args.migrate_day:
            contexts = [context(home) for home in homes]
            as_format_1(remote, *contexts)
            for ctx in contexts:
                ctx.close()
            print(f"  before day {day + 1}: the repository and every index made format 1.0")
        for home in homes:
            team.promote_new(home, args.per_day)
        shared = team.held_by_all()
        for memory_id in random.sample(shared, min(args.edits, len(shared))):
            for home in random.sample(homes, 2):
                team.edit(home, memory_id)
        done = team.sync_all(args.parallel)
        print(f"  day {day + 1}: {_day_line(done)}")
        for error in dict.fromkeys(d["error"] for d in done if "error" in d):
            print(f"    failed: {error}")
    for _ in range(2):
        for home in homes:
            team.syncs.append(timed_sync(home))
    wall = time.perf_counter() - began
    _report_real(team, remote, args, wall)


def _day_line(done: list[dict[str, Any]]) -> str:
    failed = sum(1 for d in done if "error" in d)
    return (
        f"{len(done)} syncs, p50 {_p([d['wall'] for d in done], 50):.2f} s wall / "
        f"{_p([d['cpu'] for d in done], 50):.2f} s CPU, "
        f"{sum(d.get('retries', 0) for d in done)} pushes retried, "
        f"{sum(d.get('came_in', {}).get('conflicts', 0) for d in done)} conflicts kept, "
        f"{failed} failed"
        + (f", {sum(1 for d in done if d.get('migrated'))} migrated" if day_migrated(done) else "")
    )


def day_migrated(done: list[dict[str, Any]]) -> bool:
    return any(d.get("migrated") for d in done)


def _p(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, len(ordered) * q // 100)] if ordered else 0.0


def _report_real(team: Team, remote: Path, args: argparse.Namespace, wall: float) -> None:
    contents: dict[str, set[str]] = {}
    missing = 0
    kept: dict[str, set[str]] = {}
    for home in team.homes:
        with context(home) as ctx:
            found = {m.id: m.content for m in store.list_memories(ctx.db, EVERY, None)}
            missing += sum(1 for memory_id in team.made if memory_id not in found)
            for memory_id, text in found.items():
                contents.setdefault(memory_id, set()).add(text)
            for memory_id, _ in team.edits:
                for event in store_events(ctx, memory_id):
                    kept.setdefault(memory_id, set()).update(event)
    disagree = sum(1 for texts in contents.values() if len(texts) > 1)
    edits_lost = sum(
        1
        for memory_id, text in team.edits
        if text not in contents.get(memory_id, set()) and text not in kept.get(memory_id, set())
    )
    syncs = team.syncs
    print(
        f"part 1: {args.hosts} hosts x {args.days} days x {args.per_day} memories a day, "
        f"{args.edits} memories a day edited by two hosts, {args.parallel} syncs at once: "
        f"{wall:.0f} s wall"
    )
    print(
        f"  {len(syncs)} syncs: p50 {_p([s['wall'] for s in syncs], 50):.2f} s / "
        f"p95 {_p([s['wall'] for s in syncs], 95):.2f} s wall, "
        f"p50 {_p([s['cpu'] for s in syncs], 50):.2f} s / "
        f"p95 {_p([s['cpu'] for s in syncs], 95):.2f} s CPU (git included), "
        f"{sum(s.get('retries', 0) for s in syncs)} pushes refused and retried, "
        f"{sum(1 for s in syncs if 'error' in s)} syncs failed (the next one caught up)"
    )
    print(
        f"  {len(team.made):,} memories made, {len(team.edits)} edits; lost: {missing} "
        f"(memory missing from a store), {disagree} memories whose text differs between "
        f"stores, {edits_lost} edits in no store (neither the text nor a kept version)"
    )
    subjects = subprocess.run(
        ["git", "--git-dir", str(remote), "log", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    print(
        f"  migration commits (format 1.0 -> 2.0): {subjects.count(MESSAGE)}; "
        f"repository: {tree_bytes(remote) / 2**20:.1f} MiB bare (as pushed, no gc)"
    )


def store_events(ctx: Context, memory_id: str) -> list[set[str]]:
    """The texts each of a memory's events keeps (conflict versions, update befores)."""
    texts = []
    for event in list_events(ctx.db, memory_id, 10_000):
        data = event.data
        found = {
            str(v.get("content"))
            for v in (data.get("lost"), data.get("before"), data.get("after"))
            if isinstance(v, dict) and v.get("content")
        }
        texts.append(found)
    return texts


# Part 2: a year of the team's repository, written with git fast-import.


def year_repository(path: Path, args: argparse.Namespace, days: int, major: int) -> tuple[int, int]:
    """The bare repository in format ``major`` after ``days`` of ``--hosts`` committing
    daily: (files, commits). Prints its size at the CHECKPOINTS on the way."""
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    hosts = [new_id()[:16] for _ in range(args.hosts)]
    texts = iter(synthetic_memories(10**7))
    own: dict[str, list[Memory]] = {h: [] for h in hosts}
    files = commits = 0
    importer = subprocess.Popen(
        ["git", "fast-import", "--quiet"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "GIT_DIR": str(path)},
    )
    assert importer.stdin is not None
    write = importer.stdin.write
    for day in range(days):
        if day in CHECKPOINTS:
            write(b"checkpoint\n\nprogress checkpoint\n\n")
            importer.stdin.flush()
            assert importer.stdout is not None
            importer.stdout.readline()  # the pack so far is written
            print(f"  after {day} days: {tree_bytes(path) / 2**20:.1f} MiB as pushed")
        for host in random.sample(hosts, len(hosts)):
            at = START + timedelta(days=day, minutes=hosts.index(host))
            stamp = format_time(at)
            changed = []
            for _ in range(args.per_day):
                memory = Memory(
                    content=next(texts),
                    scope=random.choice(SCOPES),
                    visibility=Visibility.SHARED,
                    created_at=stamp,
                    stored_at=stamp,
                )
                own[host].append(memory)
                changed.append(memory)
            if own[host] and random.random() < args.edits / args.hosts:
                memory = random.choice(own[host])
                memory.content, memory.updated_at = f"{next(texts)} (edited)", stamp
                changed.append(memory)
            _commit(write, host, at, changed, commits == 0, major)
            files += args.per_day
            commits += 1
    importer.stdin.close()
    if importer.wait():
        raise SystemExit("git fast-import failed")
    return files, commits


def _commit(
    write: Any, host: str, at: datetime, changed: list[Memory], first: bool, major: int
) -> None:
    seconds = int(at.timestamp())
    message = f"memctl sync from host {host}: {len(changed)} written, 0 removed".encode()
    lines = [
        b"commit refs/heads/main",
        f"committer memctl <memctl@{host}.invalid> {seconds} +0000".encode(),
        b"data %d" % len(message),
        message,
    ]
    key = host.encode()  # each simulated host's own key for a session id in a source
    blobs = [
        (memory_path(m.scope, m.id, host, major), render(m, [], home_key=key)) for m in changed
    ]
    if first:
        blobs += [(FORMAT_FILE, format_text(f"{major}.0")), (README_FILE, README_TEXT)]
    for name, text in blobs:
        data = text.encode()
        lines += [f"M 100644 inline {name}".encode(), b"data %d" % len(data), data]
    write(b"\n".join(lines) + b"\n\n")


def run_timed(command: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall, CPU) of a whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (
        time.perf_counter() - began,
        after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
    )


def a_year(root: Path, args: argparse.Namespace, days: int, major: int) -> None:
    """Part 2 (format 2) or 3 (format 1): the repository of ``days``, its size, a clone,
    a newcomer's first sync (which migrates format 1), the next day's sync."""
    remote = root / f"year{major}.git"
    print(
        f"part {4 - major}: {args.hosts} hosts x {days} days in sync format {major}.0"
        + (" (flat: before 2.0)" if major == FLAT_MAJOR else "")
    )
    began = time.perf_counter()
    files, commits = year_repository(remote, args, days, major)
    built = time.perf_counter() - began
    pushed = tree_bytes(remote)
    gc_wall, _ = run_timed(["git", "--git-dir", str(remote), "gc", "-q"])
    packed = tree_bytes(remote)
    print(
        f"  {files:,} memory files, {commits:,} commits (built in {built:.0f} s): "
        f"{pushed / 2**20:.1f} MiB as pushed, {packed / 2**20:.1f} MiB after git gc "
        f"({gc_wall:.0f} s)"
    )
    clone = root / f"clone{major}"
    wall, cpu = run_timed(["git", "clone", "-q", str(remote), str(clone)])
    checkout = tree_bytes(clone) - tree_bytes(clone / ".git")
    print(
        f"  git clone: {wall:.1f} s wall, {cpu:.1f} s CPU; "
        f"{tree_bytes(clone / '.git') / 2**20:.1f} MiB .git + "
        f"{checkout / 2**20:.1f} MiB of files"
    )
    newcomer = root / f"newcomer{major}"
    with context(newcomer) as ctx:
        init(ctx, str(remote))
    first = timed_sync(newcomer)
    print(
        f"  a new member's first sync (imports {first['came_in'].get('created', 0):,}"
        + ("; migrates the repository first" if first.get("migrated") else "")
        + f"; clone made by sync init): {first['wall']:.1f} s wall, {first['cpu']:.1f} s CPU"
        + (f" FAILED: {first['error']}" if "error" in first else "")
    )
    if major == FLAT_MAJOR:
        print(f"  after the migration: {tree_bytes(remote) / 2**20:.1f} MiB as pushed")
    _one_more_day(remote, args, days)
    day = timed_sync(newcomer)
    print(
        f"  the next day's sync ({day['came_in'].get('created', 0)} new files of "
        f"{args.hosts} hosts, reading what changed since the last commit read): "
        f"{day['wall']:.2f} s wall, {day['cpu']:.2f} s CPU, {day['fetched'] / 2**10:.0f} KiB "
        "fetched"
    )
    _one_more_day(remote, args, days + 1)
    with context(newcomer) as ctx, ctx.db.atomic():
        set_read_commit(ctx.db, None, [])  # as before: list the whole tree
    day = timed_sync(newcomer)
    print(
        f"  the day after, reading the whole tree as before ({day['came_in'].get('created', 0)} "
        f"new files): {day['wall']:.2f} s wall, {day['cpu']:.2f} s CPU"
    )


def _one_more_day(remote: Path, args: argparse.Namespace, day: int) -> None:
    """Another day of commits on top of the year, from new hosts (same rates)."""
    importer = subprocess.Popen(
        ["git", "fast-import", "--quiet"],
        stdin=subprocess.PIPE,
        env={**os.environ, "GIT_DIR": str(remote)},
    )
    assert importer.stdin is not None
    texts = iter(synthetic_memories(10**5, seed=day))
    head = subprocess.run(
        ["git", "--git-dir", str(remote), "rev-parse", "refs/heads/main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    importer.stdin.write(f"reset refs/heads/main\nfrom {head}\n\n".encode())
    for n in range(args.hosts):
        host = new_id()[:16]
        at = START + timedelta(days=day, minutes=n)
        stamp = format_time(at)
        changed = [
            Memory(
                content=next(texts),
                scope=random.choice(SCOPES),
                visibility=Visibility.SHARED,
                created_at=stamp,
                stored_at=stamp,
            )
            for _ in range(args.per_day)
        ]
        _commit(importer.stdin.write, host, at, changed, False, FORMAT_MAJOR)
    importer.stdin.close()
    if importer.wait():
        raise SystemExit("git fast-import failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--days", type=int, default=3, help="Part 1: days of real syncs.")
    parser.add_argument("--per-day", type=int, default=3, help="Memories a host shares a day.")
    parser.add_argument("--edits", type=int, default=5, help="Memories edited a day.")
    parser.add_argument("--parallel", type=int, default=4, help="Part 1: syncs at once.")
    parser.add_argument(
        "--migrate-day",
        type=int,
        default=2,
        help="Part 1: the day whose syncs meet a format-1.0 repository (0: none).",
    )
    parser.add_argument(
        "--year-days", type=int, default=365, help="Part 2's days; 0 leaves it out."
    )
    parser.add_argument(
        "--flat-days",
        type=int,
        default=90,
        help="Part 3's days in the format-1.0 layout; 0 leaves it out.",
    )
    parser.add_argument("--push-retries", type=int, help="sync.push_retries (default: memctl's)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.push_retries is not None:
        OVERRIDES["sync.push_retries"] = args.push_retries
    random.seed(args.seed)
    with tempfile.TemporaryDirectory(prefix="memctl-team-") as tmp:
        root = Path(tmp)
        if args.days:
            real_syncs(root, args)
        if args.year_days:
            a_year(root, args, args.year_days, FORMAT_MAJOR)
        if args.flat_days:
            a_year(root, args, args.flat_days, FLAT_MAJOR)


if __name__ == "__main__":
    main()
