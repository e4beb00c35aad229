"""A fact two sessions state: session B's fact skipped as a duplicate of session A's
memory (or merged into it) names B's message as one more source of that memory, so
forgetting A keeps the memory, with B as its source, and says so; what only A said
goes; forgetting B too deletes it. Real `memctl` processes on a real SQLite file, two
real transcripts distilled by the rules (no LLM)."""

from __future__ import annotations

import json
from pathlib import Path

from memctl.config.files import forget_key
from memctl.store.sessions import keyed_session_id
from tests.conftest import run_cli
from tests.memories.test_forget_everywhere import (
    _files_holding,
    _files_holding_bytes,
    _ok,
    _transcript,
)
from tests.memories.test_forget_merged import ADDED, KEPT

WORD = "wombat3lanyard"  # a word only session A says
RULE = "We always deploy the shop with make ship, never by hand."
A_SAYS = [
    ("user", RULE),
    ("assistant", "Noted."),
    ("user", f"The {WORD} board on the wall is where I sketch the ideas."),
    ("assistant", "Nice."),
]
B_SAYS = [
    ("user", "Remember that we always deploy the shop with make ship, never by hand."),
    ("assistant", "Got it."),
]


def _two_sessions(tmp_path: Path) -> str:
    """Session a's rule, then session b stating it again (its fact skipped): the memory."""
    _ok("ingest", str(_transcript(tmp_path / "a.jsonl", A_SAYS)), "--session-id", "a", "--wait")
    second = _transcript(tmp_path / "b.jsonl", B_SAYS)
    ran = json.loads(_ok("ingest", str(second), "--session-id", "b", "--wait", "--json"))
    assert ran["runs"][0]["counts"] == {"skip": 1}
    (memory,) = [
        m for m in json.loads(_ok("list", "--all-scopes", "--json")) if "make ship" in m["content"]
    ]
    return str(memory["id"])


def _origins(memory_id: str) -> list[str]:
    got = json.loads(_ok("get", memory_id, "--json"))
    return [o["session_id"] for o in got["origins"]]


def _b_decision() -> list[str]:
    runs = json.loads(_ok("runs", "--json"))
    return [d["fact"] for r in runs if r["session_id"] == "b" for d in r["decisions"]]


def test_a_duplicate_skipped_names_its_session_as_one_more_source(tmp_path: Path) -> None:
    memory_id = _two_sessions(tmp_path)
    assert _origins(memory_id) == ["a", "b"]
    shown = _ok("get", memory_id)
    assert "from session a " in shown and "from session b " in shown


def test_forgetting_one_session_keeps_the_fact_another_states(home: Path, tmp_path: Path) -> None:
    memory_id = _two_sessions(tmp_path)
    assert _files_holding(home, WORD)

    done = json.loads(_ok("sessions", "forget", "a", "--yes", "--json"))

    assert done["kept"] == {memory_id: "b"} and memory_id not in done["memories"]
    got = json.loads(_ok("get", memory_id, "--json"))
    assert got["content"] == RULE and got["source"].startswith("session:b#")
    assert got["session_id"] == "b" and _origins(memory_id) == ["b"]
    found = json.loads(_ok("recall", "how do we deploy the shop", "--all-scopes", "--json"))
    assert memory_id in [r["id"] for r in found["results"]]
    assert _b_decision() == [RULE]  # b's run still says what it decided about which fact
    assert _files_holding(home, WORD) == []  # what only a said is nowhere

    done = json.loads(_ok("sessions", "forget", "b", "--yes", "--json"))

    assert done["memories"] == [memory_id] and done["kept"] == {}
    assert run_cli("get", memory_id).returncode != 0
    assert _files_holding(home, "make ship") == []


def test_the_forget_s_line_names_the_memory_it_kept_and_why(tmp_path: Path) -> None:
    memory_id = _two_sessions(tmp_path)
    line = " ".join(_ok("sessions", "forget", "a", "--yes").split())
    assert f"kept 1 memory another session also states, now its source: {memory_id[:8]} (b)" in line


def test_forgetting_the_session_that_restated_it_keeps_the_first_s_memory_alone(
    home: Path, tmp_path: Path
) -> None:
    memory_id = _two_sessions(tmp_path)

    done = json.loads(_ok("sessions", "forget", "b", "--yes", "--json"))

    assert done["memories"] == [] and done["kept"] == {}
    assert _origins(memory_id) == ["a"]  # b's message no longer counts among its sources
    assert json.loads(_ok("get", memory_id, "--json"))["content"] == RULE
    assert _files_holding(home, "Remember that we always") == []
    # a forgotten session states nothing: forgetting a now deletes the memory
    done = json.loads(_ok("sessions", "forget", "a", "--yes", "--json"))
    assert done["memories"] == [memory_id] and done["kept"] == {}
    assert _files_holding(home, "make ship") == []


def test_a_fact_merged_into_a_forgotten_session_s_memory_keeps_it(
    home: Path, tmp_path: Path
) -> None:
    """The merged text holds the first session's wording too: the second states the fact,
    so it stays (the report says so); forgetting the second as well deletes it."""
    first = _transcript(tmp_path / "a.jsonl", [("user", KEPT), ("assistant", "Noted.")])
    second = _transcript(tmp_path / "b.jsonl", [("user", ADDED), ("assistant", "Noted.")])
    _ok("ingest", str(first), "--session-id", "first", "--wait")
    merged = json.loads(_ok("ingest", str(second), "--session-id", "second", "--wait", "--json"))
    assert merged["runs"][0]["counts"] == {"merge": 1}
    (memory,) = json.loads(_ok("list", "--json"))

    done = json.loads(_ok("sessions", "forget", "first", "--yes", "--json"))

    assert done["kept"] == {memory["id"]: "second"} and done["memories"] == []
    got = json.loads(_ok("get", memory["id"], "--json"))
    assert got["content"] == memory["content"] and _origins(memory["id"]) == ["second"]

    done = json.loads(_ok("sessions", "forget", "second", "--yes", "--json"))

    assert done["memories"] == [memory["id"]]
    assert _files_holding(home, "vim editor") == []


def test_an_undone_restatement_no_longer_keeps_the_memory(home: Path, tmp_path: Path) -> None:
    memory_id = _two_sessions(tmp_path)
    (run,) = [r["id"] for r in json.loads(_ok("runs", "--json")) if r["session_id"] == "b"]
    _ok("undo", run)
    assert _origins(memory_id) == ["a"]

    done = json.loads(_ok("sessions", "forget", "a", "--yes", "--json"))

    assert done["memories"] == [memory_id] and done["kept"] == {}
    assert run_cli("get", memory_id).returncode != 0


def test_forgetting_the_one_message_keeps_the_fact_another_session_states(
    tmp_path: Path,
) -> None:
    memory_id = _two_sessions(tmp_path)

    done = json.loads(_ok("sessions", "forget", "a#1", "--yes", "--json"))

    assert done["kept"] == {memory_id: "b"} and done["memories"] == []
    assert _origins(memory_id) == ["b"]
    assert WORD in _ok("sessions", "grep", WORD, "--all-scopes")  # a's other message stays


def _vectors(text: str) -> list[bytes]:
    """A memory's searched vector and that of its text alone, as the CLI's test embedder
    makes them."""
    from memctl.embed.hashed import HashEmbedder
    from memctl.ingest.meaning import document_text

    made = HashEmbedder().embed([document_text(text), text])
    return [row.astype("float32").tobytes() for row in made]


def _said(path: Path, text: str, at: str) -> Path:
    lines = [{"role": "user", "content": text, "timestamp": at}]
    lines.append({"role": "assistant", "content": "Noted.", "timestamp": at})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_memory_kept_by_a_forget_is_worded_and_dated_as_the_other_session_states_it(
    home: Path, tmp_path: Path
) -> None:
    """A fact skipped as a duplicate in other words (an LLM's judgement; the rules' here,
    with their bar lowered) kept session a's wording and date when a was forgotten: a's
    own words stayed in the memory, its events and its vectors, and undoing a's ingest
    said the memory was "changed since"."""
    a_says = f"We always deploy the shop with make ship from the {WORD} branch, never by hand."
    _ok(
        "ingest",
        str(_said(tmp_path / "a.jsonl", a_says, "2026-03-02T09:00:00Z")),
        "--session-id",
        "a",
        "--wait",
    )
    b_file = _said(tmp_path / "b.jsonl", B_SAYS[0][1], "2026-05-04T10:00:00Z")
    lowered = ("-c", "reconcile.duplicate_similarity=0.5")
    ran = json.loads(_ok(*lowered, "ingest", str(b_file), "--session-id", "b", "--wait", "--json"))
    assert ran["runs"][0]["counts"] == {"skip": 1}
    (memory,) = json.loads(_ok("list", "--json"))
    assert WORD in memory["content"] and memory["created_at"].startswith("2026-03-02")
    assert "memctl.db" in _files_holding_bytes(home, _vectors(a_says)[1])  # the test sees it

    done = json.loads(_ok("sessions", "forget", "a", "--yes", "--json"))

    assert done["kept"] == {memory["id"]: "b"} and done["reworded"] == [memory["id"]]
    got = json.loads(_ok("get", memory["id"], "--json"))
    assert got["content"] == RULE and got["created_at"].startswith("2026-05-04")
    assert _origins(memory["id"]) == ["b"]
    assert _files_holding(home, WORD) == []
    assert [_files_holding_bytes(home, v) for v in _vectors(a_says)] == [[], []]
    kept_as = keyed_session_id(forget_key(home), "a")  # the id the forgotten session is kept under
    runs = json.loads(_ok("runs", "--json"))
    (a_run,) = [r["id"] for r in runs if r["session_id"] == kept_as]
    undone = run_cli("undo", a_run)
    assert undone.returncode != 0 and "changed since" not in undone.stderr
    assert (
        "its session was forgotten" in undone.stderr and f"{memory['id'][:8]} (b)" in undone.stderr
    )
