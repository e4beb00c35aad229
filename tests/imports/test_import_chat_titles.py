"""A chat export's conversation without an id is named by its title in its memories'
source: the title is the export's text, and a token or `<private>` text in it reached the
database verbatim. A real `memctl import` process on a real SQLite file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.memories.test_forget_everywhere import _files_holding

TOKEN = "ghp_Qw8Er1Ty2Ui3Op4As5Df6Gh7Jk8Lz9Xc0Vb1N"
PRIVATE = "zebrafinch-private-plan"
TITLE = f"deploy token {TOKEN} and <private>{PRIVATE}</private>"
SAID = "I always deploy the billing service with make release on Fridays."


def _chatgpt() -> list[dict[str, object]]:
    said = {"content_type": "text", "parts": [SAID]}
    return [
        {
            "title": TITLE,
            "mapping": {
                "a": {"id": "a", "message": None, "parent": None, "children": ["b"]},
                "b": {
                    "id": "b",
                    "parent": "a",
                    "children": [],
                    "message": {"author": {"role": "user"}, "content": said},
                },
            },
            "current_node": "b",
        }
    ]


def _claude_ai() -> list[dict[str, object]]:
    return [{"name": TITLE, "chat_messages": [{"sender": "human", "text": SAID}]}]


@pytest.mark.parametrize(("name", "export"), [("chatgpt", _chatgpt), ("claude-ai", _claude_ai)])
def test_a_conversation_title_keeps_no_secret_in_the_memories_source(
    home: Path, tmp_path: Path, name: str, export: Callable[[], list[dict[str, object]]]
) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export()), encoding="utf-8")
    done = run_cli("-c", "llm=none", "import", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"][0]["format"] == name
    (memory,) = json.loads(run_cli("list", "--json").stdout)
    assert memory["content"] == SAID
    assert memory["source"].startswith(f"file:{path}#deploy token [REDACTED")
    assert _files_holding(home, TOKEN) == [] and _files_holding(home, PRIVATE) == []
