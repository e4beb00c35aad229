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


def _resumed_after_the_forget(tmp_path: Path, forgotten: str) -> list[str]:
    """The first conversation stored and forgotten (``forgotten``: the session, or one of
    its messages), then resumed as a new session (a client's resume: a new id, the
    conversation repeated) and captured twice as it grows; the resumed session's texts."""
    _ok("ingest", str(_transcript(tmp_path / "a.jsonl", SAID)), "--session-id", "first", "--wait")
    _ok("sessions", "forget", forgotten, "--yes")
    resumed = tmp_path / "b.jsonl"
    for lines in ([*SAID, LATER], [*SAID, LATER, ("assistant", "Release notes drafted.")]):
        _ok("ingest", str(_transcript(resumed, lines)), "--session-id", "resumed", "--wait")
    shown = json.loads(_ok("sessions", "show", "resumed", "--json"))["messages"]
    return [m["content"] for m in shown]


def test_a_conversation_resumed_after_its_forget_brings_none_of_it_back(
    home: Path, tmp_path: Path
) -> None:
    """A client's resume written after the forget (``claude --resume``: a new session
    repeating the conversation) was stored whole: the forgotten words were back in the
    store, its indexes and the memories distilled from it. Its copies of the forgotten
    messages are stored forgotten, as ``--with-copies`` leaves them, and what the resumed
    session says itself is kept, as is "ok": a message that short keeps no digest (a PIN
    typed alone would be guessed against it)."""
    texts = _resumed_after_the_forget(tmp_path, "first")
    assert texts == ["[forgotten]", "[forgotten]", "ok", LATER[1], "Release notes drafted."]
    assert _files_holding(home, WORD) == []
    assert WORD not in _ok("recall", WORD, "--all-scopes")


def test_a_message_forgotten_alone_stays_forgotten_in_a_later_resume(
    home: Path, tmp_path: Path
) -> None:
    texts = _resumed_after_the_forget(tmp_path, "first#1")
    assert texts == ["[forgotten]", SAID[1][1], "ok", LATER[1], "Release notes drafted."]
    assert _files_holding(home, WORD) == []


def test_an_unrelated_session_keeps_what_it_shares_with_a_forgotten_one(
    home: Path, tmp_path: Path
) -> None:
    """A later session that is no resume keeps its "ok" and a client's stock tool result,
    though a forgotten session held them too: no message of its own repeats one."""
    stock = ("tool", "Todos have been modified successfully. Ensure that you continue.")
    _ok("ingest", str(_transcript(tmp_path / "a.jsonl", [*SAID, stock])), "--session-id", "a")
    _ok("sessions", "forget", "a", "--yes")
    said = [LATER, stock, ("user", "ok")]
    _ok("ingest", str(_transcript(tmp_path / "b.jsonl", said)), "--session-id", "b")
    shown = json.loads(_ok("sessions", "show", "b", "--json"))["messages"]
    assert [m["content"] for m in shown] == [text for _, text in said]


def test_a_conversation_resumed_after_a_redact_brings_the_value_back_nowhere(
    home: Path, tmp_path: Path
) -> None:
    """The same for ``redact``: the resumed session's copy of a message it rewrote is
    stored as the redacted message reads, and the value is in no file."""
    _ok("ingest", str(_transcript(tmp_path / "a.jsonl", SAID)), "--session-id", "first", "--wait")
    _ok("redact", WORD)
    said = [*SAID, LATER]
    _ok("ingest", str(_transcript(tmp_path / "b.jsonl", said)), "--session-id", "b", "--wait")
    shown = json.loads(_ok("sessions", "show", "b", "--json"))["messages"]
    assert [m["content"] for m in shown] == [SAID[0][1].replace(WORD, "[REDACTED]")] + [
        text for _, text in said[1:]
    ]
    assert _files_holding(home, WORD) == []


def _chatgpt(path: Path, conversations: list[tuple[str, str]]) -> Path:
    """A ChatGPT export (``conversations.json``) of (id, the user's message) conversations,
    each answered the same way."""

    def node(ident: str, role: str, text: str, parent: str, child: str | None) -> dict[str, object]:
        said = {"content_type": "text", "parts": [text]}
        message = {"id": ident, "author": {"role": role}, "create_time": 1718006401.0}
        return {
            "id": ident,
            "message": {**message, "content": said, "status": "finished_successfully"},
            "parent": parent,
            "children": [child] if child else [],
        }

    exported = []
    for n, (ident, text) in enumerate(conversations):
        root = {"id": "r", "message": None, "parent": None, "children": ["u"]}
        answer = f"Noted, conversation {n} is kept in mind for the next steps."
        mapping = {
            "r": root,
            "u": node("u", "user", text, "r", "a"),
            "a": node("a", "assistant", answer, "u", None),
        }
        exported.append(
            {"title": f"Chat {n}", "id": ident, "mapping": mapping, "current_node": "a"}
        )
    path.write_text(json.dumps(exported), encoding="utf-8")
    return path


def test_a_chat_export_imported_again_after_a_forget_brings_none_of_it_back(
    home: Path, tmp_path: Path
) -> None:
    """A chat export is cumulative (ChatGPT's holds every conversation): imported again
    after its session was forgotten (a new file: one conversation more), it stored and
    distilled the forgotten conversations again."""
    rule = f"We always deploy the {WORD} worker with make ship, never by hand."  # a fact
    vault = ("0b6f8a64-3c41-4a55-8c44-2f0d6a3b1e01", rule)
    later = ("5d4c3b2a-1f0e-4d8c-9b6a-5f4e3d2c1b0a", LATER[1])
    _ok("import", str(_chatgpt(tmp_path / "first.json", [vault])))
    assert WORD in _ok("list")
    first = json.loads(_ok("sessions", "list", "--client", "import", "--json"))[0]["id"]
    _ok("sessions", "forget", first, "--yes")
    _ok("import", str(_chatgpt(tmp_path / "again.json", [vault, later])))
    assert _files_holding(home, WORD) == []
    again = json.loads(_ok("sessions", "list", "--client", "import", "--json"))[0]["id"]
    shown = json.loads(_ok("sessions", "show", again, "--json"))["messages"]
    assert [m["content"] for m in shown if m["role"] == "user"] == ["[forgotten]", LATER[1]]
