"""What the default ingest keeps from real coding sessions: memories, precision, recall@5,
and against a gold set: gold recall and session-start coverage.

    .venv/bin/python benchmarks/session_quality.py [--sessions DIR] [--gold DIR] [--scripted-llm]

Gold set (``--gold``, default ``benchmarks/sessions/real/``): real public
sessions copied byte-for-byte, and two written for it (an OpenCode export and
a Chinese session: no public real ones were found), ``SOURCES.md`` and
``manifest.json`` giving each one's repository, commit, path and licence, each
with a gold list of what a colleague would remember from it. Each session is
in one half: ``tune`` (the rules were tuned on it and its gold list written
after seeing memctl's output) or ``check`` (gold written before memctl ran on
it, never tuned on); totals are printed for each half and both. Every session
is ingested into one fresh store (``--wait``) and the script prints, per path
and per session:

- sessions with a memory, and with a digest among those that ran a command or
  changed a file (the target: all of them);
- precision: the share of the memories that hold at least one gold item (a
  lower bound: a true memory the gold list forgot counts against it);
- gold recall: the share of gold items some memory of the session holds;
- session-start coverage: the share of gold items the block a next session of
  the same project starts with holds (``memctl context``);
- projects with useful context: the projects whose block, once every session is
  stored, holds a gold item of one of their sessions;
- contradicted by a tool result: memories claiming what the session's own tool
  results deny (``memctl.ingest.claims``: a file said made whose every write was
  refused or failed, tests said to pass while a command still fails); beside it the
  count a person judged so by reading each memory against the transcript's tool results
  (``benchmarks/data/contradiction_judgements.jsonl``; memories with no judgement on
  record, e.g. after a change of wording, are counted as not judged);
- CPU seconds of the whole ingest (capture, distillation, embedding).

The paths: the rules (no LLM; the default); with ``--host-answers FILE``, the
host-model path: every session is captured with ``ingest.host_distil`` on and
its tasks (``memory_distill_tasks``) are answered with the answers recorded in
FILE (``benchmarks/data/host_answers/gold-set.json`` was written by a model
acting as the host, from the tasks alone, before it saw the gold lists; see
``benchmarks/host_record.py``), through ``memory_distill_apply``'s own code; a
task with no recorded answer (the tasks changed since) is answered empty and
counted; and with ``--scripted-llm``, the LLM path against a scripted server
(wiring only, not quality).

The first set (``--sessions``, default ``benchmarks/sessions/``):
The evaluation set is ``benchmarks/sessions/``: real session transcripts
committed to public repositories (``manifest.json`` names each one's
repository, commit, path and licence, and how they were trimmed), with the
facts a later session should be able to recall and questions asking for
them. Every session is ingested into one fresh store (``memctl ingest
--wait``, the local MiniLM embedder, no LLM) and the script prints, per
session and in total:

- memories: the active memories the session made (its digest included);
- precision: the share of them holding at least one expected fact (a memory
  holds a fact when it contains each of the fact's keywords);
- useful: whether the session made at least one memory holding a fact;
- recall@5: the share of questions whose fact is in the top 5 of `memctl
  recall` over the whole store (every session's memories compete; with few
  memories in the store this is easy, so recall@1 is printed too);
- coverage: the share of the session's messages distilled;
- injected copies: memories whose text lies inside injected text
  (AGENTS.md / CLAUDE.md blocks, environment context, reminders...).

``--scripted-llm`` runs the LLM path against tests/ollama_server.py, whose
answers are scripted: those numbers check the plumbing, not quality.
Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memctl.api.distil import DistilRequest, PendingRequest, distil, pending  # noqa: E402
from memctl.api.ingest import IngestRequest, ingest  # noqa: E402
from memctl.api.recall import RecallRequest, SessionStartRequest, recall, session_start  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.ingest.claims import evidence, refuted  # noqa: E402
from memctl.ingest.digest import build_digest  # noqa: E402
from memctl.ingest.tools import Call, read_calls, tool_kind  # noqa: E402
from memctl.memories.injected import INJECTIONS  # noqa: E402
from memctl.store.memories import MemoryFilter, list_memories  # noqa: E402
from memctl.store.runs import list_runs  # noqa: E402
from memctl.store.sessions import get_session, messages_after  # noqa: E402

SESSIONS = Path(__file__).resolve().parent / "sessions"
GOLD = SESSIONS / "real"
HOST_ANSWERS = Path(__file__).resolve().parent / "data" / "host_answers" / "gold-set.json"
# memories read by hand against their session's tool results (see ``judged``)
JUDGEMENTS = Path(__file__).resolve().parent / "data" / "contradiction_judgements.jsonl"
JUDGED_KEY_CHARS = 160  # a memory is known by its session and its first characters
TOP = 5
ALL_TASKS = 10_000  # a session's every waiting task, in one call
Answers = dict[tuple[str, int], list[dict[str, Any]]]  # (file, through_seq) -> facts


@dataclass
class SessionScore:
    name: str
    memories: list[str] = field(default_factory=list)
    holding: int = 0
    useful: bool = False
    questions: int = 0
    found: int = 0
    first: int = 0  # found at rank 1
    covered: float = 0.0
    injected_copies: int = 0


def holds(text: str, fact: dict[str, Any]) -> bool:
    lowered = text.lower()
    return all(k.lower() in lowered for k in fact["keywords"])


def injected_text(ctx: Context, session_id: str) -> list[str]:
    """Every block of injected text the session's stored messages hold."""
    blocks = []
    for message in messages_after(ctx.db, session_id, 0):
        for injection in INJECTIONS:
            blocks += [m.group(0) for m in injection.regex.finditer(message.content)]
    return blocks


def score_session(ctx: Context, entry: dict[str, Any], session_id: str) -> SessionScore:
    score = SessionScore(entry["file"])
    where = MemoryFilter(scopes=None, states=("active",))
    mine = [m for m in list_memories(ctx.db, where, None) if m.session_id == session_id]
    score.memories = [m.content for m in mine]
    facts = entry["facts"]
    score.holding = sum(any(holds(m, f) for f in facts) for m in score.memories)
    score.useful = score.holding > 0
    blocks = injected_text(ctx, session_id)
    score.injected_copies = sum(
        any(" ".join(m.split()) in " ".join(b.split()) for b in blocks) for m in score.memories
    )
    session = get_session(ctx.db, session_id)
    if session is not None and session.message_count:
        score.covered = session.extracted_through / session.message_count
    return score


def ask(ctx: Context, entry: dict[str, Any], score: SessionScore) -> None:
    facts = {f["id"]: f for f in entry["facts"]}
    for question in entry["questions"]:
        request = RecallRequest(question["q"], limit=TOP, all_scopes=True, touch=False)
        results = recall(ctx, request).result.results
        hits = [holds(r.memory.content, facts[question["fact"]]) for r in results]
        score.questions += 1
        score.found += any(hits)
        score.first += bool(hits) and hits[0]


def run(directory: Path, overrides: dict[str, Any]) -> tuple[list[SessionScore], int]:
    """The scores of every session, and how many LLM calls the runs made."""
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(Path(home), overrides={"ingest.spawn_worker": False, **overrides})
        with Context(settings) as ctx:
            ids = []
            for entry in manifest["sessions"]:
                request = IngestRequest(
                    transcript=str(directory / entry["file"]), client=entry["client"], wait=True
                )
                ids.append(ingest(ctx, request).report.session_id)
            scores = [
                score_session(ctx, e, i) for e, i in zip(manifest["sessions"], ids, strict=True)
            ]
            for entry, score in zip(manifest["sessions"], scores, strict=True):
                ask(ctx, entry, score)
            calls = sum(r.counts.get("llm_calls", 0) for r in list_runs(ctx.db, 1000, "ingest"))
    return scores, calls


def report(label: str, result: tuple[list[SessionScore], int]) -> None:
    scores, calls = result
    print(f"\n## {label}\n")
    print("| session | memories | holding a fact | recall@5 | coverage | injected copies |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for s in scores:
        recall_at = f"{s.found}/{s.questions}" if s.questions else "-"
        print(
            f"| {s.name} | {len(s.memories)} | {s.holding} | {recall_at} | "
            f"{s.covered:.0%} | {s.injected_copies} |"
        )
    memories = sum(len(s.memories) for s in scores)
    questions = sum(s.questions for s in scores)
    print(
        f"\nsessions {len(scores)}, memories {memories} "
        f"({memories / max(1, len(scores)):.1f} a session), "
        f"precision {sum(s.holding for s in scores) / max(1, memories):.2f}, "
        f"sessions with a useful memory {sum(s.useful for s in scores)}/{len(scores)}, "
        f"recall@{TOP} {sum(s.found for s in scores) / max(1, questions):.2f} "
        f"({sum(s.found for s in scores)}/{questions}), "
        f"recall@1 {sum(s.first for s in scores) / max(1, questions):.2f}, "
        f"coverage {sum(s.covered for s in scores) / max(1, len(scores)):.0%}, "
        f"injected copies {sum(s.injected_copies for s in scores)}, LLM calls {calls}"
    )


@dataclass
class GoldScore:
    name: str
    half: str = "tune"  # the manifest's half: "tune" (the rules were tuned on it) or "check"
    language: str = "en"  # the language the user writes in (the manifest's, English if none)
    real: bool = True  # a real session, not one written for the set
    acted: bool = False  # ran a command or changed a file
    digest: bool = False
    memories: list[str] = field(default_factory=list)
    precise: int = 0
    gold: int = 0
    recalled: int = 0
    at_start: int = 0
    cpu: float = 0.0
    tasks: int = 0  # host path: tasks handed out
    unanswered: int = 0  # host path: tasks with no recorded answer
    by_host: int = 0  # host path: gold items the host's own facts hold (no digest, no rules)
    contradicted: list[str] = field(default_factory=list)  # memories a tool result denies
    judged_wrong: int = 0  # memories a person judged contradicted by a tool result
    unjudged: int = 0  # memories with no judgement on record
    scope: str = ""  # the project's scope the session was stored in
    useful_project: bool = False  # the project's block at the end holds a gold item of it


def acted(ctx: Context, session_id: str) -> bool:
    """The session's stored messages hold a command or a file change."""
    calls: list[Call] = []
    for message in messages_after(ctx.db, session_id, 0):
        read_calls(message.content, calls)
    return any(tool_kind(c.name, c.detail) in ("shell", "file") for c in calls)


def contradicted(ctx: Context, session_id: str, memories: list[str]) -> list[str]:
    """The memories claiming what the session's tool results deny: a file made whose every
    write was refused or failed, tests said to pass while a command still fails."""
    digest = build_digest(messages_after(ctx.db, session_id, 0), ALL_TASKS, ALL_TASKS)
    found = evidence(digest.calls, digest.left_open)
    return [m for m in memories if refuted(m, found)]


def judged_key(memory: str) -> str:
    return " ".join(memory.split())[:JUDGED_KEY_CHARS].rstrip()


def judgements(path: Path) -> dict[tuple[str, str], bool]:
    """The hand judgements: (session file, memory's key) -> contradicted by a tool result.
    Each was made by reading the memory against the session's tool results in the
    transcript (not by ``memctl.ingest.claims``, the code that filters such claims)."""
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return {(r["session"], judged_key(r["memory"])): bool(r["contradicted"]) for r in rows}


JUDGED = judgements(JUDGEMENTS)


def answer_tasks(ctx: Context, score: GoldScore, session_id: str, answers: Answers) -> None:
    """Answer the session's host tasks, in order, with the recorded answers."""
    while tasks := [
        t
        for t in pending(ctx, PendingRequest(limit=ALL_TASKS)).batches
        if t.session_id == session_id
    ]:
        for task in tasks:
            facts = answers.get((score.name, task.through_seq))
            score.tasks += 1
            score.unanswered += facts is None
            distil(ctx, DistilRequest(session_id, task.through_seq, {"facts": facts or []}))


def gold_session(
    ctx: Context,
    directory: Path,
    entry: dict[str, Any],
    show: bool = False,
    answers: Answers | None = None,
) -> GoldScore:
    score = GoldScore(
        entry["file"],
        entry.get("half", "tune"),
        entry.get("language", "en"),
        entry.get("origin") != "written",
    )
    started = time.process_time()
    request = IngestRequest(
        transcript=str(directory / entry["file"]), client=entry["client"], wait=True
    )
    captured = ingest(ctx, request).report
    if answers is not None:
        answer_tasks(ctx, score, captured.session_id, answers)
    score.cpu = time.process_time() - started
    where = MemoryFilter(scopes=None, states=("active",))
    mine = [m for m in list_memories(ctx.db, where, None) if m.session_id == captured.session_id]
    score.memories = [m.content for m in mine]
    score.digest = any("digest" in m.tags for m in mine)
    score.acted = acted(ctx, captured.session_id)
    score.contradicted = contradicted(ctx, captured.session_id, score.memories)
    verdicts = [JUDGED.get((score.name, judged_key(m))) for m in score.memories]
    score.judged_wrong = sum(v is True for v in verdicts)
    score.unjudged = sum(v is None for v in verdicts)
    gold = entry["gold"]
    score.gold = len(gold)
    score.precise = sum(any(holds(m, g) for g in gold) for m in score.memories)
    score.recalled = sum(any(holds(m, g) for m in score.memories) for g in gold)
    if answers is not None:
        written = [
            f["content"]
            for (name, _), facts in answers.items()
            if name == score.name
            for f in facts
        ]
        own = [m for m in score.memories if any(w in m for w in written)]
        score.by_host = sum(any(holds(m, g) for m in own) for g in gold)
    block = session_start(ctx, SessionStartRequest(scope=captured.scope))
    score.at_start = sum(holds(block, g) for g in gold)
    score.scope = captured.scope
    if show:
        print(f"\n### {score.name}\n" + "\n".join(f"- {m[:300]!r}" for m in score.memories))
        missed = [g["text"] for g in gold if not any(holds(m, g) for m in score.memories)]
        print("".join(f"MISSED: {text}\n" for text in missed), end="")
    for memory in score.contradicted:
        print(f"CONTRADICTED by a tool result, {score.name}: {memory[:200]!r}")
    return score


def gold_run(
    directory: Path, overrides: dict[str, Any], show: bool = False, answers: Answers | None = None
) -> list[GoldScore]:
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(Path(home), overrides={"ingest.spawn_worker": False, **overrides})
        with Context(settings) as ctx:
            ctx.vectors(["load the embedder before the clock starts"])
            entries = manifest["sessions"]
            scores = [gold_session(ctx, directory, e, show, answers) for e in entries]
            useful_projects(ctx, entries, scores)
            return scores


def useful_projects(ctx: Context, entries: list[dict[str, Any]], scores: list[GoldScore]) -> None:
    """Mark each session whose project's block, once every session is stored, holds a gold
    item of one of the project's sessions: the project has useful context."""
    for scope in {s.scope for s in scores}:
        block = session_start(ctx, SessionStartRequest(scope=scope))
        mine = [(e, s) for e, s in zip(entries, scores, strict=True) if s.scope == scope]
        useful = any(holds(block, g) for e, _ in mine for g in e["gold"])
        for _, score in mine:
            score.useful_project = useful


def recorded_answers(path: Path) -> Answers:
    """The recorded host answers, by session file and task end."""
    recorded = json.loads(path.read_text(encoding="utf-8"))["answers"]
    return {(a["file"], a["through_seq"]): a["facts"] for a in recorded}


def gold_report(label: str, scores: list[GoldScore]) -> None:
    print(f"\n## gold set: {label}\n")
    print(
        "| session | half | memories | precise | gold recall | at session start | digest | CPU s |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for s in scores:
        digest = "yes" if s.digest else ("MISSING" if s.acted else "no (did nothing)")
        print(
            f"| {s.name} | {s.half} | {len(s.memories)} | {s.precise} | {s.recalled}/{s.gold} | "
            f"{s.at_start}/{s.gold} | {digest} | {s.cpu:.2f} |"
        )
    print()
    halves = {
        "tune": [s for s in scores if s.half == "tune"],
        "check": [s for s in scores if s.half == "check"],
        "check, real sessions only": [s for s in scores if s.half == "check" and s.real],
        "all": scores,
    }
    for language in sorted({s.language for s in scores}):
        halves[f"check, {language}"] = [
            s for s in scores if s.half == "check" and s.language == language
        ]
    for half, chosen in halves.items():
        if chosen:
            print(f"- {half} ({len(chosen)} sessions): {totals(chosen)}")


def totals(scores: list[GoldScore]) -> str:
    memories = sum(len(s.memories) for s in scores)
    gold = sum(s.gold for s in scores)
    acting = [s for s in scores if s.acted]
    return (
        f"with a memory {sum(bool(s.memories) for s in scores)}, "
        f"with a digest {sum(s.digest for s in acting)}/{len(acting)} of those that acted; "
        f"memories {memories}, precision {sum(s.precise for s in scores) / max(1, memories):.2f}, "
        f"gold recall {sum(s.recalled for s in scores) / max(1, gold):.2f} "
        f"({sum(s.recalled for s in scores)}/{gold}), "
        f"session-start coverage {sum(s.at_start for s in scores) / max(1, gold):.2f}, "
        f"contradicted by a tool result {sum(len(s.contradicted) for s in scores)} "
        f"(judged by hand: {sum(s.judged_wrong for s in scores)}, "
        f"not judged {sum(s.unjudged for s in scores)}), "
        f"projects with useful context {len({s.scope for s in scores if s.useful_project})} "
        f"of {len({s.scope for s in scores})}, "
        f"CPU max {max((s.cpu for s in scores), default=0):.2f} s"
        + (
            f"; gold recall of the host's facts alone "
            f"{sum(s.by_host for s in scores) / max(1, gold):.2f}; "
            f"host tasks {sum(s.tasks for s in scores)}, "
            f"with no recorded answer {sum(s.unanswered for s in scores)}"
            if any(s.tasks for s in scores)
            else ""
        )
    )


def scripted_llm() -> dict[str, Any]:
    """Settings for the LLM path against the scripted Ollama server (not a quality measure)."""
    from tests.ollama_server import FakeOllama

    server = FakeOllama().start()
    server.script_chat(*([{"facts": []}] * 500))
    return {"llm": "ollama", "ollama.host": server.url}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=Path, default=SESSIONS)
    parser.add_argument("--gold", type=Path, default=GOLD, help="the gold set's directory")
    parser.add_argument("--gold-only", action="store_true", help="skip the first set")
    parser.add_argument("--show", action="store_true", help="print each gold session's memories")
    parser.add_argument(
        "--host-answers",
        type=Path,
        nargs="?",
        const=HOST_ANSWERS,
        help="also run the host-model path with these recorded answers (default: the ones in "
        "benchmarks/data/host_answers/, written by a model acting as the host)",
    )
    parser.add_argument(
        "--scripted-llm",
        action="store_true",
        help="also run the LLM path against the scripted Ollama server (plumbing, not quality)",
    )
    args = parser.parse_args()
    if not args.gold_only:
        report("rules alone (no LLM), local MiniLM embedder", run(args.sessions, {"llm": "none"}))
    gold_report("rules alone (no LLM)", gold_run(args.gold, {"llm": "none"}, args.show))
    if args.host_answers:
        host = {"llm": "none", "ingest.host_distil": True}
        answers = recorded_answers(args.host_answers)
        gold_report(
            f"host model path, recorded answers ({args.host_answers.name})",
            gold_run(args.gold, host, args.show, answers),
        )
    if args.scripted_llm:
        gold_report(
            "LLM path, scripted answers: NOT a quality measure", gold_run(args.gold, scripted_llm())
        )
        if not args.gold_only:
            report(
                "LLM path, scripted Ollama answers (empty fact lists): NOT a quality measure",
                run(args.sessions, scripted_llm()),
            )


if __name__ == "__main__":
    main()
