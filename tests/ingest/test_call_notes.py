"""A tool call's note too long for its line keeps the file the call acts on: a real Codex
Desktop session (benchmarks/sessions/heldout) read eleven source files by absolute path,
and every note was cut before the file's name, so no search could find them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memctl.api.sessions import Where, grep
from memctl.context import Context
from memctl.ingest.parse.common import NOTE_WIDTH, tool_use_note
from tests.ingest.test_compaction import ingest_file

HELDOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "heldout"
DEEP = "/Users/ann/repos/acme/web-ui/src/pages/settings/administration/" + "nested/" * 8


def test_a_long_call_shows_its_paths_by_their_last_part() -> None:
    note = tool_use_note("exec_command", {"cmd": f"sed -n '1,320p' {DEEP}BudgetCard.tsx"})
    assert note == "[tool exec_command: sed -n '1,320p' …/BudgetCard.tsx]"
    ran = f"git -C {DEEP}repo add a.md && git -C {DEEP}repo commit --no-verify -m x"
    assert tool_use_note("Bash", {"command": ran}) == (
        "[tool Bash: git -C …/repo add a.md && git -C …/repo commit --no-verify -m x]"
    )
    short = f"/srv/app/{'x' * 40}.py"
    assert tool_use_note("Read", {"file_path": short}) == f"[tool Read: {short}]"  # fits: kept
    wide = tool_use_note("Bash", {"command": "echo " + "word " * 60})
    assert len(wide) == NOTE_WIDTH and wide.endswith("…")  # no path to shorten: cut as before


def test_a_file_a_codex_session_read_is_found_by_its_name(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    session = ingest_file(ctx, HELDOUT / "codex-codemie-019e1695.jsonl")
    found = grep(ctx, "ProjectBudgetCard", Where(all_scopes=True))
    assert [m.hit.session_id for m in found][:1] == [session]
    assert "…/ProjectBudgetCard.tsx" in " ".join(found[0].lines)
