"""memctl sessions list|show|grep|expand on real stored sessions (a real SQLite file)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memctl.api import memory as memory_api
from memctl.api import sessions as api
from memctl.api.sessions import Where
from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.store.memories import session_memory
from tests.conftest import run_cli
from tests.ingesting import SESSION, fixture, ingest_text

EVERYWHERE = Where(all_scopes=True)
CHINESE = """user: 我们的数据库是PostgreSQL十六版，部署用make release。
assistant: 好的，我记住了：数据库是PostgreSQL十六版。
user: 测试用pnpm test运行。
assistant: 明白。
"""


@pytest.fixture
def stored(make_ctx: Any) -> Context:
    """The Claude Code fixture (tool notes, a sub-agent thread), distilled; a CJK session."""
    ctx: Context = make_ctx()
    capture(ctx, fixture("claude-code.jsonl"), IngestOptions())
    run_session(ctx, SESSION)
    ingest_text(ctx, CHINESE, session_id="zh-1")
    return ctx


def test_list_names_each_session_with_its_digest(stored: Context) -> None:
    rows = {row.id: row for row in api.list_sessions(stored, EVERYWHERE)}
    assert set(rows) == {SESSION, "zh-1"}
    assert rows[SESSION].client == "claude-code"
    assert rows[SESSION].message_count == 9
    assert rows[SESSION].title == "Deploy pipeline and editor setup"
    assert rows[SESSION].digest.startswith("Session of 2025-09-14")
    assert rows["zh-1"].digest == ""
    only_claude = api.list_sessions(stored, Where(all_scopes=True, client="claude-code"))
    assert [r.id for r in only_claude] == [SESSION]
    assert api.list_sessions(stored, Where(all_scopes=True, since="2099-01-01")) == []
    # the current project holds only the session captured here (the fixture ran elsewhere)
    assert [r.id for r in api.list_sessions(stored, Where())] == ["zh-1"]


def test_show_reads_turns_tool_notes_and_sub_agent_threads(stored: Context) -> None:
    page = api.show(stored, SESSION[:8], page=1, page_size=50)
    text = page.text()
    assert (page.first, page.last, page.total) == (1, 9, 9)
    assert "[3] tool: [tool result Read:" in text
    assert "[7] │ sub-agent user" in text
    assert "    │ Search the repo for Makefile targets" in text
    assert ">[" not in text  # a page marks nothing
    second = api.show(stored, SESSION, page=2, page_size=5)
    assert [m.seq for m in second.messages] == [6, 7, 8, 9]
    with pytest.raises(UsageError, match="has 2 page"):
        api.show(stored, SESSION, page=3, page_size=5)
    with pytest.raises(NotFoundError, match="no stored session"):
        api.show(stored, "no-such-session")


def test_grep_finds_the_line_and_its_neighbours(stored: Context) -> None:
    matches = api.grep(stored, "No rule to make target", EVERYWHERE)
    first = matches[0]
    assert first.ref == f"{SESSION}#6"
    assert first.lines == ["[tool error Bash: make: *** No rule to make target 'release'. Stop.]"]
    assert [m.seq for m in first.before] == [5]
    assert [m.seq for m in first.after] == [7]
    assert first.to_dict()["before"][0]["line"] == "[tool Bash: make release DRY_RUN=1]"


def test_grep_filters_by_role_client_and_project(stored: Context) -> None:
    users = api.grep(stored, "release", Where(all_scopes=True, role="user"))
    assert users and {m.hit.role for m in users} == {"user"}
    assert api.grep(stored, "release", Where(all_scopes=True, client="codex")) == []
    assert api.grep(stored, "Makefile", Where()) == []  # that session is another project
    with pytest.raises(UsageError, match="^role takes one of"):
        api.grep(stored, "release", Where(role="robot"))


def test_grep_finds_cjk_words_inside_longer_runs(stored: Context) -> None:
    matches = api.grep(stored, "数据库", EVERYWHERE)
    assert [m.hit.seq for m in matches] == [2, 1]  # newest first
    assert "数据库" in matches[0].lines[0]
    assert [m.hit.seq for m in api.grep(stored, "pnpm 测试", EVERYWHERE)] == [3]


def test_grep_says_which_messages_hold_only_some_words(stored: Context) -> None:
    """A walk grepped a forgotten session's words and read messages holding one of them
    as matches: each says whether it holds every word (the CLI heads those that do not)."""
    whole = api.grep(stored, "Fridays release.sh", EVERYWHERE)
    assert whole[0].every_word and "fridays" in whole[0].hit.content.lower()
    assert whole[0].to_dict()["every_word"] is True
    some = api.grep(stored, "Fridays quokka", EVERYWHERE)
    assert some and not any(m.every_word for m in some)
    assert all("fridays" in m.hit.content.lower() for m in some)
    assert {m.to_dict()["every_word"] for m in some} == {False}


@pytest.mark.parametrize(
    "query",
    ['"release', "release AND NOT", "release*", "(make OR) NEAR(x", "col:release", "^release -x"],
)
def test_grep_takes_fts_syntax_as_words(stored: Context, query: str) -> None:
    matches = api.grep(stored, query, EVERYWHERE)
    assert any("release" in m.hit.content.lower() for m in matches)


def test_expand_opens_a_digest_a_fact_and_a_range(stored: Context) -> None:
    digest = session_memory(stored.db, SESSION, "digest")
    assert digest is not None
    (whole,) = api.expand(stored, digest.id[:8], around=0)
    assert (whole.first, whole.last) == (1, 9)
    assert whole.memory is not None and whole.memory.id == digest.id

    fact = next(
        m
        for m in memory_api.list_memories(stored, memory_api.ListRequest(memory_api.Filters()))
        if m.content.startswith("Never push to prod")
    )
    (opened,) = api.expand(stored, fact.id, around=1)
    assert (opened.first, opened.last) == (8, 8)
    assert [m.seq for m in opened.messages] == [7, 8, 9]
    marked = [line for line in opened.text().splitlines() if line.startswith(">")]
    assert marked == [">[8] user · 2025-09-14 09:15"]

    (ranged,) = api.expand(stored, f"{SESSION[:8]}#4-5", around=1)
    assert [m.seq for m in ranged.messages] == [3, 4, 5, 6]


def test_get_and_explain_name_the_messages_a_memory_came_from(stored: Context) -> None:
    fact = next(
        m
        for m in memory_api.list_memories(stored, memory_api.ListRequest(memory_api.Filters()))
        if m.content.startswith("Never push to prod")
    )
    origin = memory_api.get(stored, fact.id).origin
    assert origin is not None
    assert (origin.session_id, origin.first, origin.last, origin.stored) == (SESSION, 8, 8, True)
    assert "Deploy pipeline and editor setup" in origin.text()
    mine = memory_api.remember(stored, memory_api.RememberRequest("Typed by hand."))
    assert memory_api.get(stored, mine.memory.id).origin is None


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        (f"{SESSION}#4-12", "out of bounds: session .* has 1-9"),
        (f"{SESSION}#0-2", "out of bounds"),
        (f"{SESSION}#5-3", r"run backwards: the first comes first \(.*#3-5\)"),
        (f"{SESSION}#x", "expected SESSION#A-B"),
        ("nope#1-2", "no stored session 'nope'"),
        ("zzzz", "no memory or session message 'zzzz'"),
        ("deadbeef", "no memory or session message"),
    ],
)
def test_expand_refuses_bad_refs_in_one_line(stored: Context, ref: str, message: str) -> None:
    with pytest.raises((UsageError, NotFoundError), match=message):
        api.expand(stored, ref)


def test_expand_of_a_memory_not_from_a_session(stored: Context) -> None:
    mine = memory_api.remember(stored, memory_api.RememberRequest("Typed by hand."))
    with pytest.raises(NotFoundError, match="was not distilled from a session"):
        api.expand(stored, mine.memory.id)


@pytest.mark.fresh
def test_the_commands_as_a_person_runs_them(stored: Context, tmp_path: Path) -> None:
    listed = run_cli("sessions", "list", "--all-scopes", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {row["id"] for row in json.loads(listed.stdout)} == {SESSION, "zh-1"}
    grep = run_cli("sessions", "grep", "Fridays", "--all-scopes", "-C", "0")
    assert grep.returncode == 0, grep.stderr
    assert f"{SESSION}#8" in grep.stdout and "  >[8] user: " in grep.stdout
    assert "some of" not in grep.stdout
    some = run_cli("sessions", "grep", "Fridays quokka", "--all-scopes", "-C", "0")
    said = "no stored message holds every word; messages holding some of them:"
    assert some.stdout.startswith(said) and f"{SESSION}#8" in some.stdout, some.stdout
    for args, said in (
        (("sessions", "expand", f"{SESSION}#4-12"), "out of bounds"),
        (("sessions", "expand", "nothing-here"), "no memory or session message"),
        (("sessions", "grep", '"*"'), "nothing to search for"),
        (("sessions", "show", "missing"), "no stored session"),
    ):
        done = run_cli(*args)
        assert done.returncode not in (0, 70), done
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert said in done.stderr


def test_a_word_in_too_many_messages_to_rank_finds_the_newest(
    stored: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranked = [m.ref for m in api.grep(stored, "release", EVERYWHERE, limit=3)]
    monkeypatch.setattr(api, "RANK_AT_MOST", 1)  # every word is now too common to rank
    newest = api.grep(stored, "release", EVERYWHERE, limit=3)
    assert [m.ref for m in newest] == ["zh-1#1", f"{SESSION}#9", f"{SESSION}#8"]
    assert set(ranked) <= {"zh-1#1", *(f"{SESSION}#{n}" for n in (4, 5, 6, 8, 9))}
    question = api.grep(stored, "why did the release fail on Fridays", EVERYWHERE, limit=2)
    assert len(question) == 2  # no message has every word: the newest with any of them
    assert all(re.search("release|fridays", m.hit.content, re.I) for m in question)


# Words no message holds, marked private in a query
PRIVATE = "Quokkaville Zebrafinch Marmalade"


def test_sessions_grep_leaves_a_private_part_out(stored: Context) -> None:
    """``sessions grep`` searched a query's ``<private>`` part (recall had stopped in s36):
    its words reached the statements (``MEMCTL_DEBUG_SQL``) and an error's echo. Now the rest
    is searched, and a query of a private part alone is refused in one line, exit 2."""
    home = stored.settings.home
    query = f"<private>{PRIVATE}</private> Fridays"
    env = {"MEMCTL_DEBUG_SQL": "1"}
    found = run_cli("sessions", "grep", query, "--all-scopes", "-C", "0", "--json", env=env)
    assert found.returncode == 0, found.stderr
    assert f"{SESSION}#8" in {f"{m['session_id']}#{m['seq']}" for m in json.loads(found.stdout)}
    assert "SQL: " in found.stderr  # the tracer ran
    alone = run_cli("sessions", "grep", f"<private>{PRIVATE}</private>", env=env)
    assert alone.returncode == 2
    assert alone.stderr.strip().endswith("nothing else is asked")
    said = found.stdout + found.stderr + alone.stdout + alone.stderr
    kept = b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())
    for word in PRIVATE.split():
        assert word not in said and word.encode() not in kept
