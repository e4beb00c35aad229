"""The stale stage: a message whose fact was superseded comes back as an older statement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memctl.api import ingest as ingest_api
from memctl.context import Context
from memctl.model import State
from memctl.retrieve.pipeline import Recalled, recall
from memctl.store.memories import MemoryFilter, list_memories
from tests.ingesting import claude_record

QUESTION = "which editor do I use?"


def told(ctx: Context, tmp_path: Path, session: str, text: str, n: int) -> None:
    """A Claude Code session of the user's ``text`` and a reply, through ``ingest --wait``."""
    lines = [claude_record("user", text, n, session), claude_record("assistant", "Got it.", n + 1)]
    lines[1]["sessionId"] = session
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ingest_api.ingest(ctx, ingest_api.IngestRequest(transcript=str(path), wait=True))


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
