"""The memctl command as a user runs it: real processes, real files, the real model."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import apsw
import pytest

from tests.conftest import Shared, run_cli, shared
from tests.ingesting import TRANSCRIPTS
from tests.ollama_server import FakeOllama


def ok(*args: str, **kwargs: object) -> str:
    done = run_cli(*args, **kwargs)  # type: ignore[arg-type]
    assert done.returncode == 0, done.stderr
    return done.stdout


def fails(code: int, *args: str, **kwargs: object) -> str:
    """Run a command that must fail with ``code`` and one clean line on stderr."""
    done = run_cli(*args, **kwargs)  # type: ignore[arg-type]
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memctl: error:"), done.stderr
    return lines[0]


@pytest.mark.fresh
def test_remember_get_recall_forget_recall() -> None:
    first = ok(
        "remember", "We deploy with `make release` from the main branch", "--tag", "deploy"
    ).strip()
    ok("remember", "Alice prefers tabs over spaces", "--category", "profile")
    shown = json.loads(ok("get", first[:8], "--json"))
    assert shown["id"] == first and shown["tags"] == ["deploy"] and shown["kind"] == "pinned"
    recalled = json.loads(ok("recall", "how do we make a release?", "--json"))
    assert recalled["results"][0]["id"] == first
    assert "make release" in ok("recall", "how do we make a release?")
    ok("forget", first[:8])
    recalled = json.loads(ok("recall", "how do we make a release?", "--json"))
    assert first not in [r["id"] for r in recalled["results"]]
    listed = json.loads(ok("list", "--state", "archived", "--json"))
    assert [m["id"] for m in listed] == [first]


def test_remember_reads_stdin_and_rejects_binary() -> None:
    memory_id = ok("remember", input="the build cache lives in /var/cache/ci\n").strip()
    assert json.loads(ok("get", memory_id, "--json"))["content"] == (
        "the build cache lives in /var/cache/ci"
    )
    assert "binary" in fails(6, "remember", input=b"\x89PNG\x00\x00\x01")
    assert "needs some text" in fails(2, "remember", input="")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Shared:
    """Two memories of fixed ids, imported once for the module."""
    with shared(tmp_path_factory, user_cache, "fixed-ids") as place:
        lines = [json.dumps({"id": "abcd" + c * 28, "content": f"memory {c}"}) for c in "12"]
        ok("import", "-", input="\n".join(lines) + "\n")
    return place


@pytest.fixture
def fixed_ids(imported: Shared, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's home: a copy of ``imported``, run from its project."""
    monkeypatch.chdir(imported.copy(home).project)


def test_ambiguous_prefix_lists_candidates_and_unknown_id_is_not_found(
    home: Path, fixed_ids: None
) -> None:
    line = fails(3, "get", "abcd")
    assert "abcd11111111" in line and "abcd22222222" in line
    assert json.loads(ok("get", "abcd2", "--json"))["content"] == "memory 2"
    assert "no memory" in fails(3, "forget", "ffffffff")
    assert "hexadecimal" in fails(2, "get", "not-an-id")


@pytest.mark.parametrize("query", ['"NEAR(', "a AND OR NOT (", "content:*", "-x -y", "'\""])
def test_hostile_queries_are_just_text(query: str, home: Path, fixed_ids: None) -> None:
    assert json.loads(ok("recall", "--json", "--", query))["query"] == query


@pytest.mark.fresh
def test_export_import_into_an_empty_home_round_trips(
    home: Path, tmp_path: Path, fixed_ids: None
) -> None:
    ok("remember", "exported with tags", "-t", "a,b", "--importance", "0.4")
    ok("delete", "abcd1")
    dump = tmp_path / "dump.jsonl"
    ok("export", "-o", str(dump))
    assert dump.stat().st_mode & 0o077 == 0
    other = tmp_path / "other-home"
    summary = json.loads(ok("--home", str(other), "import", str(dump), "--json"))
    assert (summary["imported"], summary["skipped"], summary["errors"]) == (3, 0, [])
    again = json.loads(ok("--home", str(other), "import", str(dump), "--json"))
    assert (again["imported"], again["skipped"]) == (0, 3)
    # the same records but the source: an imported memory's is a file (issue 34), the
    # dump unless its record named one already
    copied = [json.loads(line) for line in ok("--home", str(other), "export").splitlines()]
    original = [json.loads(line) for line in dump.read_text().splitlines()]
    sources = [(o.pop("source"), c.pop("source")) for o, c in zip(original, copied, strict=True)]
    assert ("cli", f"file:{dump}") in sources
    assert all(c == (o if o.startswith("file:") else f"file:{dump}") for o, c in sources)
    assert copied == original


def test_a_file_holding_one_memory_twice_imports_it_once(tmp_path: Path) -> None:
    # two notes of the same text have the same id: the second is skipped, not a crash
    line = json.dumps({"content": "Staging is rebuilt every night", "scope": "global"})
    notes = tmp_path / "notes.jsonl"
    notes.write_text(f"{line}\n{line}\n", "utf-8")
    preview = json.loads(ok("import", str(notes), "--dry-run", "--json"))
    assert (preview["imported"], preview["skipped"]) == (1, 1)
    summary = json.loads(ok("import", str(notes), "--json"))
    assert (summary["imported"], summary["skipped"], summary["errors"]) == (1, 1, [])
    listed = json.loads(ok("list", "--json"))
    assert [m["content"] for m in listed] == ["Staging is rebuilt every night"]


def test_import_of_missing_empty_or_binary_files_fails_cleanly(tmp_path: Path) -> None:
    assert "no such file" in fails(6, "import", str(tmp_path / "nope.jsonl"))
    (tmp_path / "empty.jsonl").write_text("\n\n")
    assert "empty" in fails(6, "import", str(tmp_path / "empty.jsonl"))
    (tmp_path / "blob.jsonl").write_bytes(b"\x00\x01\x02binary")
    assert "binary" in fails(6, "import", str(tmp_path / "blob.jsonl"))


def test_locked_database_is_one_line_and_loses_nothing(home: Path) -> None:
    kept = ok("remember", "written before the lock").strip()
    holder = apsw.Connection(str(home / "memctl.db"))
    holder.execute("BEGIN IMMEDIATE")
    try:
        line = fails(4, "-c", "store.busy_timeout_ms=100", "remember", "blocked write")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "locked" in line
    listed = json.loads(ok("list", "--json"))
    assert [m["id"] for m in listed] == [kept]


def test_unusable_home_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    assert "cannot create" in fails(4, "--home", str(blocker / "home"), "status")


@pytest.mark.fresh
def test_status_and_events(home: Path, fixed_ids: None) -> None:
    ok("forget", "abcd1")
    status = json.loads(ok("status", "--json"))
    assert status["total"] == 2 and status["by_state"] == {"active": 1, "archived": 1}
    # run_cli embeds with the hash embedder; status names whatever made the vectors
    assert status["embed_model"] == "test:hash" and status["embed_dim"] == 64
    events = json.loads(ok("events", "--json"))
    assert [e["action"] for e in events] == ["state", "import", "import"]
    assert [e["action"] for e in json.loads(ok("events", "abcd1", "--json"))] == ["state", "import"]
    assert len(json.loads(ok("events", "--limit", "2", "--page", "2", "--json"))) == 1


@pytest.mark.fresh
def test_purge_needs_a_filter_and_a_confirmation(home: Path, fixed_ids: None) -> None:
    assert "at least one filter" in fails(2, "purge")
    dry = json.loads(ok("purge", "--state", "active", "--dry-run", "--json"))
    assert dry["count"] == 2
    refused = run_cli("purge", "--state", "active", input="n\n")
    assert refused.returncode == 2 and "Delete 2 memories?" in refused.stderr
    assert refused.stderr.rstrip().endswith("purge cancelled; nothing was deleted")
    assert len(json.loads(ok("list", "--json"))) == 2
    ok("purge", "--state", "active", "--yes")
    assert json.loads(ok("list", "--json")) == []
    assert len(json.loads(ok("list", "--state", "deleted", "--json"))) == 2


@pytest.mark.fresh
def test_another_embedding_model_is_refused_until_reembed(home: Path) -> None:
    ok("remember", "vectors made by the first model")
    with FakeOllama() as server:
        ollama = ("-c", "embedder=ollama", "-c", f"ollama.host={server.url}")
        line = fails(4, *ollama, "remember", "would mix models")
        assert "test:hash" in line and "memctl reembed" in line
        assert "re-embedded 1 memory" in ok(*ollama, "reembed")
        ok(*ollama, "remember", "made by ollama")
        found = json.loads(ok(*ollama, "recall", "vectors first model", "--json"))
        assert found["results"][0]["content"] == "vectors made by the first model"
    status = json.loads(ok("status", "--json"))
    assert (status["embed_model"], status["embed_dim"]) == ("ollama:nomic-embed-text", 64)


def test_unreachable_ollama(home: Path, dead_ollama_url: str) -> None:
    ollama = ("-c", "embedder=ollama", "-c", f"ollama.host={dead_ollama_url}")
    assert "cannot reach Ollama" in fails(5, *ollama, "remember", "needs a vector")
    assert json.loads(ok("list", "--json")) == []


def test_recall_falls_back_to_bm25_when_vectors_are_unavailable(
    home: Path, dead_ollama_url: str
) -> None:
    with FakeOllama() as server:
        ok(
            "-c",
            "embedder=ollama",
            "-c",
            f"ollama.host={server.url}",
            "remember",
            "the nightly backup runs at 02:00",
        )
    done = run_cli(
        "-c",
        "embedder=ollama",
        "-c",
        f"ollama.host={dead_ollama_url}",
        "recall",
        "nightly backup",
        "--json",
    )
    assert done.returncode == 0
    assert "vector search unavailable" in done.stderr
    assert json.loads(done.stdout)["results"][0]["content"] == "the nightly backup runs at 02:00"


def test_usage_errors_do_not_show_tracebacks() -> None:
    done = run_cli("recall", "--limit", "zero")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "bad value" in fails(2, "-c", "recall.limit=0", "recall", "x")


def test_text_that_looks_like_markup_is_shown_as_written() -> None:
    ok("remember", "arrays look like [/x] in this DSL, colours like [red]x[/red]")
    assert "[red]x[/red]" in ok("list")
    assert "[/x]" in ok("recall", "arrays DSL")


def test_an_undated_transcript_is_dated_when_its_file_was_written(tmp_path: Path) -> None:
    """A Cursor transcript keeps no times: its session is of the day its file was last
    written, not of the day it is taken in; a reply takes its question's time. Asked
    about tests, the store of that one session (HBO shows listed in a `testing-gitflows`
    folder, "their HBO run") has no clear match: every word of the question is in its
    digest, in another sense (recall.words_alone_cosine)."""
    copy = tmp_path / "agent-transcripts" / "3a031a7a.jsonl"
    copy.parent.mkdir()
    shutil.copy(TRANSCRIPTS / "real" / "cursor-gitai-hboshows.jsonl", copy)
    written = 1741089600  # 2025-03-04T12:00:00Z
    os.utime(copy, (written, written))
    ok("ingest", str(copy), "--wait", real_model=True)
    [session] = json.loads(ok("sessions", "list", "--all-scopes", "--json"))
    assert session["started_at"].startswith("2025-03-04")
    shown = ok("sessions", "show", session["id"][:8], "--json")
    times = {m["created_at"][:10] for m in json.loads(shown)["messages"]}
    assert times == {"2025-03-04"}
    asked = ("recall", "how do I run the tests?", "--all-scopes", "--json")
    recalled = json.loads(ok(*asked, real_model=True))
    digest = [r for r in recalled["results"] if r.get("category") == "events"]
    assert digest and "testing-gitflows" in digest[0]["content"]
    assert {r["match"] for r in recalled["results"]} == {"possible"}
    # out of Cursor's own folder, the paths its tools read name the workspace (Cursor's
    # own folder for it, ~/.cursor/projects/<slug>/, and a file in it): its project
    ok("ingest", str(TRANSCRIPTS / "real" / "cursor-gitai-hboshows.jsonl"), "--mode", "raw")
    listed = json.loads(ok("projects", "--json", cwd=tmp_path))
    workspace = "/Users/aidancunniffe/Desktop/testing-gitflows-git-ai"
    assert {"path": workspace, "clients": ["cursor"]}.items() <= next(
        p for p in listed if p["scope"] != session["scope"]
    ).items()
    # one that names no directory at all is the project ingest ran in, and ingest says so;
    # `projects` names it from anywhere (it showed only `path:<hash>`)
    first = tmp_path / "first-line.jsonl"
    first.write_text((TRANSCRIPTS / "real" / "cursor-gitai-hboshows.jsonl").open().readline())
    said = ok("ingest", str(first), "--client", "cursor", "--mode", "raw")
    assert f"filed under the project memctl ran in, {Path.cwd()} (" in said
    assert "ingest it with `-s SCOPE`" in said
    listed = json.loads(ok("projects", "--json", cwd=tmp_path))
    assert any(p["path"] == str(Path.cwd()) for p in listed)


def test_list_takes_all_scopes_as_recall_and_sessions_do(tmp_path: Path) -> None:
    """`memctl list --all-scopes` (as a person types it after `recall --all-scopes`) lists
    every scope, as `list` does by default; it used to be refused as an unknown option."""
    ok("remember", "Releases are cut on Mondays", "-s", "global")
    ok("remember", "The shop deploys with make release", cwd=tmp_path)
    every = json.loads(ok("list", "--all-scopes", "--json", cwd=tmp_path))
    assert {m["content"] for m in every} == {
        "Releases are cut on Mondays",
        "The shop deploys with make release",
    }
    assert json.loads(ok("list", "--json", cwd=tmp_path)) == every
