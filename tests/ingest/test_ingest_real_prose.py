"""The rules on real prose: sentences users typed in public Claude Code sessions (verbatim,
typos included; their sources are in benchmarks/sessions/SOURCES.md), and facts from what a
session did (commands that worked, errors and their fixes, confirmed findings)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from memctl.context import Context
from memctl.ingest.digest import build_digest
from memctl.ingest.extract_actions import action_facts
from memctl.ingest.extract_rules import extract_rules
from memctl.ingest.facts import Passage
from memctl.model import Category
from tests.ingest.test_ingest_digest import cc, parse, result, use
from tests.ingest.test_ingest_sessions import ingest, memories_of

KEPT = [
    # a value set, agreed: the shared codemie Codex session (019e1625), fresh4's getspecstory
    ("let's update the defailt context compart to 90 in env var", "decision"),
    ("Let's update the version everywhere to 1.25.6", "decision"),
    (
        "Let's change the package for the Gemini CLI provider from pkg/providers/gemini to "
        "pkg/providers/geminicli",
        "decision",
    ),
    # codemie-ai/codemie-code, session 196820da
    ("don't produce code, design solution first", "rule"),
    # ... and replies to the assistant's plan, pointers into the task at hand: kept as the
    # session's record, not as a rule (a walk's session start offered them as conventions)
    (
        "the main idea is fine, however sessionOrchecstrator must not be agent specific and "
        "don't refer to agent specific path/folder.",
        "instruction",
    ),
    (
        "great, prepare focused step by step plan with clear action items for tracking. "
        "important not to commit changes until final step.",
        "instruction",
    ),
    ("great, but keep in mind that new file will be at the same folder as old one", "instruction"),
    # jimmc414/cctrace, session 132b2f66
    (
        "i think for now we should continue to create all of the export files that the older "
        "version did for backwards compatibility in addition to adding the new export files",
        "decision",
    ),
    # YANGPuxu/claude-code-log, session a7da6a22: "those" points at what the assistant said
    (
        "We should support those (.tar, .tar.gz) as well, in a similar way to the .zip "
        "embedded archives.",
        "instruction",
    ),
    # what not to do and the value wanted, agreed (SpecStory histories of getspecstory, fresh4
    # and fresh3), and what the user will not take (codemie-code, fresh): nothing kept them
    (
        "Let's NOT run the CI if the only change in the commit is to *.md files or .specstory "
        ".claude or .cursor files.",
        "decision",
    ),
    (
        "since the default is FOR UTC, we want the flag to be `--local-time-zone` or `-ltz`",
        "decision",
    ),
    ("TODO is not acceptable, implementation must be full.", "rule"),
    # a rule written as one comma-joined Chinese sentence that ends in a question mark
    ("代码注释统一用中文，提交信息用英文，可以吗？", "convention"),
    # rules in other words and languages (issue 35: each was missed on held-out sessions)
    ("완전 최소한 기능만 구현해 주세요", "rule"),
    ("max 8 min demo", "rule"),
    ("扫描源码的时候只扫描 src/ 下的文件，最多 200 个", "rule"),
    ("외부 라이브러리는 절대 사용하지 마세요.", "rule"),
    ("デモは最大 8 分にしてください。", "rule"),
    ("外部ライブラリは使わないでください。", "rule"),
    ("認証は Supabase にしましょう。", "decision"),
    # rules stated inside a request
    ("Keep it minimal.", "rule"),
    ("Don't add any new dependencies.", "rule"),
    ("Only use the standard library.", "rule"),
    ("The public API must stay backwards compatible.", "rule"),
    # fresh4: copilot-polychrome-standardnode22; a label before prose is no command
    ("The nvm default is 22, but this shell did open with node 23", "project"),
    ("TODO: we always run tests with -v", "convention"),
]
DROPPED = [
    "Make the colors green and yellow",
    "let's update the tests to match",  # no value set
    "let's move on to step 2",
    "Let's not worry about it for now.",  # "let's not" is a decision only with what not to do
    "I like it, but not as part of the current plan.",  # fresh4's polychrome: liked what?
    "start phoenix in background",
    "create document in /specs folder",
    "it worked!",
    "show tools",
    "all of texts now sound the same",
    "can we do a full export first",
    "Is everything OK with this project? Do all the tests pass?",
    "python diverse_musical_ai.py",
    "continue implementation",
    "Work on bead spotter-4te. Run bd show spotter-4te to see the issue details and bd ready "
    "to find available subtasks. Start with the first ready task.",
    "how differnt is this export data than what the inital cctrace exported?",
    "고마워요! 잘 되네요.",
    "이거 왜 안 돼?",
    "ありがとうございます。",
    "Only one test failed.",
    "Just checking in on the build.",
    # a command line typed as a prompt line (the s29-walk's Claude Code session: "python3"
    # read as a version made it a project fact)
    "RUN: /work/wt/walk/.venv/bin/memctl recall --json -n 5 'where did I leave off?' | "
    "python3 /tmp/walk/top.py",
    "$ python3 -m pytest tests/test_export.py",
    # half a sentence, its rest a paste below it (fresh4: copilot-polychrome-standardnode22,
    # claude-getspecstory-codexhome)
    "Running under Node 22, having a bit of an error with standard-js:",
    "+The fix is simple - add the `AgentName` field to the `APIRequestMetadata` struct:",
]


def test_a_korean_paragraph_is_cut_into_its_sentences() -> None:
    """Korean puts ". " between sentences (no capital after it): the rule is its own fact."""
    facts = extract_rules(
        [Passage("빌드가 실패했습니다. 외부 라이브러리는 절대 사용하지 마세요.")], 10
    )
    assert [f.content for f in facts] == ["외부 라이브러리는 절대 사용하지 마세요."]


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        # fresh4's polychrome: the exclamation was kept with the version, as one fact
        (
            "ouch. we _should_ be running node 22. The nvm default is 22, but this shell did "
            "open with node 23",
            [
                "we _should_ be running node 22.",
                "The nvm default is 22, but this shell did open with node 23",
            ],
        ),
        # fresh7's entireskills: the request was kept with the rule, as one fact
        ("fix merge conflicts. don't add regressions", ["don't add regressions"]),
        # an abbreviation ends no sentence
        ("we always deploy with fly, e.g. fly deploy --remote-only", None),
        # fresh8's entireskills: an example of what the sentence before it says stays with it
        (
            "no just add entire name. so for example for session handoff it should print "
            "Entire Session Handoff: etc....",
            None,
        ),
    ],
)
def test_a_sentence_typed_in_lower_case_is_its_own_fact(said: str, kept: list[str] | None) -> None:
    assert [f.content for f in extract_rules([Passage(said)], 10)] == (kept or [said])


@pytest.mark.parametrize(("sentence", "kind"), KEPT)
def test_real_rules_plans_and_decisions_are_kept(sentence: str, kind: str) -> None:
    facts = extract_rules([Passage(sentence)], 10)
    assert [f.tags[0] for f in facts] == [kind]


def test_a_failure_and_its_cause_in_the_users_words_is_a_case() -> None:
    """s27-walk's Codex session: the rules kept nothing of it, and sessions do not sync, so
    the other machine never learnt why the deploy failed. A question about it is no fact."""
    said = (
        "The staging deploy failed this morning because REDIS_URL in deploy/staging.env "
        "pointed at port 6380; the cache listens on 6379, so we changed it to "
        "redis://cache.internal:6379 and the deploy went through."
    )
    (fact,) = extract_rules([Passage(said)], 10)
    assert fact.content == said and fact.category == Category.CASES
    assert extract_rules([Passage("Did the build fail because of the cache?")], 10) == []


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("Looks good, but don't add a new dependency for the parser.", "instruction"),
        ("Don't touch this file until step 3 is done.", "instruction"),
        ("Only change the functions in those tests.", "instruction"),
        ("OK, from now on always run the linter before a commit.", "decision"),
        ("Never edit these generated files by hand.", "rule"),
        ("We always name branches after the ticket.", "convention"),
        ("Great, but never push to main without a review.", "rule"),
        # keep working until the task is done (DRMacIver/claude-reliability, MIT: its port
        # session); one step held back until something holds is a rule
        (
            "Don't stop until all functions are ported, tests pass, and you have 100% coverage.",
            "instruction",
        ),
        # the same shape said otherwise: a second, narrower UNTIL_DONE replaced the first
        ("Don't give up until the whole suite passes.", "instruction"),
        ("Don't quit until the migration runs clean on staging.", "instruction"),
        ("Don't merge until CI passes.", "rule"),
        # a care any work takes, naming nothing (fresh7's "fix merge conflicts. don't add
        # regressions"); naming what to spare, a rule
        ("fix merge conflicts. don't add regressions", "instruction"),
        ("Don't introduce new bugs", "instruction"),
        ("do not commit anything", "instruction"),  # fresh8's entireskills, for now
        ("Don't add dependencies.", "rule"),
        # a fault in the work reported, a bug to fix (the written zh-order session): the rule
        # said in the same session stays one
        ("导出的 Excel 里日期格式也不对，应该是 YYYY-MM-DD，现在是美国格式。", "instruction"),
        ("以后数据库查询都要用 selectinload 预加载关联，不要在循环里查询。", "rule"),
        # "wrong" said to the assistant, not of a thing: what follows is the rule
        ("你错了，应该用 uv 管理依赖", "rule"),
    ],
)
def test_a_one_off_instruction_is_no_rule_unless_it_says_it_stands(
    sentence: str, kind: str
) -> None:
    """A reply to the assistant's proposal or a pointer into the work at hand is about the
    task; "always", "never", "from now on" make it a rule again."""
    (fact,) = extract_rules([Passage(sentence)], 10)
    assert fact.tags == [kind]
    assert (fact.category == Category.EVENTS) == (kind == "instruction")


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        # codemie-ai/codemie-code, session 196820da, a reply to the assistant's plan
        (
            "great, but keep in mind that new file will be at the same folder as old one",
            "New file will be at the same folder as old one",
        ),
        ("Thanks, so we use pnpm for everything here.", "We use pnpm for everything here."),
        ("Good code must be tested before merging.", "Good code must be tested before merging."),
    ],
)
def test_a_fact_is_kept_without_the_acknowledgement_it_opens_with(said: str, kept: str) -> None:
    """ "great, but" answers the assistant: it is no part of what the user asks to keep."""
    (fact,) = extract_rules([Passage(said)], 10)
    assert fact.content == kept


@pytest.mark.parametrize("sentence", DROPPED)
def test_real_requests_and_chatter_are_not_facts(sentence: str) -> None:
    assert extract_rules([Passage(sentence)], 10) == []


def worked_session() -> list[dict[str, Any]]:
    return [
        cc("user", "Make the checkout tests pass", 1),
        cc("assistant", use(2, "Bash", command="cd web && pnpm test 2>&1 | tail -20"), 2),
        cc("user", result(2, "Exit code 1\nFAIL retry.test.ts: expected 2, got 3", True), 3),
        cc("assistant", use(4, "Edit", file_path="/repo/web/src/retry.ts"), 4),
        cc("user", result(4, "updated"), 5),
        cc("assistant", use(6, "Bash", command="pnpm test"), 6),
        cc("user", result(6, "Tests: 40 passed"), 7),
        cc("assistant", use(8, "Bash", command='git init && echo "# test fixture"'), 8),
        cc("user", result(8, "Initialized"), 9),
        cc(
            "assistant",
            use(11, "Bash", command='ruff format src && git add -A && git commit -m "fmt; test"'),
            9,
        ),
        cc("user", result(11, "1 file reformatted\n[main 4c2e91a] fmt; test"), 9),
        cc(
            "assistant",
            [
                {
                    "type": "text",
                    "text": "All 40 tests pass. The root cause was the retry counter that "
                    "never reset between payments. Shall I open a PR?",
                }
            ],
            10,
        ),
    ]


def test_commands_that_worked_fixes_and_confirmed_findings_become_facts() -> None:
    messages, _ = parse(worked_session())
    facts = action_facts(build_digest(messages, 6, 500), "session:s1")
    found = {(f.category, f.content) for f in facts}
    assert (Category.PATTERNS, "tests run with `pnpm test` (passed on 2026-03-13)") in found
    cases = [c for cat, c in found if cat == Category.CASES]
    assert any(
        c.startswith("`cd web && pnpm test") and "→ fixed by editing retry.ts" in c for c in cases
    )
    assert any("root cause was the retry counter" in c for c in cases)  # a passing run confirms
    assert not any("git init" in c for _, c in found)  # an echo of "test" tests nothing
    # the step of a chained command line that formats, not the commit after it
    assert (
        Category.PATTERNS,
        "formatting runs with `ruff format src` (passed on 2026-03-13)",
    ) in found


def test_a_finding_that_ends_in_a_colon_is_half_a_sentence() -> None:
    """A held-out session's closing answer (cc1-cclog-12a546d1): its "because:" leads into
    the list that says why; the list's items, each a finding, are kept."""
    records = worked_session()
    records[-1]["message"]["content"][0]["text"] = (
        "Excellent! All browser tests are now passing. The refactoring broke some "
        "functionality because:\n\n1. **Sidechain messages** weren't getting the proper CSS "
        "class - Fixed by adding a check for the `isSidechain` field and appending the "
        '"sidechain" CSS class'
    )
    messages, _ = parse(records)
    found = [f.content for f in action_facts(build_digest(messages, 6, 500), "session:s1")]
    assert not any(c.endswith("because:") for c in found), found
    assert any(c.startswith("**Sidechain messages**") for c in found), found


def test_an_unconfirmed_claim_and_a_failing_session_give_no_finding() -> None:
    records = worked_session()[:6] + [worked_session()[-1]]  # tests never passed again
    messages, _ = parse(records)
    facts = action_facts(build_digest(messages, 6, 500), "session:s1")
    assert not any("root cause" in f.content for f in facts)
    assert not any(f.tags == ["command"] for f in facts)


def test_the_rules_path_stores_them_beside_the_digest(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    session = ingest(ctx, "\n".join(json.dumps(r) for r in worked_session()))
    made = {m.content: m for m in memories_of(ctx, session)}
    command = made["tests run with `pnpm test` (passed on 2026-03-13)"]
    assert command.category == Category.PATTERNS and command.created_at.startswith("2026-03-13")
    assert any(m.category == Category.CASES for m in made.values())
    assert any("digest" in m.tags for m in made.values())


@pytest.mark.parametrize(
    "closing",
    [
        "原因是在循环里逐条查询关联，改成 selectinload 以后导出只要 2 秒。",
        "原因はセッションの期限を秒で比較していたことです。",
        "원인은 세션 만료 시간을 초 단위로 비교한 것이었습니다.",
    ],
)
def test_a_confirmed_finding_in_another_language_is_a_fact(closing: str) -> None:
    """The cause a closing answer states in Chinese, Japanese or Korean, once a passing
    run confirms it, is a case like an English "the root cause was…"."""
    records = worked_session()[:-1] + [cc("assistant", [{"type": "text", "text": closing}], 10)]
    messages, _ = parse(records)
    facts = action_facts(build_digest(messages, 6, 500), "session:s1")
    assert closing in [f.content for f in facts if f.tags == ["finding"]]
