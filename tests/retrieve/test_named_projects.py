"""A question that names another project is asked of that project too."""

from __future__ import annotations

import json
from pathlib import Path

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.model import Session
from memctl.retrieve.named_projects import (
    names_project,
    projects_named_in,
    question_words,
    written_as_names,
)
from memctl.store.sessions import save_session
from tests.cli.test_cli import ok


def named(name: str, question: str) -> bool:
    return names_project(name, question_words(question), written_as_names(question))


def test_a_name_of_several_parts_is_named_in_any_spelling() -> None:
    assert named("deep-manifest", "how do I run the deep manifest tests?")
    assert named("deep-manifest", "what broke in deep-manifest last week?")
    assert named("claude-code-log", "type checking in claude_code_log?")
    assert named("claudeCodeLog", "how does the claude code log converter work?")
    assert not named("deep-manifest", "a deep dive into the manifest format")  # not in a row


def test_a_one_word_name_counts_only_where_written_as_a_name() -> None:
    assert named("spotter", "how do I run spotter's tests?")  # possessive
    assert named("spotter", "how do I run the Spotter tests?")  # capitalised mid-sentence
    assert named("ledger", 'what lints "ledger"?')  # quoted
    assert not named("ideas", "any ideas for the export?")  # an ordinary word
    assert not named("Ideas", "Ideas for the export?")  # a sentence's first word
    assert not named("app", "what does App's login do?")  # too short to stand for one
    assert not named("the", "what is The's setting?")  # a function word never names one


def test_the_global_scope_is_never_a_named_project_and_a_project_keeps_its_directory(
    ctx: Context,
) -> None:
    """The global scope's sessions (many, none with a directory) are left out of the names;
    a project's name is its latest session's directory, a session without one not counted."""
    with ctx.db.atomic():
        for n in range(30):
            save_session(ctx.db, Session(id=f"g{n}", client="generic", scope=GLOBAL_SCOPE))
        save_session(ctx.db, Session(id="p1", client="generic", scope="path:1", cwd="/src/ledger"))
        save_session(ctx.db, Session(id="p2", client="generic", scope="path:1"))
    assert projects_named_in(ctx, "what lints Ledger's code?") == {"path:1": "ledger"}
    assert projects_named_in(ctx, "what is in the Global settings?") == {}


def transcript(cwd: str, session: str, request: str) -> str:
    lines = [
        {
            "type": role,
            "cwd": cwd,
            "sessionId": session,
            "uuid": f"{session}-{n}",
            "timestamp": f"2026-03-0{n + 1}T10:00:00.000Z",
            "message": {"role": role, "content": text},
        }
        for n, (role, text) in enumerate([("user", request), ("assistant", "Done.")])
    ]
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def test_recall_from_elsewhere_answers_from_the_project_the_question_names(
    tmp_path: Path,
) -> None:
    """Two projects' sessions and facts; asked from a third directory, a question naming
    one gets that project's fact (clear); a question naming none, asked from a directory in no
    project that holds nothing, is asked of every project."""
    projects = {
        "deep-manifest": ("/home/alice/src/deep-manifest", "tests run with `pytest -q tests/`"),
        "ledger": ("/home/alice/src/ledger", "tests run with `npm test -- --runInBand`"),
    }
    for n, (cwd, fact) in enumerate(projects.values()):
        path = tmp_path / f"s{n}.jsonl"
        path.write_text(transcript(cwd, f"session-{n}", "please add a test runner"))
        ok("ingest", "--transcript", str(path), "--mode", "raw")
        ok("remember", fact, "-s", cwd, "--category", "patterns")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def answers(question: str) -> list[str]:
        found = json.loads(ok("recall", question, "--json", "--no-sessions", cwd=elsewhere))
        return [r["content"] for r in found["results"] if r["match"] == "clear"]

    assert answers("how do I run the deep manifest tests?") == [projects["deep-manifest"][1]]
    assert answers("how do I run the Ledger tests?") == [projects["ledger"][1]]
    # no project named, from a directory in no project that holds nothing: every project
    assert sorted(answers("how do I run the tests?")) == sorted(f for _, f in projects.values())
    explained = ok("recall", "how do I run the deep manifest tests?", "--explain", cwd=elsewhere)
    assert "scope: the project the question names" in explained


def test_across_all_projects_the_named_one_keeps_its_answer(ctx: Context) -> None:
    """Thirty other projects each say in fewer words how their spotter's tests run; across
    all projects, the named project's own note comes first (the scope weighs the candidates
    before the cap keeps the best twenty: it was cut at rank 27)."""
    from memctl.api.recall import RecallRequest, recall
    from memctl.memories.operations import remember

    with ctx.db.atomic():
        for n in range(30):
            save_session(ctx.db, Session(id=f"s{n}", client="generic", scope=f"path:{n}"))
        save_session(
            ctx.db, Session(id="sp", client="generic", scope="path:sp", cwd="/src/spotter")
        )
    for n in range(30):
        remember(ctx, f"spotter {n}: run the tests with `make t{n}`", scope=f"path:{n}")
    answer = remember(
        ctx,
        "spotter: run the tests with `mix test`, from the umbrella app root directory once "
        "deps are fetched",
        scope="path:sp",
    )
    found = recall(
        ctx, RecallRequest("how do I run spotter's tests?", all_scopes=True, touch=False)
    )
    assert found.result.results[0].memory.id == answer.id


def test_across_all_projects_another_projects_message_needs_more_of_the_words(
    tmp_path: Path,
) -> None:
    """Asked with --all-scopes from inside a project, a session message of another project
    holding its rarest word (a share of 0.38, by rarity) is a possible match, not a clear
    one: its words weigh less than the asked project's. Asked from outside every project,
    or from its own, it is clear."""
    here, there = tmp_path / "invoices", tmp_path / "scheduler"
    question = "which folder do the nightly invoice exports rotate into?"
    said = "the nightly job is slow again"
    for n, (cwd, request) in enumerate([(here, "add the invoice export"), (there, said)]):
        cwd.mkdir()
        path = tmp_path / f"s{n}.jsonl"
        path.write_text(transcript(str(cwd), f"session-{n}", request))
        ok("ingest", "--transcript", str(path), "--mode", "raw")
    ok("remember", "invoice exports rotate into /srv/archive", "--category", "patterns", cwd=here)

    def label(cwd: Path) -> str:
        found = json.loads(ok("recall", question, "--all-scopes", "--json", cwd=cwd))
        return next(r["match"] for r in found["results"] if r["content"] == said)

    assert label(here) == "possible"
    assert label(tmp_path) == "clear"  # outside every project: no project weighs less
    assert label(there) == "clear"
    explained = ok("recall", question, "--all-scopes", "--explain", cwd=here)
    assert "a message of another project" in explained
    # named as the viewer names it, not by its scope id ("another scope (path:6fec8f…)")
    assert f"scope: another scope ({there}" in " ".join(explained.split())
    assert "(path:" not in explained


def test_another_projects_answer_is_possible_when_the_question_names_a_project(
    real_ctx: Context,
) -> None:
    """Asked from everywhere, "how do I run the tests in the order service?" is not answered
    by another project's test command, however close in meaning: that row is possible, and
    among the possible rows the named project's own command comes first. A memory of
    another project that names the order service itself keeps its evidence."""
    from memctl.api.recall import RecallRequest, recall
    from memctl.memories.operations import remember

    ctx = real_ctx
    with ctx.db.atomic():
        save_session(
            ctx.db,
            Session(id="o", client="generic", scope="path:o", cwd="/home/lin/order-service"),
        )
        for n, cwd in enumerate(["/src/rust-port", "/src/site", "/src/ledger"]):
            save_session(ctx.db, Session(id=f"p{n}", client="generic", scope=f"path:{n}", cwd=cwd))
    own = remember(
        ctx, "export tests run with `uv run pytest tests/test_export.py -q`", scope="path:o"
    )
    cargo = remember(ctx, "tests run with `cargo test`", scope="path:0")
    npm = remember(ctx, "tests run with `npm test`", scope="path:1")
    naming = remember(ctx, "the order service's tests need Postgres running", scope="path:2")

    def labels(question: str) -> list[tuple[str, bool]]:
        found = recall(ctx, RecallRequest(question, all_scopes=True, touch=False)).result
        return [(r.memory.id, r.clear) for r in found.results]

    # no project named: every project's answer is clear
    assert {(cargo.id, True), (npm.id, True)} <= set(labels("how do I run the tests?"))
    found = labels("how do I run the tests in the order service?")
    assert (naming.id, True) in found
    possible = [memory for memory, clear in found if not clear]
    assert possible[0] == own.id
    assert {cargo.id, npm.id} <= set(possible)
