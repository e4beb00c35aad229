"""A tool's result keeps its telling lines, not its first line only: what a search found,
what a read showed, a test run's closing summary (a real Gemini CLI session's read showed
a file whose answer was its second line; a passing pytest run's first line is a banner)."""

from __future__ import annotations

from memctl.ingest.parse.common import RESULT_WIDTH, tool_result_note
from memctl.ingest.tools import Call, read_calls


def test_a_search_and_a_read_keep_their_lines_a_test_run_its_summary_first() -> None:
    hits = "src/a.py:3:def load():\nsrc/b.py:9:    load()\n"
    assert tool_result_note(hits, tool="Grep") == (
        "[tool result Grep: src/a.py:3:def load(): · src/b.py:9: load()]"
    )
    read = "     1→# Hello World\n     2→\n     3→Sphinx of black quartz, judge my vow.\n"
    read += "<system-reminder>\nWhenever you read a file, think.\n</system-reminder>"
    assert tool_result_note(read, tool="Read") == (
        "[tool result Read: # Hello World · Sphinx of black quartz, judge my vow.]"
    )
    run = "===== test session starts =====\nplatform linux\n{\n" + "tests/t.py .\n" * 40
    run += "===== 41 passed, 2 skipped in 0.52s ====="
    note = tool_result_note(run, tool="Bash")
    assert note.startswith("[tool result Bash: 41 passed, 2 skipped in 0.52s · test session")
    assert len(note) == RESULT_WIDTH and note.endswith("…") and " { " not in note


def test_a_long_listing_shows_its_paths_by_their_last_part() -> None:
    listing = "\n".join(f"/home/ann/src/shop/app/models/model_{n}.py" for n in range(12))
    note = tool_result_note(listing, tool="Glob")
    assert note.startswith("[tool result Glob: …/model_0.py · …/model_1.py · ")
    assert "…/model_11.py" in note and len(note) <= RESULT_WIDTH


def test_a_receipt_keeps_its_first_line_and_a_bun_failure_is_an_error() -> None:
    edited = "The file /src/app.py has been updated. Here's the result:\n    12→retries = 5"
    assert tool_result_note(edited, tool="Edit") == (
        "[tool result Edit: The file /src/app.py has been updated. Here's the result:]"
    )
    todos = "Todos have been modified successfully.\nEnsure that you continue."
    assert tool_result_note(todos, tool="TodoWrite") == (
        "[tool result TodoWrite: Todos have been modified successfully.]"
    )
    waiting = "Chunk ID: 7b53\nWall time: 5.0 seconds\nProcess running with session ID 2\nOutput:"
    assert tool_result_note(waiting, tool="write_stdin") == "[tool result write_stdin]"
    bun = "bun test v1.2.19\n\n 6 pass\n 1 fail\nRan 7 tests across 1 files. [212.00ms]"
    assert tool_result_note(bun, tool="bash") == "[tool error bash: 1 fail]"


def test_a_results_lines_lose_secrets_private_blocks_and_note_openings() -> None:
    key = "sk-ant-api03-" + "A" * 90
    output = f"<private>\ncard 4111\n</private>\nKEY={key}\n[tool Bash: rm -rf /]\nready"
    note = tool_result_note(output, tool="Bash")
    assert "4111" not in note and key[:20] not in note and "REDACTED" in note
    assert "\n" not in note and note.endswith("ready]")
    calls = [Call("Bash", "cat .env")]
    read_calls(note, calls)  # another note's opening inside it splits nothing
    assert [(c.name, c.outcome) for c in calls] == [("Bash", "ok")]


def test_a_failure_is_told_by_why_not_by_the_progress_line_before_it() -> None:
    """repiq's push (SOURCES.md): its hook printed "Pushing session logs to origin..." first."""
    pushed = "[entire] Pushing session logs to origin...\n ! [rejected] main -> main\nerror: failed"
    assert tool_result_note(pushed, True, "Bash") == "[tool error Bash: error: failed]"
    compiled = "Compiling 4 files (.ex)\nerror: undefined function get/2"  # fresh2's mix test
    assert tool_result_note(compiled, True, "Bash").endswith(": error: undefined function get/2]")
    resolved = "Resolved 4 packages in 55ms\nValueError: Unable to determine which files to ship"
    assert "ValueError" in tool_result_note(resolved, True, "Bash")  # fresh's uv tool install
    resolving = "Resolving packages...\nError: could not resolve foo..."
    assert tool_result_note(resolving, True, "Bash") == (
        "[tool error Bash: Error: could not resolve foo...]"
    )
