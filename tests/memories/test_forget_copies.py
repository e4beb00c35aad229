"""A resumed or forked conversation: the client writes a new session repeating the earlier
messages. `sessions forget` names the other sessions holding its messages verbatim, and
with --with-copies forgets them there too (the copy's own messages stay). Real SQLite
files; real `memctl` processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.memories.test_forget_everywhere import _files_holding, _ok, _transcript

WORD = "quokka7marmalade"
SAID = [
    ("user", f"My staging database password rotation uses the {WORD} vault path."),
    ("assistant", "Understood: staging rotates its database password through that vault path."),
    ("user", "ok"),
]
LATER = ("user", "Now let us write the release notes for version 2.4 of the billing service.")


def _stored(tmp_path: Path) -> None:
    first = _transcript(tmp_path / "a.jsonl", SAID)
    resumed = _transcript(tmp_path / "b.jsonl", [*SAID, LATER])
    _ok("ingest", str(first), "--session-id", "first", "--wait")
    _ok("ingest", str(resumed), "--session-id", "resumed", "--wait")


def test_forget_names_the_sessions_holding_copies_and_leaves_them(
    home: Path, tmp_path: Path
) -> None:
    _stored(tmp_path)
    done = json.loads(_ok("sessions", "forget", "first", "--yes", "--json"))
    assert done["copies"] == {"resumed": 2} and done["copies_forgotten"] is False
    assert WORD in _ok("sessions", "show", "resumed")
    _ok("sessions", "forget", "resumed#4", "--yes")  # a copy without copies elsewhere
    line = _ok("sessions", "forget", "resumed", "--yes")
    assert "other session" not in line and len(line.strip().splitlines()) == 1


def test_the_line_names_the_copies_and_the_prompt_warns(tmp_path: Path) -> None:
    _stored(tmp_path)
    asked = run_cli("sessions", "forget", "firs", input="n\n")
    assert asked.returncode != 0 and "resumed also holds copies" in asked.stderr
    # the session found, not the prefix typed: its id, client, day, messages and title
    question = asked.stderr.split("--with-copies. ")[1]
    assert question.startswith("Forget session first · generic · 20")
    assert '(3 messages: "My staging database password rotation uses the…")' in question
    lines = _ok("sessions", "forget", "first", "--yes").strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("1 other session holds copies")
    assert "resumed (2)" in lines[1]


def test_with_copies_forgets_them_everywhere_and_keeps_the_rest(home: Path, tmp_path: Path) -> None:
    _stored(tmp_path)
    done = json.loads(_ok("sessions", "forget", "first", "--with-copies", "--yes", "--json"))
    assert done["copies"] == {"resumed": 2} and done["copies_forgotten"] is True
    assert _files_holding(home, WORD) == []
    shown = json.loads(_ok("sessions", "show", "resumed", "--json"))["messages"]
    assert [m["content"] for m in shown] == ["[forgotten]", "[forgotten]", "ok", LATER[1]]


def test_one_message_with_copies_and_a_bad_reference(tmp_path: Path) -> None:
    _stored(tmp_path)
    done = json.loads(_ok("sessions", "forget", "first#1", "--with-copies", "--yes", "--json"))
    assert done["copies"] == {"resumed": 1} and done["messages"] == 2
    shown = json.loads(_ok("sessions", "show", "resumed", "--json"))["messages"]
    assert [m["content"] for m in shown][:2] == ["[forgotten]", SAID[1][1]]
    bad = run_cli("sessions", "forget", "nope", "--with-copies", "--yes")
    assert bad.returncode != 0 and bad.stderr.strip().splitlines() == [
        "memctl: error: no stored session 'nope' (see `memctl sessions list`)"
    ]


def test_a_stock_tool_result_shared_by_unrelated_sessions_is_no_copy(
    home: Path, tmp_path: Path
) -> None:
    stock = ("tool", "Todos have been modified successfully. Ensure that you continue.")
    one = _transcript(tmp_path / "a.jsonl", [SAID[0], stock])
    other = _transcript(tmp_path / "b.jsonl", [LATER, stock])
    _ok("ingest", str(one), "--session-id", "first", "--wait")
    _ok("ingest", str(other), "--session-id", "other", "--wait")
    done = json.loads(_ok("sessions", "forget", "first", "--with-copies", "--yes", "--json"))
    assert done["copies"] == {}
    shown = json.loads(_ok("sessions", "show", "other", "--json"))["messages"]
    assert [m["content"] for m in shown] == [LATER[1], stock[1]]
