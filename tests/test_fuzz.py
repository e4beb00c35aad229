"""Fuzzing every parser and the full-text query path with hypothesis: whatever the bytes,
memctl answers with a MemctlError (one line, exit 1-6) or a result, never an internal
error. Examples are few and bounded so the suite stays fast; a failure prints the input
that caused it."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memctl.api.recall import RecallRequest, recall
from memctl.config.settings import read_config_file
from memctl.context import Context
from memctl.errors import MemctlError
from memctl.imports.files import Target
from memctl.imports.pipeline import ImportOptions, import_files
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.parse import CLIENTS, read_transcript
from memctl.memories.operations import remember
from memctl.store.fts import fts_phrases, fts_query
from memctl.sync.records import parse_record
from tests.ingesting import source

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# JSON-ish values, nested a little, with the keys transcripts and exports use.
KEYS = st.sampled_from(
    ["role", "content", "type", "message", "messages", "text", "parts", "mapping", "id",
     "title", "payload", "timestamp", "created_at", "memory", "tags", "session_id", "info",
     "chat_messages", "sender", "author", "children", "parent", "uuid", "name", "x"]
)  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["user", "assistant", "system", "tool", "human", "ai", "text", "tool_use"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=20,
)


def _json_lines(values: list[object]) -> bytes:
    return "\n".join(json.dumps(v, allow_nan=True) for v in values).encode()


def _damaged(data: bytes, cut: int, junk: bytes) -> bytes:
    """``data`` with ``junk`` (NULs, broken UTF-8, brackets) spliced in at ``cut``."""
    at = cut % (len(data) + 1)
    return data[:at] + junk + data[at:]


JUNK = st.sampled_from([b"", b"\x00", b"\x00" * 50, b"\xff\xfe", b"{", b"[[[", b"\n\n", b"\r"])
DOCUMENTS = st.one_of(
    st.binary(max_size=300),
    st.builds(_json_lines, st.lists(VALUES, max_size=6)),
    st.builds(lambda v: json.dumps(v, allow_nan=True).encode(), VALUES),
    st.builds(
        lambda text: text.encode(),
        st.text(alphabet=string.printable + "ü中\u2028", max_size=300),
    ),
)
INPUTS = st.builds(_damaged, DOCUMENTS, st.integers(min_value=0), JUNK)


@FUZZ
@given(data=INPUTS, client=st.sampled_from([None, *CLIENTS]))
def test_transcript_parsers_never_crash(data: bytes, client: str | None) -> None:
    try:
        transcript = read_transcript(source(data), client)
        for message in transcript.messages:
            assert isinstance(message.content, str)
    except MemctlError:
        pass


@FUZZ
@given(data=INPUTS, client=st.sampled_from([None, *CLIENTS]))
def test_the_fast_path_stores_or_refuses_cleanly(
    ctx: Context, data: bytes, client: str | None
) -> None:
    try:
        capture(ctx, source(data), IngestOptions(client=client, mode="raw"))
    except MemctlError:
        pass


@FUZZ
@given(
    data=INPUTS,
    suffix=st.sampled_from([".md", ".txt", ".json", ".jsonl", ".yaml", ".markdown"]),
)
def test_file_import_never_crashes(ctx: Context, tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"fuzzed{suffix}"
    path.write_bytes(data)
    report = import_files(ctx, [Target(str(path), path)], ImportOptions(force=True))
    for file in report.files:
        assert file.status in ("imported", "unchanged", "skipped", "failed")
        assert "Error:" not in (file.error or ""), file.error  # a user's sentence, no exception


@FUZZ
@given(line=st.one_of(st.text(max_size=200), st.builds(json.dumps, VALUES)))
def test_memctl_jsonl_records_raise_only_value_errors(line: str) -> None:
    try:
        parse_record(line, "global")
    except (ValueError, TypeError, MemctlError):
        pass


@FUZZ
@given(text=st.one_of(st.text(max_size=200), st.builds(lambda v: json.dumps(v), VALUES)))
def test_config_files_are_read_or_refused_as_config_errors(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        read_config_file(path)
    except MemctlError:
        pass


QUERIES = st.text(
    alphabet=st.sampled_from(list("abcxyz \"*-:^()+{}.,NEARORANDNOT'\\0\u00e9\u4e2d\U0001f600")),
    max_size=60,
) | st.text(max_size=60)


@FUZZ
@given(query=QUERIES)
def test_fts_queries_are_well_formed(ctx: Context, query: str) -> None:
    expression = fts_query(query)
    phrases = fts_phrases([query.split()])
    for match in (expression, phrases):
        if match is not None:
            ctx.db.rows(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT 1", (match,)
            )


@pytest.fixture
def stocked(ctx: Context) -> Context:
    remember(ctx, 'We deploy the "billing" service with make release (NEAR main) on Fridays.')
    remember(ctx, "I prefer helix; never use OR/AND/NOT in branch names: a*b -c")
    return ctx


@FUZZ
@given(query=QUERIES)
def test_recall_answers_any_query(stocked: Context, query: str) -> None:
    try:
        result = recall(stocked, RecallRequest(query=query, touch=False, sessions=True))
    except MemctlError:
        return
    assert isinstance(result.result.results, list)
