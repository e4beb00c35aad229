"""File import with an LLM: the section and document prompts (retried twice, with backoff),
the fallback to derived abstracts, and atomic extraction, against the loopback fake Ollama."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memctl.context import Context
from memctl.imports.files import expand
from memctl.imports.pipeline import ImportOptions, import_files
from memctl.imports.report import ImportReport
from memctl.memories import operations as memories
from memctl.model import Category, Memory
from memctl.store.runs import get_run
from tests import ollama_server as fake
from tests.ollama_server import Fail, FakeOllama, Malformed

ollama_server = fake.ollama_server
RUNBOOK = (
    "# Runbook\n\n## Deploy\nWe deploy with `make release` from main.\n\n"
    f"## Background\n{' '.join(f'filler{i}' for i in range(560))}\n\n"
    "## Rollback\nRevert the release tag, then redeploy.\n"
)


def summary(l0: str, category: str = "patterns") -> dict[str, Any]:
    return {
        "l0_abstract": l0,
        "l1_overview": f"{l0}.\nMore.",
        "l2_content": f"{l0}, in detail.",
        "category": category,
        "tags": ["runbook"],
        "importance": 0.9,
    }


def run_import(ctx: Context, path: Path, **options: Any) -> ImportReport:
    return import_files(ctx, expand([str(path)]), ImportOptions(**options))


def by_heading(ctx: Context) -> dict[str, Memory]:
    found = memories.list_memories(ctx, memories.make_filter(ctx), limit=None)
    return {m.source.rpartition("#")[2]: m for m in found}


def prompts(server: FakeOllama) -> list[tuple[str, str]]:
    return [
        (body["messages"][0]["content"], body["messages"][1]["content"])
        for body in server.requests_to("/api/chat")
    ]


def test_section_prompts_are_retried_twice_with_backoff(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama, tmp_path: Path
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url, llm__backoff_seconds=0.05)
    (tmp_path / "runbook.md").write_text(RUNBOOK)
    ollama_server.script_chat(
        Fail(500, "model is loading"),
        Malformed(),
        summary("How Tidepool deploys"),
        summary("Why the runbook exists", "entities"),
        summary("How to roll back"),
    )
    began = time.monotonic()
    (file,) = run_import(ctx, tmp_path / "runbook.md").files
    assert time.monotonic() - began >= 0.15  # waited 0.05 s, then 0.1 s
    assert (file.strategy, file.imported) == ("section", 3)
    asked = prompts(ollama_server)
    assert len(asked) == 5  # 3 attempts for the first section; no reconcile call on an empty store
    system, prompt = asked[0]
    assert "one section of a document" in system
    assert prompt.startswith("Document: Runbook\nSection: Deploy\n\n## Deploy\nWe deploy")
    made = by_heading(ctx)
    deploy = made["Deploy"]
    assert deploy.content == "## Deploy\nWe deploy with `make release` from main."
    assert (deploy.l0_abstract, deploy.l2_content) == (
        "How Tidepool deploys",
        "How Tidepool deploys, in detail.",
    )
    assert (deploy.category, deploy.tags, deploy.importance) == (
        Category.PATTERNS,
        ["runbook"],
        0.9,
    )
    assert made["Background"].category == Category.ENTITIES
    run = get_run(ctx.db, file.run_id or "")
    assert run is not None and run.kind == "import" and run.llm == "ollama:llama3.2"
    assert run.counts["llm_calls"] == 3 and run.tokens > 0


def test_when_the_llm_gives_out_the_abstracts_are_derived(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama, tmp_path: Path
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    (tmp_path / "runbook.md").write_text(RUNBOOK)
    ollama_server.script_chat(Fail(500, "a"), Fail(500, "b"), Fail(500, "c"))
    (file,) = run_import(ctx, tmp_path / "runbook.md").files
    assert file.imported == 3
    assert len(prompts(ollama_server)) == 3  # the other sections do not ask again
    made = by_heading(ctx)
    assert made["Deploy"].l0_abstract == "Deploy: We deploy with `make release` from main."
    assert made["Rollback"].l2_content == made["Rollback"].content
    run = get_run(ctx.db, file.run_id or "")
    assert run is not None and run.llm == "ollama:llama3.2 -> rules"
    assert any("rule-based stages for the rest of this run" in n for n in run.notes)


def test_a_document_prompt_and_a_long_text_keeps_itself_as_l2(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama, tmp_path: Path
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url, extract__chunk_chars=500)
    text = "# Release checklist\n\n" + "Check the smoke tests and the changelog. " * 30
    (tmp_path / "checklist.md").write_text(text)
    ollama_server.script_chat(summary("What a release needs"))
    (file,) = run_import(ctx, tmp_path / "checklist.md").files
    assert file.strategy == "document"
    ((system, prompt),) = prompts(ollama_server)
    assert system.startswith("You index a document (or a part of one) a person imported")
    assert prompt == "Document: Release checklist\n\n" + text[:500]
    (memory,) = by_heading(ctx).values()
    assert memory.l0_abstract == "What a release needs"
    assert memory.content == memory.l2_content == text.strip()  # longer than what was sent


def test_atomic_facts_come_from_the_llm(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama, tmp_path: Path
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    (tmp_path / "chat.txt").write_text(
        "user: My team runs the ledger service.\nassistant: Noted.\n"
        "user: It is written in Rust and deployed on Fridays never.\n"
    )
    fact = {
        "content": "The user's team runs the ledger service, written in Rust.",
        "l0_abstract": "Team runs the Rust ledger service",
        "category": "entities",
        "tags": ["ledger"],
        "importance": 0.8,
        "confidence": 0.9,
        "source_message": 3,
    }
    ollama_server.script_chat({"facts": [fact]})
    (file,) = run_import(ctx, tmp_path / "chat.txt").files
    assert (file.strategy, file.imported) == ("atomic", 1)
    ((system, prompt),) = prompts(ollama_server)
    assert "[1] user: My team runs the ledger service." in prompt
    (memory,) = by_heading(ctx).values()
    assert memory.content == fact["content"] and memory.tags == ["ledger"]
    assert memory.source == f"file:{tmp_path / 'chat.txt'}#message-3"
