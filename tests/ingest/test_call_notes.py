"""A tool call's note too long for its line keeps the file the call acts on: a real Codex
Desktop session (benchmarks/sessions/heldout) read eleven source files by absolute path,
and every note was cut before the file's name, so no search could find them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memctl.api.sessions import Where, grep
from memctl.context import Context
from memctl.ingest.parse.common import ANSWER_WIDTH, NOTE_WIDTH, WRITTEN_WIDTH, tool_use_note
from memctl.ingest.tools import Call, read_calls
from tests.ingest.test_compaction import ingest_file
from tests.ingesting import claude_record

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


# Claude Code commits with its message in a heredoc: the body says why the change was made
COMMIT = """git commit -m "$(cat <<'EOF'
Flatten the repository layout for the agents' skill discovery

Cursor, Codex and Copilot look for skills two levels up from the plugin folder, so the
nested plugins/entire/skills layout needed one symlink per agent, and the Cursor install
broke without it. Moving skills/ to the top level lets every agent find them unaided.
EOF
)\""""


def test_a_commit_keeps_its_message_where_its_call_is_read(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    """The why of a change is often said only in its commit's body: a note cut at
    NOTE_WIDTH kept the subject and a few words, so a search for the reason found nothing."""
    note = tool_use_note("Bash", {"command": COMMIT})
    assert "every agent find them unaided" in note and len(note) <= ANSWER_WIDTH
    body = COMMIT.replace("EOF\n)", "word " * 400 + "\nEOF\n)")
    cut = tool_use_note("Bash", {"command": body})
    assert len(cut) == ANSWER_WIDTH and cut.endswith("…")  # bounded
    assert len(tool_use_note("Bash", {"command": "echo " + "word " * 60})) == NOTE_WIDTH
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": COMMIT}}
    lines = [
        claude_record("user", "flatten the layout and commit", 0, "cc-commit"),
        claude_record("assistant", [call], 1, "cc-commit"),
    ]
    path = tmp_path / "cc-commit.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ctx = make_ctx()
    session = ingest_file(ctx, path)
    found = grep(ctx, "symlink per agent", Where(all_scopes=True))
    assert [m.hit.session_id for m in found][:1] == [session]


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
