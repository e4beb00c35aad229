"""A project's command for a purpose, run another way in a later session, replaces the one
before it, which stays in history (real claude-code-log sessions, MIT:
benchmarks/sessions/real/SOURCES.md: its type checks ran with `uv run pyright` in June
2025, with `uv run ty check` in July)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.context import Context
from memctl.ingest.reconcile_rules import replaced_command
from memctl.model import State
from memctl.store.memories import MemoryFilter, list_memories
from tests.ingest.test_compaction import ingest_file

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "real"
PYRIGHT = REAL / "cc1-cclog-fe869ecb.jsonl"  # 2025-06-14
TY = REAL / "cc1-cclog-326189cf.jsonl"  # 2025-07-13


def _type_checks(ctx: Context) -> dict[str, str]:
    """Each type-check command memory's text -> its state."""
    where = MemoryFilter(scopes=None, states=None)
    return {
        m.content.split(" (")[0]: str(m.state)
        for m in list_memories(ctx.db, where, None)
        if "command" in m.tags and m.content.startswith("type checks run")
    }


@pytest.mark.parametrize("order", [(PYRIGHT, TY), (TY, PYRIGHT)], ids=["in-order", "late"])
def test_the_later_type_checker_replaces_the_earlier_whatever_order_they_are_read_in(
    make_ctx: Callable[..., Context], order: tuple[Path, Path]
) -> None:
    ctx = make_ctx()
    for path in order:
        ingest_file(ctx, path)
    assert _type_checks(ctx) == {
        "type checks run with `uv run pyright`": str(State.SUPERSEDED),
        "type checks run with `uv run ty check`": str(State.ACTIVE),
    }


@pytest.mark.parametrize(
    ("later", "earlier", "replaced"),
    [
        ("type checks run with `uv run ty check`", "type checks run with `uv run pyright`", True),
        ("tests run with `npx vitest run`", "tests run with `npx jest`", True),
        # the same program with other arguments or through another runner: the same choice
        (
            "tests run with `uv run pytest`",
            "tests run with `source .venv/bin/activate && pytest`",
            False,
        ),
        (
            "lint runs with `golangci-lint run ./pkg/providers/codexcli/`",
            "lint runs with `golangci-lint run`",
            False,
        ),
        ("tests run with `mix test`", "tests run with `mix test`", False),  # the same, seen again
        # another language's command may hold beside it (a Phoenix app's assets)
        ("tests run with `npm test`", "tests run with `mix test`", False),
        ("lint runs with `uv run ruff check`", "tests run with `uv run pytest`", False),
        # a run on one file is that session's, not the project's way
        ("tests run, on one file only, with `pytest tests/a.py`", "tests run with `pytest`", False),
        ("tests run with `pytest`", "tests run, on one file only, with `pytest tests/a.py`", False),
        # a program whose language is not known (make wraps whatever the project uses)
        ("tests run with `make test`", "tests run with `pytest`", False),
        ("we test with pytest", "tests run with `pytest`", False),
    ],
)
def test_which_commands_replace_which(later: str, earlier: str, replaced: bool) -> None:
    assert replaced_command(later, earlier) is replaced
