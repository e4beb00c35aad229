"""What s37-distill left of fresh9's shapes (real sessions: benchmarks/sessions/fresh9, its
SOURCES.md): a resumed session's opening ("pick up where we left off") names nothing; a
quoted program path runs that program; a search at
the end of a pipe that found nothing is no failure left open; a sub-agent that never
reported leaves no interim words as its report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memctl.context import Context
from memctl.ingest.digest import build_digest
from memctl.ingest.title import resumed, session_title
from memctl.ingest.tools import Call, found_nothing, read_calls, shell_command
from memctl.model import Message, Role
from tests.ingest.test_compaction import ingest_file
from tests.ingest.test_digest_fresh9 import _digest

FRESH9 = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "fresh9"
SHIELDED = FRESH9 / "opencode-bestcodes-09378d3b.json"  # OpenCode, tsc piped into grep
# the opening of fresh9's cc-starcar-548526c8, and its next request
GOOD_MORNING = (
    "good morning buddy, it's 24 July 26 at 0546 local philly time. Please pick up where we "
    "left off."
)
RULING = "ok if templates are becoming our source of prior art, then an statement in claude.md"


def test_a_resumed_sessions_opening_names_nothing() -> None:
    assert resumed(GOOD_MORNING) and resumed("pick up where we left off")
    assert resumed("Let's continue from the previous session.")
    assert not resumed("Fix the login bug, then continue where we left off")
    assert not resumed("continue")
    assert session_title([GOOD_MORNING, RULING]).startswith("ok if templates are becoming")
    # nothing else said: the title says what was said, the digest's heading the work
    assert session_title(["pick up where we left off"]) == "pick up where we left off"
    messages = [
        Message(Role.USER, GOOD_MORNING),
        Message(Role.ASSISTANT, "[tool Bash: make build]"),
        Message(Role.TOOL, "[tool result Bash: ok]"),
        Message(Role.USER, RULING),
        Message(Role.ASSISTANT, "Done: the statement is in CLAUDE.md, and the build passes."),
    ]
    assert build_digest(messages, 6, 500).requests == [RULING]


def test_a_quoted_program_path_runs_that_program() -> None:
    assert shell_command('"C:/Program Files/Go/bin/go.exe" test ./...').key == "go test"
    assert shell_command('cd board && "C:\\Go\\bin\\go.exe" build').key == "go build"
    assert shell_command("bash -lc 'uv run pytest -q'").key == "pytest"  # a wrapper's quotes
    assert shell_command("(cd web && pnpm build) | tail -5").key == "pnpm build"


def test_a_search_that_found_nothing_is_not_left_open(make_ctx: Callable[..., Context]) -> None:
    """`npx tsc --noEmit 2>&1 | grep -i "shielded\\|footer"` found nothing once the type
    errors it looked for were fixed: no "still failing" line. It stays a failure that a later
    run of its command settles (fresh7's d5169a00: "flatpak list --app | grep codium")."""
    calls: list[Call] = []
    read_calls('[tool Bash: cat log | grep -i "error"] [tool error Bash: Exit code 1]', calls)
    read_calls("[tool Bash: make build] [tool error Bash: exit 1: (no output)]", calls)
    read_calls("[tool Bash: make | grep x] [tool error Bash: exit 1: make: *** Error 2]", calls)
    assert [found_nothing(c) for c in calls] == [True, False, False]
    messages = [
        Message(Role.USER, "is easyeffects installed? and codium?"),
        Message(Role.ASSISTANT, "[tool Bash: flatpak list --app | grep codium]"),
        Message(Role.TOOL, "[tool error Bash: exit 1: (no output)]"),
        Message(Role.ASSISTANT, "[tool Bash: flatpak list --app | grep easyeffects]"),
        Message(Role.TOOL, "[tool result Bash: com.github.wwmm.easyeffects]"),
        Message(Role.ASSISTANT, "easyeffects is installed from Flathub; codium is not."),
    ]
    digest = build_digest(messages, 6, 500)
    assert not digest.left_open and not digest.commands  # paired as before: not a command run
    ctx = make_ctx()
    ingest_file(ctx, SHIELDED)
    text = _digest(ctx)
    assert "still failing" not in text
    assert "types/react-shielded.d.ts" in text  # the declaration it wrote stays


def test_a_sub_agent_that_never_reported_leaves_no_interim_words() -> None:
    """fresh9's 70b173ed: a reviewer run in the background was still reading diffs when the
    session ended; its last words were taken as its report."""
    messages = [
        Message(Role.USER, "review the car's five commits against its brief"),
        Message(Role.ASSISTANT, "[tool task: Review: car 51 fixes round 1]"),
        Message(Role.TOOL, "[tool result task: Agent started in background with agent_id: r1]"),
        Message(Role.ASSISTANT, "[subagent] [tool powershell: git status; git log -6]"),
        Message(
            Role.ASSISTANT, "[subagent] Base and five commits confirmed. Let me inspect each diff."
        ),
        Message(Role.ASSISTANT, "Reviewer dispatched. Verifying its launch record meanwhile:"),
        Message(Role.ASSISTANT, "[subagent] [tool powershell: git show 3b6dd01]"),
        Message(Role.ASSISTANT, "Both launch records landed; waiting for the reviewer's verdict."),
    ]
    assert build_digest(messages, 6, 500).reports == []
    finished = [*messages[:-1], Message(Role.ASSISTANT, "[subagent] ACCEPT: no Major found.")]
    assert build_digest(finished, 6, 500).reports == ["ACCEPT: no Major found."]
