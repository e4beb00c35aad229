"""Distillation by the host model: the tasks memctl hands out and the answers it applies."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from memctl.api.distil import distil_apply, distil_tasks
from memctl.api.ingest import IngestRequest, ingest
from memctl.api.memory import ListRequest, list_memories
from memctl.context import Context
from memctl.errors import InputError, NotFoundError

CHAT = b"user: Our staging database is called pg-stage-2.\nassistant: Got it.\n"


def test_the_host_extracts_and_memctl_reconciles(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx(ingest__spawn_worker=False)
    ingest(ctx, IngestRequest(stdin=io.BytesIO(CHAT), session_id="chat-1"))
    [task] = distil_tasks(ctx)
    assert task.session_id == "chat-1" and "durable facts" in task.system
    assert "pg-stage-2" in task.chunks[0] and task.schema["required"] == ["facts"]
    fact = {
        "content": "The staging database is called pg-stage-2.",
        "l0_abstract": "Staging database: pg-stage-2",
        "category": "entities",
        "importance": 0.8,
        "source_message": 1,
    }
    record = distil_apply(ctx, task.job_id, [{"facts": [fact]}])
    assert record.status == "done" and record.llm.startswith("host")
    contents = [m.content for m in list_memories(ctx, ListRequest())]
    assert contents == ["The staging database is called pg-stage-2."]
    assert distil_tasks(ctx) == []  # done: nothing waits any more
    with pytest.raises(InputError, match="no longer waiting"):
        distil_apply(ctx, task.job_id, [{"facts": [fact]}])
    with pytest.raises(NotFoundError):
        distil_apply(ctx, 999, [{"facts": []}])
