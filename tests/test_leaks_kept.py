"""What memctl kept after the user took it out (a third pass over the surfaces the brief
says leak): a memory deleted for good leaves no tag in its event log; an imported line's
ids, scope and dates hold no secret. Real SQLite files and real `memctl` processes."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import anyio
import pytest
from mcp import Client

from memctl.api import memory as memory_api
from memctl.api import sync as sync_api
from memctl.config.scope import keyed_scope
from memctl.context import Context
from memctl.ingest.graph import index_pending
from memctl.maintain.forgetting import forget_session
from memctl.model import Memory
from memctl.store.database import Database
from memctl.store.graph import stated_by
from memctl.store.rescrub import RESCRUBBED_WITH
from memctl.sync import folders, layout, outgoing, pipeline
from memctl.sync.records import import_lines
from tests.conftest import files_holding, run_cli, said_in_session
from tests.ingest.test_compaction import ingest_file
from tests.ingesting import claude_record
from tests.integrations.test_integrations_mcp import stdio
from tests.memories.test_forget_everywhere import _files_holding
from tests.syncing import bare_repo, git, history, machine, shared
from tests.test_secret_doors import CORPUS

TAG = "acme-layoffs-q3"  # a tag naming what the memory was about
PRIVATE = "zebrafinch-private-plan"


def _ok(*args: str, input: str | None = None) -> str:
    done = run_cli(*args, input=input)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_memory_deleted_for_good_leaves_no_tag_in_its_events(home: Path) -> None:
    """An edit's event records the tags before and after; a permanent delete blanked the
    texts there and left the tags, so the database and every backup kept them."""
    memory = _ok("remember", "Talk to HR before Friday about the reorg.", "-t", TAG).strip()
    _ok("update", memory, "-t", "hr")
    _ok("maintain")  # a backup holding the edit
    assert _files_holding(home, TAG)
    _ok("delete", memory, "--permanent")
    assert _files_holding(home, TAG) == []
    assert TAG not in _ok("events", "--json")


def test_an_import_line_with_a_secret_in_an_id_scope_or_date_is_refused(
    home: Path, tmp_path: Path
) -> None:
    """memctl's own JSONL keeps a record's ids, scope and dates as written: a secret in
    one reached the store (and its scope counts, relations, events), and a date that was
    none made `memctl list` and `recall` fail with the value in the error."""
    secret = next(row["secret"] for row in CORPUS if row["name"] == "github")
    token = f"ghp_{secret}"
    lines = [
        {"content": "the billing cron runs nightly", "scope": f"team-{token}"},
        {"content": "the staging host is blue", "id": token},
        {"content": "the release train leaves on Tuesdays", "created_at": f"2024 {token}"},
        {"content": "the old deploy path", "superseded_by": token, "state": "superseded"},
        {"content": "the API is versioned in the path", "updated_at": "last week"},
        {"content": "the linter runs before every commit"},
    ]
    given = tmp_path / "memories.jsonl"
    given.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = run_cli("import", str(given), "--json")
    assert done.returncode == 0, done.stderr
    errors = json.loads(done.stdout)["errors"]
    assert [e.split(": ", 1)[1] for e in errors] == [
        'line 1: "scope" holds what looks like a secret (github-token)',
        'line 2: "id" holds what looks like a secret (github-token)',
        'line 3: "created_at" must be an ISO 8601 date and time',
        'line 4: "superseded_by" holds what looks like a secret (github-token)',
        'line 5: "updated_at" must be an ISO 8601 date and time',
    ]
    assert secret not in done.stdout + done.stderr
    assert _files_holding(home, secret) == []
    listed = _ok("list", "--json")  # every memory's dates read back
    assert "linter" in listed and "release train" not in listed and "last week" not in listed


def _plain(scope: str) -> str:
    """A folder's scope as an older memctl named it in the repository: in clear, as a
    plain digest (``local:`` and 16 digits) or, with no remote, its ``path:`` digest."""
    return layout.plain_shared_scope(scope) if scope.startswith("file:") else scope


def _folder_scopes(tmp_path: Path) -> tuple[str, str]:
    """A project cloned from a folder, and one with no remote as an older memctl named it
    (``config.scope.folder_scope``: a plain SHA-256 of its folder; a store keys it)."""
    folder = f"{tmp_path}/home/alice/acme-layoffs"
    digest = hashlib.sha256(folder.encode()).hexdigest()[: layout.LOCAL_DIGITS]
    return f"file:{tmp_path}/home/alice/clients-acme/app.git", f"path:{digest}"


def _sent_as_before(ctx: Context, scopes: tuple[str, ...]) -> Callable[[str, bytes], str]:
    """``layout.shared_scope`` as an older memctl had it: the repository's name of each of
    ``scopes`` (as that memctl named them) for the scope ``ctx``'s store has for it."""
    named = {keyed_scope(s, ctx.settings.scope_key): _plain(s) for s in scopes}
    return lambda scope, key: named.get(scope, scope)


def test_a_project_named_by_a_folder_reaches_teammates_by_no_name_a_path_can_be_tried_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project cloned from a folder (``git clone ~/clients/acme.git``: the scope
    ``file:<that path>``) went to the team's repository as a plain SHA-256 of that
    scope, and one with no remote as its ``path:`` scope, a plain SHA-256 of its folder:
    a teammate confirmed a guessed folder (``/home/alice/acme-layoffs``) by hashing it.
    Both go as an HMAC under the home's key; a file of such a project comes back into it
    here, one a teammate's older memctl writes under the plain name too."""
    remote = bare_repo(tmp_path)
    scopes = _folder_scopes(tmp_path)
    laptop, desk, teammate = (machine(tmp_path, n, remote) for n in ("laptop", "desk", "bob"))
    for ctx in (laptop, desk, teammate):
        sync_api.init(ctx, str(remote))
    memories = [
        shared(laptop, f"the acme job {n} runs weekly", scope=s) for n, s in enumerate(scopes)
    ]
    here = [m.scope for m in memories]  # the no-remote one keyed with the laptop's key
    assert here[1] != scopes[1] and here[1] == keyed_scope(scopes[1], laptop.settings.scope_key)
    for ctx in (laptop, desk, teammate):
        sync_api.sync(ctx, sync_api.SyncRequest())
    said = history(remote) + _paths(remote)
    assert [quote(_plain(s)) in said for s in (*scopes, *here)] == [False] * 4
    assert "clients-acme" not in said
    for memory in memories:  # another home's key: the project is not known there by name
        assert re.fullmatch(r"local:[0-9a-f]{32}", _scope_of(teammate, memory.id))
        assert _scope_of(desk, memory.id) == _scope_of(teammate, memory.id)
    memory_api.update(desk, memory_api.UpdateRequest(memories[0].id, "the acme job runs daily"))
    sync_api.sync(desk, sync_api.SyncRequest())
    sync_api.sync(laptop, sync_api.SyncRequest())
    assert [_scope_of(laptop, m.id) for m in memories] == here  # left in place
    with monkeypatch.context() as older:  # a teammate's older memctl, the project its own
        older.setattr(outgoing, "shared_scope", _sent_as_before(desk, scopes))
        theirs = [
            shared(desk, f"the acme repo {n} uses tabs", scope=s) for n, s in enumerate(scopes)
        ]
        sync_api.sync(desk, sync_api.SyncRequest())
    sync_api.sync(laptop, sync_api.SyncRequest())
    assert _scope_of(laptop, theirs[0].id) == scopes[0]
    assert _scope_of(laptop, theirs[1].id) == here[1]  # the same folder: the same project
    for ctx in (laptop, desk, teammate):
        ctx.close()


def test_a_teammate_edits_a_project_an_older_memctl_sent_under_its_path_scope_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``path:`` scope an older memctl sent is the other machine's folder: a teammate who
    took it in under that name and edits it writes the file there, not under a name of
    their own key's (the memory would leave the sender's project)."""
    remote = bare_repo(tmp_path)
    laptop, bob = (machine(tmp_path, n, remote) for n in ("laptop", "bob"))
    for ctx in (laptop, bob):
        sync_api.init(ctx, str(remote))
    scope = _folder_scopes(tmp_path)[1]
    with monkeypatch.context() as older:
        older.setattr(outgoing, "shared_scope", _sent_as_before(laptop, (scope,)))
        memory = shared(laptop, "the acme job runs weekly", scope=scope)
        sync_api.sync(laptop, sync_api.SyncRequest())
    assert quote(scope) in _paths(remote)
    sync_api.sync(bob, sync_api.SyncRequest())
    assert _scope_of(bob, memory.id) == keyed_scope(scope, bob.settings.scope_key)  # not plain
    memory_api.update(bob, memory_api.UpdateRequest(memory.id, "the acme job runs daily"))
    sync_api.sync(bob, sync_api.SyncRequest())
    assert [p for p in _paths(remote).split() if memory.id in p and quote(scope) not in p] == []
    sync_api.sync(laptop, sync_api.SyncRequest())
    assert memory_api.get(laptop, memory.id).memory.content == "the acme job runs daily"
    assert _scope_of(laptop, memory.id) == memory.scope
    for ctx in (laptop, bob):
        ctx.close()


def _scope_of(ctx: Context, memory_id: str) -> str:
    return memory_api.get(ctx, memory_id).memory.scope


def _paths(remote: Path) -> str:
    return git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD")


def test_a_folder_an_older_memctl_named_leaves_the_head_at_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By a plain digest, or its ``path:`` scope (in clear before s23: the same prefix
    test, ``layout.FOLDER_SCOPES``): sent once more, under the keyed name."""
    remote = bare_repo(tmp_path)
    laptop = machine(tmp_path, "laptop", remote)
    sync_api.init(laptop, str(remote))
    scopes = _folder_scopes(tmp_path)
    for n, scope in enumerate(scopes):
        shared(laptop, f"the acme job {n} runs weekly", scope=scope)
    with monkeypatch.context() as older:  # as memctl sent it before
        older.setattr(outgoing, "shared_scope", _sent_as_before(laptop, scopes))
        sync_api.sync(laptop, sync_api.SyncRequest())
    with laptop.db.atomic():
        laptop.db.set_meta(pipeline.META_SCOPES, "")  # nor did it mark that it names none
    olds = [quote(_plain(s)) for s in scopes]
    assert [old in _paths(remote) for old in olds] == [True, True]
    assert sync_api.sync(laptop, sync_api.SyncRequest()).went_out["written"] == 2  # once
    assert [old in _paths(remote) for old in olds] == [False, False]
    assert sync_api.sync(laptop, sync_api.SyncRequest()).went_out["written"] == 0
    laptop.close()


def test_a_password_in_a_model_url_is_shown_by_no_command(home: Path, tmp_path: Path) -> None:
    """The Ollama host's credentials were masked in every output; an OpenAI-compatible
    endpoint's were printed whole by every error about it, and both by `config set` and
    `config show` (a bug report's paste)."""
    password = "Velvet-Harbor-91"
    url = f"http://bob:{password}@127.0.0.1:9/v1"
    said = run_cli("config", "set", "openai.base_url", url)
    said2 = run_cli("config", "set", "ollama.host", f"http://bob:{password}@127.0.0.1:9")
    _ok("config", "set", "llm", "openai")
    shown = [run_cli("config", "show"), run_cli("config", "show", "--json")]
    transcript = tmp_path / "t.txt"
    transcript.write_text("user: we deploy with make release\nassistant: noted\n")
    ingested = run_cli("ingest", str(transcript), "--wait")
    assert ingested.returncode == 0, ingested.stderr
    assert "cannot reach an OpenAI-compatible server at http://bob:***@" in ingested.stderr
    for done in (said, said2, *shown, ingested):
        assert done.returncode == 0 and password not in done.stdout + done.stderr
    assert "bob:***@127.0.0.1:9/v1" in shown[0].stdout + shown[1].stdout
    assert password in (home / "config.yaml").read_text()  # the setting works as written
    assert _files_holding(home, password) == ["config.yaml"]


def _captured_by_the_hook(tmp_path: Path, folder: str, session_id: str) -> Path:
    """A Claude Code session in ``folder`` captured by the real SessionEnd hook."""
    where = tmp_path / folder / "app"
    where.mkdir(parents=True)
    transcript = where / "t.jsonl"
    lines = [claude_record("user", "we deploy the shop with make release", 0, session_id)]
    lines.append(claude_record("assistant", "Noted: make release.", 1, session_id))
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    payload = {"session_id": session_id, "transcript_path": str(transcript), "cwd": str(where)}
    payload["hook_event_name"] = "SessionEnd"
    done = run_cli(
        "-c",
        "ingest.spawn_worker=false",
        "hook",
        "claude-code",
        "SessionEnd",
        input=json.dumps(payload),
    )
    assert done.returncode == 0, done.stderr
    return where


def test_the_hooks_pending_mark_goes_with_a_forgotten_session_and_a_redacted_value(
    home: Path, tmp_path: Path
) -> None:
    """A capture hook keeps a mark of each transcript it read (``hooks/pending``), with
    its path and directory as given, to capture it again when it grows. It stayed after
    `sessions forget` (the directory the forgotten session ran in) and `redact` (a token
    in a folder's name); so did the record of the memories the session was given
    (``hooks/injected``) and of the sessions its client process started (``hooks/started``),
    for a week, and the hooks' log naming its transcript."""
    early = tmp_path / "client-quokkaville" / "app" / "t.jsonl"  # the hook before the file
    ended = {"session_id": "cc-forgotten", "transcript_path": str(early)}
    _ok("hook", "claude-code", "SessionEnd", input=json.dumps(ended))
    assert "does not exist" in (home / "logs" / "hooks.log").read_text()
    where = _captured_by_the_hook(tmp_path, "client-quokkaville", "cc-forgotten")
    token = f"ghp_{next(row['secret'] for row in CORPUS if row['name'] == 'github')}"
    _captured_by_the_hook(tmp_path, f"work-{token}", "cc-token")
    assert _files_holding(home, "quokkaville") and _files_holding(home, token)
    memory = run_cli("remember", "the shop's staging host is blue", "--json", cwd=where)
    start = {"session_id": "cc-forgotten", "cwd": str(where), "hook_event_name": "SessionStart"}
    pid = {"CLAUDE_PID": "4242"}  # the client process, whose sessions the hook records
    run_cli(
        "hook",
        "claude-code",
        "SessionStart",
        input=json.dumps(start | {"session_id": "cc-kept"}),
        env=pid,
    )
    given = run_cli("hook", "claude-code", "SessionStart", input=json.dumps(start), env=pid)
    assert "staging host is blue" in given.stdout, given.stderr
    given_to = "hooks/injected/session.cc-forgotten"
    assert given_to in _files_holding(home, json.loads(memory.stdout)["id"])
    assert "hooks/started/4242" in _files_holding(home, "cc-forgotten")
    forgot = json.loads(_ok("sessions", "forget", "cc-forgotten", "--yes", "--json"))
    assert forgot["pending_dropped"] == 1
    assert _files_holding(home, "quokkaville") == []
    assert not (home / given_to).exists()
    assert not [f for f in _files_holding(home, "cc-forgotten") if f.startswith("hooks/")]
    assert (home / "hooks/started/4242").read_text() == "cc-kept\n"
    # resumed, it is given memories once each as before, and no record names it again
    again = run_cli("hook", "claude-code", "SessionStart", input=json.dumps(start), env=pid)
    assert "staging host is blue" in again.stdout, again.stderr
    prompt = {"session_id": "cc-forgotten", "cwd": str(where), "prompt": "staging host?"}
    asked = run_cli("hook", "claude-code", "UserPromptSubmit", input=json.dumps(prompt))
    assert "staging host is blue" not in asked.stdout, asked.stderr  # given at its start
    ended = {**ended, "transcript_path": str(where / "t.jsonl"), "cwd": str(where)}
    _ok(
        "-c",
        "ingest.spawn_worker=false",
        "hook",
        "claude-code",
        "SessionEnd",
        input=json.dumps(ended),
    )  # its capture stores nothing, and marks nothing pending
    assert not [f for f in _files_holding(home, "cc-forgotten") if f.startswith("hooks/")]
    assert _files_holding(home, "quokkaville") == []
    said = _ok("redact", token)
    assert "1 pending transcript mark removed" in said
    assert _files_holding(home, token) == []


def test_a_project_s_shared_files_name_no_path_of_the_user(tmp_path: Path) -> None:
    """`init --project` and `install --project` write files a team commits (`.mcp.json`,
    `opencode.json`, `.cursor/mcp.json`, `.codex/config.toml`, `.claude/settings.json`);
    each named memctl by its absolute path (`/home/alice/.local/bin/memctl`): the user's
    name for every teammate, and a command that is not theirs. With memctl on PATH they
    name `memctl`; uninstall still finds what it wrote."""
    user, project = tmp_path / "alice", tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    bin_dir = str(Path(sys.executable).parent)
    env = {"HOME": str(user), "PATH": f"{bin_dir}:/usr/bin:/bin", "MEMCTL_HOME": ""}
    for args in (("init", "--project"), ("install", "claude-code", "--project")):
        done = run_cli(*args, "--force", env=env, cwd=project)
        assert done.returncode == 0, done.stderr
    written = [p for p in project.rglob("*") if p.is_file() and ".git" not in p.parts]
    assert len(written) >= 6
    for path in written:
        assert bin_dir not in path.read_text() and str(user) not in path.read_text(), path
    assert (
        '"command": "memctl hook claude-code SessionStart"'
        in (project / ".claude" / "settings.json").read_text()
    )
    done = run_cli("uninstall", "--project", "--yes", env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in project.iterdir()) == [".git"]


def test_an_error_never_repeats_a_secret_it_was_given(home: Path) -> None:
    """An error quoting what it was given (a category, an id, a setting's value) printed a
    token or private text whole on stderr, which hooks, cron's log and bug reports keep."""
    token = f"ghp_{next(row['secret'] for row in CORPUS if row['name'] == 'github')}"
    for args in (
        ("remember", "the build runs nightly", "--category", token),
        ("get", token),
        ("-c", f"recall.limit={token}", "recall", "build"),
        ("remember", "the build runs nightly", "--category", f"<private>{PRIVATE}</private>"),
    ):
        done = run_cli(*args)
        assert done.returncode != 0 and "memctl: error: " in done.stderr, args
        assert token not in done.stderr and PRIVATE not in done.stderr, done.stderr
        assert "[REDACTED" in done.stderr


def test_an_mcp_tool_s_error_never_repeats_a_secret_it_was_given(home: Path) -> None:
    """A tool's error goes to the assistant, whose transcript and logs keep it."""
    token = f"ghp_{next(row['secret'] for row in CORPUS if row['name'] == 'github')}"
    said = anyio.run(_tool_errors, home, token)
    assert len(said) == 2 and all("[REDACTED" in s for s in said), said
    assert [s for s in said if token.lower() in s.lower() or PRIVATE in s] == []


async def _tool_errors(home: Path, token: str) -> list[str]:
    params = stdio(home, Path.cwd(), "llm=none", "embedder=hash")
    said = []
    async with Client(params) as client:
        for arguments in ({"id": token}, {"id": f"<private>{PRIVATE}</private>"}):
            answer = await client.call_tool("memory_get", arguments)
            assert answer.is_error
            said.append(str(answer.content))
    return said


def test_a_warning_never_repeats_a_secret_it_quotes(home: Path, tmp_path: Path) -> None:
    """A warning quoting a file's name and a link's target (an import passing over a
    broken link) printed a token or private text whole on stderr, which cron's log keeps;
    the import's table and its JSON named each file as found (a token in its name)."""
    token = f"ghp_{next(row['secret'] for row in CORPUS if row['name'] == 'github')}"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "build.md").write_text("the build runs nightly on the ci box\n", encoding="utf-8")
    (notes / f"{token}.md").symlink_to(f"/nowhere/<private>{PRIVATE}</private>")
    (notes / f"deploy-{token}.md").write_text("we deploy with make ship\n", encoding="utf-8")
    done = run_cli("-c", "llm=none", "import", str(notes))
    assert done.returncode == 0, done.stderr
    assert "memctl: warning: " in done.stderr and "left out" in done.stderr
    assert token not in done.stderr and PRIVATE not in done.stderr, done.stderr
    assert "[REDACTED" in done.stderr
    assert "2 memories imported" in done.stdout and "[REDACTED" in done.stdout
    again = run_cli("-c", "llm=none", "import", str(notes), "--json")
    statuses = [f["status"] for f in json.loads(again.stdout)["files"]]
    assert statuses == ["unchanged", "unchanged", "skipped"]
    for said in (done.stdout, again.stdout, again.stderr):
        assert token not in said and PRIVATE not in said, said


def test_a_forgotten_import_leaves_no_path_of_its_file(home: Path, tmp_path: Path) -> None:
    """`sessions forget` of an import blanked its session's source, and kept its file's
    path in the import's record and the events of what it made (``file:<path>``): a file
    named after what it held ("merger-with-globex.md") stayed named."""
    notes = tmp_path / "merger-with-globex.md"
    notes.write_text("# Plan\nwe move the billing cluster to the new region\n", "utf-8")
    _ok("-c", "llm=none", "import", str(notes))
    (session,) = [r["session_id"] for r in json.loads(_ok("runs", "--json"))]
    assert _files_holding(home, "globex") == ["memctl.db"]
    forgot = json.loads(_ok("sessions", "forget", session, "--yes", "--json"))
    assert len(forgot["memories"]) == 1
    assert _files_holding(home, "globex") == []
    again = json.loads(_ok("-c", "llm=none", "import", str(notes), "--json"))["files"]
    assert [f["status"] for f in again] == ["unchanged"] and again[0]["forgotten"]


def test_a_pending_transcript_that_fails_is_named_without_the_token_in_its_path(
    home: Path, tmp_path: Path
) -> None:
    """`maintain` captures what the hooks left pending; a failure named the transcript's
    path whole in its notes, which its run keeps in the store and prints (the worker's
    log, too)."""
    token = f"ghp_{next(row['secret'] for row in CORPUS if row['name'] == 'github')}"
    where = _captured_by_the_hook(tmp_path, f"work-{token}", "cc-token")
    (where / "t.jsonl").unlink()
    (where / "t.jsonl").mkdir()  # it "grew", and cannot be read
    done = run_cli("maintain", "--only", "jobs", "--json")
    assert done.returncode == 0 and "failed" in done.stdout, done.stderr
    assert token not in done.stdout + done.stderr
    holding = _files_holding(home, token)  # the mark keeps the path, to find the transcript
    assert len(holding) == 1 and holding[0].startswith("hooks/pending/"), holding


def test_a_hook_that_finds_no_transcript_keeps_no_token_its_session_id_held(home: Path) -> None:
    # `install status` reads why a hook captured nothing from hooks/missed/: the reason
    # quoted the session id the client sent, a token in it whole
    from memctl.config import load_settings
    from memctl.integrations.hooks import NothingToCapture, capture_event

    token = "ghp_" + "Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C"
    with pytest.raises(NothingToCapture):
        capture_event(load_settings(), "claude-code", "Stop", {"session_id": f"run-{token}"})
    held = [p for p in home.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]
    assert held == [] and (home / "hooks" / "missed").is_dir()


def test_a_project_named_by_a_folder_goes_out_with_no_triple_naming_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its memories went out under the keyed name, and their files named the folder the
    key hides: the graph's triples ("acme-layoffs edited src/app.py") and a digest's paths
    ("Edited: /home/alice/acme-layoffs/src/app.py"). Both stay here; a file names the
    folder ``.`` and a path under it relative to it; a file an older memctl sent goes
    once more."""
    remote = bare_repo(tmp_path)
    folder = tmp_path / "acme-layoffs"
    git("init", "--quiet", str(folder))  # no remote: a ``path:`` scope
    laptop = machine(tmp_path, "laptop", remote)
    sync_api.init(laptop, str(remote))
    lines = [
        claude_record("user", "Add retries to the app and run the tests.", 0, "s-folder"),
        claude_record("assistant", [_tool(1, "Edit", file_path=f"{folder}/src/app.py")], 1),
        claude_record("assistant", [_tool(2, "Bash", command="mix test")], 2),
        claude_record("assistant", "Done: retries added, the tests pass.", 3, "s-folder"),
    ]
    transcript = tmp_path / "s-folder.jsonl"
    text = "".join(json.dumps({**line, "cwd": str(folder)}) + "\n" for line in lines)
    transcript.write_text(text)
    ingest_file(laptop, transcript)
    index_pending(laptop.db)
    ids = [m.id for m in memory_api.list_memories(laptop, memory_api.ListRequest())]
    sync_api.promote(laptop, sync_api.ShareRequest(tuple(ids)))
    assert any("acme-layoffs" in t for ts in stated_by(laptop.db, ids).values() for t in ts)
    with monkeypatch.context() as older:  # as memctl sent it before
        older.setattr(folders, "without_folder_names", lambda triples, origins: triples)
        older.setattr(folders, "relative_to_folder", lambda memory, cwd: memory)
        sync_api.sync(laptop, sync_api.SyncRequest())
    with laptop.db.atomic():
        laptop.db.set_meta(pipeline.META_TRIPLES, "")  # nor did it mark that it sent none
    head = ["--git-dir", str(remote), "grep", "-c", "acme-layoffs", "HEAD"]
    assert git(*head).strip()
    sync_api.sync(laptop, sync_api.SyncRequest())
    assert subprocess.run(["git", *head], capture_output=True).returncode == 1  # none left
    assert "Edited: src/app.py" in git("--git-dir", str(remote), "grep", "-h", "Edited", "HEAD")
    assert sync_api.sync(laptop, sync_api.SyncRequest()).went_out["written"] == 0
    laptop.close()


def _tool(n: int, name: str, **arguments: str) -> dict[str, object]:
    return {"type": "tool_use", "id": f"t{n}", "name": name, "input": arguments}


def test_the_session_s_folder_spelt_from_the_home_or_a_folder_above_goes_as_no_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """s29-leak: "cd ~/acme-layoffs" (a command, a rule the user wrote), ``$HOME/...``, and
    a digest's "Edited: acme-layoffs/src/app.py; notes/list.md" (relative to the folder
    it shares with a file outside the project) named the folder in the sync repository;
    another path of the home named the user. s30-leak: a sibling folder whose name starts
    with the folder's ("~/acme-layoffs-old") named it too; the sibling stays another
    folder, and a word that is no path ("acme-layoffs-api is down") is the user's text."""
    monkeypatch.setenv("HOME", "/home/alice")
    text = (
        "Edited: acme-layoffs/src/app.py; notes/list.md\n"
        "Ran: cd ~/acme-layoffs && mix test; cat $HOME/acme-layoffs/mix.exs ${HOME}/acme-layoffs\n"
        "Read /home/alice/notes/list.md and docs/acme-layoffs/x; /home/alicea/y\n"
        "Compared ~/acme-layoffs-old/mix.exs, ../acme-layoffs_v2/mix.exs, "
        "acme-layoffs.bak/mix.exs, …/acme-layoffs2 and ~/apps/mix.exs; acme-layoffs-api is down"
    )
    shown = folders.relative_to_folder(Memory(text, l2_content=text), "/home/alice/acme-layoffs")
    assert (
        shown.content
        == shown.l2_content
        == (
            "Edited: src/app.py; notes/list.md\n"
            "Ran: cd . && mix test; cat mix.exs .\n"
            "Read ~/notes/list.md and docs/acme-layoffs/x; /home/alicea/y\n"
            "Compared ~/…-old/mix.exs, ../…_v2/mix.exs, ….bak/mix.exs, …/…2 and "
            "~/apps/mix.exs; acme-layoffs-api is down"
        )
    )


def test_a_file_s_text_names_the_session_s_folder_by_no_path() -> None:
    """``folders.relative_to_folder``: the folder, a path under it and a note's shortened
    form of it; a folder whose name only starts the same is another folder (its name
    without the folder's)."""
    text = (
        "Edited: /home/alice/acme-layoffs/src/app.py; /home/alice/acme-layoffs-old/x.py\n"
        "Ran: git -C …/acme-layoffs status; cd /home/alice/acme-layoffs && make"
    )
    shown = folders.relative_to_folder(Memory(text, l0_abstract=text), "/home/alice/acme-layoffs")
    assert (
        shown.content
        == shown.l0_abstract
        == ("Edited: src/app.py; /home/alice/…-old/x.py\nRan: git -C . status; cd . && make")
    )
    assert folders.relative_to_folder(Memory(text), "").content == text


def test_an_export_made_before_a_session_was_forgotten_brings_none_of_it_back(
    make_ctx: Callable[..., Context], home: Path
) -> None:
    """`memctl import` of an export made before `sessions forget` wrote the forgotten
    session's memories back (their text, and the session's id the forget had keyed); a
    record names its session by id, by a message of it, or by a digest's range."""
    ctx = make_ctx()
    gone, kept = "9d0c6b1e-0f4a-4c2e-9b7d-5a1e2f3c4d5e", "2b7e1c9a-5d3f-4e8b-a6c1-0f9e8d7c6b5a"
    said_in_session(ctx, ["The zebracanary queue runs on quokkaville."], gone)
    said_in_session(ctx, ["We deploy with make release."], kept)
    forget_session(ctx, gone)
    records = [
        {"content": "The zebracanary queue runs on quokkaville.", "session_id": gone},
        {"content": "Set up zebracanary.", "source": f"session:{gone}#1:user"},
        {"content": "Session of June: zebracanary.", "source": f"session:{gone}#1-1"},
        {"content": "We deploy with make release.", "session_id": kept},
    ]
    lines = [(n, json.dumps({"id": f"{n:032x}", **r})) for n, r in enumerate(records, 1)]
    report = import_lines(ctx, lines)
    ctx.close()
    assert files_holding(home, "zebracanary") == [] and files_holding(home, gone) == []
    assert (report.imported, report.skipped, report.forgotten) == (1, 3, 3)


def test_an_export_made_before_a_permanent_delete_brings_the_memory_back_nowhere(
    home: Path, tmp_path: Path
) -> None:
    """`memctl import` of an export made before `delete --permanent` wrote the deleted
    memory back, its text and all (the id was free again); it is left out and said, as a
    forgotten session's memories are, and the other memory of the file is skipped as
    present."""
    vault = "Ask Zorblaxquinn for the vault combination on Fridays."

    def ok(*args: str) -> str:
        done = run_cli(*args, input="y\n")
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    gone = ok("remember", vault).strip()
    ok("remember", "We deploy with make ship from main.")
    ok("export", "-o", str(tmp_path / "before.jsonl"))
    ok("delete", gone, "--permanent")
    said = ok("import", str(tmp_path / "before.jsonl"))
    assert "1 memory forgotten here (of a forgotten session, or deleted for good) left out" in said
    assert files_holding(home, "Zorblaxquinn") == []


def test_a_redact_the_assistant_ran_stores_no_value_it_took_out(home: Path, tmp_path: Path) -> None:
    """Asked to take a name out of memctl, the assistant runs `memctl redact NAME` (or pipes
    it into `memctl redact -`); the capture of that turn stored the command, so the value
    was back in the store the moment it left. The call keeps its words, not the value."""
    values = ("Quokkamarmaladeson", "Zorblaxvendor Ltd")
    calls = (f"memctl redact '{values[0]}'", f"printf '%s' '{values[1]}' | memctl redact -")
    lines = [claude_record("user", "Take the vendor's names out of memctl.", 0, "cc-r")]
    for n, command in enumerate(calls, start=1):
        lines.append(claude_record("assistant", [_tool(n, "Bash", command=command)], n, "cc-r"))
    transcript = tmp_path / "redact.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = run_cli("ingest", str(transcript), "--wait")
    assert done.returncode == 0, done.stderr
    shown = run_cli("sessions", "show", "cc-r").stdout
    assert shown.count("[tool Bash: memctl redact [REDACTED:secret]]") == 2
    assert [files_holding(home, value) for value in values] == [[], []]


def test_a_turn_s_command_shown_beside_its_row_holds_no_password_it_was_given(
    home: Path, tmp_path: Path
) -> None:
    """A recall row shows its turn's command (``↳ from S#N: [tool Bash: …]``, s34-tools).
    Capture kept a password given to ``rabbitmqctl add_user``, piped into ``sudo -S`` or
    given to ``influx -password`` as the assistant ran it, so the row showed it beside
    "The orders user exists", as did `sessions show` and the session's digest."""
    value = "Kestrel-Plum-5521"

    def call(n: int, command: str) -> dict[str, object]:
        return claude_record("assistant", [_tool(n, "Bash", command=command)], n, "cc-q")

    lines = [
        claude_record("user", "Create the queue user for the orders service.", 0, "cc-q"),
        claude_record("assistant", "I'll create the RabbitMQ user for orders now.", 1, "cc-q"),
        call(2, f"rabbitmqctl add_user orders {value}"),
        call(3, f"echo '{value}' | sudo -S systemctl restart rabbitmq-server"),
        call(4, f"influx -username admin -password {value} -execute 'SHOW USERS'"),
        claude_record("assistant", "The orders user exists and the broker restarted.", 5, "cc-q"),
    ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    payload = {"session_id": "cc-q", "transcript_path": str(transcript), "cwd": str(tmp_path)}
    _ok(
        "-c",
        "ingest.spawn_worker=false",
        "hook",
        "claude-code",
        "SessionEnd",
        input=json.dumps(payload),
    )
    _ok("maintain")
    found = _ok("recall", "how was the orders queue user created?", "--json")
    shown = [row["from"]["text"] for row in json.loads(found)["results"] if row.get("from")]
    assert any("rabbitmqctl add_user orders [REDACTED:password]" in text for text in shown)
    assert value not in found
    assert value not in _ok("sessions", "show", "cc-q") + _ok("list", "--json")
    assert _files_holding(home, value) == []


def test_a_password_asked_for_or_under_its_label_reaches_no_file(
    home: Path, tmp_path: Path
) -> None:
    """A secret split across two lines: the assistant asks for the staging password and
    the user answers with the value alone (two messages), and a pasted config holds
    ``password:`` with the value indented on the next line (one message). Capture kept
    both as said."""
    asked, pasted = "Granite6Basalt1", "Birch3Cedar7Ash"
    lines = [
        claude_record("user", "Connect the app to the staging database.", 0, "cc-ask"),
        claude_record("assistant", "What is the staging database password?", 1, "cc-ask"),
        claude_record("user", asked, 2, "cc-ask"),
        claude_record("user", f"config:\n  user: app\n  password:\n    {pasted}\n", 3, "cc-ask"),
        claude_record("assistant", "Connected; the config is in place.", 4, "cc-ask"),
    ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    _ok("ingest", str(transcript), "--mode", "raw")
    shown = _ok("sessions", "show", "cc-ask")
    assert "[REDACTED:password]" in shown and "user: app" in shown
    assert asked not in shown and pasted not in shown
    assert _files_holding(home, asked) == [] and _files_holding(home, pasted) == []


def test_a_resumed_forgotten_session_s_start_marks_nothing_pending(
    home: Path, tmp_path: Path
) -> None:
    """A session-start hook marks the transcript it is given pending (a client killed
    before any capture hook), and Codex's SubagentStart marks a sub-agent's with its parent
    session: for a resumed forgotten session each wrote ``hooks/pending`` with the id, the
    transcript's path and the directory the forget had taken out, kept while the session
    ran (and after it, were its client killed), for a capture that stores nothing."""
    where = _captured_by_the_hook(tmp_path, "client-quokkaville", "cc-forgotten")
    _ok("sessions", "forget", "cc-forgotten", "--yes")
    assert _files_holding(home, "quokkaville") == []
    transcript = str(where / "t.jsonl")
    start = {"session_id": "cc-forgotten", "cwd": str(where), "transcript_path": transcript}
    _ok("hook", "claude-code", "SessionStart", input=json.dumps(start))
    agent = where / "rollout-agent.jsonl"
    agent.write_text("{}\n")
    sub = {"session_id": "cc-forgotten", "cwd": str(where), "transcript_path": str(agent)}
    _ok("hook", "codex", "SubagentStart", input=json.dumps(sub))
    assert _files_holding(home, "quokkaville") == []
    assert _files_holding(home, "cc-forgotten") == []
    # a session not forgotten is marked as before
    kept = {**start, "session_id": "cc-kept"}
    _ok("hook", "claude-code", "SessionStart", input=json.dumps(kept))
    assert [f for f in _files_holding(home, "cc-kept") if f.startswith("hooks/pending/")]


def test_a_hook_s_missed_record_names_a_forgotten_session_by_its_kept_id(home: Path) -> None:
    """A capture hook given no transcript records why it captured nothing ("no transcript
    of session 'ID' found", ``hooks/missed``; `memctl doctor` shows it) until it captures
    again: the session stored later (a backfill, `memctl ingest`) and forgotten, that
    record named it still."""
    session = "sess-quokka-0001"
    _ok("hook", "claude-code", "SessionEnd", input=json.dumps({"session_id": session}))
    assert "hooks/missed/claude-code.SessionEnd" in _files_holding(home, session)
    said = "user: we deploy the shop with make release\nassistant: Noted.\n"
    _ok("ingest", "--session-id", session, "--mode", "raw", input=said)
    _ok("sessions", "forget", session, "--yes")
    assert _files_holding(home, session) == []
    assert "no transcript of session 'keyed-" in _ok("doctor")


def _slack_export(root: Path, users: list[tuple[str, str]]) -> None:
    """A workspace export unpacked: one channel, a message from each user (id, name)."""
    (root / "general").mkdir(parents=True)
    (root / "users.json").write_text(
        json.dumps([{"id": uid, "name": uid.lower(), "real_name": name} for uid, name in users])
    )
    (root / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general"}]))
    said = [
        {"type": "message", "user": uid, "text": f"Lunch at {n}?", "ts": f"17039808{n:02}.0001"}
        for n, (uid, _) in enumerate(users, 1)
    ]
    (root / "general" / "2023-12-31.json").write_text(json.dumps(said))


def test_a_chat_s_speaker_name_leaves_with_a_redact_a_rescrub_and_a_forget(
    home: Path, tmp_path: Path
) -> None:
    """An import keeps who said each message twice: in its text ("Name: ...") and in
    ``messages.speaker`` (m035), which `sessions show` and recall print. A redact and the
    rescrub rewrote the text alone, so the name stayed in the database and on the page."""
    token, name, other = (
        "ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C",
        "Quokka Marmaladeson",
        "Wombat",
    )
    _slack_export(tmp_path / "export", [("U1", token), ("U2", name), ("U3", other)])
    _ok("import", str(tmp_path / "export"))
    assert _files_holding(home, token) == []  # the import scrubs a name as it scrubs a text
    with Database.open(home / "memctl.db") as db:
        session = str(db.value("SELECT session_id FROM messages WHERE speaker = ?", (name,)))

    _ok("redact", name)
    assert _files_holding(home, name) == [] and _files_holding(home, "marmaladeson") == []
    assert name not in _ok("sessions", "show", session)

    with Database.open(home / "memctl.db") as db:  # a name an older filter kept
        db.execute("UPDATE messages SET speaker = ? WHERE speaker = ?", (token, other))
        db.execute("DELETE FROM meta WHERE key = ?", (RESCRUBBED_WITH,))
    assert _files_holding(home, token)
    report = json.loads(_ok("maintain", "--only", "rescrub", "--json"))
    assert report["tasks"][0]["counts"]["speakers"] == 1
    assert _files_holding(home, token) == []
    assert "[REDACTED:github-token] (user)" in _ok("sessions", "show", session)

    _ok("sessions", "forget", session, "--yes")
    assert _files_holding(home, "Lunch at") == [] and _files_holding(home, "[REDACTED:") == []


def test_a_private_block_the_assistant_quotes_back_reaches_no_file(
    home: Path, tmp_path: Path
) -> None:
    """The user's ``<private>`` block was hidden, and the assistant's reply repeating it
    (in the same capture, or in the session's next one: a Stop hook after each turn) was
    stored whole: the values in the store, its full-text index and `sessions grep`."""
    values = ["EMP-77341", "Quillonvale", "tav.o@quill.example"]
    user = (
        "Fill in the vendor form. <private>My employee number is EMP-77341, I live on "
        "Quillonvale Road, mail me at tav.o@quill.example</private> Use the usual template."
    )
    replies = [
        "Done: the form has employee number EMP-77341 and the address on Quillonvale Road.",
        "I also sent the receipt to tav.o@quill.example as asked.",
    ]
    transcript = tmp_path / "vendor.jsonl"
    lines = [{"role": "user", "content": user}, {"role": "assistant", "content": replies[0]}]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    _ok("ingest", str(transcript), "--session-id", "vendor-form", "--wait")
    with transcript.open("a") as more:  # the session's next turn, captured on its own
        more.write(json.dumps({"role": "assistant", "content": replies[1]}) + "\n")
    _ok("ingest", str(transcript), "--session-id", "vendor-form", "--wait")
    shown = _ok("sessions", "show", "vendor-form")
    assert "the usual template" in shown and "receipt to [REDACTED:private]" in shown
    for value in values:
        assert files_holding(home, value) == [], value
        assert "no stored message matches" in _ok("sessions", "grep", value)


def test_redact_reaches_the_copies_init_kept_of_the_assistants_files(
    home: Path, tmp_path: Path
) -> None:
    """`memctl init` keeps an instructions file it adds its block to whole, in the data
    directory (a value the user wrote there too). `memctl redact` ("a leaked value out of
    every session, memory and backup") left those copies holding the value; an undo puts a
    copy back as it now reads. Of `~/.claude.json` (Claude Code's prompt history, its MCP
    servers' tokens) only memctl's own key is kept: no copy of the value to rewrite."""
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    value = "Zyx-Quokka-7781-staging"
    claude = {
        "numStartups": 3,
        "projects": {"/home/u/app": {"history": [{"display": f"use password {value} now"}]}},
        "mcpServers": {"gh": {"command": "gh-mcp", "env": {"GH_TOKEN": value}}},
    }
    (user / ".claude.json").write_text(json.dumps(claude))
    (user / ".claude" / "CLAUDE.md").write_text(f"# Mine\nThe staging password is {value}.\n")
    env = {"HOME": str(user), "PATH": ""}

    def _ok_in(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env=env, cwd=tmp_path)

    assert _ok_in("init").returncode == 0
    (copy,) = files_holding(home, value)  # the copy of CLAUDE.md, not of ~/.claude.json
    assert copy.endswith(".bak")
    said = _ok_in("redact", value, "--json")
    assert said.returncode == 0, said.stderr
    assert json.loads(said.stdout)["backups_rewritten"] == [copy]
    assert files_holding(home, value) == []
    assert _ok_in("init", "--undo").returncode == 0
    restored = json.loads((user / ".claude.json").read_text())
    assert "memctl" not in restored.get("mcpServers", {}) and restored == claude
    assert (user / ".claude" / "CLAUDE.md").read_text() == (
        "# Mine\nThe staging password is [REDACTED].\n"
    )
