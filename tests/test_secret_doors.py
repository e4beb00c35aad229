"""Issue 22's and issue 34's corpus of secret shapes through every door (remember,
import of Markdown, JSONL and memctl's YAML, ingest, the capture hook, MCP, sync), then
every place a secret could land is read back: the database with its WAL (and every
other file in the data directory, logs included), an export, the sync repository's
whole history, recall, the session-start block and, for the MCP door, MCP search. Real
processes for the hook and MCP doors, a real bare repository for sync (whose files
holding a secret are turned away whole)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memctl.api import ingest as api
from memctl.api import sync as sync_api
from memctl.api.ingest import ImportRequest, IngestRequest
from memctl.api.memory import RememberRequest, remember
from memctl.api.recall import RecallRequest, SessionStartRequest, recall, session_start
from memctl.context import Context
from memctl.errors import UsageError
from memctl.memories.privacy import scrub
from memctl.sync import layout
from tests.conftest import memctl_command, run_cli, server_env
from tests.syncing import bare_repo, history, plant

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "secret_corpus.jsonl")
    .read_text()
    .splitlines()
    if '"name"' in line
]
TEXTS = [row["text"] for row in CORPUS]
# Questions about each text, in its words but the secret's (an answer may echo its query)
QUERIES = [scrub(text)[0][:80] for text in TEXTS]


def _transcript(path: Path) -> Path:
    """A Claude Code transcript saying every shape, and a GitHub token cut over two
    messages with words between."""
    token = "ghp_Qw8Er1Ty2Ui3Op4As5Df6Gh7Jk8Lz9Xc0Vb1N"
    said = [*TEXTS, f"ok here: {token[:16]}", f"sorry, cut off, the rest: {token[16:]}"]
    lines = [
        {"type": "user", "sessionId": "s1", "message": {"role": "user", "content": text}}
        for text in said
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _hook(ctx: Context, work: Path) -> None:
    payload = {"session_id": "s1", "transcript_path": str(_transcript(work / "t.jsonl"))}
    done = run_cli("hook", "claude-code", "SessionEnd", input=json.dumps(payload))
    assert done.returncode == 0, done.stderr
    api.drain_jobs(ctx, "ingest", print)


def _ingest(ctx: Context, work: Path) -> None:
    api.ingest(ctx, IngestRequest(str(_transcript(work / "t.jsonl")), session_id="s2"))
    api.drain_jobs(ctx, "ingest", print)


def _import(ctx: Context, work: Path) -> None:
    doc = work / "notes.md"
    doc.write_text("# Ops notes\n\n" + "\n\n".join(TEXTS) + "\n")
    jsonl = work / "m.jsonl"
    jsonl.write_text("".join(json.dumps({"content": t, "tags": [t]}) + "\n" for t in TEXTS))
    yamls = []
    for n, text in enumerate(TEXTS):
        yamls.append(work / f"m{n}.yaml")
        yamls[-1].write_text(f"id: d{n:031x}\ncontent: {json.dumps(text)}\ntags: [ops]\n")
    paths = (str(doc), str(jsonl), *map(str, yamls))
    api.import_files(ctx, api.plan_import(ImportRequest(paths, force=True)))


def _remember(ctx: Context, work: Path) -> None:
    for text in TEXTS:
        try:
            remember(ctx, RememberRequest(text, tags=("ops",)))
        except UsageError:
            pass  # all of it was secret: refused


async def _mcp_session(home: Path) -> list[str]:
    # the server would start a resident process
    env = server_env(home, MEMCTL_EMBEDDER="hash", MEMCTL_RECALL_RESIDENT="off")
    argv = ["-c", "ingest.spawn_worker=false", "-c", "llm=none", "mcp"]
    command, *args = memctl_command(argv, env, mcp=True)  # forked: the SDK loaded once
    params = StdioServerParameters(command=command, args=args, env=env)
    said: list[str] = []
    async with Client(params) as client:
        for text in TEXTS:
            said.append(str(await client.call_tool("memory_store", {"text": text})))
        said.append(
            str(
                await client.call_tool(
                    "memory_ingest",
                    {"text": "\n".join(f"user: {t}" for t in TEXTS if "\n" not in t)},
                )
            )
        )
        for query in QUERIES:
            found = await client.call_tool("memory_search", {"query": query})
            said.append(str(found.structured_content))
    return said


def _sync_file(ctx: Context, work: Path) -> None:
    remote = Path(ctx.settings.sync_remote)
    files = {}
    for n, text in enumerate(TEXTS):
        memory_id = f"c{n:031x}"
        body = (
            f"id: {memory_id}\nstate: active\nupdated_at: '2026-01-01T00:00:00.000Z'\n"
            f"content: {json.dumps(text)}\n"
        )
        files[layout.memory_path("global", memory_id, "e" * 16).encode()] = body.encode()
    plant(remote, files)
    refused = sync_api.sync(ctx, sync_api.SyncRequest()).bad_files
    # each file is read and turned away for what it holds (not for its name or shape)
    assert len(refused) == len(TEXTS) and all(why.startswith("holds ") for _, why in refused)


# Doors that store each text as a memory at once (the others keep sessions)
STORING = ("import", "remember")
DOORS: dict[str, Callable[[Context, Path], None]] = {
    "hook": _hook,
    "ingest": _ingest,
    "import": _import,
    "remember": _remember,
    "sync-file": _sync_file,
}


def _places(ctx: Context, home: Path, remote: Path, theirs: bool = False) -> dict[str, str]:
    """What memctl wrote; with ``theirs`` (the secrets came in another host's files) the
    sync repository and its clone are that host's writing, not memctl's, and left out."""
    sync_api.sync(ctx, sync_api.SyncRequest())
    files = [
        p
        for p in home.rglob("*")
        if p.is_file() and "models" not in p.parts and not (theirs and "sync" in p.parts)
    ]
    recalled = [
        json.dumps(
            [r.to_dict() for r in recall(ctx, RecallRequest(q, all_scopes=True)).result.results]
        )
        for q in QUERIES
    ]
    return {
        "db, WAL, logs and every file of the data directory": b"".join(
            p.read_bytes() for p in files
        ).decode("utf-8", "replace"),
        "export": "\n".join(api.export(ctx)),
        "sync repository": "" if theirs else history(remote),
        "recall": "\n".join(recalled),
        "context block": session_start(ctx, SessionStartRequest(scope="global")),
    }


def _leaks(places: dict[str, str]) -> list[str]:
    return [
        f"{row['name']} in {place}"
        for row in CORPUS
        for place, text in places.items()
        if row["secret"] in text
    ]


@pytest.mark.parametrize("door", sorted(DOORS))
def test_no_secret_of_the_corpus_lands_anywhere_through_a_door(
    door: str, make_ctx, home: Path, tmp_path: Path
) -> None:
    remote = bare_repo(tmp_path)
    ctx = make_ctx(ingest__spawn_worker=False, sync__include="all")
    sync_api.init(ctx, str(remote))
    ctx = make_ctx(ingest__spawn_worker=False, sync__include="all", sync__remote=str(remote))
    work = tmp_path / "work"
    work.mkdir()
    DOORS[door](ctx, work)
    places = _places(ctx, home, remote, theirs=door == "sync-file")
    assert _leaks(places) == []
    if door in STORING:  # the door let the texts in, with their secrets redacted
        assert places["export"].count("[REDACTED") >= len(TEXTS) - 1


def test_no_secret_of_the_corpus_lands_anywhere_through_mcp(
    make_ctx, home: Path, tmp_path: Path
) -> None:
    remote = bare_repo(tmp_path)
    ctx = make_ctx(ingest__spawn_worker=False, sync__include="all")
    sync_api.init(ctx, str(remote))
    said = anyio.run(_mcp_session, home)
    ctx = make_ctx(ingest__spawn_worker=False, sync__include="all", sync__remote=str(remote))
    api.drain_jobs(ctx, "ingest", print)
    places = _places(ctx, home, remote)
    places["MCP answers (store, ingest, search)"] = "\n".join(said)
    assert _leaks(places) == []
