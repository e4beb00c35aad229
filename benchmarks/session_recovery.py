"""Recovery: how often `memctl sessions grep` reaches a question's evidence turn in its top 10.

    .venv/bin/python benchmarks/session_recovery.py --locomo PATH [--longmemeval PATH] \
        [--limit N] [--k 10]

Each LoCoMo conversation (and each LongMemEval question's haystack) is stored
as memctl sessions in a fresh store, one session per dataset session, one
message per turn (LoCoMo: ``Speaker: text``, the first speaker as the user),
written through the store as capture writes them (no privacy pass: public data).
Then each question, as asked, goes to ``memctl.api.sessions.grep`` (every
project, ``--limit K``) and the hits are mapped back to dataset turns. Printed:
the share of questions with at least one evidence turn among the K hits, and with
every evidence turn (LoCoMo), by category; LongMemEval: evidence turn and
evidence session reached. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import locomo, longmemeval  # noqa: E402
from benchmarks.haystack import Turn  # noqa: E402
from memctl.api import sessions as api  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.model import Message, Role, Session, format_time  # noqa: E402
from memctl.store.sessions import insert_messages, save_session  # noqa: E402

EVERYWHERE = api.Where(all_scopes=True)


def store(ctx: Context, turns: Iterable[Turn], named: bool) -> dict[tuple[str, int], str]:
    """The turns as sessions; (session id, seq) -> the turn's dataset key."""
    by_session: dict[str, list[Turn]] = defaultdict(list)
    for turn in turns:
        by_session[turn.session].append(turn)
    keys = {}
    with ctx.db.atomic():
        for session_id, said in by_session.items():
            first = said[0].speaker
            session = Session(
                id=session_id,
                client="generic",
                scope="bench",
                started_at=format_time(said[0].at),
                created_at=format_time(said[0].at),
                message_count=len(said),
            )
            save_session(ctx.db, session)
            messages = []
            for seq, turn in enumerate(said, start=1):
                role = Role.USER if turn.speaker in (first, "user") else Role.ASSISTANT
                text = f"{turn.speaker}: {turn.text}" if named else turn.text
                messages.append(Message(role, text, format_time(turn.said_at), session_id, seq))
                keys[(session_id, seq)] = turn.key
            insert_messages(ctx.db, messages)
    return keys


def fresh(tmp: Path, name: str) -> Context:
    return Context(load_settings(home=tmp / name, overrides={"embedder": "hash"}))


def run_locomo(path: Path, limit: int | None, k: int, tmp: Path) -> None:
    reached: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    times = []
    for conversation in locomo.load(path, limit):
        with fresh(tmp, f"locomo-{conversation.sample_id}") as ctx:
            keys = store(ctx, conversation.turns, named=True)
            for case in conversation.cases:
                began = time.perf_counter()
                hits = api.grep(ctx, case.question.text, EVERYWHERE, limit=k, around=0)
                times.append(time.perf_counter() - began)
                found = {keys[(m.hit.session_id, m.hit.seq)] for m in hits}
                for group in case.groups:
                    reached[group].append((bool(found & case.evidence), case.evidence <= found))
    print(f"LoCoMo ({path.name}): evidence reached by sessions grep top {k}")
    print(f"{'group':<22} {'questions':>9} {'any':>7} {'all':>7}")
    for group, rows in reached.items():
        share_any = sum(a for a, _ in rows) / len(rows)
        share_all = sum(b for _, b in rows) / len(rows)
        print(f"{group:<22} {len(rows):9d} {share_any:7.1%} {share_all:7.1%}")
    times.sort()
    print(f"grep p50 {1000 * times[len(times) // 2]:.1f} ms over {len(times)} questions")


def run_longmemeval(path: Path, limit: int | None, k: int, tmp: Path) -> None:
    turn_hit, session_hit, scored = 0, 0, 0
    for index, case in enumerate(longmemeval.load(path, limit)):
        if case.abstention or not case.answer_turns:
            continue
        with fresh(tmp, f"lme-{index}") as ctx:
            keys = store(ctx, case.turns, named=False)
            hits = api.grep(ctx, case.question.text, EVERYWHERE, limit=k, around=0)
        found = {keys[(m.hit.session_id, m.hit.seq)] for m in hits}
        scored += 1
        turn_hit += bool(found & case.answer_turns)
        session_hit += bool({m.hit.session_id for m in hits} & case.answer_sessions)
    print(f"LongMemEval ({path.name}): {scored} questions with evidence turns")
    print(f"  evidence turn in sessions grep top {k}: {turn_hit / scored:.1%}")
    print(f"  evidence session in the top {k}'s sessions: {session_hit / scored:.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", type=Path)
    parser.add_argument("--longmemeval", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="questions per file")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    if not args.locomo and not args.longmemeval:
        parser.error("give --locomo PATH and/or --longmemeval PATH")
    with tempfile.TemporaryDirectory() as tmp:
        if args.locomo:
            run_locomo(args.locomo, args.limit, args.k, Path(tmp))
        if args.longmemeval:
            run_longmemeval(args.longmemeval, args.limit, args.k, Path(tmp))


if __name__ == "__main__":
    main()
