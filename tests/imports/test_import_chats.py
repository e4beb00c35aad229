"""Chats between people imported as a user runs it (`memctl import`, real processes, files
written here): WhatsApp's two shapes, a "Name: text" transcript, Slack's export (zip and
folders); each message keeps who said it and when; a malformed export is one clear line."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from memctl.store.database import Database
from tests.conftest import run_cli

NO_LLM = {"MEMCTL_LLM": "none"}

ANDROID = """\
12/31/23, 9:41 PM - Messages and calls are end-to-end encrypted.
12/31/23, 9:42 PM - Tim Cole: Did you book the train to Edinburgh?
12/31/23, 9:43 PM - John: Not yet,
the fares go down on Tuesday.
1/2/24, 10:01 AM - Tim Cole added Ann
1/2/24, 10:02 AM - Tim Cole: Book it before the 13th!
"""
IOS = """\
[13/01/2024, 21:41:05] Ann: \u200eMessages and calls are end-to-end encrypted.
\u200e[13/01/2024, 21:42:05] Ann: Shall we paint the shed blue?
[14/01/2024, 08:00:00] Bo: Green.
Definitely green.
[14/01/2024, 08:01:30] Ann: Green it is.
[14/01/2024, 08:02:00] Bo: \u200eimage omitted
"""
TRANSCRIPT = """\
Tim: Did you book the train to Edinburgh?
John: Not yet.
The fares go down on Tuesday.
Tim: Book it before the 13th.
John: Fine, Tuesday then.
"""
NOTES = """\
# Release notes

Note: the cache moved.
Warning: the old flag is gone.
Note: the build takes longer now.
Warning: the tests too.
"""


def memctl(*args: str, code: int = 0) -> str:
    done = run_cli(*args, env=NO_LLM)
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout + done.stderr


def stored(home: Path, name: str) -> list[tuple[str, str, str, str]]:
    """(role, speaker, text, time) of the messages of the import of the file ``name``."""
    with Database.open(home / "memctl.db") as db:
        return [
            tuple(row)  # type: ignore[misc]
            for row in db.tuples(
                "SELECT m.role, m.speaker, m.content, m.created_at FROM messages m "
                "JOIN sessions s ON s.id = m.session_id WHERE s.source LIKE ? ORDER BY m.seq",
                (f"%{name}",),
            )
        ]


def test_whatsapp_exports_of_both_phones_keep_authors_times_and_whole_messages(
    tmp_path: Path, home: Path
) -> None:
    (tmp_path / "WhatsApp Chat with Tim.txt").write_text(ANDROID)
    (tmp_path / "ios.txt").write_text("\u200e" + IOS)
    out = memctl("import", str(tmp_path / "WhatsApp Chat with Tim.txt"), str(tmp_path / "ios.txt"))
    assert out.count("whatsapp, atomic") == 2

    android = stored(home, "WhatsApp Chat with Tim.txt")
    assert [(role, who, text) for role, who, text, _ in android[1:]] == [
        ("system", "", "Messages and calls are end-to-end encrypted."),
        ("user", "Tim Cole", "Tim Cole: Did you book the train to Edinburgh?"),
        ("user", "John", "John: Not yet,\nthe fares go down on Tuesday."),
        ("system", "", "Tim Cole added Ann"),
        ("user", "Tim Cole", "Tim Cole: Book it before the 13th!"),
    ]
    assert android[0][2].startswith("conversation: WhatsApp Chat with Tim")
    # 12-hour clock, month first; read as this machine's local time, stored in UTC
    assert android[2][3][:7] in ("2023-12", "2024-01") and android[5][3][:7] == "2024-01"

    ios = stored(home, "ios.txt")
    assert [(role, who, text) for role, who, text, _ in ios[1:]] == [
        ("system", "", "Messages and calls are end-to-end encrypted."),
        ("user", "Ann", "Ann: Shall we paint the shed blue?"),
        ("user", "Bo", "Bo: Green.\nDefinitely green."),
        ("user", "Ann", "Ann: Green it is."),
        ("user", "Bo", "Bo: image omitted"),  # a photo Bo sent, not the app's notice
    ]
    assert ios[3][3][:7] == "2024-01"  # day first: 13/01, 14/01

    with Database.open(home / "memctl.db") as db:
        session = db.value("SELECT id FROM sessions WHERE source LIKE '%ios.txt'")
    show = memctl("sessions", "show", session)
    assert " [4] Bo (user) · 2024-01-" in show and " [2] system · 2024-01-" in show
    assert "\n    Green.\n" in show  # Bo named once, above the text
    found = " ".join(memctl("recall", "definitely green").split())
    assert "Bo: Green." in found and "Bo: Bo:" not in found


def test_a_transcript_of_named_turns_is_a_message_a_turn_and_notes_stay_a_document(
    tmp_path: Path, home: Path
) -> None:
    (tmp_path / "talk.txt").write_text(TRANSCRIPT)
    (tmp_path / "notes.md").write_text(NOTES)
    out = " ".join(memctl("import", str(tmp_path / "talk.txt"), str(tmp_path / "notes.md")).split())
    assert "transcript, atomic" in out and "markdown" in out
    talk = stored(home, "talk.txt")
    assert [(who, text) for _, who, text, _ in talk[1:]] == [
        ("Tim", "Tim: Did you book the train to Edinburgh?"),
        ("John", "John: Not yet.\nThe fares go down on Tuesday."),
        ("Tim", "Tim: Book it before the 13th."),
        ("John", "John: Fine, Tuesday then."),
    ]
    notes = stored(home, "notes.md")
    assert [(who, text) for _, who, text, _ in notes] == [("", NOTES)]  # one piece, as read


def slack_export(root: Path) -> None:
    """A workspace export unpacked: users, a channel with a thread, an edit, a deletion."""
    root.mkdir()
    users = [
        {"id": "U1", "name": "tim", "profile": {"display_name": "Tim", "real_name": "Tim Cole"}},
        {"id": "U2", "name": "jdoe", "real_name": "John Doe", "profile": {"display_name": ""}},
    ]
    (root / "users.json").write_text(json.dumps(users))
    (root / "channels.json").write_text(json.dumps([{"id": "C1", "name": "trips"}]))
    (root / "trips").mkdir()
    day1 = [
        {
            "type": "message",
            "subtype": "channel_join",
            "user": "U2",
            "text": "<@U2> has joined",
            "ts": "1703980000.000100",
        },
        {
            "type": "message",
            "user": "U1",
            "text": "Edinburgh in May, <@U2>?",
            "ts": "1703980800.000100",
            "thread_ts": "1703980800.000100",
        },
        {
            "type": "message",
            "user": "U2",
            "text": "Book the sleeper train.",
            "ts": "1703981000.000200",
            "edited": {"user": "U2", "ts": "1703981100.000000"},
        },
        {
            "type": "message",
            "subtype": "tombstone",
            "user": "U2",
            "text": "This message was deleted.",
            "ts": "1703981200.000300",
        },
    ]
    day2 = [
        {
            "type": "message",
            "user": "U2",
            "text": "Yes, May works.",
            "ts": "1704067300.000100",
            "thread_ts": "1703980800.000100",
            "parent_user_id": "U1",
        },
    ]
    (root / "trips" / "2023-12-31.json").write_text(json.dumps(day1))
    (root / "trips" / "2024-01-01.json").write_text(json.dumps(day2))


SLACK_SAID = [
    ("Tim", "Tim: Edinburgh in May, @John Doe?"),
    ("John Doe", "John Doe: (in a thread) Yes, May works."),
    ("John Doe", "John Doe: Book the sleeper train."),
]


def test_a_slack_export_zip_and_a_channel_folder_keep_names_threads_and_edits(
    tmp_path: Path, home: Path
) -> None:
    slack_export(tmp_path / "export")
    archive = tmp_path / "workspace.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted((tmp_path / "export").rglob("*.json")):
            out.write(path, str(path.relative_to(tmp_path / "export")))
    assert "slack, atomic" in " ".join(memctl("import", str(archive)).split())
    zipped = stored(home, "workspace.zip")
    assert zipped[0][2].startswith("conversation: #trips")
    assert [(who, text) for _, who, text, _ in zipped[1:]] == SLACK_SAID
    assert zipped[1][3].startswith("2023-12-31T00:00")  # ts 1703980800, UTC
    assert "unchanged" in memctl("import", str(archive))  # the same export: not again
    # grep names who said the match and its neighbours, each name once
    found = memctl("sessions", "grep", "sleeper")
    assert ">[4] John Doe (user): Book the sleeper train." in found
    assert "[3] John Doe (user): (in a thread) Yes, May works." in found
    (match,) = json.loads(run_cli("sessions", "grep", "sleeper", "--json", env=NO_LLM).stdout)
    assert match["speaker"] == "John Doe" and match["lines"] == ["Book the sleeper train."]
    assert match["before"][0]["speaker"] == "John Doe"

    memctl("import", str(tmp_path / "export" / "trips"))  # users.json from the folder above
    folder = stored(home, "trips")
    assert [(who, text) for _, who, text, _ in folder[1:]] == SLACK_SAID


def test_malformed_binary_and_oversized_exports_are_one_clear_line_each(
    tmp_path: Path, home: Path
) -> None:
    slack_export(tmp_path / "broken")
    (tmp_path / "broken" / "trips" / "2024-01-02.json").write_text('[{"ts": "1", "text": ')
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 not really a zip")
    with zipfile.ZipFile(tmp_path / "photos.zip", "w") as out:
        out.writestr("IMG_0001.txt", "not a chat")
    with zipfile.ZipFile(tmp_path / "huge.zip", "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("users.json", "[]")
        out.writestr("general/2024-01-01.json", b" " * ((64 << 20) + 1))
    (tmp_path / "blob.txt").write_bytes(bytes(range(256)) * 64)
    (tmp_path / "journal").mkdir()  # dated JSON files, no Slack export: files as they are
    (tmp_path / "journal" / "2024-01-01.json").write_text('[{"mood": "fine"}]')
    names = ["broken", "bad.zip", "photos.zip", "huge.zip", "blob.txt", "journal"]
    done = run_cli("import", *(str(tmp_path / n) for n in names), env=NO_LLM)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert "trips/2024-01-02.json is not valid JSON" in said
    assert "bad.zip is not a readable zip archive" in said
    assert "photos.zip is a zip archive, not a Slack export" in said
    assert "general/2024-01-01.json holds 67,108,865 bytes" in said
    assert "blob.txt holds binary data" in said
    assert "2024-01-01.json looks like JSON, but is not a format memctl imports" in said
    assert "5 files failed" in said and "slack" not in said
    with Database.open(home / "memctl.db") as db:  # nothing half-stored
        assert db.value("SELECT count(*) FROM messages") == 0


def test_a_captured_transcript_naming_its_participants_keeps_them(
    tmp_path: Path, home: Path
) -> None:
    """OpenAI's chat messages name a participant (``name``): capture keeps it as the speaker;
    a tool's ``name`` (its function) is no speaker."""
    messages = [
        {"role": "user", "name": "Tim", "content": "We moved the deploy to Fridays."},
        {"role": "assistant", "content": "Noted: deploys on Fridays."},
        {"role": "tool", "name": "calendar", "content": "Friday 10:00 booked"},
    ]
    (tmp_path / "chat.json").write_text(json.dumps({"messages": messages}))
    memctl("ingest", "--transcript", str(tmp_path / "chat.json"))
    with Database.open(home / "memctl.db") as db:
        said = db.tuples("SELECT role, speaker FROM messages ORDER BY seq")
        session = db.value("SELECT session_id FROM messages WHERE seq = 1")
    assert said == [("user", "Tim"), ("assistant", ""), ("tool", "")]
    memctl("sessions", "forget", f"{session}#1", "--yes")  # who said it goes with the text
    with Database.open(home / "memctl.db") as db:
        assert db.tuples("SELECT speaker FROM messages WHERE seq = 1") == [("",)]
