"""What distillation keeps of fresh9's shapes (real sessions: benchmarks/sessions/fresh9, its
SOURCES.md): a Copilot CLI sub-agent run in the background reports through ``read_agent``,
and a Copilot hook that failed is said;
SpecStory's Codex CLI calls name their command in the summary and their patch's file on a
line of its own; a shell loop that only reads reads; a program the shell could not find
fails the call whatever its exit code; "where we left off" is no event; a sentence made bold
is no label of a file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memctl.context import Context
from memctl.ingest.extract_rules import PATTERNS, match
from memctl.ingest.file_roles import file_roles
from memctl.ingest.parse import read_transcript
from memctl.ingest.source import Input
from memctl.ingest.tools import Call, read_calls, shell_command
from memctl.model import Role
from memctl.store.memories import MemoryFilter, list_memories
from tests.ingest.test_compaction import ingest_file

FRESH9 = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "fresh9"
# Copilot CLI: 18 lines of fresh9's copilot-starcar-70b173ed.jsonl, a sessionStart hook that
# failed, a background sub-agent's start, a few of its turns between its parent's,
# read_agent's answer (tests/fixtures/transcripts/real/SOURCES.md)
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "real"
COPILOT = REAL / "copilot-starcar-agents.jsonl"
CODEX_MD = FRESH9 / "codex-getspecstory-recommendations.md"  # Codex CLI, SpecStory 2.1
GO_PATH = FRESH9 / "cc-starcar-67913b32.jsonl"  # Claude Code on Windows, `go` not on PATH


def _memories(ctx: Context) -> list[tuple[list[str], str]]:
    where = MemoryFilter(scopes=None, states=None)
    return [(m.tags, m.content) for m in list_memories(ctx.db, where, None)]


def _digest(ctx: Context) -> str:
    (digest,) = [content for tags, content in _memories(ctx) if "digest" in tags]
    return digest


def test_a_background_sub_agent_reports_through_read_agent(
    make_ctx: Callable[..., Context],
) -> None:
    """The ``task`` call's result only says the car started; ``read_agent`` gives back its
    report after a status line. Read as the report before, the notice was the report and
    the car's interim words ("Base verified. Now let's establish baselines ...") a finding."""
    with COPILOT.open("rb") as raw:
        tools = [
            m.content
            for m in read_transcript(Input(raw, str(COPILOT)), "copilot").messages
            if m.role is Role.TOOL
        ]
    (report,) = [t for t in tools if t.startswith("[subagent report]")]
    assert "## Final Report — Car 51-fix-car-r1" in report
    assert "Agent is idle" not in report and "[Turn 0]" not in report
    assert any(t.startswith("[tool result task: Agent started in background") for t in tools)
    # the hook that failed is said, with what its command printed; hooks that ran are not
    assert tools[0] == (
        "[sessionStart hook failed] exit 1: exit: -c: line 2: syntax error: unexpected end of "
        "file from `if' command on line 1"
    )
    ctx = make_ctx()
    ingest_file(ctx, COPILOT)
    digest = _digest(ctx)
    assert "\nLeft open: sessionStart hook failed: exit 1: exit: -c: line 2: syntax error" in digest
    found = next(line for line in digest.splitlines() if line.startswith("Found: "))
    assert "Agent started in background" not in found
    assert "Base verified. Now let's establish baselines" not in found
    assert "`MODULE_NOT_FOUND`" in found  # the car's report says why plain `node --test`


def test_codex_calls_in_specstory_name_their_command_and_their_file(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    ingest_file(ctx, CODEX_MD)
    digest = _digest(ctx)
    assert "Tool use:" not in digest and '{"path"' not in digest
    assert "\nCreated: docs/git-provenance/RECOMMENDATIONS.md\n" in digest
    ran = next(line for line in digest.splitlines() if line.startswith("Ran: "))
    assert "find docs/git-provenance -type f" in ran
    assert "for f in" not in ran  # loops of `cat` and `echo` only read


def test_a_call_whose_program_was_not_found_fixes_nothing(
    make_ctx: Callable[..., Context],
) -> None:
    """`go test ./... 2>&1 | tail -8` printed "go: command not found" and exited 0 (tail's
    status): the fix of PowerShell's missing `go` is the run that put Go on the PATH."""
    ctx = make_ctx()
    ingest_file(ctx, GO_PATH)
    memories = _memories(ctx)
    (case,) = [content for tags, content in memories if "case" in tags]
    assert "The term 'go' is not recognized" in case
    assert 'fixed by `cd …/board && PATH="$PATH:/c/Program Files/Go/bin' in case
    said = [content for tags, content in memories if "digest" not in tags]
    assert not [content for content in said if "left off" in content]  # no event


def test_the_shapes_one_by_one() -> None:
    loop = 'for f in docs/*.md; do echo "== $f"; cat "$f"; echo; done'
    assert shell_command(loop).read_only
    assert shell_command("for f in a b; do git add $f; done").key == "git add"
    assert shell_command("if [ -f x ]; then make build; fi").keys == ("make build",)
    # PowerShell, as fresh9's Copilot CLI session ran it
    events = '$ev = "C:\\Users\\Chris\\events.jsonl"; Select-String -Path $ev -Pattern "ci"'
    assert shell_command(events).read_only
    retro = 'Get-Content a.sh | Select-Object -First 40; "====RETRO===="; Get-Content b.sh'
    assert shell_command(retro).read_only
    checks = "Get-ChildItem .ci-checks | Sort-Object LastWriteTime -Descending | Select-Object Name"
    assert shell_command(checks).read_only
    pester = '$r = Invoke-Pester -Path scripts/tests -PassThru -Output None; "$($r.PassedCount)"'
    assert shell_command(pester).key == "Invoke-Pester"
    calls: list[Call] = []
    read_calls("[tool Bash: make build] [tool error Bash: exit 1: (no output)]", calls)
    missing = "[tool result Bash: zsh: command not found: gofmt]"
    read_calls(f"[tool Bash: gofmt -l . | tail] {missing}", calls)
    read_calls("[tool Bash: tail build.log] [tool result Bash: npm: command not found]", calls)
    assert [c.succeeded for c in calls] == [False, False, True]
    assert match("Please pick up where we left off.", PATTERNS) is None
    left = match("We left the old vendor in March.", PATTERNS)
    assert left is not None and left.kind == "event"


def test_a_sentence_made_bold_is_no_label_of_the_file_it_names() -> None:
    """548526c8's closing answer: the list under the bold sentence is the review's Majors,
    not what docs/setup.md is; a bold label before its file still names it."""
    answer = (
        "**Both Majors are documentation, one clause each, both in `docs/setup.md`.** "
        "Nothing needs a redesign.\n\n- **Major 1** is the sharp one. The car wrote that a "
        'real-history replay "correctly surfaced" commit `38b67c8`.'
    )
    calls: list[Call] = []
    read_calls("[tool Edit: docs/setup.md + a row] [tool result Edit: updated]", calls)
    assert file_roles([answer], calls, "session:s", "2026-07-24T10:33:13Z") == []
    label = "**Files:** `docs/setup.md`\n- the Ready now row for the checkpoint hook"
    (role,) = file_roles([label], calls, "session:s", "2026-07-24T10:33:13Z")
    assert role.content == "`docs/setup.md`: Files: the Ready now row for the checkpoint hook"
