"""Transcript parsing: each client's real shape, sniffing, streaming, and bad input."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from memctl.errors import InputError, UsageError
from memctl.ingest.parse import read_transcript
from memctl.ingest.parse.common import tool_result_note
from memctl.ingest.source import Input, json_members
from memctl.model import Role
from tests.ingesting import FRESH2_SESSIONS, FRESH_SESSIONS, SESSION, TRANSCRIPTS, fixture, source


def parsed(name: str, client: str | None = None) -> tuple[list[tuple[Role, str]], object]:
    transcript = read_transcript(fixture(name), client)
    return [(m.role, m.content) for m in transcript.messages], transcript


def test_claude_code_keeps_text_notes_tools_and_sidechains_drops_thinking_and_meta() -> None:
    messages, transcript = parsed("claude-code.jsonl")
    assert transcript.client == "claude-code"
    tally = transcript.tally
    assert (tally.session_id, tally.title) == (SESSION, "Deploy pipeline and editor setup")
    assert (tally.malformed, tally.skipped) == (
        1,
        4,
    )  # broken line; summary, snapshot, meta, system
    roles = [role for role, _ in messages]
    assert roles[:6] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.USER, Role.ASSISTANT, Role.TOOL]
    assert roles[6:] == [Role.USER, Role.USER, Role.USER, Role.ASSISTANT]
    assert tally.cwd == "/home/alice/src/widget"
    assert tally.lines["kept subagent user"] == 1
    assert tally.lines["passed over meta"] == tally.lines["passed over system"] == 1
    text = "\n".join(content for _, content in messages)
    assert "[tool Read: /home/alice/src/widget/.editorconfig]" in text
    # a read keeps its lines, without their numbers
    assert "[tool result Read: root = true · [*.go] · indent_style = tab]" in text
    assert "[tool error Bash: make: *** No rule to make target 'release'. Stop.]" in text
    assert "should look at .editorconfig" not in text  # thinking
    assert "TodoWrite" not in text  # system reminder
    assert "[subagent] Search the repo for Makefile targets" in text  # its own thread
    assert "init is analyzing" not in text  # meta


def test_claude_code_2_1_2xx_names_its_session_with_a_custom_title_line() -> None:
    """Claude Code 2.1.2xx (its desktop app) writes the session's name as ``custom-title``
    lines, the last one standing, and no summary (fresh5's oh-my-posh sessions): the name
    titles the session over a summary of its own; another session's name does not; its
    ``mode`` and ``pr-link`` lines hold no message and are no kind left unread."""

    def said(kind: str, uuid: str, text: str) -> dict[str, Any]:
        message = {"role": kind, "content": [{"type": "text", "text": text}]}
        return {"type": kind, "uuid": uuid, "sessionId": "s2", "message": message}

    lines = [
        {"type": "custom-title", "customTitle": "Zsh job notice", "sessionId": "s2"},
        said("user", "u1", "why does zsh print [4] 15713 at the first prompt?"),
        said("assistant", "a1", "The coproc's job notice: setopt no_monitor silences it."),
        {"type": "summary", "summary": "Prompt daemon analysis", "leafUuid": "a1"},
        {"type": "mode", "mode": "normal", "sessionId": "s2"},
        {"type": "custom-title", "customTitle": "Issue #7660 analysis", "sessionId": "s2"},
        {"type": "custom-title", "customTitle": "Another session's", "sessionId": "s1"},
        {"type": "pr-link", "sessionId": "s2", "prNumber": 7360, "prUrl": "https://x/7360"},
    ]
    transcript = read_transcript(source("\n".join(map(json.dumps, lines))), "claude-code")
    assert [m.role for m in transcript.messages] == [Role.USER, Role.ASSISTANT]
    tally = transcript.tally
    assert (tally.session_id, tally.title) == ("s2", "Issue #7660 analysis")
    assert tally.problems() is None
    untitled = read_transcript(source("\n".join(map(json.dumps, lines[1:4]))), "claude-code")
    assert [m.role for m in untitled.messages] == [Role.USER, Role.ASSISTANT]
    assert untitled.tally.title == "Prompt daemon analysis"  # a summary, when nothing named it


def test_cursor_transcripts_real_and_with_the_wrappers_its_later_versions_write() -> None:
    messages, transcript = parsed("real/cursor-gitai-hboshows.jsonl")
    assert transcript.client == "cursor" and transcript.tally.malformed == 0
    assert [role for role, _ in messages] == [Role.USER] + [Role.ASSISTANT] * 10
    assert messages[0][1] == "Generate a file with all the HBO shows from the 90's in it"
    assert messages[2][1].startswith("[tool WebFetch: https://en.wikipedia.org/wiki/List_of_")
    assert not any("[REDACTED]" in text for _, text in messages)
    prompt = "<timestamp>Tuesday, Jul 21, 2026, 6:57 PM (UTC+8)</timestamp>\n"
    prompt += "<user_query>\nhi\n</user_query>"
    lines = [
        {"role": "user", "message": {"content": [{"type": "text", "text": prompt}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "[REDACTED]"}]}},
        {"type": "turn_ended", "status": "success"},
    ]
    name = "/u/.cursor/projects/w/agent-transcripts/c0ffee/subagents/a1.jsonl"
    later = read_transcript(source("\n".join(map(json.dumps, lines)), name), None)
    [message] = later.messages
    assert (message.content, message.created_at) == ("[subagent] hi", "2026-07-21T10:57:00.000Z")
    assert later.tally.session_id == "c0ffee" and later.tally.skipped == 2
    assert later.tally.problems() is None  # a turn's end and withheld reasoning hold nothing


def test_opencode_export_keeps_text_and_tools_not_synthetic_or_reasoning() -> None:
    messages, transcript = parsed("opencode.json")
    assert transcript.client == "opencode"
    assert transcript.tally.session_id == "ses_6a1f3c2b9ffeQ2mXlR7tZpWk4N"
    assert transcript.tally.title == "Cache layer for the product API"
    assert [role for role, _ in messages] == [Role.USER, Role.ASSISTANT, Role.USER]
    first, second = messages[0][1], messages[1][1]
    assert "Redis for caching" in first and "[file: Makefile]" in first
    assert "Called the Read tool" not in first  # synthetic
    assert "[tool bash: rg -n redis src/cache] [tool result bash: src/cache/client.ts:3:" in second
    note = "[tool edit: /home/bob/src/shop/src/cache/ttl.ts] [tool error edit: File not found]"
    assert note in second
    assert "Check the Makefile" not in second  # reasoning
    assert transcript.tally.skipped == 1 and transcript.tally.malformed == 1


def test_opencode_run_quotes_around_a_prompt_are_not_the_users_words() -> None:
    """`opencode run "..."` sends the prompt in quotes (as OpenCode joins its arguments)."""

    def user(text: str) -> dict[str, object]:
        return {"info": {"role": "user"}, "parts": [{"type": "text", "text": text}]}

    said = [
        '"I prefer tabs in Makefiles. We deploy with make release."',
        '"say \\"hi\\" to them"',
        '"a b" c',  # two arguments: left as it came
    ]
    export = {"info": {"id": "ses_1"}, "messages": [user(text) for text in said]}
    transcript = read_transcript(source(json.dumps(export)), "opencode")
    assert [m.content for m in transcript.messages] == [
        "I prefer tabs in Makefiles. We deploy with make release.",
        'say "hi" to them',
        '"a b" c',
    ]


def test_opencode_a_command_run_in_a_sub_agent_is_the_users_message_not_nothing() -> None:
    """OpenCode 1.2's `/review` (fresh6's nimbus sessions): the user's message holds only a
    ``subtask`` part, whose prompt is the command's template; the command is named."""
    review = {
        "type": "subtask",
        "prompt": "You are a code reviewer.\n\nInput: main...security-audit\n\n## Determining",
        "description": "review changes [commit|branch|pr], defaults to uncommitted",
        "agent": "build",
        "command": "review",
    }
    messages = [
        {"info": {"role": "user"}, "parts": [review]},
        {"info": {"role": "user"}, "parts": [{**review, "command": None, "description": ""}]},
    ]
    transcript = read_transcript(source(json.dumps({"messages": messages})), "opencode")
    named = "[command /review: review changes [commit|branch|pr], defaults to uncommitted]"
    assert [(m.role, m.content) for m in transcript.messages] == [
        (Role.USER, named),
        (Role.USER, "[sub-agent task: build]"),
    ]
    assert transcript.tally.skipped == 0 and transcript.tally.problems() is None


@pytest.mark.parametrize("name", ["codex.jsonl", "codex-legacy.jsonl"])
def test_codex_rollouts_new_and_old(name: str) -> None:
    messages, transcript = parsed(name)
    assert transcript.client == "codex"
    text = "\n".join(content for _, content in messages)
    assert "environment_context" not in text and "permissions" not in text
    assert messages[0][0] == Role.USER
    if name == "codex.jsonl":
        assert transcript.tally.session_id == "0199a3f1-5c2e-7a41-9b3d-2f6e8c1d4a57"
        assert messages[0][1].startswith("We decided to use SQLite")
        assert "[tool shell: bash -lc rg -n postgres src]" in text
        assert "[tool result shell: src/db.rs:12: use postgres::Client;]" in text
        # a patch by its file and the lines it added
        assert "[tool apply_patch: *** Update File: src/db.rs + use rusqlite::Connection;]" in text
        assert "[tool shell: git status --short]" in text
        assert "Inspecting the schema" not in text  # reasoning
        assert text.count("We decided to use SQLite") == 1  # event_msg repeats it
        assert transcript.tally.malformed == 1
    else:
        assert transcript.tally.session_id == "6f0b8f5c-1d2e-4c3b-9a8f-7e6d5c4b3a21"
        assert "[tool result shell: Cargo.toml · src]" in text


def test_a_codex_or_opencode_sub_agents_own_file_marks_its_turns_as_a_sidechains() -> None:
    """fresh6's Codex 0.125 worker and reviewer threads (``session_meta`` ``source``
    ``{"subagent": ...}``) and OpenCode 1.2's review sessions (``info.parentID``): the
    "user" is the parent agent, so its orders are not the user's words; a session with
    neither is read as before."""
    spawned = {"subagent": {"thread_spawn": {"parent_thread_id": "019d-parent", "depth": 1}}}

    def rollout(source: object) -> str:
        meta = {"id": "019d-child", "cwd": "/w/skills", "source": source}
        turns = [("user_message", "Review Task 1. Do not edit files."), ("agent_message", "OK")]
        lines = [{"type": "session_meta", "payload": meta}] + [
            {"type": "event_msg", "payload": {"type": kind, "message": said}}
            for kind, said in turns
        ]
        return "\n".join(map(json.dumps, lines))

    def export(parent: str | None) -> str:
        said = [("user", "/review Verify the fix. Blocking issues only."), ("assistant", "None.")]
        messages = [{"info": {"role": r}, "parts": [{"type": "text", "text": t}]} for r, t in said]
        return json.dumps({"info": {"id": "ses_2", "parentID": parent}, "messages": messages})

    for text, client in ((rollout(spawned), "codex"), (export("ses_1"), "opencode")):
        transcript = read_transcript(source(text), client)
        contents = [m.content for m in transcript.messages]
        assert len(contents) == 2 and all(c.startswith("[subagent] ") for c in contents)
        assert transcript.tally.lines["kept subagent user"] == 1
    for text, client in ((rollout("cli"), "codex"), (export(None), "opencode")):
        transcript = read_transcript(source(text), client)
        assert not any(m.content.startswith("[subagent]") for m in transcript.messages)


def test_generic_json_jsonl_and_text() -> None:
    messages, transcript = parsed("generic.json")
    assert transcript.tally.session_id == "generic-json-1" and transcript.tally.malformed == 1
    assert messages[1] == (Role.USER, "My editor is Helix. The build cache lives in /var/cache/ci.")
    assert messages[2][1] == "Got it: Helix, and the cache is in /var/cache/ci."
    messages, transcript = parsed("generic.jsonl")
    assert transcript.shape == "jsonl" and transcript.tally.malformed == 2
    assert [role for role, _ in messages] == [Role.USER, Role.ASSISTANT, Role.USER]
    messages, transcript = parsed("generic.txt")
    assert transcript.shape == "text"
    assert messages[0][1].endswith("mentions the path ~/notes/todo.md.")
    assert messages[2] == (Role.USER, "我喜欢喝星巴克拿铁。我通常早上七点开始工作。")


def test_a_one_line_messages_document_and_a_bare_array() -> None:
    doc = json.dumps({"messages": [{"role": "user", "content": "one line"}]})
    assert [m.content for m in read_transcript(source(doc), None).messages] == ["one line"]
    array = json.dumps([{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}])
    assert [m.role for m in read_transcript(source(array), None).messages] == [Role.ASSISTANT]


def test_a_gemini_cli_session_names_its_speaker_in_type_and_keeps_its_tool_calls() -> None:
    """A real Gemini CLI session file: the model's turns are ``gemini``, a turn's tool calls
    become notes and their results a tool message, a sub-agent's report is kept whole;
    the CLI's own notices are passed over and a failed call is an error."""
    path = FRESH_SESSIONS / "gemini-codemie-37b7abef.json"
    transcript = read_transcript(Input(path.open("rb"), str(path)), None)
    read = list(transcript.messages)
    messages = [(m.role, m.content) for m in read]
    assert transcript.client == "generic" and transcript.tally.malformed == 0
    # dated by its first request (the session list showed the time it was taken in)
    assert transcript.tally.started_at == read[0].created_at is not None
    assert transcript.tally.session_id == "37b7abef-713d-4522-85f0-8ff15a4e6d17"
    assert messages[0] == (Role.USER, "show tools")
    assert messages[1][0] == Role.ASSISTANT and "`save_memory`" in messages[1][1]
    # a write keeps what it wrote: the file's last state is the answer to "what is left in it"
    assert (Role.ASSISTANT, "[tool write_file: hello.md + # Hello World]") in messages
    last = "# Hello World Sphinx of black quartz, judge my vow. Pack my box with five dozen"
    assert any(last in text for role, text in messages if role == Role.ASSISTANT)
    reports = [text for role, text in messages if role == Role.TOOL and "[subagent report]" in text]
    assert len(reports) == 1 and "codebase_investigator" in reports[0]
    notice = {"type": "info", "content": "Request cancelled."}
    failed = {
        "type": "gemini",
        "content": "",
        "toolCalls": [
            {
                "name": "run_shell_command",
                "args": {"command": "make"},
                "status": "error",
                "result": [{"functionResponse": {"response": {"output": "make: no rule"}}}],
            }
        ],
    }
    doc = json.dumps({"sessionId": "g1", "messages": [notice, failed]})
    transcript = read_transcript(source(doc), None)
    assert [(m.role, m.content) for m in transcript.messages] == [
        (Role.ASSISTANT, "[tool run_shell_command: make]"),
        (Role.TOOL, "[tool error run_shell_command: make: no rule]"),
    ]
    assert transcript.tally.lines["passed over info notice"] == 1


def test_a_gemini_cli_jsonl_session_is_replayed_losing_nothing_said(tmp_path: Any) -> None:
    """Gemini CLI 0.61's session file, known by its first line: a message written again as
    it changed stands once, with its last text, where it first came; what a rewind or a
    compression (``$set`` of the messages) leaves behind is kept, as the hooks stored it;
    ``$set`` names the summary; the folder beside ``chats`` names the project; a broken
    line is counted."""
    records = [
        {"sessionId": "g-61", "projectHash": "ab12", "startTime": "2026-11-30T03:00:00Z"},
        {"$set": {"messages": [{"id": "env", "type": "user", "content": [{"text": "setup"}]}]}},
        {"id": "u1", "type": "user", "content": [{"text": "Use pnpm."}]},
        {"id": "g1", "type": "gemini", "content": ""},
        {"id": "u2", "type": "user", "content": [{"text": "No, forget that."}]},
        {"id": "g1", "type": "gemini", "content": "Noted: pnpm."},
        {"$rewindTo": "u2"},
        {"id": "i1", "type": "info", "content": "Request cancelled."},
        {"$set": {"summary": "Package manager choice", "lastUpdated": "2026-11-30T03:01:00Z"}},
    ]
    text = "\n".join(map(json.dumps, records)) + "\n{not json\n"
    chats = tmp_path / ".gemini" / "tmp" / "shop" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text("/home/dana/shop\n")
    path = chats / "session-2026-11-30T03-00-g61aaaaa.jsonl"
    path.write_text(text)
    transcript = read_transcript(Input(path.open("rb"), str(path)), None)
    messages = [(m.role, m.content) for m in transcript.messages]
    assert transcript.client == "gemini" and transcript.shape == "jsonl"
    assert messages == [
        (Role.USER, "setup"),
        (Role.USER, "Use pnpm."),
        (Role.ASSISTANT, "Noted: pnpm."),
        (Role.USER, "No, forget that."),
    ]
    tally = transcript.tally
    assert (tally.session_id, tally.title, tally.cwd) == (
        "g-61",
        "Package manager choice",
        "/home/dana/shop",
    )
    assert tally.malformed == 1 and tally.lines["passed over info notice"] == 1
    summary = {"id": "s1", "type": "user", "content": [{"text": "Summary: pnpm chosen."}]}
    compressed = [*records[:3], {"$set": {"messages": [summary, records[2]]}}]
    again = read_transcript(source("\n".join(map(json.dumps, compressed))), "gemini")
    assert [m.content for m in again.messages] == ["setup", "Use pnpm.", "Summary: pnpm chosen."]


def test_a_copilot_chat_session_keeps_each_request_and_its_answer() -> None:
    """A real VS Code Copilot Chat session (``requests``, each a message and the parts of
    its answer): what the person typed, the answer's Markdown with the file it names and
    a note for the tool it ran; an edit's text and its empty fence are left out."""
    path = FRESH2_SESSIONS / "copilot-gitai-simple.json"
    transcript = read_transcript(Input(path.open("rb"), str(path)), None)
    read = list(transcript.messages)
    messages = [(m.role, m.content) for m in read]
    assert transcript.client == "generic" and transcript.tally.malformed == 0
    # dated by its first request (the session list showed the time it was taken in)
    assert transcript.tally.started_at == read[0].created_at is not None
    assert transcript.tally.session_id == "331fed7f-cfd6-409c-8502-06a56322b636"
    assert transcript.tally.title == "Assistance with TypeScript project tasks"
    assert [role for role, _ in messages] == [Role.USER, Role.ASSISTANT] * 3
    assert messages[2] == (Role.USER, "Change Bonjour World to hello world")
    renamed = messages[3][1]
    assert "[tool copilot_replaceString: " in renamed and "of your `index.ts` file" in renamed
    assert "```" not in renamed and "for (let i" not in renamed
    assert "console.log('Bonjour');" in messages[5][1]
    one_line = json.dumps(json.loads(path.read_text(encoding="utf-8")))  # as a tool saves it
    again = read_transcript(source(one_line), None)
    assert [(m.role, m.content) for m in again.messages] == messages  # was refused: no role
    broken = json.dumps({"requests": [{"response": []}, "turn"]})
    assert list(read_transcript(source(broken), "generic").messages) == []


def amp_thread(name: str) -> tuple[list[Any], Any]:
    path = FRESH2_SESSIONS / name
    transcript = read_transcript(Input(path.open("rb"), str(path)), None)
    return list(transcript.messages), transcript.tally


def test_an_amp_thread_keeps_its_tool_calls_their_results_and_its_times() -> None:
    """A real Amp thread: tool calls are notes (an edit's with the line it wrote), their
    results a tool message named by the tool, thinking left out; each message dated by
    the thread (a person's ``meta.sentAt``, the model's ``usage.timestamp``, a result by
    the call before it); the folder from the thread's workspace tree; nothing passed over."""
    messages, tally = amp_thread("amp-gitai-019ca1f6.json")
    turns = [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert [m.role for m in messages] == turns
    edit = messages[3].content
    assert edit.startswith("[tool edit_file: ") and "+ 14,Why do programmers hate nature?" in edit
    assert messages[4].content.startswith("[tool result edit_file: Index: ")
    assert [m.created_at for m in messages[:3]] == [
        "2026-02-28T01:56:52.139Z",
        "2026-02-28T01:56:54.783Z",
        "2026-02-28T01:56:54.783Z",
    ]
    assert (
        tally.started_at == messages[0].created_at and messages[-1].created_at > "2026-02-28T01:57"
    )
    assert tally.session_id == "T-019ca1f6-7f21-77b5-a308-65416ebbdf48"
    assert tally.cwd == "/Users/svarlamov/projects/testing-git-amp"
    assert (tally.malformed, tally.skipped, tally.problems()) == (0, 0, None)
    messages, tally = amp_thread("amp-gitai-019ca1ce.json")
    text = "\n".join(m.content for m in messages)
    assert text.count("[tool Read: ") == 4 and text.count("[tool result Read: ") == 4
    assert "The user wants me to create a plan" not in text and tally.problems() is None


def test_a_malformed_amp_thread_is_counted_and_keeps_the_rest() -> None:
    """An Amp thread's failed, refused and failing-shell runs are error notes; its
    compaction summary is kept; a message of no known role, a block that is no object
    and one of a kind not read yet are counted in one line; the rest is kept. A thread
    broken before its first message is a one-line error."""

    def turn(number: int, role: str, *blocks: Any) -> dict[str, Any]:
        return {"role": role, "messageId": number, "content": list(blocks)}

    def ran(call: str, run: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_result", "toolUseID": call, "run": run}

    def use(call: str, name: str, **given: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": call, "name": name, "input": given}

    thread = {
        "id": "T-1",
        "messages": [
            turn(0, "user", {"type": "text", "text": "run the tests"}, "stray"),
            turn(1, "assistant", use("a", "Bash", cmd="pytest"), use("b", "edit_file", path="x")),
            turn(
                2,
                "user",
                ran("a", {"status": "done", "result": {"output": "no tests ran", "exitCode": 5}}),
                ran("b", {"status": "rejected-by-user", "reason": "not now"}),
            ),
            turn(3, "assistant", use("c", "Read", path="y"), {"type": "hologram"}),
            turn(4, "user", ran("c", {"status": "error", "error": {"message": "no such file"}})),
            turn(5, "robot", {"type": "text", "text": "beep"}),
            turn(6, "info", {"type": "summary", "summary": {"type": "message", "summary": "S"}}),
        ],
    }
    transcript = read_transcript(source(json.dumps(thread)), None)
    said = [(m.role, m.content) for m in transcript.messages]
    assert said == [
        (Role.USER, "run the tests"),
        (Role.ASSISTANT, "[tool Bash: pytest]\n[tool edit_file: x]"),
        (
            Role.TOOL,
            "[tool error Bash: exit 5: no tests ran]\n[tool refused edit_file: "
            "The user doesn't want to proceed with this tool use: not now]",
        ),
        (Role.ASSISTANT, "[tool Read: y]"),
        (Role.TOOL, "[tool error Read: no such file]"),
        (Role.ASSISTANT, "[session summary] S"),
    ]
    problems = transcript.tally.problems()
    assert problems is not None and "\n" not in problems
    assert "2 malformed records" in problems and "Amp hologram block ×1" in problems
    with pytest.raises(InputError, match="not a valid JSON transcript"):
        list(
            read_transcript(
                source('{"id": "T-2", "messages": [{"role": "user", "mess'), None
            ).messages
        )


def test_a_copilot_chat_session_log_is_replayed_into_its_session() -> None:
    """Newer Copilot Chat keeps a session as a JSONL log of changes to the document (a real
    one: the document, then a request pushed onto ``requests``): replayed, it is read as
    the document is. A set, a push cut to ``i`` items and a delete apply in order; a line
    that is no JSON or a change that does not fit is malformed, the rest still read."""
    path = TRANSCRIPTS / "real" / "copilot-gitai-multiline.jsonl"
    transcript = read_transcript(Input(path.open("rb"), str(path)), None)
    read = list(transcript.messages)
    messages = [(m.role, m.content) for m in read]
    assert transcript.client == "generic" and transcript.tally.malformed == 0
    # dated by its first request (the session list showed the time it was taken in)
    assert transcript.tally.started_at == read[0].created_at is not None
    assert transcript.tally.title == "Adding a joke to jokes.csv file"
    assert [role for role, _ in messages] == [Role.USER, Role.ASSISTANT] * 2
    assert messages[2] == (Role.USER, "follow up message")
    assert "[tool copilot_readFile: " in messages[1][1] and "````" not in messages[1][1]

    def turn(text: str) -> dict[str, Any]:
        return {"message": {"text": text}, "response": [{"value": f"ok: {text}"}]}

    log = [
        {"kind": 0, "v": {"sessionId": "c1", "requests": [turn("one"), turn("two")]}},
        {"kind": 2, "k": ["requests"], "v": [turn("three")], "i": 1},
        {"kind": 1, "k": ["requests", 1, "message", "text"], "v": "three, reworded"},
        {"kind": 3, "k": ["requests", 0, "response"]},
        {"kind": 1, "k": ["requests", 9, "message"], "v": {}},
    ]
    text = "\n".join(json.dumps(entry) for entry in log) + "\nnot json\n"
    replayed = read_transcript(source(text), None)
    assert [m.content for m in replayed.messages] == ["one", "three, reworded", "ok: three"]
    assert replayed.tally.session_id == "c1" and replayed.tally.malformed == 2


def test_a_client_that_does_not_fit_finds_nothing_and_unknown_clients_are_refused() -> None:
    assert list(read_transcript(fixture("generic.txt"), "claude-code").messages) == []
    with pytest.raises(UsageError, match="unknown client"):
        read_transcript(fixture("generic.txt"), "vim")


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "empty"), (b"  \n\n\t", "empty"), (b"\x89PNG\r\n\x1a\n\x00\x00", "binary")],
)
def test_empty_and_binary_input_are_clear_errors(data: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message):
        source(data)


def test_a_broken_json_document_is_an_error_before_any_message_and_counted_after() -> None:
    with pytest.raises(InputError, match="not a valid JSON transcript"):
        list(read_transcript(source('{\n"messages": [ {"role": "user", "con'), None).messages)
    cut = '{\n"messages": [{"role": "user", "content": "kept"}, {"role": "us'
    transcript = read_transcript(source(cut), None)
    assert [m.content for m in transcript.messages] == ["kept"]
    assert transcript.tally.malformed == 1


def test_json_members_stream_across_tiny_chunks() -> None:
    document = json.dumps(
        {"info": {"id": "x", "n": 12345}, "messages": [{"a": "é" * 5}, [1, 2], 3.25], "tail": None}
    )
    chunks = (document[i : i + 3] for i in range(0, len(document), 3))
    assert list(json_members(chunks, "messages")) == [
        ("info", {"id": "x", "n": 12345}),
        ("messages", {"a": "ééééé"}),
        ("messages", [1, 2]),
        ("messages", 3.25),
        ("tail", None),
    ]
    with pytest.raises(ValueError, match="extra data"):
        list(json_members(iter(['{"a": 1} {"b": 2}']), "messages"))


def test_lines_longer_than_the_sniffed_head_stay_whole() -> None:
    long_line = json.dumps({"role": "user", "content": "y" * 200_000})
    data = (long_line + "\n" + json.dumps({"role": "assistant", "content": "z"}) + "\n").encode()
    source_ = Input(io.BytesIO(data), "big")
    messages = list(read_transcript(source_, "generic").messages)
    assert [len(m.content) for m in messages] == [200_000, 1]


def test_chunks_never_split_a_utf8_character() -> None:
    text = "ü" * 300_000 + "漢" * 400_000
    assert "".join(Input(io.BytesIO(text.encode()), "x").chunks()) == text


def test_a_failed_commands_note_gives_the_line_that_says_why() -> None:
    pytest_run = "===== test session starts =====\nplatform linux\n" + "x\n" * 3000
    pytest_run += "E       AssertionError: assert 'zip' in 'tar'\n===== 1 failed in 0.3s ====="
    act = 'time="2025-06-15" level=info msg="Using docker host"\n[CI/test] ok\nError: Job failed'
    traceback = 'Traceback (most recent call last):\n  File "a.py", line 3\nImportError: no torch'
    cases = {
        pytest_run: "E AssertionError: assert 'zip' in 'tar'",  # past the first 4 KiB
        act: "Error: Job failed",
        traceback: "ImportError: no torch",
        "a.py:3:1: F401 unused import\nFound 1 error.": "a.py:3:1: F401 unused import",
        "WARN pre-release tool\nerror[call]: not callable": "error[call]: not callable",
        # npm's warnings and script echo come before webpack's error (issue 35)
        "npm warn deprecated inflight@1.0.6: leaks memory\n> app@1.0.0 build\n> webpack\n"
        "ERROR in ./src/index.ts\nModule not found: no './app'": "ERROR in ./src/index.ts",
    }
    for output, telling in cases.items():
        assert tool_result_note(f"Exit code 1\n{output}", True, "Bash") == (
            f"[tool error Bash: exit 1: {telling}]"
        )
    assert tool_result_note("===== ok =====\n3 passed", tool="Bash") == (
        "[tool result Bash: ok · 3 passed]"  # a command that worked keeps its lines
    )


def test_a_cursor_transcript_kept_elsewhere_names_its_workspace_by_its_tools_paths() -> None:
    """Cursor writes no directory into a transcript; the paths its tools read do: its own
    folder for the workspace (``~/.cursor/projects/<slug>/``) and files in it."""
    from memctl.ingest.parse.cursor import workspace_named

    slug = "/home/ada/.cursor/projects/home-ada-src-shop-api/agent-tools/1.txt"
    assert workspace_named(["/home/ada/src/shop-api/README.md", slug]) == "/home/ada/src/shop-api"
    # no file of the workspace named: its slug, a project of its own (not looked up here)
    assert workspace_named([slug]) == "home-ada-src-shop-api"
    assert workspace_named(["/home/ada/src/shop-api/README.md"]) is None
    transcript = read_transcript(fixture("real/cursor-gitai-hboshows.jsonl"), None)
    assert len(list(transcript.messages)) == 11
    assert transcript.tally.cwd == "/Users/aidancunniffe/Desktop/testing-gitflows-git-ai"
