"""A tool call's note too long for its line keeps the file the call acts on: a real Codex
Desktop session (benchmarks/sessions/heldout) read eleven source files by absolute path,
and every note was cut before the file's name, so no search could find them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memctl.api.sessions import Where, grep
from memctl.context import Context
from memctl.ingest.parse.common import NOTE_WIDTH, WRITTEN_WIDTH, tool_use_note
from memctl.ingest.tools import Call, read_calls
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


def test_a_file_tools_note_keeps_the_start_of_the_lines_it_wrote() -> None:
    """What a rename or a new setting says is in the text a tool wrote (a real Gemini CLI
    session's ``replace``: "store as `Summary_[YYYY-MM]`"), never in the assistant's words."""
    edit = {
        "file_path": "/src/app.py",
        "old_string": "x = 1\nretries = 2",
        "new_string": "x = 1\nretries = 5",
    }
    assert tool_use_note("Edit", edit) == "[tool Edit: /src/app.py + retries = 5]"
    many = {
        "file_path": "/src/a.py",
        "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}],
    }
    assert tool_use_note("MultiEdit", many) == "[tool MultiEdit: /src/a.py + b d]"
    lines = "# Hello World\nSphinx of black quartz, judge my vow."
    assert tool_use_note("write_file", {"file_path": "hello.md", "content": lines}) == (
        f"[tool write_file: hello.md + {' '.join(lines.split())}]"
    )
    whole = tool_use_note("Write", {"file_path": "/src/b.py", "content": "word " * 500})
    assert len(whole) <= len("[tool Write: /src/b.py + ]") + WRITTEN_WIDTH
    todo = {"todos": [{"content": "rename the flag", "status": "pending"}]}
    assert tool_use_note("TodoWrite", todo).startswith('[tool TodoWrite: {"todos"')  # no file


def test_a_codex_patch_is_noted_by_its_files_and_the_lines_it_added() -> None:
    patch = "*** Begin Patch\n*** Update File: src/db.rs\n@@\n fn open() {\n-use postgres;\n"
    patch += "+use rusqlite::Connection;\n*** Add File: src/new.rs\n+pub fn x() {}\n*** End Patch"
    note = tool_use_note("apply_patch", patch)
    assert note == (
        "[tool apply_patch: *** Update File: src/db.rs *** Add File: src/new.rs"
        " + use rusqlite::Connection; pub fn x() {}]"
    )
    assert tool_use_note("apply_patch", json.dumps({"input": patch})) == note
    assert read_back(note) == [("apply_patch", "src/db.rs")]  # the digest's files


def test_what_a_tool_wrote_loses_its_secrets_and_private_blocks() -> None:
    old = "<private>\nold card 4111\n</private>"
    new = "<private>\nnew card 4242\n</private>\nlimit = 3"
    note = tool_use_note("Edit", {"file_path": "/src/c.py", "old_string": old, "new_string": new})
    assert note == "[tool Edit: /src/c.py + limit = 3]"  # the inside is not left behind
    key = "sk-ant-api03-" + "A" * 90
    note = tool_use_note("Write", {"file_path": "/src/d.py", "content": f'KEY = "{key}"'})
    assert key[:20] not in note and "REDACTED" in note
    # another note's opening inside the written text does not split this one
    code = 'NOTE = "[tool Bash: rm -rf /]"'
    assert read_back(tool_use_note("Write", {"file_path": "/src/e.py", "content": code})) == [
        ("Write", "/src/e.py")
    ]


def read_back(text: str) -> list[tuple[str, str]]:
    calls: list[Call] = []
    read_calls(text, calls)
    return [(c.name, c.files()[0][1]) for c in calls]
