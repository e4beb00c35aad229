"""recall, link, unlink and profile as a user runs them: real processes, the real model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.test_cli import fails, ok
from tests.conftest import ROOT, Shared, run_cli, shared

A, B, C, D = ("a" * 32, "b" * 32, "c" * 32, "d" * 32)
STORE = [
    {
        "id": A,
        "content": "We release with `make release` from the main branch.",
        "category": "patterns",
    },
    {
        "id": B,
        "content": "The release signing key lives in Vault at secret/cosign.",
        "category": "entities",
    },
    {
        "id": C,
        "content": "Priya prefers small pull requests.",
        "category": "preferences",
        "importance": 0.9,
        "created_at": "2026-01-05T10:00:00.000Z",
    },
    {
        "id": D,
        "content": "Priya is the tech lead of the checkout team.",
        "category": "profile",
        "importance": 0.7,
    },
]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Shared:
    """STORE, imported once for the module."""
    with shared(tmp_path_factory, user_cache, "store") as place:
        ok("import", "-", input="\n".join(json.dumps(m) for m in STORE) + "\n")
    return place


@pytest.fixture
def loaded(imported: Shared, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's home: a copy of ``imported``, run from its project."""
    monkeypatch.chdir(imported.copy(home).project)


def test_output_formats_and_explain(loaded: None) -> None:
    data = json.loads(ok("recall", "how do we release?", "--format", "json"))
    first = data["results"][0]
    assert first["id"] == A and data["mode"] == "smart"
    assert {"fuse", "decay", "importance", "mmr"} <= set(first["factors"])
    assert ok("recall", "how do we release?", "--format", "ids").split()[0] == A
    block = ok("recall", "how do we release?", "--format", "context", "--budget", "25")
    lines = block.strip().splitlines()
    assert lines[0] == "<memctl-context>" and lines[-1] == "</memctl-context>"
    assert "## patterns" in block and "make release" in block
    assert "signing key" not in block  # the second memory does not fit in 25 tokens
    explained = ok("recall", "how do we release?", "--explain")
    assert "found by: bm25 #1, vector #1" in explained and "factors:" in explained


@pytest.mark.fresh
def test_link_why_not_and_profile(loaded: None) -> None:
    assert "linked aaaaaaaa --depends_on(0.9)--> bbbbbbbb" in ok(
        "link", A[:6], B[:6], "--type", "depends_on", "--weight", "0.9"
    )
    found = json.loads(ok("recall", "main branch", "--json", "--explain", "--no-touch"))
    graph = [r for r in found["results"] if r["graph_path"]]
    assert graph and graph[0]["graph_path"] == "aaaaaaaa --depends_on--> bbbbbbbb"
    why = json.loads(ok("recall", "make release", "--why-not", B[:8], "--json"))
    # shown, but not as a clear match: the gate says why
    assert why["recalled"] is True and why["stage"] == "fuse"
    assert why["reason"].startswith(f"recalled at rank {why['rank']} as a possible: ")
    # no word of the question, a vector no closer than an unrelated one's: not offered
    why = json.loads(ok("recall", "make release", "--why-not", D[:8], "--json"))
    assert why["recalled"] is False and "no evidence at all" in why["reason"], why
    assert "unlinked" in ok("unlink", A[:6], B[:6])
    profile = json.loads(ok("profile", "--json"))
    assert [m["id"] for m in profile["profile"]] == [D]
    assert [m["id"] for m in profile["preferences"]] == [C]
    assert ok("profile").startswith("Profile\n- Priya is the tech lead")


def test_as_of_history_and_sessions(loaded: None) -> None:
    early = json.loads(ok("recall", "Priya", "--as-of", "2026-02-01", "--json"))
    assert [r["id"] for r in early["results"]] == [C]  # the others did not exist yet
    done = run_cli("recall", "Priya", "--sessions", "--json")
    assert done.returncode == 0 and done.stderr == ""


def test_sessions_leg_finds_raw_messages_in_a_store_without_memories(tmp_path: Path) -> None:
    fresh = ("--home", str(tmp_path / "fresh"))
    ok(
        *fresh,
        "ingest",
        "--mode",
        "raw",
        "--session-id",
        "s1",
        input="user: the rollout moved to Friday\nassistant: noted\n",
        env={"MEMCTL_LLM": "none"},
    )
    left_out = ok(*fresh, "recall", "rollout Friday", "--no-sessions", "--json")
    assert json.loads(left_out)["results"] == []
    # The message competes on both legs: its words and its meaning (it is embedded).
    found = json.loads(ok(*fresh, "recall", "rollout Friday", "--json"))
    assert [(r["content"], r["from_session_messages"]) for r in found["results"]] == [
        ("the rollout moved to Friday", True)
    ]
    key = found["results"][0]["id"]
    assert key == "s1#1"
    assert "the rollout moved to Friday" in ok(*fresh, "get", key)
    why = json.loads(
        ok(*fresh, "recall", "rollout Friday", "--no-sessions", "--why-not", key, "--json")
    )
    assert "--no-sessions leaves them out" in why["reason"] and why["recalled"] is False
    why = json.loads(ok(*fresh, "recall", "rollout Friday", "--why-not", key, "--json"))
    assert why["recalled"] is True and why["rank"] == 1
    # the table shows the message as SESSION#N, and sessions expand opens it there
    table = ok(*fresh, "recall", "rollout Friday", "--explain")
    assert "s1#1" in table and "message" in table
    assert "memctl sessions expand s1#1" in table
    opened = ok(*fresh, "sessions", "expand", "s1#1")
    assert ">[1] user" in opened and "the rollout moved to Friday" in opened


def test_why_not_names_a_message_as_the_table_does(tmp_path: Path) -> None:
    """The walk asked --why-not of a message (SESSION#N) and read "ae4a77f8: recalled at
    rank 4": its session's first 8 digits, which message not said."""
    fresh = ("--home", str(tmp_path / "fresh"), "-c", "llm=none")
    said = "user: the rollout moved to Friday\nassistant: noted\n"
    ok(*fresh, "ingest", "--mode", "raw", "--session-id", "rollout-notes-2026", input=said)
    why = ok(*fresh, "recall", "rollout Friday", "--why-not", "rollout-notes-2026#1")
    assert why.startswith("rollout-note#1: recalled at rank 1"), why


def test_a_fact_and_the_message_it_was_said_in_are_one_result(tmp_path: Path) -> None:
    home = ("--home", str(tmp_path / "home"))
    said = "from now on always use pnpm, never npm, in the web frontend"
    ok(
        *home,
        "ingest",
        "--session-id",
        "s1",
        "--wait",
        input=f"user: {said}\nassistant: understood\n",
        env={"MEMCTL_LLM": "none"},
    )
    found = json.loads(ok(*home, "recall", "pnpm frontend", "--json"))["results"]
    same = [r for r in found if said in r["content"]]
    assert len(same) == 1 and not same[0]["from_session_messages"]
    assert same[0]["messages"] == ["s1#1"] and same[0]["match"] == "clear"
    explained = ok(*home, "recall", "pnpm frontend", "--explain")
    assert "message:  s1#1 (the same, said in the session)" in explained


def test_a_possible_matchs_explanation_says_which_cosine_ranked_it_and_why_words_did_not_count(
    tmp_path: Path,
) -> None:
    """The Quick start's release question: the deploy memory's ``match:`` line weighs the
    cosine of its text alone, its rank the cosine of its searched vector (text and names),
    under which its shared words count for nothing: ``possible:`` says so, with the numbers."""
    home = ("--home", str(tmp_path / "home"))
    ok(*home, "import", str(ROOT / "examples" / "memories.jsonl"), real_model=True)
    asked = ("recall", "when do we release to customers?", "--json", "--explain")
    found = json.loads(ok(*home, *asked, real_model=True))["results"]
    deploy = next(r for r in found if "make release" in r["content"])
    assert deploy["match"] == "possible"
    why = next(s["why"] for s in deploy["explain"]["steps"] if s["stage"] == "possible")
    distance = deploy["explain"]["legs"]["vector"]["distance"]
    used = re.search(r"cosine ([0-9.]+) to its searched vector: its text and the names", why)
    assert used is not None, why
    assert abs(float(used[1]) - (1 - distance)) < 0.001  # the cosine the rank weighed
    assert f"relevance {used[1]} (" in why  # ... and all of its relevance
    assert "not counted: that cosine is below recall.words_cosine 0.3" in why, why
    table = ok(*home, *asked[:2], "--explain", real_model=True)
    assert "not counted" in " ".join(table.split()), table


def test_a_name_only_the_session_messages_say_is_no_stranger(tmp_path: Path) -> None:
    home = ("--home", str(tmp_path / "home"))
    said = (
        "user: Caroline passed the adoption agency interviews last Friday\n"
        "assistant: that is great news for her family plans\n"
        "user: the deploy moved to Thursday\n"
    )
    raw = ("ingest", "--mode", "raw", "--session-id", "c1")
    assert run_cli(*home, *raw, input=said, env={"MEMCTL_LLM": "none"}).returncode == 0
    remembered = run_cli(*home, "remember", "We deploy with make release.", real_model=True)
    assert remembered.returncode == 0
    asked = ("recall", "what did Caroline say about the adoption agency?", "--json")
    found = json.loads(run_cli(*home, *asked, real_model=True).stdout)["results"]
    # no memory names Caroline, but a message does: the question is about the store
    assert (found[0]["id"], found[0]["match"]) == ("c1#1", "clear")
    without = json.loads(run_cli(*home, *asked, "--no-sessions", real_model=True).stdout)
    assert {r["match"] for r in without["results"]} == {"possible"}


def test_a_question_asked_before_is_no_clear_answer_to_itself(tmp_path: Path) -> None:
    home = ("--home", str(tmp_path / "home"))
    raw = ("ingest", "--mode", "raw", "--session-id")
    asked = "user: which reverse proxy sits in front of the app?\nassistant: let me check\n"
    said = "user: we use Caddy in front of the app; it renews the certificates\nassistant: ok\n"
    for session, text in (("asked", asked), ("said", said)):
        assert run_cli(*home, *raw, session, input=text, env={"MEMCTL_LLM": "none"}).returncode == 0
    query = ("recall", "which reverse proxy sits in front of the app?", "--json")
    found = json.loads(run_cli(*home, *query, real_model=True).stdout)["results"]
    # the answer leads, clear; the question asked before points at its session, possible
    assert (found[0]["id"], found[0]["match"]) == ("said#1", "clear")
    assert [r["match"] for r in found if r["id"] == "asked#1"] == ["possible"]
    explained = run_cli(*home, *query[:2], "--explain", real_model=True).stdout
    assert "a user's question only" in " ".join(explained.split())


OLIVER = [
    {
        "content": "Oliver is our cat; he hides his bones under the sofa.",
        "created_at": "2026-11-03T09:00:00.000Z",
    },
    {
        "content": "Oliver sees the vet every spring for his shots.",
        "created_at": "2026-11-05T09:00:00.000Z",
    },
    {
        "content": "Oliver's food is the salmon kind from the corner shop.",
        "created_at": "2026-11-12T09:00:00.000Z",
    },
    {
        "content": "Sam's knee is much better since the surgery.",
        "created_at": "2026-11-20T09:00:00.000Z",
    },
]


def test_a_name_no_memory_mentions_leaves_a_question_no_clear_match(tmp_path: Path) -> None:
    home = ("--home", str(tmp_path / "home"))
    memories = "\n".join(json.dumps(m) for m in OLIVER) + "\n"
    assert run_cli(*home, "import", "-", input=memories, real_model=True).returncode == 0

    def matches(question: str) -> list[tuple[str, str]]:
        asked = ("recall", question, "--as-of", "2026-12-01", "--json")
        found = json.loads(run_cli(*home, *asked, real_model=True).stdout)["results"]
        return [(r["content"], r["match"]) for r in found]

    # the store knows Oliver, and holds his vet visits: asked in other words, still clear
    vet = matches("when does Oliver get his vaccinations?")
    assert vet[0] == (OLIVER[1]["content"], "clear")
    # but no memory mentions Nairobi: the memories naming Oliver are about something else
    flight = matches("When does Oliver's flight to Nairobi land?")
    assert flight and {match for _, match in flight} == {"possible"}
    # nor Dr. Okonkwo: a November memory about Sam's knee is not what he said of mine
    knee = matches("What did Dr. Okonkwo say about my knee in November?")
    assert knee and {match for _, match in knee} == {"possible"}


def test_bad_input_is_one_line_and_changes_nothing(loaded: None) -> None:
    assert "no memory with id ffffffff" in fails(3, "recall", "x", "--why-not", "ffffffff")
    assert "cannot read the time" in fails(2, "recall", "x", "--as-of", "someday")
    assert "--budget takes a number" in fails(2, "recall", "x", "--budget", "-5")
    assert "--format takes one of" in fails(2, "recall", "x", "--format", "yaml")
    assert "--mode takes one of" in fails(2, "recall", "x", "--mode", "lazy")
    assert "no memory with id eeeeeeee" in fails(3, "link", A, "eeeeeeee")
    assert "cannot be linked to itself" in fails(2, "link", A, A[:5])
    assert "cannot be set by hand" in fails(2, "link", A, B, "--type", "supersedes")
    assert "no relation between" in fails(3, "unlink", A, B)
    assert json.loads(ok("get", A, "--json"))["relations"] == []


def test_a_question_naming_someone_most_memories_mention_is_answered_by_its_meaning(
    tmp_path: Path,
) -> None:
    """Priya is in nearly every memory: her name says nothing about which one answers,
    so recall ranks them by the rest of the question (the vector legs embed it without
    her name; BM25, which finds nothing else, does not rank by her name alone)."""
    home = ("--home", str(tmp_path / "home"))
    said = [
        "Priya: the staging deploy is green again",
        "Priya asked us to keep pull requests small",
        "Priya: thanks for the review!",
        "Hey Priya, the CI cache is warm now",
        "Priya: I'll pair with you on the flaky test tomorrow",
        "Priya: good morning everyone",
        "Priya reviewed the migration script before lunch",
        "Priya: lunch at noon?",
        "Priya: at home I mostly write Rust, and some Elixir on weekends",
        "Priya: see you at the standup",
        "The release checklist lives in docs/release.md",
        "Use uv to create the Python environments",
    ]
    lines = "".join(json.dumps({"content": text}) + "\n" for text in said)
    assert run_cli(*home, "import", "-", input=lines, real_model=True).returncode == 0
    asked = ("recall", "Which programming languages does Priya code in?", "--json")
    found = json.loads(run_cli(*home, *asked, real_model=True).stdout)["results"]
    assert found[0]["content"] == said[8] and found[0]["match"] == "clear"
    # the name alone ranked them by length: the shortest greeting first
    by_name = ("-c", "recall.common_name_share=0")
    before = json.loads(run_cli(*home, *by_name, *asked, real_model=True).stdout)["results"]
    assert before[0]["content"] != said[8]


TEAM_NOTES = [
    "Run the unit tests with `pytest -x -q tests/unit`.",
    "Write dates as ISO 8601 (2024-05-01) in docs and logs.",
    "Deploys: `make ship` from main, needs VPN.",
    "Primary database is PostgreSQL 15 on RDS, with read replicas in the same region.",
]
SERVICES = "billing search checkout invoices ledger accounts catalog pricing payouts inbox".split()
SERVICE_NOTES = [
    "The {0} service is owned by the {0} squad; page them in #{0}-oncall.",
    "The {0} service answers on port 80{1:02d} in local development.",
    "The {0} service writes its audit trail to the {0}_events table.",
    "Feature work on {0} is planned on the {0} board every second Monday.",
    "The {0} service's README explains how to seed its fixtures.",
]


def team_notes(services: int) -> str:
    """TEAM_NOTES beside five notes on each of ``services`` services, as JSON lines."""
    notes = TEAM_NOTES + [
        note.format(name if i < len(SERVICES) else f"{name}{i}", i)
        for i, name in enumerate((SERVICES * 5)[:services])
        for note in SERVICE_NOTES
    ]
    return "".join(json.dumps({"content": note}) + "\n" for note in notes)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Shared:
    """The 204 notes of a team (``team_notes(40)``), imported on the real model once for the
    module (~2 s of CPU): each test recalls in its own copy (a recall counts its reads)."""
    with shared(tmp_path_factory, user_cache, "team") as place:
        imported = run_cli("import", "-", input=team_notes(40), real_model=True)
        assert imported.returncode == 0, imported.stderr
    return place


@pytest.fixture
def team_home(team: Shared, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's home: a copy of ``team``, run from its project."""
    monkeypatch.chdir(team.copy(home).project)
    return home


def recalled(home: Path, question: str) -> list[tuple[str, str]]:
    """(content, match) of each result of recalling ``question`` in ``home``, on the real
    model."""
    asked = ("--home", str(home), "recall", question, "--json")
    found = json.loads(run_cli(*asked, real_model=True).stdout)["results"]
    return [(r["content"], r["match"]) for r in found]


def test_a_software_term_a_large_store_never_names_leaves_no_clear_match(
    team_home: Path, tmp_path: Path
) -> None:
    """k6 is a load-testing tool: 204 notes of a team that never names it, nor load tests, do
    not answer how to run them, however close the unit tests' note is in meaning. A small
    store names few of the terms it could: a reworded question there keeps its clear match."""
    large, small = team_home, tmp_path / "small"
    imported = run_cli("--home", str(small), "import", "-", input=team_notes(0), real_model=True)
    assert imported.returncode == 0, imported.stderr
    unit = recalled(large, "how do I run the unit tests?")
    assert unit[0] == (TEAM_NOTES[0], "clear")
    load = recalled(large, "how do we run load tests with k6?")
    assert load and {match for _, match in load} == {"possible"}
    dates = recalled(small, "what format should timestamps be in?")
    assert dates[0] == (TEAM_NOTES[1], "clear")


def test_a_question_sharing_only_a_frame_word_with_the_closest_note_gets_no_clear_match(
    team_home: Path,
) -> None:
    """Sharding by tenant is nowhere in 204 notes of a team: the database note is the closest
    in meaning, and shares "database", but the lead rule weighs meaning alone, and that is
    too little; the same note asked for in other words is a clear match."""
    shard = recalled(team_home, "do we shard the database by tenant?")
    assert shard[0][0] == TEAM_NOTES[3]  # still offered first, for what it is
    assert {match for _, match in shard} == {"possible"}
    relational = recalled(team_home, "which relational engine is our main store?")
    assert relational[0] == (TEAM_NOTES[3], "clear")


CROWD = [
    f"{('Melanie', 'Caroline', 'Jon', 'Gina')[i % 4]}: {said.format(place)}"
    for i, (said, place) in enumerate(
        (said, place)
        for said in (
            "Going to {} with the kids was the best time this year.",
            "We spend a week at {} every year, it's the best.",
        )
        for place in (
            "the beach",
            "the lake",
            "the mountains",
            "the park",
            "the museum",
            "the zoo",
            "the farm",
            "the coast",
            "the island",
            "the cabin",
        )
    )
]
LAPTOP = "Uses macOS on an M2 MacBook Pro, and Linux on the home server."


def test_a_near_miss_in_a_crowd_of_notes_as_close_is_no_clear_match(tmp_path: Path) -> None:
    """Twenty chat lines about the best time of each year sit close to a question about
    visiting Patagonia, which none of them answers: no line stands above the crowd around the
    question, so none is clear (with recall.crowd_margin at 0, the absolute floor made the
    closest ones clear). A question in other words than the laptop's note keeps it clear."""
    home = ("--home", str(tmp_path / "home"))
    lines = "".join(json.dumps({"content": text}) + "\n" for text in [*CROWD, LAPTOP])
    assert run_cli(*home, "import", "-", input=lines, real_model=True).returncode == 0

    def recalled(question: str, *options: str) -> list[tuple[str, str]]:
        asked = (*home, *options, "recall", question, "--json")
        found = json.loads(run_cli(*asked, real_model=True).stdout)["results"]
        return [(r["content"], r["match"]) for r in found]

    visit = "best time of year to visit patagonia?"
    assert {match for _, match in recalled(visit)} == {"possible"}
    assert "clear" in {match for _, match in recalled(visit, "-c", "recall.crowd_margin=0")}
    assert recalled("which operating system is my laptop?")[0] == (LAPTOP, "clear")
