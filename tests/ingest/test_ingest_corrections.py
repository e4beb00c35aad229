"""A later session correcting an earlier one's digest: the two are linked, the digest
weighs less, and what a next session starts with puts the correction first."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from memctl.api.recall import RecallRequest, SessionStartRequest, recall, session_start
from memctl.context import Context
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.corrections import CORRECTED_CONFIDENCE, correction
from memctl.ingest.pipeline import run_session
from memctl.ingest.undo import undo
from memctl.model import RelationType
from memctl.store.memories import session_memories
from memctl.store.relations import relations_of
from tests.ingesting import claude_record as record
from tests.ingesting import source


def ingested(ctx: Context, lines: list[dict[str, Any]]) -> str:
    report = capture(ctx, source("\n".join(map(json.dumps, lines))), IngestOptions()).report
    run_session(ctx, report.session_id, report.job_id)
    return report.session_id


def call(n: int, name: str, session: str, **arguments: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": f"t{n}", "name": name, "input": arguments}
    return record("assistant", [block], n, session)


def done(n: int, text: str, session: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": f"t{n}", "content": text, "is_error": False}
    return record("user", [block], n, session)


def first_session() -> list[dict[str, Any]]:
    """/init writes CLAUDE.md (the write went through) and says the build passes."""
    s = "cc-first"
    return [
        record("user", "/init", 0, s),
        call(1, "Write", s, file_path="/home/ann/shop/CLAUDE.md", content="# Shop\nnpm run build"),
        done(1, "File created successfully at: /home/ann/shop/CLAUDE.md", s),
        record("assistant", "I've created CLAUDE.md with the build and test commands.", 2, s),
    ]


def second_session() -> list[dict[str, Any]]:
    """Later: the person finds the file is not there."""
    s = "cc-second"
    return [
        record(
            "user",
            "The /init did not create CLAUDE.md: the file is missing from the repo. "
            "Write the conventions into README.md instead.",
            3000,
            s,
        ),
        call(3001, "Edit", s, file_path="/home/ann/shop/README.md", old_string="a", new_string="b"),
        done(3001, "The file /home/ann/shop/README.md has been updated.", s),
        record("assistant", "The conventions are in README.md now.", 3002, s),
    ]


def test_a_later_session_saying_the_file_was_never_made_corrects_the_digest(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    first = ingested(ctx, first_session())
    (old,) = [m for m in session_memories(ctx.db, first) if "digest" in m.tags]
    assert "Created: /home/ann/shop/CLAUDE.md" in old.content
    second = ingested(ctx, second_session())
    mine = {m.id for m in session_memories(ctx.db, second)}
    links = [r for r in relations_of(ctx.db, old.id) if r.type == RelationType.CONTRADICTS]
    assert links and {r.src_id for r in links} <= mine and {r.dst_id for r in links} == {old.id}
    (corrected,) = [m for m in session_memories(ctx.db, first) if m.id == old.id]
    assert corrected.confidence == pytest.approx(CORRECTED_CONFIDENCE)
    block = session_start(ctx, SessionStartRequest(scope=old.scope))
    assert block.index("did not create CLAUDE.md") < block.index(
        "Created: /home/ann/shop/CLAUDE.md"
    )
    results = recall(ctx, RecallRequest("did /init create CLAUDE.md?", all_scopes=True)).result
    assert results.results[0].memory.id in mine  # the correction, not the claim, first


def test_ingesting_the_later_session_again_links_nothing_twice(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    first = ingested(ctx, first_session())
    ingested(ctx, second_session())
    ingested(ctx, second_session())
    (old,) = [m for m in session_memories(ctx.db, first) if "digest" in m.tags]
    links = [r for r in relations_of(ctx.db, old.id) if r.type == RelationType.CONTRADICTS]
    assert len({(r.src_id, r.dst_id) for r in links}) == len(links)


DIGEST = (
    "Session of 2026-03-01 (claude-code)\n"
    "Asked: /init\n"
    "Created: CLAUDE.md\n"
    "Fixed: `npm run build` failed: missing tsconfig → fixed by editing tsconfig.json\n"
    "Left open: `deploy.sh` refused\n"
    "Outcome: The build passes and CLAUDE.md lists the commands."
)


@pytest.mark.parametrize(
    ("later", "corrects"),
    [
        ("/init did not create CLAUDE.md.", True),
        ("`npm run build` still fails with the same tsconfig error.", True),
        ("CLAUDE.md is missing from the repository.", True),
        ("Don't edit CLAUDE.md by hand.", False),  # an order, not a correction
        ("Add a section on testing to CLAUDE.md.", False),
        ("deploy.sh was not run.", False),  # the digest never claimed it ran
        ("Created: CLAUDE.md is not the point.", False),  # a later digest's own claim line
        # a question asks, it corrects nothing: a later digest's asks (the fresh split's
        # cc2-cclog-9e953218 contradicted two earlier digests by its second ask)
        ("Why does `npm run build` still fail?", False),
        (
            "Asked: I have @CLAUDE.md running on my website, but the deep link is a bit "
            "awkward…; Would I be able to redirect so the old CLAUDE.md doesn't break?",
            False,
        ),
        ("Asked: fix the docs; CLAUDE.md is missing from the repository", True),
        # the refusal is one item's, the file another's: a later digest's "Left open:" line
        # (the fresh8 split's 84be825e "corrected" a digest of another task so)
        (
            "Left open: `ls skills/ || echo none; ls ~/skills/` refused; asked: Want me to "
            "write this up, or start on the CLAUDE.md?",
            False,
        ),
        ("Left open: `deploy.sh` refused; tsconfig.json is missing", True),
        # an edit the person declined is the later session's (fresh7's 04-23 session
        # "corrected" fresh8's 04-17 digest by three declined edits of SKILL.md files)
        ("Left open: Edit /home/ann/shop/CLAUDE.md refused", False),
        # a file the later session edited itself: what it lacked is that work's start (a
        # code-tour sub-agent's red step "corrected" an older digest's README.md edit)
        (
            "Edited: /repo/tsconfig.json\nOutcome: The check exited non-zero because "
            "`tsconfig.json` did not include the paths.",
            False,
        ),
        ("Outcome: The check exited non-zero because `tsconfig.json` did not include it.", True),
    ],
)
def test_a_correction_says_something_was_not_done_and_names_what_the_digest_claims(
    later: str, corrects: bool
) -> None:
    assert bool(correction(later, DIGEST)) == corrects


def test_undoing_the_later_session_takes_the_correction_back(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    first = ingested(ctx, first_session())
    lines = "\n".join(map(json.dumps, second_session()))
    captured = capture(ctx, source(lines), IngestOptions()).report
    run = run_session(ctx, captured.session_id, captured.job_id)
    (old,) = [m for m in session_memories(ctx.db, first) if "digest" in m.tags]

    def links() -> list[object]:
        return [r for r in relations_of(ctx.db, old.id) if r.type == RelationType.CONTRADICTS]

    assert links()
    undo(ctx, run.id)
    (old,) = [m for m in session_memories(ctx.db, first) if "digest" in m.tags]
    assert old.confidence > CORRECTED_CONFIDENCE
    assert not links()
