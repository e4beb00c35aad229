"""The newest clients' session files read as the person saw them.

The fixtures are sessions the real clients wrote (the person's prompts, run headless against
the scripted model of tests/e2e/model_server.py, whose answers here were set to the markup
the clients' own prompts ask a model for), trimmed for size: records the readers pass over
(settings, token counts, instructions) keep one line of each kind, their long strings
replaced by "(trimmed: N characters)". Written for memctl, under its licence.

- ``codex-0.171.jsonl``: Codex CLI 0.171.0, ``codex exec`` then ``codex exec resume`` three
  times: an answer ending in Codex Desktop's git directives and a memory citation block, a
  command that failed, a sub-agent (``spawn_agent``) whose end came back as a
  ``<subagent_notification>``, an answer holding a review comment directive and a fenced
  example of one. ``codex-0.171-subagent.jsonl`` is that sub-agent's own rollout.
- ``codex-0.171-resumed.jsonl`` and ``codex-0.171-resumed-subagent.jsonl``: Codex CLI 0.171.0
  with memctl's hooks and AGENTS.md block installed, ``codex exec`` starting a sub-agent
  whose model answered late, so the parent exited first (the sub-agent's turn aborted),
  then ``codex exec resume --last`` with a question, which Codex put in the sub-agent's
  rollout, the newest (tests/ingest/test_subagent_file.py).
- ``opencode-1.18.33.json``: ``opencode export`` of an OpenCode 1.18.33 session (``opencode
  run``, then ``run --session``): a command that failed, a ``task`` sub-agent.
- ``gemini-0.61-shell.jsonl``: Gemini CLI 0.61.0 (``gemini -p --yolo``): a command that
  failed, its call's status "success" all the same.
- ``claude-code-2.1.332.jsonl``: Claude Code 2.1.332 over stream-json, resumed twice: a
  command refused at the permission prompt with the person's words, a command that failed,
  a sub-agent whose report came back in the hand-back frame.
"""

from __future__ import annotations

import json
import re

from memctl.ingest.capture import IngestOptions, session_id_of
from memctl.ingest.parse import read_transcript
from memctl.ingest.parse.common import REDACTED_ID
from memctl.model import Role
from tests.ingesting import FRESH_SESSIONS, REAL_SESSIONS, TRANSCRIPTS, fixture, source


def said(name: str) -> list[tuple[Role, str]]:
    return [(m.role, m.content) for m in read_transcript(fixture(name), None).messages]


def test_codex_answers_without_its_citations_and_directives() -> None:
    messages = said("codex-0.171.jsonl")
    text = "\n".join(content for _, content in messages)
    assert "oai-mem-citation" not in text and "MEMORY.md" not in text
    assert "::git-create-pr" not in text and "::git-push" not in text
    assert (Role.ASSISTANT, messages[1][1]) == messages[1] and messages[1][1].endswith(
        "waits for the smoke tests."
    )
    review = "[review comment /home/dev/shop/scripts/release.sh:14] [P2] Tag pushed before"
    assert any(
        content.startswith(f"One finding in the release script:\n\n{review}")
        for _, content in messages
    )
    assert '```text\n::git-commit{cwd="/tmp/example"}\n```' in text  # an example stays
    assert (Role.TOOL, "[subagent report]\nok") in messages  # not the person's turn
    assert not any("subagent_notification" in content for _, content in messages)
    assert any(c.startswith("[tool error exec_command: exit 2: ls:") for _, c in messages)
    assert [r for r, _ in messages].count(Role.USER) == 4  # the resumed turns, once each


def test_a_codex_sub_agent_is_known_by_its_parent_thread() -> None:
    transcript = read_transcript(fixture("codex-0.171-subagent.jsonl"), None)
    contents = [m.content for m in transcript.messages]
    assert contents == ["[subagent] Review scripts/release.sh for ordering bugs.", "[subagent] ok"]
    lines = (TRANSCRIPTS / "codex-0.171-subagent.jsonl").read_text().splitlines()
    meta = json.loads(lines[0])
    del meta["payload"]["source"]  # an app's thread naming its parent only
    alone = read_transcript(source("\n".join([json.dumps(meta), *lines[1:]])), "codex")
    assert all(m.content.startswith("[subagent] ") for m in alone.messages)


def test_opencode_a_failed_command_and_a_sub_agents_report() -> None:
    messages = said("opencode-1.18.33.json")
    assert messages[1][1].startswith("[tool bash: ls scripts/release.sh] [tool error bash: exit 2:")
    assert "[tool task: a task]\n[subagent report]\nok" in [content for _, content in messages]


def test_gemini_a_command_that_failed_by_its_exit_code() -> None:
    notes = [content for role, content in said("gemini-0.61-shell.jsonl") if role is Role.TOOL]
    assert notes == [
        "[tool error run_shell_command: exit 2: ls: cannot access 'scripts/release.sh': "
        "No such file or directory]"
    ]


def test_gemini_before_0_61_a_shell_result_is_what_the_command_said() -> None:
    """Gemini CLI's one-document sessions (fresh7, M-Gemini, CC0 1.0) frame a shell's result
    in fields, the command first: a failure's note is its error, not "Command: ..."."""
    path = FRESH_SESSIONS.parent / "fresh7" / "gemini-mgemini-2025-12-06-e0f194ce.json"
    notes = [m.content for m in read_transcript(fixture(str(path)), None).messages]
    assert notes[6].startswith(
        "[tool error run_shell_command: exit 1: iex : The term 'Get-FileHash' is not recognized"
    )
    assert "[tool result run_shell_command: 2.0.60 (Claude Code)]" in notes
    assert "[tool result run_shell_command: 192.168.8.1]" in notes
    assert not any("Directory: (root)" in n or "(none)" in n or "PGID" in n for n in notes)


def test_claude_code_keeps_the_persons_answer_at_a_permission_prompt_as_theirs() -> None:
    messages = said("claude-code-2.1.332.jsonl")
    refused = messages.index(
        (Role.TOOL, "[tool refused Bash: The user doesn't want to proceed with this tool use.]")
    )
    assert messages[refused + 1] == (Role.USER, "please add the changelog too first")
    assert any(c.startswith("[tool error Bash: exit 2: make: ***") for _, c in messages)
    assert (Role.TOOL, "[subagent report]\nok") in messages  # without the hand-back frame


def test_claude_code_2_0_unmarked_answers_and_its_own_refusals() -> None:
    """Claude Code 2.0.5 wrote the person's answer bare; 2.0.42 refused in other words."""
    path = FRESH_SESSIONS / "cc2-cclog-9e953218.jsonl"
    messages = [(m.role, m.content) for m in read_transcript(fixture(str(path)), None).messages]
    answer = messages.index((Role.USER, "please add transformer.js too first"))
    assert messages[answer - 1][1].startswith("[tool refused Bash:")
    path = FRESH_SESSIONS / "cc2-cclog-7acd37a8.jsonl"
    notes = [m.content for m in read_transcript(fixture(str(path)), None).messages]
    assert (
        sum(n.startswith("[tool refused Edit: The user doesn't want to take") for n in notes) == 1
    )
    assert (
        "[tool error KillShell: Shell dce0af is not running, so cannot be killed (status: killed)]"
        in notes
    )


def test_a_sub_agents_report_without_claude_codes_trailer() -> None:
    path = REAL_SESSIONS / "cc2-codemie-e9fb405b.jsonl"
    reports = [
        m.content
        for m in read_transcript(fixture(str(path)), None).messages
        if m.content.startswith("[subagent report]")
    ]
    assert reports and not any("agentId:" in r or "<usage>" in r for r in reports)


TOOL_NAMED = re.compile(r"^\[tool (result|error|refused) [^:\]]+")


def test_results_whose_call_ids_entire_redacted_answer_their_calls_in_turn() -> None:
    """Entire's older redaction wrote high-entropy ids as REDACTED (entireio/cli, redact/):
    each result still answers a call, in the order the calls were made, so sub-agent reports
    stay reports; of parallel calls whose results came back out of order, only the tool a
    result is named by can differ."""
    path = REAL_SESSIONS / "cc2-codemie-e9fb405b.jsonl"  # parallel calls, sub-agents
    text = path.read_text()
    redacted = re.sub(r'"(id|tool_use_id)": ?"toolu_\w+"', r'"\1":"REDACTED"', text)
    assert redacted.count(REDACTED_ID) > 20
    plain, hidden = (
        [(m.role, m.content) for m in read_transcript(source(t, str(path)), None).messages]
        for t in (text, redacted)
    )
    unnamed = [(role, TOOL_NAMED.sub(r"[tool \1", content)) for role, content in plain]
    assert [(role, TOOL_NAMED.sub(r"[tool \1", content)) for role, content in hidden] == unnamed
    reports = [content for _, content in plain if content.startswith("[subagent report]")]
    assert reports and reports == [c for _, c in hidden if c.startswith("[subagent report]")]


def test_a_session_id_entire_redacted_names_no_session() -> None:
    text = (TRANSCRIPTS / "claude-code-2.1.332.jsonl").read_text()
    text = text.replace("3af18723-16bf-4672-ad83-9e3b42bc1014", REDACTED_ID)
    transcript = read_transcript(source(text, "/x/entire/full.jsonl"), "claude-code")
    first = next(transcript.messages).content
    named = session_id_of(IngestOptions(), transcript, "/x/entire/full.jsonl", first)
    other = session_id_of(IngestOptions(), transcript, "/x/entire/other.jsonl", first)
    assert REDACTED_ID not in named and named != other  # one session a file, as without an id
