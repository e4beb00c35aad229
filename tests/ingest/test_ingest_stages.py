"""Each slow-path stage alone, on small inputs, and the pipeline end to end without an LLM."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.context import Context
from memctl.ingest import admission, extract_rules, noise, reconcile, reconcile_rules
from memctl.ingest.facts import Decision, Fact, Passage, Verdict
from memctl.ingest.pipeline import embed, select
from memctl.ingest.rules_cjk import CHINESE, JAPANESE, KOREAN
from memctl.ingest.rules_english import ENGLISH
from memctl.ingest.run import Run, start_run
from memctl.memories import operations as memories
from memctl.model import Category, Kind, Memory, Message, Role, State, Tier
from tests.ingesting import distil


def run_for(ctx: Context) -> Run:
    return start_run(ctx, "ingest", None, ctx.settings.project_scope, "s1")


def facts_of(run: Run, *contents: str, category: Category = Category.PREFERENCES) -> list[Fact]:
    facts = [Fact(content=c, category=category) for c in contents]
    embed(run, facts)
    return facts


def test_select_takes_the_oldest_batch_within_the_byte_budget(
    make_ctx: Callable[..., Context],
) -> None:
    run = run_for(make_ctx(select__messages=3, select__max_bytes=1000))
    messages = [Message(Role.USER, f"m{i}" + "x" * 400, seq=i) for i in range(1, 6)]
    assert [m.seq for m in select(run, messages)] == [1, 2]  # a third would pass 1000 bytes
    run = run_for(make_ctx(select__messages=3, select__max_bytes=2000))
    assert [m.seq for m in select(run, messages)] == [1, 2, 3]
    huge = [Message(Role.USER, "y" * 5000, seq=1), *messages]
    assert [m.seq for m in select(run, huge)] == [1]  # too big alone: a batch of its own


def test_there_are_enough_rule_patterns_and_the_docs_count_them() -> None:
    english, chinese = len(ENGLISH), len(CHINESE)
    korean, japanese = len(KOREAN), len(JAPANESE)
    assert english >= 25 and chinese >= 10 and korean >= 5 and japanese >= 5
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ingest.md").read_text(encoding="utf-8")
    counted = f"{english} English, {chinese} Chinese, {korean} Korean and {japanese} Japanese"
    assert f"{counted} patterns" in " ".join(doc.split())


@pytest.mark.parametrize(
    ("sentence", "category", "kind"),
    [
        ("I prefer tabs over spaces in Go code.", Category.PREFERENCES, "preference"),
        ("I don't like long meetings.", Category.PREFERENCES, "preference"),
        ("I usually review PRs in the morning.", Category.PATTERNS, "habit"),
        ("I want to learn Rust this year.", Category.PROFILE, "goal"),
        ("We decided to use SQLite instead of Postgres.", Category.PATTERNS, "decision"),
        ("We switched from Poetry to uv last week.", Category.PATTERNS, "decision"),
        ("My name is Alice and I work at Acme.", Category.PROFILE, "biography"),
        ("I'm a backend engineer.", Category.PROFILE, "biography"),
        ("Our API uses Redis for caching.", Category.ENTITIES, "project"),
        ("We deploy with `make release` from main.", Category.PATTERNS, "procedure"),
        ("The build cache lives in /var/cache/ci.", Category.ENTITIES, "project"),
        ("Never push to prod on Fridays.", Category.PATTERNS, "rule"),
        ("The fix was to pin numpy to 1.26.", Category.CASES, "case"),
        ("We just migrated the ledger to rusqlite.", Category.EVENTS, "event"),
        # the user's own setup (s28-reconcile: no memory before)
        ("My editor is vim.", Category.PREFERENCES, "preference"),
        ("I use fish as my shell.", Category.PREFERENCES, "preference"),
        ("我喜欢喝星巴克拿铁", Category.PREFERENCES, "preference"),
        ("我通常早上七点开始工作", Category.PATTERNS, "habit"),
        ("我叫李雷", Category.PROFILE, "biography"),
        ("我们决定用 SQLite", Category.PATTERNS, "decision"),
        ("这个项目使用 Redis 做缓存", Category.ENTITIES, "project"),
        ("问题的原因是时区设置", Category.CASES, "case"),
    ],
)
def test_rule_patterns_find_durable_facts(sentence: str, category: Category, kind: str) -> None:
    (fact,) = extract_rules.extract_rules([Passage(sentence, source="session:s#1")], 50)
    assert (fact.category, fact.tags, fact.content) == (category, [kind], sentence)
    assert fact.source == "session:s#1"


def test_a_tool_used_for_the_task_is_no_setup() -> None:
    said = (
        "I use this helper to parse the file. My question is why it fails. As a writer, "
        "my laptop is like half of my lifeline."
    )
    assert extract_rules.extract_rules([Passage(said, source="session:s#1")], 50) == []


def test_names_places_and_schedules_are_facts_and_a_call_of_code_is_not() -> None:
    said = (
        "Our staging database is called pelican-stage and the nightly restore job runs at "
        "03:30 UTC. The deploy key lives in 1Password. Backups run every 6 hours. "
        "The hook is called twice when the page loads. The data is stored on a server. "
        "I'm inviting friends for a run on Sundays."
    )
    facts = extract_rules.extract_rules([Passage(said, source="session:s#1")], 50)
    assert [(f.content, f.category) for f in facts] == [
        (
            "Our staging database is called pelican-stage and the nightly restore job runs at "
            "03:30 UTC.",
            Category.ENTITIES,
        ),
        ("The deploy key lives in 1Password.", Category.ENTITIES),
        ("Backups run every 6 hours.", Category.ENTITIES),
    ]


def test_a_fact_is_stored_without_the_instruction_to_remember_it() -> None:
    said = (
        "Remember that the staging bucket is s3://shop-stage. FYI: we deploy with `make ship`. "
        "Keep in mind that prod is read-only on Fridays. Remember to run `mix format` first."
    )
    facts = extract_rules.extract_rules([Passage(said, source="session:s#1")], 50)
    assert [(f.content, f.tags) for f in facts] == [
        ("The staging bucket is s3://shop-stage.", ["project"]),
        ("We deploy with `make ship`.", ["procedure"]),
        ("Prod is read-only on Fridays.", ["rule"]),
        ("Remember to run `mix format` first.", ["rule"]),  # without it, an order
    ]


def test_a_sentence_the_user_asks_to_keep_is_kept_when_no_pattern_knows_it() -> None:
    """A walk's sessions said "Remember: ..." and "Note for later: ..." and kept nothing
    of either; an ask before nothing of its own ("it", "this") still keeps nothing."""
    said = (
        "Remember: our release train leaves every second Thursday. "
        "Note for later: the staging postgres listens on port 5433. "
        "For the record: Jonas owns the billing cron. Remember: it is broken. "
        "FYI: the office plants look sad."
    )
    facts = extract_rules.extract_rules([Passage(said, source="session:s#1")], 50)
    assert [(f.content, f.category, f.tags) for f in facts] == [
        ("Our release train leaves every second Thursday.", Category.ENTITIES, ["project"]),
        ("The staging postgres listens on port 5433.", Category.ENTITIES, ["project"]),
        ("Jonas owns the billing cron.", Category.ENTITIES, ["project"]),
    ]


def test_rules_skip_chatter_assistant_turns_and_keep_identifiers_whole() -> None:
    passages = [
        Passage("Can you fix the failing test? Thanks!"),
        Passage("I prefer tabs.", role=Role.ASSISTANT),
        Passage("Hmm. Our config lives in config.yaml. See v1.2 notes. I prefer `ruff format`."),
        Passage("今天天气不错。我喜欢用 vim 写代码；我们用 make 部署。"),
    ]
    contents = [f.content for f in extract_rules.extract_rules(passages, 50)]
    assert contents == [
        "Our config lives in config.yaml.",
        "I prefer `ruff format`.",
        "我喜欢用 vim 写代码；",
        "我们用 make 部署。",
    ]
    assert len(extract_rules.extract_rules(passages * 10, 3)) == 3


@pytest.mark.parametrize(
    "text",
    [
        "Hello!",
        "thanks a lot",
        "Can you help me with this?",
        "Sorry, I can't help with that.",
        "ok",
        "你好",
        "谢谢你",
        "抱歉，我无法回答",
        "好的",
        "Please remember that.",  # a walk's session: its fact was the sentence before
        "remember this for later",
        "Note that, please!",
        "请记住这一点。",
    ],
)
def test_noise_patterns(text: str) -> None:
    assert noise.noise_kind(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Remember that deploys need the VPN.",
        "Please note the staging port is 5433.",
        "Keep in mind: we squash-merge.",
        "请记住我们用 pnpm。",
    ],
)
def test_a_request_to_remember_with_its_fact_is_not_noise(text: str) -> None:
    assert noise.noise_kind(text) is None


def test_noise_drops_patterns_prototypes_and_learned_noise(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    memory = memories.remember(ctx, "the weather in the office is nice today")
    memories.forget(ctx, memory.id[:8], noise=True)
    assert memories.get(ctx, memory.id)[0].state == State.ARCHIVED
    run = run_for(ctx)
    facts = facts_of(
        run,
        "Thanks!",
        "please continue",  # a prototype, word for word
        "The weather in the office is nice today",  # learned
        "I prefer tabs over spaces",
    )
    kept = noise.drop_noise(run, facts)
    assert [f.content for f in kept] == ["I prefer tabs over spaces"]
    reasons = [d["reason"] for d in run.trace[-1].dropped]
    assert reasons[0] == "noise pattern: thanks"
    assert reasons[1].startswith("noise prototype") and reasons[2].startswith("learned noise")


def test_learned_noise_keeps_only_the_newest(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx(noise__learned_max=2)
    for text in ("first noise", "second noise", "third noise"):
        memories.forget(ctx, memories.remember(ctx, text).id, noise=True)
    assert [r["content"] for r in ctx.db.rows("SELECT content FROM noise_vectors")] == [
        "second noise",
        "third noise",
    ]


def test_admission_scores_with_the_documented_weights(make_ctx: Callable[..., Context]) -> None:
    run = run_for(make_ctx())
    profile, event, repeat = facts_of(run, "Alice is a backend engineer", "We shipped v2", "x")
    profile.category, event.category = Category.PROFILE, Category.EVENTS
    profile.importance, profile.confidence = 0.5, 0.7
    event.importance, event.confidence = 0.5, 0.7
    repeat.content = event.content  # a word-for-word repeat within the batch
    admitted = admission.admit(run, [profile, event, repeat])
    assert admitted == [profile, event]
    assert profile.score == pytest.approx(0.05 + 0.07 + 0.1 * 1 + 0.1 * 1 + 0.6 * 0.95)
    assert profile.tier == Tier.WORKING
    novelty = 1 - float(event.vector @ profile.vector)
    assert event.score == pytest.approx(0.05 + 0.07 + 0.1 * novelty + 0.1 + 0.6 * 0.45)
    assert event.tier == Tier.PERIPHERAL  # between reject and admit
    strict = run_for(make_ctx(admission__prior_events=0.1))
    rejected = facts_of(strict, "We shipped v3", category=Category.EVENTS)
    assert admission.admit(strict, rejected) == []
    assert strict.trace[-1].dropped[0]["reason"].startswith("score 0.")


def test_recency_halves_every_half_life() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 1, 31, tzinfo=UTC)
    assert admission.recency("2026-01-01T00:00:00.000Z", 30.0, now) == pytest.approx(0.5)
    assert admission.recency(None, 30.0, now) == 1.0


def memory(
    text: str, category: Category = Category.PREFERENCES, kind: Kind = Kind.SEMANTIC
) -> Memory:
    return Memory(content=text, category=category, kind=kind)


@pytest.mark.parametrize(
    ("fact", "category", "stored", "similarity", "verdict"),
    [
        ("I prefer tabs", Category.PREFERENCES, None, 0.0, Verdict.CREATE),
        ("I prefer tabs", Category.PREFERENCES, "something else", 0.2, Verdict.CREATE),
        ("I prefer tabs.", Category.PREFERENCES, "i prefer tabs", 0.8, Verdict.SKIP),
        ("I prefer tabs in Go", Category.PREFERENCES, "I prefer tabs", 0.96, Verdict.SKIP),
        ("We shipped v2 in May", Category.EVENTS, "We shipped v2", 0.9, Verdict.CREATE),
        ("Alice lives in Porto", Category.PROFILE, "Alice is an engineer", 0.75, Verdict.MERGE),
        ("I don't like tabs", Category.PREFERENCES, "I like tabs", 0.8, Verdict.CONTRADICT),
        ("My editor is helix", Category.PREFERENCES, "My editor is vim", 0.6, Verdict.CONTRADICT),
        (
            "We deploy with fly deploy from the release branch",
            Category.PATTERNS,
            "We deploy with make release from main",
            0.6,
            Verdict.CONTRADICT,
        ),
        ("We now test using tox", Category.PATTERNS, "We test with nox", 0.6, Verdict.CONTRADICT),
        ("We also deploy with Helm", Category.PATTERNS, "We deploy with make", 0.6, Verdict.CREATE),
        ("We deploy with Helm too", Category.PATTERNS, "We deploy with make", 0.6, Verdict.CREATE),
        ("We deploy to staging first", Category.PATTERNS, "We deploy to prod", 0.6, Verdict.CREATE),
        ("I prefer tabs in Go code", Category.PREFERENCES, "I prefer tabs", 0.8, Verdict.MERGE),
        ("Tabs are my preference", Category.PREFERENCES, "I prefer tabs", 0.9, Verdict.SUPPORT),
        (
            "Tabs only when writing Go",
            Category.PREFERENCES,
            "I prefer tabs",
            0.55,
            Verdict.CONTEXTUALIZE,
        ),
        ("Spaces in YAML files", Category.PREFERENCES, "I prefer tabs", 0.55, Verdict.CREATE),
        # a changed fact replaces the old one (s28-reconcile: each was CREATEd before)
        (
            "Change of plan: we deploy the shop with `fly deploy` now, not make release.",
            Category.ENTITIES,
            "We deploy the shop with `make release` from main.",
            0.69,
            Verdict.SUPERSEDE,
        ),
        (
            "I prefer spaces for indentation in every project.",
            Category.PREFERENCES,
            "I prefer tabs for indentation in every project.",
            0.78,
            Verdict.CONTRADICT,
        ),
        (
            "I prefer spaces over tabs",
            Category.PREFERENCES,
            "I prefer tabs",
            0.75,
            Verdict.CONTRADICT,
        ),
        (
            "The shop's database is PostgreSQL 16 since the upgrade.",
            Category.ENTITIES,
            "The shop's database is PostgreSQL 15.",
            0.93,
            Verdict.CONTRADICT,
        ),
        (
            "We switched from nox to tox",
            Category.PATTERNS,
            "We test with nox",
            0.6,
            Verdict.SUPERSEDE,
        ),
        ("I live in Porto", Category.PROFILE, "I live in Lisbon", 0.8, Verdict.CONTRADICT),
        # ... and two facts of one subject both stay
        ("We deploy on Fridays", Category.ENTITIES, "We deploy with fly", 0.6, Verdict.CREATE),
        ("I prefer dark mode", Category.PREFERENCES, "I prefer tabs", 0.55, Verdict.CREATE),
        (
            "I prefer tabs for indentation",
            Category.PREFERENCES,
            "I prefer pytest for tests",
            0.6,
            Verdict.CREATE,
        ),
        (
            "We deploy the docs with mkdocs",
            Category.ENTITIES,
            "We deploy the shop with fly",
            0.6,
            Verdict.CREATE,
        ),
        (
            "We deploy with make release from main",
            Category.ENTITIES,
            "We deploy with make release",
            0.8,
            Verdict.MERGE,
        ),
        # a "not" in a command is its argument, not a denial: the held-out store's two test
        # runs were a contradiction before s29-contra
        (
            'tests run with `uv run pytest -m "not (tui or browser)" -v` (passed on 2025-07-19)',
            Category.PATTERNS,
            "tests run, with `uv run pytest -m browser -v` (passed on 2025-07-20)",
            0.75,
            Verdict.CREATE,
        ),
        (
            "We deploy with `make ship`",
            Category.PATTERNS,
            "We don't deploy with `make ship`",
            0.75,
            Verdict.CONTRADICT,
        ),
    ],
)
def test_rule_based_reconcile(
    make_ctx: Callable[..., Context],
    fact: str,
    category: Category,
    stored: str | None,
    similarity: float,
    verdict: Verdict,
) -> None:
    target = None
    if stored is not None:
        target = memory(stored, Category.PROFILE if category == Category.PROFILE else category)
    decision = reconcile_rules.decide(
        Fact(content=fact, category=category), target, similarity, make_ctx().settings
    )
    assert decision.verdict == verdict, decision.reason
    assert decision.target_id == (target.id if target and verdict != Verdict.CREATE else None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The user's editor is vim", ("editor", "vim")),
        ("The shop's database is PostgreSQL 15.", ("shop database", "postgresql 15")),
        ("We test it with pytest", ("test with", "pytest")),
        ("We deploy the shop with fly", ("deploy shop with", "fly")),
        ("I prefer spaces over tabs, because diffs", ("prefer", "spaces")),
        ("I prefer tabs for indentation in Go", ("prefer for indentation in go", "tabs")),
        ("Here's the config: a", None),
        ("We prefer :)", None),
    ],
)
def test_the_slot_a_text_sets(text: str, expected: tuple[str, str] | None) -> None:
    assert reconcile_rules.slot(text) == expected


@pytest.mark.parametrize(
    ("text", "denies"),
    [
        ('Run the fast suite: `pytest -m "not slow"`', False),
        ('Run the fast suite:\n```sh\npytest -m "not slow"\n```\nIt takes a minute.', False),
        ("Run the fast suite:\n~~~\npytest -m 'not slow'", False),  # a fence left open
        ('Run the fast suite:\n$ pytest -m "not slow"\nIt takes a minute.', False),
        ("We never run `pytest -m slow` in CI", True),
        ("`make ship` isn't how we deploy", True),
        ("Costs $ 5, not 10", True),
        # a command written bare: its option's quoted value is the command's (s30-distill)
        ('Run the fast suite with pytest -m "not slow" before pushing.', False),
        ("uv run pytest -k 'not flaky and not e2e' -q", False),
        ('npx jest --testNamePattern="not the login flow"', False),
        ('We do not run pytest -m "slow" in CI', True),
        ('He said "not now" and left', True),
        ("a well-known 'not invented here' habit", True),
    ],
)
def test_code_never_denies(text: str, denies: bool) -> None:
    assert reconcile_rules.negated(text) is denies


def test_the_preference_slot_guard() -> None:
    assert reconcile_rules.slot_guard("I like Starbucks americano", "Alice likes Starbucks latte")
    assert reconcile_rules.slot_guard("我喜欢星巴克美式", "我喜欢星巴克拿铁")
    assert not reconcile_rules.slot_guard("I like Starbucks latte", "I like Starbucks latte")
    assert not reconcile_rules.slot_guard("I like Peet's latte", "I like Starbucks latte")
    assert not reconcile_rules.slot_guard("I like tea", "I like coffee")


@pytest.mark.parametrize(
    ("verdict", "category", "target_kind", "target_category", "expected"),
    [
        (
            Verdict.CONTRADICT,
            Category.PREFERENCES,
            Kind.SEMANTIC,
            Category.PREFERENCES,
            Verdict.SUPERSEDE,
        ),
        (
            Verdict.CONTRADICT,
            Category.PATTERNS,
            Kind.SEMANTIC,
            Category.PATTERNS,
            Verdict.CONTRADICT,
        ),
        (Verdict.MERGE, Category.EVENTS, Kind.EPISODIC, Category.EVENTS, Verdict.CREATE),
        # a record is not rewritten by a later fact (s28-reconcile)
        (Verdict.SUPERSEDE, Category.ENTITIES, Kind.EPISODIC, Category.EVENTS, Verdict.CREATE),
        (Verdict.SUPPORT, Category.CASES, Kind.EPISODIC, Category.CASES, Verdict.CREATE),
        (Verdict.MERGE, Category.PREFERENCES, Kind.PINNED, Category.PREFERENCES, Verdict.CREATE),
        (
            Verdict.CONTRADICT,
            Category.PREFERENCES,
            Kind.PINNED,
            Category.PREFERENCES,
            Verdict.CREATE,
        ),
        (Verdict.CREATE, Category.PROFILE, Kind.SEMANTIC, Category.PROFILE, Verdict.MERGE),
        (Verdict.CREATE, Category.PROFILE, Kind.PINNED, Category.PROFILE, Verdict.CREATE),
        (Verdict.SKIP, Category.PROFILE, Kind.SEMANTIC, Category.PROFILE, Verdict.SKIP),
    ],
)
def test_rules_every_decision_keeps(
    verdict: Verdict,
    category: Category,
    target_kind: Kind,
    target_category: Category,
    expected: Verdict,
) -> None:
    target = memory("stored", target_category, target_kind)
    decision = Decision(
        verdict, Fact("new", category), None if verdict == Verdict.CREATE else target.id
    )
    decided = reconcile.enforce(decision, (target, 0.9), {target.id: target}, 0.7)
    assert decided.verdict == expected


def test_a_profile_fact_with_another_value_supersedes_rather_than_merges() -> None:
    """Profile facts merge when matched, but "I live in Porto" after "I live in Lisbon"
    would keep both as one."""
    target = memory("I live in Lisbon", Category.PROFILE)
    fact = Fact("I live in Porto", Category.PROFILE)
    decided = reconcile.enforce(
        Decision(Verdict.CONTRADICT, fact, target.id), (target, 0.8), {target.id: target}, 0.7
    )
    assert (decided.verdict, decided.target_id) == (Verdict.SUPERSEDE, target.id)


@pytest.mark.parametrize("verdict", [Verdict.MERGE, Verdict.SUPERSEDE, Verdict.CONTRADICT])
def test_a_fact_never_replaces_a_sessions_digest(verdict: Verdict) -> None:
    """A host fact such as "/init did NOT create CLAUDE.md" stands beside the digest of its
    session: superseding it would lose the rest of what the session did."""
    digest = memory("Session of 2026-05-02 (claude-code) Asked: /init", Category.EVENTS)
    digest.tags = ["digest", "session"]
    fact = Fact("/init did NOT create CLAUDE.md: the Write was refused", Category.PATTERNS)
    decided = reconcile.enforce(
        Decision(verdict, fact, digest.id), (digest, 0.9), {digest.id: digest}, 0.7
    )
    assert decided.verdict == Verdict.CREATE and decided.target_id is None


def test_the_pipeline_without_an_llm_creates_then_skips(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    text = (
        "user: Hi! I prefer tabs over spaces. My name is Alice.\n"
        "assistant: Noted.\nuser: We deploy with make release. Thanks!\n"
    )
    first = distil(ctx, text)
    assert first.record.counts == {"create": 3}
    assert first.record.llm == "rules" and first.record.tokens == 0
    made = memories.list_memories(ctx, memories.make_filter(ctx))
    assert sorted(m.content for m in made) == [
        "I prefer tabs over spaces.",
        "My name is Alice.",
        "We deploy with make release.",
    ]
    assert all(m.session_id == "s1" and m.source.startswith("session:s1#") for m in made)
    second = distil(ctx, "user: I prefer tabs over spaces.\n", session_id="s2")
    assert second.record.counts == {"skip": 1}
    again = distil(ctx, text)  # nothing new in s1: nothing to do
    assert again.record.messages == 0 and again.record.counts == {}


def test_reembed_remakes_the_learned_noise_vectors(make_ctx: Callable[..., Context]) -> None:
    from memctl.maintain.reembed import reembed
    from memctl.store.noise import noise_vectors
    from tests.fakes import HashEmbedder

    ctx = make_ctx()
    memories.forget(ctx, memories.remember(ctx, "small talk about the weather").id, noise=True)
    assert len(noise_vectors(ctx.db, "test:hash")) == 1
    other = Context(ctx.settings, embedder=HashEmbedder(dim=32, name="test:other"))
    try:
        reembed(other)
        assert noise_vectors(other.db, "test:hash") == []
        (vector,) = noise_vectors(other.db, "test:other")
        assert len(vector) == 32 * 4
    finally:
        other.close()
