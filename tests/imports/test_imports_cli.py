"""`memctl import` as a user runs it: real processes, files, directories, globs and stdin."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import on_a_terminal, run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
NO_LLM = {"MEMCTL_LLM": "none"}


def memctl(*args: str, code: int = 0, **kwargs: object) -> tuple[str, str]:
    # Near-duplicate notes merge by meaning: the real model.
    done = run_cli(*args, env=NO_LLM, real_model=True, **kwargs)  # type: ignore[arg-type]
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout, done.stderr


def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    (folder / "deep").mkdir(parents=True)
    shutil.copy(FIXTURES / "basic-memory-note.md", folder / "coffee.md")
    shutil.copy(FIXTURES / "conversation.txt", folder / "deep" / "chat.txt")
    (folder / "deep" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    return folder


def test_files_directories_globs_and_stdin(tmp_path: Path) -> None:
    folder = notes(tmp_path)
    shutil.copy(FIXTURES / "mem0-get-all.json", tmp_path / "mem0.json")
    out, err = memctl(
        "import",
        str(folder),
        str(tmp_path / "*.json"),
        "-",
        "--json",
        input="user: hi\nassistant: hello\nuser: I prefer tabs over spaces.\n",
    )
    report = json.loads(out)
    files = {Path(f["name"]).name: f for f in report["files"]}
    assert {n: (f["format"], f["strategy"], f["status"]) for n, f in files.items()} == {
        "coffee.md": ("front-matter", "document", "imported"),
        "chat.txt": ("text", "atomic", "imported"),
        "photo.png": ("", "", "skipped"),
        "mem0.json": ("mem0", "records", "imported"),
        "standard input": ("text", "atomic", "imported"),
    }
    # six facts; the real model finds the two about a Tidepool engineer alike: profile, merged
    assert (report["imported"], report["merged"], report["errors"]) == (5, 1, [])
    assert "importing" not in out + err  # no progress bar when not on a terminal
    listed = json.loads(memctl("list", "--json")[0])
    assert len(listed) == 5
    assert any(m["source"] == "file:stdin#message-3" for m in listed)
    out, _ = memctl("import", str(folder), str(tmp_path / "*.json"))
    assert out.count("unchanged") == 3 and "0 memories imported" in out
    assert "; 3 imported before (--force imports them again)" in " ".join(out.split())
    # a forgotten import is not imported again unasked: the summary says why, and how
    memctl("sessions", "forget", files["coffee.md"]["session_id"], "--yes")
    out, _ = memctl("import", str(folder / "coffee.md"))
    said = " ".join(out.split())
    assert "0 memories imported" in said and "its import was forgotten on" in said
    assert said.endswith("; 1 file whose import was forgotten (--force imports it again)")


def test_dry_run_shows_strategy_and_counts_and_writes_nothing(tmp_path: Path) -> None:
    folder = notes(tmp_path)
    out, _ = memctl("import", str(folder), "--dry-run")
    assert "dry run: nothing written" in out
    rows = [line for line in out.splitlines() if "dry-run" in line]
    details = [line.strip() for line in out.splitlines()]  # under each file: format, strategy
    assert len(rows) == 2
    assert any(", document" in d for d in details)
    assert any(", atomic" in d for d in details)
    assert "3 memories would be imported" in out
    assert json.loads(memctl("list", "--json")[0]) == []


def test_a_file_with_no_fact_says_so_and_a_dry_run_of_several_says_how_it_counts(
    tmp_path: Path,
) -> None:
    """The walk: a chat the rules keep no fact from read "0 0 0" and nothing else; a dry run
    of nine files said 16 memories, the import made 14 (a fact two files share)."""
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "hello.txt").write_text("user: hi\nassistant: hello\nuser: thanks\n")
    shutil.copy(FIXTURES / "conversation.txt", folder / "chat.txt")
    done = run_cli("import", str(folder), "--dry-run", env=NO_LLM)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert (
        "(each file against the store as it is now: a fact two files share counts in each)" in said
    )
    assert said.count("no fact in it to keep as a memory") == 1
    done = run_cli("import", str(folder / "hello.txt"), "--json", env=NO_LLM)
    (file,) = json.loads(done.stdout)["files"]
    assert file["imported"] == 0 and "`sessions grep` and recall find it" in file["why"]
    assert "each file against the store" not in run_cli("import", str(folder), env=NO_LLM).stdout


def test_a_bad_file_fails_alone_and_sets_the_exit_status(tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_text("We deploy with make release.\n")
    broken = tmp_path / "broken.json"
    broken.write_text('[{"title": "x", "mapping": {"a": ')
    out, err = memctl("import", str(good), str(broken), str(tmp_path / "nope.md"), code=6)
    assert err.strip().splitlines()[-1] == "memctl: error: 2 of 3 files could not be imported"
    assert "imported" in out and "failed" in out and "no such file or directory" in out
    assert [m["content"] for m in json.loads(memctl("list", "--json")[0])] == [
        "We deploy with make release."
    ]
    (tmp_path / "empty").mkdir()
    assert "found no files to import" in memctl("import", str(tmp_path / "empty"), code=6)[1]
    line = memctl("import", str(broken), code=6)[1].strip()
    assert line.startswith("memctl: error:") and "broken.json is not valid JSON" in line


def test_strategy_choices_and_force(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("# Deploy\nWe deploy with make release.\n\n## Rollback\nRevert the tag.\n")
    assert "invalid value" in run_cli("import", str(doc), "--strategy", "chunks").stderr.lower()
    report = json.loads(memctl("import", str(doc), "--strategy", "section", "--json")[0])
    assert (report["files"][0]["strategy"], report["imported"]) == ("section", 2)
    args = ("import", str(doc), "--strategy", "section", "--json", "--force")
    again = json.loads(memctl(*args)[0])
    assert (again["files"][0]["status"], again["imported"], again["skipped"]) == ("imported", 0, 2)


def test_the_progress_bar_counts_memories_on_a_terminal(tmp_path: Path) -> None:
    paths = [tmp_path / f"{name}.jsonl" for name in ("a", "b")]
    for number, path in enumerate(paths):
        path.write_text("".join(f'{{"content": "Fact {number}-{n}."}}\n' for n in range(70)))
    home = ("--home", str(tmp_path / "home"))
    shown = on_a_terminal(*home, "import", *map(str, paths), env={"MEMCTL_EMBEDDER": "hash"})
    assert "importing memories" in shown and "140/140" in shown and "reading bytes" in shown
    assert "\x1b[2K" in shown and "140 memories imported" in shown  # bar cleared, table
    # one file of some hundred memories (~15 s of real embedding) shows its bar too
    big = tmp_path / "big.jsonl"
    big.write_text("".join(f'{{"content": "Fact {n}: {"x" * 90}."}}\n' for n in range(700)))
    shown = on_a_terminal(*home, "import", str(big), env={"MEMCTL_EMBEDDER": "hash"})
    assert "importing memories" in shown and "700/700" in shown


def test_a_folder_s_path_reads_the_same_in_every_row_and_source(tmp_path: Path) -> None:
    """s44-leads: under mktemp's folder (`tmp.SvCwX5Kyc1`, 10 random characters) the
    table showed `deploy.md`'s path with the folder as `[REDACTED:high-entropy]` and
    `x.txt`'s in clear: the random-string check ran over the folder's name and the file's
    name after it (20 characters or more with `deploy`, fewer with `x`). The user's own
    path reads as they typed it in every row and every memory's source; a folder named
    after a token still does not (tests/test_leaks.py)."""
    folder = tmp_path / "tmp.SvCwX5Kyc1" / "notes"
    folder.mkdir(parents=True)
    (folder / "deploy.md").write_text("# Deploy\n\nWe deploy on Tuesdays with blue-green.\n")
    (folder / "x.txt").write_text("We keep the staging database in eu-west-1.\n")
    done = run_cli("import", str(folder), "--json", env=NO_LLM)
    assert done.returncode == 0, done.stderr
    names = [f["name"] for f in json.loads(done.stdout)["files"]]
    assert names == [str(folder / "deploy.md"), str(folder / "x.txt")]
    sources = {m["source"] for m in json.loads(run_cli("list", "--json").stdout)}
    assert sources and all(s.startswith(f"file:{folder.resolve()}/") for s in sources), sources


def test_a_folder_s_chat_json_it_cannot_take_in_is_counted_failed(tmp_path: Path) -> None:
    """s44-leads: a generic role/content JSON met in a folder was "skipped", and the import
    ended "0 files failed" with status 0; it fails now, counted, with an error that says
    what to do, and that is true: `memctl ingest FILE` stores it. Other JSON (data, a
    package's manifest) met in a folder is still passed over."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "deploy.md").write_text("We deploy on Tuesdays with blue-green.\n")
    chat = folder / "chat.json"
    said = [{"role": "user", "content": "We keep staging in eu-west-1."}]
    chat.write_text(json.dumps({"messages": [*said, {"role": "assistant", "content": "Noted."}]}))
    (folder / "package.json").write_text('{"name": "site", "version": "1.0.0"}\n')
    done = run_cli("import", str(folder), env=NO_LLM)
    assert done.returncode == 6, (done.stdout, done.stderr)
    out = " ".join(done.stdout.split())
    assert out.endswith("3 files: 1 memory imported, 0 merged, 0 skipped; 1 file failed")
    assert "chat.json failed" in out and "`memctl ingest FILE` stores them as a session" in out
    assert "package.json skipped" in out
    assert (
        done.stderr.strip().splitlines()[-1] == "memctl: error: 1 of 3 files could not be imported"
    )
    ingested = run_cli("ingest", str(chat), env=NO_LLM)
    assert ingested.returncode == 0 and "2 messages read, 2 new" in ingested.stdout
