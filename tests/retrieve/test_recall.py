"""Recall end to end with the real model, on a small realistic store: ~50 memories about
one project (a web shop), spread over a year, with relations and a superseded fact.

Each query needs a different part of the pipeline: words (BM25), meaning
(vectors), time, or the graph.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memctl.api.memory import RememberRequest
from memctl.api.memory import remember as api_remember
from memctl.api.recall import RecallRequest
from memctl.api.recall import recall as api_recall
from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.errors import UsageError
from memctl.memories import operations as memories
from memctl.model import Category, Kind, Memory, Relation, RelationType, State, Tier, format_time
from memctl.retrieve import pipeline
from memctl.retrieve.explain import why_not
from memctl.retrieve.pipeline import recall
from memctl.store.memories import insert_memory, update_memory
from memctl.store.relations import add_relation
from memctl.store.touches import apply_spooled

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)
PROJECT = "github.com/acme/shop"

# key (how tests name it), days before NOW it was created, category, content
FACTS = [
    tuple(json.loads(line).values())
    for line in (Path(__file__).resolve().parents[1] / "fixtures" / "shop_memories.jsonl").open()
]


def _memory(key: str, days: int, category: str, content: str) -> Memory:
    return Memory(
        content=content,
        kind=Kind.SEMANTIC,
        category=Category(category),
        tier=Tier.WORKING,
        importance=0.6,
        created_at=format_time(NOW - timedelta(days=days)),
        scope="global" if category == "preferences" else PROJECT,
        source=f"fixture:{key}",
    )


@pytest.fixture(scope="module")
def shop(
    tmp_path_factory: pytest.TempPathFactory, local_embedder
) -> Iterator[tuple[Context, dict[str, str]]]:  # type: ignore[no-untyped-def]
    """The store, built once: the project checkout's git remote names its scope."""
    root = tmp_path_factory.mktemp("shop")
    (root / "repo" / ".git").mkdir(parents=True)
    (root / "repo" / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = git@github.com:acme/shop.git\n'
    )
    settings = load_settings(home=root / "home", cwd=root / "repo", environ={})  # no MEMCTL_*
    ctx = Context(settings, local_embedder)
    assert ctx.settings.project_scope == PROJECT
    made = [_memory(*fact) for fact in FACTS]
    vectors = ctx.vectors([m.content for m in made])
    ids = {key: m.id for (key, *_), m in zip(FACTS, made, strict=True)}
    with ctx.db.atomic():
        for memory, vector in zip(made, vectors, strict=True):
            insert_memory(ctx.db, memory, vector)
        add_relation(ctx.db, Relation(ids["release"], ids["signing"], RelationType.DEPENDS_ON, 0.9))
        add_relation(ctx.db, Relation(ids["ci_new"], ids["ci_old"], RelationType.SUPERSEDES))
        update_memory(  # as ingest's reconciliation supersedes a fact
            ctx.db,
            ids["ci_old"],
            {
                "state": State.SUPERSEDED,
                "superseded_by": ids["ci_new"],
                "invalidated_at": format_time(NOW - timedelta(days=40)),
            },
        )
    yield ctx, ids
    ctx.close()


def top(ctx: Context, query: str, limit: int = 5, **options: object) -> list[str]:
    """The clear matches' ids, best first."""
    found = recall(ctx, query, limit, None, now=NOW, touch=False, **options)  # type: ignore[arg-type]
    return [r.memory.id for r in found.clear]


def test_an_exact_error_code_is_found_by_words(shop: tuple[Context, dict[str, str]]) -> None:
    ctx, ids = shop
    assert top(ctx, "ERR_SIGNATURE")[0] == ids["webhook"]
    assert top(ctx, "parseOrderId")[0] == ids["parse"]


def test_a_paraphrase_without_shared_words_is_found_by_meaning(
    shop: tuple[Context, dict[str, str]],
) -> None:
    ctx, ids = shop
    # MiniLM gives such paraphrases a cosine of 0.3-0.4, no more than it gives noise on the
    # same topic: the default mode labels nothing clear rather than guess; deep mode lowers
    # the relevance floor and finds them clear.
    question = "when are snapshots of prod data taken?"
    assert top(ctx, question) == []
    # ... yet answers with it among the first two (beside the data-retention rule, which
    # shares the word "data"), labelled possible, for a caller that can judge
    offered = recall(ctx, question, 5, now=NOW, touch=False).results
    assert ids["backup"] in [r.memory.id for r in offered[:2]]
    assert all(r.match == "possible" for r in offered)
    # ... and never pastes it into a context block nobody can judge
    block = api_recall(ctx, RecallRequest(question, context=True, touch=False)).context
    assert block is not None and "dumped every night" not in block
    result = recall(ctx, question, 5, now=NOW, touch=False, mode="deep")
    backup = next(r for r in result.results if r.memory.id == ids["backup"])
    # closest in meaning; BM25 reaches it only through the vocabulary (prod -> production)
    assert backup.ranks["vector"] == 1 and result.results.index(backup) < 3
    paged = top(ctx, "who gets woken up when the payment page breaks?", mode="deep")
    assert ids["alerts"] in paged[:3]


def test_a_time_in_the_query_prefers_memories_from_then(
    shop: tuple[Context, dict[str, str]],
) -> None:
    ctx, ids = shop
    found = top(ctx, "what did we change in the deploy pipeline last week?")
    assert found[0] == ids["pipeline_recent"]
    assert top(ctx, "deploy pipeline changes about ten months ago")[0] == ids["pipeline_older"]


def test_the_graph_brings_what_a_result_depends_on(shop: tuple[Context, dict[str, str]]) -> None:
    ctx, ids = shop
    result = recall(ctx, "how do we cut a release?", 20, now=NOW, touch=False)
    found = [r.memory.id for r in result.results]
    assert found[0] == ids["release"] and ids["signing"] in found
    signing = next(r for r in result.results if r.memory.id == ids["signing"])
    assert signing.via[:3] == (ids["release"], "depends_on", ids["signing"])
    # related to the answer, not about the question: a possible match, never injected alone
    assert not signing.clear and signing.match_reason == "reached"
    working = recall(ctx, "how do we cut a release?", 5, now=NOW, touch=False, mode="working")
    assert ids["signing"] not in [r.memory.id for r in working.clear]


def test_superseded_facts_only_with_history_and_as_they_were(
    shop: tuple[Context, dict[str, str]],
) -> None:
    ctx, ids = shop
    current = top(ctx, "where does continuous integration run?")
    assert current[0] == ids["ci_new"] and ids["ci_old"] not in current
    # with --history it follows what replaced it, a possible match naming it (s29-stale)
    asked = recall(
        ctx, "where does continuous integration run?", 10, now=NOW, touch=False, history=True
    )
    with_history = [r.memory.id for r in asked.results]
    assert with_history.index(ids["ci_new"]) < with_history.index(ids["ci_old"])
    old = asked.results[with_history.index(ids["ci_old"])]
    assert (old.clear, old.match_reason, old.replaced_by) == (False, "superseded", ids["ci_new"])
    back_then = recall(
        ctx, "where does continuous integration run?", 5, now=NOW - timedelta(days=100), touch=False
    )
    assert back_then.results[0].memory.id == ids["ci_old"]
    assert ids["ci_new"] not in [r.memory.id for r in back_then.results]


def test_why_not_names_the_stage(shop: tuple[Context, dict[str, str]]) -> None:
    ctx, ids = shop
    result = recall(ctx, "where does continuous integration run?", 5, now=NOW, touch=False)
    report = why_not(ctx, result, ids["ci_old"][:8])
    assert (report.recalled, report.stage) == (False, "status")
    assert "superseded" in report.reason and "--history" in report.reason
    # a leg found it and the gate kept it aside: ranked among the possible matches, below
    # the rows shown, not dropped by the gate
    plants = why_not(ctx, result, ids["plants"])
    assert (plants.recalled, plants.stage) == (False, "limit")
    assert (
        plants.reason.startswith("found by vector #") and "ranked below the 5 rows" in plants.reason
    )
    clear_only = recall(
        ctx, "where does continuous integration run?", 5, now=NOW, touch=False, possible=0
    )
    assert why_not(ctx, clear_only, ids["plants"]).stage == "fuse"  # no possible row offered
    assert why_not(ctx, result, ids["ci_new"]).recalled


def test_limit_is_respected_and_scores_descend(shop: tuple[Context, dict[str, str]]) -> None:
    ctx, _ = shop
    found = recall(ctx, "checkout problems and incidents", 3, now=NOW, touch=False, mode="deep")
    results = found.clear
    assert len(results) == 3
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    # the limit counts every row: three clear matches leave no room for a possible one
    assert len(found.results) == 3


def test_the_limit_counts_clear_and_possible_rows_together(
    shop: tuple[Context, dict[str, str]],
) -> None:
    ctx, _ = shop
    wide = recall(ctx, "checkout problems and incidents", 10, now=NOW, touch=False)
    clear, possible = wide.clear, [r for r in wide.results if r.match == "possible"]
    assert clear and possible  # the store holds both for this query
    for limit in (len(clear) + 1, len(clear) + 2):
        found = recall(ctx, "checkout problems and incidents", limit, now=NOW, touch=False)
        assert len(found.results) == limit
        # clear ones first, then the possible ones in the rows they leave
        assert [r.match for r in found.results] == ["clear"] * len(clear) + ["possible"] * (
            limit - len(clear)
        )
    capped = recall(ctx, "checkout problems and incidents", 10, now=NOW, touch=False, possible=1)
    assert [r.match for r in capped.results] == ["clear"] * len(clear) + ["possible"]


BASICS = [
    "The production database is backed up every night at 2am",
    "Sam prefers squash merges for small pull requests",
    "The frontend uses pnpm as its package manager",
    "Office plants need watering on Fridays",
    "parse_user_id lives in auth/ids.py and accepts UUIDs",
]


def remember_all(ctx: Context) -> dict[str, str]:
    return {fact: memories.remember(ctx, fact).id for fact in BASICS}


def test_a_paraphrase_with_no_shared_words_is_recalled_by_vectors_and_the_vocabulary(
    real_ctx: Context,
) -> None:
    ids = remember_all(real_ctx)
    result = recall(real_ctx, "when do snapshots of prod data happen?", mode="deep")
    top = result.results[0]
    assert top.memory.id == ids[BASICS[0]]
    # closest in meaning, and BM25 finds it too through the vocabulary: prod -> production
    assert top.ranks["vector"] == 1 and "bm25" in top.ranks


def test_an_unrelated_query_gets_possible_matches_only_and_touches_nothing(
    real_ctx: Context,
) -> None:
    ids = remember_all(real_ctx)
    for question in ("what's the weather like today", "who won the world cup final"):
        result = recall(real_ctx, question)
        assert result.clear == [] and result.results
        assert {r.match for r in result.results} == {"possible"}
        block = api_recall(real_ctx, RecallRequest(question, context=True)).context
        assert block is not None and "Office plants" not in block
    apply_spooled(real_ctx.db)
    assert all(memories.get(real_ctx, i)[0].access_count == 0 for i in ids.values())
    # ... while a related question still finds its memory, and only that one is touched
    found = recall(real_ctx, "which package manager does the frontend use?").clear
    assert found[0].memory.id == ids[BASICS[2]]
    apply_spooled(real_ctx.db)
    touched = {i for i in ids.values() if memories.get(real_ctx, i)[0].access_count}
    assert touched == {r.memory.id for r in found}


def test_a_name_the_store_knows_shows_the_query_is_about_it(
    home: Path,
    local_embedder,  # type: ignore[no-untyped-def]
) -> None:
    # floors no memory here reaches by meaning or words: only a name can open the gate
    strict = {
        "recall.relevance_floor": 0.99,
        "recall.lead_floor": 0.99,
        "recall.words_floor": 1.0,
        "recall.support_floor": 0.9,
    }
    lines = [
        "Caroline: I'm a transgender woman and proud of who I am",
        "Caroline: I went to the support group yesterday",
        "Caroline: Counseling is the field I want to work in",
        "Melanie: I painted a sunrise over the lake last week",
        "Melanie: there is rust on the old bike chain",
        "Melanie: the rust on the fence needs paint",
        "Melanie: I scraped rust off the gate",
        "the OTEL exporter batches spans for the collector",
        "tracing starts in lib/spotter/otel.ex",
        "otel spans carry the session id",
    ]
    with Context(load_settings(overrides=strict), embedder=local_embedder) as ctx:
        ids = [memories.remember(ctx, line).id for line in lines]
        found = recall(ctx, "What is Caroline's identity?")
        assert {r.memory.id for r in found.clear} == set(ids[:3])
        assert any("names Caroline" in step.why for step in found.steps_of(ids[0]))
        # a name in mixed case is one word, and notes write it in any case
        otel = recall(ctx, "what's the issue id for the OTel work?")
        assert {r.memory.id for r in otel.clear} == set(ids[-3:])
        assert any("names OTel" in step.why for step in otel.steps_of(ids[-1]))
        # lower case is a word, not a name: no sign the query is about the store
        assert recall(ctx, "what is caroline's identity?").clear == []
        # three memories say "rust", none writes it as a name
        assert recall(ctx, "How is Rust compared with Go?").clear == []
        # a name is its words in a row: Caroline is not "Caroline Islands"
        assert recall(ctx, "What grows on the Caroline Islands?").clear == []
    unnamed = {**strict, "recall.anchor_memories": 0}
    with Context(load_settings(overrides=unnamed), embedder=local_embedder) as ctx:
        assert recall(ctx, "What is Caroline's identity?").clear == []


def test_an_identifier_the_query_spells_out_shows_it(
    home: Path,
    local_embedder,  # type: ignore[no-untyped-def]
) -> None:
    strict = {"recall.relevance_floor": 0.99, "recall.lead_floor": 0.99, "recall.words_floor": 1.0}
    with Context(load_settings(overrides=strict), embedder=local_embedder) as ctx:
        utils = memories.remember(ctx, "Ran: python -m pytest tests/test_math_utils.py -v").id
        memories.remember(ctx, "The office printer is on the second floor")
        found = recall(ctx, "how do we run the tests of the math utils project?")
        assert [r.memory.id for r in found.clear] == [utils]
        assert any("holds test_math_utils.py" in s.why for s in found.steps_of(utils))
        assert recall(ctx, "how do we run the tests of the utils math project?").clear == []


def test_an_empty_query_is_a_usage_error(real_ctx: Context) -> None:
    remember_all(real_ctx)
    for text in ("", "   \n"):
        with pytest.raises(UsageError, match="needs a query"):
            api_recall(real_ctx, RecallRequest(text))


def test_remembering_a_stored_text_again_returns_the_stored_memory(ctx: Context) -> None:
    first = api_remember(ctx, RememberRequest("Deploys go out on Tuesdays"))
    again = api_remember(ctx, RememberRequest("Deploys go out on Tuesdays"))
    assert (first.existing, again.existing) == (False, True)
    assert again.memory.id == first.memory.id
    elsewhere = api_remember(ctx, RememberRequest("Deploys go out on Tuesdays", scope="global"))
    assert not elsewhere.existing and elsewhere.memory.id != first.memory.id


def test_an_exact_identifier_is_found_by_both_legs(real_ctx: Context) -> None:
    ids = remember_all(real_ctx)
    top = recall(real_ctx, "parse_user_id").results[0]
    assert top.memory.id == ids[BASICS[4]]
    assert top.ranks == {"vector": 1, "bm25": 1}


def test_recall_touches_what_it_returns_once_the_spool_is_applied(
    real_ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = memories.remember(real_ctx, "The production database is backed up every night")
    frames = real_ctx.db.tuples("PRAGMA wal_checkpoint(PASSIVE)")[0][1]
    result = recall(real_ctx, "database backups")
    assert [r.memory.id for r in result.results] == [first.id]
    assert memories.get(real_ctx, first.id)[0].access_count == 0  # spooled, not written:
    assert real_ctx.db.tuples("PRAGMA wal_checkpoint(PASSIVE)")[0][1] == frames  # no frame
    assert apply_spooled(real_ctx.db) == 1
    touched = memories.get(real_ctx, first.id)[0]
    assert (touched.access_count, touched.strength) == (1, 1.0)
    assert touched.last_accessed_at is not None
    recall(real_ctx, "database backups", touch=False)
    assert apply_spooled(real_ctx.db) == 0
    assert memories.get(real_ctx, first.id)[0].access_count == 1
    monkeypatch.setattr(pipeline, "APPLY_BYTES", 1)  # a spool past its bound: applied now
    recall(real_ctx, "database backups")
    assert memories.get(real_ctx, first.id)[0].access_count == 2


def test_the_readme_quick_start_question_gets_the_deploy_procedure_first() -> None:
    # the README's Quick start, on the real model: its question shares one word with the
    # deploy memory ("production") and says "ship" where the memory says "deploys"
    from tests.conftest import run_cli

    examples = Path(__file__).resolve().parents[2] / "examples" / "memories.jsonl"
    assert run_cli("import", str(examples), real_model=True).returncode == 0
    done = run_cli("recall", "how do we ship to production?", "--json", real_model=True)
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)["results"][0]
    assert first["content"].startswith("Tidepool deploys to production with `make release`")
    assert first["match"] == "clear"
    for unrelated in ("what's the weather forecast for tomorrow", "who won the world cup final"):
        done = run_cli("recall", unrelated, "--json", real_model=True)
        answered = json.loads(done.stdout)["results"]
        assert answered and {r["match"] for r in answered} == {"possible"}


def test_recall_with_no_clear_match_answers_with_the_possible_ones_labelled() -> None:
    from tests.conftest import run_cli

    rotation = "On-call rotates weekly, handover Mondays 10:00 CET."
    assert run_cli("remember", rotation, real_model=True).returncode == 0
    done = run_cli("recall", "when does pager duty pass to the next person?", real_model=True)
    lines = done.stdout.splitlines()
    assert lines[0] == "no clear match; possible:"
    assert "On-call rotates weekly" in done.stdout and "no memories found" not in done.stdout
    as_json = json.loads(
        run_cli(
            "recall", "when does pager duty pass to the next person?", "--json", real_model=True
        ).stdout
    )
    (first,) = as_json["results"]
    assert first["content"] == rotation and first["match"] == "possible"
    assert "unconfirmed" not in as_json
    # for scripts: the clear matches alone, here none
    clear_only = run_cli(
        "recall",
        "when does pager duty pass to the next person?",
        "--clear-only",
        "--json",
        real_model=True,
    )
    assert json.loads(clear_only.stdout)["results"] == []
    # --explain says why it is only possible
    explained = run_cli(
        "recall", "when does pager duty pass to the next person?", "--explain", real_model=True
    )
    assert "match:    possible: cosine" in explained.stdout
    assert "no candidate shows the query is about anything stored" in explained.stdout


def test_a_question_about_someone_the_store_never_mentions_gets_no_answer(
    real_ctx: Context,
) -> None:
    for fact in (
        "Birthday: 7 July.",
        "Lives in Lisbon, Portugal.",
        "Database maintenance window: Sundays 02:00-04:00 UTC.",
        "Carlos Mendes leads the payments team.",
    ):
        memories.remember(real_ctx, fact)
    # close in meaning to the user's own birthday (cosine 0.57), but about another person
    result = recall(real_ctx, "When is Ben's birthday?", touch=False)
    assert result.clear == []
    assert [(r.memory.content, r.match) for r in result.results][:1] == [
        ("Birthday: 7 July.", "possible")
    ]
    steps = [s for s in result.run.trace if s.stage == "fuse"] if result.run else []
    assert any("the query names Ben, which no memory mentions" in s.why for s in steps)
    assert recall(real_ctx, "when is my birthday?", touch=False).results[0].memory.content == (
        "Birthday: 7 July."
    )
    # a name the store knows is no stranger
    found = recall(real_ctx, "What does Carlos work on?", touch=False).results
    assert found and found[0].memory.content.startswith("Carlos Mendes")
