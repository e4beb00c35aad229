"""Chinese, Japanese and Korean text in the full-text indexes: a run of their letters as its
overlapping bigrams (store/cjk.py), every other word as before."""

from __future__ import annotations

from pathlib import Path

from memctl.config import load_settings
from memctl.context import Context
from memctl.model import Message, Role, Session
from memctl.store import sessions
from memctl.store.cjk import function_gram, split_word
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import count_message_terms, search_messages
from tests.conftest import said_in_session, store_at_version
from tests.fakes import HashEmbedder

SAID = [
    "我们用 GitHub Actions 部署到服务器，配置在 deploy.yml 里。",
    "The export runs nightly; recipes are deployed with make.",
    "ラーメン・スープの作り方を教えて",
]


def test_a_run_is_its_bigrams_beside_it_and_every_other_word_is_as_before(ctx: Context) -> None:
    said_in_session(ctx, ["部署配置", "用Python写代码", "Recipes deployed", "ラーメン・スープ"])
    ctx.db.execute("CREATE VIRTUAL TABLE temp.said USING fts5vocab(main, messages_fts, 'instance')")
    rows = ctx.db.tuples("SELECT doc, offset, term FROM temp.said ORDER BY doc, offset, term")
    places: dict[tuple[int, int], set[str]] = {}
    for doc, offset, term in rows:
        places.setdefault((doc, offset), set()).add(term)
    assert list(places.values()) == [
        {"部署配置", "部署", "署配", "配置"},  # the run as before, its bigrams at its place
        {"用python写代码", "用", "python", "写代", "代码"},
        {"recip"},  # stemmed as before
        {"deploi"},
        {"ラーメン", "ラー", "ーメ", "メン"},  # the middle dot parts two runs
        {"スープ", "スー", "ープ"},
    ]
    # a row is as long as before: BM25 of every other word is unchanged
    sizes = ctx.db.tuples("SELECT sz FROM messages_fts_docsize ORDER BY id")
    assert [bytes(size) for (size,) in sizes] == [b"\x01", b"\x01", b"\x02", b"\x02"]
    # recall reads a text's words the same way
    assert split_word("用python写代码") == ["用", "python", "写代", "代码"]
    assert split_word("deployed") == ["deployed"]
    said = ("我们", "什么", "部署", "的服", "现在", "用", "です", "服务")
    assert [function_gram(w) for w in said] == [True, True, False, True, True, True, True, False]


def test_a_two_letter_word_finds_its_message_and_a_run_is_found_as_written(ctx: Context) -> None:
    said_in_session(ctx, SAID)
    where = MemoryFilter(states=None)

    def found(*phrases: tuple[str, ...]) -> list[int]:
        return [hit.seq for hit in search_messages(ctx.db, list(phrases), 10, where)]

    assert found(("服务",)) == [1]  # a word inside a run: once one token, never found
    assert found(("部署",), ("deploy",)) == [1, 2]  # stemmed English as before
    assert found(("部署到服务器",)) == [1]  # a run written whole is found written whole
    assert found(("部署到服务",)) == []
    assert found(("作り",)) == [3]
    highlighted = ctx.db.value(
        "SELECT highlight(messages_fts, 0, '[', ']') FROM messages_fts "
        "WHERE messages_fts MATCH '\"服务\"'"
    )
    assert "[部署到服务器]，" in highlighted  # a bigram is found at its run's place


def test_an_older_store_is_indexed_again_and_its_counts_taken_again(home: Path) -> None:
    """m028 rebuilds the three indexes; the messages' word counts, taken by an older memctl
    over whole runs, are taken again (a bigram counted by none would read as absent)."""
    connection, old = store_at_version(home, 26)
    sessions.save_session(old, Session(id="s1", client="generic", scope="global"))
    said = Message(Role.USER, SAID[0], session_id="s1", seq=1)
    old.execute(  # as that memctl wrote it: no speaker column yet (m035)
        "INSERT INTO messages (session_id, seq, role, content, created_at, content_hash) "
        "VALUES ('s1', 1, 'user', ?, ?, ?)",
        (said.content, said.created_at, said.content_hash),
    )
    count_message_terms(old)
    assert old.value("SELECT count(*) FROM message_term_counts WHERE term = '服务'") == 0
    connection.close()
    ctx = Context(load_settings(), embedder=HashEmbedder())
    try:
        assert ctx.db.value("SELECT messages FROM message_term_counts WHERE term = '服务'") == 1
        hits = search_messages(ctx.db, [("服务",)], 10, MemoryFilter(states=None))
        assert [hit.seq for hit in hits] == [1]
    finally:
        ctx.close()
