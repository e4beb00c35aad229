"""The words developers use: the vocabulary table, a word that is also a name, and the
issue's questions on the Quick start's memories through the real CLI and model."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memctl.config import load_settings
from memctl.context import Context
from memctl.retrieve.pipeline import recall
from memctl.retrieve.query import analyse
from memctl.retrieve.stages.candidates import with_synonyms
from memctl.retrieve.vocabulary import (
    SPELLINGS_FILE,
    VOCABULARY_FILE,
    WORD,
    expand,
    is_term,
    other_spellings,
    parse,
    phrase_of,
    vocabulary,
)
from tests.conftest import run_cli

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "memories.jsonl"
SAM = "Sam prefers small pull requests (under 400 lines) and squash merges."
GO = "I am a backend engineer on Tidepool and mostly write Go and Python."
OUTAGE = "In March 2026 an outage was caused by an expired TLS certificate on the API gateway"


def test_the_table_has_its_groups_and_names_its_sources_and_licences() -> None:
    table = vocabulary()
    assert 150 <= len(table.groups) <= 300
    header = VOCABULARY_FILE.read_text().split("\n\n# ---")[0]
    for source, licence in (
        ("agentmemory", "Apache License 2.0"),
        ("abbrcode", "MIT License"),
        ("NetBSD", "BSD 2-Clause"),
    ):
        assert source in header and licence in header
    # the words the issue names are there, both ways
    for word, mate in (
        ("pr", ("pull", "request")),
        ("ci", ("continuous", "integration")),
        ("db", ("database",)),
        ("k8s", ("kubernetes",)),
        ("repo", ("repository",)),
        ("env", ("environment",)),
        ("deploy", ("ship",)),
        ("outage", ("went", "down")),
        ("config", ("settings",)),
    ):
        groups = [table.groups[i] for i in table.by_phrase[(word,)]]
        assert any(mate in group for group in groups), word
        assert any((word,) in table.groups[i] for i in table.by_phrase[mate])


def test_a_group_line_of_one_member_or_a_comment_adds_nothing() -> None:
    table = parse(
        "# a comment\nmc\tlonely\nmc\tdb | database\nverb\tgo | golang\nname\trust | rustlang\n"
    )
    assert table.groups == (
        (("db",), ("database",)),
        (("go",), ("golang",)),
        (("rust",), ("rustlang",)),
    )
    assert table.names == frozenset({"go", "rust"}) and table.verbs == frozenset({"go"})


@pytest.mark.parametrize(
    ("query", "word", "as_name"),
    [
        ("why did the API go down in March?", "go", False),  # a verb, in "go down"
        ("I mostly write Go and Python", "go", True),  # capitalised mid-sentence
        ("we use go modules for the CLI", "go", True),  # a word after it says so
        ("the service is written in rust", "rust", True),  # and the words before it
        ("how do I get the rust off my bike chain", "rust", False),
        ("make sure the deploy waits for the tests", "make", False),
        ("make test fails on the CI runner", "make", True),
        ("Swift is what the iOS app uses", "swift", False),  # a sentence's first word
        ("the iOS app is written in Swift", "swift", True),
    ],
)
def test_a_word_that_is_also_a_name_counts_as_the_name_only_when_written_as_one(
    query: str, word: str, as_name: bool
) -> None:
    analysed = analyse(query, NOW)
    searched = {w for phrase in analysed.alternatives for w in phrase}
    named = {w for phrase in analysed.expansions for w in phrase} - searched
    expansion = expand(query)
    assert (word in expansion.ordinary) is not as_name
    # the name's other spellings only for the name ("golang", "rustlang")
    assert bool(named & {f"{word}lang", "golang", "makefile"}) is as_name
    # a verb used as the verb is left out of the search; an ordinary noun stays in it
    assert (word in searched) is (as_name or word not in ("go", "make"))


def test_go_down_searches_the_outage_words_and_prs_the_pull_requests() -> None:
    api = analyse("why did the API go down in March?", NOW)
    assert {("outage",), ("incident",)} <= set(api.expansions)
    assert ("go",) not in api.alternatives and api.window is not None  # March: a time
    prs = analyse("how big should my PRs be?", NOW)
    assert ("prs",) in prs.alternatives  # one word, not "p" and "rs"
    assert ("pull", "request") in prs.expansions and ("pull", "request") in prs.synonyms["prs"]


def test_mr_is_a_merge_request_only_in_capitals() -> None:
    """s37-para: "Mr. Gallagher" searched pull and merge requests, and a chat memory naming
    a "Mr." had them in its vector."""
    assert expand("How much did the plumber, Mr. Gallagher, charge us?").phrases == ()
    assert expand("mr smith called about the invoice").phrases == ()
    for query in ("who reviews our MRs?", "is the MR merged yet"):
        assert ("pull", "request") in expand(query).phrases


def test_a_query_without_vocabulary_words_is_searched_as_before() -> None:
    analysed = analyse("lunch with Caroline at the pier", NOW)
    assert analysed.expansions == () and analysed.synonyms == {}


def test_a_synonym_counts_less_than_the_query_s_own_word_and_never_on_top_of_it() -> None:
    # the same BM25 for the query's word and for a synonym: the word's memory first
    merged = dict(with_synonyms([], [("synonym", -2.0)], 0.7))
    assert -2.0 < merged["synonym"] < 0  # found by a synonym alone: 0.7 of it
    hits = [("own", -3.0), ("weak", -1.0)]
    merged = dict(with_synonyms(hits, [("synonym", -5.0), ("own", -1.0), ("far", -0.5)], 0.7))
    assert merged["own"] == -3.0  # found by its own words: the synonym adds nothing
    assert merged["synonym"] == pytest.approx(-3.5)  # 0.7 x -5.0
    assert merged["far"] == -1.0  # never below the weakest own hit: the range stays


def _why_not(query: str, content: str) -> dict[str, object]:
    listed = json.loads(run_cli("list", "--json", "--limit", "50").stdout)
    memory_id = next(m["id"] for m in listed if m["content"].startswith(content))
    done = run_cli("recall", query, "--why-not", memory_id, "--json", real_model=True)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_the_issue_s_questions_on_the_quick_start_memories(home: Path) -> None:
    done = run_cli("import", str(EXAMPLES), real_model=True)
    assert done.returncode == 0, done.stderr
    # "go" is the verb: the outage answers first, not the Go developer's profile
    answered = run_cli("recall", "why did the API go down in March?", "--json", real_model=True)
    results = json.loads(answered.stdout)["results"]
    assert results[0]["content"].startswith(OUTAGE)
    assert all(r["content"] != GO for r in results[:1])
    # "PRs" reaches "pull requests": BM25's first hit, and no longer a name the store lacks
    sam = _why_not("how big should my PRs be?", SAM)
    steps = sam["steps"]
    assert isinstance(steps, list) and "found by bm25 #1" in steps[0]["why"]
    assert "which no memory mentions" not in str(sam["reason"])
    # the name "Go" in a question about the language still finds the profile
    language = run_cli("recall", "do I write Go at work?", "--json", real_model=True)
    assert json.loads(language.stdout)["results"][0]["content"] == GO


def test_the_issue_s_questions_give_their_memory_the_best_fused_score(
    home: Path,
    local_embedder,  # type: ignore[no-untyped-def]
) -> None:
    # what recall ranks by once every question is answered: the whole pipeline's fused score
    assert run_cli("import", str(EXAMPLES), real_model=True).returncode == 0
    ctx = Context(load_settings(), embedder=local_embedder)
    try:
        for question, answer in (
            ("how big should my PRs be?", SAM),
            ("why did the API go down in March?", OUTAGE),
            ("what broke last time?", OUTAGE),
            ("when do we release to customers?", "Tidepool deploys to production"),
        ):
            result = recall(ctx, question, touch=False)
            assert result.run is not None
            fused = {s.memory_id: s.score for s in result.run.trace if s.stage == "fuse"}
            best = max(fused, key=lambda memory_id: fused[memory_id])
            content = ctx.db.value("SELECT content FROM memories WHERE id = ?", (best,))
            assert str(content).startswith(answer), question
        prs = recall(ctx, "how big should my PRs be?", touch=False)
        assert prs.run is not None and prs.run.strangers == frozenset()  # pull requests
        other = recall(ctx, "how big should Zorblax's PRs be?", touch=False)
        assert other.run is not None and other.run.strangers == frozenset({"Zorblax"})
        # no clear match for the release question: the TLS outage is closest in meaning
        # (cosine 0.27, no word shared), the deploy memory holds "release" (BM25's first,
        # cosine 0.22): the possible order gives the pipeline's score, where BM25 weighs,
        # enough of a voice to show the deploy memory first
        release = recall(ctx, "when do we release to customers?", touch=False)
        assert not any(r.clear for r in release.results)
        assert release.results[0].memory.content.startswith("Tidepool deploys to production")
    finally:
        ctx.close()


def test_a_name_the_store_writes_in_other_words_is_no_stranger(ctx: Context) -> None:
    # the issue's session: its digest lists credo, dialyzer and mix_audit, never "Elixir"
    from memctl.api import memory as api

    api.remember(ctx, api.RememberRequest("CI runs credo, dialyzer and mix_audit on every PR."))
    known = recall(ctx, "Which linters does the Elixir project run?")
    assert known.run is not None and known.run.strangers == frozenset()
    unknown = recall(ctx, "Which linters does the Haskell project run?")
    assert unknown.run is not None and unknown.run.strangers == frozenset({"Haskell"})


@given(st.text(alphabet="".join(map(chr, range(128))), max_size=60) | st.text(max_size=30))
def test_an_entry_s_words_are_its_words_lowered_one_by_one(text: str) -> None:
    """ASCII entries are lowered whole before they are split (faster); any text gives the
    words the split-then-lower reading gives."""
    assert phrase_of(text) == tuple(w.lower() for w in WORD.findall(text))


def test_a_word_spelt_the_other_way_finds_its_memory(ctx: Context) -> None:
    # a walk's question: "colours" found two clear rows about another session, "colors" the
    # right one, which no word of the question matched; the spellings stay out of the
    # vocabulary's terms (is_term: software words)
    from memctl.api import memory as api

    api.remember(ctx, api.RememberRequest("Make the colors green and yellow in the header."))
    api.remember(ctx, api.RememberRequest("The tokenizer display uses HTML ruby elements now."))
    found = recall(ctx, "what colours did we switch the stylesheet to?", touch=False)
    (colors,) = [r for r in found.results if r.memory.content.startswith("Make the colors")]
    assert "bm25" in colors.ranks  # found by its words: "colours" searched "colors"
    assert not is_term("colours") and not is_term("behaviour")
    assert other_spellings("colour") == (("color",),)
    assert other_spellings("colors") == (("colours",),)  # both ways


def test_each_word_s_other_spellings_are_its_pairs_in_the_file() -> None:
    """Looked up by searching the file: each word of every pair (and a word in a comment,
    or in no pair) gets what reading every pair into a table gives, in the file's order."""
    table: dict[str, dict[tuple[str, ...], None]] = {}
    for line in SPELLINGS_FILE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            british, american = line.split("\t")
            table.setdefault(british, {})[(american,)] = None
            table.setdefault(american, {})[(british,)] = None
    assert len(table) > 3000
    assert {word: other_spellings(word) for word in table} == {
        word: tuple(found) for word, found in table.items()
    }
    assert other_spellings("breame") == other_spellings("deploy") == ()  # a comment's, none
    text = "\n# a\tb\ngrey\tgray\ngrey\tgrey-ish\nmould\tmold\ngrey\tgray\n"
    assert other_spellings("grey", text) == (("gray",), ("grey-ish",))
    assert other_spellings("b", text) == () and other_spellings("gray", text) == (("grey",),)
