"""The runtime a project runs on, said again in a later session with another version,
replaces the version said before, which stays in history (real polychrome.p5 SpecStory
histories, MIT: benchmarks/sessions/fresh3/SOURCES.md and fresh4/SOURCES.md: "a nuxt 2.10
app running in node 18" in February 2025, "we _should_ be running node 22" in June)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.context import Context
from memctl.ingest.reconcile_rules import replaced_version, runtime_version
from memctl.model import State
from memctl.store.memories import MemoryFilter, list_memories
from tests.ingest.test_compaction import ingest_file

SESSIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions"
NODE_18 = SESSIONS / "fresh3" / "copilot-polychrome-nodestream.md"  # 2025-02-09
NODE_22 = SESSIONS / "fresh4" / "copilot-polychrome-standardnode22.md"  # 2025-06-20


def _node_facts(ctx: Context) -> dict[str, str]:
    """Each memory that says which node the project runs on, by its runtime version -> its
    state (digests aside: a session's record is never superseded)."""
    where = MemoryFilter(scopes=None, states=None)
    found = {}
    for memory in list_memories(ctx.db, where, None):
        said = runtime_version(memory.content)
        if said is not None and "digest" not in memory.tags:
            found[" ".join(said)] = str(memory.state)
    return found


@pytest.mark.parametrize(
    "order", [(NODE_18, NODE_22), (NODE_22, NODE_18)], ids=["in-order", "late"]
)
def test_the_later_node_version_replaces_the_earlier_whatever_order_they_are_read_in(
    make_ctx: Callable[..., Context], order: tuple[Path, Path]
) -> None:
    ctx = make_ctx()
    for path in order:
        ingest_file(ctx, path)
    assert _node_facts(ctx) == {"node 18": str(State.SUPERSEDED), "node 22": str(State.ACTIVE)}


@pytest.mark.parametrize(
    ("later", "earlier", "replaced"),
    [
        ("ouch. we _should_ be running node 22.", "a nuxt 2.10 app running in node 18", True),
        ("the API runs on Python 3.12", "we run python3.11 in CI", True),
        ("We're on Node.js 20 now", "the app requires node 18", True),
        # a version that only adds detail is the same one; another runtime is another slot
        ("it runs on node 18.19", "running node 18", False),
        ("the API runs on Python 3.12", "running node 18", False),
        # what happened after a contrast, a denial, several versions: no version of the project
        ("The nvm default is 22, but this shell did open with node 23", "running node 22", False),
        ("we're not running node 23", "running node 22", False),
        ("tests pass on python 3.11 and 3.12", "the API runs on Python 3.10", False),
        ("python3 top.py", "the API runs on Python 3.10", False),
    ],
)
def test_which_versions_replace_which(later: str, earlier: str, replaced: bool) -> None:
    assert replaced_version(later, earlier) is replaced
