"""Facts of what a session's files are for: from the closing answer and the reports, for
files the session's tool calls touched, in any language."""

from __future__ import annotations

import json

from memctl.ingest.file_roles import MAX_FILE_ROLES, file_roles
from memctl.ingest.tools import Call
from tests.conftest import ROOT, run_cli

REAL = ROOT / "benchmarks" / "sessions" / "real" / "cc1-cclog-b25638d7.jsonl"  # Claude Code
TOUCHED = [
    Call("Edit", "/repo/public/tokenizer.js", "ok"),
    Call("Write", "/repo/src/parser.py", "ok"),
    Call("Write", "/repo/app/db.ts", "ok"),
    Call("Write", "/repo/app/secret.ts", "refused"),
]


def roles(text: str, calls: list[Call] = TOUCHED) -> list[str]:
    return [f.content for f in file_roles([text], calls, "session:s", "2026-03-01T10:00:00Z")]


def test_a_real_closing_answer_gives_each_edited_file_its_role() -> None:
    done = run_cli("ingest", "--transcript", str(REAL), "--client", "claude-code", "--wait")
    assert done.returncode == 0, done.stderr
    facts = [m["content"] for m in json.loads(run_cli("list", "--json").stdout)]
    (js,) = [f for f in facts if f.startswith("`tokenizer.js`: ")]
    assert "<ruby>" in js  # "## JavaScript changes (`tokenizer.js:101-108`)" and its first item
    (css,) = [f for f in facts if f.startswith("`tokenizer.css`: ")]
    assert "Chrome" in css


def test_list_items_sentences_and_cjk_name_roles() -> None:
    text = "- `src/parser.py` – turns the log lines into events\n`app/db.ts` 负责数据库连接池。\n"
    assert roles(text) == [
        "`src/parser.py`: turns the log lines into events",
        "`app/db.ts`: 负责数据库连接池",
    ]
    assert roles("`tokenizer.js` は トークンを ruby 要素で表示します。") == [
        "`tokenizer.js`は トークンを ruby 要素で表示します"
    ]
    # fresh2's agentstuff (SOURCES.md): the particle goes on from the name, no colon between
    korean = "이제 `parser.py`가 다른 15개의 가이드 문서들과 동일한 순수 Markdown 형식을 사용하며"
    assert roles(korean) == [
        "`parser.py`가 다른 15개의 가이드 문서들과 동일한 순수 Markdown 형식을 사용하며"
    ]


def test_a_file_the_session_did_not_touch_or_could_not_write_gets_no_role() -> None:
    text = "- `app/secret.ts`: holds the API keys\n- `lib/other.rb`: the billing job\n"
    assert roles(text) == []


def test_at_most_a_few_roles_a_session_the_first_said_first() -> None:
    calls = [Call("Write", f"/r/m{n}.py", "ok") for n in range(9)]
    text = "\n".join(f"- `m{n}.py`: module number {n} of the set" for n in range(9))
    found = roles(text, calls)
    assert len(found) == MAX_FILE_ROLES and found[0].startswith("`m0.py`")


def test_a_line_number_places_code_and_an_items_list_mark_is_no_part_of_a_role() -> None:
    """Closing answers of real sessions: fresh3 getspecstory-login405 (Apache-2.0) listed
    the lines it found ("`login.go`: 75 → baseURL …" was kept); heldout cc1-cclog-07f2e15c
    (MIT) numbered its headings ("`converter.py`: 1. Updated: …")."""
    calls = [Call("Read", "/w/pkg/cmd/login.go", "ok"), Call("Edit", "/w/converter.py", "ok")]
    found = '- `pkg/cmd/login.go:75` → `baseURL + "/cli-login"`\n'
    assert roles(found, calls) == []
    numbered = (
        "### 1. Updated `converter.py` (`process_projects_hierarchy` function):\n"
        "- Added token aggregation logic that tracks `total_input_tokens`\n"
    )
    assert roles(numbered, calls) == [
        "`converter.py`: Updated: Added token aggregation logic that tracks total_input_tokens"
    ]
    assert roles("- `pkg/cmd/login.go`: 75 handlers, one per route\n", calls) == [
        "`pkg/cmd/login.go`: 75 handlers, one per route"
    ]
