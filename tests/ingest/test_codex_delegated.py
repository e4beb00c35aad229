"""A Codex Desktop thread another thread handed work to (its first turn a
``<codex_delegation>``): the first lines of a real one (tests/fixtures/transcripts/real/
SOURCES.md) through a real ``memctl ingest``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

DELEGATED = (
    Path(__file__).parent.parent
    / "fixtures"
    / "transcripts"
    / "real"
    / "codex-cyspbot-delegated-019f046d.jsonl"
)


def test_a_delegated_thread_is_titled_by_its_order_and_keeps_no_wrapper(tmp_path: Path) -> None:
    env = {"MEMCTL_HOME": str(tmp_path / "memctl"), "MEMCTL_LLM": "none"}
    done = run_cli("ingest", str(DELEGATED), "--wait", env=env)
    assert done.returncode == 0, done.stderr
    listed = json.loads(run_cli("sessions", "list", "--all-scopes", "--json", env=env).stdout)
    assert [s["title"][:40] for s in listed] == ["Implement the cyspbot prerequisites for "]
    memories = json.loads(run_cli("list", "--all-scopes", "--json", env=env).stdout)
    said = [m["content"] for m in memories]
    assert "Do not commit unless explicitly asked." in said  # the order's rule, whole
    assert not any("codex_delegation" in c or "</input>" in c for c in said)
