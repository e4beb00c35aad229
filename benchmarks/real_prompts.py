"""The per-prompt hook on real prompts (issue 33, s33-prompt): what it recalls for when a
person pastes a log, a trace, a diff or a file, and whether a question about something
stored still gets its block.

    python -m benchmarks real-prompts [--store DIR] [--details FILE] [--json]

The prompts: the user turns of the studied splits' real sessions (``STUDIED``: never the
blind ones), without what their client wrapped around them (``strip_injected``: an IDE's
open file, a slash command's wrapper), as the ``UserPromptSubmit`` hook is given a
prompt. Those of ``MIN_LINES`` lines or more carry what people paste, and for each the
report counts what ``asking.asked`` leaves for recall (the details list each prompt and
what is asked, to judge by hand).

The pastes: ``PASTES``, the pasted part of 30 of those prompts, marked by hand (session,
user turn, first and last line): terminal sessions, build and CI logs, browser consoles,
JavaScript, Node, Svelte and Python test traces, tsc and ESLint errors, a diff, CSS and
TypeScript files, a manual page, a documentation page, a HAR file. Each
dev question of ``benchmarks.real_questions`` (the ``real`` split's store, from its
session's project, as the hook asks) is asked plain and with each paste of its half,
after the question and before it; each unrelated prompt of ``benchmarks.injection`` plain,
in lower case and with each paste of its half, on one side by turns. Reported: questions
given a block, **blocks lost** (a block plain, none with the paste), unrelated prompts
given a block, and the CPU time of a prompt.

Halves: a question's is its session's (the manifest's); a paste's alternates by its
session, in the file's order; a real prompt's likewise, by its session in reading order;
an unrelated prompt's by its id, as in ``benchmarks.injection``.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks import real_questions as realq
from benchmarks.injection import UNRELATED, unrelated_prompts
from benchmarks.paraphrase import HALVES
from benchmarks.session_quality import GOLD, SESSIONS
from memctl.api.recall import PromptRequest, prompt_context
from memctl.config import Settings
from memctl.context import Context
from memctl.embed import Embedder
from memctl.errors import InputError
from memctl.ingest.parse import read_transcript
from memctl.ingest.source import Input
from memctl.memories.injected import strip_injected
from memctl.model import Role
from memctl.retrieve.asking import asked

PASTES = SESSIONS / "pastes.json"
# The splits whose sessions may be read (docs/benchmarks.md): never fresh5, fresh6, fresh8,
# fresh9, fresh10
STUDIED = ("real", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh7")
MIN_LINES = 3  # a prompt of this many lines carries something besides a typed question
PLACES = ("after", "before")  # where a paste goes: after the question, or before it


@dataclass(frozen=True)
class Paste:
    session: str  # split/file under benchmarks/sessions
    kind: str
    text: str
    half: str


@dataclass
class Tally:
    """One half's sums."""

    questions: int = 0
    plain_blocks: int = 0
    pairs: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PLACES, 0))
    blocks: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PLACES, 0))
    lost: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PLACES, 0))
    unrelated: int = 0
    unrelated_blocks: int = 0
    lower_unrelated_blocks: int = 0  # the same prompts typed in lower case
    pasted_unrelated: int = 0
    pasted_unrelated_blocks: int = 0
    prompts: int = 0  # real prompts of MIN_LINES lines or more
    cut: int = 0  # ... of which asking left something out
    whole: int = 0  # ... of which it left out nothing or everything: recalled for whole
    cpu: dict[str, float] = field(default_factory=lambda: {"plain": 0.0, "pasted": 0.0})

    def row(self, half: str) -> dict[str, Any]:
        def share(count: int, total: int) -> float:
            return round(100 * count / total, 1) if total else 0.0

        pairs = sum(self.pairs.values())
        row: dict[str, Any] = {
            "half": half,
            "questions": self.questions,
            "given a block, plain": share(self.plain_blocks, self.questions),
        }
        for place in PLACES:
            row[f"given a block, paste {place}"] = share(self.blocks[place], self.pairs[place])
            row[f"blocks lost, paste {place}"] = self.lost[place]
        row["unrelated given a block, plain"] = share(self.unrelated_blocks, self.unrelated)
        row["unrelated given a block, lower case"] = share(
            self.lower_unrelated_blocks, self.unrelated
        )
        row["unrelated given a block, pasted"] = share(
            self.pasted_unrelated_blocks, self.pasted_unrelated
        )
        row["real prompts"] = self.prompts
        row["asking left something out"] = share(self.cut, self.prompts)
        row["recalled for whole"] = share(self.whole, self.prompts)
        row["CPU ms a prompt, plain"] = round(1000 * self.cpu["plain"] / max(1, self.questions), 1)
        row["CPU ms a prompt, pasted"] = round(1000 * self.cpu["pasted"] / max(1, pairs), 1)
        return row


@dataclass
class Report:
    tallies: dict[str, Tally] = field(default_factory=lambda: {h: Tally() for h in HALVES})
    details: list[dict[str, Any]] = field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        return [self.tallies[h].row(h) for h in HALVES]


def user_turns(path: Path, client: str | None) -> Iterator[str]:
    """``path``'s user turns without their clients' wrappers, as the prompt hook gets them."""
    with path.open("rb") as stream:
        transcript = read_transcript(Input(stream, str(path)), client)
        for message in transcript.messages:
            if message.role == Role.USER:
                yield strip_injected(message.content).text


def studied_sessions() -> Iterator[tuple[str, Path, str | None]]:
    """(split/file, path, client) of every session of the studied splits."""
    for split in STUDIED:
        for entry in realq.read_json(SESSIONS / split / "manifest.json").get("sessions", []):
            yield f"{split}/{entry['file']}", SESSIONS / split / entry["file"], entry["client"]


def load_pastes(path: Path = PASTES) -> list[Paste]:
    """The hand-marked pastes, each read from its session's user turn; a mark that no longer
    fits its turn (``starts``) is an error."""
    clients = {name: client for name, _, client in studied_sessions()}
    pastes: list[Paste] = []
    halves: dict[str, str] = {}
    read: dict[str, list[str]] = {}
    for mark in realq.read_json(path)["pastes"]:
        session = mark["session"]
        if session not in read:  # a session of several pastes is read once
            read[session] = list(user_turns(SESSIONS / session, clients[session]))
        lines = read[session][mark["turn"]].splitlines()
        first, last = mark["lines"]
        if not lines[first].strip().startswith(mark["starts"]):
            raise InputError(f"{path.name}: {session} turn {mark['turn']} no longer fits its mark")
        half = halves.setdefault(session, HALVES[len(halves) % 2])
        pastes.append(Paste(session, mark["kind"], "\n".join(lines[first : last + 1]), half))
    return pastes


def with_paste(text: str, paste: Paste, place: str) -> str:
    return f"{text}\n\n{paste.text}" if place == "after" else f"{paste.text}\n\n{text}"


def read_prompts(report: Report) -> None:
    """What ``asked`` keeps of each real prompt of ``MIN_LINES`` lines or more."""
    halves: dict[str, str] = {}
    for session, path, client in studied_sessions():
        for turn, prompt in enumerate(user_turns(path, client)):
            if sum(1 for line in prompt.splitlines() if line.strip()) < MIN_LINES:
                continue
            half = halves.setdefault(session, HALVES[len(halves) % 2])
            tally = report.tallies[half]
            questions = asked(prompt)
            tally.prompts += 1
            tally.cut += questions != [" ".join(prompt.split())]
            tally.whole += questions == [" ".join(prompt.split())]
            report.details.append(
                {"prompt": session, "turn": turn, "half": half, "asked": questions}
            )


def given(ctx: Context, text: str, scope: str | None, now: datetime | None) -> tuple[bool, float]:
    """Whether the per-prompt hook gives ``text`` a block, and the CPU seconds it took."""
    began = time.process_time()
    block = prompt_context(ctx, PromptRequest(text, scope=scope, now=now)).ids
    return bool(block), time.process_time() - began


def ask_questions(ctx: Context, report: Report, pastes: list[Paste]) -> None:
    sessions, questions = realq.load_questions(GOLD)
    project = {s["file"]: s["project"] for s in sessions}
    for question in questions:
        tally = report.tallies[question.half]
        now = datetime.fromisoformat(question.now) if question.now else None
        scope = project[question.session]
        plain, cpu = given(ctx, question.q, scope, now)
        tally.questions += 1
        tally.plain_blocks += plain
        tally.cpu["plain"] += cpu
        for paste in (p for p in pastes if p.half == question.half):
            for place in PLACES:
                block, cpu = given(ctx, with_paste(question.q, paste, place), scope, now)
                tally.pairs[place] += 1
                tally.blocks[place] += block
                tally.lost[place] += plain and not block
                tally.cpu["pasted"] += cpu
                if plain and not block:
                    lost = {"lost": question.id, "paste": paste.kind, "place": place}
                    report.details.append(lost)


def ask_unrelated(ctx: Context, report: Report, pastes: list[Paste]) -> None:
    """Every unrelated prompt, from the dev set's projects by turns, plain, in lower case and
    with each paste of its half."""
    scopes = sorted({s["project"] for s in realq.load_questions(GOLD)[0]})
    for number, (half, text) in enumerate(unrelated_prompts(UNRELATED)):
        tally = report.tallies[half]
        scope = scopes[number % len(scopes)]
        tally.unrelated += 1
        tally.unrelated_blocks += given(ctx, text, scope, None)[0]
        tally.lower_unrelated_blocks += given(ctx, text.lower(), scope, None)[0]
        for index, paste in enumerate(p for p in pastes if p.half == half):
            prompt = with_paste(text, paste, PLACES[(number + index) % 2])
            block = given(ctx, prompt, scope, None)[0]
            tally.pasted_unrelated += 1
            tally.pasted_unrelated_blocks += block
            if block:
                report.details.append({"unrelated": text, "paste": paste.kind})


def run(settings: Settings, embedder: Embedder | None = None, store: Path | None = None) -> Report:
    """Read the real prompts, then ask in the dev store: a copy of ``store`` (a memctl home
    that ``real-questions`` filled) or, by default, one filled here by its default path."""
    report = Report()
    read_prompts(report)
    pastes = load_pastes()
    with tempfile.TemporaryDirectory(prefix="memctl-prompts-") as home:
        values = {**settings.values, **realq.DEFAULT_PATH}
        fresh = dataclasses.replace(settings, home=Path(home), values=values)
        if store is not None:  # recall may write to it: a copy
            shutil.copytree(store, home, dirs_exist_ok=True)
        with Context(fresh, embedder) as ctx:
            if store is None:
                sessions, _ = realq.load_questions(GOLD)
                realq.take_in(ctx, GOLD, sessions, SESSIONS)
            ask_questions(ctx, report, pastes)
            ask_unrelated(ctx, report, pastes)
    return report
