"""Forgetting that forgets (issue 34, item 4): after `sessions forget`, `delete SESSION#N
--permanent`, `forget SESSION#N` and `redact`, the text is in no place memctl keeps it:
not in `sessions grep`, `show`, `get` or recall, and not in the bytes of the database, its
WAL or the backups `maintain` made. Real processes on a real SQLite file."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from memctl.api import memory as memory_api
from memctl.api import sync as sync_api
from memctl.context import Context
from memctl.model import Memory
from tests.conftest import Shared, run_cli
from tests.conftest import shared as shared_store
from tests.syncing import bare_repo, git, history, machine, shared

# A message nobody else says: its words are indexed terms, its phrase a byte string.
LEAK = "the vault combination is quokka7marmalade under the blue heron"
WORD = "quokka7marmalade"
OTHER = "we deploy the payments service with make release from main"
BACKUPS = ["-c", "maintain.backups=3", "-c", "maintain.backup_every_hours=0"]
VECTORS_ON = ["-c", "recall.message_vectors=true"]  # recall reads the messages' vectors


def _transcript(path: Path, lines: list[tuple[str, str]]) -> Path:
    path.write_text(
        "".join(json.dumps({"role": r, "content": c}) + "\n" for r, c in lines), encoding="utf-8"
    )
    return path


def _ok(*args: str) -> str:
    done = run_cli(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _files_holding(home: Path, needle: str) -> list[str]:
    """Every file under the data directory whose bytes hold ``needle``."""
    raw = needle.encode()
    return sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and raw in p.read_bytes()
    )


def _files_holding_bytes(home: Path, raw: bytes) -> list[str]:
    return sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and raw in p.read_bytes()
    )


def _message_vector(text: str) -> bytes:
    """The stored vector of a message's first part, as the CLI's test embedder makes it."""
    from memctl.embed.hashed import HashEmbedder
    from memctl.ingest.message_vectors import parts
    from memctl.store.message_vectors import quantised

    return quantised(HashEmbedder().embed([parts(text)[0]])[0])


def _stored(tmp_path: Path) -> tuple[Path, str]:
    """A session holding LEAK, distilled, backed up; (its transcript, its id)."""
    transcript = _transcript(
        tmp_path / "leak.jsonl",
        [
            ("user", f"remember this: {LEAK}"),
            ("assistant", "Noted, I will keep that in mind."),
            ("user", f"also: {OTHER}"),
        ],
    )
    _ok(*VECTORS_ON, "ingest", "--transcript", str(transcript), "--wait")
    _ok(*BACKUPS, "maintain")
    session = json.loads(_ok("sessions", "list", "--all-scopes", "--json"))[0]["id"]
    return transcript, session


@pytest.fixture(scope="module")
def leaked(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> tuple[Shared, str]:
    """``_stored`` once for the module: the store (each test works on its own copy) and the
    session's id; the transcript is ``leak.jsonl`` beside the store's project."""
    with shared_store(tmp_path_factory, user_cache, "leaked") as place:
        _, session = _stored(place.project.parent)
    return place, session


def _copy(leaked: tuple[Shared, str], home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The stored session copied to ``home``, run from its project; the session's id."""
    place, session = leaked
    monkeypatch.chdir(place.copy(home).project)
    return session


@pytest.mark.fresh
def test_sessions_forget_takes_the_text_out_of_every_place(home: Path, tmp_path: Path) -> None:
    transcript, session = _stored(tmp_path)
    assert _files_holding(home, WORD)  # the test sees it before: db, WAL or backup
    assert WORD in _ok("sessions", "grep", WORD, "--all-scopes")
    before = json.loads(_ok(*VECTORS_ON, "recall", WORD, "--all-scopes", "--sessions", "--json"))
    assert WORD in json.dumps(before["results"])
    vector = _message_vector(f"remember this: {LEAK}")  # stored by the worker, indexed
    assert "memctl.db.message-vectors" in " ".join(_files_holding_bytes(home, vector))
    (backup,) = (home / "backups").glob("memctl-*.db")  # and one a killed maintain left
    shutil.copyfile(backup, backup.with_name("memctl-20260101T000000000000Z.db.partial"))
    shutil.copyfile(backup, home / "memctl.db.restoring")  # and one a killed restore left

    done = run_cli("sessions", "forget", session, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["messages"] == 3 and report["backups_rewritten"]

    assert WORD not in _ok("sessions", "grep", WORD, "--all-scopes")
    shown = run_cli("sessions", "show", session)
    assert shown.returncode != 0 and "forgotten" in shown.stderr
    assert run_cli("get", f"{session}#1").returncode != 0
    recalled = json.loads(_ok("recall", WORD, "--all-scopes", "--sessions", "--json"))
    assert WORD not in json.dumps(recalled["results"])
    assert _files_holding(home, WORD) == []
    assert _files_holding(home, "blue heron") == []
    assert _files_holding_bytes(home, vector) == []  # nor its vector, in SQLite or the index

    # no project counts it: its directory and time went with it
    projects = json.loads(_ok("projects", "--json"))
    assert all(p["sessions"] == 0 for p in projects), projects

    # the cursor stays: the same transcript, and more of it, is never captured again, and
    # capture says so rather than counting the messages it once held
    again = _ok("ingest", "--transcript", str(transcript), "--wait")
    assert "was forgotten on" in again and "nothing stored again" in again, again
    with transcript.open("a", encoding="utf-8") as more:
        more.write(json.dumps({"role": "user", "content": f"again {WORD}"}) + "\n")
    again = _ok("ingest", "--transcript", str(transcript), "--wait")
    assert "was forgotten on" in again and "stored in all" not in again, again
    assert WORD not in _ok("sessions", "grep", WORD, "--all-scopes")
    assert _files_holding(home, WORD) == []


def test_delete_permanent_of_a_message_forgets_it_and_keeps_the_rest(
    home: Path, leaked: tuple[Shared, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _copy(leaked, home, monkeypatch)
    said = run_cli("delete", f"{session}#1", "--permanent")
    assert said.returncode == 0, said.stderr
    assert "forgot message" in said.stdout
    assert WORD not in _ok("sessions", "show", session)
    assert "payments service" in _ok("sessions", "show", session)  # the other messages stay
    assert _files_holding(home, WORD) == []
    # the message is known by its hash: capturing the transcript again stores nothing new
    _ok("ingest", "--transcript", str(leaked[0].project.parent / "leak.jsonl"))
    assert WORD not in _ok("sessions", "show", session)


def test_forget_of_a_message_forgets_it_everywhere(
    home: Path, leaked: tuple[Shared, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _copy(leaked, home, monkeypatch)
    assert run_cli("forget", f"{session}#1").returncode == 0
    assert WORD not in _ok("sessions", "grep", WORD, "--all-scopes")
    assert _files_holding(home, WORD) == []


def test_a_soft_delete_of_a_message_is_refused_in_one_line(
    home: Path, leaked: tuple[Shared, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _copy(leaked, home, monkeypatch)
    done = run_cli("delete", f"{session}#1")
    assert done.returncode != 0
    assert "no soft delete" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert WORD in _ok("sessions", "show", session)  # nothing was lost


def test_delete_permanent_of_a_memory_takes_its_quotes_out_of_the_event_log(home: Path) -> None:
    made = json.loads(_ok("remember", "the staging host is heron-quokka-staging", "--json"))
    _ok(
        "update", made["id"], "--text", f"the staging host is {WORD}-staging"
    )  # the event quotes both
    _ok(*BACKUPS, "maintain")
    assert _files_holding(home, WORD)
    _ok("delete", made["id"], "--permanent")
    assert _files_holding(home, WORD) == []
    assert _files_holding(home, "heron-quokka-staging") == []


def test_redact_takes_one_value_out_of_every_session_and_memory(
    home: Path, leaked: tuple[Shared, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _copy(leaked, home, monkeypatch)
    made = json.loads(_ok("remember", f"the vault opens with {WORD}", "--json"))
    done = run_cli("redact", WORD, "--json")
    assert done.returncode == 0, done.stderr
    assert _files_holding(home, WORD) == []
    assert "[REDACTED]" in _ok("sessions", "show", session)
    assert "heron" in _ok("sessions", "show", session)  # the rest of the message stays
    assert "[REDACTED]" in _ok("get", made["id"])


def test_what_was_derived_from_a_value_goes_with_it(home: Path) -> None:
    """The knowledge graph names people and places, and maintain writes a profile from
    memories: neither is a quote the text search finds, so both are erased on their own."""
    name = "Hunterton"
    _ok("remember", f"Alice {name} works at Globexcorp and deploys billing on Fridays")
    assert name in _ok("graph")  # the graph holds the name as an entity of its own
    _ok("maintain")
    done = run_cli("redact", name)
    assert done.returncode == 0, done.stderr
    assert name not in _ok("graph") and name not in _ok("profile")
    assert _files_holding(home, name) == []
    made = json.loads(_ok("remember", "Bea Quillfeather leads the payments team", "--json"))
    assert "Quillfeather" in _ok("graph")
    assert run_cli("delete", made["id"], "--permanent").returncode == 0
    assert _files_holding(home, "Quillfeather") == []


def test_redact_refuses_a_value_too_short_to_be_one() -> None:
    done = run_cli("redact", "yes")
    assert done.returncode != 0 and "8 characters" in done.stderr


def _published(tmp_path: Path) -> tuple[Path, Context, Memory]:
    """A machine syncing with a bare repository on disk, and a shared memory holding WORD
    that a sync has pushed: (the remote, the machine, the memory)."""
    remote = bare_repo(tmp_path)
    ctx = machine(tmp_path, "laptop", remote)
    sync_api.init(ctx, str(remote))
    memory = shared(ctx, f"the release signing passphrase hint is {WORD}")
    sync_api.sync(ctx, sync_api.SyncRequest())
    return remote, ctx, memory


def test_a_shared_memory_deleted_for_good_leaves_the_clone_and_goes_out_as_a_tombstone(
    tmp_path: Path,
) -> None:
    remote, ctx, memory = _published(tmp_path)
    home = ctx.settings.home
    assert "sync/repo/memories" in " ".join(_files_holding(home, WORD))
    memory_api.delete(ctx, memory.id, permanent=True)
    assert _files_holding(home, WORD) == []  # the clone's work tree too
    sync_api.sync(ctx, sync_api.SyncRequest())
    head = git("--git-dir", str(remote), "grep", "-l", "state: deleted", "HEAD")
    assert memory.id in head  # peers get the tombstone; the history keeps the old file
    assert WORD not in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    ctx.close()


def test_redacting_a_shared_memory_says_the_sync_history_keeps_the_value(
    tmp_path: Path,
) -> None:
    """A leaked value in a memory a sync published: redact takes it out of the store and
    the repository's next commit, and says what it cannot reach (the git history); so
    does a permanent delete of a shared memory, and neither says it of a private one."""
    remote, ctx, memory = _published(tmp_path)
    home = ctx.settings.home
    ctx.close()
    at_home = ("--home", str(home), "-c", f"sync.remote={remote}")
    said = _ok(*at_home, "redact", WORD)
    assert "1 of these memories was shared through sync" in said and "rotate" in said
    private = json.loads(_ok(*at_home, "remember", "the lab door code is heronquokka42", "--json"))
    report = json.loads(_ok(*at_home, "redact", "heronquokka42", "--json"))
    assert report["memories"] == [private["id"]] and report["shared"] == []
    assert "sync" not in _ok(*at_home, "redact", "another-unheard-of-value")
    laptop = machine(tmp_path, "laptop", remote)
    other = shared(laptop, "the staging door code is heron-4421")
    laptop.close()
    _ok(*at_home, "sync")
    gone = json.loads(_ok(*at_home, "delete", other.id, "--permanent", "--json"))
    assert gone["shared"] == [other.id]
    kept = json.loads(_ok(*at_home, "remember", "a private note on heron-4422", "--json"))
    assert "shared through sync" not in _ok(*at_home, "delete", kept["id"], "--permanent")
    _ok(*at_home, "sync")
    assert WORD not in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    assert memory.id in git("--git-dir", str(remote), "grep", "-l", "REDACTED", "HEAD")
    assert WORD in history(remote)  # what the line warned of


def test_purge_permanent_takes_the_quotes_out_too(home: Path) -> None:
    made = json.loads(
        _ok("remember", "the staging host is heron-quokka-staging", "-t", "ops", "--json")
    )
    _ok("update", made["id"], "--text", f"the staging host is {WORD}-staging")
    assert _files_holding(home, "heron-quokka-staging")
    _ok("purge", "--tag", "ops", "--permanent", "--yes")
    assert _files_holding(home, WORD) == [] and _files_holding(home, "heron-quokka") == []


def test_redact_reads_the_value_from_stdin_to_keep_it_out_of_the_command_line(
    home: Path,
) -> None:
    """A value typed as an argument stays in the shell's history and shows in `ps`: `-`
    reads it from standard input instead; nothing there is one line of error."""
    _ok("remember", f"the office dog is called {WORD}")
    said = run_cli("redact", "-", input=f"{WORD}\n")
    assert said.returncode == 0 and "1 memory," in said.stdout, said.stderr
    assert _files_holding(home, WORD) == []
    empty = run_cli("redact", "-", input="")
    assert empty.returncode != 0 and len(empty.stderr.strip().splitlines()) == 1
    assert "standard input" in empty.stderr


def _objects_holding(git_dir: Path, needle: str) -> bool:
    """Whether any object of a git repository (loose or packed, reachable or not) holds
    ``needle``: what a push would carry or a `git fsck --lost-found` would find."""
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    )
    return needle.encode() in done.stdout


def _three_shared(at_home: tuple[str, ...]) -> dict[str, str]:
    """Three promoted memories, by what the test does with each: redacted, deleted, kept."""
    made = {
        name: json.loads(_ok(*at_home, "remember", text, "--json"))["id"]
        for name, text in {
            "redacted": f"the vault combination is {WORD}",
            "deleted": "the Velmorafinch contract renewal is due in March",
            "kept": OTHER,
        }.items()
    }
    _ok(*at_home, "promote", *made.values())
    return made


def test_text_taken_out_before_a_sync_could_push_it_never_reaches_the_remote(
    tmp_path: Path,
) -> None:
    """A sync that could not reach the remote leaves its commit in the clone ("the next
    sync pushes them"); a redact and a permanent delete made before that push rewrote the
    work tree only, so the next sync pushed the value in the commit underneath, and the
    clone kept it. Now the unpushed commits go (every copy git keeps of them), the next
    sync writes the other memories' files again, and nothing says the history keeps it."""
    remote = bare_repo(tmp_path)
    home = tmp_path / "home"
    at_home = ("--home", str(home))
    _ok(*at_home, "config", "set", "llm", "none")
    _ok(*at_home, "sync", "init", str(remote))
    made = _three_shared(at_home)
    away = remote.rename(tmp_path / "away.git")
    offline = run_cli(*at_home, "sync")
    assert offline.returncode != 0 and "1 commit(s) wait in the clone" in offline.stderr
    clone = home / "sync" / "repo" / ".git"
    assert _objects_holding(clone, WORD) and _objects_holding(clone, "Velmorafinch")
    said = _ok(*at_home, "redact", WORD) + _ok(*at_home, "delete", made["deleted"], "--permanent")
    assert "shared through sync" not in said  # nothing of either ever left the machine
    away.rename(remote)
    _ok(*at_home, "sync")
    for needle in (WORD, "Velmorafinch"):
        assert not _objects_holding(remote, needle), needle
        assert not _objects_holding(clone, needle), needle
    head = git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    assert "make release from main" in head and "[REDACTED]" in head  # the rest went out


def test_text_taken_out_before_the_first_push_never_reaches_an_empty_remote(
    tmp_path: Path,
) -> None:
    """The remote has no branch yet (`sync init`'s push was refused and a second `sync init`
    took the clone as it was), so every commit of the clone waits, none "unpushed" against
    a remote branch: a permanent delete and a redact kept them, and the next sync pushed
    both texts. Now the clone goes back to its layout commit, the next sync writes the other
    memory again, and nothing says the history keeps either."""
    remote = bare_repo(tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    home = tmp_path / "home"
    at_home = ("--home", str(home))
    _ok(*at_home, "config", "set", "llm", "none")
    assert run_cli(*at_home, "sync", "init", str(remote)).returncode != 0
    _ok(*at_home, "sync", "init", str(remote))
    made = _three_shared(at_home)
    refused = run_cli(*at_home, "sync")
    assert refused.returncode != 0 and "cannot push" in refused.stderr
    clone = home / "sync" / "repo" / ".git"
    assert _objects_holding(clone, WORD) and _objects_holding(clone, "Velmorafinch")
    said = _ok(*at_home, "redact", WORD) + _ok(*at_home, "delete", made["deleted"], "--permanent")
    assert "shared through sync" not in said
    hook.unlink()
    _ok(*at_home, "sync")
    for needle in (WORD, "Velmorafinch"):
        assert not _objects_holding(remote, needle), needle
        assert not _objects_holding(clone, needle), needle
    head = git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    assert "make release from main" in head and "[REDACTED]" in head
    assert "format" in git("--git-dir", str(remote), "show", "HEAD:memctl.yaml")


def test_a_forget_with_a_broken_sync_clone_still_takes_the_text_out(tmp_path: Path) -> None:
    """Looking for unpushed commits reads the clone with git: a clone git cannot read (its
    HEAD damaged) must not stop a forget halfway (the store done, the backups not); the
    memory is said to be in the history, as git cannot tell."""
    remote = bare_repo(tmp_path)
    home = tmp_path / "home"
    at_home = ("--home", str(home))
    _ok(*at_home, "config", "set", "llm", "none")
    _ok(*at_home, "sync", "init", str(remote))
    made = json.loads(_ok(*at_home, "remember", f"the vault combination is {WORD}", "--json"))
    _ok(*at_home, "promote", made["id"])
    _ok(*at_home, "sync")
    _ok(*at_home, *BACKUPS, "maintain")  # a backup holding it
    (home / "sync" / "repo" / ".git" / "HEAD").write_text("garbage\n")
    said = _ok(*at_home, "delete", made["id"], "--permanent")
    assert "shared through sync" in said
    assert [p for p in _files_holding(home, WORD) if "/.git/" not in p] == []
