"""A leaked value outside a memory's text: in its tags or its source (an imported file's
path), in a session's tags, source or directory, in an import's record, in a log.
`redact` reaches each (recall found the memory by its tag, and the next sync pushed the
tag), and `import` never stores a secret its file's path holds. Real `memctl` processes,
a real SQLite file, a real bare git repository."""

from __future__ import annotations

import json
from pathlib import Path

from memctl.api import memory as memory_api
from memctl.api import sync as sync_api
from memctl.api.memory import RememberRequest
from tests.conftest import run_cli
from tests.memories.test_forget_everywhere import _files_holding, _ok
from tests.syncing import bare_repo, git, machine

VALUE = "hunter2zebrafish"  # typed as a tag and a folder's name: no pattern knows it
TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape


def _note(folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / f"notes-{folder.name}.md"
    path.write_text("# Deploy\n\nWe deploy with make release from main every Friday.\n")
    return path


def _ranks(at_home: tuple[str, ...], memory_id: str) -> dict[str, int]:
    """The legs of recall that found the memory when asked for VALUE."""
    recalled = json.loads(_ok(*at_home, "recall", VALUE, "--all-scopes", "--json"))
    return next((r["ranks"] for r in recalled["results"] if r["id"] == memory_id), {})


def test_redact_takes_a_value_out_of_tags_sources_and_the_next_sync(tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    ctx = machine(tmp_path, "laptop", remote)
    sync_api.init(ctx, str(remote))
    request = RememberRequest("the staging box is reached via the bastion", tags=[VALUE])
    memory = memory_api.remember(ctx, request).memory
    sync_api.promote(ctx, sync_api.ShareRequest((memory.id,)))
    sync_api.sync(ctx, sync_api.SyncRequest())
    home = ctx.settings.home
    ctx.close()
    assert VALUE in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    at_home = ("--home", str(home), "-c", f"sync.remote={remote}", "-c", "llm=none")
    _ok(*at_home, "import", str(_note(tmp_path / f"{VALUE}-dir")))
    said = {"cwd": f"/home/dana/{VALUE}-shop", "messages": [{"role": "user", "content": "hi"}]}
    assert run_cli(*at_home, "ingest", "--mode", "raw", input=json.dumps(said)).returncode == 0
    assert VALUE in _ok(*at_home, "projects")  # the session's directory
    missing = {"transcript_path": f"/nonexistent/{VALUE}/t.jsonl"}
    assert (
        run_cli(*at_home, "hook", "claude-code", "Stop", input=json.dumps(missing)).returncode == 0
    )
    assert "logs/hooks.log" in _files_holding(home, VALUE)  # the hook's error names the path
    assert "bm25" in _ranks(at_home, memory.id)  # recall finds it by its tag's word

    report = json.loads(_ok(*at_home, "redact", VALUE, "--json"))

    assert memory.id in report["memories"] and report["shared"] == [memory.id]
    assert {"sessions.source", "sessions.cwd", "imports.path"} <= set(report["quotes"])
    assert report["logs_rewritten"] == 1
    assert "bm25" not in _ranks(at_home, memory.id)
    assert _files_holding(home, VALUE) == []  # tags, sources, directories, the import's record
    assert "[REDACTED]-shop" in _ok(*at_home, "projects")
    got = json.loads(_ok(*at_home, "get", memory.id, "--json"))
    assert got["tags"] == ["[REDACTED]"] and got["content"] == memory.content
    _ok(*at_home, "sync")
    assert VALUE not in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")


def test_import_keeps_no_secret_of_its_file_s_path(home: Path, tmp_path: Path) -> None:
    _ok("-c", "llm=none", "import", str(_note(tmp_path / TOKEN)))
    (memory,) = json.loads(_ok("list", "--json"))
    assert memory["source"].startswith("file:") and "[REDACTED" in memory["source"]
    assert _files_holding(home, TOKEN) == []  # the memory, its session, the import's record
