"""Tool results outrank claims: what a session's tool calls show against what is said.

A file whose every write was refused at the permission prompt or failed was not made,
whatever the closing answer says ("I've created a basic CLAUDE.md"); a command still
failing at the end means the tests or the build do not pass, whatever a clause says ("all
tests pass"). ``Evidence`` is what the calls show; ``refuted`` names what a text claims
against it, each with what really happened. The digest leaves such sentences out and
says "Not done: …" (``digest``); the fact stage ``refuted.drop_refuted`` keeps a claim the
calls deny from becoming a memory, whoever wrote it (the rules, an LLM, the host model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memctl.ingest.rule_sentences import sentences
from memctl.ingest.tools import CHECKS, Call, command_purpose, tool_kind
from memctl.lazy_re import lazy

# a sentence saying a file was made or changed, and one saying the tests pass
CLAIM = lazy(
    r"\b(?:I(?:'ve| have)?|we(?:'ve| have)?)\s+(?:\w+\s+){0,2}?(?:created|written|wrote|added|"
    r"updated|generated|saved|made|modified|edited|set up)\b|\b(?:is|was|has been) "
    r"(?:now )?(?:created|written|added|updated|generated|saved|in place)\b|"
    r"\b(?:created|wrote|added|generated|updated|edited)\b|"
    r"作成しました|生成しました|생성했|만들었|추가했|创建了|已创建|已生成|添加了",
    re.I,
)
PASSING = lazy(
    r"\b(?:all (?:the )?)?(?:tests?|build|suite|checks?|ci)\b[^.;]{0,40}?\b(?:pass(?:es|ed|ing)?|"
    r"succeed(?:s|ed)?|(?:is |are |now )?green|work(?:s|ing)? (?:now|again))\b|"
    r"テスト[^。]{0,20}(?:成功|通過|パス)|테스트[^.]{0,20}(?:통과|성공)|测试[^。]{0,20}(?:通过|成功)",
    re.I,
)
# a sentence saying it was not done is no claim that it was
NOT_A_CLAIM = lazy(
    r"\b(?:not|never|no longer|couldn't|could not|can't|cannot|unable|denied|refused|"
    r"fail(?:s|ed|ing)?|without)\b|n't\b|できません|できなかった|못|않|没有|未能|失败",
    re.I,
)
CLAUSE_END = lazy(r";\s+")
STILL_FAILING = "still failing"
BACKTICKED = lazy(r"`([^`]+)`")


@dataclass(frozen=True)
class Evidence:
    """What a session's tool calls show: {file name: how its last write ended} for each
    file never written, and the commands still failing at the end."""

    denied: dict[str, str] = field(default_factory=dict)
    failing: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.denied or self.failing)


def evidence(calls: list[Call], left_open: list[str]) -> Evidence:
    """The evidence of ``calls`` (with their outcomes) and the digest's open items."""
    last: dict[str, Call] = {}
    for call in calls:
        if tool_kind(call.name, call.detail) == "file":
            for _, path in call.files():
                last[path.rsplit("/", 1)[-1]] = call
    denied = {
        name: f"{call.name} {name} {'refused' if call.refused else 'failed'}"
        for name, call in last.items()
        if not call.succeeded and name
    }
    failing = [item for item in left_open if STILL_FAILING in item and _a_check(item)]
    return Evidence(denied, tuple(failing))


def _a_check(item: str) -> bool:
    """An open item's command (in backticks) runs the tests, the build or a type check: only
    such a failure denies "the tests pass" (a failing ``source x.sh`` does not)."""
    command = BACKTICKED.search(item)
    found = command_purpose(command.group(1)) if command else None
    return found is not None and found[0] in CHECKS


def _named(sentence: str, found: Evidence) -> list[str]:
    """The files never written that ``sentence`` claims were made or changed."""
    if NOT_A_CLAIM.search(sentence) or not CLAIM.search(sentence):
        return []
    return [name for name in found.denied if name in sentence]


def _passing(clauses: list[str], found: Evidence) -> list[str]:
    """The clauses saying the tests or the build pass, while a command still fails."""
    if not found.failing:
        return []
    return [c for c in clauses if PASSING.search(c) and not NOT_A_CLAIM.search(c)]


def without_refuted(text: str, found: Evidence) -> tuple[str, list[str]]:
    """``text`` without its refuted claims (a sentence naming a file never written; a clause
    saying the tests pass while they fail), and what really happened, for each."""
    kept, happened = [], []
    for sentence in sentences(text):
        named = _named(sentence, found)
        happened += [f"{found.denied[name]} (a claim said otherwise)" for name in named]
        if named:
            continue
        clauses = CLAUSE_END.split(sentence)
        passing = _passing(clauses, found)
        if passing:
            happened.append(f"{found.failing[0]} (a claim said it passes)")
        kept.append("; ".join(c for c in clauses if c not in passing))
    return " ".join(k for k in kept if k), happened


def refuted(text: str, found: Evidence) -> list[str]:
    """What really happened, for each claim of ``text`` the evidence denies."""
    return without_refuted(text, found)[1] if found else []
