"""Facts from what a session did, without an LLM: the project's commands that worked, the
errors that were fixed, and findings a passing run confirms.

Read from the digest's tool calls (see ``tools``), so only what a tool result
shows counts:

- a command that ran a project's tests, lint, formatting, type checks or build
  and succeeded (not one that came from fetched content, see ``digest``): "tests run
  with `pnpm test` (passed on 2026-03-13)" (one per purpose: the shortest such command
  a session ran on the whole project; a run on one file or on selected tests
  (``run_scope``) only when the session ran no other, and said so: "tests run, on one
  file only, with `npm test -- --run src/a.test.ts` (passed on …)"; a run that only
  printed something about its runner, ``pytest --markers``, or a step that moved files,
  ``rm -rf build``, is none);
- a command that failed and succeeded after a change: the digest's "`X`
  failed: … → fixed by …" line, as a case (a retry alone teaches nothing);
- what the closing answer and the reports say each file the session touched is for
  (``file_roles``);
- a sentence of the closing answer that states a cause or a fix ("the root
  cause was…", "原因是…", "原因は…", "원인은…"), when the session's last test or
  build run passed: the assistant's claim, confirmed by a tool result. An
  unverified claim is no fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.ingest.digest import SessionDigest
from memctl.ingest.facts import Fact
from memctl.ingest.file_roles import file_roles
from memctl.ingest.rule_sentences import BULLET, INTRODUCES, QUESTION, sentences
from memctl.ingest.run_scope import only_informs, run_scope
from memctl.ingest.tools import (
    CHECKS,
    Call,
    command_purpose,
    command_steps,
    program_words,
    shell_command,
    tool_kind,
)
from memctl.lazy_re import lazy
from memctl.model import Category
from memctl.retrieve.query import cjk_count

COMMAND_TAG = "command"  # the tag of a project command's fact
COMMAND_IMPORTANCE = 0.7
CASE_IMPORTANCE = 0.7
# a tool result is the evidence: more certain than a sentence matched by a pattern
EVIDENCE_CONFIDENCE = 0.8
MAX_COMMAND = 120
# a closing sentence that states a cause or a fix
FINDING = lazy(
    r"\b(?:root cause|the (?:cause|problem|issue|bug|fix) (?:was|is)|because|was caused by|"
    r"fixed (?:it |this )?by)\b|"
    r"原因(?:是|在于)|问题出在|根本原因|修复方法是|原因は|が原因|原因でした|원인은|원인이었|때문이었",
    re.I,
)
# A finding in a CJK language says as much in fewer characters (MemCC's CJK-aware bounds).
MIN_FINDING_CHARS = 30
MIN_CJK_FINDING_CHARS = 12
# programs that move files about: their arguments name what they touch ("rm -rf build dist")
FILE_CHORES = frozenset("rm rmdir mv cp mkdir touch chmod chown ln".split())


@dataclass(frozen=True)
class CheckRun:
    """A command that did what a purpose says, and succeeded."""

    command: str
    verb: str  # of its evidence: "passed", "succeeded"
    call: Call
    scope: str  # "" on the whole project, else the part it ran on (``run_scope``)

    def rank(self) -> tuple[bool, int]:
        """Lower is the better example of the project's command: the whole project first,
        then the shortest."""
        return bool(self.scope), len(self.command)

    def text(self, purpose: str) -> str:
        part = f", on {self.scope} only," if self.scope else ""
        day = f" ({self.verb} on {self.call.at[:10]})" if self.call.at else ""
        return f"{purpose}{part} with `{self.command}`{day}"


def _working_step(command: str) -> str:
    """The step of a command line that has a purpose, after the setting-up steps before it:
    ``source .venv/bin/activate && pytest && git commit -m x`` -> ``source
    .venv/bin/activate && pytest``; "" when no step has one. A step that moves files about
    has none: ``rm -rf build`` names what it removes, it builds nothing."""
    steps = command_steps(command)
    for n, step in enumerate(steps):
        words = program_words(step.split())
        if command_purpose(step) and words and words[0] not in FILE_CHORES:
            setup = [s for s in steps[:n] if shell_command(s).read_only]
            return " && ".join([*setup, step])
    return ""


def _fact(content: str, category: Category, tag: str, source: str, at: str) -> Fact:
    return Fact(
        content=content,
        category=category,
        tags=[tag],
        importance=COMMAND_IMPORTANCE if tag == COMMAND_TAG else CASE_IMPORTANCE,
        confidence=EVIDENCE_CONFIDENCE,
        source=source,
        created_at=at or None,
    )


def _commands(calls: list[Call]) -> dict[str, CheckRun]:
    """Per purpose: the run that best shows the project's command (``CheckRun.rank``)."""
    found: dict[str, CheckRun] = {}
    for call in calls:
        shell = tool_kind(call.name, call.detail) == "shell"
        if not shell or call.outcome != "ok" or call.fetched_from:  # not from fetched content
            continue
        command = shell_command(call.detail)
        if not command.key:
            continue
        core = _working_step(command.core)
        purpose = command_purpose(core) if core and len(core) <= MAX_COMMAND else None
        step = command_steps(core)[-1]
        if purpose is None or "…" in core or only_informs(step):
            continue
        run = CheckRun(core, purpose[1], call, run_scope(step))
        best = found.get(purpose[0])
        if best is None or run.rank() < best.rank():
            found[purpose[0]] = run
    return found


def _last_check_passed(calls: list[Call]) -> bool:
    """The session's last test, build or type-check run succeeded."""
    for call in reversed(calls):
        if tool_kind(call.name, call.detail) != "shell" or not call.outcome:
            continue
        purpose = command_purpose(shell_command(call.detail).core)
        if purpose is not None and purpose[0] in CHECKS:
            return call.outcome == "ok"
    return False


def action_facts(digest: SessionDigest, source: str) -> list[Fact]:
    """The facts a session's tool calls show (see the module's docstring)."""
    facts = [
        _fact(run.text(purpose), Category.PATTERNS, COMMAND_TAG, source, run.call.at)
        for purpose, run in _commands(digest.calls).items()
    ]
    facts += [_fact(line, Category.CASES, "case", source, call.at) for line, call in digest.fixes]
    if _last_check_passed(digest.calls):
        at = next((c.at for c in reversed(digest.calls) if c.at), "")
        for raw in sentences(digest.outcome):
            sentence = BULLET.sub("", raw).strip()
            shortest = MIN_CJK_FINDING_CHARS if cjk_count(sentence) else MIN_FINDING_CHARS
            if FINDING.search(sentence) and not (
                QUESTION.search(sentence) or INTRODUCES.search(sentence)
            ):
                if len(sentence) > shortest:
                    facts.append(_fact(sentence, Category.CASES, "finding", source, at))
    last = next((c.at for c in reversed(digest.calls) if c.at), "")
    return facts + file_roles([digest.outcome, *digest.reports], digest.calls, source, last)
