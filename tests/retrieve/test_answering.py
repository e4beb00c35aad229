"""A row that stands for folded messages shows the member's sentences that answer (issue 33,
retrieve/answering.py): the member chosen by its stored vectors, with its SESSION#N, the
sentence by the query's words, and nothing embedded at query time. Real SQLite and the real
model: the member is chosen by meaning."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.embed import Embedder
from memctl.ingest.message_vectors import embed_messages, parts
from memctl.integrations.mcp_search import hit
from memctl.model import Message, Role, Session
from memctl.retrieve.answering import (
    ANSWER_CHARS,
    Answering,
    Member,
    announces,
    answering,
    answering_member,
    best_sentence,
    opening,
    reply_to,
    said_already,
    says_something,
    shown,
)
from memctl.retrieve.excerpt import query_words
from memctl.retrieve.pipeline import recall
from memctl.store import sessions
from tests.retrieve.test_message_vectors import _digest

# the answer said in the session, in words other than the question's, after a short opening
OPENING = "Noted."
ANSWER = "We found the integration suite runs serially, so CI takes forty minutes."
WORK = [
    (Role.USER, "I had pizza for lunch today, the new place on Main Street."),
    (Role.ASSISTANT, f"{OPENING} {ANSWER}"),
    (Role.USER, "ok, shard it"),
    (Role.ASSISTANT, "Done, pushed to main."),
]
DONE = "We split it into four shards, so it takes ten minutes now."
QUESTION = "How long does CI take these days?"
# asked again in other words: the question is the member closest in meaning (cosine 0.40, its
# reply 0.36), folded into the digest
ASKED_AGAIN = "what is the duration of our build pipeline?"
ASKED = [
    (Role.USER, QUESTION),
    (Role.ASSISTANT, f"{DONE} Before that it took forty minutes."),
    (Role.USER, "thanks!"),
]


class Counting:
    """The real embedder, keeping every text it was asked to embed."""

    def __init__(self, embedder: Embedder) -> None:
        self.inner, self.texts = embedder, list[str]()
        self.name, self.dim = embedder.name, embedder.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return self.inner.embed(texts)


def _session(ctx: Context, said: list[tuple[Role, str]], session_id: str) -> None:
    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session(id=session_id, client="generic", scope="global"))
        sessions.insert_messages(
            ctx.db,
            [Message(r, t, session_id=session_id, seq=n) for n, (r, t) in enumerate(said, 1)],
        )


def test_a_digest_shows_its_member_closest_in_meaning_and_embeds_nothing(
    home: Path, local_embedder: Embedder
) -> None:
    counting = Counting(local_embedder)
    with Context(load_settings(overrides={"recall.message_vectors": True}), counting) as on:
        _session(on, WORK, "s1")
        digest = _digest(on, "Session: CI; Outcome: pushed to main", "s1")
        embed_messages(on.db, on.embedder, 100)
        before = len(counting.texts)
        found = recall(on, "why are our builds so slow?", touch=False, sessions=True, answers=parts)
        budgeted = recall(on, "why are our builds so slow?", touch=False, budget=400)
    row = next(r for r in found.results if r.memory.id == digest.id)
    assert row.answering is not None and row.answering.message == "s1#2"
    # no sentence holds the query's words: the opening, short, with the sentence after it
    assert row.answering.text == f"{OPENING} {ANSWER}"
    assert hit(row)["from"]["text"] == row.to_dict()["from"]["text"] == row.answering.text
    # the query alone was embedded, no sentence of a member's (main embedded the part's)
    assert not [t for t in counting.texts[before:] if "serially" in t]
    # a context block's rows show their own text: its budget is unchanged
    assert all(r.answering is None for r in budgeted.results)


def test_a_users_question_gives_way_to_the_reply_after_it(
    home: Path, local_embedder: Embedder
) -> None:
    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        _session(on, ASKED, "s2")
        digest = _digest(on, "Session: CI timing; Outcome: answered", "s2")
        embed_messages(on.db, on.embedder, 100)
        found = recall(on, ASKED_AGAIN, touch=False, sessions=True, answers=parts)
    row = next(r for r in found.results if r.memory.id == digest.id)
    # the question is the closest member (it is the query): its reply is what answers
    assert row.answering is not None and row.answering.message == "s2#2"
    assert row.answering.text.startswith(DONE)


def test_a_sentence_the_row_holds_already_is_told_by_its_words() -> None:
    digest = "Session — CI; Outcome: **Run** `make release` to deploy the billing service."
    assert said_already("Run make release to deploy the billing service.", digest)
    fact = "Prepare a focused plan with clear steps for tracking."
    assert said_already("great, prepare a focused plan with clear steps for tracking.", fact)
    # a digest quoting it cut short does not show its rest
    quoted = "Found: **Workflows**: - pr-review: code review on PRs - inline…"
    said = "Workflows: pr-review: code review on PRs; inline-fix: fixes lint errors in place."
    assert not said_already(said, quoted)
    assert not said_already("The threshold is 0.9 for the billing service.", digest)


def test_the_sentence_holding_the_most_query_words_is_chosen_else_the_opening() -> None:
    pieces = ["We looked at the logs.", "The billing alerts fire at 0.9.", "Then we pushed."]
    assert best_sentence(pieces, query_words("when do the billing alerts fire?")) == 1
    assert best_sentence(pieces, query_words("why are our builds so slow?")) == 0


def test_a_short_sentence_takes_the_next_and_a_long_one_is_cut() -> None:
    assert shown(["Done.", "The threshold is 0.9.", "Bye."], 0) == "Done. The threshold is 0.9."
    alone = "The integration suite runs serially, so CI takes forty minutes."
    assert shown([alone, "word " * 60], 0) == alone
    long = shown(["word " * 100], 0)
    assert len(long) == ANSWER_CHARS and long.endswith("…")


# A user's request, the assistant's announcement, its call and the call's output, then the
# message saying what came of it (fresh9's shape: docs/benchmarks.md, "fresh9 studied")
REQUEST = "Read every markdown document in docs/provenance/ first."
FOUND = "I found 19 markdown files under docs/provenance/, the task first."
READ_ALL = [
    (Role.USER, REQUEST),
    (Role.ASSISTANT, "I’ll read `docs/provenance/TASK.md` first, then every `*.md` under it."),
    (Role.ASSISTANT, "[tool exec_command: rg --files docs/provenance -g '*.md']"),
    (Role.TOOL, "[tool result exec_command: docs/provenance/TASK.md · docs/provenance/a.md]"),
    (Role.ASSISTANT, f"{FOUND} Reading the rest now."),
    (Role.USER, "what is in TASK.md?"),
    (Role.ASSISTANT, "[tool exec_command: cat docs/provenance/TASK.md]"),
]


def test_a_reply_is_the_first_message_of_the_turn_that_says_something(home: Path) -> None:
    with Context(load_settings()) as on:
        _session(on, READ_ALL, "s3")
        # past the announcement (a curly apostrophe's "I’ll"), the call and its output
        assert reply_to(on.db, "s3#1") == "s3#5"
        # a turn of tool notes only: its first message, as before
        assert reply_to(on.db, "s3#6") == "s3#7"
        # the user speaks before any assistant does: no reply
        assert reply_to(on.db, "s3#5") is None
    assert not says_something("[tool exec_command: ls]\nLet me read it next.")
    assert says_something(f"{FOUND}\n[tool exec_command: ls]")


def test_a_users_message_row_shows_its_reply(home: Path, local_embedder: Embedder) -> None:
    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        _session(on, READ_ALL, "s4")
        embed_messages(on.db, on.embedder, 100)
        asked = "how many markdown documents were in the provenance docs folder?"
        found = recall(on, asked, touch=False, sessions=True, answers=parts)
    row = next(r for r in found.results if r.memory.id == "s4#1")
    # the request restates the question; what came of it is the reply's sentence
    assert row.answering is not None and row.answering.message == "s4#5"
    assert row.answering.text.startswith(FOUND)


# An assistant's turn that announces its step, runs it, announces the next, and then says
# what it found (fresh8's shape: Gemini CLI writes each call inside the message announcing it)
DNS_OFF = "No, DNS over TLS is currently disabled."
CHECKED = [
    (Role.USER, "check the resolver settings on this machine"),
    (
        Role.ASSISTANT,
        "I will read `/etc/systemd/resolved.conf.d/dns-security.conf` to see if it modifies"
        " the encrypted DNS settings.\n[tool run_shell_command: cat dns-security.conf]",
    ),
    (Role.TOOL, "[tool error run_shell_command: exit 1: Permission denied]"),
    (
        Role.ASSISTANT,
        "I will query the resolver's encrypted DNS property directly.\n"
        "[tool run_shell_command: busctl get-property org.freedesktop.resolve1]",
    ),
    (Role.TOOL, '[tool result run_shell_command: s "no"]'),
    (Role.ASSISTANT, f"{DNS_OFF} The drop-in file overrides resolved.conf, so it is off."),
]


def shown_from(
    embedder: Embedder, turns: list[tuple[Role, str]], name: str, question: str, row_id: str
) -> Answering | None:
    """What the row ``row_id`` of a recall of ``question`` over the session ``turns`` stands
    for as its ``from``: before the rows above it take what they show already (the reply's
    own row ranks above it in a session this small; ``past_shown``)."""
    with Context(load_settings(overrides={"recall.message_vectors": True}), embedder) as on:
        _session(on, turns, name)
        embed_messages(on.db, on.embedder, 100)
        found = recall(on, question, touch=False, sessions=True, answers=parts)
        texts = {r.memory.id: r.memory.content for r in found.results}
        assert row_id in texts
        return answering(found.run, {row_id: [row_id]}, parts, texts).get(row_id)


def test_an_announcements_row_shows_the_message_saying_what_came_of_it(
    home: Path, local_embedder: Embedder
) -> None:
    question = "is encrypted DNS switched on for the linux box?"
    # the step announced matches the question by its topic; what came of it is the reply
    came = shown_from(local_embedder, CHECKED, "s5", question, "s5#2")
    assert came is not None and came.message == "s5#6"
    assert came.text.startswith(DNS_OFF)


# A user's ask the session's digest quotes, its reply after three calls, each with its
# output (fresh8's z02: Claude Code writes a call and its output as messages of their own)
LEFT_OUT = "The `.entire/.gitignore` change looks like local tooling state, so I left it alone."
COMMITTED = [
    (Role.USER, "commit and push the version bump"),
    (Role.ASSISTANT, "[tool Bash: git status]"),
    (Role.TOOL, "[tool result Bash: modified: .entire/.gitignore · modified: package.json]"),
    (Role.ASSISTANT, "[tool Bash: git diff]"),
    (Role.TOOL, "[tool result Bash: -logs/ +logs/redactors/local/]"),
    (Role.ASSISTANT, "[tool Bash: git log --oneline -5]"),
    (Role.TOOL, "[tool result Bash: e3b01b3 feat(session-handoff): canonical worktree path]"),
    (Role.ASSISTANT, f"I'll stage only package.json. {LEFT_OUT}"),
]


def test_an_ask_the_digest_quotes_gives_way_to_its_reply(home: Path) -> None:
    with Context(load_settings()) as on:
        _session(on, COMMITTED, "s6")
        member = Member("s6#1", 0, 0.5)
        quoted = answering_member(on.db, member, "Asked: commit and push the version bump")
        # an ask the row does not quote is shown itself: it may say what the row does not
        unquoted = answering_member(on.db, member, "Session of 2026-05-18: a version bump")
    assert quoted == Member("s6#8", None, 0.5, reply=True)
    assert unquoted == member


def test_a_reply_is_shown_from_what_it_says_first() -> None:
    pieces = [
        "I'd like to share a Persistent Thought Stream feature.",
        "Since this is an interactive environment, I'll build a space where you can log ideas.",
    ]
    assert opening(pieces) == 0
    assert best_sentence(pieces, query_words("what did you choose to build?")) == 1
    assert opening(["Let me check the logs.", "The threshold is 0.9."]) == 1


# A message row that says what it found, then the step its call takes; what came of it is
# said after the call's output (fresh8's z36 shape)
FAILED = "Choco install failed due to lack of admin rights, and I can't escalate."
INSTALLING = [
    (Role.USER, "install throttlestop"),
    (
        Role.ASSISTANT,
        "Okay, I've found a Chocolatey package for Throttlestop. I'll install it now with"
        " `choco install throttlestop -y`.\n"
        "[tool run_shell_command: choco install throttlestop -y]",
    ),
    (Role.TOOL, "[tool error run_shell_command: exit 1: Access to the path is denied.]"),
    (Role.ASSISTANT, f"{FAILED} Instead, I'll retry the manual installation."),
]


def test_a_row_closing_on_the_step_its_call_takes_shows_what_came_of_it(
    home: Path, local_embedder: Embedder
) -> None:
    question = "why did installing throttlestop with the chocolatey package fail?"
    came = shown_from(local_embedder, INSTALLING, "s7", question, "s7#2")
    assert came is not None and came.message == "s7#4"
    assert came.text.startswith(FAILED)


def test_a_member_saying_something_before_its_next_step_is_kept() -> None:
    said = (
        "I can't download Throttlestop due to anti-bot measures. I'll search for a"
        " Chocolatey package instead.\n[tool google_web_search: throttlestop chocolatey]"
    )
    # a row shows its own text, and its reply what came of the step; a member shows only
    # its sentences, and these say why the download failed
    assert announces(Role.ASSISTANT, said, row=True)
    assert not announces(Role.ASSISTANT, said)
    # no call made: no step taken yet
    assert not announces(Role.ASSISTANT, "I found the package. I'll install it next.", row=True)
    assert announces(Role.ASSISTANT, "I'll install it now.\n[tool run_shell_command: choco]")
    assert not announces(Role.USER, "I'll install it now.")


# A user's ask and its reply, both among the rows: the ask's from showed the reply's opening
# the reply's own row above it shows (91 of 382 studied questions), and shows what comes
# next instead (the higher-ranked row keeps the text)
CHOSEN = "We chose PostgreSQL for the billing service, since its ledger needs transactions."
NEXT = "I also set the connection pool to twenty, which the load test held."
CHOSE = [
    (Role.USER, "which database should the billing service use? pick one"),
    (Role.ASSISTANT, CHOSEN),
    (Role.ASSISTANT, f"[tool Bash: edit pool.yaml]\n{NEXT}"),
    (Role.USER, "thanks"),
]


def test_a_from_another_row_shows_already_gives_way_to_what_comes_next(
    home: Path, local_embedder: Embedder
) -> None:
    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        _session(on, CHOSE, "s9")
        embed_messages(on.db, on.embedder, 100)
        question = "what database did we pick for billing?"
        found = recall(on, question, touch=False, sessions=True, answers=parts)
    rows = {r.memory.id: r for r in found.results}
    ranks = [r.memory.id for r in found.results]
    assert {"s9#1", "s9#2"} <= set(rows) and ranks.index("s9#2") < ranks.index("s9#1")
    ask = rows["s9#1"].answering
    # not the reply's text, which its own row shows: the turn's next message saying something
    assert ask is not None and ask.text != CHOSEN
    assert ask.message == "s9#3" and ask.text == NEXT
    assert rows["s9#2"].memory.content == CHOSEN
