"""Projects with names, sessions with titles, one clock: on real stored sessions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from memctl.api import memory as memory_api
from memctl.api import sessions as api
from memctl.api.ingest import undo
from memctl.api.memory import Filters, RememberRequest
from memctl.api.projects import list_projects, project_labels
from memctl.api.sessions import Where
from memctl.context import Context
from memctl.errors import UsageError
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.title import condensed, session_title
from memctl.memories.projects import repo_name, short_path
from memctl.model import now_iso
from tests.conftest import run_cli
from tests.ingesting import SESSION, fixture, ingest_text


@pytest.fixture
def stored(make_ctx: Any) -> Context:
    """The Claude Code fixture (it ran in /home/alice/src/widget, 2025-09-14) and a session
    captured here, in the current project."""
    ctx: Context = make_ctx()
    capture(ctx, fixture("claude-code.jsonl"), IngestOptions())
    ingest_text(ctx, "user: please fix the flaky login test\nassistant: done\n", "here-1")
    return ctx


def test_a_title_is_the_first_request_condensed_and_names_a_slash_command() -> None:
    assert session_title(["<system-reminder>CLAUDE.md says…</system-reminder>\n  fix  it"]) == (
        "fix it"
    )
    wrapped = "<command-name>/review</command-name><command-args>the auth module</command-args>"
    assert session_title([wrapped]) == "/review the auth module"
    assert session_title(["<command-name>/clear</command-name>"]) == "/clear"  # only a command
    long = condensed("word " * 40)
    assert len(long) <= 60 and long.endswith("…") and " " not in long[-2:]
    assert session_title([]) == ""


def test_a_first_line_that_introduces_what_follows_is_no_title_alone() -> None:
    """Real first turns (fresh4's getspecstory watchjson, fresh3's agentname; SOURCES.md)."""
    plan = "Implement the following plan:\n\n# Plan: Add `--json` flag to `specstory watch`\n"
    assert session_title([plan + "\n## Context\n\nThe output is parsed."]) == (
        "Plan: Add `--json` flag to `specstory watch`"
    )
    error = "For the code present, we get this error:\n```\nunknown field AgentName in struct\n```"
    assert session_title([error]) == "For the code present, we get this error: unknown field…"


def test_a_session_stored_without_a_title_gets_its_first_request(stored: Context) -> None:
    rows = {r.id: r for r in api.list_sessions(stored, Where(all_scopes=True))}
    assert rows["here-1"].title == "please fix the flaky login test"
    assert rows[SESSION].title == "Deploy pipeline and editor setup"  # the transcript's own


def test_projects_are_named_by_path_and_counted(stored: Context) -> None:
    memory_api.remember(stored, RememberRequest("Deploys need two approvals", scope="project"))
    found = {p.scope: p for p in list_projects(stored)}
    here = found[stored.settings.project_scope]
    assert here.current and here.sessions == 1 and here.memories == 1
    assert here.path == short_path(stored.settings.cwd) and here.name == "project"
    widget = next(p for p in found.values() if p.path == "/home/alice/src/widget")
    assert widget.name == "widget" and widget.clients == ("claude-code",)
    assert widget.last_activity.startswith("2025-09-14")  # the session's own time
    assert widget.to_dict()["scope"].startswith("path:")  # the hash stays the id
    assert project_labels(stored, [widget.scope])[widget.scope] == "/home/alice/src/widget"


def test_project_counts_stay_true_through_every_change(stored: Context) -> None:
    """The counts `projects` reads are kept by triggers: after remember, forget, a permanent
    delete, an edit, a scope change, a delete and its undo they equal a count of the rows."""
    ids = [
        memory_api.remember(
            stored, RememberRequest(f"Fact {n} of the release", scope="project")
        ).memory.id
        for n in range(5)
    ]
    memory_api.forget(stored, ids[0])
    memory_api.delete(stored, ids[2], permanent=True)
    memory_api.update(stored, memory_api.UpdateRequest(ids[3], text="Fact 3, reworded"))
    stored.db.execute("UPDATE memories SET scope = 'global' WHERE id = ?", (ids[4],))
    memory_api.delete(stored, ids[1])
    undo(stored)  # the delete: ids[1] is active again
    kept = dict(stored.db.tuples("SELECT scope || ' ' || state, n FROM scope_counts WHERE n > 0"))
    counted = dict(
        stored.db.tuples("SELECT scope || ' ' || state, count(*) FROM memories GROUP BY 1")
    )
    assert kept == counted
    here = next(p for p in list_projects(stored) if p.current)
    assert here.memories == 2  # ids[1] and ids[3]


def test_names_of_paths_and_repositories() -> None:
    assert repo_name("github.com/acme/widget") == "widget"
    assert repo_name("file:/srv/git/tools") == "tools"
    assert repo_name("path:0123456789abcdef") == "" and repo_name("global") == ""
    assert short_path(Path.home() / "src" / "app") == "~/src/app"
    assert short_path("/srv/app") == "/srv/app"


def test_a_scope_is_taken_as_a_path_or_a_project_name(stored: Context) -> None:
    widget = next(p for p in list_projects(stored) if p.name == "widget")
    by_name = api.list_sessions(stored, Where(scope="widget"))
    assert [r.id for r in by_name] == [SESSION]
    by_path = api.list_sessions(stored, Where(scope=str(stored.settings.cwd)))
    assert [r.id for r in by_path] == ["here-1"]
    assert [r.scope for r in api.list_sessions(stored, Where(scope=widget.scope))] == [widget.scope]


def test_two_projects_of_one_name_ask_for_the_path(stored: Context, tmp_path: Path) -> None:
    for n in (1, 2):
        where = tmp_path / f"copy{n}" / "api"
        where.mkdir(parents=True)
        said = {"type": "user", "cwd": str(where), "sessionId": f"api-{n}"}
        line = json.dumps({**said, "message": {"role": "user", "content": f"hello {n}"}})
        transcript = tmp_path / f"api-{n}.jsonl"
        transcript.write_text(line + "\n", encoding="utf-8")
        done = run_cli("ingest", "--transcript", str(transcript), "--client", "claude-code")
        assert done.returncode == 0, done.stderr
    with pytest.raises(UsageError, match="2 projects are named 'api'"):
        api.list_sessions(stored, Where(scope="api"))
    one = api.list_sessions(stored, Where(scope=str(tmp_path / "copy1" / "api")))
    assert [r.id for r in one] == ["api-1"]


def test_time_filters_go_by_the_session_own_time_unless_stored(stored: Context) -> None:
    everywhere = Where(all_scopes=True, since="2025-09-01", until="2025-10-01")
    assert [r.id for r in api.list_sessions(stored, everywhere)] == [SESSION]
    stored_since = Where(all_scopes=True, since="2025-09-01", until="2025-10-01", clock="stored")
    assert api.list_sessions(stored, stored_since) == []  # memctl stored it today
    today = Where(all_scopes=True, since="1d", clock="stored")
    assert {r.id for r in api.list_sessions(stored, today)} == {SESSION, "here-1"}
    with pytest.raises(UsageError, match="clock takes one of"):
        api.list_sessions(stored, Where(clock="wall"))


def test_sessions_elsewhere_are_counted(stored: Context) -> None:
    assert api.elsewhere(stored, Where()) == 1
    assert api.elsewhere(stored, Where(all_scopes=True)) == 0


def test_keyset_pages_follow_each_other(stored: Context) -> None:
    for n in range(5):
        ingest_text(stored, f"user: request number {n}\n", f"page-{n}")
    first = api.list_sessions(stored, Where(all_scopes=True), limit=3)
    second = api.list_sessions(stored, Where(all_scopes=True), 3, (first[-1].at, first[-1].id))
    ids = [r.id for r in first + second]
    assert len(ids) == len(set(ids)) == 6


def test_list_since_says_what_was_stored_since_but_dated_earlier(ctx: Context) -> None:
    memory_api.remember(ctx, RememberRequest("Deploys need two approvals"))
    ctx.db.execute("UPDATE memories SET created_at = '2024-01-01T00:00:00Z'")  # said long ago
    assert memory_api.stored_earlier(ctx, Filters(since="7d")) == 1
    assert memory_api.stored_earlier(ctx, Filters(since="7d", stored=True)) == 0
    request = memory_api.ListRequest(Filters(since="7d", stored=True))
    assert len(memory_api.list_memories(ctx, request)) == 1
    assert now_iso() > "2024"


def test_forgetting_a_deleted_memory_refuses_and_keeps_it_deleted(ctx: Context) -> None:
    memory = memory_api.remember(ctx, RememberRequest("Old build server is gone")).memory
    memory_api.delete(ctx, memory.id)
    with pytest.raises(UsageError, match="is deleted"):
        memory_api.forget(ctx, memory.id)
    assert str(memory_api.get(ctx, memory.id).memory.state) == "deleted"


def test_the_cli_lists_projects_and_sessions_in_80_columns(stored: Context, home: Path) -> None:
    here = IngestOptions(session_id="here-cc", scope="project")  # the current one: a long path
    capture(stored, fixture("claude-code.jsonl"), here)
    stored.close()
    narrow = {"COLUMNS": "80"}
    projects = run_cli("projects", env=narrow)
    assert projects.returncode == 0, projects.stderr
    assert "/home/alice/src/widget" in projects.stdout and "*" in projects.stdout
    assert max(len(line) for line in projects.stdout.splitlines()) <= 80
    # every client whole: the project's path gives way (rich cropped the row, not it)
    assert "claude-code,generic" in projects.stdout, projects.stdout
    assert projects.stdout.splitlines()[1].count("…") == 1  # cut once, in the middle
    listed = run_cli("sessions", "list", env=narrow)
    lines = listed.stdout.splitlines()
    assert "please fix the flaky login test" in listed.stdout
    assert lines[-1] == "1 more in other projects: --all-scopes lists them"
    every = run_cli("sessions", "list", "--all-scopes", env=narrow)
    assert max(len(line) for line in every.stdout.splitlines()) <= 80
    assert "Deploy pipeline and editor setup" in every.stdout
    none = run_cli(
        "sessions", "list", "--all-scopes", "--since", "2025-10-01", "--until", "2025-12-31"
    )
    assert "--all-scopes" not in none.stdout and "their own time" in none.stdout
    assert run_cli("remember", "--scope", "widget", "Widget ships on Tuesdays").returncode == 0
    status = run_cli("status").stdout
    assert f"current scope {stored.settings.project_scope} (" in status
    assert "by project" in status and "/home/alice/src/widget" in status
    shown = run_cli("sessions", "show", SESSION[:8], env=narrow).stdout.splitlines()
    assert shown[1].startswith('messages 1-9 of 9 · "Deploy pipeline')
    assert max(len(line) for line in shown[:2]) <= 80
    listed = json.loads(run_cli("sessions", "list", "--all-scopes", "--json").stdout)
    widget = next(row for row in listed if row["id"] == SESSION)
    assert widget["project"] == "/home/alice/src/widget" and widget["scope"].startswith("path:")
    as_json = json.loads(run_cli("projects", "--json").stdout)
    assert {"scope", "path", "name", "sessions", "memories", "clients"} <= set(as_json[0])


def test_a_project_is_named_by_its_repository(make_ctx: Any, tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/shop.git"],
        check=True,
    )
    ctx: Context = make_ctx()
    ingest_text(ctx, "user: add a cart\n", "shop-1", scope=str(repo))
    shop = next(p for p in list_projects(ctx) if p.scope == "github.com/acme/shop")
    assert shop.name == "shop" and shop.sessions == 1
    assert [r.id for r in api.list_sessions(ctx, Where(scope="shop"))] == ["shop-1"]


def test_a_relative_directory_is_never_looked_up_from_here(make_ctx: Any, tmp_path: Path) -> None:
    """A transcript whose cwd is relative (redacted, or cut) names that directory: the
    repository memctl happens to run in is not its project."""
    subprocess.run(["git", "init", "-q", "."], check=True)  # the current directory
    Path("sub").mkdir()
    said = {"type": "user", "cwd": "sub", "sessionId": "rel-1"}
    line = json.dumps({**said, "message": {"role": "user", "content": "hello"}})
    (tmp_path / "rel.jsonl").write_text(line + "\n", encoding="utf-8")
    ctx: Context = make_ctx()
    done = run_cli("ingest", "--transcript", str(tmp_path / "rel.jsonl"), "--client", "claude-code")
    assert done.returncode == 0, done.stderr
    (project,) = [p for p in list_projects(ctx) if p.sessions]
    assert project.path == "sub" and not project.current


def test_wide_characters_are_cut_by_the_cells_they_take(stored: Context) -> None:
    text = "订单导出接口太慢了，导出一万条要四十秒。帮我看看是什么原因，然后修好它。" * 3
    ingest_text(stored, f"user: {text}\nassistant: 好的\n", "zh-wide")
    stored.close()
    shown = run_cli("sessions", "list", env={"COLUMNS": "80"}).stdout
    assert "订单导出接口" in shown
    assert max(cell_len(line) for line in shown.splitlines()) <= 80


def test_a_cursor_session_whose_workspace_is_gone_is_not_filed_here(
    make_ctx: Any, tmp_path: Path
) -> None:
    folder = tmp_path / ".cursor" / "projects" / "home-ann-src-gone-app" / "agent-transcripts"
    folder.mkdir(parents=True)
    line = {"role": "user", "message": {"content": [{"type": "text", "text": "fix the build"}]}}
    (folder / "c1.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    done = run_cli("ingest", "--transcript", str(folder / "c1.jsonl"), "--client", "cursor")
    assert done.returncode == 0, done.stderr
    ctx: Context = make_ctx()
    (project,) = [p for p in list_projects(ctx) if p.sessions]
    assert not project.current and project.path == "home-ann-src-gone-app"
    assert [r.title for r in api.list_sessions(ctx, Where(scope="home-ann-src-gone-app"))] == [
        "fix the build"
    ]


def test_sessions_list_says_one_imported_file_in_the_singular(
    make_ctx: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from memctl.cli.sessions_out import show_sessions
    from memctl.model import IMPORTED, Session
    from memctl.store.sessions import save_session

    ctx = make_ctx()
    with ctx.db.atomic():
        save_session(ctx.db, Session(id="file-1", client=IMPORTED, scope="global"))
    show_sessions(ctx, Where(all_scopes=True), 20, False)
    assert capsys.readouterr().out.splitlines()[-1] == (
        "1 imported file left out: --client import lists them"
    )
