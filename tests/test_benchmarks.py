"""`python -m benchmarks`: metrics, data loading, the harness on tiny files of real shapes, the CLI.

The tiny files are written here in the datasets' real formats; the real runs
on the dev files stay out of the suite (see docs/benchmarks.md).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks import locomo, longmemeval
from benchmarks.embedcache import EmbeddingCache
from benchmarks.haystack import BenchStores, Turn
from benchmarks.metrics import Tally, distinct, ndcg_at, percentile, recall_all_at, recall_at
from benchmarks.registry import choose
from benchmarks.retrievers import BASELINES, Question, memctl_sessions
from benchmarks.unrelated import QUERIES
from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.errors import InputError, UsageError
from memctl.model import Role
from memctl.store.sessions import latest_messages
from tests.fakes import HashEmbedder

SESSION_1 = [
    ("Caroline", "Hey Mel! I went to the LGBTQ support group yesterday and it was powerful."),
    ("Melanie", "That sounds wonderful. I painted a sunrise over the lake last year."),
    ("Caroline", "I am researching adoption agencies for my family."),
]
SESSION_2 = [
    ("Melanie", "We went camping in the mountains with the kids."),
    ("Caroline", "My grandmother gave me a necklace from Sweden."),
]


def locomo_file(path: Path) -> Path:
    """Two sessions and five questions of every kind, malformed evidence included."""
    conversation: dict[str, Any] = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    for number, (turns, date) in enumerate(
        [(SESSION_1, "1:56 pm on 8 May, 2023"), (SESSION_2, "10:37 am on 27 June, 2023")], 1
    ):
        conversation[f"session_{number}_date_time"] = date
        conversation[f"session_{number}"] = [
            {"speaker": speaker, "dia_id": f"D{number}:{index}", "text": text}
            for index, (speaker, text) in enumerate(turns, start=1)
        ]
    conversation["session_2"][1]["blip_caption"] = "a photo of a silver pendant"
    qa = [
        {
            "question": "When did Caroline go to the LGBTQ support group?",
            "answer": "7 May 2023",
            "evidence": ["D1:01"],
            "category": 2,
        },
        {
            "question": "What did Melanie paint, and where did she go camping?",
            "answer": "sunrise",
            "evidence": ["D1:2; D2:1"],
            "category": 1,
        },
        {
            "question": "What is Caroline researching?",
            "answer": "adoption agencies",
            "evidence": ["D1:3", "D"],
            "category": 4,
        },
        {
            "question": "Would Caroline keep a family heirloom?",
            "answer": "yes",
            "evidence": [],
            "category": 3,
        },
        {
            "question": "What did Melanie's grandmother give her?",
            "adversarial_answer": "necklace",
            "evidence": ["D2:2"],
            "category": 5,
        },
    ]
    record = {
        "sample_id": "conv-test",
        "conversation": conversation,
        "qa": qa,
        "observation": {"secret": "SECRET-OBSERVATION"},
        "session_summary": {},
    }
    path.write_text(json.dumps([record]), encoding="utf-8")
    return path


def longmemeval_file(path: Path) -> Path:
    """Two questions over three dated sessions, plus an abstention question."""
    sessions = {
        "s-bike": (
            "2023/05/01 (Mon) 10:00",
            [
                ("user", "I serviced my road bike and replaced the chain."),
                ("assistant", "Great, a new chain keeps shifting smooth."),
            ],
        ),
        "s-coins": (
            "2023/05/10 (Wed) 09:30",
            [
                ("user", "I now have 38 pre-1920 American coins in my collection."),
                ("assistant", "That is a fine collection."),
            ],
        ),
        "s-other": (
            "2023/05/12 (Fri) 18:00",
            [
                ("user", "Can you suggest a pasta recipe?"),
                ("assistant", "Try spaghetti aglio e olio."),
            ],
        ),
    }

    def question(qid: str, text: str, answer_session: str) -> dict[str, Any]:
        return {
            "question_id": qid,
            "question_type": "single-session-user",
            "question": text,
            "answer": "gold answer",
            "question_date": "2023/06/01 (Thu) 12:00",
            "answer_session_ids": [answer_session],
            "haystack_session_ids": list(sessions),
            "haystack_dates": [date for date, _ in sessions.values()],
            "haystack_sessions": [
                [
                    {
                        "role": role,
                        "content": text,
                        **(
                            {"has_answer": True} if sid == answer_session and role == "user" else {}
                        ),
                    }
                    for role, text in turns
                ]
                for sid, (_, turns) in sessions.items()
            ],
        }

    records = [
        question("q1", "How many pre-1920 American coins do I have?", "s-coins"),
        {
            **question("q2", "What did I replace on my road bike?", "s-bike"),
            "question_type": "multi-session",
        },
        question("q3_abs", "How many stamps do I have?", "s-coins"),
    ]
    with gzip.open(path, "wt", encoding="utf-8") as out:
        json.dump(records, out)
    return path


@pytest.fixture
def fast(home: Path) -> tuple[Any, EmbeddingCache]:
    return load_settings(), EmbeddingCache(HashEmbedder())


# metrics


def test_metrics_match_their_definitions() -> None:
    ranked = ["a", "x", "b", "y"]
    assert recall_at(ranked, {"a", "b", "c"}, 2) == pytest.approx(1 / 3)
    assert recall_at(ranked, {"a", "b"}, 3) == 1.0
    assert recall_all_at(ranked, {"a", "b"}, 2) == 0.0
    assert recall_all_at(ranked, {"a", "b"}, 3) == 1.0
    assert ndcg_at(ranked, {"a"}, 5) == 1.0
    assert ndcg_at(ranked, {"b"}, 5) == pytest.approx(1 / math.log2(4))
    assert ndcg_at(ranked, {"a", "b"}, 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert ndcg_at(ranked, {"z"}, 5) == 0.0
    assert distinct(["s1", "s2", "s1", "s3"]) == ["s1", "s2", "s3"]
    assert percentile([5, 1, 4, 2, 3], 50) == 3
    assert percentile(list(range(1, 101)), 95) == 95
    assert percentile([], 50) == 0.0


# LoCoMo


def test_locomo_loading_normalises_evidence_and_keeps_answers_out_of_questions(
    tmp_path: Path,
) -> None:
    (conversation,) = locomo.load(locomo_file(tmp_path / "locomo.json"))
    assert [t.key for t in conversation.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert conversation.turns[4].text.endswith("[shared image: a photo of a silver pendant]")
    assert all("SECRET" not in t.text for t in conversation.turns)
    by_question = {c.question.text: c for c in conversation.cases}
    assert by_question["When did Caroline go to the LGBTQ support group?"].evidence == {"D1:1"}
    assert by_question["What did Melanie paint, and where did she go camping?"].evidence == {
        "D1:2",
        "D2:1",
    }
    assert conversation.unresolved == 1  # the bare "D"
    assert conversation.unscorable == 1  # the question with no evidence at all
    assert {f.name for f in dataclasses.fields(Question)} == {"text", "now"}
    # asked after the last turn, so recall as of then sees the whole last session
    last_turn = conversation.turns[-1].said_at
    assert last_turn > conversation.turns[-1].at
    assert all(c.question.now == last_turn for c in conversation.cases)


def test_locomo_run_scores_every_retriever_and_never_shows_them_the_answers(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    seen: list[Question] = []

    def spy(ctx: Context, question: Question, limit: int) -> list[str]:
        seen.append(question)
        return BASELINES["bm25"](ctx, question, limit)

    settings, cache = fast
    report = locomo.run(
        settings, cache, locomo_file(tmp_path / "l.json"), {**BASELINES, "spy": spy}
    )
    assert report.retrievers == ["memctl", "bm25", "vector", "spy"]
    assert report.questions == {
        "1 multi-hop": 1,
        "2 temporal": 1,
        "4 single-hop": 1,
        "overall 1-4": 3,
        "overall 1-4, tune half": 3,  # one conversation: the first, odd-numbered
        "5 adversarial": 1,
        "all 1-5": 4,
    }
    # five memories in the store: every evidence turn is within the top 5 of every retriever
    # that always returns 5; memctl returns only what it finds evidence for
    for name in ("bm25", "vector", "spy"):
        assert report.scores[name]["overall 1-4"]["recall@5"] == 1.0
    assert report.scores["memctl"]["overall 1-4"]["recall@5"] >= 0.5
    assert report.unrelated["results"]["vector"] == 20 * 5  # type: ignore[index]
    # BM25 puts the single-hop evidence ("researching adoption agencies") first
    assert report.scores["bm25"]["4 single-hop"]["recall@5"] == 1.0
    assert report.ingest["memories"] == 5
    assert seen[0].text == "warm up"  # each fresh store is warmed before timing
    assert seen[1 : 1 + len(QUERIES)] == [Question(text) for text in QUERIES]  # unrelated
    assert [q.text for q in seen[1 + len(QUERIES) :]] == [
        "When did Caroline go to the LGBTQ support group?",
        "What did Melanie paint, and where did she go camping?",
        "What is Caroline researching?",
        "What did Melanie's grandmother give her?",
    ]
    assert not any("adoption agencies" in repr(q) or "necklace" in repr(q) for q in seen)
    assert set(report.latency_ms) == {"memctl", "bm25", "vector", "spy"}
    multi_hop = report.per_question[1]
    assert multi_hop["category"] == 1
    assert set(multi_hop["ranks"]["bm25"]) == {"D1:2", "D2:1"}  # type: ignore[arg-type]
    assert all(isinstance(r, int) for r in multi_hop["ranks"]["bm25"].values())  # type: ignore[union-attr]
    assert not any(tmp_path.glob("memctl-bench-*"))


def test_locomo_sessions_ranks_the_turns_as_session_messages(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    settings, cache = fast
    chosen = choose(["memctl-sessions"])
    report = locomo.run(settings, cache, locomo_file(tmp_path / "l.json"), chosen, sessions=True)
    assert "turns stored as session messages, no memories, with their vectors" in report.notes
    # a result is a message, scored by the turn it holds: each evidence turn is found by its key
    researching = next(q for q in report.per_question if "researching" in str(q["question"]))
    assert researching["ranks"] == {"memctl-sessions": {"D1:3": 1}}
    assert report.scores["memctl-sessions"]["overall 1-4"]["recall@5"] == 1.0
    assert report.ingest["memories"] == 5 and cache.misses == 5  # one part a short turn


def test_sessions_store_keeps_who_said_each_turn(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    settings, cache = fast
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = [
        Turn("D1:1", "session_1", "Caroline", "I adopted a dog from the shelter.", said, 0),
        Turn("D1:2", "session_1", "Melanie", "I adopted a cat from the shelter.", said, 1),
        Turn("s:0", "s", "user", "I serviced my road bike.", said, 0),
        Turn("s:1", "s", "assistant", "A new chain keeps shifting smooth.", said, 1),
    ]
    with BenchStores(settings, cache) as stores:
        ctx, keys = stores.session_haystack(turns, "bench")
        stored = [*latest_messages(ctx.db, "session_1", 0, 9), *latest_messages(ctx.db, "s", 0, 9)]
        # a named speaker is a transcript's line, "Melanie: ...", as a text import keeps it;
        # a chat's user and assistant keep their roles and their words as said
        assert [(m.role, m.content) for m in stored] == [
            (Role.USER, "Caroline: I adopted a dog from the shelter."),
            (Role.USER, "Melanie: I adopted a cat from the shelter."),
            (Role.USER, "I serviced my road bike."),
            (Role.ASSISTANT, "A new chain keeps shifting smooth."),
        ]
        # the question names whose turn it asks about: hers comes first
        asked = Question("What did Melanie adopt?", said + timedelta(days=1))
        found = memctl_sessions(ctx, asked, 5)
        assert keys[found[0]].key == "D1:2"
        stores.discard(ctx)


def test_locomo_limit_reads_only_the_first_questions(tmp_path: Path) -> None:
    (conversation,) = locomo.load(locomo_file(tmp_path / "l.json"), limit=2)
    assert len(conversation.cases) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{}", "expected a non-empty JSON list"),
        ("[1, 2", "is not a LoCoMo file"),
        ('[{"qa": []}]', "conversation 1 has no 'conversation' field"),
        (
            '[{"qa": [{"question": "q", "evidence": [], "category": 9}], "conversation": '
            '{"session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": '
            '[{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}]',
            "unknown question category 9",
        ),
        (
            '[{"qa": [], "conversation": {"session_1_date_time": "yesterday", "session_1": []}}]',
            "conversation 1 is malformed",
        ),
    ],
)
def test_malformed_locomo_files_are_one_input_error(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        locomo.load(path)


# LongMemEval


def test_longmemeval_scores_sessions_and_turns_and_skips_abstention(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    settings, cache = fast
    report = longmemeval.run(
        settings, cache, longmemeval_file(tmp_path / "lme.json.gz"), dict(BASELINES)
    )
    assert report.questions == {
        "single-session-user": 1,
        "multi-session": 1,
        "overall": 2,
        "overall, tune half": 1,
        "overall, check half": 1,
    }
    bm25 = report.scores["bm25"]["overall"]
    assert bm25["recall_all@5"] == 1.0  # three sessions: all within the top 5
    assert bm25["ndcg@5"] == 1.0  # and BM25 ranks the evidence session first
    assert bm25["turn_recall@10"] == 1.0
    assert "1 abstention questions skipped" in report.notes
    assert report.ingest["memories"] == 12
    # both questions share their haystack: each turn was embedded once
    assert cache.misses == 6
    assert cache.hits == 6


def test_longmemeval_details_say_which_result_row_each_evidence_session_first_shows_at() -> None:
    """Three results from one session push the second evidence session to the 4th row, while
    the session ranking (where each session's best result ranks) puts it 2nd."""
    at = datetime(2023, 5, 1, tzinfo=UTC)
    turns = [Turn(f"{s}:{i}", s, "user", "text", at, i) for s, i in ("a0", "a1", "a2", "b0")]
    case = longmemeval.Case(
        "q1",
        "multi-session",
        Question("How many coins do I have in total?"),
        turns,
        answer_sessions=frozenset({"a", "b"}),
        answer_turns=frozenset({"b:0"}),
    )
    where = longmemeval.score(Tally(), "recall", case, turns)
    assert where["sessions"] == {"a": 1, "b": 2}
    assert where["rows"] == {"a": 1, "b": 4}
    assert where["turns"] == {"b:0": 4}


def test_longmemeval_embedded_only_runs_the_questions_the_cache_holds(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    settings, cache = fast
    data = longmemeval_file(tmp_path / "lme.json.gz")
    chosen = choose(["memctl-sessions"])
    nothing = longmemeval.run(settings, cache, data, chosen, sessions=True, embedded_only=True)
    assert nothing.questions["overall"] == 0 and cache.misses == 0
    longmemeval.run(settings, cache, data, chosen, sessions=True, limit=1)  # embeds one
    resumed = longmemeval.run(settings, cache, data, chosen, sessions=True, embedded_only=True)
    # both questions share their haystack: the one embedded run holds both
    assert resumed.questions["overall, tune half"] == 1
    assert resumed.questions["overall, check half"] == 1


def test_longmemeval_question_is_asked_after_a_session_dated_later_that_day() -> None:
    record = {
        "question_id": "q-late",
        "question_type": "temporal-reasoning",
        "question": "Which trip did I take first?",
        "question_date": "2023/05/28 (Sun) 13:10",
        "haystack_session_ids": ["s-early", "s-late"],
        "haystack_dates": ["2023/05/20 (Sat) 09:00", "2023/05/28 (Sun) 20:06"],
        "haystack_sessions": [
            [{"role": "user", "content": "Back from Europe with the family."}],
            [{"role": "user", "content": "Planning a solo trip to Thailand.", "has_answer": True}],
        ],
        "answer_session_ids": ["s-early", "s-late"],
    }
    case = longmemeval.case_from(record)
    # recall as of the question's date and time would not see the evidence said that evening
    assert case.question.now is not None
    assert case.question.now >= max(turn.said_at for turn in case.turns)
    assert case.question.now.date().isoformat() == "2023-05-28"


def test_longmemeval_question_is_asked_as_of_its_date(tmp_path: Path) -> None:
    cases = longmemeval.load(longmemeval_file(tmp_path / "lme.json.gz"))
    assert cases[0].question.now is not None
    assert cases[0].question.now.isoformat() == "2023-06-01T12:00:00+00:00"
    assert cases[0].turns[0].key == "s-bike:0"
    assert cases[0].answer_turns == {"s-coins:0"}
    assert [c.abstention for c in cases] == [False, False, True]


def test_recovery_expands_what_recall_returns_from_the_distilled_sessions(tmp_path: Path) -> None:
    from benchmarks import session_recovery

    said = [
        ("Caroline", "Hey Mel! Good to see you."),
        ("Melanie", "Hi Caroline, how was your week?"),
        ("Caroline", "I love painting sunsets over the lake with watercolors."),
        ("Melanie", "That sounds lovely."),
        ("Caroline", "Thanks!"),
        ("Melanie", "We went camping in the mountains."),
        ("Caroline", "Nice."),
    ]
    conversation = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": speaker, "dia_id": f"D1:{n}", "text": text}
            for n, (speaker, text) in enumerate(said, start=1)
        ],
    }
    qa = [
        {"question": "What does Caroline love painting?", "evidence": ["D1:3"], "category": 4},
        {"question": "Where did Melanie go camping?", "evidence": ["D1:6"], "category": 2},
    ]
    path = tmp_path / "l.json"
    path.write_text(json.dumps([{"sample_id": "c", "conversation": conversation, "qa": qa}]))
    overrides = {"llm": "none", "embedder": "hash"}
    run = session_recovery.Run(tmp_path, 10, True, overrides, HashEmbedder())
    sums = session_recovery.run_locomo(run, path, None).sums
    # the worker's rules kept the first speaker's (the user's) preference, and no digest
    assert (run.held.sessions, run.held.messages, run.held.facts, run.held.digests) == (1, 7, 1, 0)
    assert run.held.said_by == {"user": 1} and not run.unexpandable
    painting, camping = sums["4 single-hop"], sums["2 temporal"]
    # expand opens the fact's message and the 2 turns either side: D1:1-5
    assert (painting["grep@10"], painting["expand@5"], painting["opened@10"]) == (1, 1, 5)
    # the other speaker's words became no memory: only grep reaches them
    assert (camping["grep@10"], camping["expand@10"], camping["no clear memory"]) == (1, 0, 1)


# embedding cache


def test_embedding_cache_embeds_each_text_once_and_survives_a_torn_file(tmp_path: Path) -> None:
    embedder = HashEmbedder()
    cache = EmbeddingCache(embedder, tmp_path / "cache")
    first = cache.embed(["alpha", "beta", "alpha"])
    assert first[0] == first[2] != first[1]
    assert embedder.calls == [["alpha", "beta"]]
    assert cache.embed(["beta"]) == [first[1]]
    assert (cache.hits, cache.misses) == (2, 2)

    assert cache.path is not None
    with cache.path.open("ab") as out:
        out.write(b"half a record")
    reloaded = EmbeddingCache(HashEmbedder(), tmp_path / "cache")
    assert reloaded.embed(["alpha", "beta"]) == [first[0], first[1]]
    assert reloaded.misses == 0
    reloaded.embed(["gamma"])
    again = EmbeddingCache(HashEmbedder(), tmp_path / "cache")
    assert len(again.vectors) == 3


def test_unknown_retriever_is_a_usage_error() -> None:
    assert list(choose(None)) == ["memctl", "bm25", "vector"]
    assert list(choose(["vector", "bm25", "vector"])) == ["vector", "bm25"]
    with pytest.raises(UsageError, match="unknown retriever nope"):
        choose(["nope"])


# chart


def test_chart_without_matplotlib_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.chart import recall_chart

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UsageError, match=r"pip install matplotlib"):
        recall_chart([{"benchmark": "locomo"}], tmp_path / "c.png")


# Per-prompt injection


def unrelated_file(path: Path) -> Path:
    """Two unrelated prompts, one of them about the store after all (the benchmarks add
    their 20 built-in ones): not the 60 of benchmarks/paraphrase/unrelated.jsonl, each asked
    again with every addition by injection-noise (~7 CPU-s more)."""
    lines = [
        {"id": "u001", "question": "who won the world cup final"},
        {"id": "u002", "question": "What is Caroline researching?"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_injection_benchmark_scores_the_hooks_block_against_recall_and_unrelated_prompts(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    from benchmarks import injection

    settings, cache = fast
    unrelated = unrelated_file(tmp_path / "unrelated.jsonl")
    report = injection.run(settings, cache, locomo_file(tmp_path / "l.json"), unrelated)
    tune, check = report.rows()
    # one conversation (odd: tune): 3 scorable questions of categories 1-4; the
    # unrelated prompts: one of the file's and half of the 20 built-in ones per half
    assert (tune["questions"], check["questions"]) == (3, 0)
    assert (tune["unrelated prompts"], check["unrelated prompts"]) == (11, 11)
    for row in (tune, check):  # the hook adds something only where recall answers
        assert row["unrelated injected"] <= row["unrelated with a clear match"]
    # u002 is about the store after all: it counts as injected in the check half
    assert check["unrelated injected"] > 0
    by_question = {r["question"]: r for r in report.per_question}
    assert "D1:3" in by_question["What is Caroline researching?"]["injected"]
    for record in report.per_question:  # recall's best, in its order, or nothing
        given = record["injected"]
        assert given == record["recalled"][: len(given)]


def test_injection_noise_asks_each_prompt_plain_and_with_each_addition(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    """The same questions plain and with a pasted key, a log, a code block...: each addition
    is asked of every question, the plain figures are injection's own, and a block the
    plain question got but the added one did not counts as lost."""
    from benchmarks import injection, perturb

    settings, cache = fast
    data = locomo_file(tmp_path / "l.json")
    unrelated = unrelated_file(tmp_path / "unrelated.jsonl")
    report = perturb.run(settings, cache, data, unrelated)
    plain = injection.run(settings, cache, data, unrelated).rows()
    rows = {row["addition"]: row for row in report.rows()}
    assert set(rows) == {perturb.PLAIN, *perturb.KINDS}
    assert rows[perturb.PLAIN]["tune: evidence injected"] == plain[0]["evidence injected"]
    for kind in perturb.KINDS:
        t = report.tally(kind, "tune")
        assert t.questions == report.tally(perturb.PLAIN, "tune").questions == 3
        assert 0 <= t.lost <= report.tally(perturb.PLAIN, "tune").blocks
        # every unrelated prompt too: the file's own and half the built-in ones a half
        assert t.unrelated == report.tally(kind, "check").unrelated == 11
    # a pasted key no longer hides what was asked (s32-gate)
    assert rows["token"]["tune: given a block"] == rows[perturb.PLAIN]["tune: given a block"]


# the real command, real model, real processes


def run_bench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m benchmarks`` as a real process, importable from any working directory."""
    root = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "PYTHONPATH": path},
        cwd=cwd,
        timeout=300,
    )


def test_bench_commands_run_end_to_end_on_tiny_files(tmp_path: Path) -> None:
    done = run_bench("locomo", "--data", str(locomo_file(tmp_path / "l.json")), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # Every turn is indexed and every resolvable evidence id scored: the vector leg alone
    # ranks the whole tiny store. The pipeline may return fewer (it drops what has no evidence).
    assert report["scores"]["vector"]["all 1-5"]["recall@50"] == 1.0
    assert 0.5 <= report["scores"]["memctl"]["all 1-5"]["recall@50"] <= 1.0
    assert set(report["latency_ms"]["vector"]) == {"p50", "p95", "mean", "calls"}
    (tmp_path / "locomo.json").write_text(done.stdout, encoding="utf-8")

    lme = longmemeval_file(tmp_path / "lme.json.gz")
    cache = tmp_path / "cache"
    done = run_bench("longmemeval", "--data", str(lme), "--cache", str(cache))
    assert done.returncode == 0, done.stderr
    assert "R_all@5" in done.stdout and "single-session-user" in done.stdout
    details = tmp_path / "details.jsonl"
    done = run_bench(
        "longmemeval",
        "--data",
        str(lme),
        "--cache",
        str(cache),
        "--json",
        "--details",
        str(details),
        "-r",
        "bm25",
    )
    assert json.loads(done.stdout)["ingest"]["texts_embedded"] == 0  # all from the disk cache
    lines = [json.loads(line) for line in details.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["q1", "q2"]
    assert lines[0]["ranks"]["bm25"]["sessions"] == {"s-coins": 1}

    # two sizes, a row each: 10 and 20 memories show it as 40 and 80 did (3.3 -> 1.9 s CPU)
    done = run_bench("scale", "--n", "10,20", "--rounds", "1", "--processes", "1", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [row["memories"] for row in rows] == [10, 20]
    assert rows[1]["db_mib"] > 0 and rows[1]["process_peak_mib"] > 10
    assert set(rows[0]["recall_ms"]) == {"memctl", "bm25", "vector"}

    pytest.importorskip("matplotlib")
    done = run_bench("chart", str(tmp_path / "locomo.json"), "-o", str(tmp_path / "c.png"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["locomo", "--data", "missing.json"], 6, "no LoCoMo file at missing.json"),
        (["longmemeval", "--data", "bad.json"], 6, "is not a LongMemEval file"),
        (["scale", "--n", "ten"], 2, "--n takes comma-separated counts"),
        (["locomo", "--data", "bad.json", "-r", "nope"], 2, "unknown retriever nope"),
        (["chart", "bad.json"], 6, "cannot read results from bad.json"),
        (["real-questions", "--data", "."], 6, "no manifest.json in ."),
        (["real-questions", "--fresh", "--fresh3"], 2, "each name a split: give one"),
        (["injection", "--data", "missing.json"], 6, "no LoCoMo file at missing.json"),
        (
            ["injection", "--data", "bad.json", "--unrelated", "bad.json"],
            6,
            "bad.json is not JSON lines",
        ),
        (["injection-noise", "--data", "missing.json"], 6, "no LoCoMo file at missing.json"),
    ],
)
def test_bench_errors_are_one_line(
    tmp_path: Path,
    args: list[str],
    code: int,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Through the entry point ``python -m benchmarks`` runs, in this process (the end-to-end
    test above starts the program itself): ~0.3 s of CPU less a case."""
    from benchmarks.__main__ import main, run

    (tmp_path / "bad.json").write_text("not json", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(sys, "argv", ["python -m benchmarks", *args])
    with pytest.raises(SystemExit) as exited:
        main(run, prog="python -m benchmarks")
    stderr = capfd.readouterr().err
    assert exited.value.code == code, stderr
    assert message in stderr
    assert len(stderr.strip().splitlines()) == 1


# experiments (exp-*): the ideas measured in docs/benchmarks.md


def test_experiment_date_windows_come_from_the_question_only() -> None:
    from datetime import datetime

    from benchmarks.experiments import content_words, date_window

    start, end = date_window("What did Tim recommend on 8th December, 2023?", None)  # type: ignore[misc]
    assert start < datetime(2023, 12, 8) < end and (end - start).days == 7
    start, end = date_window("the Sunday before October 25, 2022", None)  # type: ignore[misc]
    assert start < datetime(2022, 10, 25) < end
    assert date_window("What happened in March 2023?", None)[0].month == 2  # type: ignore[index]
    now = datetime(2023, 6, 1)
    start, end = date_window("What did I buy two weeks ago?", now)  # type: ignore[misc]
    assert start < datetime(2023, 5, 18) < end < now
    assert date_window("What did I buy last week?", now)[1] == now  # type: ignore[index]
    # 1 June 2023 is a Thursday: last Tuesday is 30 May
    start, end = date_window("Who did I meet last Tuesday?", now)  # type: ignore[misc]
    assert start < datetime(2023, 5, 30, 12) < end <= now
    assert date_window("What did I buy two weeks ago?", None) is None
    assert date_window("What is my favourite pasta?", now) is None
    assert content_words("What did Caroline realize after her race?") == "Caroline realize race"


def test_experiments_rank_through_the_store_and_neighbours_share_scores(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    from benchmarks.experiments import with_context
    from benchmarks.haystack import BenchStores

    settings, cache = fast
    report = locomo.run(
        settings, cache, locomo_file(tmp_path / "l.json"), choose(["exp-score", "exp-all"])
    )
    for name in ("exp-score", "exp-all"):
        assert report.scores[name]["overall 1-4"]["recall@5"] == 1.0

    (conversation,) = locomo.load(tmp_path / "l.json")
    with BenchStores(settings, cache) as stores:
        ctx, turns = stores.haystack(conversation.turns, "test")
        ids = {turn.key: memory_id for memory_id, turn in turns.items()}
        spread = with_context(ctx, {ids["D1:2"]: 1.0, ids["D2:1"]: 0.5}, 0.3)
        ctx.close()
    assert spread == {
        ids["D1:1"]: 0.3,
        ids["D1:2"]: 1.0,
        ids["D1:3"]: 0.3,
        ids["D2:1"]: 0.5,
        ids["D2:2"]: 0.15,  # D1:3 and D2:1 are in different sessions: no sharing across
    }


# Paraphrases


def paraphrase_data(tmp_path: Path, facts: list[tuple[str, str, str]]) -> Path:
    """A paraphrase data folder: ``facts`` (id, fact, question) and one unrelated question."""
    data = tmp_path / "para"
    data.mkdir()
    (data / "facts.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "fact": f, "question": q, "kind": "stack"}) + "\n"
            for i, f, q in facts
        )
    )
    (data / "unrelated.jsonl").write_text(
        json.dumps({"id": "u001", "question": "who won the world cup final"}) + "\n"
    )
    return data


def test_paraphrase_benchmark_reports_both_halves_and_the_unrelated_questions(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    from benchmarks import paraphrase

    data = paraphrase_data(
        tmp_path,
        [
            ("f001", "Deploys go out with make release from main", "how do we ship?"),
            ("f002", "Priya reviews every database migration", "who signs off schema changes?"),
            ("f003", "The office is in Lisbon", "where do we work from?"),
            ("f004", "Stand-up is at 9:30 every weekday", "when is the daily sync?"),
        ],
    )
    settings, cache = fast
    rows = paraphrase.run(
        settings, cache, [2, 6], [locomo_file(tmp_path / "l.json")], dict(BASELINES), data
    )
    by = {(r["store"], r["retriever"], r["half"]): r for r in rows}
    # two stores of two facts, then all four among two LoCoMo turns
    assert by[(2, "vector", "tune")]["paraphrases"] == 2
    assert by[(6, "vector", "check")]["paraphrases"] == 2
    assert by[(2, "vector", "tune")]["unrelated"] == 2  # asked of each small store
    assert by[(6, "vector", "tune")]["unrelated answered"] == 100.0  # vectors always answer
    assert by[(2, "vector", "tune")]["found@5"] == 100.0  # two memories: both in the top 5
    with pytest.raises(InputError, match="needs 36 distractor turns"):
        paraphrase.run(settings, cache, [40], [], dict(BASELINES), data)


def test_paraphrase_reports_named_questions_given_a_clear_match_for_memctl_alone(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    """A question naming someone a fact names, asking what no fact says: memctl's rows
    count it, per half and store, with the share given a clear match and a clear first."""
    from benchmarks import paraphrase

    data = paraphrase_data(
        tmp_path,
        [
            (
                "f001",
                "Priya Raman reviews every database migration",
                "who signs off schema changes?",
            ),
            ("f002", "The office is in Lisbon", "where do we work from?"),
        ],
    )
    named = [
        ("n001", "What is Priya Raman's phone number?"),
        ("n002", "Is the Lisbon office open?"),
    ]
    (data / "named_unanswered.jsonl").write_text(
        "".join(json.dumps({"id": i, "question": q}) + "\n" for i, q in named)
    )
    settings, cache = fast
    rows = paraphrase.run(settings, cache, [1, 2], [], dict(BASELINES), data)
    by = {(r["store"], r["retriever"], r["half"]): r for r in rows}
    assert by[(1, "memctl", "tune")]["named"] == 2  # asked of each one-fact store
    assert by[(2, "memctl", "check")]["named"] == 1
    for key in [(1, "memctl", "tune"), (2, "memctl", "check")]:
        assert 0.0 <= by[key]["named clear@1"] <= by[key]["named clear"] <= 100.0
    assert "named" not in by[(2, "vector", "tune")]  # labels are memctl's


def test_paraphrase_details_say_where_a_missed_fact_was_lost(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    """A fact sharing no word with its question, beside ten notes holding every word of
    it: recall shows the ten, and ``where_lost`` says where the fact went, as --why-not
    does; a fact found says nothing."""
    from benchmarks import paraphrase
    from benchmarks.retrievers import memctl_recall

    data = tmp_path / "para"
    data.mkdir()
    question = "which deploy script ships the billing service?"
    lines = [("f001", "Invoices are issued by the ledger job at night", question)]
    lines += [
        (f"f{n:03}", f"Note {n}: deploy script ships billing service", "x?")
        for n in range(3, 23, 2)
    ]
    (data / "facts.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "fact": f, "question": q, "kind": "stack"}) + "\n"
            for i, f, q in lines
        )
    )
    (data / "unrelated.jsonl").write_text(json.dumps({"id": "u001", "question": "x?"}) + "\n")
    settings, cache = fast
    details: list[dict[str, object]] = []
    paraphrase.run(settings, cache, [11], [], {"memctl": memctl_recall}, data, details)
    missed = next(d for d in details if d["question"] == "f001")
    assert "f001" not in missed["top5"]
    lost = missed["lost"]
    # the gate set it aside as a possible match, and the ten clear notes left it no row
    assert isinstance(lost, dict) and lost["row"] is None, lost
    assert lost["stage"] == "fuse" and str(lost["reason"]).startswith("possible: ")
    facts = [d for d in details if str(d["question"]).startswith("f")]
    assert all(("lost" in d) == (d["question"] not in d["top5"]) for d in facts)


def test_llm_replay_records_an_unanswered_judge_request_then_answers_it(tmp_path: Path) -> None:
    from benchmarks import llm_replay
    from memctl.errors import MemctlError
    from memctl.llm.ollama import OllamaLLM
    from memctl.llm.recall_judge import RecallJudge

    answers = tmp_path / "answers.json"
    memories = ["Deploys: make ship from main", "Tech lead: Marcus"]

    def judged() -> tuple[llm_replay.Replay, list[float] | MemctlError]:
        replay, server = llm_replay.start(answers)
        try:
            judge = RecallJudge(OllamaLLM(replay.url, "llama3.2", 5.0, retries=0))
            return replay, judge.relevance("how do we ship?", memories)
        except MemctlError as exc:
            return replay, exc
        finally:
            server.stop()

    replay, outcome = judged()  # record mode: no file yet, the judge falls back
    assert isinstance(outcome, MemctlError) and replay.answered == 0
    replay.write_missing(missing := tmp_path / "missing.json")
    ((key, request),) = json.loads(missing.read_text()).items()
    assert "Query: how do we ship?" in request and "[1] Tech lead: Marcus" in request
    scores = {"scores": [{"id": 0, "score": 9}, {"id": 1, "score": 0}]}
    answers.write_text(json.dumps({"answers": {key: scores}}))
    replay, outcome = judged()
    assert outcome == pytest.approx([0.9, 0.0]) and replay.answered == 1 and not replay.missing
    answers.write_text("[]")
    with pytest.raises(InputError, match="not an answers file"):
        llm_replay.start(answers)


# Real questions


def test_real_questions_report_found_at_5_both_ways_per_half_and_scoping(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    from benchmarks import real_questions
    from benchmarks.session_quality import GOLD

    chosen = {"cc2-cclog-256ba646.jsonl": "claude_p", "cc2-cclog-29ccd257.jsonl": "cclog-map"}
    sessions = []
    for name, project in chosen.items():
        (tmp_path / name).write_bytes((GOLD / name).read_bytes())
        sessions.append({"file": name, "client": "claude-code", "project": project})
    (tmp_path / "manifest.json").write_text(json.dumps({"sessions": sessions}))
    questions = [
        ("q1", "can claude -p use WebSearch with --allowedTools?", 0, "check", ["allowedtools"]),
        ("q2", "what is the claude-code-log TUI built with, Textual?", 1, "tune", ["textual"]),
        ("q3", "which xylophone did we tune?", 1, "check", ["xylophone"]),
    ]
    (tmp_path / "questions.json").write_text(
        json.dumps(
            {
                "questions": [
                    {"id": i, "q": q, "session": sessions[s]["file"], "half": h, "keywords": k}
                    for i, q, s, h, k in questions
                ]
            }
        )
    )
    settings, cache = fast
    report = real_questions.run(settings, tmp_path, None, cache.embedder)
    by = {(r["scoping"], r["half"]): r for r in report.rows}
    assert set(by) == {(s, h) for s in ("project", "everywhere") for h in ("tune", "check", "all")}
    assert by[("everywhere", "check")]["questions"] == 2
    assert report.load["sessions"] == 2 and report.load["memories"] > 0
    # q1 quotes its session: found both ways; no text holds q3's keyword
    q1 = next(a for a in report.answers if a.question.id == "q1" and a.scoping == "everywhere")
    assert q1.found(clear_only=False) == (True, True)
    assert by[("everywhere", "check")]["found@5 judged"] == pytest.approx(50.0)
    assert not any(a.found(clear_only=False)[1] for a in report.answers if a.question.id == "q3")
    details = report.to_dict()["per_question"]
    assert len(details) == 6 and all(len(d["top"]) <= 5 for d in details)
    (tmp_path / "questions.json").write_text(json.dumps({"questions": [{"id": "q9"}]}))
    with pytest.raises(InputError, match="not a questions file"):
        real_questions.run(settings, tmp_path, None, cache.embedder)
    stray = {"id": "q9", "q": "x", "session": "gone.jsonl", "half": "check", "keywords": []}
    (tmp_path / "questions.json").write_text(json.dumps({"questions": [stray]}))
    with pytest.raises(InputError, match="q9 asks about gone.jsonl, not listed"):
        real_questions.run(settings, tmp_path, None, cache.embedder)


def one_session_split(folder: Path) -> str:
    """A real-questions split in ``folder``: one gold session and one question about it;
    the session's file name."""
    from benchmarks.session_quality import GOLD

    name = "cc2-cclog-256ba646.jsonl"
    (folder / name).write_bytes((GOLD / name).read_bytes())
    session = {"file": name, "client": "claude-code", "project": "claude_p"}
    (folder / "manifest.json").write_text(json.dumps({"sessions": [session]}))
    asked = {"id": "q1", "q": "can claude -p use WebSearch?", "session": name, "half": "check"}
    (folder / "questions.json").write_text(
        json.dumps({"questions": [{**asked, "keywords": ["allowedtools"]}]})
    )
    return name


def test_real_questions_keeps_its_embeddings_with_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """``real-questions --cache DIR``: the sessions' texts are embedded once, and a rerun
    reads them from DIR with the same figures (a run embedded ~70 CPU-s each time)."""
    from benchmarks.__main__ import main, run

    one_session_split(tmp_path)
    monkeypatch.setenv("MEMCTL_EMBEDDER", "hash")
    cache = tmp_path / "cache"
    args = ["real-questions", "--data", str(tmp_path), "--no-others", "--cache", str(cache)]
    monkeypatch.setattr(sys, "argv", ["python -m benchmarks", *args, "--json"])
    answers, sizes = [], []
    for _ in range(2):
        with pytest.raises(SystemExit) as exited:
            main(run, prog="python -m benchmarks")
        assert exited.value.code in (0, None)
        answers.append(json.loads(capfd.readouterr().out))
        sizes.append([f.stat().st_size for f in cache.iterdir()])
    assert len(sizes[0]) == 1 and sizes[0][0] > 0  # one file of vectors, by the first run
    assert sizes[1] == sizes[0]  # the rerun embedded nothing
    assert answers[0]["rows"] == answers[1]["rows"] and answers[0]["rows"]


def test_real_questions_json_shows_no_blind_question_s_top_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """s44-leads: `real-questions --json` printed every question's top 5, a blind split's
    too, for anyone to read; a blind half's questions are now only counted, its figures
    in the rows, while a studied half's are listed as before."""
    from benchmarks.__main__ import main, run

    one_session_split(tmp_path)
    questions = json.loads((tmp_path / "questions.json").read_text())["questions"]
    blind = {**questions[0], "id": "q2", "half": "fresh10-check"}
    (tmp_path / "questions.json").write_text(json.dumps({"questions": [*questions, blind]}))
    monkeypatch.setenv("MEMCTL_EMBEDDER", "hash")
    args = ["real-questions", "--data", str(tmp_path), "--no-others", "--json"]
    monkeypatch.setattr(sys, "argv", ["python -m benchmarks", *args])
    with pytest.raises(SystemExit) as exited:
        main(run, prog="python -m benchmarks")
    assert exited.value.code in (0, None)
    report = json.loads(capfd.readouterr().out)
    assert {(d["id"], d["half"]) for d in report["per_question"]} == {("q1", "check")}
    assert report["per_question"][0]["top"] and report["blind"] == {"fresh10-check": 1}
    halves = {(r["scoping"], r["half"]): r["questions"] for r in report["rows"]}
    assert halves[("project", "fresh10-check")] == 1 == halves[("everywhere", "check")]
    assert "fresh10-check" not in report["lost_everywhere"]


def test_real_questions_keeps_its_store_with_store(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    """``real-questions --store DIR``: the split's store is built once and kept; a rerun
    asks it without taking the sessions in again, with the same JSON as a run without it
    (but the timings); a session changed, it is built again; a foreign directory is refused."""
    from benchmarks import real_questions

    data = tmp_path / "data"
    data.mkdir()
    name = one_session_split(data)
    settings, cache = fast
    timings = ("ingest_s", "ingest_cpu_s", "recall_ms_mean")

    def asked_with(store: Path | None) -> tuple[dict[str, Any], list[str]]:
        notes: list[str] = []
        report = real_questions.run(settings, data, None, cache.embedder, notes.append, None, store)
        figures = report.to_dict()
        figures["load"] = {k: v for k, v in figures["load"].items() if k not in timings}
        return figures, notes

    store = tmp_path / "store"
    plain, _ = asked_with(None)
    built, building = asked_with(store)
    again, asking = asked_with(store)
    assert plain == built == again and plain["per_question"][0]["top"]
    assert "taking the sessions in" in building and "taking the sessions in" not in asking
    with (data / name).open("a") as changed:
        changed.write("\n")
    assert "taking the sessions in" in asked_with(store)[1]
    record = store / real_questions.STORE_RECORD
    built_from = json.loads(record.read_text())["built_from"]
    record.write_text(json.dumps({"built_from": built_from}))  # as a build cut short leaves it
    assert "taking the sessions in" in asked_with(store)[1]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty and holds no taken_in.json"):
        asked_with(foreign)
    assert (foreign / "keep.txt").read_text() == "mine"
    with pytest.raises(InputError, match="is not a directory"):
        asked_with(foreign / "keep.txt")


def test_the_held_out_split_stands_alone_and_joins_the_dev_store(
    tmp_path: Path, fast: tuple[Any, EmbeddingCache]
) -> None:
    """The held-out split: its sessions listed with their sources and licences (their texts
    in the repository), every question about one of them, half plain and half reworded;
    taken in beside another split's sessions, in one store."""
    from benchmarks import real_questions
    from benchmarks.session_quality import GOLD

    sessions, questions = real_questions.load_questions(real_questions.HELDOUT)
    assert len(questions) >= 40 and {q.half for q in questions} == {"heldout"}
    rows = json.loads((real_questions.HELDOUT / "questions.json").read_text())["questions"]
    kinds = [row["kind"] for row in rows]
    assert min(kinds.count("plain"), kinds.count("reworded")) >= 20
    licences = {s["source"]["licence"] for s in sessions}
    assert licences == {"MIT", "Apache-2.0"}
    assert all((real_questions.HELDOUT / "licences").glob(f"*-{name}.txt") for name in licences)
    dev = tmp_path / "dev"
    dev.mkdir()
    name = "cc2-cclog-256ba646.jsonl"
    (dev / name).write_bytes((GOLD / name).read_bytes())
    listed = [{"file": name, "client": "claude-code", "project": "claude_p"}]
    (dev / "manifest.json").write_text(json.dumps({"sessions": listed}))
    held = tmp_path / "held"
    held.mkdir()
    ask = next(s for s in sessions if s["file"] == "cc2-cclogme-5ed31c36.jsonl")
    (held / ask["file"]).write_bytes((real_questions.HELDOUT / ask["file"]).read_bytes())
    # a session memctl cannot read is named in the load, not fatal: its questions go unfound
    (held / "unread.json").write_text(json.dumps({"messages": [{"speaker": "x"}]}))
    unread = {"file": "unread.json", "client": "generic", "project": "naya"}
    (held / "manifest.json").write_text(json.dumps({"sessions": [ask, unread]}))
    asked = [r for r in rows if r["session"] == ask["file"]]
    (held / "questions.json").write_text(json.dumps({"questions": asked}))
    settings, cache = fast
    report = real_questions.run(settings, held, None, cache.embedder, beside=dev)
    assert report.load["sessions"] == 2
    assert [line.split(":")[0] for line in report.load["not_read"]] == ["unread.json"]
    assert {(r["scoping"], r["half"]) for r in report.rows} == {
        (s, h) for s in ("project", "everywhere") for h in ("heldout", "all")
    }


@pytest.mark.parametrize(
    ("split", "least", "clients"),
    [
        ("fresh", 40, {"claude-code", "generic"}),
        ("fresh2", 40, {"claude-code", "generic"}),
        ("fresh3", 30, {"generic"}),  # SpecStory histories: no client of memctl's own
        ("fresh4", 30, {"generic"}),  # likewise, eight sessions of each of three projects
        ("fresh5", 40, {"claude-code"}),  # Claude Code's own JSONL, three projects
        ("fresh6", 40, {"claude-code", "codex", "opencode"}),  # three clients' own formats
        ("fresh7", 40, {"claude-code", "gemini"}),  # Claude Code JSONL, Gemini CLI documents
        ("fresh8", 45, {"claude-code", "codex", "gemini"}),  # three clients, two projects
        ("fresh9", 55, {"claude-code", "copilot", "opencode", "generic"}),  # Codex via SpecStory
        ("fresh10", 40, {"claude-code", "codex", "generic"}),  # Cursor via SpecStory
    ],
)
def test_the_fresh_splits_list_their_sources_and_halves_fixed_by_session(
    split: str, least: int, clients: set[str]
) -> None:
    """A fresh split: every question about a listed session, its half the session's, the
    halves alternating over the sessions sorted by file name; licence texts beside them."""
    from benchmarks import real_questions

    directory, beside = real_questions.SPLITS[split]
    sessions, questions = real_questions.load_questions(directory)
    ordered = sorted(s["file"] for s in sessions)
    halves = {name: (f"{split}-tune", f"{split}-check")[i % 2] for i, name in enumerate(ordered)}
    assert beside == real_questions.GOLD and set(halves.values()) <= set(real_questions.HALVES)
    assert all(s["half"] == halves[s["file"]] for s in sessions)
    assert len(questions) >= least and all(q.half == halves[q.session] for q in questions)
    assert {s["client"] for s in sessions} == clients
    for licence in {s["source"]["licence"] for s in sessions}:
        assert list((directory / "licences").glob(f"*-{licence}.txt")), licence


def test_the_plain_split_asks_of_other_splits_sessions_each_at_its_own_time() -> None:
    """The plain split: its sessions are the heldout and fresh3 splits' (by path), every
    keyword is in its session's file, each question has a "now" in its session's year and
    its halves split the projects; a digest of the question's session answers a question
    asking for a whole session, and only of that session."""
    from benchmarks import real_questions
    from benchmarks.real_questions import Answer, Hit

    directory, beside = real_questions.SPLITS["plain"]
    sessions, questions = real_questions.load_questions(directory)
    assert beside == real_questions.GOLD and len(questions) >= 30
    assert (
        {q.half for q in questions} == {"plain-tune", "plain-check"} <= set(real_questions.HALVES)
    )
    project = {s["file"]: s["project"] for s in sessions}
    by_half = {
        h: {project[q.session] for q in questions if q.half == h}
        for h in ("plain-tune", "plain-check")
    }
    assert not by_half["plain-tune"] & by_half["plain-check"]
    for question in questions:
        text = (directory / question.session).read_text(encoding="utf-8").lower()
        assert all(k.lower() in text for k in question.keywords), question.id
        assert question.now is not None and question.now[:4] in text, question.id
    asked = next(q for q in questions if q.digest_answers)
    digest = Hit(frozenset({asked.session}), "Asked: something else", "clear", digest=True)
    elsewhere = Hit(frozenset({"other.jsonl"}), "Asked: something else", "clear", digest=True)
    assert Answer(asked, "project", [digest]).found(clear_only=True) == (True, True)
    assert Answer(asked, "project", [elsewhere]).found(clear_only=True) == (False, False)


def test_real_questions_count_clear_matches_apart_when_recall_labels_them() -> None:
    from benchmarks.real_questions import Answer, Hit, Question, figures

    def answer(qid: str, *hits: tuple[str, str, str | None]) -> Answer:
        question = Question(qid, "how do we lint?", "a.jsonl", "check", ("ruff",))
        return Answer(question, "project", [Hit(frozenset({s}), t, m) for s, t, m in hits])

    answers = [
        answer("q1", ("a.jsonl", "lint runs with ruff check", "clear")),
        answer(
            "q2", ("b.jsonl", "deploys go out on Fridays", "clear"), ("a.jsonl", "ruff", "possible")
        ),
        answer("q3"),
    ]
    row = figures(answers)
    assert (row["found@5 auto"], row["found@5 judged"]) == pytest.approx((66.7, 66.7))
    assert (row["clear found@5 auto"], row["clear found@5 judged"]) == pytest.approx((33.3, 33.3))
    assert (row["nothing"], row["no clear match"]) == pytest.approx((33.3, 33.3))
    unlabelled = answer("q4", ("a.jsonl", "lint runs with ruff", None))
    assert "clear found@5 auto" not in figures([unlabelled])


def test_real_questions_list_what_everywhere_loses_of_what_the_project_finds() -> None:
    from benchmarks.real_questions import Answer, Hit, Question, Report

    def asked(qid: str, scoping: str, *hits: tuple[str, str]) -> Answer:
        question = Question(qid, "how do we lint?", "a.jsonl", "check", ("ruff",))
        return Answer(question, scoping, [Hit(frozenset({s}), t, "clear") for s, t in hits])

    answers = [
        asked("q1", "project", ("a.jsonl", "lint runs with ruff")),
        asked("q1", "everywhere", ("b.jsonl", "lint runs with eslint")),
        asked("q2", "project", ("a.jsonl", "lint runs with ruff")),
        asked("q2", "everywhere", ("a.jsonl", "the linter ran")),
        asked("q3", "project", ("a.jsonl", "lint runs with ruff")),
        asked("q3", "everywhere", ("a.jsonl", "lint runs with ruff")),
        asked("q4", "project"),
        asked("q4", "everywhere", ("a.jsonl", "lint runs with ruff")),
    ]
    lost = Report([], answers).to_dict()["lost_everywhere"]
    assert lost == {"check": ["q1 auto+judged", "q2 judged"]}
    assert Report([], answers[4:]).to_dict()["lost_everywhere"] == {}
    blind = [
        Answer(dataclasses.replace(a.question, half="fresh5-check"), a.scoping, a.hits)
        for a in answers
    ]
    assert Report([], blind).to_dict()["lost_everywhere"] == {}  # its ids are never shown


def test_message_speed_dump_writes_the_same_rows_in_every_run(
    make_ctx: Any, tmp_path: Path
) -> None:
    """``message_speed --dump``: each recall's rows with their scores to the last bit and
    labels, asked a day after the store's newest memory, not at the run's clock (an age
    weighs in each score): a message written at the run's time is not there yet, and two
    runs of unchanged code write the same file."""
    from benchmarks.message_speed import dump_recalls
    from memctl.model import Memory, Message, Session
    from memctl.store.memories import insert_memory
    from memctl.store.sessions import insert_messages, save_session

    ctx = make_ctx()
    texts = ["We deploy the billing service with Helm.", "Priya prefers small pull requests."]
    for text, vector in zip(texts, ctx.vectors(texts), strict=True):
        with ctx.db.atomic():
            memory = Memory(content=text, created_at="2026-01-05T10:00:00.000Z")
            insert_memory(ctx.db, memory, vector)
    said = "the billing deploy failed on the gateway API rate limit"
    with ctx.db.atomic():
        save_session(ctx.db, Session(id="s-1", client="generic", scope="global"))
        insert_messages(
            ctx.db,
            [
                Message(Role.USER, said, "2026-01-04T09:00:00.000Z", "s-1", 1),
                Message(Role.USER, said + " again", session_id="s-1", seq=2),  # dated now
            ],
        )
    first, second = tmp_path / "first.tsv", tmp_path / "second.tsv"
    for path in (first, second):
        dump_recalls(ctx, path, "on sessions=True", sessions=True)
    rows = [line.split("\t") for line in first.read_text().splitlines()]
    assert first.read_text() == second.read_text()
    deploy = [r for r in rows if r[2] == "how do we deploy the billing service?"]
    assert "s-1#1" in {r[4] for r in deploy}
    assert "s-1#2" not in {r[4] for r in rows}, "said after the dump's clock"
    assert all(r[6] in ("clear", "possible") and float(r[5]) > 0 for r in deploy)


def test_real_prompts_reads_each_hand_marked_paste_from_its_session(tmp_path: Path) -> None:
    """The marks name a session, its user turn and lines as the parsers read them: a parser
    that reads a turn otherwise makes the mark an error, not another paste."""
    from benchmarks import real_prompts

    pastes = real_prompts.load_pastes()
    assert {p.half for p in pastes} == {"tune", "check"}
    assert all(p.text.strip() and "\n" in p.text for p in pastes)
    moved = {"session": "real/cc1-cclog-b25638d7.jsonl", "turn": 0, "lines": [0, 1]}
    marks = tmp_path / "pastes.json"
    marks.write_text(json.dumps({"pastes": [{**moved, "kind": "css", "starts": "ul#models"}]}))
    with pytest.raises(InputError, match="no longer fits its mark"):
        real_prompts.load_pastes(marks)
