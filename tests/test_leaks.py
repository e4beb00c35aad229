"""Nothing lost, nothing leaked, on the surfaces the last two stops added: what goes with
a forgotten memory or session (its questions' index, its vectors beside the database,
its learned noise, what was made from it, at the sync remote's head) and what stays (an
entity a one-word message happens to be part of); what a host or an LLM writes (facts,
triples, questions, an import's summary, a merge, the profile) keeps no secret; a
project's profile, graph, graph paths, MCP front and resident answers stay in it; the
resident process goes with its home and answers a client from the client's home; the
identity files are scrubbed and init's template goes with uninstall. Real SQLite files,
real `memctl` processes, real MCP sessions, a real Unix socket, a real bare git
repository and a real HTTP server speaking the Ollama API."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from memctl.api import sync as sync_api
from memctl.api.distil import DistilRequest, PendingRequest, distil, pending
from memctl.api.maintain import MaintainRequest, maintain
from memctl.api.memory import RememberRequest, redact, remember
from memctl.config import load_settings
from memctl.context import Context
from memctl.embed.hashed import HashEmbedder
from memctl.imports.files import expand
from memctl.imports.pipeline import ImportOptions, import_files
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.meaning import document_text
from memctl.ingest.pipeline import run_session
from memctl.integrations import resident
from memctl.retrieve.pipeline import Recalled, run_stages, stages_for, start
from memctl.retrieve.stages.graph import graph, is_synthetic
from tests.conftest import run_cli
from tests.ingesting import claude_record, claude_work_session, source
from tests.integrations.test_integrations_mcp import stdio
from tests.integrations.test_mcp_front_search import HANDSHAKE, HANGING_SDK, Server, search
from tests.integrations.test_resident import ON, gone, stop_every_daemon
from tests.maintain.test_maintain import put
from tests.memories.test_forget_everywhere import _files_holding, _files_holding_bytes
from tests.ollama_server import FakeOllama
from tests.syncing import bare_repo, git, machine, shared
from tests.test_secret_doors import CORPUS

WORD = "quokka7marmalade"  # a word nobody else says
PRIVATE = "zebrafinch-private-plan"


def _ok(*args: str, cwd: Path | None = None) -> str:
    done = run_cli(*args, cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _project(path: Path) -> Path:
    """A directory that is a project of its own (a git work tree)."""
    (path / ".git").mkdir(parents=True)
    return path


# --- forgetting: a memory's questions and its vector go with it


def test_a_deleted_memory_s_questions_leave_no_word_in_the_file(make_ctx, home: Path) -> None:  # type: ignore[no-untyped-def]
    """The questions' full-text index kept the words of deleted questions in its old
    segments: `delete --permanent` left the question's unique word in memctl.db."""
    ctx = make_ctx(remember__question_floor=0.0)  # kept: no model judges them
    stem = "zanzibarquux"  # a word the index's stemmer keeps whole, as the bytes hold it
    asked = (f"how often does billing retry {stem} webhooks?", "when do webhooks fail?")
    made = remember(ctx, RememberRequest("Billing retries Stripe webhooks.", questions=asked))
    assert len(made.questions.kept) == 2
    ctx.close()
    assert _files_holding(home, stem)  # the test sees it before
    _ok("delete", made.memory.id, "--permanent")
    assert _files_holding(home, stem) == []


def _vector(text: str) -> bytes:
    """A memory's stored vector, as the CLI's test embedder makes it."""
    return HashEmbedder().embed([text])[0].astype("float32").tobytes()


def _vectors(text: str) -> tuple[bytes, bytes]:
    """A memory's searched vector (its text and the other names of what it mentions) and
    the vector of its text alone, which memory_plain_vectors keeps when they differ."""
    return _vector(document_text(text)), _vector(text)


def test_a_forgotten_memory_s_vector_leaves_the_index_files(home: Path) -> None:
    """The vector index beside the database kept a removed vector in its segment (marked
    dead) until a compaction: after `delete --permanent` and `redact`, the old vectors
    were still in memctl.db.vectors/."""
    secret = f"the vault combination is {WORD} under the blue heron"
    redacted = f"the staging host is {WORD}-staging in the east rack"
    gone_id = json.loads(_ok("remember", secret, "--json"))["id"]
    _ok("remember", redacted)
    for n in range(6):
        _ok("remember", f"other fact number {n} about deployments")
    _ok("recall", "vault combination")  # the index files are written
    for text in (secret, redacted):
        searched, plain = _vectors(text)
        assert ".vectors" in " ".join(_files_holding_bytes(home, searched))
        assert _files_holding_bytes(home, plain)
    _ok("delete", gone_id, "--permanent")
    assert [_files_holding_bytes(home, v) for v in _vectors(secret)] == [[], []]
    _ok("redact", f"{WORD}-staging")
    assert [_files_holding_bytes(home, v) for v in _vectors(redacted)] == [[], []]
    assert "other fact number 3" in _ok("recall", "other fact number 3")  # the rest is found


def test_a_memory_learned_as_noise_leaves_its_vector_when_deleted_for_good(home: Path) -> None:
    """`forget --noise` keeps the memory's text and vector to drop facts like it; a
    permanent delete rewrote the text to [forgotten] and kept the vector of it."""
    secret = f"the vault combination is {WORD} under the blue heron"
    made = json.loads(_ok("remember", secret, "--json"))["id"]
    _ok("forget", made, "--noise")
    assert "memctl.db" in _files_holding_bytes(home, _vector(secret))
    _ok("delete", made, "--permanent")
    assert _files_holding_bytes(home, _vector(secret)) == []


def test_forgetting_a_one_word_message_keeps_the_entities_that_contain_it(
    home: Path, tmp_path: Path
) -> None:
    """The graph's entities were deleted when their name contained a forgotten message's
    text, however short: forgetting a session that said "ok" took "Tokyo" with it."""
    _ok("remember", "Okta handles our single sign-on for the Tokyo office")
    transcript = tmp_path / "t.jsonl"
    said = [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "Sure, done."}]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in said))
    _ok("ingest", "--transcript", str(transcript), "--wait")
    assert "Tokyo" in _ok("graph", "--all-scopes")
    session = json.loads(_ok("sessions", "list", "--all-scopes", "--json"))[0]["id"]
    _ok("sessions", "forget", session, "--yes")
    assert "Tokyo" in _ok("graph", "--all-scopes")
    assert "Tokyo office" in _ok("recall", "who handles single sign-on", "--all-scopes")


# --- what a host model or an LLM writes keeps no secret and no private text

SECRETS = [row["secret"] for row in CORPUS]


def _answer(texts: list[str]) -> dict[str, object]:
    """A model's answer quoting each text whole: in a fact's content, abstract, overview,
    tags, questions and graph triples (a host model has the unscrubbed conversation in
    its own context, and may copy from it)."""
    facts = []
    for text in texts:
        flat = " ".join(text.split())
        facts.append(
            {
                "content": f"The ops notes say: {flat} <private>{PRIVATE}</private>",
                "l0_abstract": f"ops: {flat}",
                "l1_overview": f"<private>{PRIVATE}</private> {flat}",
                "category": "patterns",
                "source_message": 1,
                "tags": [flat[:60], f"<private>{PRIVATE}</private>"],
                "questions": [f"what do the ops notes say about {flat[:120]}?"],
                "triples": [
                    ["the ops notes", "say", flat[:110]],
                    ["Alice", f"knows <private>{PRIVATE}</private>", "the ops notes"],
                ],
            }
        )
    return {"facts": facts}


def _no_secret_anywhere(home: Path) -> None:
    shown = _ok("graph", "--all-scopes", "--json") + _ok("export") + _ok("profile", "--all-scopes")
    for place in (shown, *(p.read_bytes().decode("utf-8", "replace") for p in _files(home))):
        assert [s for s in SECRETS if s in place] == []
        assert PRIVATE not in place


def _files(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file() and "models" not in p.parts]


def test_a_host_distillation_answer_is_scrubbed_facts_and_triples_alike(home: Path) -> None:
    """The host's facts (content, abstract, overview, tags) and triples were stored as
    given: a token in an answer became an entity, `memctl graph` listed it."""
    settings = load_settings(overrides={"llm": "none", "ingest.host_distil": True})
    ctx = Context(settings, embedder=HashEmbedder())
    text = "\n".join(json.dumps(line) for line in claude_work_session())
    report = capture(ctx, source(text), IngestOptions()).report
    run_session(ctx, report.session_id, report.job_id)
    (task,) = pending(ctx, PendingRequest()).batches
    texts = [row["text"] for row in CORPUS]
    distil(ctx, DistilRequest(task.session_id, task.through_seq, _answer(texts)))
    stored = ctx.db.value("SELECT count(*) FROM memories WHERE content LIKE 'The ops notes%'")
    assert stored == len(texts)  # every fact kept, its secrets taken out
    ctx.close()
    _ok("maintain")  # the profile is written, a backup made
    _no_secret_anywhere(home)


def test_a_host_model_copying_a_private_block_s_values_stores_none_of_them(home: Path) -> None:
    """The host model has the conversation whole in its context, the user's ``<private>``
    block too (the client sent it), and its `memory_distill_apply` answer copied the block's
    values into a fact, a tag, a question and a triple: stored, in the graph. The values the
    session's capture followed are hidden in every text of the answer."""
    settings = load_settings(overrides={"llm": "none", "ingest.host_distil": True})
    ctx = Context(settings, embedder=HashEmbedder())
    said = [
        {
            "role": "user",
            "content": "Book the offsite. <private>Charge it to card account "
            "ACCT-5521-0937; my manager Ormondroyd is leaving in March</private> Thanks.",
        },
        {"role": "assistant", "content": "Booked the offsite for the team on Friday."},
    ]
    text = "\n".join(json.dumps(line) for line in said)
    report = capture(ctx, source(text), IngestOptions(session_id="offsite")).report
    run_session(ctx, report.session_id, report.job_id)
    (task,) = pending(ctx, PendingRequest()).batches
    copied = "the offsite is charged to ACCT-5521-0937, and Ormondroyd is leaving in March"
    answer = {
        "facts": [
            {
                "content": f"The user said {copied}.",
                "l0_abstract": "offsite billed to ACCT-5521-0937",
                "category": "events",
                "source_message": 1,
                "tags": ["offsite", "ormondroyd"],
                "questions": ["who is Ormondroyd?"],
                "triples": [["Ormondroyd", "leaves", "the company"]],
            }
        ]
    }
    distil(ctx, DistilRequest(task.session_id, task.through_seq, answer))
    content = ctx.db.value("SELECT content FROM memories WHERE content LIKE 'The user%'")
    assert content == (
        "The user said the offsite is charged to [REDACTED:private], and [REDACTED:private] "
        "is leaving in March."
    )
    ctx.close()
    shown = _ok("graph", "--all-scopes", "--json") + _ok("export")
    for place in (shown, *(p.read_bytes().decode("utf-8", "replace") for p in _files(home))):
        assert "ACCT-5521" not in place and "rmondroyd" not in place.lower()


def test_a_memory_an_assistant_stores_from_its_session_keeps_no_private_value(
    home: Path,
) -> None:
    """Mid-session (its earlier turns captured by a Stop hook), the assistant stored a
    memory through `memory_store` naming its session, copying the user's ``<private>``
    block: the value was stored bare. A memory stored from a session hides what that
    session's captures hid; one stored from no session is as given."""
    ctx = Context(load_settings(overrides={"llm": "none"}), embedder=HashEmbedder())
    said = {"role": "user", "content": "Note my badge. <private>badge BDG-40417</private>"}
    capture(ctx, source(json.dumps(said)), IngestOptions(session_id="badge"))
    asked = RememberRequest(
        "The user's badge is BDG-40417", tags=("BDG-40417",), session_id="badge"
    )
    stored = remember(ctx, asked).memory
    assert stored.content == "The user's badge is [REDACTED:private]"
    assert stored.tags == []  # a tag that was all the value goes
    elsewhere = remember(ctx, RememberRequest("the lobby code is BDG-40417")).memory
    assert elsewhere.content == "the lobby code is BDG-40417"  # no session: as given
    ctx.close()


def test_an_llm_s_extraction_is_scrubbed_too(
    make_ctx, home: Path, ollama_server: FakeOllama, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ctx = make_ctx(llm_url=ollama_server.url)
    texts = [row["text"] for row in CORPUS[:10]]
    ollama_server.chat_fn = lambda messages: (
        _answer(texts) if "durable facts" in messages[0]["content"] else {"decisions": []}
    )
    said = [{"role": "user", "content": "we keep the ops notes in the wiki"}] * 2
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in said))
    report = capture(ctx, source(transcript.read_text()), IngestOptions()).report
    run_session(ctx, report.session_id, report.job_id)
    assert ctx.db.value("SELECT count(*) FROM memories WHERE content LIKE 'The ops notes%'")
    ctx.close()
    _no_secret_anywhere(home)


def test_an_llm_s_import_summary_and_merged_text_are_scrubbed(
    make_ctx, home: Path, ollama_server: FakeOllama, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """An import's summary (abstract, overview, content, tags) and a merge's text came
    from the LLM as written."""
    ctx = make_ctx(
        llm_url=ollama_server.url, extract__chunk_chars=500, maintain__merge_similarity=0.7
    )
    token, hidden = CORPUS[0]["text"], f"<private>{PRIVATE}</private>"  # a secret in its words
    doc = tmp_path / "checklist.md"
    doc.write_text("# Release checklist\n\n" + "Check the smoke tests and the changelog. " * 30)
    summary = {
        "l0_abstract": f"What a release needs: {token}",
        "l1_overview": f"{hidden} The checklist.",
        "l2_content": f"The release checklist, token {token}.",
        "category": "patterns",
        "tags": [token, "release"],
    }
    ollama_server.script_chat(summary)
    assert import_files(ctx, expand([str(doc)]), ImportOptions()).files[0].strategy == "document"
    put(ctx, "The deploy script lives in ops/deploy.sh", 10)
    put(ctx, "The deploy script lives in ops/deploy.sh and needs AWS credentials", 10)
    ollama_server.script_chat({"content": f"Deploy with ops/deploy.sh, key {token} {hidden}"})
    merged = maintain(ctx, MaintainRequest(only="consolidate")).task("consolidate")
    assert merged.counts.get("merged", 0) or merged.changes  # the LLM's text was written
    ctx.close()
    _no_secret_anywhere(home)


def test_the_profile_an_llm_writes_keeps_no_secret(
    make_ctx, home: Path, ollama_server: FakeOllama
) -> None:  # type: ignore[no-untyped-def]
    ctx = make_ctx(llm_url=ollama_server.url)
    remember(ctx, RememberRequest("The user is a backend engineer", category="profile"))
    said = " ".join(CORPUS[0]["text"].split())
    line = {"section": "role", "text": f"Backend engineer. {said} <private>{PRIVATE}</private>"}
    ollama_server.chat_fn = lambda messages: {"lines": [{**line, "notes": [1]}]}
    done = maintain(ctx, MaintainRequest(only="profile")).task("profile")
    assert done.counts["written by the llm"] >= 1
    ctx.close()
    assert "Backend engineer." in _ok("profile", "--all-scopes")
    _no_secret_anywhere(home)


# --- scope: a project's memories stay in their project


def test_one_project_s_profile_never_shows_in_another(tmp_path: Path) -> None:
    """The global profile read every scope, and every project's session start showed it:
    project a's convention was in project b's `memctl profile` and `memctl context`."""
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    rule = f"Always run the {WORD} linter before merging"
    _ok("remember", rule, "--category", "patterns", "--scope", "project", cwd=a)
    _ok("remember", "Bea leads the payments team", "--scope", "global", cwd=a)
    _ok("maintain", cwd=a)
    assert WORD in _ok("profile", cwd=a) and WORD in _ok("context", cwd=a)
    assert WORD not in _ok("profile", cwd=b)
    assert WORD not in _ok("context", cwd=b)
    assert WORD in _ok("profile", "--all-scopes", cwd=b)  # asked for everywhere


def test_one_project_s_graph_never_shows_in_another(tmp_path: Path) -> None:
    """`memctl graph` listed every project's entities and relations, wherever it ran."""
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    _ok("remember", "Alice Hunterton works at Globexcorp", "--scope", "project", cwd=a)
    _ok("remember", "Bea Quillfeather leads the payments team", "--scope", "project", cwd=b)
    assert "Hunterton" in _ok("graph", cwd=a)
    listed = _ok("graph", "--json", cwd=b)
    assert "Hunterton" not in listed and "Quillfeather" in listed
    refused = run_cli("graph", "Hunterton", cwd=b)
    assert refused.returncode != 0 and "no entity named 'Hunterton'" in refused.stderr
    assert "works at → Globexcorp" in _ok("graph", "Hunterton", "--all-scopes", cwd=b)
    assert "Hunterton" in _ok("graph", "--scope", str(a), cwd=b)


def test_recall_tells_no_graph_path_of_another_project(tmp_path: Path) -> None:
    """A two-hop path no candidate states became a result of its own: in project b, recall
    told project a's "Bob works as a nurse" through the graph, with a's memory ids."""
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    for text in ("Bob moved to Berlin in 2020.", "Bob works as a nurse."):
        _ok("remember", text, "--scope", "project", cwd=a)
    for text in ("Berlin has many parks.", "Berlin trains run late on Sundays."):
        _ok("remember", text, "--scope", "project", cwd=b)
    asked = "what work does the person who moved to Berlin do"
    assert "nurse" not in _ok("recall", asked, cwd=b)
    assert "nurse" not in _ok("recall", asked, "--json", cwd=b)
    assert "nurse" in _ok("recall", asked, "--all-scopes", cwd=b)


def test_a_graph_path_result_prints_as_json(ctx: Context) -> None:
    """`recall --json` ended in "internal error: ValueError: zip()" when a graph path's
    result came with two sources (its ``via`` is not a spread path)."""
    for text in ("Bob moved to Berlin in 2020.", "Bob works as a nurse.", "Berlin has parks."):
        remember(ctx, RememberRequest(text))
    run = start(ctx, "what work does the person who moved to Berlin do")
    before = run_stages(run, stages_for(run.params)[: stages_for(run.params).index(graph)])
    seeds = [c for c in before if "parks" in c.memory.content]
    (made,) = [c for c in graph(run, seeds) if is_synthetic(c.memory)]
    shown = Recalled.of(made).to_dict()
    assert shown["graph_path"] is None and "works as → nurse" in shown["content"]


# --- the resident process: gone with its home


def _status(home: Path) -> dict[str, int]:
    """The resident process's counters, asked until it answers: at a load of 30 or more its
    handshake can miss resident.HANDSHAKE_SECONDS, and a missed answer is no finding here."""
    deadline = time.monotonic() + 30.0
    while (answer := resident.tell(home, "status")) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert answer is not None
    return {key: int(answer[key]) for key in ("pid", "served")}


@pytest.fixture
def serving(home: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A resident process of ``home`` that would idle for 5 minutes (its pid)."""
    for name, value in {**ON, "MEMCTL_RECALL_RESIDENT_IDLE": "300"}.items():
        monkeypatch.setenv(name, value)
    _ok("remember", f"the vault combination is {WORD}")
    _ok("daemon", "start")
    yield _status(home)["pid"]
    stop_every_daemon(home)


def test_the_resident_process_exits_when_its_home_is_deleted(home: Path, serving: int) -> None:
    shutil.rmtree(home)
    assert gone(serving)


def test_the_resident_process_exits_when_its_home_is_replaced(home: Path, serving: int) -> None:
    home.rename(home.with_name("moved"))
    home.mkdir()
    assert gone(serving)
    assert WORD not in _ok("recall", WORD)  # the new home's: nothing


def test_the_resident_process_answers_nothing_it_was_told_to_forget(
    home: Path, serving: int
) -> None:
    served = _status(home)["served"]
    found = json.loads(_ok("recall", WORD, "--json"))["results"]
    assert _status(home)["served"] > served  # it answered
    _ok("delete", found[0]["id"], "--permanent")
    assert json.loads(_ok("recall", WORD, "--json"))["results"] == []
    assert "combination" not in _ok("recall", WORD, "--sessions", "--all-scopes")


# --- identity files: what memctl writes about the user


def test_identity_files_show_no_secret_and_init_s_template_goes_with_uninstall(
    tmp_path: Path,
) -> None:
    """The identity the user wrote is scrubbed in every session start; `uninstall
    --project --purge` left the project's `.memctl/identity.md` that `init` wrote."""
    user, project = tmp_path / "user", _project(tmp_path / "repo")
    env = {"HOME": str(user), "PATH": "/usr/bin:/bin", "MEMCTL_HOME": ""}
    done = run_cli("init", "--project", "--force", "--tool", "claude-code", env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    assert (project / ".memctl" / "identity.md").is_file()
    mine = user / ".local" / "share" / "memctl" / "identity.md"
    token = CORPUS[0]["text"]
    mine.write_text(f"I am Dana. <private>{PRIVATE}</private> My token: {token}\n")
    start = run_cli("context", env=env, cwd=project)
    assert "I am Dana" in start.stdout
    assert PRIVATE not in start.stdout + start.stderr
    assert CORPUS[0]["secret"] not in start.stdout + start.stderr
    done = run_cli("uninstall", "--project", "--purge", "--yes", env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    assert not (project / ".memctl").exists() and not mine.exists()
    assert sorted(p.name for p in project.iterdir()) == [".git"]


@pytest.mark.fresh
def test_uninstall_keeps_a_project_identity_someone_wrote_in(tmp_path: Path) -> None:
    user, project = tmp_path / "user", _project(tmp_path / "repo")
    env = {"HOME": str(user), "PATH": "/usr/bin:/bin", "MEMCTL_HOME": ""}
    assert run_cli("init", "--project", "--force", env=env, cwd=project).returncode == 0
    written = project / ".memctl" / "identity.md"
    written.write_text("Payments service; never edit migrations in place.\n")
    assert run_cli("uninstall", "--project", env=env, cwd=project).returncode == 0
    assert written.read_text() == "Payments service; never edit migrations in place.\n"


# --- sync: a redacted value leaves the team's repository at the next sync


def test_a_redacted_name_leaves_the_sync_repository_and_its_triples(tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    ctx = machine(tmp_path, "laptop", remote)
    sync_api.init(ctx, str(remote))
    shared(ctx, "Bea Quillfeather leads the payments team at Globexcorp")
    sync_api.sync(ctx, sync_api.SyncRequest())
    assert "Quillfeather" in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    redact(ctx, "Quillfeather")
    sync_api.sync(ctx, sync_api.SyncRequest())
    assert "Quillfeather" not in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    assert _files_holding(ctx.settings.home, "Quillfeather") == []
    ctx.close()


# --- the MCP front: answers before the SDK loads, from this project only


def test_the_mcp_front_answers_from_this_project_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    _ok("remember", f"the vault combination is {WORD}", "--scope", "project", cwd=a)
    transcript = tmp_path / "t.jsonl"
    said = [{"role": "user", "content": f"the vault combination is {WORD}"}]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in said))
    _ok("ingest", "--transcript", str(transcript), cwd=a)
    fake = tmp_path / "fake-sdk" / "mcp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(HANGING_SDK)  # the front answers every search
    monkeypatch.chdir(b)
    server = Server({"PYTHONPATH": str(fake.parent)})
    try:
        server.send(0, "initialize", HANDSHAKE)
        server.send(None, "notifications/initialized")
        server.send(1, "tools/call", search(WORD))
        server.send(2, "tools/call", {"name": "session_search", "arguments": {"query": WORD}})
        server.send(3, "tools/call", search(WORD, all_scopes=True))
        everywhere = {"query": WORD, "all_scopes": True}
        server.send(4, "tools/call", {"name": "session_search", "arguments": everywhere})
        found = server.answers(1, 2, 3, 4)
    finally:
        server.stop(hanging=True)
    assert found[1]["result"]["structuredContent"]["results"] == []
    assert found[2]["result"]["structuredContent"]["matches"] == []
    for asked in (3, 4):  # asked for everywhere
        assert WORD in json.dumps(found[asked]["result"]["structuredContent"])


# --- a long-lived MCP server forgets what another process forgot


async def _mcp_forgets(home: Path) -> tuple[str, str, str, list[str]]:
    """(a search before, the delete's output, a search after, the files still holding
    the word while the server runs), in one MCP session."""
    params = stdio(home, Path.cwd(), "llm=none", "embedder=hash", "recall.message_vectors=true")
    async with Client(params) as client:
        stored = await client.call_tool("memory_store", {"text": f"the vault opens with {WORD}"})
        memory_id = str((stored.structured_content or {})["id"])
        before = await client.call_tool("memory_search", {"query": "vault opens"})
        deleted = run_cli("delete", memory_id, "--permanent")
        after = await client.call_tool("memory_search", {"query": "vault opens"})
        holding = _files_holding(home, WORD)
    return str(before.structured_content), deleted.stdout, str(after.structured_content), holding


def test_a_running_mcp_server_answers_nothing_another_process_forgot(home: Path) -> None:
    before, deleted, after, holding = anyio.run(_mcp_forgets, home)
    assert WORD in before and "permanently deleted" in deleted
    assert WORD not in after
    assert holding == []  # its open connection kept no page of it in the WAL


def test_a_client_of_another_home_reaching_the_socket_gets_its_own_home_s_answer(
    home: Path, serving: int, tmp_path: Path
) -> None:
    """Another home's client led to this resident process (its socket hard-linked into
    that home) is answered from its own home: a child reads nothing but the client's."""
    other = tmp_path / "other"
    _ok("--home", str(other), "remember", "the other home deploys with make ship")
    (other / resident.DIRECTORY).mkdir(mode=0o700)
    socket_file = resident.DIRECTORY + "/" + resident.SOCKET
    os.link(home / socket_file, other / socket_file)
    served = _status(home)["served"]
    answer = _ok("--home", str(other), "recall", WORD, "--all-scopes", "--json")
    assert _status(home)["served"] > served  # this one answered
    assert WORD not in json.dumps(json.loads(answer)["results"])
    assert "make ship" in _ok("--home", str(other), "recall", "make ship", "--json")


# --- a session forgotten: no byte of it anywhere, whatever was made from it


def test_a_forgotten_session_leaves_nothing_of_what_was_made_from_it(
    home: Path, tmp_path: Path
) -> None:
    """A session distilled by the host (a fact with questions and a triple), read into the
    graph and the profile, its messages embedded, backed up and shared through sync:
    after `sessions forget` and a sync, its word is in no file of the data directory, not
    at the sync remote's head, and not in `graph`, `profile` or `recall`."""
    word = "zanzibarquux"  # the questions' stemmer keeps it whole, as the bytes hold it
    remote = bare_repo(tmp_path)
    _ok("sync", "init", str(remote))
    settings = load_settings(overrides={"llm": "none", "ingest.host_distil": True})
    ctx = Context(settings, embedder=HashEmbedder())
    said = [
        claude_record("user", f"The payments queue is called {word}; keep that name.", 0),
        claude_record("assistant", f"Noted: the queue stays {word}.", 1),
        claude_record("user", "We always deploy with make ship, never by hand.", 2),
    ]
    text = "\n".join(json.dumps(line) for line in said)
    report = capture(ctx, source(text), IngestOptions()).report
    run_session(ctx, report.session_id, report.job_id)
    (task,) = pending(ctx, PendingRequest()).batches
    fact = {
        "content": f"The payments queue is called {word}.",
        "category": "patterns",
        "source_message": 1,
        "questions": [f"what is the payments queue {word} called?"],
        "triples": [["payments queue", "is called", word.capitalize()]],
    }
    distil(ctx, DistilRequest(task.session_id, task.through_seq, {"facts": [fact]}))
    sync_api.promote(ctx, sync_api.ShareRequest(every=True))
    sync_api.sync(ctx, sync_api.SyncRequest())
    ctx.close()
    flags = ["-c", "recall.message_vectors=true", "-c", "maintain.backup_every_hours=0"]
    _ok(*flags, "maintain")
    asked = ("graph", "--all-scopes"), ("profile", "--all-scopes"), ("recall", word, "--all-scopes")
    assert all(word in _ok(*command).lower() for command in asked)
    head = ("--git-dir", str(remote), "grep", "-h", "-i", "-e", word, "HEAD")
    assert word in git(*head).lower()
    assert _files_holding(home, word)

    _ok("sessions", "forget", report.session_id, "--yes")
    _ok("sync")
    assert [command for command in asked if word in _ok(*command).lower()] == []
    assert _files_holding(home, word) == [] and _files_holding(home, word.capitalize()) == []
    assert subprocess.run(["git", *head], capture_output=True).returncode == 1  # no match


async def _store_asked(home: Path, texts: list[str]) -> list[str]:
    """memory_store through a real MCP session, each text's secret in its questions."""
    params = stdio(home, Path.cwd(), "llm=none", "embedder=hash", "remember.question_floor=0")
    said = []
    async with Client(params) as client:
        for n, text in enumerate(texts):
            flat = " ".join(text.split())
            asked = [f"what did the ops notes say: {flat}"[:300], f"<private>{PRIVATE}</private>?"]
            answer = await client.call_tool(
                "memory_store", {"text": f"Ops note {n}: {flat}", "questions": asked}
            )
            said.append(str(answer.structured_content))
    return said


def test_memory_store_s_questions_keep_no_secret(home: Path) -> None:
    texts = [row["text"] for row in CORPUS]
    said = anyio.run(_store_asked, home, texts)
    kept = [answer for answer in said if "'kept': ['what did the ops notes say" in answer]
    assert len(kept) > len(texts) // 2  # the questions were stored, their secrets out
    for place in (*said, *(p.read_bytes().decode("utf-8", "replace") for p in _files(home))):
        assert [s for s in SECRETS if s in place] == []
        assert PRIVATE not in place


def test_the_resident_process_answers_from_the_client_s_project_only(
    home: Path, serving: int, tmp_path: Path
) -> None:
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    _ok("remember", "Project a ships with make heron-release", "--scope", "project", cwd=a)
    served = _status(home)["served"]
    assert "heron-release" in _ok("recall", "heron-release", cwd=a)
    assert json.loads(_ok("recall", "heron-release", "--json", cwd=b))["results"] == []
    assert _status(home)["served"] >= served + 2  # both through it


# --- a transcript's path: a folder named after a token stays out of the store

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
TRANSCRIPTS = Path(__file__).resolve().parent / "fixtures" / "transcripts"
# No detached worker: one still reading the store when `maintain` rewrites it keeps the old
# pages in the file (``forget.compact``: the WAL cannot be emptied); likely what a clean
# clone's run at load 20-40 saw once (the token left in memctl.db).
NO_WORKER = ("-c", "ingest.spawn_worker=false")


def test_a_token_in_a_transcript_s_folder_stays_out_of_the_store(
    home: Path, tmp_path: Path
) -> None:
    import re
    import sqlite3

    folder = tmp_path / TOKEN
    folder.mkdir()
    transcript = folder / "t.jsonl"
    text = (TRANSCRIPTS / "claude-code.jsonl").read_text(encoding="utf-8")
    transcript.write_text(re.sub(r'"cwd": ?"[^"]*"', f'"cwd": "{folder}"', text))
    assert " 9 new" in " ".join(_ok(*NO_WORKER, "ingest", "--transcript", str(transcript)).split())
    shown = json.loads(_ok("sessions", "show", "3d1c9f2e", "--json"))["session"]
    assert shown["source"] == f"{tmp_path}/[REDACTED:github-token]/t.jsonl"
    assert shown["cwd"] == f"{tmp_path}/[REDACTED:github-token]"
    assert _files_holding(home, TOKEN) == []
    # the read mark still finds its transcript: only what was added is read
    again = " ".join(_ok(*NO_WORKER, "ingest", "--transcript", str(transcript)).split())
    assert "0 messages read, 0 new, 9 stored in all" in again
    said = _ok(*NO_WORKER, "ingest", "--transcript", str(transcript), "--json")
    assert json.loads(said)["source"] == shown["source"] and TOKEN not in said  # as stored
    # a store an older memctl left, its mark under the path itself: m022_paths digests it
    with sqlite3.connect(home / "memctl.db") as old:
        old.execute("UPDATE transcript_reads SET path = ?", (str(transcript),))
        old.execute("PRAGMA user_version = 21")
    old.close()
    assert _files_holding(home, TOKEN) != []  # the test sees it before
    again = " ".join(_ok(*NO_WORKER, "ingest", "--transcript", str(transcript)).split())
    assert "0 messages read, 0 new, 9 stored in all" in again
    _ok("maintain", "--only", "upkeep")  # the old rows' pages and WAL rewritten
    assert _files_holding(home, TOKEN) == []
