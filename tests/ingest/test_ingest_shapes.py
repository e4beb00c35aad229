"""Transcript shapes real tools write besides each client's own file: a Stop hook's JSON
array dump of a Claude Code transcript, hook payloads carrying their transcript, and Codex
Desktop rollouts whose user turns are only events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memctl.ingest.parse import read_transcript
from memctl.model import Role
from tests.conftest import ROOT, run_cli
from tests.ingesting import source

REAL = ROOT / "benchmarks" / "sessions" / "real"
CLAUDE = REAL / "cc1-gitai-cb947e5b.jsonl"  # real, Claude Code 1.0.111
CODEX = REAL / "codex-codemie-019e1625.jsonl"  # real, Codex CLI 0.125.0


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def contents(text: str, client: str | None, name: str = "chat.json") -> list[tuple[Role, str]]:
    transcript = read_transcript(source(text, name), client)
    found = [(m.role, m.content) for m in transcript.messages]
    assert transcript.tally.malformed == 0
    return found


def test_a_stop_hooks_json_array_of_the_transcript_reads_as_the_transcript_itself() -> None:
    """logs/chat.json as a third-party Stop hook writes it: the JSONL records, as one
    indented array."""
    as_jsonl = contents(CLAUDE.read_text("utf-8"), "claude-code", "session.jsonl")
    dumped = json.dumps(records(CLAUDE), indent=2)
    assert contents(dumped, "claude-code") == as_jsonl
    assert contents(dumped, None) == as_jsonl  # the client is guessed from the records
    assert any("green and yellow" in text for role, text in as_jsonl if role == Role.USER)


def test_an_array_of_hook_payloads_with_their_transcripts_is_read() -> None:
    lines = records(CLAUDE)
    payloads = [
        {"hook_event_name": "Stop", "session_id": "s-1", "transcript": lines[:20]},
        {"hook_event_name": "SessionEnd", "session_id": "s-1", "transcript": lines[20:]},
    ]
    expected = contents(CLAUDE.read_text("utf-8"), "claude-code", "session.jsonl")
    assert contents(json.dumps(payloads, indent=2), "claude-code") == expected


def test_memctl_ingest_takes_the_hook_dump_and_distils_it(tmp_path: Path) -> None:
    dump = tmp_path / "chat.json"
    dump.write_text(json.dumps(records(CLAUDE), indent=2), "utf-8")
    done = run_cli("ingest", "--transcript", str(dump), "--client", "claude-code", "--wait")
    assert done.returncode == 0, done.stderr
    assert "malformed" not in done.stdout + done.stderr
    listed = run_cli("list", "--json")
    assert "green" in listed.stdout.lower()


def desktop_rollout(*roles: str) -> str:
    """The real rollout as Codex Desktop writes one: the turns of ``roles`` only as events."""
    kept = [
        r
        for r in records(CODEX)
        if not (
            r.get("type") == "response_item"
            and r["payload"].get("type") == "message"
            and r["payload"].get("role") in (roles or ("user",))
        )
    ]
    return "\n".join(map(json.dumps, kept))


def test_codex_user_turns_that_exist_only_as_events_are_kept() -> None:
    users = [t for role, t in contents(desktop_rollout(), "codex", "r.jsonl") if role == Role.USER]
    assert users == [
        "show tools",
        "let's update the defailt context compart to 90 in env var",
    ]


def test_codex_user_turns_written_twice_are_kept_once() -> None:
    transcript = read_transcript(source(CODEX.read_text("utf-8"), "r.jsonl"), "codex")
    found = [(m.role, m.content) for m in transcript.messages]
    assert transcript.tally.problems() is None  # a repeated turn is no record left unread
    users = [t for role, t in found if role == Role.USER]
    assert users.count("show tools") == 1
    assert users.count("let's update the defailt context compart to 90 in env var") == 1


def test_the_same_words_said_again_after_an_answer_are_a_new_turn() -> None:
    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": "2026-05-11T10:00:00Z", "type": kind, "payload": payload})

    def said(role: str, text: str) -> str:
        kind = "input_text" if role == "user" else "output_text"
        content = [{"type": kind, "text": text}]
        return line("response_item", {"type": "message", "role": role, "content": content})

    rollout = "\n".join(
        [
            said("user", "continue"),
            line("event_msg", {"type": "user_message", "message": "continue"}),
            said("assistant", "Step one is done."),
            line("event_msg", {"type": "user_message", "message": "continue"}),
            said("assistant", "Step two is done."),
        ]
    )
    found = contents(rollout, "codex", "r.jsonl")
    assert [role for role, _ in found] == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]


def test_codex_answers_that_exist_only_as_events_are_kept_once_each() -> None:
    whole = contents(CODEX.read_text("utf-8"), "codex", "r.jsonl")
    answers = [t for role, t in whole if role == Role.ASSISTANT and not t.startswith("[tool")]
    assert len(answers) == 13  # the rollout's 13 answers, each written as event and item
    events_only = contents(desktop_rollout("user", "assistant"), "codex", "r.jsonl")
    agents_md = [(role, t) for role, t in whole if t.startswith("# AGENTS.md")]
    assert len(agents_md) == 1  # injected as a response item only: no event repeats it
    # the same turns, in the same order, from the events alone
    assert events_only == [turn for turn in whole if turn not in agents_md]
    closing = answers[-1]
    assert closing.startswith("Implemented the default context compaction setting")


def test_memctl_ingest_digests_a_rollout_of_events_only(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-2026-05-11.jsonl"
    rollout.write_text(desktop_rollout("user", "assistant"), "utf-8")
    done = run_cli("ingest", "--transcript", str(rollout), "--client", "codex", "--wait")
    assert done.returncode == 0, done.stderr
    (digest,) = [m for m in json.loads(run_cli("list", "--json").stdout) if "digest" in m["tags"]]
    assert "Asked: let's update the defailt context compart to 90" in digest["content"]
    assert "Outcome: Implemented the default context compaction setting" in digest["content"]


@pytest.mark.parametrize("shape", ["json", "jsonl"])
def test_a_log_of_hook_payloads_that_only_name_their_transcript_says_which_to_ingest(
    tmp_path: Path, shape: str
) -> None:
    """logs/stop.json as a Stop hook logs its payloads (an array, or one a line): each
    names the transcript's path."""
    named = str(tmp_path / ".claude" / "projects" / "-w-app" / "abc.jsonl")
    payload = {"session_id": "abc", "transcript_path": named, "hook_event_name": "Stop"}
    both = [payload, {**payload, "stop_hook_active": True}]
    log = tmp_path / f"stop.{shape}"
    text = json.dumps(both, indent=2) if shape == "json" else "\n".join(map(json.dumps, both))
    log.write_text(text)
    done = run_cli("ingest", "--transcript", str(log), "--wait")
    assert done.returncode == 6
    (line,) = done.stderr.strip().splitlines()
    assert "a hook payload naming its transcript: ingest " in line
    assert named[-20:] in line or named[:20] in line  # the path, cut to fit one line
    assert run_cli("list", "--json").stdout.strip() == "[]"  # nothing half-stored


def test_a_jsonl_log_of_hook_payloads_with_their_transcripts_is_read() -> None:
    """One payload a line, as a Stop hook appends them to its log."""
    lines = records(CLAUDE)
    payloads = [
        {"hook_event_name": "Stop", "session_id": "s-1", "transcript": lines[:20]},
        {"hook_event_name": "SessionEnd", "session_id": "s-1", "transcript": lines[20:]},
    ]
    log = "\n".join(json.dumps(p) for p in payloads)
    expected = contents(CLAUDE.read_text("utf-8"), "claude-code", "session.jsonl")
    assert contents(log, None, "stop.jsonl") == expected
    assert contents(log, "claude-code", "stop.jsonl") == expected
