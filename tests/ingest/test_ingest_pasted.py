"""What the user pasted (a man page, a docs page, a log, a diff) yields no rule of theirs;
what they wrote, however long, still does. The pasted turns are real: a user of
claude-code-log (MIT; benchmarks/sessions/*/SOURCES.md) pasting ``gh pr view``'s manual
(GitHub CLI, MIT) and a page of uv's docs (MIT), a pytest failure and a diff."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memctl.context import Context
from memctl.ingest.extract import numbered_chunks
from memctl.ingest.extract_rules import extract_rules
from memctl.ingest.facts import Passage
from memctl.ingest.host_view import host_batch
from memctl.ingest.pasted import looks_pasted, own_words
from memctl.ingest.pipeline import passages
from memctl.model import Message, Role
from memctl.store.sessions import messages_after
from tests.ingest.test_ingest_digest import cc
from tests.ingest.test_ingest_sessions import ingest, memories_of

SESSIONS = Path(__file__).parents[2] / "benchmarks" / "sessions"
MAN_PAGE = "gh pr view [<number> | <url> | <branch>] [flags]"
DOCS_PAGE = "The uv tool interface"
# A long turn of the user's own prose (written for this test, in the shape of the real
# ones: a request, its reasons, a short list and one command), with one rule in it.
OWN_PROSE = (
    "OK, the export works now, but before we ship it I want to go over how the files end "
    "up on disk, because the last two releases both broke somebody's setup and I would "
    "rather not do that a third time. Right now the exporter writes into whatever "
    "directory the user happens to be in, which is surprising when you run it from a "
    "hook, and it silently overwrites an older export with the same name.\n\n"
    "What I'd like instead:\n"
    "- write into the project's exports folder unless a path is given\n"
    "- refuse to overwrite unless the user passes a flag, and say so in the error\n"
    "- keep the old file name scheme so the links in the README still resolve\n\n"
    "We always run the exporter through uv run export, never through the installed "
    "script, since the installed one lags behind the checkout. I know the tests cover "
    "the happy path already, but there is nothing for the overwrite case or for a "
    "missing exports folder, so please add both, and check that the error message names "
    "the file it refused to replace. If any of this clashes with what we agreed for the "
    "archive format last week, tell me before changing anything, and keep the change "
    "itself as small as you can: this is a fix, not a redesign of the exporter, and the "
    "release notes should be able to describe it in one line.\n\n"
    "For context, the people who hit this were running the exporter from a pre-commit "
    "hook in a monorepo, so the working directory was the repository root and the "
    "exports landed next to the lockfile, where the next commit picked them up. Nobody "
    "noticed for a week because the files are small and the names look like build "
    "output, which is also why I'd like the default folder to be ignored by git.\n\n"
    "uv run pytest tests/test_export.py"
)


def real_turn(path: Path, marker: str) -> str:
    """The text the user typed or pasted, holding ``marker``, in a real session's turn."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if marker in line and '"type":"user"' in line:
            content: str | list[dict[str, Any]] = json.loads(line)["message"]["content"]
            parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content]
            return next(part for part in parts if marker in part)
    raise AssertionError(f"no user turn with {marker!r} in {path}")


PASTED = [
    ("fresh/cc2-cclog-cb2e607c.jsonl", MAN_PAGE),  # a man page under a request
    ("fresh/cc2-cclog-cb2e607c.jsonl", DOCS_PAGE),  # a docs page: prose under titles
    ("heldout/cc1-cclog-937c6e6b.jsonl", "A couple of tests are unhappy now"),  # pytest
    ("real/cc1-cclog-71c9afe9.jsonl", "diff --git"),  # a diff
]


@pytest.mark.parametrize(("file", "marker"), PASTED)
def test_a_real_pasted_turn_is_pasted(file: str, marker: str) -> None:
    assert looks_pasted(real_turn(SESSIONS / file, marker))


def test_the_users_own_long_prose_is_not_pasted_and_keeps_its_rule() -> None:
    assert len(OWN_PROSE) > 1500 and not looks_pasted(OWN_PROSE)
    facts = extract_rules([Passage(OWN_PROSE)], 10)
    assert any(f.content.startswith("We always run the exporter through uv run") for f in facts)


def test_a_pasted_manual_yields_no_rule_and_stays_in_the_session(
    make_ctx: Callable[..., Context],
) -> None:
    path = SESSIONS / "fresh" / "cc2-cclog-cb2e607c.jsonl"
    manual, docs = (real_turn(path, m) for m in (MAN_PAGE, DOCS_PAGE))
    # before: "Format JSON output using a Go template; see "gh help formatting"", and four
    # more of the pages' sentences, were distilled as the user's own rules
    assert extract_rules([Passage(manual), Passage(docs)], 10)
    ctx = make_ctx()
    records = [
        cc("user", manual, 1),
        cc("assistant", "I'll look up the branch's PR with gh pr view.", 2),
        cc("user", docs, 3),
        cc("assistant", "uv tool install --reinstall rebuilds the tool's environment.", 4),
        cc("user", OWN_PROSE, 5),
        cc("assistant", "Understood: the exporter runs through uv run export.", 6),
    ]
    session = ingest(ctx, records)
    stored = [m.content for m in messages_after(ctx.db, session, 0)]
    assert manual in stored and docs in stored  # kept verbatim, searchable there
    made = [m for m in memories_of(ctx, session) if "digest" not in m.tags]
    assert [m.content for m in made if "Go template" in m.content or "PATH" in m.content] == []
    assert any(m.content.startswith("We always run the exporter") for m in made)


# A deploy that failed, in CPython's traceback shape (written for this test): 63 lines,
# chained, its last line a rule-shaped message of the tool's, not of the user's.
INNER_FRAMES = [
    ("urllib3/connection.py", 198, "_new_conn", "sock = connection.create_connection("),
    ("urllib3/util/connection.py", 85, "create_connection", "raise err"),
    ("urllib3/util/connection.py", 73, "create_connection", "sock.connect(sa)"),
    ("urllib3/connectionpool.py", 793, "urlopen", "response = self._make_request("),
    ("urllib3/connectionpool.py", 491, "_make_request", "raise new_e"),
    ("urllib3/connectionpool.py", 467, "_make_request", "self._validate_conn(conn)"),
    ("urllib3/connectionpool.py", 1099, "_validate_conn", "conn.connect()"),
    ("urllib3/connection.py", 616, "connect", "self.sock = sock = self._new_conn()"),
    ("urllib3/connection.py", 213, "_new_conn", "raise NewConnectionError("),
    ("requests/adapters.py", 486, "send", "resp = conn.urlopen("),
    ("urllib3/connectionpool.py", 847, "urlopen", "retries = retries.increment("),
    (
        "urllib3/util/retry.py",
        515,
        "increment",
        "raise MaxRetryError(_pool, url, reason) from reason",
    ),
]
OUTER_FRAMES = [
    ("../bin/ship", 8, "<module>", "sys.exit(main())"),
    ("click/core.py", 1157, "__call__", "return self.main(*args, **kwargs)"),
    ("click/core.py", 1078, "main", "rv = self.invoke(ctx)"),
    ("click/core.py", 1688, "invoke", "return _process_result(sub_ctx.command.invoke(sub_ctx))"),
    ("click/core.py", 1434, "invoke", "return ctx.invoke(self.callback, **ctx.params)"),
    ("click/core.py", 783, "invoke", "return __callback(*args, **kwargs)"),
    ("../../../../tools/ship/cli.py", 41, "release", "plan = build_plan(target)"),
    ("../../../../tools/ship/plan.py", 88, "build_plan", "steps = [step_for(s) for s in services]"),
    ("../../../../tools/ship/plan.py", 112, "step_for", "image = resolve_image(service, registry)"),
    ("../../../../tools/ship/images.py", 57, "resolve_image", "return registry.digest(image, tag)"),
    ("../../../../tools/ship/registry.py", 133, "digest", "response = self._session.head(url)"),
    ("requests/sessions.py", 624, "head", 'return self.request("HEAD", url, **kwargs)'),
    ("requests/sessions.py", 589, "request", "resp = self.send(prep, **send_kwargs)"),
    ("requests/sessions.py", 703, "send", "r = adapter.send(request, **kwargs)"),
    ("requests/adapters.py", 519, "send", "raise ConnectionError(e, request=request)"),
    ("../../../../tools/ship/registry.py", 140, "digest", "raise ShipError(RULE_SHAPED)"),
]
SITE = "/home/dev/tidepool/.venv/lib/python3.12/site-packages/"
RULE_SHAPED = "We always push images to registry.internal before a release is tagged."


def traceback_text(frames: list[tuple[str, int, str, str]], error: str) -> str:
    shown = (f'  File "{SITE}{f}", line {n}, in {fn}\n    {code}' for f, n, fn, code in frames)
    return "\n".join(["Traceback (most recent call last):", *shown, error])


TRACEBACK = "\n\n".join(
    [
        traceback_text(
            INNER_FRAMES,
            "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool("
            "host='registry.internal', port=443): Max retries exceeded with url: /v2/",
        ),
        "During handling of the above exception, another exception occurred:",
        traceback_text(OUTER_FRAMES, f"ship.errors.ShipError: {RULE_SHAPED}"),
    ]
)
OWN_RULE = "From now on we deploy with `make ship`."
MIXED = f"{OWN_RULE} Here is the error I get:\n{TRACEBACK}"


def test_a_mixed_turn_keeps_the_users_rule_and_reads_nothing_of_the_paste() -> None:
    assert len(TRACEBACK.splitlines()) >= 60 and looks_pasted(MIXED)
    # unmarked, the stack frames and the tool's message are read as the user's rules
    unmarked = {f.content for f in extract_rules([Passage(MIXED)], 99)}
    assert OWN_RULE in unmarked and any(RULE_SHAPED in fact for fact in unmarked)
    (turn,) = passages([Message(Role.USER, MIXED, None, "s", 1)])
    assert turn.pasted and own_words(turn.text) == f"{OWN_RULE} Here is the error I get:"
    assert [f.content for f in extract_rules([turn], 99)] == [OWN_RULE]


def test_a_paste_first_or_alone_leaves_no_words_of_the_user() -> None:
    assert own_words(f"{TRACEBACK}\n\n{OWN_RULE}") == ""  # a paste's end is no clear line
    assert own_words(f"{OWN_RULE}\n\nThe docs say:\n{TRACEBACK}") == OWN_RULE


def test_a_model_reads_where_the_users_words_end_and_the_paste_starts() -> None:
    said = Message(Role.USER, MIXED, None, "s", 1)
    shown = Message(Role.USER, OWN_PROSE, None, "s", 2)  # typed, however long: as it was
    (llm_view,) = numbered_chunks(passages([said, shown]), 100_000)
    (host_view,) = numbered_chunks(host_batch([said, shown], 100_000).passages, 100_000)
    for view in (llm_view, host_view):
        pasted, typed = view.split("\n[2] user: ")
        assert pasted.startswith(f"[1] user: {OWN_RULE} Here is the error I get:\n")
        assert "\n[pasted by the user: 63 lines]\nTraceback (most recent call last):\n" in pasted
        assert typed == OWN_PROSE
