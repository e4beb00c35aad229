"""The LLM through the real ollama client against the fake Ollama server: answers, retries,
failures, and what the ingest stages do with them (each of the seven decisions, fallbacks,
the token budget)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memctl.context import Context
from memctl.ingest.undo import undo
from memctl.llm import LLMError
from memctl.llm.ollama import OllamaLLM
from memctl.memories import operations as memories
from memctl.model import Category, Kind, Memory, RelationType, State, format_time, new_id
from memctl.store import memories as store
from memctl.store.events import run_events
from memctl.store.relations import relations_of
from memctl.store.runs import RunRecord, save_run
from tests import ollama_server as fake
from tests.conftest import run_cli
from tests.ingesting import distil
from tests.ollama_server import Delay, Fail, FakeOllama, Malformed

ollama_server = fake.ollama_server
dead_ollama_url = fake.dead_ollama_url
MODEL = "llama3.2"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def llm(url: str, **kwargs: Any) -> OllamaLLM:
    options = {"timeout": 5.0, "retries": 2, "backoff": 0.0, **kwargs}
    return OllamaLLM(host=url, model=MODEL, **options)


def number(value: Any) -> int:
    if not isinstance(value, dict) or not isinstance(value.get("n"), int):
        raise ValueError("no n")
    return value["n"]


def test_a_json_answer_is_validated_and_its_tokens_counted(ollama_server: FakeOllama) -> None:
    ollama_server.script_chat({"n": 7})
    answer = llm(ollama_server.url).complete_json("system text", "prompt text", SCHEMA, number)
    assert answer.value == 7 and answer.prompt_tokens > 0 and answer.output_tokens == 2
    (body,) = ollama_server.requests_to("/api/chat")
    assert body["format"] == SCHEMA and body["stream"] is False
    assert body["options"] == {"temperature": 0.0}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_invalid_answers_are_retried_with_backoff_then_given_up(ollama_server: FakeOllama) -> None:
    ollama_server.script_chat("not json", {"wrong": 1}, {"n": 3})
    assert llm(ollama_server.url).complete_json("s", "p", SCHEMA, number).value == 3
    ollama_server.script_chat(Malformed(), "{", {"n": "x"})
    began = time.monotonic()
    with pytest.raises(LLMError) as caught:
        llm(ollama_server.url, backoff=0.05).complete_json("s", "p", SCHEMA, number)
    assert time.monotonic() - began >= 0.15  # 0.05 s, then 0.1 s
    assert caught.value.reason == "invalid" and caught.value.tokens > 0
    assert len(ollama_server.requests_to("/api/chat")) == 6


def test_a_server_error_is_retried(ollama_server: FakeOllama) -> None:
    ollama_server.script_chat(Fail(500, "out of memory"), {"n": 1})
    assert llm(ollama_server.url).complete_json("s", "p", SCHEMA, number).value == 1


def test_timeouts(ollama_server: FakeOllama) -> None:
    ollama_server.script_chat(Delay(2.0, {"n": 1}), Delay(2.0, {"n": 1}))
    host = ollama_server.url.replace("://", "://bob:tok-s3cret@")  # a run keeps the message
    with pytest.raises(LLMError, match="did not answer within 0.2 s") as caught:
        llm(host, timeout=0.2, retries=1).complete_json("s", "p", SCHEMA, number)
    assert caught.value.reason == "timeout" and "tok-s3cret" not in str(caught.value)
    assert ollama_server.url.replace("://", "://bob:***@") in str(caught.value)


def test_server_down(dead_ollama_url: str) -> None:
    with pytest.raises(LLMError, match="cannot reach Ollama") as caught:
        llm(dead_ollama_url).complete_json("s", "p", SCHEMA, number)
    assert caught.value.reason == "unreachable"


def test_a_missing_model_is_not_retried(ollama_server: FakeOllama) -> None:
    with pytest.raises(LLMError, match="ollama pull mistral"):
        OllamaLLM(ollama_server.url, "mistral", 5.0, backoff=0).complete_json(
            "s", "p", SCHEMA, number
        )
    assert len(ollama_server.requests_to("/api/chat")) == 1


def fact(content: str, category: str = "preferences", **extra: Any) -> dict[str, Any]:
    return {
        "content": content,
        "l0_abstract": content[:40],
        "l1_overview": f"{content}\nsecond line",
        "l2_content": f"{content} (all the detail)",
        "category": category,
        "tags": ["editor"],
        "importance": 0.8,
        "confidence": 0.9,
        "source_message": 1,
        **extra,
    }


def test_llm_extraction_end_to_end(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    ollama_server.script_chat(
        {"facts": [fact("Alice prefers Helix as her editor"), fact("bad", category="hobbies")]}
    )
    run = distil(ctx, "user: I use Helix these days.\nassistant: Nice.\n")
    assert run.record.llm == f"ollama:{MODEL}" and run.record.counts == {
        "create": 1,
        "llm_calls": 1,
    }
    assert 0 < run.record.tokens <= run.record.token_budget
    (made,) = memories.list_memories(ctx, memories.make_filter(ctx))
    assert (made.content, made.l0_abstract) == (
        "Alice prefers Helix as her editor",
        "Alice prefers Helix as her editor"[:40],
    )
    assert made.l2_content.endswith("(all the detail)") and made.tags == ["editor"]
    assert (made.importance, made.confidence, made.source) == (0.8, 0.9, "session:s1#1:user")
    (request,) = ollama_server.requests_to("/api/chat")
    assert "[1] user: I use Helix these days." in request["messages"][1]["content"]
    assert "[2] assistant: Nice." in request["messages"][1]["content"]
    assert request["format"]["properties"]["facts"]["items"]["properties"]["category"]["enum"]
    (extract_trace,) = [t for t in run.trace if t.stage == "extract"]
    assert extract_trace.notes == ["1 unusable facts in the LLM's answer"]


def test_long_input_is_cut_into_chunks_per_call(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url, extract__chunk_chars=600)
    ollama_server.script_chat({"facts": []}, {"facts": []}, {"facts": []})
    distil(ctx, "user: " + "word " * 300 + "\nassistant: ok\n")
    prompts = [r["messages"][1]["content"] for r in ollama_server.requests_to("/api/chat")]
    assert len(prompts) == 3 and all(len(p) <= 600 for p in prompts)


def existing(ctx: Context, text: str, category: Category = Category.PREFERENCES) -> Memory:
    memory = Memory(content=text, category=category, kind=Kind.SEMANTIC, confidence=0.7)
    memory.scope = ctx.settings.project_scope
    (vector,) = ctx.vectors([text])
    with ctx.db.atomic():
        store.insert_memory(ctx.db, memory, vector)
    return memory


def relations(ctx: Context, memory_id: str) -> set[tuple[str, str, RelationType]]:
    return {(r.src_id, r.dst_id, r.type) for r in relations_of(ctx.db, memory_id)}


DECISIONS = ["CREATE", "MERGE", "SKIP", "SUPERSEDE", "SUPPORT", "CONTEXTUALIZE", "CONTRADICT"]


@pytest.mark.parametrize("action", DECISIONS)
def test_each_llm_decision_is_applied_and_undone(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama, action: str
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    category = Category.PATTERNS if action == "CONTRADICT" else Category.PREFERENCES
    old = existing(ctx, "Alice writes Go code with tabs", category)
    old_vector = store.vectors_for(ctx.db, [old.id])[old.id]
    new_text = "Alice writes Go code with tabs only in the backend"
    ollama_server.script_chat(
        {"facts": [fact(new_text, category=str(category))]},
        {
            "decisions": [
                {
                    "fact": 1,
                    "action": action,
                    "target": 1,
                    "merged": "Alice: Go, tabs, backend",
                    "reason": "test",
                }
            ]
        },
    )
    run = distil(ctx, f"user: {new_text}\n")
    assert run.record.counts[action.lower()] == 1, run.record
    (reconcile_call,) = ollama_server.requests_to("/api/chat")[1:]
    assert (
        "[1] (" in reconcile_call["messages"][1]["content"]
        and "today)" in reconcile_call["messages"][1]["content"]
    )
    after = store.get_memory(ctx.db, old.id)
    assert after is not None
    active = memories.list_memories(ctx, memories.make_filter(ctx, states=["active"]))
    new = [m for m in active if m.id != old.id]
    if action == "MERGE":
        assert after.content == "Alice: Go, tabs, backend" and not new
        assert store.vectors_for(ctx.db, [old.id])[old.id] != old_vector  # re-embedded
    elif action == "SKIP":
        assert after == old and not new
        # nothing changed; the one event names the message as one more source of the memory
        (named,) = run_events(ctx.db, run.id)
        assert (named.data["before"], named.data["after"]) == ({}, {})
        assert named.data["source"] == "session:s1#1:user"
    else:
        assert [m.content for m in new] == [new_text]
    if action == "SUPERSEDE":
        assert (after.state, after.superseded_by) == (State.SUPERSEDED, new[0].id)
        assert after.invalidated_at is not None
        assert relations(ctx, old.id) == {(new[0].id, old.id, RelationType.SUPERSEDES)}
    if action == "SUPPORT":
        assert after.confidence == pytest.approx(0.8)
        assert relations(ctx, old.id) == {(new[0].id, old.id, RelationType.SUPPORTS)}
    if action == "CONTEXTUALIZE":
        assert relations(ctx, old.id) == {(new[0].id, old.id, RelationType.CONTEXTUALIZES)}
    if action == "CONTRADICT":
        assert after.state == State.ACTIVE
        assert relations(ctx, old.id) == {
            (new[0].id, old.id, RelationType.CONTRADICTS),
            (old.id, new[0].id, RelationType.CONTRADICTS),
        }
    assert all(e.run_id == run.id for e in run_events(ctx.db, run.id))
    undone = undo(ctx, run.id[:8])
    restored = store.get_memory(ctx.db, old.id)
    assert restored is not None
    assert (restored.content, restored.state, restored.confidence) == (
        old.content,
        old.state,
        old.confidence,
    )
    assert (restored.superseded_by, restored.invalidated_at) == (None, None)
    assert np.array_equal(
        np.frombuffer(store.vectors_for(ctx.db, [old.id])[old.id], np.float32),
        np.frombuffer(old_vector, np.float32),
    )
    assert relations(ctx, old.id) == set()
    assert [
        m.id for m in memories.list_memories(ctx, memories.make_filter(ctx, states=["active"]))
    ] == [old.id]
    # a skip's event changed nothing, so nothing is reverted (its run undone, it names no source)
    assert undone.reverted == (0 if action == "SKIP" else len(run_events(ctx.db, run.id)))


@pytest.mark.parametrize("failure", ["invalid", "timeout", "down"])
def test_llm_failures_fall_back_to_the_rules_and_say_so(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama, dead_ollama_url: str, failure: str
) -> None:
    url = dead_ollama_url if failure == "down" else ollama_server.url
    ctx = make_ctx(llm_url=url, llm__timeout=0.2, llm__retries=1)
    if failure == "invalid":
        ollama_server.script_chat("{not json", "[]")
    elif failure == "timeout":
        ollama_server.script_chat(Delay(2.0), Delay(2.0))
    run = distil(ctx, "user: I prefer tabs over spaces.\n")
    assert run.record.llm == f"ollama:{MODEL} -> rules"
    assert run.record.counts == {"create": 1}
    reason = {"invalid": "(invalid)", "timeout": "(timeout)", "down": "(unreachable)"}[failure]
    assert any(reason in note and "rule-based" in note for note in run.record.notes)


def test_the_token_budget_is_kept(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url, ingest__token_budget=500)
    run = distil(ctx, "user: I prefer tabs over spaces.\n")
    assert ollama_server.requests_to("/api/chat") == []  # no call could fit
    assert run.record.tokens == 0 and run.record.counts == {"create": 1}
    assert "token budget of 500" in run.record.notes[0]


def test_the_preference_slot_guard_decides_without_the_llm(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    latte = existing(ctx, "Alice likes Starbucks latte")
    ollama_server.script_chat({"facts": [fact("Alice likes Starbucks americano")]})
    run = distil(ctx, "user: These days I like Starbucks americano.\n")
    assert len(ollama_server.requests_to("/api/chat")) == 1  # extraction only
    (decision,) = [d for d in run.record.decisions if d["verdict"] == "create"]
    assert decision["by"] == "guard" and latte.id[:8] in decision["reason"]
    assert store.get_memory(ctx.db, latte.id).state == State.ACTIVE  # type: ignore[union-attr]


def test_the_daily_token_budget_counts_every_run_of_the_day_and_runs_shows_it(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    daily = 5000
    ctx = make_ctx(llm_url=ollama_server.url, llm__daily_token_budget=daily)
    save_run(ctx.db, RunRecord(new_id(), "ingest", "done", tokens=daily, started_at=YESTERDAY))
    ollama_server.script_chat({"facts": [fact("Ann prefers tabs over spaces")]})
    first = distil(ctx, "user: I prefer tabs over spaces.\n", "s1")
    assert len(ollama_server.requests_to("/api/chat")) == 1 and first.record.tokens > 0
    save_run(ctx.db, RunRecord(new_id(), "import", "done", tokens=daily - first.record.tokens))
    second = distil(ctx, "user: I prefer dark mode.\n", "s2")  # the day is spent
    assert len(ollama_server.requests_to("/api/chat")) == 1 and second.record.tokens == 0
    assert "daily token budget of 5000" in second.record.notes[0]
    assert second.record.llm.endswith("-> rules") and second.record.counts["create"] == 1
    shown = run_cli("-c", f"llm.daily_token_budget={daily}", "runs").stdout
    assert f"LLM tokens today: {daily} of {daily} (llm.daily_token_budget)" in shown


YESTERDAY = format_time(datetime.now(UTC) - timedelta(days=1, hours=1))
