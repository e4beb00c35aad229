"""What is no longer true, labelled everywhere: a superseded fact's message and the reply
that repeats it (the stale stage), the weaker side of a contradiction (status), in the
table, JSON and MCP answers; and what a fold took, never brought back by a neighbour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memctl.api import ingest as ingest_api
from memctl.cli.recall_out import json_answer, results_table
from memctl.context import Context
from memctl.integrations.mcp_search import hit
from memctl.model import Memory, State
from memctl.retrieve.pipeline import Recalled, recall
from memctl.store.memories import MemoryFilter, list_memories
from tests.ingesting import claude_record

QUESTION = "which editor do I use?"


def told(ctx: Context, tmp_path: Path, session: str, text: str, n: int, *turns: str) -> None:
    """A Claude Code session of the user's ``text`` and a reply (then ``turns``, user and
    assistant in turn), through ``ingest --wait``."""
    said = [text, *(turns or ("Got it.",))]
    lines = [
        claude_record("user" if i % 2 == 0 else "assistant", line, n + i, session)
        for i, line in enumerate(said)
    ]
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ingest_api.ingest(ctx, ingest_api.IngestRequest(transcript=str(path), wait=True))


def facts(ctx: Context) -> dict[str, Memory]:
    return {m.content: m for m in list_memories(ctx.db, MemoryFilter(), None)}


def row(results: list[Recalled], text: str) -> Recalled:
    return next(r for r in results if r.memory.content == text)


def test_the_superseded_facts_message_ranks_below_its_replacement_labelled_older(
    make_ctx: Any, tmp_path: Path
) -> None:
    """s28-stale: after "My editor is vim." then "My editor is helix." (rules only), the
    vim message went with its superseded memory (folded into it, then left out), or, when
    the memory was no candidate, came back clear: now it follows helix, possible, naming
    what replaced it."""
    ctx = make_ctx()
    told(ctx, tmp_path, "vim-session", "My editor is vim.", 0)
    told(ctx, tmp_path, "helix-session", "My editor is helix.", 100)
    facts = {m.content: m for m in list_memories(ctx.db, MemoryFilter(), None)}
    vim, helix = facts["My editor is vim."], facts["My editor is helix."]
    assert (vim.state, vim.superseded_by) == (State.SUPERSEDED, helix.id)
    results = recall(ctx, QUESTION, sessions=True, touch=False).results
    ids = [r.memory.id for r in results]
    older = next(r for r in results if r.is_message and r.memory.content == "My editor is vim.")
    assert not older.clear and f"superseded by {helix.id[:8]}" in older.match_why
    assert ids.index(helix.id) < ids.index(older.memory.id)
    assert vim.id not in ids  # the superseded memory itself still needs --history


def test_a_message_holding_a_standing_fact_too_is_older_only_for_the_replaced_one(
    make_ctx: Any, tmp_path: Path
) -> None:
    """One message, two facts, one of them replaced later: asked about the replaced one, the
    message is an older statement; asked about the other, it still says what holds."""
    ctx = make_ctx()
    told(ctx, tmp_path, "both", "My editor is vim. We always deploy with make ship.", 0)
    told(ctx, tmp_path, "helix-session", "My editor is helix.", 100)
    states = {m.content: m.state for m in list_memories(ctx.db, MemoryFilter(), None)}
    assert states["My editor is vim."] == State.SUPERSEDED
    assert State.ACTIVE in {s for text, s in states.items() if "make ship" in text}

    def row(question: str) -> Recalled:
        results = recall(ctx, question, sessions=True, touch=False).results
        return next(r for r in results if "make ship" in r.memory.content)

    assert "older statement" in row(QUESTION).match_why
    deploy = row("how do we deploy?")
    assert deploy.clear and "older statement" not in deploy.match_why


def test_the_assistants_reply_repeating_a_replaced_value_is_an_older_statement_too(
    make_ctx: Any, tmp_path: Path
) -> None:
    """s29-stale: "Noted: you use vim." (the reply to "My editor is vim.") stayed a clear
    row beside helix after the switch, and "I'll keep using yarn" beside "switched from yarn
    to pnpm". Now each is labelled as the statement it repeats, in the JSON, the MCP answer
    and the table; a reply in that turn about something else the query asks stays as it was."""
    ctx = make_ctx()
    told(ctx, tmp_path, "vim", "My editor is vim.", 0, "Noted: you use vim.")
    told(
        ctx,
        tmp_path,
        "yarn",
        "We use yarn for the shop's packages. Please add lodash.",
        10,
        "Added lodash with yarn add lodash; the tests pass.",
    )
    told(ctx, tmp_path, "helix", "My editor is helix.", 100)
    told(ctx, tmp_path, "pnpm", "We switched from yarn to pnpm for the shop's packages.", 110)
    known = facts(ctx)
    helix, pnpm = known["My editor is helix."], known[next(t for t in known if "pnpm" in t)]
    assert known["My editor is vim."].state == State.SUPERSEDED
    assert known["We use yarn for the shop's packages."].state == State.SUPERSEDED

    result = recall(ctx, QUESTION, sessions=True, touch=False)
    echo = row(result.results, "Noted: you use vim.")
    assert (echo.clear, echo.match_reason, echo.replaced_by) == (False, "superseded", helix.id)
    assert "repeats an older statement (vim#1)" in echo.match_why
    ids = [r.memory.id for r in result.results]
    assert ids.index(helix.id) < ids.index(echo.memory.id)
    answer = json_answer(result, False, None, {}, {})
    shown = next(r for r in answer["results"] if r["id"] == echo.memory.id)  # type: ignore[index, union-attr]
    assert (shown["match_reason"], shown["replaced_by"]) == ("superseded", helix.id)
    assert shown["match_why"] == echo.match_why
    assert (hit(echo)["match_reason"], hit(echo)["replaced_by"]) == ("superseded", helix.id)
    _, _, summaries = results_table(result.results, 1, QUESTION)
    assert f"(superseded by {helix.id[:8]}) Noted: you use vim." in summaries

    yarn = recall(ctx, "which package manager do we use for the shop?", sessions=True, touch=False)
    reply = row(yarn.results, "Added lodash with yarn add lodash; the tests pass.")
    assert (reply.clear, reply.replaced_by) == (False, pnpm.id)
    lodash = recall(ctx, "how did we add lodash?", sessions=True, touch=False)
    assert row(lodash.results, "Added lodash with yarn add lodash; the tests pass.").clear


def test_the_weaker_side_of_a_contradiction_is_shown_labelled_with_what_contradicts_it(
    make_ctx: Any, tmp_path: Path
) -> None:
    """Reconcile's CONTRADICT leaves both memories active: the weaker side was a clear match
    (x 0.3), and its message, stating the query better, clear and unlabelled. Now both are
    possible matches naming the stronger side, which stays clear and names what it
    outweighs."""
    ctx = make_ctx()
    told(
        ctx,
        tmp_path,
        "always",
        "We always run the migrations before the deploy. The ops box holds the keys.",
        0,
    )
    told(ctx, tmp_path, "never", "We never run the migrations before the deploy.", 100)
    known = facts(ctx)
    always = known["We always run the migrations before the deploy."]
    never = known["We never run the migrations before the deploy."]
    assert always.state == never.state == State.ACTIVE

    asked = "do we run the migrations before the deploy?"
    results = recall(ctx, asked, sessions=True, touch=False).results
    assert row(results, never.content).clear
    assert f"contradicts {always.id[:8]}" in row(results, never.content).match_why
    weaker = row(results, always.content)
    assert (weaker.clear, weaker.match_reason, weaker.replaced_by) == (
        False,
        "contradicted",
        never.id,
    )
    assert weaker.match_why.startswith(f"possible: contradicted by {never.id[:8]}")

    with_keys = recall(
        ctx, asked[:-1] + " from the ops box with its keys?", sessions=True, touch=False
    )
    said = next(r for r in with_keys.results if r.is_message and "ops box" in r.memory.content)
    assert (said.clear, said.match_reason, said.replaced_by) == (False, "contradicted", never.id)


def test_a_neighbour_never_brings_back_what_a_fold_took(make_ctx: Any, tmp_path: Path) -> None:
    """A fact folded into the message that states the query better (provenance; a copy
    folded by the copies stage likewise) came back as the session neighbour of another
    result: "We deploy with make ship." under the message that says it."""
    ctx = make_ctx()
    told(
        ctx,
        tmp_path,
        "ship",
        "My editor is helix.",
        0,
        "Got it.",
        "We deploy with make ship. Friday afternoons are frozen for releases.",
        "OK.",
    )
    found = recall(
        ctx, "my editor, and are releases frozen on Friday afternoons?", sessions=True, touch=False
    )
    texts = [r.memory.content for r in found.results]
    assert any(t.startswith("We deploy with make ship. Friday") for t in texts)
    assert "We deploy with make ship." not in texts
