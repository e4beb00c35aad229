"""Scopes a newcomer does not trip over: personal facts are global, and a project keeps its
memories when its repository gets a remote (real git repositories, worktrees and clones)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from memctl.api.ingest import export
from memctl.api.memory import Filters, ListRequest, RememberRequest, list_memories, remember
from memctl.api.recall import RecallRequest, recall
from memctl.api.sessions import forget
from memctl.config import load_settings
from memctl.config.files import forget_key
from memctl.config.scope import GLOBAL_SCOPE, folder_scope, project_scope
from memctl.context import Context
from memctl.memories.search_scopes import resolve_scope
from memctl.model import Memory, Session
from memctl.store.events import list_events
from memctl.store.sessions import save_session
from memctl.store.writes import Writer
from memctl.sync.layout import shared_scope
from memctl.sync.records import import_lines
from tests.config.test_config import git, make_repo
from tests.conftest import run_cli, store_at_version
from tests.fakes import HashEmbedder
from tests.ingesting import distil

BARE_URL_SCOPE = "file:{}"


@pytest.fixture
def open_in(home: Path) -> Iterator[Callable[..., Context]]:
    """A Context whose current directory is ``cwd`` (a fresh Settings each time)."""
    made: list[Context] = []

    def make(cwd: Path, **overrides: object) -> Context:
        settings = load_settings(cwd=cwd, overrides={"llm": "none", **overrides})
        context = Context(settings, embedder=HashEmbedder())
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()


def scope_of(ctx: Context, text: str) -> str:
    memory = remember(ctx, RememberRequest(text, category="entities")).memory
    return memory.scope


def recalled(ctx: Context, query: str) -> list[str]:
    return [r.memory.content for r in recall(ctx, RecallRequest(query, touch=False)).result.results]


# Personal facts go global


def test_remembered_profile_and_preferences_are_global(ctx: Context) -> None:
    project = ctx.settings.project_scope
    for category in ("profile", "preferences"):
        assert remember(
            ctx, RememberRequest(f"{category} fact", category=category)
        ).memory.scope == (GLOBAL_SCOPE)
    assert (
        remember(ctx, RememberRequest("a project fact", category="entities")).memory.scope
        == project
    )
    assert remember(ctx, RememberRequest("no category given")).memory.scope == project
    pinned = RememberRequest("tabs here", category="preferences", scope="project")
    assert remember(ctx, pinned).memory.scope == project


def test_the_rule_can_be_turned_off(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx(scope__personal_global=False)
    memory = remember(ctx, RememberRequest("I am Ana", category="profile")).memory
    assert memory.scope == ctx.settings.project_scope


def test_distilled_preferences_are_global_and_project_facts_stay(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    run = distil(
        ctx, "user: I prefer tabs over spaces.\nuser: We decided to deploy with make ship.\n"
    )
    made = list_memories(ctx, ListRequest())
    by_category = {m.category: m.scope for m in made}
    assert run.record.counts.get("create", 0) == len(made) >= 2
    assert by_category["preferences"] == GLOBAL_SCOPE
    assert {s for c, s in by_category.items() if c not in ("profile", "preferences")} == {
        ctx.settings.project_scope
    }


def test_import_with_an_explicit_scope_keeps_every_memory_there(tmp_path: Path) -> None:
    notes = tmp_path / "chat.txt"
    notes.write_text("user: I prefer tabs over spaces.\nassistant: ok\nuser: thanks\n")
    assert run_cli("-c", "llm=none", "import", str(notes), "--scope", "team").returncode == 0
    memories = json.loads(run_cli("list", "--json").stdout)
    assert memories and {m["scope"] for m in memories} == {"team"}


# A project keeps its scope when it gets a remote


def test_adding_a_remote_keeps_the_memories(
    tmp_path: Path, open_in: Callable[..., Context]
) -> None:
    repo = make_repo(tmp_path / "repo")
    before = open_in(repo)
    old = before.settings.project_scope
    assert old.startswith("path:") and scope_of(before, "the staging database is db-2") == old
    before.close()
    git(repo, "remote", "add", "origin", "git@github.com:acme/shop.git")
    after = open_in(repo)
    assert after.settings.project_scope == "github.com/acme/shop"
    assert recalled(after, "staging database") == ["the staging database is db-2"]
    (memory,) = list_memories(after, ListRequest())
    assert memory.scope == "github.com/acme/shop"
    (moved, _created) = list_events(after.db, memory.id, 10)
    assert moved.data["after"] == {"scope": "github.com/acme/shop"}
    # the old name still finds them, and the move happens once
    assert [m.id for m in list_memories(after, ListRequest(filters_scope(old)))] == [memory.id]
    again = open_in(repo)
    assert len(list_events(again.db, memory.id, 10)) == 2


def filters_scope(scope: str) -> Filters:
    return Filters(scope=scope)


def test_a_worktree_and_a_clone_keep_working(
    tmp_path: Path, open_in: Callable[..., Context]
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature")
    in_main, in_worktree = open_in(repo), open_in(tmp_path / "feature")
    assert in_main.settings.project_scope == in_worktree.settings.project_scope
    scope_of(in_main, "made in the main work tree")
    scope_of(in_worktree, "made in the worktree")
    in_main.close(), in_worktree.close()
    bare = tmp_path / "shop.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    worktree = open_in(tmp_path / "feature")  # first sight from the worktree
    assert worktree.settings.project_scope == BARE_URL_SCOPE.format(bare.resolve().as_posix()[:-4])
    made = ["made in the main work tree", "made in the worktree"]
    assert in_project(worktree) == made
    git(tmp_path, "clone", "-q", str(bare), str(tmp_path / "clone"))
    assert in_project(open_in(tmp_path / "clone")) == made


def in_project(ctx: Context) -> list[str]:
    return sorted(m.content for m in list_memories(ctx, ListRequest(filters_scope("project"))))


def test_status_and_list_across_a_remote_added_by_the_cli(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert run_cli("remember", "the cache lives in redis", cwd=repo).returncode == 0
    git(repo, "remote", "add", "origin", "https://github.com/acme/shop")
    found = run_cli("recall", "cache redis", "--format", "ids", cwd=repo)
    assert found.returncode == 0 and len(found.stdout.split()) == 1
    listed = json.loads(run_cli("list", "--scope", "project", "--json", cwd=repo).stdout)
    assert [m["scope"] for m in listed] == ["github.com/acme/shop"]


# Recall that finds nothing here says when other scopes have matches


def test_recall_says_when_other_scopes_have_matches(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    made = run_cli("remember", "--category", "entities", "the invoice job runs hourly", cwd=there)
    assert made.returncode == 0
    table = run_cli("recall", "invoice job", "--scope", "project", cwd=here)
    assert table.stdout.splitlines() == [
        "no memories found",
        "1 clear match in other scopes: add --all-scopes to see them",
    ]
    asked = ("recall", "invoice job", "--scope", "project")
    as_json = json.loads(run_cli(*asked, "--json", cwd=here).stdout)
    assert as_json["results"] == [] and any("--all-scopes" in w for w in as_json["warnings"])
    assert run_cli(*asked, "--format", "ids", cwd=here).stdout == ""
    context = run_cli("recall", "invoice job", "--format", "context", cwd=here).stdout
    assert "--all-scopes" not in context and "hourly" not in context
    wide = run_cli("recall", "invoice job", "--all-scopes", "--format", "ids", cwd=here)
    assert len(wide.stdout.split()) == 1
    nowhere = run_cli("--home", str(tmp_path / "empty"), "recall", "invoice job", cwd=here)
    assert nowhere.stdout.splitlines() == ["no memories found"]
    # something here, but no clear match: the table's possible rows, then the same line
    made = run_cli("remember", "--category", "entities", "the job board lists open roles", cwd=here)
    assert made.returncode == 0
    asked = ("recall", "how often does the invoice job run?", "--scope", "project", "--json")
    possible = json.loads(run_cli(*asked, cwd=here).stdout)
    assert [r["match"] for r in possible["results"]] == ["possible"]
    assert "1 clear match in other scopes: add --all-scopes to see them" in possible["warnings"]


def test_recall_from_a_directory_holding_nothing_searches_every_project(
    tmp_path: Path,
) -> None:
    """Sessions taken in from the directories they ran in, asked about from a home
    directory: recall answered every question with "no memories found" while the
    answers sat in the store."""
    home, there = tmp_path / "home", make_repo(tmp_path / "shop")
    home.mkdir()
    made = run_cli("remember", "--category", "entities", "the invoice job runs hourly", cwd=there)
    assert made.returncode == 0
    found = run_cli("recall", "when does the invoice job run?", "--json", cwd=home)
    answer = json.loads(found.stdout)
    assert [r["content"] for r in answer["results"]][:1] == ["the invoice job runs hourly"]
    assert "in no project and holds nothing" in " ".join(answer["warnings"])
    table = run_cli("recall", "when does the invoice job run?", cwd=home)
    assert "invoice job runs hourly" in table.stdout and "every project" in table.stderr
    empty_repo = make_repo(tmp_path / "new-repo")  # a project: its own, even empty
    assert run_cli("recall", "invoice job", cwd=empty_repo).stdout.startswith("no memories")
    run_cli("remember", "Bea prefers tea", "--scope", "project", cwd=home)
    kept = json.loads(run_cli("recall", "invoice job", "--json", cwd=home).stdout)
    assert [r["content"] for r in kept["results"]] == ["Bea prefers tea"]  # here's own


# A folder's scope is keyed: a copy of the store cannot confirm a guessed folder


def _tuples(path: Path, sql: str) -> list[tuple[object, ...]]:
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return list(connection.execute(sql))
    finally:
        connection.close()


def _values_holding(ctx: Context, text: str) -> list[str]:
    """The tables of the store with a value holding ``text``."""
    tables = ctx.db.tuples("SELECT name FROM sqlite_master WHERE type = 'table'")
    found = []
    for (table,) in tables:
        rows = ctx.db.tuples(f'SELECT * FROM "{table}"')
        if any(isinstance(v, str) and text in v for row in rows for v in row):
            found.append(table)
    return found


def test_a_folder_s_scope_is_keyed_and_an_older_store_export_and_sync_name_keep_its_project(
    home: Path, tmp_path: Path, open_in: Callable[..., Context]
) -> None:
    """An older memctl named a project with no remote by a plain SHA-256 of its folder:
    anyone with the database, a backup, an export or ``projects --json`` could try a
    guessed folder on it. Its store is migrated to the keyed name, in every table and
    event, and an older export's record and the sync repository's name land in the same
    project."""
    folder, moved_from = tmp_path / "acme-layoffs", tmp_path / "old-place"
    folder.mkdir()
    plain, other = folder_scope(str(folder.resolve())), folder_scope(str(moved_from))
    connection, old = store_at_version(home, 30)
    writer = Writer(old)
    writer.create(Memory(content="we ship the widget with make ship", scope=other), None)
    writer.rescope(other, plain)  # its update event names both scopes
    save_session(old, Session(id="s1", client="generic", scope=plain))
    save_session(old, Session(id="s2", client="generic", scope=plain))
    old.set_meta(f"scope_alias:{other}", plain)
    connection.close()
    backup = home / "backups" / "memctl-20260101T000000000000Z.db"  # made by that memctl
    backup.parent.mkdir(mode=0o700)
    shutil.copy(home / "memctl.db", backup)

    ctx = open_in(folder)
    scope = ctx.settings.project_scope
    assert scope.startswith("path:") and scope != plain
    assert _values_holding(ctx, plain) == _values_holding(ctx, other) == []
    found = list_memories(ctx, ListRequest(Filters()))
    assert [m.content for m in found] == ["we ship the widget with make ship"]
    assert ctx.db.value("SELECT scope FROM sessions WHERE id = 's1'") == scope
    assert resolve_scope(ctx, other) == resolve_scope(ctx, plain) == scope  # typed from before
    assert shared_scope(scope, forget_key(home)) == shared_scope(plain, forget_key(home))
    exported = "".join(export(ctx))
    assert scope in exported and plain not in exported

    record = json.loads(exported.splitlines()[0]) | {"id": "0" * 32, "scope": plain}
    import_lines(ctx, [(1, json.dumps(record))], origin="old-export.jsonl")
    assert len(list_memories(ctx, ListRequest(Filters()))) == 2
    assert _values_holding(ctx, plain) == []

    assert project_scope(folder, bytes(32)) not in (scope, plain)  # another home's key

    forget(ctx, "s2")  # rewrites the backup: migrated with the store's key, not one of its own
    assert not (backup.parent / "forget.key").exists()
    assert _tuples(backup, "SELECT DISTINCT scope FROM sessions") == [(scope,)]


def test_a_backup_an_older_memctl_made_is_keyed_by_the_next_maintain(
    home: Path, tmp_path: Path
) -> None:
    """m032 keyed the store's folder names, but a backup made before it kept the plain
    digest (anyone with the file could confirm a guessed folder) until a forget happened to
    rewrite it. The next `memctl maintain` brings it to the store's schema: keyed, in no
    byte of the file; a backup already up to date is left as it is."""
    plain = folder_scope(str(tmp_path / "acme-layoffs"))
    connection, old = store_at_version(home, 31)
    Writer(old).create(Memory(content="we ship the widget with make ship", scope=plain), None)
    save_session(old, Session(id="s1", client="generic", scope=plain))
    connection.close()
    backup = home / "backups" / "memctl-20260101T000000000000Z.db"  # made by that memctl
    backup.parent.mkdir(mode=0o700)
    shutil.copy(home / "memctl.db", backup)
    assert plain.encode() in backup.read_bytes()

    assert _upkeep(run_cli("maintain", "--dry-run", "--json"))["backups_migrated"] == 1
    assert "backup_migrated" in _upkeep(run_cli("maintain", "--json"))
    assert plain.encode() not in backup.read_bytes()
    assert (backup.stat().st_mode & 0o777) == 0o600
    keyed = _tuples(home / "memctl.db", "SELECT scope FROM sessions")
    assert _tuples(backup, "SELECT scope FROM sessions") == keyed != [(plain,)]
    assert [path.name for path in backup.parent.iterdir()].count(backup.name) == 1
    assert "backup_migrated" not in _upkeep(run_cli("maintain", "--json"))


def _upkeep(done: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """The upkeep task's counts in a `maintain --json`'s report."""
    assert done.returncode == 0, done.stderr
    tasks = json.loads(done.stdout)["tasks"]
    return next(task["counts"] for task in tasks if task["task"] == "upkeep")
