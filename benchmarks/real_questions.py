"""Real questions: does recall answer what a developer asks about their real sessions?

    python -m benchmarks real-questions [--data DIR] [--others DIR] [--store DIR] [--json]

The sessions: ``benchmarks/sessions/real/`` (real public Claude Code and Codex
sessions and two written ones, ``SOURCES.md`` and ``manifest.json``), and the
smaller real sessions of ``benchmarks/sessions/`` as more of the same store
(no questions of their own here). Each is taken in by the default path,
``memctl ingest --wait`` with no LLM (capture, then the worker's rule-based
distillation), into one fresh store, in its own project scope (the manifest's
``project``; a session of ``--others`` is its file's stem).

The questions: ``questions.json`` beside the manifest, written from the gold
lists before any recall output was seen, each naming its session, its gold
item and its half (the session's: ``tune`` or ``check``). Each is asked
through ``memctl.api.recall`` with the CLI's defaults (no access recorded),
in two ways:

- ``project``: from the session's project directory, as the CLI does by
  default (that project and global); what a developer returning to it meets;
- ``everywhere``: ``--all-scopes`` from outside every project (each project
  counts the same), the harder of the two.

``--heldout`` asks the held-out split instead (``benchmarks/sessions/heldout/``:
nine more real sessions and 46 questions written before memctl ran on them),
in a store holding its sessions, the dev set's and the others; its figures are
the ``heldout`` half. Nobody tunes on it. ``--fresh`` asks the fresh split
(``benchmarks/sessions/fresh/``: eleven more real sessions, Claude Code and Gemini
CLI, and 48 questions written before memctl ran on them) in the same kind of store;
its halves, ``fresh-tune`` and ``fresh-check``, are fixed by session in its manifest.
``--fresh2`` asks the second fresh split (``benchmarks/sessions/fresh2/``: eleven more
real sessions, Claude Code, Amp and Copilot Chat, and 43 questions written before memctl
ran on them) likewise, halves ``fresh2-tune`` and ``fresh2-check``; blind until s31-fresh2
studied it (docs/benchmarks.md): no longer blind.
``--fresh3`` asks the third (``benchmarks/sessions/fresh3/``: twelve SpecStory Markdown
histories of Cursor, Copilot Chat, Claude Code and Codex CLI sessions, and 35 questions
written before memctl ran on them), halves ``fresh3-tune`` and ``fresh3-check``; blind too.
``--fresh4`` asks the fourth (``benchmarks/sessions/fresh4/``: 24 SpecStory histories, eight
of each of three projects, so a question from its project meets seven other sessions of
it, and 37 questions written before memctl ran on them), halves ``fresh4-tune`` and
``fresh4-check``; blind too.
``--fresh5`` asks the fifth (``benchmarks/sessions/fresh5/``: 26 Claude Code transcripts
of three projects, seven to eleven sessions each, as Claude Code writes them, and 43
questions written before memctl ran on them), halves ``fresh5-tune`` and ``fresh5-check``;
blind too.
``--fresh6`` asks the sixth (``benchmarks/sessions/fresh6/``: 24 sessions of three projects
and three clients, Claude Code JSONL, Codex rollouts and OpenCode exports, sub-agents among
them, and 45 questions written before memctl ran on them), halves ``fresh6-tune`` and
``fresh6-check``; blind too.
``--fresh7`` asks the seventh (``benchmarks/sessions/fresh7/``: 23 sessions of two projects
and two clients, Claude Code JSONL from Entire's v2 checkpoint ref and Gemini CLI session
documents of one person's machine administration, and 57 questions written before memctl ran
on them), halves ``fresh7-tune`` and ``fresh7-check``; blind until s32-fresh7 studied it
(docs/benchmarks.md): no longer blind.
``--fresh8`` asks the eighth (``benchmarks/sessions/fresh8/``: 21 sessions of two projects
and three clients, Claude Code JSONL and Codex rollouts from Entire's v2 checkpoint ref and
Gemini CLI session documents, and 52 questions written before memctl ran on them), halves
``fresh8-tune`` and ``fresh8-check``; blind until s35-unseen studied it (docs/benchmarks.md): no
longer blind.
``--fresh9`` asks the ninth (``benchmarks/sessions/fresh9/``: 15 sessions of three projects
and four clients, Claude Code JSONL and Copilot CLI events from Entire's v1 checkpoint branch,
OpenCode exports likewise, Codex CLI sessions as SpecStory Markdown, sub-agents among them,
and 59 questions written before memctl ran on them), halves ``fresh9-tune`` and
``fresh9-check``; its tune half studied since s37-fresh9 (docs/benchmarks.md), its check half
still unread.
``--fresh10`` asks the tenth (``benchmarks/sessions/fresh10/``: 15 sessions of three projects
and three clients, Claude Code JSONL from Entire's v1 checkpoint branch, Codex Desktop rollouts
from Entire's v2 checkpoint refs and Cursor chats as SpecStory Markdown, and 41 questions
written before memctl ran on them), halves ``fresh10-tune`` and ``fresh10-check``; blind: neither
half read.
``--plain`` asks plain questions of the heldout and fresh3 sessions
(``benchmarks/sessions/plain/``: "what did we do last time?", "what was I working on
yesterday?", "did we ever get X working?"), each at its own ``now`` (recall's
``--as-of``), halves ``plain-tune`` and ``plain-check`` by project; a question whose
answer is a whole session also counts as judged found when that session's digest is in
the top 5.

``--store DIR`` keeps the split's store in DIR (and what it was built from, the sessions'
hashes and the embedder, in ``taken_in.json``): a rerun asks it again instead of taking
2-5 minutes to build it, the same figures; a changed session or embedder rebuilds it.

Per half and in total it reports, on the top 5 results:

- found@5 auto: a result comes from the question's session (its session id,
  or a session range it was distilled from: ``memctl recall --explain``'s
  sources); a session message counts by its own session;
- found@5 judged: a result's text holds every keyword of the gold item
  (case-insensitive, the manifest's matching rule);
- nothing: the share of questions answered with no result;
- the same three for the results labelled ``"match": "clear"``, when recall
  labels them.

``--json`` adds each question's top 5 (``per_question``) for the studied halves only
(``STUDIED_HALVES``); a blind half's questions are only counted (``blind``: half -> how
many), so a run of a blind split can be reported without being read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.session_quality import GOLD, SESSIONS, holds
from memctl.api.ingest import IngestRequest, ingest
from memctl.api.recall import RecallRequest, recall
from memctl.api.sessions import origins
from memctl.clients.files import write_atomic
from memctl.config import Settings
from memctl.context import Context
from memctl.embed import Embedder, get_embedder
from memctl.errors import InputError
from memctl.memories.provenance import DIGEST_TAG
from memctl.retrieve.pipeline import Recalled
from memctl.store.memories import counts_by

HELDOUT = SESSIONS / "heldout"  # the held-out split: its sessions join GOLD's in one store
FRESH = SESSIONS / "fresh"  # the fresh split (s24): likewise, halves of its own
FRESH2 = SESSIONS / "fresh2"  # the second fresh split (s25), studied since s31: not blind
FRESH3 = SESSIONS / "fresh3"  # the third (s27): SpecStory histories, blind likewise
FRESH4 = SESSIONS / "fresh4"  # the fourth (s28): eight sessions a project, blind likewise
FRESH5 = SESSIONS / "fresh5"  # the fifth (s29): Claude Code JSONL of three projects, likewise
FRESH6 = SESSIONS / "fresh6"  # the sixth (s30): Claude Code, Codex and OpenCode, likewise
FRESH7 = SESSIONS / "fresh7"  # the seventh (s31): Claude Code, Gemini CLI; studied since s32
FRESH8 = SESSIONS / "fresh8"  # the eighth (s32): Claude Code, Codex, Gemini CLI; since s35 studied
FRESH9 = SESSIONS / "fresh9"  # the ninth (s35): Copilot CLI, OpenCode, ...; tune studied (s37)
FRESH10 = SESSIONS / "fresh10"  # the tenth (s43): Claude Code, Codex Desktop, Cursor; blind
PLAIN = SESSIONS / "plain"  # plain questions (s28) of the heldout and fresh3 sessions
# A split's questions, and the split whose sessions share their store (None: no other).
SPLITS: dict[str, tuple[Path, Path | None]] = {
    "dev": (GOLD, None),
    "heldout": (HELDOUT, GOLD),
    "fresh": (FRESH, GOLD),
    "fresh2": (FRESH2, GOLD),
    "fresh3": (FRESH3, GOLD),
    "fresh4": (FRESH4, GOLD),
    "fresh5": (FRESH5, GOLD),
    "fresh6": (FRESH6, GOLD),
    "fresh7": (FRESH7, GOLD),
    "fresh8": (FRESH8, GOLD),
    "fresh9": (FRESH9, GOLD),
    "fresh10": (FRESH10, GOLD),
    "plain": (PLAIN, GOLD),
}
# The halves one may read question by question (docs/benchmarks.md, and each split's
# --help): the dev set's, fresh's tune half, fresh2, fresh7, fresh8, fresh9's tune half and
# plain's tune half. Every other half of a split here is blind (heldout, fresh-check,
# fresh3-6, fresh9-check, fresh10, plain-check): a run of it shows only its figures, no
# question's top 5 (``per_question``) and no id of what everywhere loses. A split named
# after this list is blind until it is added here.
STUDIED_HALVES = (
    "tune",
    "check",
    "fresh-tune",
    "fresh2-tune",
    "fresh2-check",
    "fresh7-tune",
    "fresh7-check",
    "fresh8-tune",
    "fresh8-check",
    "fresh9-tune",
    "plain-tune",
)
TOP = 5  # found "in the top 5"
# heldout: benchmarks/sessions/heldout, never tuned on; fresh-check: never tuned on either;
# fresh2 (read by s31-fresh2), fresh3, fresh4, fresh5, fresh6, fresh7 (read by s32-fresh7),
# fresh8 (read by s35-unseen), fresh9 (its tune half read by s37-fresh9), fresh10 (unread):
# neither half tuned on
HALVES = (
    "tune",
    "check",
    "heldout",
    "fresh-tune",
    "fresh-check",
    "fresh2-tune",
    "fresh2-check",
    "fresh3-tune",
    "fresh3-check",
    "fresh4-tune",
    "fresh4-check",
    "fresh5-tune",
    "fresh5-check",
    "fresh6-tune",
    "fresh6-check",
    "fresh7-tune",
    "fresh7-check",
    "fresh8-tune",
    "fresh8-check",
    "fresh9-tune",
    "fresh9-check",
    "fresh10-tune",
    "fresh10-check",
    "plain-tune",
    "plain-check",
)
BLIND_HALVES = tuple(half for half in HALVES if half not in STUDIED_HALVES)
ALL = "all"
SCOPINGS = ("project", "everywhere")
STORE_RECORD = "taken_in.json"  # in a kept store (--store): what it was built from
CLEAR = "clear"  # the label of a clear match (results without labels count as unlabelled)
# The default path: capture and the worker's rule-based distillation, run here.
DEFAULT_PATH = {"llm": "none", "ingest.spawn_worker": False}


@dataclass(frozen=True)
class Question:
    id: str
    q: str
    session: str  # the session file it asks about
    half: str
    keywords: tuple[str, ...]
    now: str | None = None  # when it is asked (recall's --as-of); None: the clock
    digest_answers: bool = False  # its session's digest answers it (a whole session asked)

    @classmethod
    def of(cls, row: dict[str, Any]) -> Question:
        return cls(
            row["id"],
            row["q"],
            row["session"],
            row["half"],
            tuple(row["keywords"]),
            row.get("now"),
            bool(row.get("digest_answers")),
        )


@dataclass(frozen=True)
class Hit:
    """One of the top results, as the benchmark sees it."""

    sessions: frozenset[str]  # the session files it comes from
    text: str
    match: str | None  # "clear" / "possible", when recall labels its results
    digest: bool = False  # a session's digest (a memory tagged so)


@dataclass
class Answer:
    question: Question
    scoping: str
    hits: list[Hit]

    def found(self, clear_only: bool) -> tuple[bool, bool]:
        """(from the question's session, states the gold item) within the top results."""
        hits = [h for h in self.hits if h.match == CLEAR] if clear_only else self.hits
        gold = {"keywords": self.question.keywords}
        session = self.question.session
        digest = self.question.digest_answers
        return (
            any(session in h.sessions for h in hits),
            any(
                holds(h.text, gold) or (digest and h.digest and session in h.sessions) for h in hits
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        auto, judged = self.found(clear_only=False)
        return {
            "id": self.question.id,
            "half": self.question.half,
            "scoping": self.scoping,
            "found_auto": auto,
            "found_judged": judged,
            "top": [
                {
                    "sessions": sorted(h.sessions),
                    "match": h.match,
                    "digest": h.digest,
                    "text": h.text[:200],
                }
                for h in self.hits
            ],
        }


@dataclass
class Report:
    rows: list[dict[str, Any]]
    answers: list[Answer]
    load: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The figures; each question's top 5 only for a studied half: a blind half's
        questions are counted in ``blind`` (its figures are in ``rows``)."""
        studied = [a for a in self.answers if a.question.half not in BLIND_HALVES]
        blind = [a.question.half for a in self.answers if a.question.half in BLIND_HALVES]
        return {
            "rows": self.rows,
            "load": self.load,
            "lost_everywhere": lost_everywhere(self.answers),
            "per_question": [a.to_dict() for a in studied],
            "blind": {half: count // len(SCOPINGS) for half, count in Counter(blind).items()},
        }


def lost_everywhere(answers: list[Answer]) -> dict[str, list[str]]:
    """Per half, the questions found from their project and not from everywhere, each as
    its id and what was lost ("q03 auto", "q58 judged", "q08 auto+judged"): what a person
    outside every project misses of what the project finds (docs/benchmarks.md, "Asked
    from everywhere: what the project finds and everywhere loses"); none of a blind half."""
    found = {(a.question.id, a.scoping): a.found(clear_only=False) for a in answers}
    lost: dict[str, list[str]] = {}
    for answer in (a for a in answers if a.scoping == "project"):
        if answer.question.half in BLIND_HALVES:
            continue
        here = found[answer.question.id, "project"]
        away = found.get((answer.question.id, "everywhere"), here)
        kinds = [k for k, h, a in zip(("auto", "judged"), here, away, strict=True) if h and not a]
        if kinds:
            lost.setdefault(answer.question.half, []).append(
                f"{answer.question.id} {'+'.join(kinds)}"
            )
    return lost


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no {path.name} in {path.parent}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None


def listed_sessions(directory: Path) -> list[dict[str, Any]]:
    """The manifest's sessions; for a manifest naming other splits' (``sessions_of``),
    theirs, each file by its path from ``directory``."""
    manifest = read_json(directory / "manifest.json")
    sessions = list(manifest.get("sessions", []))
    for split in manifest.get("sessions_of", []):
        for entry in read_json(directory.parent / split / "manifest.json")["sessions"]:
            sessions.append({**entry, "file": f"../{split}/{entry['file']}"})
    return sessions


def load_questions(directory: Path) -> tuple[list[dict[str, Any]], list[Question]]:
    """The manifest's sessions and the questions, each asking about one of them."""
    sessions = listed_sessions(directory)
    try:
        questions = [Question.of(q) for q in read_json(directory / "questions.json")["questions"]]
    except (KeyError, TypeError) as exc:
        raise InputError(f"{directory / 'questions.json'} is not a questions file: {exc}") from None
    known = {s["file"] for s in sessions}
    for question in questions:
        if question.session not in known:
            raise InputError(f"question {question.id} asks about {question.session}, not listed")
    return sessions, questions


Entry = tuple[Path, dict[str, Any], str]  # where a session lies, its manifest entry, its project


def entries_of(
    directory: Path, sessions: list[dict[str, Any]], others: Path | None, beside: Path | None
) -> list[Entry]:
    """Every session the store takes in, each with its directory and project scope."""
    entries = [(directory, s, s["project"]) for s in sessions]
    if beside is not None:
        entries += [
            (beside, s, s["project"]) for s in read_json(beside / "manifest.json")["sessions"]
        ]
    if others is not None:
        more = read_json(others / "manifest.json")["sessions"]
        entries += [(others, s, Path(s["file"]).stem) for s in more]
    return entries


def take_in(
    ctx: Context,
    directory: Path,
    sessions: list[dict[str, Any]],
    others: Path | None,
    beside: Path | None = None,
) -> tuple[dict[str, set[str]], list[str]]:
    """Ingest every session by the default path: session id -> its session files (a
    sub-agent's file is stored with its parent's session: Codex's rollout, OpenCode's task
    session), and the sessions memctl could not read, each with why. ``beside``: another
    split's sessions, in their own projects, in the same store."""
    files: dict[str, set[str]] = {}
    unread = []
    for where, entry, project in entries_of(directory, sessions, others, beside):
        request = IngestRequest(
            transcript=str(where / entry["file"]), client=entry["client"], scope=project, wait=True
        )
        try:
            report = ingest(ctx, request).report
        except InputError as error:
            # memctl cannot read it (a client it has no parser for): nothing of it can be
            # recalled, as for a user; its questions count as asked and not found
            unread.append(f"{entry['file']}: {error}")
            continue
        files.setdefault(report.session_id, set()).add(entry["file"])
    return files, unread


def taken_in(entries: list[Entry], embedder: Embedder) -> dict[str, Any]:
    """What a kept store was built from: each session by its file's name, client, project
    and SHA-256 (not its path: a store serves every checkout), and the embedder."""
    return {
        "embedder": f"{embedder.name} {embedder.dim}",
        "default_path": DEFAULT_PATH,
        "sessions": [
            [
                entry["file"],
                entry["client"],
                project,
                file_hash(where / entry["file"]),
            ]
            for where, entry, project in entries
        ],
    }


def file_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}") from None


def kept(store: Path, built_from: dict[str, Any]) -> dict[str, Any] | None:
    """The record of the store kept in ``store`` when it was built from the same sessions
    with the same embedder; None when it must be built (again). A directory that is
    neither empty nor such a store is refused: building would clear its ``home``."""
    if store.exists() and not store.is_dir():
        raise InputError(f"{store} is not a directory")
    record_path = store / STORE_RECORD
    if not record_path.exists():
        if store.exists() and any(store.iterdir()):
            raise InputError(f"{store} is not empty and holds no {STORE_RECORD}: not a store")
        return None
    record = read_json(record_path)
    same = isinstance(record, dict) and record.get("built_from") == built_from
    return record if same and "files" in record else None


def hits_of(ctx: Context, results: list[Recalled], files: dict[str, set[str]]) -> list[Hit]:
    """The results as hits: each with the session files it comes from."""
    memories = [r.memory for r in results if not r.is_message]
    came = origins(ctx, memories) if memories else {}
    hits = []
    for result in results:
        row = result.to_dict()
        ids = {row.get("session_id")} | {o.session_id for o in came.get(result.memory.id, [])}
        sessions = frozenset(f for i in ids if i in files for f in files[i])
        digest = not result.is_message and DIGEST_TAG in result.memory.tags
        # the row shows its text and, under it, its member's part that answers ("from")
        shown = [str(row.get("content") or ""), *([row["from"]["text"]] if row["from"] else [])]
        hits.append(Hit(sessions, "\n".join(shown), row.get("match"), digest))
    return hits


def ask(
    ctx: Context, question: Question, scope: str, scoping: str, files: dict[str, set[str]]
) -> Answer:
    everywhere = scoping == "everywhere"
    request = RecallRequest(
        question.q,
        scope=None if everywhere else scope,
        all_scopes=everywhere,
        touch=False,
        as_of=question.now,
    )
    results = recall(ctx, request).result.results[:TOP]
    return Answer(question, scoping, hits_of(ctx, results, files))


def percent(count: int, total: int) -> float:
    return round(100 * count / total, 1) if total else 0.0


def figures(answers: list[Answer]) -> dict[str, Any]:
    """found@5 both ways and the share answered with nothing; clear-only when labelled."""
    n = len(answers)
    found = [a.found(clear_only=False) for a in answers]
    row: dict[str, Any] = {
        "questions": n,
        "found@5 auto": percent(sum(f[0] for f in found), n),
        "found@5 judged": percent(sum(f[1] for f in found), n),
        "nothing": percent(sum(not a.hits for a in answers), n),
    }
    if any(h.match is not None for a in answers for h in a.hits):
        clear = [a.found(clear_only=True) for a in answers]
        row["clear found@5 auto"] = percent(sum(f[0] for f in clear), n)
        row["clear found@5 judged"] = percent(sum(f[1] for f in clear), n)
        row["no clear match"] = percent(
            sum(not any(h.match == CLEAR for h in a.hits) for a in answers), n
        )
    return row


def rows_of(answers: list[Answer]) -> list[dict[str, Any]]:
    rows = []
    for scoping in SCOPINGS:
        for half in (*HALVES, ALL):
            chosen = [a for a in answers if a.scoping == scoping and half in (ALL, a.question.half)]
            if chosen:
                rows.append({"scoping": scoping, "half": half, **figures(chosen)})
    return rows


def run(
    settings: Settings,
    directory: Path = GOLD,
    others: Path | None = SESSIONS,
    embedder: Embedder | None = None,
    note: Callable[[str], None] = lambda _: None,
    beside: Path | None = None,
    store: Path | None = None,
) -> Report:
    """Take every session in by the default path, into one fresh store, and ask each
    question both ways (``beside``: another split's sessions, in the store too). ``store``:
    a directory keeping the store: reused when built from the same sessions with the same
    embedder (its load is the build's), else built there (again) and kept."""
    sessions, questions = load_questions(directory)
    scope = {s["file"]: s["project"] for s in sessions}
    entries = entries_of(directory, sessions, others, beside)
    with contextlib.ExitStack() as stack:
        if store is None:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memctl-realq-")))
        else:
            home = store / "home"
        values = {**settings.values, **DEFAULT_PATH}
        fresh = dataclasses.replace(settings, home=home, values=values)
        embedder = embedder or get_embedder(fresh)
        built_from = taken_in(entries, embedder) if store is not None else {}
        record = kept(store, built_from) if store is not None else None
        if store is not None and record is None:
            shutil.rmtree(home, ignore_errors=True)
            # a record with no files marks the directory as a store while it is built: a
            # build cut short is built again, not refused as a foreign directory
            write_atomic(store / STORE_RECORD, json.dumps({"built_from": built_from}).encode())
        with Context(fresh, embedder) as ctx:
            if record is None:
                note("taking the sessions in")
                began, cpu = time.perf_counter(), time.process_time()
                files, unread = take_in(ctx, directory, sessions, others, beside)
                load: dict[str, Any] = {
                    "sessions": len(files),
                    "not_read": unread,
                    "memories": counts_by(ctx.db, "state").get("active", 0),
                    "ingest_s": round(time.perf_counter() - began, 1),
                    "ingest_cpu_s": round(time.process_time() - cpu, 1),
                }
                if store is not None:
                    kept_files = {k: sorted(v) for k, v in files.items()}
                    record = {"built_from": built_from, "files": kept_files, "load": load}
                    write_atomic(store / STORE_RECORD, json.dumps(record).encode())
            else:
                note(f"asking the store kept in {store}")
                files = {k: set(v) for k, v in record["files"].items()}
                load = dict(record["load"])
            note("asking the questions")
            began = time.perf_counter()
            answers = [
                ask(ctx, q, scope[q.session], scoping, files)
                for scoping in SCOPINGS
                for q in questions
            ]
            load["recall_ms_mean"] = round(1000 * (time.perf_counter() - began) / len(answers), 1)
    return Report(rows_of(answers), answers, load)
