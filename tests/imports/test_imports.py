"""File import end to end on a real store, without an LLM: each format from a fixture in its
real shape, re-import, bad files among good ones, the raw text kept, dedup, privacy, dry runs,
concurrency."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memctl.config.scope import project_root
from memctl.context import Context
from memctl.imports import pipeline
from memctl.imports.detect import survey
from memctl.imports.distil import Plan, distil
from memctl.imports.files import expand
from memctl.imports.pipeline import ImportOptions, import_files
from memctl.imports.report import ImportReport
from memctl.ingest.run import start_run
from memctl.ingest.undo import undo
from memctl.memories import operations as memories
from memctl.model import Category, Kind, Memory, State
from memctl.store.imports import find_import
from memctl.store.projects import project_dirs
from memctl.store.runs import list_runs
from memctl.store.sessions import count_sessions, latest_messages
from tests.conftest import files_holding
from tests.ingest.test_ingest_pasted import TRACEBACK

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


def run_import(ctx: Context, *paths: Path | str, **options: Any) -> ImportReport:
    return import_files(ctx, expand([str(p) for p in paths]), ImportOptions(**options))


def stored(ctx: Context, **where: Any) -> list[Memory]:
    return memories.list_memories(ctx, memories.make_filter(ctx, **where), limit=None)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A directory for the files to import (tmp_path also holds the home and the project)."""
    folder = tmp_path / "files"
    folder.mkdir()
    return folder


# Two turns of the ChatGPT export's current branch: a request and the answer to it.
ASKED, ANSWERED = "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a04", "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e08"


def fixture(folder: Path, name: str) -> Path:
    return Path(shutil.copy(FIXTURES / name, folder / name))


def test_chatgpt_export(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    path = fixture(files, "chatgpt-conversations.json")
    (file,) = run_import(ctx, path).files
    assert (file.format, file.strategy, file.status) == ("chatgpt", "atomic", "imported")
    made = {m.content: m for m in stored(ctx)}
    assert sorted(made) == [
        "I prefer helix over vim these days.",
        "I'm a backend engineer at Tidepool.",  # the custom instructions, fences removed
        "Never deploy on Fridays.",
        "We deploy Tidepool with `make release` from the main branch.",
    ]
    fridays = made["Never deploy on Fridays."]
    assert fridays.source == f"file:{path}#6651f0c2-3a4b-8000-9c1d-2e3f4a5b6c7d/4"
    assert fridays.session_id == file.session_id and fridays.category == Category.PATTERNS
    raw = [m.content for m in latest_messages(ctx.db, file.session_id or "", 0, 100)]
    assert (
        raw[0]
        == "conversation: Release checklist for Tidepool (6651f0c2-3a4b-8000-9c1d-2e3f4a5b6c7d)"
    )
    assert not any("regenerated" in text for text in raw)  # not on the current branch
    assert len(raw) == 8  # 2 conversation lines, 6 messages
    # the conversation's line is dated as it began, and the project is named where it ran
    said = latest_messages(ctx.db, file.session_id or "", 0, 100)
    assert said[0].created_at[:10] == "2024-06-10"  # the export's first create_time
    here = str(project_root(ctx.settings.cwd))
    assert project_dirs(ctx.db, [ctx.settings.project_scope]) == {ctx.settings.project_scope: here}


def test_a_pasted_traceback_in_a_chat_export_gives_no_rule(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    ctx = make_ctx()
    path = fixture(files, "chatgpt-conversations.json")
    export = json.loads(path.read_text(encoding="utf-8"))
    (turn,) = (
        node["message"]["content"]
        for node in export[0]["mapping"].values()
        if "make release" in str(node["message"] and node["message"]["content"])
    )
    turn["parts"] = [
        f"We deploy Tidepool with `make release`. Here is the error I get:\n{TRACEBACK}"
    ]
    path.write_text(json.dumps(export), encoding="utf-8")
    run_import(ctx, path)
    assert sorted(m.content for m in stored(ctx)) == [
        "I prefer helix over vim these days.",
        "I'm a backend engineer at Tidepool.",
        "Never deploy on Fridays.",
        "We deploy Tidepool with `make release`.",  # the user's words above the paste
    ]


def test_a_password_of_letters_said_again_in_a_chat_export_is_hidden(
    make_ctx: Callable[..., Context], home: Path, files: Path
) -> None:
    """As capture does: a labelled password no word list knows is hidden where a later
    message of the conversation says it again (it was stored there, and in the facts)."""
    ctx = make_ctx()
    path = fixture(files, "chatgpt-conversations.json")
    export = json.loads(path.read_text(encoding="utf-8"))
    mapping = export[0]["mapping"]
    first, later = (mapping[k]["message"]["content"] for k in (ASKED, ANSWERED))
    first["parts"] = [first["parts"][0] + " The db password is swordfish."]
    later["parts"] = [later["parts"][0] + " Log in with swordfish first."]
    path.write_text(json.dumps(export), encoding="utf-8")
    run_import(ctx, path)
    ctx.close()
    assert files_holding(home, "swordfish") == []


def test_claude_ai_export_keeps_secrets_out(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    (file,) = run_import(ctx, fixture(files, "claude-ai-conversations.json")).files
    assert (file.format, file.status, file.imported) == ("claude-ai", "imported", 2)
    assert sorted(m.content for m in stored(ctx)) == [
        "I usually run migrations on Tuesday mornings.",
        "We're migrating to Postgres 16 for the ledger service next month.",
    ]
    raw = latest_messages(ctx.db, file.session_id or "", 0, 100)
    assert [m.role for m in raw] == ["system", "user", "assistant", "user"]
    assert "hunter2" not in " ".join(m.content for m in raw)
    assert "[REDACTED:password]" in raw[1].content
    assert file.redactions["secrets"] == 1
    assert "hunter2" not in ctx.db.path.read_bytes().decode("latin-1")


def test_mem0_exports(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    oss, platform = run_import(
        ctx, fixture(files, "mem0-get-all.json"), fixture(files, "mem0-platform-page.json")
    ).files
    assert (oss.format, oss.strategy, oss.imported, oss.skipped) == ("mem0", "records", 2, 1)
    assert (platform.imported, platform.skipped) == (2, 0)
    made = {m.content: m for m in stored(ctx)}
    assert made["Is a vegetarian"].category == Category.PREFERENCES
    assert made["Works as a data engineer at Tidepool"].category == Category.PROFILE
    assert made["Works as a data engineer at Tidepool"].source.endswith(
        "mem0-get-all.json#c4f2d1e0-6b5a-4c3d-9e8f-7a6b5c4d3e2f"
    )
    marathon = made["Ran the Berlin marathon in September 2024"]
    assert (marathon.category, marathon.kind) == (Category.EVENTS, Kind.EPISODIC)
    assert marathon.tags == ["milestones", "sports"]


def test_front_matter_notes(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    note, obsidian = run_import(
        ctx, fixture(files, "basic-memory-note.md"), fixture(files, "obsidian-note.md")
    ).files
    assert (note.format, note.strategy, obsidian.strategy) == (
        "front-matter",
        "document",
        "document",
    )
    coffee, release = sorted(stored(ctx), key=lambda m: m.content)
    assert coffee.content.startswith("# Coffee Brewing Methods\n\n## Observations\n- [method]")
    assert "permalink" not in coffee.content and coffee.tags == ["coffee", "brewing"]
    assert coffee.l0_abstract == (
        "Coffee Brewing Methods: [method] Pour over gives more flavor clarity than French press "
        "#brewing"
    )
    assert (
        coffee.l2_content == coffee.content
        and coffee.source == f"file:{files / 'basic-memory-note.md'}"
    )
    assert release.tags == ["project/tidepool", "deploy"] and release.category == Category.PATTERNS


def test_memctl_sync_yaml_keeps_its_id(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    (file,) = run_import(ctx, fixture(files, "memctl-memory.yaml")).files
    assert (file.format, file.strategy, file.imported) == ("memctl-yaml", "native", 1)
    (memory,) = stored(ctx, scope="global")
    assert memory.id == "5f0c8e2a9b7d4c1e8a6f3b2d1c0e9f8a"
    assert memory.created_at == "2025-02-11T08:30:00.000Z" and memory.tags == [
        "staging",
        "database",
    ]
    again = run_import(ctx, files / "memctl-memory.yaml").files[0]
    assert (again.imported, again.skipped) == (0, 1)


def test_conversation_text_is_atomic(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    (file,) = run_import(ctx, fixture(files, "conversation.txt")).files
    assert file.strategy == "atomic" and "conversation" in file.why
    assert sorted(m.content for m in stored(ctx)) == [
        "I'm a backend engineer at Tidepool.",
        "We decided to use SQLite instead of Postgres for the edge cache.",
    ]


def long_doc(words: int = 560) -> str:
    body = " ".join(f"filler{i}" for i in range(words))
    return (
        "# Runbook\n\n## Deploy\nWe deploy with `make release` from main.\n\n"
        f"## Background\n{body}\n\n## Rollback\nRevert the release tag, then redeploy.\n"
    )


def test_sections_become_memories_with_their_text(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    ctx = make_ctx()
    (files / "runbook.md").write_text(long_doc())
    (file,) = run_import(ctx, files / "runbook.md").files
    assert (file.strategy, file.imported) == ("section", 3)
    by_source = {m.source.rpartition("#")[2]: m for m in stored(ctx)}
    assert sorted(by_source) == ["Background", "Deploy", "Rollback"]
    deploy = by_source["Deploy"]
    assert deploy.content == "## Deploy\nWe deploy with `make release` from main."
    assert deploy.l0_abstract == "Deploy: We deploy with `make release` from main."
    assert deploy.category == Category.PATTERNS and deploy.confidence == 0.8  # a procedure


def test_reimport_is_a_no_op_and_force_reconciles(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    ctx = make_ctx()
    for name in ("conversation.txt", "mem0-get-all.json", "obsidian-note.md"):
        fixture(files, name)
    first = run_import(ctx, files)
    assert [f.status for f in first.files] == ["imported"] * 3
    before = (len(stored(ctx)), count_sessions(ctx.db), len(list_runs(ctx.db, 100)))
    again = run_import(ctx, files)
    assert [f.status for f in again.files] == ["unchanged"] * 3
    assert again.total("imported") == 0 and all("--force" in f.why for f in again.files)
    assert (len(stored(ctx)), count_sessions(ctx.db), len(list_runs(ctx.db, 100))) == before
    forced = run_import(ctx, files, force=True)
    assert [f.status for f in forced.files] == ["imported"] * 3
    assert forced.total("imported") == 0 and forced.total("skipped") == first.total("imported") + 1
    assert count_sessions(ctx.db) == before[1]  # the raw text is not stored twice


def test_the_same_content_twice_in_one_import(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    ctx = make_ctx()
    (files / "a.md").write_text("I prefer tabs over spaces.\n")
    (files / "b.md").write_text("I prefer tabs over spaces.\n")
    a, b = run_import(ctx, files).files
    assert (a.status, b.status) == ("imported", "skipped") and "a.md" in b.why


def test_one_bad_file_does_not_stop_the_rest(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    (files / "a-good.md").write_text("We deploy with make release.\n")
    (files / "b-broken.json").write_text('[{"title": "x", "mapping": {"n": {"message": ')
    (files / "c-picture.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (files / "d-unknown.json").write_text('{"anything": [1, 2, 3]}')
    (files / ".hidden.md").write_text("I prefer hidden files.\n")
    (files / "e-good.md").write_text("I prefer tabs over spaces.\n")
    report = run_import(ctx, files, files / "missing.md")
    status = {f.name.rpartition("/")[2]: (f.status, f.error or f.why) for f in report.files}
    assert status["a-good.md"][0] == status["e-good.md"][0] == "imported"
    assert status["b-broken.json"][0] == "failed"
    assert status["c-picture.png"] == (
        "skipped",
        f"{files / 'c-picture.png'} holds binary data, not text or a known export format",
    )
    assert status["d-unknown.json"][0] == "skipped"  # met in a directory: not asked for
    assert status["missing.md"] == (
        "failed",
        f"no such file or directory: {files / 'missing.md'}",
    )
    assert ".hidden.md" not in status
    assert sorted(m.content for m in stored(ctx)) == [
        "I prefer tabs over spaces.",
        "We deploy with make release.",
    ]
    assert find_import(ctx.db, report.files[1].sha256, ctx.settings.project_scope, None) is None
    named = run_import(ctx, files / "c-picture.png").files[0]
    assert named.status == "failed" and "binary" in (named.error or "")  # asked for by name


def test_the_raw_text_is_kept_when_distilling_fails(
    make_ctx: Callable[..., Context], files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_ctx()
    text = "# Notes\n\nI prefer tabs over spaces. <private>my diary</private>\n"
    (files / "notes.md").write_text(text)

    def broken(*args: object) -> list[object]:
        raise OSError("disk gone")

    monkeypatch.setattr(pipeline, "distil", broken)
    (file,) = run_import(ctx, files / "notes.md").files
    assert (file.status, file.error) == ("failed", "disk gone")
    record = find_import(ctx.db, file.sha256, ctx.settings.project_scope, None)
    assert record is not None and (record.status, record.error) == ("failed", "disk gone")
    (raw,) = latest_messages(ctx.db, record.session_id or "", 0, 10)
    assert raw.content == text.replace("<private>my diary</private>", "[REDACTED]")
    assert list_runs(ctx.db, 10)[0].status == "failed" and stored(ctx) == []
    monkeypatch.undo()
    (retry,) = run_import(ctx, files / "notes.md").files
    assert retry.status == "imported" and retry.session_id == record.session_id
    assert count_sessions(ctx.db) == (1, 1)


def test_facts_of_a_batch_are_deduplicated_on_an_empty_store(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    ctx = make_ctx()
    (files / "chat.txt").write_text(
        "user: I prefer tabs over spaces.\nassistant: ok\nuser: I prefer tabs over spaces!\n"
    )
    (file,) = run_import(ctx, files / "chat.txt").files
    assert (file.imported, file.skipped) == (1, 1)
    run = list_runs(ctx.db, 1)[0]
    assert {
        "verdict": "dropped",
        "stage": "dedupe",
        "fact": "I prefer tabs over spaces!",
        "reason": "repeats an earlier fact of this batch",
    } in run.decisions


def test_a_private_block_across_pieces_never_reaches_the_store(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    ctx = make_ctx()
    filler = "".join(f"Line {i} of the notes, nothing to see.\n" for i in range(4000))
    text = f"{filler}<private>\nthe secret plan\n{filler}</private>\nI prefer tabs over spaces.\n"
    (files / "big.txt").write_text(text)
    (file,) = run_import(ctx, files / "big.txt").files
    assert file.status == "imported" and file.redactions["private_blocks"] == 1
    raw = "".join(m.content for m in latest_messages(ctx.db, file.session_id or "", 0, 1000))
    assert raw == f"{filler}[REDACTED]\nI prefer tabs over spaces.\n"
    assert "secret plan" not in ctx.db.path.read_bytes().decode("latin-1")


def test_a_dry_run_writes_nothing(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    (files / "runbook.md").write_text(long_doc())
    fixture(files, "mem0-get-all.json")
    fixture(files, "memctl-memory.yaml")
    report = run_import(ctx, files, dry_run=True)
    summary = [(f.format, f.strategy, f.status, f.imported, f.skipped) for f in report.files]
    assert summary == [
        ("mem0", "records", "dry-run", 2, 1),
        ("memctl-yaml", "native", "dry-run", 1, 0),
        ("markdown", "section", "dry-run", 3, 0),
    ]
    assert stored(ctx, states=[s.value for s in State]) == []
    assert count_sessions(ctx.db) == (0, 0) and list_runs(ctx.db, 10) == []
    assert ctx.db.value("SELECT count(*) FROM imports") == 0


def test_scope_and_tags(make_ctx: Callable[..., Context], files: Path) -> None:
    ctx = make_ctx()
    (files / "a.md").write_text("I prefer tabs over spaces.\n")
    run_import(ctx, files / "a.md", scope="global", tags=("imported", "notes"))
    (memory,) = stored(ctx, scope="global")
    assert memory.tags == ["imported", "notes"]
    (again,) = run_import(ctx, files / "a.md").files  # another scope: imported there too
    assert again.status == "imported"


def test_an_undone_import_can_be_imported_again(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    ctx = make_ctx()
    (files / "a.md").write_text("I prefer tabs over spaces.\n")
    (file,) = run_import(ctx, files / "a.md").files
    undo(ctx, file.run_id or "")
    assert stored(ctx) == []
    (again,) = run_import(ctx, files / "a.md").files
    assert again.status == "imported" and len(stored(ctx)) == 1


def test_three_files_distil_at_once_and_one_thread_writes(
    make_ctx: Callable[..., Context], files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_ctx()
    for i in range(7):
        (files / f"note{i}.md").write_text(f"I prefer editor number {i}.\n")
    active, peak, calls, lock = [0], [0], [0], threading.Lock()
    writers: set[int] = set()
    real_distil, real_write = pipeline.distil, pipeline._Importer.write
    # the first three wait for one another: three at once however busy the machine is (a
    # sleep left that to the scheduler, and a loaded machine ran them one after another)
    together = threading.Barrier(3)

    def distil(*args: Any) -> Any:
        with lock:
            active[0] += 1
            calls[0] += 1
            first = calls[0] <= 3
            peak[0] = max(peak[0], active[0])
        if first:
            together.wait(timeout=30)
        try:
            return real_distil(*args)
        finally:
            with lock:
                active[0] -= 1

    def write(self: Any, *args: Any) -> None:
        writers.add(threading.get_ident())
        real_write(self, *args)

    monkeypatch.setattr(pipeline, "distil", distil)
    monkeypatch.setattr(pipeline._Importer, "write", write)
    report = run_import(ctx, files)
    assert [f.status for f in report.files] == ["imported"] * 7
    assert peak[0] == 3 and writers == {threading.get_ident()}


def test_extraction_allows_facts_per_llm_call_worth_of_text(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    """A long unit is not cut at extract.max_facts: the cap grows with its length."""
    ctx = make_ctx(extract__max_facts=10, extract__chunk_chars=1000)
    said = "".join(f"I prefer editor{i} for project{i}. Filler words here.\n" for i in range(40))
    (files / "prefs.md").write_text(said)  # 2,200 characters: room for 3 x 10 facts
    (target,) = expand([str(files / "prefs.md")])
    run = start_run(ctx, "import", None, ctx.settings.project_scope)
    facts = distil(run, Plan(target, survey(target), "atomic", "asked for"))
    assert len(facts) == 30
    assert facts[0].content == "I prefer editor0 for project0."


def test_an_import_tells_its_progress_in_each_stage(
    make_ctx: Callable[..., Context], files: Path
) -> None:
    note = fixture(files, "basic-memory-note.md")
    jsonl = files / "m.jsonl"
    jsonl.write_text("".join(f'{{"content": "Imported fact {n}."}}\n' for n in range(70)))
    seen: list[tuple[str, int, int]] = []
    targets = expand([str(note), str(jsonl)])
    import_files(make_ctx(), targets, ImportOptions(), lambda *step: seen.append(step))
    last = {stage: (done, total) for stage, done, total in seen}
    size = note.stat().st_size + jsonl.stat().st_size
    facts = last[pipeline.EMBEDDING][1]
    assert facts > 0 and last[pipeline.EMBEDDING] == (facts, facts)
    assert last[pipeline.READING] == (size, size) and last[pipeline.WRITING][0] > 0
    assert [s[1:] for s in seen if s[0] == pipeline.IMPORTING] == [(0, 70), (64, 70), (70, 70)]
